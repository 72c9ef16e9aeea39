"""How a data file is read, decided once: the reading options as one value, and the
rules that decide what a file's first pass leaves open.

Every reader of files (:func:`marginkit.tasks.read_data`, :class:`marginkit.streaming.
FileStream`, the file shards of :class:`marginkit.distributed.MixingClassifier`, the
command line) takes its options as one :class:`ReadOptions`, made where the user gave
them and completed for the file by :meth:`ReadOptions.for_file` (its format from the
name, a CSV header from the first line); the rules below decide the rest the same way
everywhere: the labels' kind (:func:`integral`), the base of svmlight indices
(:func:`zero_based_of`) and the number of features (:func:`svmlight_width`).
"""

from dataclasses import dataclass, replace

import numpy as np

from .formats import data_format
from .formats.csv_reader import NUMBER_TEXT
from .formats.sources import opened


@dataclass(frozen=True)
class ReadOptions:
    """How a data file is read.

    Parameters
    ----------
    fmt : {"svmlight", "csv"} or None, default=None
        None: from the file name (:func:`marginkit.formats.data_format`).
    n_features : int or None, default=None
        svmlight: the number of features (the file must not use a larger index).
    zero_based : bool or "auto", default="auto"
        svmlight: whether the first feature's index is 0 or 1; "auto": one-based when no
        index is 0 (:func:`zero_based_of`), which needs a pass over the file.
    label_column : int or None, default=-1
        CSV: the column of the label (negative: from the end); None: no labels.
    skip_header : bool, default=False
        CSV: the first line names the columns. False: it does when it is not numbers
        (:func:`csv_header`).
    """

    fmt: str | None = None
    n_features: int | None = None
    zero_based: bool | str = "auto"
    label_column: int | None = -1
    skip_header: bool = False

    def for_file(self, path):
        """These options completed for the file at ``path``: its format (from its name
        where not given) and, for CSV, whether its first line is a header."""
        fmt = data_format(path, self.fmt)
        header = bool(self.skip_header) or (fmt == "csv" and csv_header(path))
        return replace(self, fmt=fmt, skip_header=header)

    def reader_args(self):
        """The keyword arguments of :func:`marginkit.formats.read_file` and
        :func:`~marginkit.formats.iter_chunks` (after the path and the format)."""
        return {
            "n_features": self.n_features,
            "zero_based": self.zero_based,
            "label_column": self.label_column,
            "skip_header": self.skip_header,
        }

    def stream_args(self):
        """The keyword arguments of :class:`marginkit.streaming.FileStream`."""
        return {"fmt": self.fmt, **self.reader_args()}


def csv_header(path):
    """Whether the first line of the CSV file at ``path`` is a header: a line that is
    not numbers (a blank or comment line is none; it is skipped as the reader skips it)."""
    with opened(path) as f:
        first = f.readline()
    first = first.split(b"#", 1)[0].strip()
    if not first:
        return False
    return not all(NUMBER_TEXT.fullmatch(cell) for cell in first.split(b","))


def integral(values):
    """Whether every value is an integer (labels read as float64 from a file)."""
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return True
    return bool(values.dtype.kind == "f" and np.all(values == np.round(values)))


def as_labels(y):
    """Labels read from a file: int64 when every one is an integer."""
    return y.astype(np.int64) if integral(y) else y


def zero_based_of(lowest_indices):
    """Whether svmlight indices count from 0, from the lowest index each file (or part)
    writes (None: one that writes none): one-based only when no index is 0, as
    scikit-learn's ``load_svmlight_file(s)`` decide with ``zero_based="auto"``."""
    written = [low for low in lowest_indices if low is not None]
    return not written or min(written) == 0


def svmlight_width(widths, zero_based, n_features, paths):
    """The number of features of svmlight files whose largest index plus one is
    ``widths`` (one per file, ``paths``), their indices counting from 0 or not; with
    ``n_features`` given, that number, or a ValueError naming the widest file where it
    uses more."""
    widest = int(np.argmax(widths))
    width = int(widths[widest]) - (0 if zero_based else 1)
    if n_features is None:
        return width
    if width > n_features:
        raise ValueError(
            f"{paths[widest]}: n_features was given as {n_features}, but the file has "
            f"{width} features"
        )
    return int(n_features)
