"""Kernel functions, evaluated a block at a time through one BLAS product.

Every kernel here is a function of the Gram matrix ``A @ B.T`` and, for the
Gaussian ones, of the squared norms of the rows, so that ``K(A, B)`` costs one
GEMM plus one elementwise pass (compiled, fused with the normalisation
``K(x, y) / sqrt(K(x, x) K(y, y))`` of Gentile 2001, section 3, Remark 5).

Parameters follow scikit-learn's ``sklearn.metrics.pairwise`` meanings:

- ``linear``: ``x . y``
- ``poly``: ``(gamma x . y + coef0) ^ degree``
- ``rbf``: ``exp(-gamma ||x - y||^2)``
- ``poly_rbf``: ``(coef0 + exp(-gamma ||x - y||^2)) ^ degree`` (the "poly-Gaussian"
  kernel of the paper's Letter experiments, Table 5)
"""

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from numba import njit

from .. import _checks as check
from ..persistence import trusted_type
from .arrays import HOST, Host
from .linear import power

KERNELS = ("linear", "poly", "rbf", "poly_rbf")
_CODES = {name: i for i, name in enumerate(KERNELS)}
_NO_NORMS = np.zeros(0)


#: A block product of sparse operands is made dense when the product of their densities
#: is at least this: scipy's sparse products cost tens of nanoseconds a matching pair of
#: non-zeros, BLAS a few hundredths of one a multiply-add, so dense wins from about 5%
#: non-zeros on both sides (a9a, 11%: 2.5x faster to fit, 2.8x to predict).
DENSE_PRODUCT_DENSITY = 0.0025
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


@trusted_type
class Kernel:
    """A kernel with resolved parameters; picklable (holds no compiled object).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "poly_rbf"} or callable
        A callable takes two 2-d arrays (or sparse matrices) A, B and returns the
        (len(A), len(B)) matrix K(A, B).
    gamma, degree, coef0 : float, int, float
    """

    def __init__(self, kernel, gamma=1.0, degree=3, coef0=1.0):
        self.kernel = kernel
        self.gamma = float(gamma)
        self.degree = int(degree)
        self.coef0 = float(coef0)

    def _check_loaded(self, where):
        """A named kernel (a file holds no function) with finite parameters."""
        w = f"{where}."
        check.attributes(self, where, ("kernel", "gamma", "degree", "coef0"))
        if not isinstance(self.kernel, str) or self.kernel not in KERNELS:
            check.fail(w + "kernel", f"must be one of {', '.join(KERNELS)}, got {self.kernel!r}")
        check.real(self.gamma, w + "gamma", positive=True)
        check.integer(self.degree, w + "degree", 1)
        check.real(self.coef0, w + "coef0")

    @property
    def needs_norms(self):
        return self.kernel in ("rbf", "poly_rbf")

    def diagonal(self, X, sq=None, backend=None):
        """K(x, x) for every row of X, on the host (float64); ``sq``: ||x||^2 there."""
        k = self.kernel
        n = X.shape[0]
        if callable(k):
            return self._callable_diagonal(X, backend)
        if k == "linear":
            return sq
        if k == "poly":
            with np.errstate(over="ignore", invalid="ignore"):
                return (self.gamma * sq + self.coef0) ** self.degree
        if k == "rbf":
            return np.ones(n)
        return np.full(n, (self.coef0 + 1.0) ** self.degree)

    def _callable_diagonal(self, X, backend, chunk=256):
        out = np.empty(X.shape[0])
        for lo in range(0, X.shape[0], chunk):
            hi = min(lo + chunk, X.shape[0])
            rows = X[lo:hi, :]
            K = backend.host(self._call(rows, rows, backend))
            out[lo:hi] = np.diagonal(K)
        return out

    def _call(self, A, B, backend):
        K = self.kernel(A, B)
        if sp.issparse(K):
            K = K.toarray()
        if isinstance(backend, Host):
            K = np.asarray(K, dtype=backend.dtype)
        else:
            K = backend.asarray(K)
        if tuple(K.shape) != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"the kernel callable returned an array of shape {K.shape} for inputs "
                f"with {A.shape[0]} and {B.shape[0]} rows; expected "
                f"({A.shape[0]}, {B.shape[0]})"
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
            return K * inv_a[:, None] * inv_b[None, :]
        if not self.needs_norms:
            sq_a = sq_b = _NO_NORMS
        else:
            sq_a = backend.squared_norms(A) if sq_a is None else sq_a
            sq_b = backend.squared_norms(B) if sq_b is None else sq_b
        if not isinstance(backend, Host):
            return self._finish_xp(A @ B.T, backend.xp, inv_a, inv_b, sq_a, sq_b)
        A, B = product_operands(A, B)
        G = A @ B.T
        if sp.issparse(G):
            G = G.toarray()
        G = np.asarray(G, dtype=backend.dtype)
        if not G.flags.c_contiguous:
            G = np.ascontiguousarray(G)
        params = (_CODES[self.kernel], self.gamma, float(self.degree), self.coef0)
        parts = finish_parts(G.shape[0], G.size)
        if parts == 1:
            _finish(G, *params, inv_a, inv_b, sq_a, sq_b)
            return G
        # the elementwise pass over row bands in threads (it releases the GIL)
        bounds = np.linspace(0, G.shape[0], parts + 1).astype(int)
        bands = [
            (G[lo:hi], *params, inv_a[lo:hi], inv_b, sq_a[lo:hi] if sq_a.size else sq_a, sq_b)
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        list(thread_pool(FINISH_THREADS, "finish").map(lambda args: _finish(*args), bands))
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
        return G * (inv_a[:, None] * inv_b[None, :])


#: Threads of the elementwise pass over a kernel block on a machine with more than two
#: cores (on two, BLAS keeps both busy and the pass costs a few percent), and the
#: fewest entries a band of it gets.
FINISH_THREADS = min(8, os.cpu_count() or 1) if (os.cpu_count() or 1) > 2 else 1
FINISH_BAND = 1 << 16


def finish_parts(rows, size):
    """Row bands of the elementwise pass over a block of ``size`` entries."""
    return int(max(1, min(FINISH_THREADS, rows, size // FINISH_BAND)))


@functools.cache
def thread_pool(workers, name):
    """The process's one pool of ``workers`` threads for ``name`` (made on first use)."""
    return ThreadPoolExecutor(workers, thread_name_prefix=f"marginkit-{name}")


@njit(cache=True, nogil=True)
def _finish(G, code, gamma, degree, coef0, inv_a, inv_b, sq_a, sq_b):
    """In place: Gram matrix -> normalised kernel matrix, one pass.

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
        for j in range(m):
            row[j] *= ia * inv_b[j]


@njit(inline="always", cache=True, nogil=True)
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


@njit(inline="always", cache=True, nogil=True)
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
