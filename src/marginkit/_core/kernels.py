"""Kernel functions, evaluated a block at a time through one BLAS product.

Every kernel here is a function of the Gram matrix ``A @ B.T`` and, for the
Gaussian ones, of the squared norms of the rows, so that ``K(A, B)`` costs one
GEMM (or, for two truly sparse operands, one compiled scatter product: scipy's
sparse product would build a sparse matrix of a block that is mostly non-zero, and
no well-kept library gives a dense product of two CSR matrices) plus one elementwise
pass (compiled, fused with the normalisation
``K(x, y) / sqrt(K(x, x) K(y, y))`` of Gentile 2001, section 3, Remark 5).

Parameters follow scikit-learn's ``sklearn.metrics.pairwise`` meanings:

- ``linear``: ``x . y``
- ``poly``: ``(gamma x . y + coef0) ^ degree``
- ``rbf``: ``exp(-gamma ||x - y||^2)``
- ``poly_rbf``: ``(coef0 + exp(-gamma ||x - y||^2)) ^ degree`` (the "poly-Gaussian"
  kernel of the paper's Letter experiments, Table 5)

and every kernel may carry an ``offset`` ``o >= 0`` added to all its values, ``K(x, y)
+ o``: the kernel of the instances ``(phi(x), sqrt(o))`` with a constant bias coordinate
appended (the estimators' ``fit_intercept``), added before the normalisation.
"""

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import array_api_compat
import numpy as np
import scipy.sparse as sp
from numba import njit

from . import NUMBA_INLINE, NUMBA_OPTS
from .arrays import HOST, Host, to_numpy
from .linear import power

KERNELS = ("linear", "poly", "rbf", "poly_rbf")
_CODES = {name: i for i, name in enumerate(KERNELS)}
_NO_NORMS = np.zeros(0)


#: A block product of two sparse operands is a dense BLAS product when the product of
#: their densities is at least this, else the compiled scatter product
#: :func:`sparse_gram`. Dense wins once the d x density_a x density_b matching pairs of
#: non-zeros per entry cost the scatter more than BLAS's d multiply-adds: a pair costs
#: about 40 of them on evenly spread non-zeros, up to 140 on a9a, whose common features
#: make long columns (benchmarks/bench_kernel_sparse.py: 2000 binary features, scatter
#: 3x faster at 5% non-zeros, 9x at 0.2%; a9a, 11% of 123, BLAS 1.6x faster).
DENSE_PRODUCT_DENSITY = 0.01
#: ... and when neither dense operand exceeds this many entries (256 MB).
DENSE_PRODUCT_MAX = 1 << 25


def _density(X):
    if not sp.issparse(X):
        return 1.0
    cells = X.shape[0] * X.shape[1]
    return X.nnz / cells if cells else 0.0


def product_operands(A, B):
    """A and B in the form whose product ``A @ B.T`` is faster: both dense when the data
    are dense enough for BLAS to win (see ``DENSE_PRODUCT_DENSITY``), else as given."""
    if not (sp.issparse(A) or sp.issparse(B)):
        return A, B
    small = max(A.shape[0], B.shape[0]) * A.shape[1] <= DENSE_PRODUCT_MAX
    if small and _density(A) * _density(B) >= DENSE_PRODUCT_DENSITY:
        return (
            A.toarray() if sp.issparse(A) else A,
            B.toarray() if sp.issparse(B) else B,
        )
    return A, B


def gram(A, B, dtype=np.float64):
    """``A @ B.T`` as a C-contiguous ndarray of ``dtype``, by the faster product.

    Dense operands (or sparse ones dense enough, :func:`product_operands`) go to BLAS;
    two sparse ones to :func:`sparse_gram`, which writes the dense block directly (scipy's
    sparse product would build a sparse matrix of a block that is mostly non-zero, then
    copy it out); one sparse and one dense to scipy's sparse-times-dense product.
    """
    A, B = product_operands(A, B)
    if sp.issparse(A) and sp.issparse(B):
        return sparse_gram(A, B, dtype)
    G = A @ B.T
    if sp.issparse(G):
        G = G.toarray()
    G = np.asarray(G, dtype=dtype)
    return G if G.flags.c_contiguous else np.ascontiguousarray(G)


def sparse_gram(A, B, dtype=np.float64):
    """``A @ B.T`` of two sparse matrices as a dense ndarray: each non-zero ``A[i, k]``
    scatters ``A[i, k] * B[j, k]`` into ``G[i, j]`` over the non-zeros of column ``k``
    of B (B in CSC), in row bands on threads. scipy has no sparse product with a dense
    result, and no well-kept library provides one for CSR input, hence this loop."""
    A = sp.csr_matrix(A)
    B = sp.csc_matrix(B)
    G = np.zeros((A.shape[0], B.shape[0]), dtype=dtype)
    in_bands(
        _scatter,
        G.shape[0],
        G.size,
        lambda lo, hi: (
            A.indptr[lo : hi + 1],
            A.indices,
            A.data,
            B.indptr,
            B.indices,
            B.data,
            G[lo:hi],
        ),
        SCATTER_THREADS,
    )
    return G


@njit(**NUMBA_OPTS)
def _scatter(a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, G):
    """G[i] += a_val[p] * (column a_idx[p] of B) for the non-zeros p of row i (rows of
    ``a_ptr``, which starts at G's first row)."""
    for i in range(G.shape[0]):
        row = G[i]
        for p in range(a_ptr[i], a_ptr[i + 1]):
            k = a_idx[p]
            v = a_val[p]
            for q in range(b_ptr[k], b_ptr[k + 1]):
                row[b_idx[q]] += v * b_val[q]


class Kernel:
    """A kernel with resolved parameters; picklable (holds no compiled object).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "poly_rbf"} or callable
        A callable takes two 2-d arrays (or sparse matrices) A, B and returns the
        (len(A), len(B)) matrix K(A, B).
    gamma, degree, coef0 : float, int, float
    offset : float >= 0 or None, default=0.0
        Added to every value: the squared bias coordinate of ``fit_intercept``. None
        while it waits for the first rows of a fit (a callable kernel's ``"rms"``, read
        from their ``K(x, x)``): no value is computed before it is set.
    """

    #: the offset of a kernel pickled before it had one
    offset = 0.0

    def __init__(self, kernel, gamma=1.0, degree=3, coef0=1.0, offset=0.0):
        self.kernel = kernel
        self.gamma = float(gamma)
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.offset = None if offset is None else float(offset)

    @property
    def needs_norms(self):
        return self.kernel in ("rbf", "poly_rbf")

    @property
    def reads(self):
        """The parameters the kernel's formula reads (none for the linear kernel and a
        callable)."""
        if self.kernel == "rbf":
            return ("gamma",)
        if self.kernel in ("poly", "poly_rbf"):
            return ("gamma", "degree", "coef0")
        return ()

    def constant_diagonal(self):
        """K(x, x) of the Gaussian kernels, the same for every x (1, or (coef0 + 1) ^
        degree, plus the offset); None for the others."""
        if self.kernel not in ("rbf", "poly_rbf"):
            return None
        return float(self.at_norm(np.zeros(1))[0])

    def at_norm(self, sq):
        """K(x, x) of a named kernel for rows of squared norms ``sq`` (host float64), the
        offset included (the Gaussian kernels' does not depend on it)."""
        k = self.kernel
        with np.errstate(over="ignore", invalid="ignore"):  # inf: refused by the caller
            if k == "linear":
                value = sq
            elif k == "poly":
                value = (self.gamma * sq + self.coef0) ** self.degree
            elif k == "rbf":
                value = np.ones_like(sq)
            else:
                value = np.full_like(sq, np.float64(self.coef0 + 1.0) ** self.degree)
            return value + self.offset if self.offset else value

    def diagonal(self, X, sq=None, backend=None):
        """K(x, x) for every row of X, on the host (float64); ``sq``: ||x||^2 there
        (read by the linear and polynomial kernels)."""
        if callable(self.kernel):
            K = self._callable_diagonal(X, backend)
            return K + self.offset if self.offset else K
        return self.at_norm(np.zeros(X.shape[0]) if sq is None else sq)

    def _callable_diagonal(self, X, backend, chunk=256):
        out = np.empty(X.shape[0])
        for lo in range(0, X.shape[0], chunk):
            hi = min(lo + chunk, X.shape[0])
            rows = X[lo:hi, :]
            K = backend.host(self._call(rows, rows, backend))
            out[lo:hi] = np.diagonal(K)
        return out

    def _call(self, A, B, backend):
        """The callable's K(A, B), checked: a ValueError for a wrong shape, complex
        values or values that are not finite (which would make every output NaN)."""
        K = self.kernel(A, B)
        if sp.issparse(K):
            K = K.toarray()
        if isinstance(K, np.ndarray) or not array_api_compat.is_array_api_obj(K):
            K = np.asarray(K)
            complex_ = np.iscomplexobj(K)
        else:  # an array of another library (torch, CuPy, ...): its own namespace says
            complex_ = array_api_compat.array_namespace(K).isdtype(K.dtype, "complex floating")
            if isinstance(backend, Host):
                K = to_numpy(K)
        if complex_:
            raise ValueError("the kernel callable returned complex values; expected real ones")
        K = np.asarray(K, dtype=backend.dtype) if isinstance(backend, Host) else backend.asarray(K)
        if tuple(K.shape) != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"the kernel callable returned an array of shape {K.shape} for inputs "
                f"with {A.shape[0]} and {B.shape[0]} rows; expected "
                f"({A.shape[0]}, {B.shape[0]})"
            )
        if not bool(backend.xp.all(backend.xp.isfinite(K))):
            raise ValueError(
                "Input contains NaN or infinity: the kernel callable returned values that "
                "are not finite"
            )
        return K

    def normalised(self, A, B, inv_a, inv_b, sq_a=None, sq_b=None, backend=None):
        """K(A, B) / sqrt(K(a, a) K(b, b)), entries with a zero diagonal set to 0.

        ``inv_a``, ``inv_b`` are ``1 / sqrt(K(x, x))`` (0 where K(x, x) = 0), and with
        ``sq_a``, ``sq_b`` (``||x||^2``, for the Gaussian kernels) arrays of the
        ``backend`` (:mod:`marginkit._core.arrays`; the host in float64 when None), where the
        result is made.
        """
        backend = HOST if backend is None else backend
        if callable(self.kernel):
            K = self._call(A, B, backend)
            if self.offset:
                K = K + self.offset
            return K * inv_a[:, None] * inv_b[None, :]
        if not self.needs_norms:
            sq_a = sq_b = _NO_NORMS
        else:
            sq_a = backend.squared_norms(A) if sq_a is None else sq_a
            sq_b = backend.squared_norms(B) if sq_b is None else sq_b
        if not isinstance(backend, Host):
            return self._finish_xp(A @ B.T, backend.xp, inv_a, inv_b, sq_a, sq_b)
        G = gram(A, B, backend.dtype)
        params = (_CODES[self.kernel], self.gamma, float(self.degree), self.coef0, self.offset)
        # the elementwise pass over row bands in threads (it releases the GIL)
        in_bands(
            _finish,
            G.shape[0],
            G.size,
            lambda lo, hi: (
                G[lo:hi],
                *params,
                inv_a[lo:hi],
                inv_b,
                sq_a[lo:hi] if sq_a.size else sq_a,
                sq_b,
            ),
        )
        return G

    def _finish_xp(self, G, xp, inv_a, inv_b, sq_a, sq_b):
        """:func:`_finish` written against the array API standard: the same operations
        in the same order, one array expression each."""
        code = _CODES[self.kernel]
        if code == 1:
            G = self.gamma * G + self.coef0
        elif code >= 2:
            d2 = xp.clip(sq_a[:, None] + sq_b[None, :] - 2.0 * G, min=0.0)
            G = xp.exp(-self.gamma * d2)
            if code == 3:
                G = G + self.coef0
        if code == 1 or code == 3:
            G = _whole_power_xp(G, self.degree, xp)
        if self.offset:
            G = G + self.offset
        return G * (inv_a[:, None] * inv_b[None, :])


#: Threads of the elementwise pass over a kernel block on a machine with more than two
#: cores (on two, BLAS keeps both busy and the pass costs a few percent), and the fewest
#: entries a band of a block gets.
FINISH_THREADS = min(8, os.cpu_count() or 1) if (os.cpu_count() or 1) > 2 else 1
FINISH_BAND = 1 << 16
#: Threads of the sparse scatter product: it replaces a BLAS product, which uses every
#: core, so it does too (up to 8).
SCATTER_THREADS = min(8, os.cpu_count() or 1)


def finish_parts(rows, size, threads=None):
    """Row bands of a pass over a block of ``size`` entries on ``threads`` threads
    (``FINISH_THREADS`` when None)."""
    threads = FINISH_THREADS if threads is None else threads
    return int(max(1, min(threads, rows, size // FINISH_BAND)))


def in_bands(fn, rows, size, band_args, threads=None):
    """``fn(*band_args(lo, hi))`` over row bands of a block of ``rows`` rows and ``size``
    entries: in the calling thread for one band, else on a pool of ``threads`` threads
    (``FINISH_THREADS`` when None; ``fn`` compiled with ``nogil``)."""
    threads = FINISH_THREADS if threads is None else threads
    parts = finish_parts(rows, size, threads)
    if parts == 1:
        fn(*band_args(0, rows))
        return
    bounds = np.linspace(0, rows, parts + 1).astype(int)
    bands = [band_args(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    list(thread_pool(threads, "bands").map(lambda args: fn(*args), bands))


@functools.cache
def thread_pool(workers, name):
    """The process's one pool of ``workers`` threads for ``name`` (made on first use)."""
    return ThreadPoolExecutor(workers, thread_name_prefix=f"marginkit-{name}")


@njit(**NUMBA_OPTS)
def _finish(G, code, gamma, degree, coef0, offset, inv_a, inv_b, sq_a, sq_b):
    """In place: Gram matrix -> normalised kernel matrix, one pass (``offset`` added
    before the normalisation).

    The kernel is chosen outside the loops and whole powers are written out, so that
    each row is one straight loop the compiler can vectorise.
    """
    n, m = G.shape
    d = int(degree)
    for i in range(n):
        row = G[i]
        if code == 1:
            for j in range(m):
                row[j] = gamma * row[j] + coef0
        elif code >= 2:
            sa = sq_a[i]
            for j in range(m):
                d2 = max(sa + sq_b[j] - 2.0 * row[j], 0.0)
                row[j] = np.exp(-gamma * d2)
            if code == 3:
                for j in range(m):
                    row[j] += coef0
        if code == 1 or code == 3:
            _whole_power(row, d)
        ia = inv_a[i]
        if offset != 0.0:
            for j in range(m):
                row[j] = (row[j] + offset) * (ia * inv_b[j])
        else:
            for j in range(m):
                row[j] *= ia * inv_b[j]


@njit(**NUMBA_INLINE)
def _whole_power(row, d):
    """row ** d in place for a whole d >= 1 (negative entries keep their sign if d is odd)."""
    m = row.shape[0]
    if d == 2:
        for j in range(m):
            row[j] = row[j] * row[j]
    elif d == 3:
        for j in range(m):
            t = row[j]
            row[j] = t * t * t
    elif d == 4:
        for j in range(m):
            t = row[j] * row[j]
            row[j] = t * t
    elif d == 5:
        for j in range(m):
            t = row[j]
            t2 = t * t
            row[j] = t2 * t2 * t
    elif d == 6:
        for j in range(m):
            t = row[j]
            t2 = t * t
            row[j] = t2 * t2 * t2
    elif d > 6:
        for j in range(m):
            row[j] = power_signed(row[j], d)


def _whole_power_xp(G, d, xp):
    """G ** d for a whole d >= 1, as :func:`_whole_power` computes it."""
    if d == 1:
        return G
    if d == 2:
        return G * G
    if d == 3:
        return G * G * G
    if d == 4:
        t = G * G
        return t * t
    if d == 5:
        t2 = G * G
        return t2 * t2 * G
    if d == 6:
        t2 = G * G
        return t2 * t2 * t2
    r = xp.pow(xp.abs(G), float(d))
    return xp.where(G < 0, -r, r) if d % 2 == 1 else r


@njit(**NUMBA_INLINE)
def power_signed(t, degree):
    """t ** degree for a whole ``degree`` (t may be negative)."""
    r = power(abs(t), degree)
    if t < 0.0 and int(degree) % 2 == 1:
        return -r
    return r


def inverse_sqrt(diag):
    """1 / sqrt(K(x, x)), 0 where K(x, x) = 0 (such an x never updates: footnote 3)."""
    out = np.zeros_like(diag)
    np.divide(1.0, np.sqrt(np.maximum(diag, 0.0)), out=out, where=diag > 0)
    return out
