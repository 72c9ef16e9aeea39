"""An endless, seeded stream of deformed MNIST training digits.

Loosli, Canu and Bottou (2007, "Training invariant support vector machines using
selective sampling", in *Large Scale Kernel Machines*, MIT Press) trained on an
unbounded supply of MNIST digits, each a training digit moved by a pseudo-random
smooth deformation and translation; the first eight million of them became the MNIST8M
data set (their program is InfiMNIST, in C). The deformations here are
the elastic distortions of Simard, Steinkraus and Platt (2003, "Best practices for
convolutional neural networks applied to visual document analysis", ICDAR, section
2): a displacement field with components drawn uniformly in [-1, 1] at every pixel,
convolved with a Gaussian of standard deviation ``sigma`` pixels, multiplied by
``alpha``, the image resampled with bilinear interpolation; composed with a small
random affine map (rotation, scale, shear, translation) as Simard et al. also used.
InfiMNIST itself combines precomputed tangent vectors of the training digits with a
fixed pool of 1522 precomputed fields; here every digit gets a field of its own and is
resampled.

Why written here: no maintained, permissively licensed Python library makes such digits
in batches of thousands at tens of thousands a second on one core (image-augmentation
libraries work an image at a time, and ``scipy.ndimage`` takes about 25 us a digit to
smooth the two fields of a stack and 45 us to resample it, against a budget of 50 us for
the whole). One compiled kernel (numba) smooths both fields of a digit as two 28 x 28
matrix products, composes them with the affine map and resamples, a digit at a time; the
random numbers come from NumPy. Tests compare it with ``scipy.ndimage.gaussian_filter``
and ``scipy.ndimage.map_coordinates``.

Seeding: the stream is cut into blocks of 1000 rows. Block ``k`` draws its deformations
from ``numpy.random.SeedSequence(entropy, spawn_key=(1, k))`` and pass ``e`` (rows
``e * n`` to ``(e + 1) * n - 1``, n = 60000 training digits) orders its source digits by
a permutation drawn from ``SeedSequence(entropy, spawn_key=(0, e))``. Row i therefore
depends only on the seed and on i: the stream is the same, bit for bit, whatever
``chunk_size``, and row i is the same whether the stream is read up to it or not. The
kernel makes no BLAS call, so the rows do not depend on the BLAS kernel either.
"""

import math
import os
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.ndimage import gaussian_filter1d
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, validate_params

from .._core import NUMBA_OPTS
from ._loaders import _read_mnist

#: Rows per block: one seed per block, so that the stream does not depend on chunk_size
BLOCK = 1000
#: Digits whose fields are drawn and deformed together inside a block (a cache-sized
#: batch; the draws are the same whatever its value)
_BATCH = 100
_SIDE = 28
#: The Gaussian is cut at this many standard deviations (scipy.ndimage's default)
_TRUNCATE = 4.0
_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.uint8))


@validate_params(
    {
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "max_rotation": [Interval(Real, 0, 180, closed="both")],
        "max_scale": [Interval(Real, 0, 1, closed="left")],
        "max_shear": [Interval(Real, 0, None, closed="left")],
        "max_shift": [Interval(Real, 0, None, closed="left")],
        "include_originals": ["boolean"],
        "random_state": ["random_state"],
        "data_dir": [str, os.PathLike, None],
        "dtype": "no_validation",  # checked below: float64, float32 or uint8
    },
    prefer_skip_nested_validation=True,
)
def iter_deformed_mnist(
    chunk_size=10000,
    *,
    n_samples=None,
    alpha=10.0,
    sigma=4.0,
    max_rotation=10.0,
    max_scale=0.1,
    max_shear=0.1,
    max_shift=1.0,
    include_originals=False,
    random_state=None,
    data_dir=None,
    dtype=np.float64,
):
    """Deformed MNIST training digits, chunk after chunk, without end (InfiMNIST-like).

    Every row is an MNIST training digit moved by its own random elastic deformation
    (Simard, Steinkraus and Platt 2003) and small random affine map, as in the infinite
    MNIST of Loosli, Canu and Bottou (2007). The pixel at ``p = (row, column)`` takes
    the source digit's value, bilinearly interpolated (zero outside the image), at::

        c + A (p - c) + t + alpha * (G_sigma * U)(p)

    where ``c = (13.5, 13.5)`` is the image's centre, ``A = R(theta) S(shear) / scale``
    (a rotation by ``theta``, uniform in +-``max_rotation`` degrees, a shear
    ``[[1, shear], [0, 1]]`` with ``shear`` uniform in +-``max_shear``, and ``scale``
    uniform in ``1 +- max_scale``), ``t`` a shift with each coordinate uniform in
    +-``max_shift`` pixels, and ``U`` two fields of independent values uniform in
    [-1, 1], one per coordinate, convolved with a Gaussian of standard deviation
    ``sigma`` pixels (cut at 4 ``sigma``, the field taken as zero outside the image, as
    ``scipy.ndimage.gaussian_filter(U, sigma, mode="constant")``). Values are rounded to
    the nearest integer (halves up), so that rows hold whole grey levels in 0..255 like
    the originals and :func:`load_mnist`.

    The source digits are taken pass after pass through the 60000 training digits, each
    pass in its own seeded random order, so every run of 60000 rows from a multiple of
    60000 holds each training digit once (and the classes in MNIST's proportions).

    Parameters
    ----------
    chunk_size : int >= 1, default=10000
        Rows per chunk (the last one is shorter when ``n_samples`` is not a multiple).
    n_samples : int >= 1 or None, default=None
        Stop after exactly this many rows; None never stops.
    alpha : float >= 0, default=10.0
        Scale of the elastic displacement, in pixels per unit of smoothed field. With
        ``sigma=4`` the default moves each coordinate of a pixel in the middle of the
        image by 0.41 pixel (standard deviation), more than 1.3 pixels at one pixel in a
        thousand. Simard et al.'s alpha = 34 (1.4 pixels) is strong: a nearest
        neighbour among the 60000 originals gives the source's label to 82% of such
        digits (75% with the default affine maps added), against 99.9% with the
        default alpha alone, 97% with the affine maps alone and 95% with both (2000
        digits each). 0 turns the elastic part off.
    sigma : float > 0, default=4.0
        Standard deviation, in pixels, of the Gaussian that smooths the fields (Simard
        et al.'s value for MNIST): the larger, the more the displacement moves whole
        strokes rather than single pixels.
    max_rotation : float in [0, 180], default=10.0
        Largest rotation, in degrees.
    max_scale : float in [0, 1), default=0.1
        Largest relative change of size (a scale in ``[1 - max_scale, 1 + max_scale]``).
    max_shear : float >= 0, default=0.1
        Largest shear factor.
    max_shift : float >= 0, default=1.0
        Largest translation along each axis, in pixels (sub-pixel amounts included).
    include_originals : bool, default=False
        Make the first pass (the first 60000 rows) the training digits undeformed, in
        that pass's random order, as the first 60000 training examples of InfiMNIST and
        MNIST8M are. The rows after it are the same as without. The default deforms
        every row: :func:`load_mnist` gives the originals.
    random_state : int, RandomState instance or None, default=None
        The seed of the whole stream. An int gives the same stream on every call; a
        RandomState is drawn from once, for a seed; None takes a fresh seed from the
        operating system.
    data_dir : path-like, optional
        Where the MNIST training files are: see :func:`data_home`. The test files are
        not needed.
    dtype : {np.float64, np.float32, np.uint8}, default=np.float64
        Type of the rows of ``X`` (their values are whole numbers in any case).

    Returns
    -------
    chunks : generator of (X, y)
        ``X`` of shape (chunk, 784) and ``dtype``, ``y`` of shape (chunk,), int64: the
        label of each row's source digit.

    Raises
    ------
    FileNotFoundError
        When an MNIST training file is missing, as :func:`load_mnist` (raised by this
        call, not at the first chunk).

    Notes
    -----
    Row i depends only on the seed and on i: the same ``random_state`` gives the same
    rows, bit for bit, whatever ``chunk_size`` (module docstring). The rows are
    computed in blocks of 1000; besides the chunk being filled, the generator holds the
    training digits as bytes (47 MB), one block (0.8 MB), one pass's order (0.5 MB)
    and the fields of 100 digits (1.3 MB).

    About 34000 digits a second on one core of an AMD EPYC server
    (``benchmarks/bench_deformed_mnist.py``), the first call's compilation of the
    kernel aside (numba caches it).

    Examples
    --------
    >>> from marginkit.datasets import iter_deformed_mnist
    >>> for X, y in iter_deformed_mnist(5000, n_samples=20000, random_state=0):
    ...     clf.partial_fit(X, y, classes=range(10))  # doctest: +SKIP
    """
    try:
        resolved = None if dtype is None else np.dtype(dtype)  # np.dtype(None) is float64
    except TypeError:
        resolved = None
    if resolved is None or resolved not in _DTYPES:
        raise InvalidParameterError(
            "The 'dtype' parameter of iter_deformed_mnist must be one of np.float64, "
            f"np.float32 or np.uint8. Got {dtype!r} instead."
        )
    images, labels = _read_mnist(data_dir, "train")
    spec = _Deformation(
        alpha=float(alpha),
        max_rotation=math.radians(max_rotation),
        max_scale=float(max_scale),
        max_shear=float(max_shear),
        max_shift=float(max_shift),
        smoothing=smoothing_matrix(float(sigma)),
    )
    return _chunks(
        images,
        labels.astype(np.int64),
        spec,
        _entropy(random_state),
        chunk_size,
        n_samples,
        include_originals,
        resolved,
    )


class _Deformation(NamedTuple):
    """The parameters of the deformations, in the kernel's units: radians, and the
    smoothing as the matrix of :func:`smoothing_matrix`."""

    alpha: float
    max_rotation: float
    max_scale: float
    max_shear: float
    max_shift: float
    smoothing: np.ndarray


def _entropy(random_state):
    """The seed of a stream: an int as itself, 128 bits drawn from a RandomState, fresh
    entropy for None."""
    if random_state is None:
        return np.random.SeedSequence().entropy
    if isinstance(random_state, Integral):
        return int(random_state)
    rs = check_random_state(random_state)
    return [int(v) for v in rs.randint(0, 2**32, size=4, dtype=np.uint64)]


def smoothing_matrix(sigma, side=_SIDE):
    """K such that ``K @ F @ K.T`` is ``scipy.ndimage.gaussian_filter(F, sigma,
    mode="constant", truncate=4.0)`` for a side x side field F."""
    return gaussian_filter1d(np.eye(side), sigma, axis=0, mode="constant", truncate=_TRUNCATE)


def _generator(entropy, *key):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))


def pass_order(entropy, e, n):
    """The source digits of pass e: a permutation of the n training digits."""
    return _generator(entropy, 0, e).permutation(n)


def affine_maps(draws, spec):
    """The maps ``(A00, A01, A10, A11, t_row, t_col)`` from a block's (m, 5) uniform
    draws in [0, 1): rotation, scale, shear, row shift, column shift."""
    u = 2.0 * draws - 1.0
    theta = u[:, 0] * spec.max_rotation
    scale = 1.0 + u[:, 1] * spec.max_scale
    shear = u[:, 2] * spec.max_shear
    cos, sin = np.cos(theta), np.sin(theta)
    maps = np.empty((draws.shape[0], 6))
    maps[:, 0] = cos / scale
    maps[:, 1] = (cos * shear - sin) / scale
    maps[:, 2] = sin / scale
    maps[:, 3] = (sin * shear + cos) / scale
    maps[:, 4] = u[:, 3] * spec.max_shift
    maps[:, 5] = u[:, 4] * spec.max_shift
    return maps


def deformed_block(images, sources, entropy, k, spec):
    """Block k of the stream: the deformed ``images[sources]`` as (len(sources), 784)
    bytes.

    Draws, in order, from ``SeedSequence(entropy, spawn_key=(1, k))``: an (m, 5) array
    of uniforms for the affine maps, then m x 2 x 28 x 28 uniforms for the fields.
    """
    rng = _generator(entropy, 1, k)
    m = sources.shape[0]
    maps = affine_maps(rng.random((m, 5)), spec)
    out = np.empty((m, _SIDE * _SIDE), dtype=np.uint8)
    fields = np.empty((_BATCH, 2, _SIDE, _SIDE))
    for a in range(0, m, _BATCH):
        b = min(a + _BATCH, m)
        rng.random(out=fields[: b - a])
        deform(
            images, sources[a:b], maps[a:b], fields[: b - a], spec.smoothing, spec.alpha, out[a:b]
        )
    return out


def _chunks(images, labels, spec, entropy, chunk_size, n_samples, include_originals, dtype):
    n = images.shape[0]
    done = 0
    block_k, block = -1, None
    order_e, order = -1, None
    while n_samples is None or done < n_samples:
        m = chunk_size if n_samples is None else min(chunk_size, n_samples - done)
        X = np.empty((m, _SIDE * _SIDE), dtype=dtype)
        y = np.empty(m, dtype=np.int64)
        filled = 0
        while filled < m:
            i = done + filled
            k, offset = divmod(i, BLOCK)
            if k != block_k:
                start = k * BLOCK
                rows = np.arange(start, start + BLOCK)
                sources = np.empty(BLOCK, dtype=np.int64)
                # a block straddles two passes when n is not a multiple of BLOCK
                for e in map(int, np.unique(rows // n)):
                    if e != order_e:
                        order_e, order = e, pass_order(entropy, e, n)
                    in_e = rows // n == e
                    sources[in_e] = order[rows[in_e] % n]
                first = min(BLOCK, n - start) if include_originals and start < n else 0
                if first == BLOCK:
                    pixels = images[sources]
                else:
                    pixels = deformed_block(images, sources, entropy, k, spec)
                    pixels[:first] = images[sources[:first]]
                block_k, block = k, (pixels, sources)
            take = min(BLOCK - offset, m - filled)
            X[filled : filled + take] = block[0][offset : offset + take]
            y[filled : filled + take] = labels[block[1][offset : offset + take]]
            filled += take
        done += m
        yield X, y


@njit(**NUMBA_OPTS)
def deform(images, sources, maps, fields, smoothing, alpha, out):
    """Deform ``images[sources[b]]`` into ``out[b]`` for every b (Simard et al. 2003,
    section 2, with an affine map).

    Parameters
    ----------
    images : (n, 784) uint8
        The training digits, 28 x 28 row by row.
    sources : (m,) int64
        The digit each output row deforms.
    maps : (m, 6) float64
        ``A00, A01, A10, A11, t_row, t_col`` of each row (:func:`affine_maps`).
    fields : (m, 2, 28, 28) float64
        Uniforms in [0, 1); ``2 u - 1`` (exactly NumPy's ``uniform(-1, 1)``) are the
        unsmoothed row and column displacements.
    smoothing : (28, 28) float64
        K of :func:`smoothing_matrix`: a field F is smoothed as ``K F K^T``.
    alpha : float
        Scale of the smoothed field.
    out : (m, 784) uint8
        The deformed digits, bilinear interpolation with zero outside the image,
        rounded half up.
    """
    side = smoothing.shape[0]
    centre = (side - 1) / 2.0
    half = np.empty((side, side))
    disp = np.empty((2, side, side))
    for b in range(sources.shape[0]):
        for axis in range(2):
            # half = K (2U - 1), then disp = half K^T
            for i in range(side):
                for j in range(side):
                    half[i, j] = 0.0
                for k in range(side):
                    kik = smoothing[i, k]
                    for j in range(side):
                        half[i, j] += kik * (2.0 * fields[b, axis, k, j] - 1.0)
            for i in range(side):
                for j in range(side):
                    disp[axis, i, j] = 0.0
                for k in range(side):
                    hik = half[i, k]
                    for j in range(side):
                        disp[axis, i, j] += hik * smoothing[j, k]
        a00, a01, a10, a11 = maps[b, 0], maps[b, 1], maps[b, 2], maps[b, 3]
        t_row, t_col = maps[b, 4], maps[b, 5]
        src = images[sources[b]]
        for i in range(side):
            di = i - centre
            for j in range(side):
                dj = j - centre
                r = centre + a00 * di + a01 * dj + t_row + alpha * disp[0, i, j]
                c = centre + a10 * di + a11 * dj + t_col + alpha * disp[1, i, j]
                r0 = math.floor(r)
                c0 = math.floor(c)
                value = 0.0
                if not (-1.0 <= r0 < side and -1.0 <= c0 < side):
                    out[b, i * side + j] = 0  # all four neighbours outside the image
                    continue
                wr = r - r0
                wc = c - c0
                ir = int(r0)
                ic = int(c0)
                if 0 <= ir < side:
                    if 0 <= ic < side:
                        value += (1.0 - wr) * (1.0 - wc) * src[ir * side + ic]
                    if 0 <= ic + 1 < side:
                        value += (1.0 - wr) * wc * src[ir * side + ic + 1]
                if 0 <= ir + 1 < side:
                    if 0 <= ic < side:
                        value += wr * (1.0 - wc) * src[(ir + 1) * side + ic]
                    if 0 <= ic + 1 < side:
                        value += wr * wc * src[(ir + 1) * side + ic + 1]
                out[b, i * side + j] = np.uint8(min(math.floor(value + 0.5), 255.0))
