"""Training rows in the form the compiled linear passes take."""

import numpy as np
import scipy.sparse as sp

from ._core.linear import UNWEIGHTED
from ._rows import csr_arrays
from ._scaling import unit_scaled

_EMPTY_F = np.zeros(0)
_EMPTY_I = np.zeros(1, dtype=np.int32)
_EMPTY_U = np.zeros(0, dtype=np.uint32)
_EMPTY_X = np.zeros((1, 1))


class TrainingRows:
    """One validated batch, in the form the compiled loops take; with ``unit``, the
    instances of an algorithm that normalises them, scaled by :func:`unit_scaled`;
    ``weight``, the rows' positive weights (None: every row weighs 1)."""

    def __init__(self, X, p, aug, unit=False, weight=None):
        if unit:
            X, aug = unit_scaled(X, aug)
        self.n_samples, self.n_features = X.shape
        self.is_sparse = sp.issparse(X)
        if self.is_sparse:
            indptr, indices, self.data = csr_arrays(X)
            # int64 whatever csr_arrays gives: one compiled pass for every CSR input
            self.indptr = indptr.astype(np.int64, copy=False)
            # unsigned: the compiled loops then skip numba's negative-index wraparound
            self.indices = indices.view(np.uint32 if indices.dtype == np.int32 else np.uint64)
            self.X = _EMPTY_X
            self.row_nnz = np.diff(self.indptr)
        else:
            self.X = np.ascontiguousarray(X, dtype=np.float64)
            self.indptr, self.indices, self.data = _EMPTY_I, _EMPTY_U, _EMPTY_F
            self.row_nnz = None
        self.aug = float(aug)
        # 1 / ||(x, aug)||_p, computed by the compiled pass on first sight of a row
        self.xscale = np.full(self.n_samples, -1.0)
        self.weight = UNWEIGHTED if weight is None else np.ascontiguousarray(weight, np.float64)

    def max_row_nnz(self, rows):
        extra = 1 if self.aug != 0.0 else 0
        if self.row_nnz is None:
            return self.n_features + extra
        return int(self.row_nnz[rows].max()) + extra
