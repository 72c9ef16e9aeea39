"""Training on a data file in chunks, never holding it whole: out-of-core fits.

:func:`fit_file` gives the model that :meth:`fit` with ``shuffle=False`` gives on the
whole file in memory, while it holds only ``chunk_size`` examples at a time (and what
the model itself keeps: the kernel estimators store their support vectors).

A first pass over the file learns what every chunk must agree on and what a fit starts
from: the number of features, whether svmlight indices start at 0 or 1 (as
``load_svmlight_file``'s ``zero_based="auto"`` decides for the whole file), the labels,
and the variance of the entries (a kernel's ``gamma="scale"``). The largest norm of an
instance (``fit_intercept``, the margin Perceptron) costs one more pass, made only
when the estimator needs it. Then each epoch is one more pass: the file is read in
large binary blocks (``.gz``, ``.bz2`` and ``.xz`` decompressed) and parsed into chunks
by :mod:`marginkit.formats` (its compiled svmlight reader, or pyarrow's CSV reader),
and the chunks go to the estimator in file order. Reading and learning overlap: while
the estimator learns from one chunk, a background thread reads and parses the next
(both release the GIL), holding at most one chunk ready ahead.

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
>>> whole = ALMAClassifier(alpha=0.9, shuffle=False).fit(X, y)  # in the order of the file
>>> bool(np.allclose(streamed.coef_, whole.coef_)), streamed.n_corrections_ == whole.n_corrections_
(True, True)
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ._reading import ReadOptions, integral, svmlight_width, zero_based_of
from ._rows import DataSummary, Norms, row_norms_p
from .formats import check_count, checked_file, iter_chunks

__all__ = ["FileScan", "FileStream", "check_streamable", "fit_file", "fit_stream", "prefetched"]


class FileScan(NamedTuple):
    """What the first pass of a :class:`FileStream` found in its file, as written.

    Kept so that the scans of several files can be combined into one decision for all
    of them (:class:`marginkit.distributed.MixingClassifier` over file shards), as
    ``load_svmlight_files`` decides for several files together.

    Attributes
    ----------
    n_samples : int
    width : int
        svmlight: the largest feature index written, plus one (the indices read as
        zero-based, whatever the stream then takes them for); CSV: the number of
        feature columns.
    lowest_index : int or None
        svmlight: the lowest feature index written; None without any (and for CSV).
    labels : ndarray
        The file's labels, sorted (int64 when all are integral).
    integral : bool
        Whether every label is integral.
    """

    n_samples: int
    width: int
    lowest_index: int | None
    labels: np.ndarray
    integral: bool


class _Reader:
    """A background thread that runs the jobs it is given, one at a time, and waits
    among the idle readers between them: the passes over a stream reuse one thread
    instead of starting one each (a thread's stack is memory too)."""

    idle = []
    lock = threading.Lock()

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        thread = threading.Thread(target=self._serve, name="marginkit-reader", daemon=True)
        thread.start()

    @classmethod
    def run(cls, job, done):
        """Run ``job()`` in an idle reader (a new one if none is idle); ``done`` is set
        once the job has returned and the reader is idle again."""
        with cls.lock:
            reader = cls.idle.pop() if cls.idle else None
        if reader is None:
            reader = cls()
        reader.jobs.put((job, done))

    def _serve(self):
        while True:
            job, done = self.jobs.get()
            try:
                job()
            finally:
                with self.lock:
                    self.idle.append(self)
                done.set()

    @classmethod
    def _forget(cls):
        """In a forked child: the readers' threads stayed in the parent."""
        cls.idle = []
        cls.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Reader._forget)


def prefetched(iterable, depth=1):
    """The items of ``iterable`` in order, each made in a background thread while the
    ones before it are used: at most ``depth`` items wait, made but not yet taken.

    An exception raised in the thread is raised here, unchanged, when the item it
    stopped is asked for. Closing the generator (or leaving a loop over it) stops the
    thread after the item it is making and closes ``iterable``.

    Parameters
    ----------
    iterable : iterable
    depth : int >= 1, default=1

    Yields
    ------
    The items of ``iterable``.
    """
    made = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = threading.Event()
    end = object()

    def offer(item):
        while not stop.is_set():
            try:
                made.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        items = iter(iterable)
        try:
            for item in items:
                if not offer((True, item)):
                    return
            offer((True, end))
        except BaseException as exc:  # handed over to the consumer, raised there
            offer((False, exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    _Reader.run(produce, done)
    try:
        while True:
            ok, item = made.get()
            if not ok:
                raise item
            if item is end:
                return
            yield item
    finally:
        stop.set()
        done.wait()


class FileStream:
    """The examples of a data file as a stream of chunks, each pass from the start.

    Calling the stream starts a pass: an iterator of ``(X, y)`` chunks of at most
    ``chunk_size`` examples, CSR for svmlight and dense for CSV, with the labels and
    the column count of the whole file. Construction makes the first pass (the scan),
    unless what it would find is given: ``classes``, and for svmlight ``n_features``
    and ``zero_based``. :attr:`summary`, :attr:`classes` and :attr:`n_features` tell
    what the stream holds, :attr:`zero_based` how its svmlight indices count,
    :attr:`integral` whether its labels are integers (int64), :attr:`reading` how it is
    read (a :class:`~marginkit._reading.ReadOptions`, its format and header decided);
    :attr:`n_samples` is known after the scan or a pass; :attr:`scan` holds what the
    scan found, as written (a :class:`FileScan`; None when no scan was made).

    Parameters
    ----------
    path : str or path-like
    chunk_size : int >= 1
        Examples per chunk (the last may hold fewer).
    fmt : {"svmlight", "csv"} or None
        None: from the file name, as :func:`marginkit.formats.data_format`.
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
    read_progress : callable, optional
        Called as the file is read, from its first pass on, with ``(stage, n)``: the
        ``n`` bytes a read took from the file on disk (compressed, where it is; they
        add up to :attr:`file_size` in each pass), ``stage`` the pass they belong to:
        ``"scan"`` (the first pass, which finds the rows, width and labels), ``"pass
        1"``, ``"pass 2"``... (the passes of a fit, :meth:`__call__`), or ``"norms"``,
        ``"moments"`` and ``"count"`` (a pass for one of those). For a progress bar
        with a total from the start (``marginkit train --chunk-size`` draws one).
    prefetch : bool, default=True
        Whether a pass reads and parses each chunk in a background thread while the
        one before is used (two threads busy); False: in the caller's thread, one
        chunk after the other (for a process that has one core to itself, such as a
        one-thread dask worker beside as many others as there are cores).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file that cannot be read in that format (the line and the reason), no
        examples, an index beyond ``n_features``, or a label outside ``classes``.
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
        prefetch=True,
        read_progress=None,
    ):
        self.path = checked_file(path)
        self.file_size = self.path.stat().st_size
        self.read_progress = read_progress
        self.passes = 0  # the passes of a fit read so far (__call__)
        check_count(chunk_size, "chunk_size")
        if not (isinstance(zero_based, bool) or zero_based == "auto"):
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        if isinstance(label_column, bool) or not isinstance(label_column, int | np.integer):
            raise ValueError(
                f"label_column must be an integer (a stream is learned with its labels), "
                f"got {label_column!r}"
            )
        self.chunk_size = int(chunk_size)
        self.prefetch = bool(prefetch)
        reading = ReadOptions(fmt, n_features, zero_based, label_column, skip_header)
        #: how the file is read: its format and header decided, and its svmlight index
        #: base once the scan decided it
        self.reading = reading.for_file(self.path)
        self.progress = progress
        self.n_samples = None
        self.scan = None
        self._n_features = n_features
        self.integral = False
        if classes is not None:
            classes = np.unique(np.asarray(classes))
            self.integral = integral(classes)
            classes = classes.astype(np.int64) if self.integral else classes
        known = self.fmt == "csv" or (n_features is not None and zero_based != "auto")
        if classes is None or not known:
            self._scan(n_features, classes)
        else:
            if self.fmt == "csv":  # the columns of the first chunk
                chunks = self._chunks("scan", raw=True, prefetch=False)
                first = next(chunks, None)
                chunks.close()
                if first is None:
                    raise ValueError(f"{self.path}: no examples")
                self._n_features = first[0].shape[1]
            self._set(self._n_features, classes, self._moments)

    @property
    def fmt(self):
        """The file's format, ``"svmlight"`` or ``"csv"``."""
        return self.reading.fmt

    @property
    def zero_based(self):
        """svmlight: whether the indices count from 0 (``"auto"`` until the scan)."""
        return self.reading.zero_based

    @property
    def label_column(self):
        return self.reading.label_column

    @property
    def skip_header(self):
        """CSV: whether the first line is a header (given, or found: not numbers)."""
        return self.reading.skip_header

    # -- reading -------------------------------------------------------------------
    def _chunks(self, stage, raw=False, prefetch=None):
        """The ``(X, y)`` chunks of a pass; ``raw``: svmlight indices as written, each
        chunk as wide as its largest index. ``prefetch``: each chunk read and parsed in
        a background thread while the one before is used (None: :attr:`prefetch`).
        ``stage``: the pass's name for :attr:`read_progress`."""
        report = self.read_progress
        chunks = iter_chunks(
            self.path,
            self.chunk_size,
            self.fmt,
            n_features=None if raw else self._n_features,
            zero_based=True if raw else self.zero_based,
            label_column=self.label_column,
            skip_header=self.skip_header,
            on_read=None if report is None else lambda n: report(stage, n),
        )
        if self.prefetch if prefetch is None else prefetch:
            chunks = prefetched(chunks)
        try:
            for X, y, _ in chunks:
                if not raw and self.integral and integral(y):
                    y = y.astype(np.int64)  # else a label outside classes, refused by the fit
                yield X, y
        except (ValueError, OSError) as exc:
            kind = "an svmlight" if self.fmt == "svmlight" else "a numeric CSV"
            raise ValueError(f"{self.path}: cannot be read as {kind} file ({exc})") from exc
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def __call__(self):
        """A pass over the file: its ``(X, y)`` chunks, in order."""
        n = 0
        self.passes += 1
        for X, y in self._chunks(f"pass {self.passes}"):
            n += X.shape[0]
            if self.progress is not None:
                self.progress(X.shape[0])
            yield X, y
        self.n_samples = n

    def count(self):
        """The number of examples: one pass, unless the scan or a pass counted them."""
        if self.n_samples is None:
            self.n_samples = sum(X.shape[0] for X, _ in self._chunks("count"))
        return self.n_samples

    # -- what the whole file holds ---------------------------------------------------
    def _survey(self, raw):
        """Rows, widest row, lowest index, labels, whether all are integral, and the
        sum and sum of squares of the entries: one pass."""
        n, width, low = 0, 0, None
        labels, integers = [], True
        total = total_sq = 0.0
        for X, y in self._chunks("scan" if raw else "moments", raw=raw):
            n += X.shape[0]
            labels.append(np.unique(y))
            integers = integers and integral(y)
            if self.fmt == "svmlight":
                width = max(width, X.shape[1])
                if X.nnz:
                    low = int(X.indices.min()) if low is None else min(low, int(X.indices.min()))
                values = X.data
            else:  # the reader holds every row to the width of the first
                width = X.shape[1]
                values = X
            total += float(np.sum(values))
            total_sq += float(np.sum(np.square(values)))
        if n == 0:
            raise ValueError(f"{self.path}: no examples")
        labels = np.unique(np.concatenate(labels))
        return n, width, low, labels, integers, total, total_sq

    def _scan(self, n_features, classes):
        n, width, low, labels, integers, total, total_sq = self._survey(raw=True)
        labels = labels.astype(np.int64) if integers else labels
        self.scan = FileScan(n, width, low if self.fmt == "svmlight" else None, labels, integers)
        if self.fmt == "svmlight":
            if self.zero_based == "auto":
                self.reading = replace(self.reading, zero_based=zero_based_of([low]))
            width = svmlight_width([width], self.zero_based, n_features, [self.path])
        if classes is None:
            self.integral = integers
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

        def variance(e):
            # of the entries, scaled to the rows times 2^-e (its sums underflow for
            # entries below about 1e-154)
            n, total, total_sq = moments()
            cells = n * width
            mean = total / cells if cells else 0.0
            var = max(total_sq / cells - mean**2, 0.0) if cells else 0.0
            return float(np.ldexp(var, -2 * e))

        self.summary = DataSummary(width, self.fmt == "svmlight", self._norms, variance)

    def _moments(self):
        """(rows, sum, sum of squares) of the entries: one more pass."""
        n, _, _, _, _, total, total_sq = self._survey(raw=False)
        return n, total, total_sq

    def _norms(self, p):
        """The :class:`~marginkit._rows.Norms` of the instances: one more pass."""
        return sum((Norms.of(row_norms_p(X, p)) for X, _ in self._chunks("norms")), Norms())


def fit_file(estimator, path, chunk_size=10000, fmt=None, *, callback=None, **options):
    """Fit ``estimator`` on a data file read in chunks; the estimator, fitted.

    The model is that of ``estimator.fit(X, y)`` with ``shuffle=False`` on the whole
    file (for PUMMA, with ``lam=0``), while at most ``chunk_size`` examples are held at
    a time: a file is learned in the order of its rows, whatever the estimator's
    ``shuffle`` says, and one that comes in long runs of one label (sorted by class)
    warns once with a :class:`~marginkit.StreamOrderWarning` (shuffle such a file, or
    fit it in memory). See :class:`FileStream` for the parameters of the file.

    Parameters
    ----------
    estimator : a marginkit classifier
        For PUMMA, ``lam`` must be 0 (the soft margin keeps a coordinate per example
        across the epochs).
    path : str or path-like
    chunk_size : int >= 1, default=10000
    fmt : {"svmlight", "csv"} or None
        As in :class:`FileStream`.
    callback : callable, optional
        ``callback(estimator, epoch)`` after each epoch, as in :meth:`fit`. Each epoch
        reads the file again: the estimator's ``max_iter`` caps them (``max_iter=1``
        for one pass) and its ``tol`` ends them early; ``n_iter_`` tells how many were
        made (see :func:`marginkit.tasks.passes_made` for why they stopped).
    **options
        The options of :class:`FileStream`: ``n_features``, ``classes``,
        ``zero_based``, ``label_column``, ``skip_header``, ``prefetch`` and
        ``progress`` (called with the number of examples of each chunk the fit's
        passes read). With ``classes`` (and, for svmlight, ``n_features`` and
        ``zero_based``) given, the fit makes no
        first pass over the file: one pass an epoch is all it reads, unless it needs a
        norm or a variance (and PUMMA's ``margin_``, one pass more).

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
    stream = FileStream(path, chunk_size, fmt, **options)
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
