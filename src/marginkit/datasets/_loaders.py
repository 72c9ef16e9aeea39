"""Loaders of the real data sets of the papers' experiments, from their standard files.

Files are looked for in ``data_dir`` (the argument), else in the directory named by the
``MARGINKIT_DATA`` environment variable, else in ``~/marginkit_data``; each data set in
its own sub-directory (``mnist/``, ``usps/``, ``letter/``) or directly there. Nothing is
downloaded: a missing file raises an error that names it and says where it comes from.
"""

import gzip
import os
from pathlib import Path

import numpy as np

_SOURCES = {
    "mnist": "MNIST (Y. LeCun, C. Cortes, C. Burges), the four IDX files of the MNIST page",
    "usps": "USPS digits as distributed with The Elements of Statistical Learning "
    "(Hastie, Tibshirani, Friedman), data page files zip.train.gz and zip.test.gz",
    "letter": "UCI Machine Learning Repository, Letter Recognition (D. Slate), "
    "letter-recognition.data",
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
    arrays = []
    for stem, ndim in (
        ("train-images-idx3-ubyte", 3),
        ("train-labels-idx1-ubyte", 1),
        ("t10k-images-idx3-ubyte", 3),
        ("t10k-labels-idx1-ubyte", 1),
    ):
        path = _find(data_dir, "mnist", [stem + ".gz", stem])
        arrays.append(_read_idx(path, ndim))
    X_train, y_train, X_test, y_test = arrays
    for X, y, which in ((X_train, y_train, "training"), (X_test, y_test, "test")):
        if X.shape[0] != y.shape[0]:
            raise ValueError(
                f"MNIST {which} files disagree: {X.shape[0]} images, {y.shape[0]} labels"
            )
    return (
        X_train.reshape(X_train.shape[0], -1).astype(np.float64),
        y_train.astype(np.int64),
        X_test.reshape(X_test.shape[0], -1).astype(np.float64),
        y_test.astype(np.int64),
    )


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
