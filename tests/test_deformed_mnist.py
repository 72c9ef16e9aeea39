"""iter_deformed_mnist: the stream's shape, seeding and labels on the real MNIST files
(skipped without them), the compiled deformation against scipy.ndimage, and its errors."""

import gzip
import math
from itertools import islice

import numpy as np
import pytest
from conftest import SHARED_DATA
from scipy.ndimage import gaussian_filter, map_coordinates
from sklearn.utils._param_validation import InvalidParameterError

from marginkit.datasets import iter_deformed_mnist
from marginkit.datasets._deformed import BLOCK
from marginkit.datasets._loaders import _read_mnist

TRAIN_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")
#: Every deformation off: the rows are the source digits
IDENTITY = dict(alpha=0.0, max_rotation=0.0, max_scale=0.0, max_shear=0.0, max_shift=0.0)


def _has_mnist_training_files(home):
    return any(
        all(
            (folder / stem).is_file() or (folder / (stem + ".gz")).is_file()
            for stem in TRAIN_FILES
        )
        for folder in (home / "mnist", home)
    )


@pytest.fixture(scope="module")
def mnist(tmp_path_factory):
    """(data directory, training images as bytes, labels) of the real MNIST, the test
    skipped with the reason when its files are absent. The directory holds the training
    files uncompressed, which every call of the stream reads in a tenth of the time."""
    if not _has_mnist_training_files(SHARED_DATA):
        pytest.skip(f"MNIST training files not found under {SHARED_DATA} (set MARGINKIT_DATA)")
    images, labels = _read_mnist(SHARED_DATA, "train")
    folder = tmp_path_factory.mktemp("mnist")
    for stem, array in zip(TRAIN_FILES, (images.reshape(-1, 28, 28), labels), strict=True):
        _write_idx(folder / stem, array)
    return folder, images, labels.astype(np.int64)


def _write_idx(path, array, compress=False):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def rows(data_dir, n_samples, chunk_size=BLOCK, **kw):
    chunks = list(iter_deformed_mnist(chunk_size, n_samples=n_samples, data_dir=data_dir, **kw))
    return np.vstack([X for X, _ in chunks]), np.concatenate([y for _, y in chunks])


def pass_order(seed, e, n):
    """The documented order of pass e's source digits."""
    ss = np.random.SeedSequence(seed, spawn_key=(0, e))
    return np.random.Generator(np.random.PCG64(ss)).permutation(n)


def test_shapes_dtypes_and_values(mnist):
    data_dir, _, _ = mnist
    chunks = list(iter_deformed_mnist(1500, n_samples=2500, random_state=0, data_dir=data_dir))
    assert [X.shape for X, _ in chunks] == [(1500, 784), (1000, 784)]
    for X, y in chunks:
        assert X.dtype == np.float64 and y.dtype == np.int64 and y.shape == (X.shape[0],)
        assert X.min() == 0 and X.max() == 255
        np.testing.assert_array_equal(X, np.round(X))  # whole grey levels, as the originals
        assert set(np.unique(y)) <= set(range(10))
    X64 = chunks[0][0]
    for dtype in (np.float32, np.uint8):
        X, _ = next(iter_deformed_mnist(1500, random_state=0, data_dir=data_dir, dtype=dtype))
        assert X.dtype == dtype
        np.testing.assert_array_equal(X.astype(np.float64), X64)


def test_labels_are_those_of_the_source_digits(mnist):
    data_dir, images, labels = mnist
    X, y = rows(data_dir, 1200, random_state=3, **IDENTITY)
    order = pass_order(3, 0, 60000)[:1200]
    np.testing.assert_array_equal(y, labels[order])
    np.testing.assert_array_equal(X, images[order])  # no deformation: the sources


@pytest.fixture(scope="module")
def reference_rows(mnist):
    """The first 6000 rows of seed 7, read in blocks of 1000."""
    data_dir, _, _ = mnist
    return rows(data_dir, 6000, chunk_size=1000, random_state=7)


@pytest.mark.parametrize("chunk_size", [3000, 10000, 777])
def test_the_stream_does_not_depend_on_chunk_size(mnist, reference_rows, chunk_size):
    X, y = rows(mnist[0], 6000, chunk_size=chunk_size, random_state=7)
    np.testing.assert_array_equal(X, reference_rows[0])
    np.testing.assert_array_equal(y, reference_rows[1])


def test_a_row_does_not_depend_on_the_rows_before_it(mnist, reference_rows):
    """Two reads of the same seed, the second stopped early, agree bit for bit."""
    X, _ = rows(mnist[0], 2500, chunk_size=2500, random_state=7)
    np.testing.assert_array_equal(X, reference_rows[0][:2500])


def test_seeds(mnist):
    data_dir, _, _ = mnist
    X0, y0 = rows(data_dir, 1000, random_state=0)
    X1, y1 = rows(data_dir, 1000, random_state=1)
    assert (y0 != y1).mean() > 0.8 and (X0 != X1).any(axis=1).all()
    X_none, _ = rows(data_dir, 1000, random_state=None)
    X_none2, _ = rows(data_dir, 1000, random_state=None)
    assert (X_none != X_none2).any(axis=1).all()
    Xa, _ = rows(data_dir, 1000, random_state=np.random.RandomState(5))
    Xb, _ = rows(data_dir, 1000, random_state=np.random.RandomState(5))
    np.testing.assert_array_equal(Xa, Xb)
    # the same seed with another alpha: the same sources, other pixels
    X_alpha, y_alpha = rows(data_dir, 1000, random_state=0, alpha=5.0)
    np.testing.assert_array_equal(y_alpha, y0)
    assert (X_alpha != X0).any(axis=1).mean() > 0.99


def test_n_samples_is_exact_and_none_is_endless(mnist):
    data_dir, _, _ = mnist
    sizes = [len(y) for _, y in iter_deformed_mnist(1000, n_samples=2500, data_dir=data_dir)]
    assert sizes == [1000, 1000, 500]
    sizes = [len(y) for _, y in iter_deformed_mnist(4000, n_samples=1, data_dir=data_dir)]
    assert sizes == [1]
    stream = iter_deformed_mnist(700, random_state=0, data_dir=data_dir)
    assert [len(y) for _, y in islice(stream, 4)] == [700] * 4
    assert len(next(stream)[1]) == 700  # still going


def test_deformations_are_small(mnist):
    """A nearest neighbour among the sources and 6000 other training digits gives 92% or
    more of the deformed digits their source's label (95% over all 60000 originals,
    measured on 2000 digits), and a deformed digit is nearer its source than almost
    every digit of another class."""
    data_dir, images, labels = mnist
    X, y = rows(data_dir, 300, random_state=11)
    sources = pass_order(11, 0, 60000)[:300]
    others = np.setdiff1d(np.random.default_rng(0).choice(60000, 6000, replace=False), sources)
    ref = np.concatenate([sources, others])
    R = images[ref].astype(np.float64)
    d2 = (X**2).sum(1)[:, None] - 2 * X @ R.T + (R**2).sum(1)[None, :]
    nearest = d2.argmin(axis=1)
    assert (labels[ref][nearest] == y).mean() >= 0.92
    # closer to its source than to 95% of the digits of other classes, nearly always
    to_source = d2[np.arange(300), np.arange(300)]
    other = labels[ref][None, :] != y[:, None]
    beaten = ((d2 > to_source[:, None]) & other).sum(1) / other.sum(1)
    assert (beaten > 0.95).mean() >= 0.95
    # and they are deformed: every row differs from its source
    assert (X != images[sources]).any(axis=1).all()


def reference_block(images, seed, k, sources, n_rows, alpha, sigma, rot, scale, shear, shift):
    """The first ``n_rows`` rows of block k, unrounded, straight from the definition:
    scipy's Gaussian filter and bilinear interpolation, the draws as documented."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(1, k))))
    u = rng.uniform(-1.0, 1.0, size=(BLOCK, 5))
    fields = rng.uniform(-1.0, 1.0, size=(n_rows, 2, 28, 28))
    out = np.empty((n_rows, 784))
    centre = 13.5
    p = np.stack(np.meshgrid(np.arange(28.0), np.arange(28.0), indexing="ij")) - centre
    for b in range(n_rows):
        theta = math.radians(rot) * u[b, 0]
        s, sh = 1.0 + scale * u[b, 1], shear * u[b, 2]
        R = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
        A = R @ np.array([[1.0, sh], [0.0, 1.0]]) / s
        d = gaussian_filter(fields[b], sigma=(0, sigma, sigma), mode="constant", truncate=4.0)
        coords = centre + np.einsum("ij,jrc->irc", A, p) + shift * u[b, 3:, None, None]
        coords += alpha * d
        img = images[sources[b]].reshape(28, 28).astype(np.float64)
        out[b] = map_coordinates(img, coords, order=1, mode="grid-constant").ravel()
    return out


@pytest.mark.parametrize(
    "params",
    [
        dict(alpha=10.0, sigma=4.0, rot=10.0, scale=0.1, shear=0.1, shift=1.0),
        dict(alpha=34.0, sigma=3.0, rot=30.0, scale=0.3, shear=0.5, shift=4.0),
    ],
    ids=["defaults", "strong"],
)
def test_the_compiled_deformation_equals_scipy(mnist, params):
    """Rows 1000-1039 (block 1) against the definition computed with scipy.ndimage,
    rounded half up, wherever the unrounded value is not within 1e-6 of a half."""
    data_dir, images, _ = mnist
    kw = dict(
        alpha=params["alpha"],
        sigma=params["sigma"],
        max_rotation=params["rot"],
        max_scale=params["scale"],
        max_shear=params["shear"],
        max_shift=params["shift"],
    )
    X, _ = rows(data_dir, 1040, random_state=9, **kw)
    sources = pass_order(9, 0, 60000)[1000:1040]
    ref = reference_block(images, 9, 1, sources, 40, **params)
    clear = np.abs(ref - np.floor(ref) - 0.5) > 1e-6
    assert clear.mean() > 0.99
    np.testing.assert_array_equal(X[1000:][clear], np.floor(ref + 0.5)[clear])


def _fake_mnist(folder, n):
    """Training files of n random 'digits' (blobs of ink on zeros), labels i mod 10."""
    rng = np.random.default_rng(n)
    images = np.zeros((n, 28, 28), dtype=np.uint8)
    images[:, 8:20, 10:18] = rng.integers(0, 256, size=(n, 12, 8), dtype=np.uint8)
    labels = (np.arange(n) % 10).astype(np.uint8)
    for stem, array in zip(TRAIN_FILES, (images, labels), strict=True):
        _write_idx(folder / (stem + ".gz"), array, compress=True)
    return images.reshape(n, -1), labels.astype(np.int64)


def test_passes_and_originals_on_a_small_training_set(tmp_path):
    """With 1500 training digits (passes that end inside a block): each pass holds every
    digit once; include_originals makes the first pass the originals and leaves the
    rows after it as they were. Needs no real data."""
    images, labels = _fake_mnist(tmp_path, 1500)
    X, y = rows(tmp_path, 4500, chunk_size=1000, random_state=2)
    for e in range(3):
        order = pass_order(2, e, 1500)
        np.testing.assert_array_equal(y[e * 1500 : (e + 1) * 1500], labels[order])
    Xo, yo = rows(tmp_path, 4500, chunk_size=1234, random_state=2, include_originals=True)
    np.testing.assert_array_equal(yo, y)
    np.testing.assert_array_equal(Xo[:1500], images[pass_order(2, 0, 1500)])
    np.testing.assert_array_equal(Xo[1500:], X[1500:])
    assert (X[:1500] != Xo[:1500]).any(axis=1).mean() > 0.99


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(chunk_size=0), r"'chunk_size' parameter .* must be an int in the range \[1, inf\)"),
        (dict(chunk_size=2.5), r"'chunk_size' parameter .* must be an int"),
        (dict(n_samples=0), r"'n_samples' parameter .* in the range \[1, inf\) or None"),
        (dict(alpha=-1.0), r"'alpha' parameter .* must be a float in the range \[0.0, inf\)"),
        (dict(sigma=0.0), r"'sigma' parameter .* must be a float in the range \(0.0, inf\)"),
        (dict(max_rotation=181), r"'max_rotation' parameter .* range \[0.0, 180.0\]"),
        (dict(max_scale=1.0), r"'max_scale' parameter .* range \[0.0, 1.0\)"),
        (dict(max_shear=-0.1), r"'max_shear' parameter .* range \[0.0, inf\)"),
        (dict(max_shift=-1), r"'max_shift' parameter .* range \[0.0, inf\)"),
        (dict(include_originals=1), r"'include_originals' parameter .* instance of 'bool'"),
        (dict(random_state="seed"), r"'random_state' parameter .*RandomState' or None"),
        (dict(data_dir=3), r"'data_dir' parameter .* 'str', an instance of 'os.PathLike' or"),
        (dict(dtype=np.int32), r"'dtype' parameter .* np.float64, np.float32 or np.uint8\. Got"),
        (dict(dtype="pixels"), r"'dtype' parameter .* Got 'pixels' instead"),
        (dict(dtype=None), r"'dtype' parameter .* Got None instead"),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else "",
)
def test_invalid_parameters(tmp_path, kw, match):
    """Raised by the call itself, before any file is read."""
    with pytest.raises(InvalidParameterError, match=match):
        iter_deformed_mnist(**{"data_dir": tmp_path, **kw})


def test_missing_files_raise_load_mnists_error_at_the_call(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.gz not found.*MNIST"):
        iter_deformed_mnist(data_dir=tmp_path)
