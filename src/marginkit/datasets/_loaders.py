"""Loaders of the real data sets of the papers' experiments, from their standard files.

Files are looked for in ``data_dir`` (the argument), else in the directory named by the
``MARGINKIT_DATA`` environment variable, else in ``~/marginkit_data``; each data set in
its own sub-directory (``mnist/``, ``usps/``, ``letter/``, ``ionosphere/``, ``house-votes/``,
``adult/``) or directly there. Nothing is
downloaded: a missing file raises an error that names it and says where it comes from.
"""

import gzip
import os
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

from ..formats import read_svmlight

_SOURCES = {
    "mnist": "MNIST (Y. LeCun, C. Cortes, C. Burges), the four IDX files of the MNIST page",
    "usps": "USPS digits as distributed with The Elements of Statistical Learning "
    "(Hastie, Tibshirani, Friedman), data page files zip.train.gz and zip.test.gz",
    "letter": "UCI Machine Learning Repository, Letter Recognition (D. Slate), "
    "letter-recognition.data",
    "ionosphere": "UCI Machine Learning Repository, Ionosphere (Johns Hopkins University "
    "Applied Physics Laboratory), ionosphere.data",
    "house-votes": "UCI Machine Learning Repository, Congressional Voting Records (1984), "
    "house-votes-84.data",
    "adult": "the LIBSVM data sets page (binary classification), files a9a and a9a.t: UCI "
    "Adult with J. Platt's 123 binary features",
}


def data_home(data_dir=None):
    """The directory the loaders read: ``data_dir``, $MARGINKIT_DATA or ~/marginkit_data."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get("MARGINKIT_DATA")
    if env:
        return Path(env).expanduser()
    return Path.home() / "marginkit_data"


def _find(data_dir, dataset, names):
    """The first of ``names`` found in data_dir/dataset or data_dir."""
    home = data_home(data_dir)
    tried = []
    for folder in (home / dataset, home):
        for name in names:
            path = folder / name
            tried.append(str(path))
            if path.is_file():
                return path
    raise FileNotFoundError(
        f"{names[0]} not found (looked for {', '.join(tried)}). It is part of "
        f"{_SOURCES[dataset]}; put it in {home / dataset} or point data_dir or the "
        "MARGINKIT_DATA environment variable at its directory."
    )


def _open(path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def _read_idx(path, expected_ndim):
    """An IDX file (unsigned bytes) as an array; ValueError naming the file if malformed."""
    try:
        with _open(path) as f:
            raw = f.read()
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot be read as an IDX file ({exc})") from exc
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes (bad magic number)")
    ndim = raw[3]
    if ndim != expected_ndim:
        raise ValueError(f"{path}: an IDX file with {ndim} dimensions, expected {expected_ndim}")
    header = 4 + 4 * ndim
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    if len(raw) != header + int(np.prod(dims)):
        raise ValueError(
            f"{path}: {len(raw) - header} data bytes for dimensions {dims} "
            f"(expected {int(np.prod(dims))}); the file is truncated or damaged"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def load_mnist(data_dir=None):
    """MNIST: 60000 training and 10000 test digits, 784 pixels valued 0..255.

    Reads ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
    ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz`` (or the same names
    without ``.gz``). The paper's kernel ``(1 + x . y / 255)^d`` takes the raw pixel
    values (Gentile 2001, section 4.1).

    Parameters
    ----------
    data_dir : path-like, optional
        See :func:`data_home`.

    Returns
    -------
    X_train : ndarray of shape (60000, 784), float64
    y_train : ndarray of shape (60000,), int64
    X_test : ndarray of shape (10000, 784), float64
    y_test : ndarray of shape (10000,), int64
    """
    X_train, y_train = _read_mnist(data_dir, "train")
    X_test, y_test = _read_mnist(data_dir, "t10k")
    return (
        X_train.astype(np.float64),
        y_train.astype(np.int64),
        X_test.astype(np.float64),
        y_test.astype(np.int64),
    )


def _read_mnist(data_dir, part):
    """The images (n, 784) and labels (n,) of one part of MNIST, ``"train"`` or
    ``"t10k"``, as the files' unsigned bytes."""
    which = {"train": "training", "t10k": "test"}[part]
    images = _read_idx(_find(data_dir, "mnist", _gz_or_not(f"{part}-images-idx3-ubyte")), 3)
    labels = _read_idx(_find(data_dir, "mnist", _gz_or_not(f"{part}-labels-idx1-ubyte")), 1)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"MNIST {which} files disagree: {images.shape[0]} images, {labels.shape[0]} labels"
        )
    return images.reshape(images.shape[0], -1), labels


def _gz_or_not(stem):
    return [stem + ".gz", stem]


def _read_table(path, delimiter, converters=None, n_columns=None):
    try:
        with _open(path) as f:
            lines = [ln for ln in f.read().decode("ascii").splitlines() if ln.strip()]
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read as a text table ({exc})") from exc
    rows = [ln.strip().split(delimiter) for ln in lines]
    widths = {len(r) for r in rows}
    if not rows or len(widths) != 1 or (n_columns and widths != {n_columns}):
        raise ValueError(
            f"{path}: rows of {sorted(widths)} fields, expected {n_columns} on every line"
        )
    return rows


def load_usps(data_dir=None):
    """USPS digits (the ESL copy): 7291 training and 2007 test images of 16 x 16 grey values.

    Reads ``zip.train.gz`` and ``zip.test.gz`` (or without ``.gz``): each line a digit
    label then 256 values in [-1, 1]. Used with a Gaussian kernel in Gentile (2001),
    Table 1.

    Returns
    -------
    X_train : ndarray of shape (7291, 256)
    y_train : ndarray of shape (7291,), int64
    X_test : ndarray of shape (2007, 256)
    y_test : ndarray of shape (2007,), int64
    """
    out = []
    for stem in ("zip.train", "zip.test"):
        path = _find(data_dir, "usps", [stem + ".gz", stem])
        rows = _read_table(path, None, n_columns=257)
        try:
            table = np.array(rows, dtype=np.float64)
        except ValueError as exc:
            raise ValueError(f"{path}: a field is not a number ({exc})") from exc
        labels = table[:, 0]
        if not np.all((labels == np.round(labels)) & (labels >= 0) & (labels <= 9)):
            raise ValueError(f"{path}: labels must be the digits 0..9")
        out += [table[:, 1:], labels.astype(np.int64)]
    return tuple(out)


def load_letter(data_dir=None):
    """UCI Letter Recognition: the first 16000 rows to train, the last 4000 to test.

    Reads ``letter-recognition.data`` (or ``.gz``): each line a capital letter then 16
    integer attributes in 0..15; 20000 lines. The split is that of Gentile (2001),
    Table 5.

    Returns
    -------
    X_train : ndarray of shape (16000, 16)
    y_train : ndarray of shape (16000,), the letters as str
    X_test : ndarray of shape (4000, 16)
    y_test : ndarray of shape (4000,)
    """
    path = _find(data_dir, "letter", ["letter-recognition.data.gz", "letter-recognition.data"])
    rows = _read_table(path, ",", n_columns=17)
    if len(rows) != 20000:
        raise ValueError(f"{path}: {len(rows)} rows, expected 20000")
    labels = np.array([r[0] for r in rows])
    if not np.all(np.char.isupper(labels)) or not np.all(np.char.str_len(labels) == 1):
        raise ValueError(f"{path}: the first field of every row must be a capital letter")
    try:
        X = np.array([r[1:] for r in rows], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: an attribute is not a number ({exc})") from exc
    return X[:16000], labels[:16000], X[16000:], labels[16000:]


def _check_rows(path, rows, expected):
    if len(rows) != expected:
        raise ValueError(f"{path}: {len(rows)} rows, expected {expected}")


def _pm_labels(path, labels, positive, negative):
    """+1 where ``labels == positive``, -1 where ``negative``; ValueError naming the file."""
    labels = np.asarray(labels)
    bad = ~np.isin(labels, [positive, negative])
    if bad.any():
        line = int(np.flatnonzero(bad)[0]) + 1
        raise ValueError(
            f"{path}: class {str(labels[bad][0])!r} on row {line}, expected {positive!r} or "
            f"{negative!r}"
        )
    return np.where(labels == positive, 1, -1).astype(np.int64)


def load_ionosphere(data_dir=None):
    """UCI Ionosphere: 351 radar returns, 34 continuous attributes, classes good / bad.

    Reads ``ionosphere.data`` (or ``.gz``): each line 34 comma-separated attributes in
    [-1, 1] then the class, ``g`` (good: the return shows structure in the
    ionosphere) or ``b`` (bad). The second attribute is 0 on every row, so the data
    effectively have 33 dimensions. There is no standard train / test split.

    Parameters
    ----------
    data_dir : path-like, optional
        See :func:`data_home`.

    Returns
    -------
    X : ndarray of shape (351, 34), float64
    y : ndarray of shape (351,), int64
        +1 for ``g`` (225 rows) and -1 for ``b`` (126 rows).
    """
    path = _find(data_dir, "ionosphere", ["ionosphere.data", "ionosphere.data.gz"])
    rows = _read_table(path, ",", n_columns=35)
    _check_rows(path, rows, 351)
    y = _pm_labels(path, [r[-1] for r in rows], "g", "b")
    try:
        X = np.array([r[:-1] for r in rows], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: an attribute is not a number ({exc})") from exc
    return X, y


_VOTES = {"y": 1.0, "n": -1.0, "?": 0.0}


def load_house_votes(data_dir=None):
    """UCI Congressional Voting Records: 435 members of the 1984 US House, 16 votes each.

    Reads ``house-votes-84.data`` (or ``.gz``): each line the party, ``democrat`` or
    ``republican``, then 16 comma-separated votes ``y``, ``n`` or ``?``. A vote is
    coded ``y`` -> +1, ``n`` -> -1 and ``?`` (did not vote or voted "present") -> 0,
    so that a missing vote contributes nothing to ``w . x``. There is no standard
    train / test split.

    Parameters
    ----------
    data_dir : path-like, optional
        See :func:`data_home`.

    Returns
    -------
    X : ndarray of shape (435, 16), float64
        Values -1.0, 0.0 and +1.0.
    y : ndarray of shape (435,), int64
        +1 for ``democrat`` (267 rows) and -1 for ``republican`` (168 rows).
    """
    path = _find(data_dir, "house-votes", ["house-votes-84.data", "house-votes-84.data.gz"])
    rows = _read_table(path, ",", n_columns=17)
    _check_rows(path, rows, 435)
    y = _pm_labels(path, [r[0] for r in rows], "democrat", "republican")
    X = np.empty((len(rows), 16), dtype=np.float64)
    for i, row in enumerate(rows):
        for j, vote in enumerate(row[1:]):
            if vote not in _VOTES:
                raise ValueError(f"{path}: vote {vote!r} on row {i + 1}, expected 'y', 'n' or '?'")
            X[i, j] = _VOTES[vote]
    return X, y


_ADULT_ROWS = {"a9a": 32561, "a9a.t": 16281}
_ADULT_FEATURES = 123


def _read_svmlight(path, expected_rows):
    """A LIBSVM file of +-1 labels with 123 features as (CSR float64, int64 labels)."""
    try:
        X, y = read_svmlight(path, n_features=_ADULT_FEATURES, zero_based=False)
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"{path}: cannot be read as a LIBSVM file with {_ADULT_FEATURES} features ({exc})"
        ) from exc
    if X.shape[0] != expected_rows:
        raise ValueError(f"{path}: {X.shape[0]} rows, expected {expected_rows}")
    bad = (y != 1) & (y != -1)
    if bad.any():
        line = int(np.flatnonzero(bad)[0]) + 1
        raise ValueError(f"{path}: label {y[bad][0]:g} on row {line}, expected -1 or +1")
    # the reader's indices are 32-bit for a matrix this small (some solvers reject 64-bit)
    return X, y.astype(np.int64)


@validate_params(
    {"n_train": [Interval(Integral, 1, _ADULT_ROWS["a9a"], closed="both"), None]},
    prefer_skip_nested_validation=True,
)
def load_adult(data_dir=None, n_train=None):
    """UCI Adult in the LIBSVM a9a form: 32561 training and 16281 test rows, 123 features.

    Reads ``a9a.gz`` and ``a9a.t.gz`` (or the same names without ``.gz``), LIBSVM
    sparse files with 1-based indices. Platt's preprocessing turns the 14 census
    attributes into 123 binary features (continuous ones quantised into ranges,
    categorical ones one-hot), so every stored value is 1. The test file never uses
    feature 123; both matrices are given 123 columns. The label is whether the
    income exceeds $50K a year.

    Parameters
    ----------
    data_dir : path-like, optional
        See :func:`data_home`.
    n_train : int in [1, 32561] or None, default=None
        Keep only the first ``n_train`` training rows (in file order), as in the
        "adult-1k" ... "adult-full" training sets of size-scaling experiments; None
        keeps all 32561. The test set is always the whole of ``a9a.t``.

    Returns
    -------
    X_train : scipy.sparse CSR matrix of shape (n_train, 123), float64
    y_train : ndarray of shape (n_train,), int64
        +1 for income > $50K (7841 of the 32561 rows), -1 otherwise (24720).
    X_test : scipy.sparse CSR matrix of shape (16281, 123), float64
    y_test : ndarray of shape (16281,), int64
        +1: 3846 rows, -1: 12435 rows.
    """
    out = []
    for stem, rows in _ADULT_ROWS.items():
        path = _find(data_dir, "adult", [stem + ".gz", stem])
        out += _read_svmlight(path, rows)
    X_train, y_train, X_test, y_test = out
    if n_train is not None:
        X_train, y_train = X_train[:n_train], y_train[:n_train]
    return X_train, y_train, X_test, y_test
