"""Small array helpers shared by the estimators."""

import numpy as np
import scipy.sparse as sp


def row_norms_p(X, p):
    """p-norm of every row of a dense array or CSR matrix, computed without overflow.

    Each row is divided by its largest absolute value before the powers are taken,
    so ``p`` = 2 ln(n) on raw pixel values cannot overflow.
    """
    if sp.issparse(X):
        absx = abs(X).tocsr()
        peak = absx.max(axis=1).toarray().ravel()
        scale = np.where(peak > 0, peak, 1.0)
        scaled = sp.diags(1.0 / scale) @ absx
        if p == 2:
            sums = np.asarray(scaled.multiply(scaled).sum(axis=1)).ravel()
        else:
            sums = np.asarray(scaled.power(p).sum(axis=1)).ravel()
    else:
        absx = np.abs(X)
        peak = absx.max(axis=1) if X.shape[1] else np.zeros(X.shape[0])
        scale = np.where(peak > 0, peak, 1.0)
        scaled = absx / scale[:, None]
        sums = np.einsum("ij,ij->i", scaled, scaled) if p == 2 else (scaled**p).sum(axis=1)
    return scale * sums ** (1.0 / p), peak


def augmented_norms_p(X, p, aug):
    """p-norm of every row of (X, aug): the instance with its constant bias coordinate."""
    norms, _ = row_norms_p(X, p)
    if aug == 0.0:
        return norms
    a = abs(aug)
    big = np.maximum(norms, a)
    safe = np.where(big > 0, big, 1.0)
    return big * ((norms / safe) ** p + (a / safe) ** p) ** (1.0 / p)


def inverse_or_zero(norms):
    """1 / norm, with 0 for the zero vector (which never triggers an update)."""
    out = np.zeros_like(norms)
    np.divide(1.0, norms, out=out, where=norms > 0)
    return out


def csr_arrays(X):
    """(indptr, indices, data) of a CSR matrix as numba-friendly arrays.

    Duplicate entries are summed; indices are made int32 when they fit.
    """
    X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    indptr, indices = X.indptr, X.indices
    if X.nnz < np.iinfo(np.int32).max and X.shape[1] < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32, copy=False)
        indices = indices.astype(np.int32, copy=False)
    return indptr, indices, np.ascontiguousarray(X.data, dtype=np.float64)
