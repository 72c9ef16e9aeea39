"""Training on a data file in chunks, never holding it whole: out-of-core fits.

:func:`fit_file` gives the model that :meth:`fit` with ``shuffle=False`` gives on the
whole file in memory, while it holds only ``chunk_size`` examples at a time (and what
the model itself keeps: the kernel estimators store their support vectors).

A first pass over the file learns what every chunk must agree on and what a fit starts
from: the number of features, whether svmlight indices start at 0 or 1 (as
``load_svmlight_file``'s ``zero_based="auto"`` decides for the whole file), the labels,
and the variance of the entries (a kernel's ``gamma="scale"``). The largest norm of an
instance (``fit_intercept``, the margin Perceptron) costs one more pass, made only
when the estimator needs it. Then each epoch is one more pass: chunks are parsed by
scikit-learn's ``load_svmlight_file`` (svmlight, ``.gz``, ``.bz2``) or ``numpy.loadtxt``
(CSV) and given to the estimator in file order.

Examples
--------
>>> import numpy as np, tempfile, os
>>> from sklearn.datasets import dump_svmlight_file
>>> from marginkit import ALMAClassifier
>>> from marginkit.streaming import fit_file
>>> rng = np.random.RandomState(0)
>>> X = rng.randn(500, 8); y = np.where(X[:, 0] > 0, 1, -1)
>>> path = os.path.join(tempfile.mkdtemp(), "train.svm")
>>> dump_svmlight_file(X, y, path)
>>> streamed = fit_file(ALMAClassifier(alpha=0.9), path, chunk_size=64)
>>> whole = ALMAClassifier(alpha=0.9).fit(X, y)
>>> bool(np.allclose(streamed.coef_, whole.coef_)), streamed.n_corrections_ == whole.n_corrections_
(True, True)
"""

from __future__ import annotations

import bz2
import gzip
import io
import itertools
import lzma
import warnings
from pathlib import Path

import numpy as np

from ._utils import DataSummary, row_norms_p
from .tasks import data_format

__all__ = ["FileStream", "check_streamable", "fit_file", "fit_stream"]


def _open(path):
    """A binary file object, decompressing ``.gz``, ``.bz2`` and ``.xz``."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rb")
    if suffix == ".bz2":
        return bz2.BZ2File(path, "rb")
    if suffix == ".xz":
        return lzma.open(path, "rb")
    return open(path, "rb")  # noqa: SIM115 - closed by the caller's ``with``


class FileStream:
    """The examples of a data file as a stream of chunks, each pass from the start.

    Calling the stream starts a pass: an iterator of ``(X, y)`` chunks of at most
    ``chunk_size`` examples, CSR for svmlight and dense for CSV, with the labels and
    the column count of the whole file. Construction makes the first pass (the scan),
    unless what it would find is given: ``classes``, and for svmlight ``n_features``
    and ``zero_based``. :attr:`summary`, :attr:`classes` and :attr:`n_features` tell
    what the stream holds, :attr:`zero_based` how its svmlight indices count;
    :attr:`n_samples` is known after the scan or a pass.

    Parameters
    ----------
    path : str or path-like
    chunk_size : int >= 1
        Lines per chunk (examples, unless the file holds comment or blank lines).
    fmt : {"svmlight", "csv"} or None
        None: from the file name, as :func:`marginkit.tasks.read_data`.
    n_features : int, optional
        svmlight: the number of features (the file must not use a larger index).
    classes : array-like, optional
        All the labels the file can hold (a label outside them is an error when it is
        read); None: those of the file, found by the scan.
    zero_based : bool or "auto", default="auto"
        svmlight: whether the first feature's index is 0 or 1; "auto" as
        ``load_svmlight_file`` decides, for the whole file (one-based when no index is
        0), which needs the scan.
    label_column : int, default=-1
        CSV: the column of the label.
    skip_header : bool, default=False
        CSV: the first line names the columns.
    progress : callable, optional
        Called with the number of examples of each chunk as it is read.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file that cannot be read in that format (the reason, and the line the bad
        chunk starts at), no examples, an index beyond ``n_features``, or a label
        outside ``classes``.
    """

    def __init__(
        self,
        path,
        chunk_size,
        fmt=None,
        *,
        n_features=None,
        classes=None,
        zero_based="auto",
        label_column=-1,
        skip_header=False,
        progress=None,
    ):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no data file at {self.path}")
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer):
            raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size}")
        if not (isinstance(zero_based, bool) or zero_based == "auto"):
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        self.chunk_size = int(chunk_size)
        self.fmt = data_format(self.path, fmt)
        self.label_column = label_column
        self.skip_header = skip_header
        self.progress = progress
        self.n_samples = None
        self.zero_based = zero_based
        self._n_features = n_features
        self._integral = False
        if classes is not None:
            classes = np.unique(np.asarray(classes))
            self._integral = classes.dtype.kind in "iub" or bool(
                classes.dtype.kind == "f" and np.all(classes == np.round(classes))
            )
            classes = classes.astype(np.int64) if self._integral else classes
        known = self.fmt == "csv" or (n_features is not None and zero_based != "auto")
        if classes is None or not known:
            self._scan(n_features, classes)
        else:
            if self.fmt == "csv":  # the columns of the first chunk
                first = next(self._chunks(raw=True), None)
                if first is None:
                    raise ValueError(f"{self.path}: no examples")
                self._n_features = first[0].shape[1]
            self._set(self._n_features, classes, self._moments)

    # -- reading -------------------------------------------------------------------
    def _line_chunks(self):
        """(first line number, bytes of up to chunk_size lines), from the file's start."""
        with _open(self.path) as f:
            line = 1
            if self.fmt == "csv" and self.skip_header:
                f.readline()
                line = 2
            while True:
                lines = list(itertools.islice(f, self.chunk_size))
                if not lines:
                    return
                yield line, b"".join(lines)
                line += len(lines)

    def _parse(self, text, line, *, raw=False):
        """(X, y) of one chunk; ``raw``: svmlight indices as written, any width."""
        try:
            if self.fmt == "svmlight":
                from sklearn.datasets import load_svmlight_file

                X, y = load_svmlight_file(
                    io.BytesIO(text),
                    n_features=None if raw else self._n_features,
                    dtype=np.float64,
                    zero_based=True if raw else self.zero_based,
                )
            else:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", "loadtxt: input contained no data")
                    table = np.loadtxt(io.BytesIO(text), delimiter=",", ndmin=2)
                if table.shape[0] == 0:  # only blank or comment lines
                    return np.zeros((0, self._n_features or 0)), np.zeros(0)
                if table.shape[1] < 2:
                    raise ValueError("a CSV file needs a label column and at least one feature")
                col = self.label_column % table.shape[1]
                y = table[:, col]
                X = np.delete(table, col, axis=1)
        except (ValueError, OSError, EOFError) as exc:
            kind = "an svmlight" if self.fmt == "svmlight" else "a numeric CSV"
            raise ValueError(
                f"{self.path}: cannot be read as {kind} file (in the chunk from line "
                f"{line}: {exc})"
            ) from exc
        if not raw and self._integral and np.all(y == np.round(y)):
            y = y.astype(np.int64)  # else a label outside classes, refused by the fit
        if not raw and self.fmt == "svmlight" and X.nnz < 2**31 and X.shape[1] < 2**31:
            # 32-bit indices, which every scikit-learn estimator takes
            X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
        return X, y

    def _chunks(self, raw=False):
        for line, text in self._line_chunks():
            X, y = self._parse(text, line, raw=raw)
            if X.shape[0]:
                yield X, y

    def __call__(self):
        """A pass over the file: its ``(X, y)`` chunks, in order."""
        n = 0
        for X, y in self._chunks():
            n += X.shape[0]
            if self.progress is not None:
                self.progress(X.shape[0])
            yield X, y
        self.n_samples = n

    def count(self):
        """The number of examples: one pass, unless the scan or a pass counted them."""
        if self.n_samples is None:
            self.n_samples = sum(X.shape[0] for X, _ in self._chunks())
        return self.n_samples

    # -- what the whole file holds ---------------------------------------------------
    def _survey(self, raw):
        """Rows, widest row, lowest index, labels, whether all are integral, and the
        sum and sum of squares of the entries: one pass."""
        n, width, low = 0, 0, None
        labels, integral = [], True
        total = total_sq = 0.0
        for X, y in self._chunks(raw=raw):
            n += X.shape[0]
            labels.append(np.unique(y))
            integral = integral and bool(np.all(y == np.round(y)))
            if self.fmt == "svmlight":
                width = max(width, X.shape[1])
                if X.nnz:
                    low = int(X.indices.min()) if low is None else min(low, int(X.indices.min()))
                values = X.data
            else:
                if width and X.shape[1] != width:
                    raise ValueError(
                        f"{self.path}: rows of {width} and of {X.shape[1]} features in one "
                        "CSV file"
                    )
                width = X.shape[1]
                values = X
            total += float(np.sum(values))
            total_sq += float(np.sum(np.square(values)))
        if n == 0:
            raise ValueError(f"{self.path}: no examples")
        labels = np.unique(np.concatenate(labels))
        return n, width, low, labels, integral, total, total_sq

    def _scan(self, n_features, classes):
        n, width, low, labels, integral, total, total_sq = self._survey(raw=True)
        if self.fmt == "svmlight":
            if self.zero_based == "auto":
                # load_svmlight_file's zero_based="auto": one-based when no index is 0
                self.zero_based = low is None or low == 0
            width = width if self.zero_based else width - 1
            if n_features is not None:
                if width > n_features:
                    raise ValueError(
                        f"{self.path}: n_features was given as {n_features}, but the file "
                        f"has {width} features"
                    )
                width = int(n_features)
        labels = labels.astype(np.int64) if integral else labels
        if classes is None:
            self._integral = integral
            classes = labels
        else:
            unknown = np.setdiff1d(labels, classes)
            if unknown.size:
                raise ValueError(
                    f"{self.path}: labels {unknown} are not among the classes given, {classes}"
                )
        self.n_samples = n
        self._set(width, classes, lambda: (n, total, total_sq))

    def _set(self, width, classes, moments):
        self._n_features = self.n_features = int(width)
        self.classes = classes

        def variance():
            n, total, total_sq = moments()
            cells = n * width
            mean = total / cells if cells else 0.0
            return max(total_sq / cells - mean**2, 0.0) if cells else 0.0

        self.summary = DataSummary(width, self.fmt == "svmlight", self._max_norm, variance)

    def _moments(self):
        """(rows, sum, sum of squares) of the entries: one more pass."""
        n, _, _, _, _, total, total_sq = self._survey(raw=False)
        return n, total, total_sq

    def _max_norm(self, p):
        """The largest p-norm of an instance: one more pass."""
        top = 0.0
        for X, _ in self._chunks():
            top = max(top, float(row_norms_p(X, p).max()))
        return top


def fit_file(
    estimator,
    path,
    chunk_size=10000,
    fmt=None,
    *,
    n_features=None,
    classes=None,
    zero_based="auto",
    label_column=-1,
    skip_header=False,
    callback=None,
    progress=None,
):
    """Fit ``estimator`` on a data file read in chunks; the estimator, fitted.

    The model is that of ``estimator.fit(X, y)`` with ``shuffle=False`` on the whole
    file (for PUMMA, with ``lam=0``), while at most ``chunk_size`` examples are held at
    a time. See :class:`FileStream` for the parameters of the file.

    Parameters
    ----------
    estimator : a marginkit classifier
        ``shuffle`` must be False; for PUMMA, ``lam`` must be 0 (the soft margin keeps a
        coordinate per example across the epochs).
    path : str or path-like
    chunk_size : int >= 1, default=10000
    fmt, n_features, classes, zero_based, label_column, skip_header
        As in :class:`FileStream`. With ``classes`` (and, for svmlight, ``n_features``
        and ``zero_based``) given, the fit makes no first pass over the file: one pass
        an epoch is all it reads, unless it needs a norm or a variance (and PUMMA's
        ``margin_``, one pass more).
    callback : callable, optional
        ``callback(estimator, epoch)`` after each epoch, as in :meth:`fit`.
    progress : callable, optional
        Called with the number of examples of each chunk the fit's passes read.

    Returns
    -------
    estimator

    Raises
    ------
    ValueError
        An estimator that cannot learn from a stream with its parameters, and the
        errors of :class:`FileStream`.
    """
    check_streamable(estimator)  # before the scan: a mistake costs no pass over the file
    stream = FileStream(
        path,
        chunk_size,
        fmt,
        n_features=n_features,
        classes=classes,
        zero_based=zero_based,
        label_column=label_column,
        skip_header=skip_header,
        progress=progress,
    )
    return fit_stream(estimator, stream, callback)


def check_streamable(estimator):
    """A ValueError (or sklearn's InvalidParameterError) when ``estimator`` cannot be
    fitted on a stream with its parameters."""
    estimator._validate_params()
    estimator._check_streamable()


def fit_stream(estimator, stream, callback=None):
    """Fit ``estimator`` on a :class:`FileStream` (made, and so scanned, already).

    Returns
    -------
    estimator
    """
    return estimator._fit_stream(stream, stream.classes, stream.summary, callback)
