"""The rows' measures and forms: their p-norms, a summary of all the rows a fit starts
from (:class:`DataSummary`), the powers of two that scale them, and the CSR arrays and
canonical form the compiled passes take."""

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._core import NUMBA_OPTS
from ._core.arrays import backend_of, times_power_of_two, to_numpy
from ._core.linear import scaled_norm


def power_of_two_scaled(X, extra=0.0, unless_within=None):
    """``(X 2^-e, e)``: X scaled exactly (but for entries that become subnormal) by the
    power of two that brings the largest of its entries and ``|extra|`` into [0.5, 1);
    ``(X, 0)`` when that is 0, or lies within [2^-unless_within, 2^unless_within]."""
    e = exponent_of(max(peak_of(X), abs(float(extra))), unless_within)
    return times_power_of_two(X, -e), e


def peak_of(X):
    """The largest absolute entry of X (numpy, sparse, or an array of another namespace,
    on its device), 0 without entries."""
    # the largest and the least entry, not the absolute values: no copy of X is made
    if sp.issparse(X) or isinstance(X, np.ndarray):
        A = X.data if sp.issparse(X) else X
        return float(max(np.max(A, initial=0.0), -np.min(A, initial=0.0)))
    if not math.prod(X.shape):
        return 0.0
    xp = backend_of(X).xp
    return float(max(xp.max(X), -xp.min(X)))


def exponent_of(size, unless_within=None):
    """The e for which ``size 2^-e`` lies in [0.5, 1); 0 when ``size`` is 0 or lies
    within [2^-unless_within, 2^unless_within]."""
    ordinary = unless_within is not None and 2.0**-unless_within <= size <= 2.0**unless_within
    return 0 if size == 0.0 or ordinary else int(np.frexp(size)[1])


def row_norms_p(X, p):
    """p-norm of every row of a dense array or CSR matrix, computed without overflow.

    Each row is divided by its largest absolute value before the powers are taken,
    so ``p`` = 2 ln(n) on raw pixel values cannot overflow.
    """
    out = np.empty(X.shape[0])
    if sp.issparse(X):
        X = X.tocsr()
        _csr_row_norms(X.indptr, X.indices, np.asarray(X.data, dtype=np.float64), float(p), out)
    else:
        _dense_row_norms(np.asarray(X, dtype=np.float64), float(p), out)
    return out


@njit(**NUMBA_OPTS)
def _dense_row_norms(X, p, out):
    for r in range(X.shape[0]):
        out[r] = scaled_norm(X[r], p)


@njit(**NUMBA_OPTS)
def _csr_row_norms(indptr, indices, data, p, out):
    for r in range(out.shape[0]):
        out[r] = scaled_norm(data[indptr[r] : indptr[r + 1]], p)


def augmented_norms_p(X, p, aug):
    """p-norm of every row of (X, aug): the instance with its constant bias coordinate."""
    norms = row_norms_p(X, p)
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


class Norms:
    """The p-norms of some rows, summarised: how many rows, the largest norm, and the
    sum of their squares, held exactly, so that summaries of chunks combine (``+``) to
    the summary of all the rows whatever the chunks: a file read in chunks, the shards
    of a dask array and the array in memory give the same bits.

    Each squared norm ``n^2 = f^2 4^k`` (``n = f 2^k``, f in [0.5, 1)) counts as the
    integer ``f^2 2^54`` (f^2 rounded to float64 has no more bits) in units of
    ``4^k / 2^54``: integer sums per exponent k (Python ints) that no order of addition
    changes and no scale of the data (1e-300 to 1e300) overflows. No library sums
    floats exactly across chunks (``math.fsum`` rounds each chunk's sum), hence this.

    A bias coordinate (``intercept_scaling``) takes :attr:`top` (the papers' R) or
    :attr:`rms`, the root mean square norm, which one row of outlying norm moves by at
    most its norm over the square root of the number of rows.
    """

    __slots__ = ("n", "top", "_sums", "_pending")

    #: f^2 (in [0.25, 1), float64) times 2^BITS is an integer
    BITS = 54
    #: the int64 sums of a chunk add halves of these bits (each sum exact to 2^36 rows)
    _HALF = 27

    def __init__(self, n=0, top=0.0, sums=None, pending=None):
        self.n, self.top, self._sums = int(n), float(top), dict(sums or {})
        # the norms (or a function that gives them) whose sums are still to take: only
        # a bias coordinate of "rms" (or adding chunks) needs them, so that the largest
        # norm costs what it did
        self._pending = pending

    @classmethod
    def of(cls, norms):
        """The summary of an array of norms (their sums taken when first needed)."""
        norms = np.asarray(norms, dtype=np.float64).ravel()
        if not norms.size:
            return cls()
        top = float(norms.max())
        if not math.isfinite(top):
            return cls(norms.size, top)  # a norm beyond float64: rms is inf (as is top)
        return cls(norms.size, top, pending=norms)

    @property
    def sums(self):
        """``{k: the sum of the integers f^2 2^BITS of the norms f 2^k}``."""
        if self._pending is not None:
            pending = self._pending
            norms = pending() if callable(pending) else pending
            self._sums, self._pending = self._summed(norms), None
        return self._sums

    def __reduce__(self):
        # the sums, not the norms pending: what a shard's task sends is O(exponents)
        return (Norms, (self.n, self.top, self.sums))

    @classmethod
    def _summed(cls, norms):
        f, k = np.frexp(norms)
        units = np.ldexp(f * f, cls.BITS).astype(np.int64)  # exact
        order = np.argsort(k, kind="stable")
        k, units = k[order], units[order]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        high = np.add.reduceat(units >> cls._HALF, starts)
        low = np.add.reduceat(units & ((1 << cls._HALF) - 1), starts)
        return {
            int(e): (int(h) << cls._HALF) + int(lo)
            for e, h, lo in zip(k[starts], high, low, strict=True)
            if h or lo
        }

    def __add__(self, other):
        sums = dict(self.sums)
        for e, t in other.sums.items():
            sums[e] = sums.get(e, 0) + t
        return Norms(self.n + other.n, max(self.top, other.top), sums)

    @property
    def rms(self):
        """The root mean square norm (0 without rows, or where all are 0)."""
        if not math.isfinite(self.top):
            return self.top
        if not self.n or not self.sums:
            return 0.0
        low = min(self.sums)
        total = sum(t << (2 * (e - low)) for e, t in self.sums.items())
        shift = max(total.bit_length() - 62, 0)
        mean = (total >> shift) / self.n  # times 2^scale
        scale = 2 * low - self.BITS + shift
        if scale % 2:
            mean, scale = 2.0 * mean, scale - 1
        return math.ldexp(math.sqrt(mean), scale // 2)


class DataSummary:
    """What starting a fit needs to know of all its training data, beyond one batch.

    The number of features, whether the data are sparse, the p-norms of the instances
    (:class:`Norms`: ``fit_intercept``'s bias coordinate, the margin Perceptron's
    schedule, the units of a model) and the variance of the entries (a kernel's
    ``gamma="scale"``). Made from an array by :meth:`of`, or from a pass over a stream
    (:mod:`marginkit.streaming`), so that a fit on a stream starts where a fit on the
    same data in memory does.

    Parameters
    ----------
    n_features : int
    sparse : bool
    norms : callable
        ``norms(p)``: the :class:`Norms` of the instances' p-norms.
    variance : callable
        ``variance(e)``: the variance of the n_samples x n_features entries, each
        times ``2^-e`` (that of the rows in a model's units).
    """

    def __init__(self, n_features, sparse, norms, variance):
        self.n_features = int(n_features)
        self.sparse = bool(sparse)
        self._summarise = norms
        self._variance = variance
        self._norms = {}

    @classmethod
    def of(cls, X):
        """The summary of an array or sparse matrix."""

        backend = backend_of(X)

        def norms(p):
            if sp.issparse(X) or isinstance(X, np.ndarray):
                return Norms.of(row_norms_p(X, p))
            if not X.shape[0]:
                return Norms()
            # on X's device, in the units of its largest entry (p = 2: the kernels')
            e = exponent_of(peak_of(X))
            sq = backend.squared_norms(times_power_of_two(X, -e))
            top = float(np.ldexp(np.sqrt(float(backend.xp.max(sq))), e))
            return Norms(X.shape[0], top, pending=lambda: np.ldexp(np.sqrt(to_numpy(sq)), e))

        def variance(e):
            return backend.variance(times_power_of_two(X, -e))

        return cls(X.shape[1], sp.issparse(X), norms, variance)

    def norms(self, p):
        """The :class:`Norms` of the instances' p-norms (computed once per p)."""
        p = float(p)
        if p not in self._norms:
            self._norms[p] = self._summarise(p)
        return self._norms[p]

    def max_norm(self, p):
        """The largest p-norm of an instance (0 without instances)."""
        return self.norms(p).top

    def variance(self, e=0):
        """The variance of the entries, each times ``2^-e`` (of an array, computed so;
        of a stream, scaled from that of its entries)."""
        return self._variance(e)


def canonical(X):
    """X as the compiled passes take it: a CSR matrix in canonical format (sorted
    indices, no duplicates), and numpy arrays aligned to their items. An array
    received from another process (dask's, after a compute) may start at any byte, and
    OpenBLAS's SSE kernels (``OPENBLAS_CORETYPE=Prescott``) crash on such data where the
    compiled code hands it to BLAS; a copy is aligned."""
    if sp.issparse(X):
        parts = (X.data, X.indices, X.indptr)
        if not X.has_canonical_format or not all(a.flags.aligned for a in parts):
            X = X.copy()
            X.sum_duplicates()
    elif isinstance(X, np.ndarray) and not X.flags.aligned:
        X = X.copy()
    return X
