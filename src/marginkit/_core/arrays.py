"""Where the kernel engine's block products are made: the host, or an array's device.

scikit-learn's Array API convention (``sklearn.config_context(array_api_dispatch=True)``)
lets the kernel estimators take arrays of any library that implements the standard
(torch, CuPy, ...) through array-api-compat. Every block product then runs where the
arrays live; only the small results that the walk needs (b x C margins and the b x b
in-block Gram) come to the host, where one compiled walk makes every decision.

:class:`Host` is numpy and scipy.sparse with the compiled elementwise pass
(:func:`marginkit._core.kernels._finish`); :class:`Device` is any other namespace, written
against the standard only. scikit-learn's private helpers name the namespace and move
arrays between libraries (DLPack first): they are its own convention, kept here in one
place.
"""

import functools

import array_api_compat
import array_api_compat.numpy as np_xp
import numpy as np
import scipy.sparse as sp
from sklearn import config_context, get_config
from sklearn.utils._array_api import (
    _max_precision_float_dtype,
    get_namespace_and_device,
    move_to,
)


def namespace(*arrays):
    """``(xp, device)`` of arrays under array API dispatch, or ``(None, None)`` for the
    host: numpy arrays, scipy.sparse matrices, array-likes, or dispatch switched off."""
    arrays = [a for a in arrays if a is not None and not sp.issparse(a)]
    if not arrays:
        return None, None
    xp, is_array_api, device = get_namespace_and_device(*arrays)
    if not is_array_api or _is_numpy(xp):
        return None, None
    return xp, device


def _is_numpy(xp):
    return xp.__name__ in ("numpy", "array_api_compat.numpy")


def to_numpy(a, dtype=None):
    """A host numpy array of ``a`` (of any namespace and device)."""
    if a is None or sp.issparse(a) or isinstance(a, np.ndarray):
        out = a
    elif array_api_compat.is_array_api_obj(a):
        try:
            # DLPack with a device (the standard's 2023.12 exchange): one copy, without
            # scikit-learn's inspection of the array (~0.2 ms a call, and the walk brings
            # every block's sums here)
            out = np.from_dlpack(a, device="cpu")
        except (AttributeError, TypeError, ValueError, BufferError, NotImplementedError):
            out = _moved_to_numpy(a)
    else:
        out = np.asarray(a)
    if dtype is not None and out is not None and not sp.issparse(out):
        out = np.asarray(out, dtype=dtype)
    return out


def _moved_to_numpy(a):
    """scikit-learn's ``move_to`` (DLPack, else by way of numpy), which moves arrays
    only with dispatch on: a model's arrays can be asked for with it off."""
    if get_config()["array_api_dispatch"]:
        return move_to(a, xp=np, device="cpu")
    with config_context(array_api_dispatch=True):
        return move_to(a, xp=np, device="cpu")


def backend_of(X):
    """The backend that makes the products of ``X``'s rows: :class:`Device` for an array
    of another namespace under dispatch, else :class:`Host`; in ``X``'s float dtype."""
    xp, device = namespace(X)
    if xp is None:
        dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)
        return Host(dtype)
    return Device(xp, device, X.dtype)


class _Common:
    """What both backends do the same way, through ``self.xp``."""

    def widest(self, a):
        """``a`` in the widest float dtype of this namespace and device (float64 but on
        devices without it), as scikit-learn answers whatever the input's precision."""
        wide = _max_precision_float_dtype(self.xp, self.device)
        return a if a.dtype == wide else self.xp.astype(a, wide)

    def take_columns(self, K, cols):
        return self.take(K, cols, axis=1)

    def zero_before(self, K, first):
        """K with ``K[i, j] = 0`` where ``j < first[i]`` (``first``: host integers)."""
        xp = self.xp
        before = xp.arange(K.shape[1], device=self.device)[None, :] < self.index(first)[:, None]
        return xp.where(before, xp.zeros((), dtype=K.dtype, device=self.device), K)

    def where_columns(self, K, keep):
        """K with the columns where ``keep`` (host booleans) is False set to 0."""
        xp = self.xp
        keep = xp.asarray(np.asarray(keep, dtype=bool), device=self.device)
        return xp.where(keep[None, :], K, xp.zeros((), dtype=K.dtype, device=self.device))


class Host(_Common):
    """numpy and scipy.sparse on the host, in float64 or float32."""

    xp = np_xp
    device = None
    #: the products run when called (not queued on a device)
    queued = False
    #: not an accelerator (see :attr:`Device.accelerated`)
    accelerated = False

    def __init__(self, dtype=np.float64):
        self.dtype = np.dtype(dtype)

    def same(self, other):
        return isinstance(other, Host) and other.dtype == self.dtype

    def take(self, X, rows, axis=0):
        """Rows (or, ``axis=1``, columns) ``rows`` of X; X may be sparse."""
        return X[rows] if axis == 0 else np.take(X, self.index(rows), axis=axis)

    def index(self, idx):
        return np.asarray(idx, dtype=np.int64)

    def asarray(self, a):
        return np.asarray(a, dtype=self.dtype)

    def zeros(self, shape):
        return np.zeros(shape, dtype=self.dtype)

    def host(self, a):
        """``a`` as a host float64 array (what the walk reads)."""
        return np.asarray(a, dtype=np.float64)

    def hosts(self, *arrays):
        """:meth:`host` of each array (None stays None), as :meth:`Device.hosts`."""
        return [None if a is None else self.host(a) for a in arrays]

    def concat(self, parts):
        if any(sp.issparse(p) for p in parts):
            return sp.vstack([sp.csr_matrix(p) for p in parts], format="csr")
        return np.concatenate(parts, axis=0)

    def squared_norms(self, X):
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1)).ravel().astype(self.dtype)
        return np.einsum("ij,ij->i", X, X)

    def variance(self, X):
        if sp.issparse(X):
            return float(X.multiply(X).mean() - X.mean() ** 2)
        return float(X.var())

    def __repr__(self):
        return f"Host({self.dtype})"


HOST = Host()


class Device(_Common):
    """An array namespace other than numpy (under dispatch), on one of its devices."""

    #: work may be queued on the device, and runs while the host goes on until a
    #: result is brought to the host (torch and CuPy on a GPU)
    queued = True

    def __init__(self, xp, device, dtype):
        self.xp = xp
        self.device = device
        self.dtype = dtype
        self._take = xp.take
        if _is_torch(xp):
            # array-api-compat's torch ``take`` first maps negative indices (torch's
            # index_select has none: pytorch issue 146211), three more kernels a call on
            # a GPU; the engine's indices are never negative
            import torch

            self._take = functools.partial(_index_select, torch)
        self._staging = staging_for(xp, device)

    @property
    def accelerated(self):
        """Whether the device is not a CPU (the standard names devices freely: torch's
        ``cpu``, array-api-strict's ``CPU_DEVICE``, JAX's ``TFRT_CPU_0``), which sets
        the block size that ``block_size="auto"`` picks."""
        return "cpu" not in str(self.device).lower()

    def same(self, other):
        return (
            isinstance(other, Device)
            and other.xp is self.xp
            and other.device == self.device
            and other.dtype == self.dtype
        )

    def take(self, X, rows, axis=0):
        """``xp.take`` of ``rows`` (host integers, or an index on this device; never
        negative) along ``axis``."""
        return self._take(X, self.index(rows), axis=axis)

    def index(self, idx):
        """Host integers as an index array on this device (one already there as is)."""
        if not isinstance(idx, (np.ndarray, list, tuple)):
            return idx
        return self.xp.asarray(np.asarray(idx, dtype=np.int64), device=self.device)

    def asarray(self, a):
        """A host array (or one of this namespace) on this device, in this dtype."""
        if isinstance(a, np.ndarray):
            return self.xp.asarray(
                np.ascontiguousarray(a, dtype=_numpy_dtype(self)), device=self.device
            )
        return self.xp.astype(a, self.dtype)

    def zeros(self, shape):
        return self.xp.zeros(shape, dtype=self.dtype, device=self.device)

    def host(self, a):
        out = to_numpy(a, np.float64)
        # the walk writes into what comes back; an array shared through DLPack may not
        # be writeable
        return out if out.flags.writeable else out.copy()

    def hosts(self, *arrays):
        """Host float64 views of arrays of as many rows (None stays None), brought in one
        transfer: each is a wait for the device and a copy, whose latency costs more
        than the bytes of a block's results. The views may be read-only; on a GPU they
        are views of a page-locked buffer (:class:`Staging`), valid until the call after
        the next."""
        present = [a for a in arrays if a is not None]
        if not present:
            return [None] * len(arrays)
        packed = self.xp.concat(present, axis=1)
        if self._staging is None:
            packed = to_numpy(packed, np.float64)
        else:
            packed = np.asarray(self._staging(packed), dtype=np.float64)
        out, col = [], 0
        for a in arrays:
            out.append(None if a is None else packed[:, col : col + a.shape[1]])
            col += 0 if a is None else a.shape[1]
        return out

    def concat(self, parts):
        return self.xp.concat(parts, axis=0)

    def squared_norms(self, X):
        return self.xp.sum(X * X, axis=1)

    def variance(self, X):
        return float(self.xp.var(X))

    def __repr__(self):
        return f"Device({self.xp.__name__}, {self.device}, {self.dtype})"


class Staging:
    """Page-locked host buffers that a GPU copies the results of a block into.

    A copy from device memory to ordinary (pageable) host memory goes through a buffer
    of the driver's, one piece at a time; a copy to page-locked ("pinned") memory goes
    straight there (on one H100's host: 8-12 GB/s to pageable memory, 28-48 GB/s to
    page-locked memory). Allocating page-locked memory is slow, so two buffers are kept
    and grown as needed, used in turn: what a call returns stays valid until the call
    after the next. The library's own calls make the copy (torch and CuPy have
    page-locked memory; the array API standard does not).

    ``empty(n, like)``: a flat host buffer of ``n`` entries of ``like``'s dtype;
    ``copy(src, dst)``: copy the device array ``src`` into ``dst`` (its shape), wait
    for it and return a numpy view of ``dst``.
    """

    def __init__(self, empty, copy):
        self._empty, self._copy = empty, copy
        self._buffers = [None, None]
        self._turn = 0

    def __call__(self, a):
        """A host numpy array of the device array ``a`` (2-d, C-contiguous)."""
        n = a.shape[0] * a.shape[1]
        turn = self._turn
        self._turn = 1 - turn
        flat = self._buffers[turn]
        if flat is None or flat.shape[0] < n or flat.dtype != a.dtype:
            flat = self._buffers[turn] = self._empty(max(n, 1 << 16), a)
        return self._copy(a, flat[:n].reshape(a.shape))


def staging_for(xp, device):
    """The :class:`Staging` of a namespace's device: torch on CUDA and CuPy, else None
    (the copy by DLPack, already at the speed of host memory on a CPU)."""
    if _is_torch(xp) and "cuda" in str(device):
        import torch

        return torch_staging(torch, pinned=True)
    if array_api_compat.is_cupy_namespace(xp):
        import cupyx

        return Staging(
            lambda n, like: cupyx.empty_pinned((n,), dtype=like.dtype),
            lambda src, dst: (src.get(out=dst), dst)[1],  # waits for the copy
        )
    return None


def torch_staging(torch, pinned):
    """:class:`Staging` for torch tensors (``pinned=False``: ordinary host memory, as
    on a CPU, where the copy needs no wait)."""

    def empty(n, like):
        return torch.empty(n, dtype=like.dtype, pin_memory=pinned)

    def copy(src, dst):
        dst.copy_(src, non_blocking=pinned)
        if pinned:
            torch.cuda.current_stream(src.device).synchronize()
        return dst.numpy()

    return Staging(empty, copy)


def _is_torch(xp):
    """torch, or its array-api-compat wrapper (scikit-learn's own copy included)."""
    return array_api_compat.is_torch_namespace(xp) or xp.__name__.endswith(
        "array_api_compat.torch"
    )


def _index_select(torch, x, index, axis):
    return torch.index_select(x, axis, index)


def _numpy_dtype(backend):
    return np.float32 if backend.dtype == backend.xp.float32 else np.float64


def on_host(a):
    """``a`` as given, or as a host numpy array when it is an array of another
    namespace under dispatch (what the linear estimators' compiled passes read)."""
    xp, _ = namespace(a)
    return a if xp is None else to_numpy(a)


def answers_in_namespace(method):
    """``method(self, X)``'s array in the namespace and on the device of ``X``: the
    linear estimators take such arrays under dispatch, compute on the host (their
    O(nnz) passes are compiled CPU code) and answer where the question came from."""

    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        xp, device = namespace(X)
        out = method(self, X, *args, **kwargs)
        return out if xp is None else move_to(out, xp=xp, device=device)

    return wrapper


def times_power_of_two(X, e):
    """``X 2^e`` (numpy, sparse or an array of another namespace; a copy), exact but for
    entries that leave the normal numbers of X's dtype; X itself when e is 0."""
    if e == 0:
        return X
    if sp.issparse(X):
        X = X.copy()
        X.data = np.ldexp(X.data, e)
        return X
    if isinstance(X, (np.ndarray, np.generic, float)):
        return np.ldexp(X, e)
    # multiplications by powers of two that a float holds, all one way, as ldexp would
    while e:
        step = max(-1000, min(1000, e))
        X = X * 2.0**step
        e -= step
    return X
