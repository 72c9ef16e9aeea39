"""Readers of the data files marginkit learns from: svmlight / LIBSVM and CSV.

svmlight (``label [qid:N] index:value ...``, comments after ``#``) is read by a compiled
tokeniser: the bytes of the file, read in large binary blocks (``.gz``, ``.bz2`` and
``.xz`` files decompressed by Python's modules), become CSR arrays without a Python
step per line or per number. It takes what :func:`sklearn.datasets.load_svmlight_file`
takes and gives what it gives, entry for entry and bit for bit: the same grammar
(numbers as Python's ``float()`` and ``int()`` read them, underscores included; blank
lines; ``qid``; ``zero_based="auto"`` decided over all that is read), the same
matrices, labels and query ids, and the same refusals, each a ``ValueError`` that names
the 1-based line. It differs where scikit-learn cannot go on or would mislead: indices
past 2**31 - 1 (scikit-learn's C ``int`` overflows) are read, with 64-bit index arrays;
and with ``query_id=True``, a file where some lines lack a ``qid`` is refused (the
query array would not line up with the rows). Multilabel files are not read.

Index arrays are int32 when every index, the number of columns and the number of
stored entries fit in it (as every scikit-learn estimator takes), else int64.

A number is converted exactly. The tokeniser reads its digits; an integer mantissa of
at most 2**53 times a power of ten of at most 22 is one correctly rounded multiplication
or division of two exact doubles (Clinger's fast path); every other number goes to the
C library's ``strtod`` (correctly rounded, as Python's ``float()``), and, should that
not take the whole token (a decimal comma in the process's locale), to ``float()``.

The svmlight reader is written here because no well-kept, permissively licensed library
reads the format fast: scikit-learn's loader converts line by line (about 20 to 35 MB/s
on this project's machine, against 200 to 270 MB/s here, ``benchmarks/bench_parse.py``),
and the faster readers that have been published are GPL-licensed or unmaintained.

CSV is read by pyarrow's CSV reader (``pyarrow.csv.open_csv``, in record batches),
after comments (``#`` to the end of the line) and blank lines are taken out, as
``numpy.loadtxt`` skips them; the label is one column (by default the last), or there
is none (``label_column=None``: every column is a feature, for prediction).

:func:`read_file` reads a whole file, :func:`iter_chunks` a file in chunks of examples;
:func:`read_svmlight` and :func:`read_csv` take a path, the file's bytes or a binary
file object.

Examples
--------
>>> from marginkit.formats import read_svmlight
>>> X, y = read_svmlight(b"+1 1:0.5 3:2  # a comment\\n-1 2:0.25\\n")
>>> X.toarray()
array([[0.5 , 0.  , 2.  ],
       [0.  , 0.25, 0.  ]])
>>> y
array([ 1., -1.])
>>> X.indices.dtype
dtype('int32')
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .csv_reader import CSV_BLOCK_SIZE, check_label_column, csv_chunks, read_csv
from .sources import Chunk, Dataset, checked_file, is_path
from .svmlight import (
    BLOCK_SIZE,
    check_svmlight_options,
    read_svmlight,
    read_svmlight_source,
    svmlight_chunks,
)

__all__ = [
    "BLOCK_SIZE",
    "CSV_BLOCK_SIZE",
    "FORMATS",
    "Chunk",
    "Dataset",
    "checked_file",
    "data_format",
    "iter_chunks",
    "read_csv",
    "read_file",
    "read_svmlight",
]


#: The data formats marginkit reads.
FORMATS = ("svmlight", "csv")


def data_format(path, fmt=None) -> str:
    """``fmt`` if given, else ``csv`` for ``.csv`` files (also compressed), else svmlight.

    Raises
    ------
    ValueError
        ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown data format {fmt!r} (known: {', '.join(FORMATS)})")
        return fmt
    suffixes = [s.lower() for s in Path(path).suffixes]
    return "csv" if ".csv" in suffixes else "svmlight"


def input_format(fmt, n_features, zero_based=True, label_column=-1) -> dict:
    """How a model's training files were read, for every file it reads later (its
    ``input_format_``, in plain types for skops): the format and width, and for svmlight
    whether the indices start at 0, for CSV the label's column."""
    out = {"format": fmt, "n_features": int(n_features)}
    if fmt == "svmlight":
        out["zero_based"] = bool(zero_based)
    else:
        out["label_column"] = int(label_column)
    return out


def read_file(
    path,
    fmt=None,
    *,
    n_features=None,
    zero_based="auto",
    labels=True,
    label_column=-1,
    skip_header=False,
    block_size=None,
):
    """A whole data file as a :class:`Dataset`: CSR for svmlight, dense for CSV.

    Parameters
    ----------
    path : str or path-like
    fmt : {"svmlight", "csv"} or None
        None: from the file name (see :func:`data_format`).
    n_features, zero_based, labels
        svmlight: as in :func:`read_svmlight`.
    label_column, skip_header
        CSV: as in :func:`read_csv`.
    block_size : int, optional
        Bytes read at a time; default :data:`BLOCK_SIZE` for svmlight,
        :data:`CSV_BLOCK_SIZE` for CSV.

    Returns
    -------
    Dataset
        ``(X, y, fmt, zero_based)``; ``zero_based`` as decided for svmlight, None for
        CSV.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`read_svmlight` and :func:`read_csv`.
    """
    fmt = data_format(path, fmt)
    if fmt == "svmlight":
        block_size = block_size or BLOCK_SIZE
        X, y, _, based = read_svmlight_source(
            path, n_features, zero_based, False, labels, block_size
        )
        return Dataset(X, y, fmt, based)
    checked_file(path)
    X, y = read_csv(
        path,
        label_column=label_column,
        skip_header=skip_header,
        block_size=block_size or CSV_BLOCK_SIZE,
    )
    return Dataset(X, y, fmt, None)


def check_count(value, name):
    """``value`` as an int, or the ValueError of a ``name`` that is not an integer >= 1
    (a chunk's rows, a window's)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value}")
    return int(value)


def iter_chunks(
    path,
    chunk_size,
    fmt=None,
    *,
    n_features=None,
    zero_based=True,
    labels=True,
    label_column=-1,
    skip_header=False,
    block_size=None,
    on_read=None,
):
    """The examples of a data file in :class:`Chunk` s of ``chunk_size`` examples (the
    last maybe fewer), in file order; the file is read ``block_size`` bytes at a time.

    Parameters
    ----------
    path : str or path-like
    chunk_size : int >= 1
    fmt : {"svmlight", "csv"} or None
    n_features : int, optional
        svmlight: the column count of every chunk (an index beyond it is an error);
        None: each chunk's own largest index, plus one.
    zero_based : bool, default=True
        svmlight: whether the first feature's index is 0. ("auto" needs the whole file:
        see :func:`read_file`, or :class:`marginkit.streaming.FileStream`, which finds
        it in a first pass.)
    labels, label_column, skip_header
        As in :func:`read_file`.
    block_size : int, optional
        As in :func:`read_file`.
    on_read : callable, optional
        Called with the number of bytes each read takes from the file on disk
        (compressed, where it is): they add up to its size, for a progress bar.

    Yields
    ------
    Chunk
        ``(X, y, line)``: ``line`` is the 1-based line of the chunk's first example.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`read_file`, when the chunk that holds the bad line is read.
    """
    check_count(chunk_size, "chunk_size")
    if is_path(path):
        checked_file(path)  # now, not when the first chunk is asked for
    fmt = data_format(path, fmt)
    if fmt == "svmlight":
        if not isinstance(zero_based, bool):
            raise ValueError(
                f"zero_based must be True or False to read in chunks, got {zero_based!r}"
            )
        check_svmlight_options(n_features, zero_based)
        block_size = block_size or BLOCK_SIZE
        return svmlight_chunks(
            path, int(chunk_size), n_features, zero_based, labels, block_size, on_read
        )
    check_label_column(label_column)
    checked_file(path)
    block_size = block_size or CSV_BLOCK_SIZE
    return csv_chunks(path, int(chunk_size), label_column, skip_header, block_size, on_read)
