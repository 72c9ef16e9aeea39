"""The inputs of the distributed fits: dask arrays and frames, labels aligned with their
rows, the norms and summaries of data files read on the workers, and the reading options
of file shards.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import array_api_compat
import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array, column_or_1d

from .._reading import ReadOptions, svmlight_width, zero_based_of
from .._rows import Norms, canonical, row_norms_p
from ..streaming import FileScan, FileStream
from .dask_predict import from_frame, is_dask


def known_rows(a):
    """The dask array ``a`` with the lengths of its row chunks known (computed where
    they are not, as after a boolean mask)."""
    return a.compute_chunk_sizes() if any(np.isnan(c) for c in a.chunks[0]) else a


def aligned_labels(y, X, da):
    """y as a 1-d dask array with X's row chunks (a numpy y is split along them)."""
    if not is_dask(y):
        y = column_or_1d(y, warn=True)
    elif y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{X.shape[0]}, {y.shape[0]}]"
        )
    if not is_dask(y):
        return da.from_array(y, chunks=(X.chunks[0],))
    return y.rechunk((X.chunks[0],)) if y.chunks[0] != X.chunks[0] else y


def row_norms(X, p, where=None):
    """The :class:`~marginkit._rows.Norms` of the rows of a chunk, validated as a fit
    validates its rows; ``where``: (shard, its first row in the data), which an error
    of its values names, with the first row that holds a value that is not finite."""
    try:
        X = check_array(X, accept_sparse="csr", dtype=np.float64, order="C")
    except ValueError as exc:
        if where is None:
            raise
        shard, first = where
        raise ValueError(f"{exc} (shard {shard}{_first_bad_row(X, first)})") from None
    return Norms.of(row_norms_p(canonical(X), p))


def _first_bad_row(X, first):
    """``", row N"``: the first row of chunk ``X`` (row ``first`` of the data) holding a
    value that is not finite, or ``""`` where none does (another fault)."""
    try:
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            bad = ~np.isfinite(np.asarray(X.data, dtype=np.float64))
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[bad]
        else:
            rows = np.flatnonzero(~np.isfinite(np.asarray(X, dtype=np.float64)).all(axis=1))
    except (TypeError, ValueError):  # values that are not numbers at all
        return ""
    return f", row {first + int(rows[0])}" if rows.size else ""


def labels_of(y):
    return np.unique(np.asarray(y))


@dataclass(frozen=True)
class ShardReading:
    """How the workers read the file shards: the reading options (one value for every
    file; :meth:`ReadOptions.for_file <marginkit._reading.ReadOptions.for_file>`
    completes them for each), the examples of a chunk, whether a chunk is parsed ahead in
    a thread, and the classes (None: those the first pass finds)."""

    options: ReadOptions = ReadOptions()
    chunk_size: int = 10000
    prefetch: bool = True
    classes: object = None

    def stream(self, path, prefetch=None):
        """The file at ``path`` as a :class:`marginkit.streaming.FileStream`."""
        prefetch = self.prefetch if prefetch is None else prefetch
        return FileStream(
            path,
            self.chunk_size,
            classes=self.classes,
            prefetch=prefetch,
            **self.options.stream_args(),
        )

    def given(self):
        """The names of the options given (not at their defaults), for the error of a
        fit on data that are not files."""
        default = ShardReading().by_name()
        return [name for name, value in self.by_name().items() if not _same(value, default[name])]

    def by_name(self):
        """The options as :meth:`MixingClassifier.fit` names them, in its order."""
        o = self.options
        return {
            "chunk_size": self.chunk_size,
            "fmt": o.fmt,
            "n_features": o.n_features,
            "zero_based": o.zero_based,
            "label_column": o.label_column,
            "skip_header": o.skip_header,
            "prefetch": self.prefetch,
        }


def _same(value, default):
    """``value`` is ``default`` (True is not 1, nor 1.0 -1)."""
    return value is default or (type(value) is type(default) and value == default)


def file_rows(path, reading):
    """All the rows of a file shard and their labels, read on a worker (in chunks, then
    stacked): what :class:`MixingClassifier`'s ``mix_every`` holds there between the
    mixes of an epoch."""
    chunks = list(reading.stream(path, prefetch=False)())
    parts = [X for X, _ in chunks]
    X = sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.vstack(parts)
    return X, np.concatenate([y for _, y in chunks])


def held_norms(rows, p):
    return row_norms(rows[0], p)


def file_summary(path, reading):
    """The first pass over one file shard, on a worker: ``(format, scan, classes)``,
    the :class:`marginkit.streaming.FileScan` of the file as written and the classes
    its stream holds (those given, else its own labels). With everything the scan
    would find given, only the rows are counted."""
    stream = reading.stream(path)
    scan = stream.scan
    if scan is None:
        n = stream.count()
        if n == 0:
            raise ValueError(f"{stream.path}: no examples")
        width = stream.n_features
        if stream.fmt == "svmlight" and not stream.zero_based:
            width += 1  # the width as written, indices read as zero-based
        scan = FileScan(n, width, None, stream.classes, stream.integral)
    return stream.fmt, scan, stream.classes


def file_norms(path, reading, p):
    """The :class:`~marginkit._rows.Norms` of the instances of one file shard: a
    pass, on a worker."""
    return reading.stream(path).summary.norms(p)


def paths_of(X):
    """The paths of a list (or tuple) of files, or None when X is not one."""
    if not isinstance(X, list | tuple):
        return None
    if not X:
        raise ValueError("X is an empty list: give at least one file to train on")
    if not all(isinstance(x, str | os.PathLike) for x in X):
        kinds = sorted({type(x).__name__ for x in X})
        raise TypeError(
            f"a list X must hold the paths of the files to train on (str or path-like), "
            f"got {', '.join(kinds)}"
        )
    return [os.fspath(x) for x in X]


def combined(paths, summaries, n_features, zero_based, classes_given):
    """``(fmt, n_features, zero_based, classes)`` of all the file shards together, from
    their first passes: one format, the widest file's features, svmlight indices
    one-based only when no file writes an index 0 (:func:`marginkit._reading.
    zero_based_of`, as for one file), the union of their labels."""
    fmts = [fmt for fmt, _, _ in summaries]
    if len(set(fmts)) > 1:
        shown = ", ".join(f"{path} ({fmt})" for path, fmt in zip(paths, fmts, strict=True))
        raise ValueError(
            f"the files are of different formats: {shown}. Give files of one format "
            "(or fmt= to read them all as one)."
        )
    fmt = fmts[0]
    scans = [scan for _, scan, _ in summaries]
    widths = [scan.width for scan in scans]
    if fmt == "csv":
        if len(set(widths)) > 1:
            shown = ", ".join(f"{path} ({w})" for path, w in zip(paths, widths, strict=True))
            raise ValueError(f"the CSV files have different numbers of features: {shown}")
        width = widths[0]
        zero_based = True
    else:
        if zero_based == "auto":
            zero_based = zero_based_of([scan.lowest_index for scan in scans])
        width = svmlight_width(widths, zero_based, n_features, paths)
    if classes_given:
        classes = summaries[0][2]
    else:
        classes = np.unique(np.concatenate([scan.labels for scan in scans]))
        if all(scan.integral for scan in scans):
            classes = classes.astype(np.int64)
    return fmt, int(width), zero_based, classes


def on_driver(a, who):
    """A dask collection gathered to the driver (the walk reads every row, in order);
    anything else as it is, but arrays of another library than numpy (torch, CuPy, the
    Array API's), which the shards' CPUs do not take."""
    a = from_frame(a)
    if is_dask(a):
        return a.compute()
    if array_api_compat.is_array_api_obj(a) and not isinstance(a, np.ndarray):
        raise ValueError(
            f"{who} makes its kernel products on the workers' CPUs, from numpy or "
            f"scipy.sparse rows; got a {type(a).__module__}.{type(a).__name__}. Fit on "
            "numpy or scipy.sparse data (on one machine, the estimator itself takes "
            "device arrays)."
        )
    return a
