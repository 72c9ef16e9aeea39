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

import bz2
import contextlib
import gzip
import io
import lzma
import math
import os
import re
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit, types

from ._core import NUMBA_INLINE, NUMBA_OPTS

__all__ = [
    "FORMATS",
    "Chunk",
    "Dataset",
    "data_format",
    "iter_chunks",
    "read_csv",
    "read_file",
    "read_svmlight",
]

#: The data formats marginkit reads.
FORMATS = ("svmlight", "csv")

#: Bytes of svmlight read from a file at a time (a block is cut at its last line end).
BLOCK_SIZE = 1 << 20

#: Bytes of CSV text read at a time (pyarrow parses each block in threads).
CSV_BLOCK_SIZE = 1 << 24

#: Bytes of CSV text each of pyarrow's threads parses at a time.
_ARROW_BLOCK = 1 << 20

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max


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


class Chunk(NamedTuple):
    """Examples read from a file: ``X``, the labels ``y`` (None when the file has none)
    and ``line``, the 1-based line of the first example."""

    X: object
    y: object
    line: int


class Dataset(NamedTuple):
    """A whole data file: ``X``, ``y`` (None without labels), the format, and for
    svmlight the index base it was read with (True: the first feature is index 0)."""

    X: object
    y: object
    fmt: str
    zero_based: object


# -- bytes from files --------------------------------------------------------------------


#: The decompressing readers of a binary file object, by the file name's suffix.
_DECOMPRESSORS = {
    ".gz": lambda f: gzip.GzipFile(fileobj=f, mode="rb"),
    ".bz2": lambda f: bz2.BZ2File(f, "rb"),
    ".xz": lambda f: lzma.LZMAFile(f, "rb"),
}


class _Counted(io.RawIOBase):
    """A binary file that calls ``on_read(n)`` with the bytes each read takes from it."""

    def __init__(self, f, on_read):
        self.f, self.on_read = f, on_read

    def readable(self):
        return True

    def readinto(self, b):
        n = self.f.readinto(b)
        if n:
            self.on_read(n)
        return n


@contextlib.contextmanager
def _open(path, on_read=None):
    """A binary file object over the file at ``path``, decompressing ``.gz``, ``.bz2``
    and ``.xz``; ``on_read(n)``, when given, is called with the bytes read from the
    file on disk (compressed, where it is) as they are read."""
    with open(path, "rb", buffering=0) as raw:
        source = raw if on_read is None else _Counted(raw, on_read)
        decompressed = _DECOMPRESSORS.get(Path(path).suffix.lower())
        if decompressed is None:
            yield source
        else:
            with decompressed(source) as f:
                yield f


#: What Python's decompressors raise on a damaged or truncated file.
_DECOMPRESSION_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


def _is_path(source):
    return isinstance(source, str | os.PathLike)


def _blocks(f, block_size, failure="cannot be read"):
    """The bytes of a binary file as uint8 arrays, each ending at a line end (the last
    at the end of the file). One buffer is reused: a block is valid until the next one
    is asked for. A line longer than the buffer doubles it. A file that fails to give
    its bytes is a ValueError that starts with ``failure``."""
    buf = np.empty(max(int(block_size), 16), dtype=np.uint8)
    start = 0  # bytes of an unfinished line, carried to the front
    while True:
        filled = start
        view = memoryview(buf)
        while filled < buf.size:
            try:
                n = f.readinto(view[filled:])
            except _DECOMPRESSION_ERRORS as exc:
                raise ValueError(f"{failure} ({exc})") from exc
            if not n:
                break
            filled += n
        del view
        if filled < buf.size:  # the end of the file
            if filled:
                yield _read_only(buf[:filled])
            return
        cut = _after_last_newline(buf, filled)
        if cut == 0:  # no line end in the whole buffer
            bigger = np.empty(2 * buf.size, dtype=np.uint8)
            bigger[:filled] = buf[:filled]
            buf, start = bigger, filled
            continue
        yield _read_only(buf[:cut])
        start = filled - cut
        buf[:start] = buf[cut:filled].copy()


def _read_only(view):
    """A read-only view: the compiled readers see one array type, as bytes give."""
    view.flags.writeable = False
    return view


def checked_file(path):
    """``path`` as a :class:`~pathlib.Path` to a data file: IsADirectoryError for a
    directory, FileNotFoundError where nothing is."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a data file: give one of its files")
    if not path.is_file():
        raise FileNotFoundError(f"no data file at {path}")
    return path


def _source_blocks(source, block_size, on_read=None):
    """Blocks of a path, of bytes, or of a binary file object (see :func:`_blocks`); a
    path's reads reported to ``on_read`` (:func:`_open`)."""
    if _is_path(source):
        path = checked_file(source)
        compressed = path.suffix.lower() in _DECOMPRESSORS
        with _open(path, on_read) as f:
            yield from _blocks(
                f, block_size, "cannot be decompressed" if compressed else "cannot be read"
            )
    elif isinstance(source, bytes | bytearray | memoryview):
        data = np.frombuffer(source, dtype=np.uint8)
        if data.size:
            yield _read_only(data)
    elif hasattr(source, "read"):
        if isinstance(source, io.TextIOBase):
            raise TypeError("expected a binary file object (opened with 'rb'), got a text one")
        if hasattr(source, "readinto"):
            yield from _blocks(source, block_size)
        else:
            data = source.read()
            if not isinstance(data, bytes | bytearray):
                raise TypeError(f"the file object's read() gave {type(data).__name__}, not bytes")
            yield from _source_blocks(data, block_size)
    else:
        raise TypeError(
            f"expected a path, bytes or a binary file object, got {type(source).__name__}"
        )


@njit(**NUMBA_OPTS)
def _after_last_newline(buf, end):
    """The position after the last line end in ``buf[:end]``, 0 when there is none."""
    for i in range(end - 1, -1, -1):
        if buf[i] == 10:
            return i + 1
    return 0


@njit(**NUMBA_OPTS)
def _count_lines_and_colons(buf, end):
    lines = 0
    colons = 0
    for i in range(end):
        c = buf[i]
        lines += c == 10
        colons += c == 58
    return lines, colons


# -- numbers -------------------------------------------------------------------------------

_strtod = types.ExternalFunction("strtod", types.float64(types.voidptr, types.voidptr))

# 10**0 .. 10**22: every one exactly a double
_POW10 = np.array([10.0**k for k in range(23)])

_NUMBER_OK = 0
_NUMBER_BAD = 1
_NUMBER_PYTHON = 2  # valid, but left to Python's float()


@njit(**NUMBA_INLINE)
def _is_digit(c):
    return 48 <= c <= 57


@njit(**NUMBA_INLINE)
def _lower(c):
    return c + 32 if 65 <= c <= 90 else c


@njit(**NUMBA_INLINE)
def _underscore_ok(buf, s, e, i):
    """Python's rule for ``_`` in a number: only between two digits."""
    return i > s and i + 1 < e and _is_digit(buf[i - 1]) and _is_digit(buf[i + 1])


# _digits, _parse_float and _fast_pair are called from several places and are left to
# LLVM to inline: numba's own inlining (inline="always") copies their typed IR into every
# caller: the parser then took 30 s to compile instead of 16 s (2-core Xeon), and read no
# faster.
@njit(**NUMBA_OPTS)
def _digits(buf, s, e, i, frac, mant, nd, exp10, inexact, any_digit):
    """The digits of a number's integer part (``frac`` False) or fraction from ``i``:
    up to 18 significant ones into ``mant``, the power of ten in ``exp10``, ``inexact``
    when a non-zero digit did not fit. Returns the position after them (-1 for a
    misplaced underscore) and the updated ``mant, nd, exp10, inexact, any_digit``."""
    while i < e:
        c = buf[i]
        if _is_digit(c):
            any_digit = True
            if nd > 0 or c != 48:
                if nd < 18:
                    mant = mant * 10 + (c - 48)
                    nd += 1
                    if frac:
                        exp10 -= 1
                else:
                    if not frac:
                        exp10 += 1
                    if c != 48:
                        inexact = True
            elif frac:
                exp10 -= 1
        elif c == 95:
            if not _underscore_ok(buf, s, e, i):
                return -1, mant, nd, exp10, inexact, any_digit
        else:
            break
        i += 1
    return i, mant, nd, exp10, inexact, any_digit


@njit(**NUMBA_OPTS)
def _parse_float(buf, s, e, scratch, endp):
    """``float(buf[s:e])`` as Python computes it: ``(code, value)``.

    The grammar is that of ``float()`` on bytes: an optional sign, then digits with
    at most one ``.`` and an optional exponent, or ``inf``, ``infinity`` or ``nan`` in
    any case; ``_`` only between two digits. The value is exact: Clinger's fast path
    where it applies, else ``strtod`` (correctly rounded, as Python's own conversion);
    ``_NUMBER_PYTHON`` when ``strtod`` does not read the whole token.
    """
    if s >= e:
        return _NUMBER_BAD, 0.0
    i = s
    neg = False
    c = buf[i]
    if c == 43 or c == 45:  # + -
        neg = c == 45
        i += 1
        if i >= e:
            return _NUMBER_BAD, 0.0
    c = buf[i]
    if not (_is_digit(c) or c == 46):
        n = e - i
        if n == 3 or n == 8:
            a, b, d = _lower(buf[i]), _lower(buf[i + 1]), _lower(buf[i + 2])
            if n == 3 and a == 110 and b == 97 and d == 110:  # nan
                return _NUMBER_OK, math.copysign(np.nan, -1.0 if neg else 1.0)
            if a == 105 and b == 110 and d == 102:  # inf
                if n == 8:
                    for k, want in enumerate((105, 110, 105, 116, 121)):  # inity
                        if _lower(buf[i + 3 + k]) != want:
                            return _NUMBER_BAD, 0.0
                return _NUMBER_OK, -np.inf if neg else np.inf
        return _NUMBER_BAD, 0.0
    i, mant, nd, exp10, inexact, any_digit = _digits(buf, s, e, i, False, 0, 0, 0, False, False)
    if i >= 0 and i < e and buf[i] == 46:  # .
        i, mant, nd, exp10, inexact, any_digit = _digits(
            buf, s, e, i + 1, True, mant, nd, exp10, inexact, any_digit
        )
    if i < 0:
        return _NUMBER_BAD, 0.0
    if not any_digit:
        return _NUMBER_BAD, 0.0
    if i < e and (buf[i] == 101 or buf[i] == 69):  # e E
        i += 1
        eneg = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            eneg = buf[i] == 45
            i += 1
        ev = 0
        edigit = False
        while i < e:
            c = buf[i]
            if _is_digit(c):
                edigit = True
                if ev < 100_000_000:
                    ev = ev * 10 + (c - 48)
            elif c == 95:
                if not _underscore_ok(buf, s, e, i):
                    return _NUMBER_BAD, 0.0
            else:
                break
            i += 1
        if not edigit:
            return _NUMBER_BAD, 0.0
        exp10 += -ev if eneg else ev
    if i != e:
        return _NUMBER_BAD, 0.0
    if not inexact:
        if mant == 0:
            return _NUMBER_OK, -0.0 if neg else 0.0
        if mant <= 9007199254740992:  # 2**53: the mantissa is an exact double
            if 0 <= exp10 <= 22:
                v = float(mant) * _POW10[exp10]
                return _NUMBER_OK, -v if neg else v
            if -22 <= exp10 < 0:
                v = float(mant) / _POW10[-exp10]
                return _NUMBER_OK, -v if neg else v
    # strtod on a copy without underscores, ended by a NUL
    if e - s + 1 > scratch.size:
        return _NUMBER_PYTHON, 0.0
    n = 0
    for k in range(s, e):
        if buf[k] != 95:
            scratch[n] = buf[k]
            n += 1
    scratch[n] = 0
    v = _strtod(scratch.ctypes, endp.ctypes)
    if endp[0] - scratch.ctypes.data != n:
        return _NUMBER_PYTHON, 0.0
    return _NUMBER_OK, v


@njit(**NUMBA_INLINE)
def _parse_int(buf, s, e):
    """``int(buf[s:e])`` as Python reads it, in int64: ``(code, value)``; code 0 read,
    1 not an integer, 2 beyond int64."""
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    v = 0
    nd = 0
    over = False
    while i < e:
        c = buf[i]
        if _is_digit(c):
            d = c - 48
            if v > (_INT64_MAX - d) // 10:
                over = True
            else:
                v = v * 10 + d
            nd += 1
        elif c == 95:
            if not _underscore_ok(buf, s, e, i):
                return 1, 0
        else:
            return 1, 0
        i += 1
    if nd == 0:
        return 1, 0
    if over:
        return 2, 0
    return 0, -v if neg else v


@njit(**NUMBA_OPTS)
def _fast_pair(buf, p, end, nul):
    """``index:value`` at ``p`` in its plainest form, read in one pass: digits, a colon,
    then a decimal (sign, digits, point, exponent) with at most 18 significant digits
    that Clinger's fast path converts exactly, ended by whitespace, the line's end or a
    comment. ``(True, index, value, end of token)``; ``(False, ...)`` for any other
    token, which the general path reads (and judges)."""
    q = p
    idx = 0
    while q < end and _is_digit(buf[q]):
        idx = idx * 10 + (buf[q] - 48)
        q += 1
    if q - p > 18 or q >= end or buf[q] != 58:
        return False, 0, 0.0, q
    q += 1
    neg = False
    if q < end and (buf[q] == 45 or buf[q] == 43):
        neg = buf[q] == 45
        q += 1
    mant = 0
    nd = 0
    exp10 = 0
    digits = 0
    while q < end and _is_digit(buf[q]):
        c = buf[q] - 48
        if nd > 0 or c != 0:
            mant = mant * 10 + c
            nd += 1
        digits += 1
        q += 1
    if q < end and buf[q] == 46:
        q += 1
        while q < end and _is_digit(buf[q]):
            c = buf[q] - 48
            if nd > 0 or c != 0:
                mant = mant * 10 + c
                nd += 1
            exp10 -= 1
            digits += 1
            q += 1
    if digits == 0 or nd > 18:
        return False, 0, 0.0, q
    if q < end and (buf[q] == 101 or buf[q] == 69):
        q += 1
        eneg = False
        if q < end and (buf[q] == 45 or buf[q] == 43):
            eneg = buf[q] == 45
            q += 1
        ev = 0
        edigits = 0
        while q < end and _is_digit(buf[q]) and edigits < 6:
            ev = ev * 10 + (buf[q] - 48)
            edigits += 1
            q += 1
        if edigits == 0:
            return False, 0, 0.0, q
        exp10 += -ev if eneg else ev
    if q < end:
        c = buf[q]
        if not (_is_space(c) or (c == 35 and not nul)):
            return False, 0, 0.0, q
    if mant == 0:
        return True, idx, -0.0 if neg else 0.0, q
    if mant > 9007199254740992 or exp10 > 22 or exp10 < -22:
        return False, 0, 0.0, q
    v = float(mant) * _POW10[exp10] if exp10 >= 0 else float(mant) / _POW10[-exp10]
    return True, idx, -v if neg else v, q


# -- svmlight: the tokeniser ---------------------------------------------------------------

# fields of the parser's state (an int64 array, kept from one call to the next)
_POS, _ROW, _NNZ, _LINE, _NPEND, _MIN, _MAX, _QIDMODE, _FIRST = range(9)
_ERRLINE, _ERRS, _ERRE, _ERRA, _ERRB, _OVERLINE, _NSTATE = range(9, 16)

# what a call ends with
_DONE = 0  # the end of the bytes, or the rows asked for
_FULL_ROWS = 1  # no room for one more row
_FULL_NNZ = 2  # no room for one more entry
_FULL_PENDING = 3  # numbers left to Python's float(): convert them, then go on
_WIDE = 4  # an index or an entry count past the index type: widen to int64, go on
# errors
_E_LABEL = 10
_E_MULTILABEL = 11
_E_QID_COLON = 12
_E_QID = 13
_E_COLON = 14
_E_INDEX = 15
_E_INVALID = 16
_E_HUGE = 17
_E_ORDER = 18
_E_VALUE = 19
_E_WIDTH = 20
_E_QID_MIXED = 21


@njit(**NUMBA_INLINE)
def _room(idx, col, n_features, auto, line, index_limit, nnz, data, st):
    """Whether index ``idx`` (column ``col``) can be stored as entry ``nnz``: ``_DONE`` if
    so, else the status that stops the scan (too wide for ``n_features``, past the index
    type, or no room left in ``data``). With ``auto``, an index equal to ``n_features``
    is too wide only if the file turns out zero-based: its first line is noted."""
    if n_features >= 0:
        if auto == 1 and idx == n_features:
            if st[_OVERLINE] == 0:
                st[_OVERLINE] = line
        elif col >= n_features:
            st[_ERRA] = idx
            return _E_WIDTH
    if col > index_limit or nnz >= index_limit:
        return _WIDE
    if nnz >= data.shape[0]:
        return _FULL_NNZ
    return _DONE


@njit(**NUMBA_INLINE)
def _index_status(idx, prev, base, st):
    """``_DONE`` if feature index ``idx`` may follow ``prev`` on a line (indices of a
    one-based file start at 1, and rise), else the error (noted in ``st``)."""
    if idx < 0 or (base == 1 and idx == 0):
        st[_ERRA] = idx
        return _E_INVALID
    if idx <= prev:
        st[_ERRA], st[_ERRB] = idx, prev
        return _E_ORDER
    return _DONE


@njit(**NUMBA_INLINE)
def _put(data, indices, nnz, value, col):
    """Store ``value`` at column ``col`` as entry ``nnz``; the entries then held."""
    data[nnz] = value
    indices[nnz] = col
    return nnz + 1


@njit(**NUMBA_INLINE)
def _is_space(c):
    """bytes.split()'s whitespace: space, \\t, \\n, \\v, \\f, \\r."""
    return c == 32 or 9 <= c <= 13


@njit(**NUMBA_OPTS)
def _parse_svmlight(buf, end, options, out, work, st):
    """Parse svmlight lines of ``buf[st[_POS]:end]`` into ``out``; a status code.

    Each line as scikit-learn's ``_load_svmlight_file`` reads it: cut at the first
    ``#`` unless a NUL byte comes before it, split at ASCII whitespace; no token: no
    example; else a label (unless labels are not read), an optional ``qid:N`` first,
    then ``index:value`` pairs with indices strictly increasing. Stops at ``end``, when
    ``max_rows`` rows are held, or at a line it cannot finish (a full array, an index
    too wide for the index type: the line is undone and the status says why), or at
    the first error (the status, and where in ``st``).

    Parameters
    ----------
    buf : uint8 array
    end : int
    options : tuple of int
        ``(max_rows, base, auto, n_features, index_limit, read_labels, want_qid)``;
        ``n_features < 0``: none given.
    out : tuple
        ``(data, indices, indptr, y, qid)``, filled from ``st[_NNZ]`` and ``st[_ROW]``.
    work : tuple
        ``(pending, scratch, endp)``: tokens left to Python's ``float()`` as rows
        ``(kind, target, start, end)``; a scratch buffer and a pointer for ``strtod``.
    st : int64 array of ``_NSTATE`` fields
    """
    max_rows, base, auto, n_features, index_limit, read_labels, want_qid = options
    data, indices, indptr, y, qid = out
    pending, scratch, endp = work
    pos = st[_POS]
    row = st[_ROW]
    nnz = st[_NNZ]
    line = st[_LINE]
    npend = st[_NPEND]
    low = st[_MIN]
    high = st[_MAX]
    status = _DONE
    while pos < end and row < max_rows:
        line_nnz = nnz
        line_pend = npend
        ntok = 0
        nul = False
        prev = -1
        label = np.nan
        has_qid = False
        qid_value = 0
        p = pos
        while True:
            while p < end and buf[p] != 10 and _is_space(buf[p]):
                p += 1
            if p >= end or buf[p] == 10:
                break
            if buf[p] == 35 and not nul:  # a comment: the rest of the line
                while p < end and buf[p] != 10:
                    p += 1
                break
            if ntok > 0 and _is_digit(buf[p]):
                ok, idx, value, q = _fast_pair(buf, p, end, nul)
                if ok:
                    ntok = 2
                    status = _index_status(idx, prev, base, st)
                    if status != _DONE:
                        break
                    col = idx - base
                    status = _room(idx, col, n_features, auto, line, index_limit, nnz, data, st)
                    if status != _DONE:
                        break
                    nnz = _put(data, indices, nnz, value, col)
                    prev, low, high = idx, min(low, idx), max(high, idx)
                    p = q
                    continue
            t0 = p
            colon = -1
            while p < end:
                c = buf[p]
                if _is_space(c) or (c == 35 and not nul):
                    break
                if c == 0:
                    nul = True
                elif c == 58 and colon < 0:
                    colon = p
                p += 1
            t1 = p
            if ntok == 0:
                if row >= y.shape[0]:
                    status = _FULL_ROWS
                    break
                if read_labels == 1 or colon < 0:
                    ntok = 1
                    if read_labels == 0:  # a placeholder, not read
                        continue
                    for k in range(t0, t1):
                        if buf[k] == 44:  # a comma: several labels
                            status = _E_MULTILABEL
                            break
                    if status != _DONE:
                        st[_ERRS], st[_ERRE] = t0, t1
                        break
                    code, label = _parse_float(buf, t0, t1, scratch, endp)
                    if code == _NUMBER_BAD:
                        status = _E_LABEL
                        st[_ERRS], st[_ERRE] = t0, t1
                        break
                    if code == _NUMBER_PYTHON:
                        if npend >= pending.shape[0]:
                            status = _FULL_PENDING
                            break
                        pending[npend, 0], pending[npend, 1] = 0, row
                        pending[npend, 2], pending[npend, 3] = t0, t1
                        npend += 1
                    continue
                ntok = 1  # no label: this token is the first feature
            if (
                ntok == 1
                and t1 - t0 >= 3
                and buf[t0] == 113
                and buf[t0 + 1] == 105
                and buf[t0 + 2] == 100
            ):  # qid
                ntok = 2
                if colon < 0:
                    status = _E_QID_COLON
                    st[_ERRS], st[_ERRE] = t0, t1
                    break
                if want_qid:
                    code, qid_value = _parse_int(buf, colon + 1, t1)
                    if code != 0:
                        status = _E_QID
                        st[_ERRS], st[_ERRE] = colon + 1, t1
                        break
                    has_qid = True
                continue
            ntok = 2
            if colon < 0:
                status = _E_COLON
                st[_ERRS], st[_ERRE] = t0, t1
                break
            code, idx = _parse_int(buf, t0, colon)
            if code != 0:
                status = _E_INDEX if code == 1 else _E_HUGE
                st[_ERRS], st[_ERRE] = t0, colon
                break
            status = _index_status(idx, prev, base, st)
            if status != _DONE:
                break
            code, value = _parse_float(buf, colon + 1, t1, scratch, endp)
            if code == _NUMBER_BAD:
                status = _E_VALUE
                st[_ERRS], st[_ERRE], st[_ERRA] = colon + 1, t1, idx
                break
            col = idx - base
            status = _room(idx, col, n_features, auto, line, index_limit, nnz, data, st)
            if status != _DONE:
                break
            if code == _NUMBER_PYTHON:
                if npend >= pending.shape[0]:
                    status = _FULL_PENDING
                    break
                pending[npend, 0], pending[npend, 1] = 1, nnz
                pending[npend, 2], pending[npend, 3] = colon + 1, t1
                npend += 1
            nnz = _put(data, indices, nnz, value, col)
            prev, low, high = idx, min(low, idx), max(high, idx)
        if status == _DONE and ntok > 0 and want_qid:
            if st[_QIDMODE] < 0:
                st[_QIDMODE] = 1 if has_qid else 0
            elif st[_QIDMODE] != (1 if has_qid else 0):
                status = _E_QID_MIXED
        if status != _DONE:
            if status < _E_LABEL:  # undo the line, to be read again
                nnz = line_nnz
                npend = line_pend
            else:
                st[_ERRLINE] = line
            break
        if ntok > 0:
            if row == 0:
                st[_FIRST] = line
            y[row] = label
            if want_qid:
                qid[row] = qid_value
            row += 1
            indptr[row] = nnz
        if p < end:  # past the line end
            p += 1
            line += 1
        pos = p
    st[_POS] = pos
    st[_ROW] = row
    st[_NNZ] = nnz
    st[_LINE] = line
    st[_NPEND] = npend
    st[_MIN] = low
    st[_MAX] = high
    return status


def _shown(raw):
    """A token as an error message shows it: text, at most 40 characters."""
    text = raw.decode("latin-1")
    return repr(text if len(text) <= 40 else text[:37] + "...")


class _SvmlightReader:
    """Examples of svmlight bytes, fed block by block, taken as CSR chunks.

    Parameters
    ----------
    n_features : int or None
    zero_based : bool or "auto"
        "auto": indices are stored as written (the caller shifts them).
    query_id : bool
    labels : bool
        False: the first token of a line is a placeholder, not read (or absent).
    """

    def __init__(self, n_features=None, zero_based="auto", query_id=False, labels=True):
        self.n_features = n_features
        self.zero_based = zero_based
        self.query_id = bool(query_id)
        self.labels = bool(labels)
        self.st = np.zeros(_NSTATE, dtype=np.int64)
        self.st[_LINE] = 1
        self.st[_MIN] = _INT64_MAX
        self.st[_MAX] = -1
        self.st[_QIDMODE] = -1
        self.index_dtype = np.int32
        self.work = (
            np.zeros((256, 4), dtype=np.int64),
            np.zeros(1024, dtype=np.uint8),
            np.zeros(1, dtype=np.int64),
        )
        self.out = None
        self.nnz_per_row = None

    # -- arrays ----------------------------------------------------------------------
    def _allocate(self, rows, nnz):
        rows, nnz = max(int(rows), 1), max(int(nnz), 1)
        self.out = (
            np.empty(nnz, dtype=np.float64),
            np.empty(nnz, dtype=self.index_dtype),
            np.zeros(rows + 1, dtype=self.index_dtype),
            np.empty(rows, dtype=np.float64),
            np.empty(rows if self.query_id else 0, dtype=np.int64),
        )

    def _grow(self, rows=None, nnz=None, dtype=None):
        """Larger arrays (or wider indices), holding what was read."""
        data, indices, indptr, y, qid = self.out
        used_rows, used_nnz = int(self.st[_ROW]), int(self.st[_NNZ])

        def resized(a, n, used, dt=None):
            b = np.empty(n, dtype=dt or a.dtype)
            b[:used] = a[:used]
            return b

        if nnz is not None or dtype is not None:
            if nnz is not None:
                data = resized(data, nnz, used_nnz)
            indices = resized(indices, nnz or indices.size, used_nnz, dtype)
        if rows is not None:
            y = resized(y, rows, used_rows)
            if self.query_id:
                qid = resized(qid, rows, used_rows)
        if rows is not None or dtype is not None:
            indptr = resized(indptr, (rows or y.size) + 1, used_rows + 1, dtype)
        self.out = (data, indices, indptr, y, qid)

    # -- parsing ---------------------------------------------------------------------
    def feed(self, buf, max_rows, expected_bytes=None):
        """Parse ``buf`` (all of it is lines, the last maybe without its end) from the
        position in the state until its end or until ``max_rows`` rows are held."""
        st = self.st
        if self.out is None:
            self._first_allocation(buf, max_rows, expected_bytes)
        base = 1 if self.zero_based is False else 0
        auto = 1 if self.zero_based == "auto" else 0
        n_features = -1 if self.n_features is None else int(self.n_features)
        while True:
            limit = _INT32_MAX - 1 if self.index_dtype == np.int32 else _INT64_MAX - 1
            options = (
                int(max_rows),
                base,
                auto,
                n_features,
                limit,
                int(self.labels),
                int(self.query_id),
            )
            status = _parse_svmlight(buf, buf.size, options, self.out, self.work, st)
            if st[_NPEND]:
                self._convert_pending(buf)
            if status == _DONE:
                return
            if status == _FULL_ROWS:
                self._grow(rows=2 * self.out[3].size)
            elif status == _FULL_NNZ:
                self._grow(nnz=2 * self.out[0].size)
            elif status == _WIDE:
                self.index_dtype = np.int64
                self._grow(dtype=np.int64)
            elif status != _FULL_PENDING:
                raise self._error(status, buf)

    def _first_allocation(self, buf, max_rows, expected_bytes):
        """Room for the rows of this block (or of the whole file, when its size is
        known), at the density of entries of this block."""
        sample = min(buf.size, 1 << 22)
        lines, colons = _count_lines_and_colons(buf, sample)
        total = max(expected_bytes or 0, buf.size)
        scale = total / sample if sample else 1.0
        rows = min(max_rows, int((lines + 1) * scale * 1.02) + 16)
        self._allocate(rows, int(rows * colons / (lines + 1) * 1.02) + 64)

    def _convert_pending(self, buf):
        data, y = self.out[0], self.out[3]
        pending = self.work[0]
        for kind, target, s, e in pending[: self.st[_NPEND]].tolist():
            value = float(buf[s:e].tobytes())
            (y if kind == 0 else data)[target] = value
        self.st[_NPEND] = 0

    def _error(self, status, buf):
        st = self.st
        line = int(st[_ERRLINE])
        token = _shown(buf[st[_ERRS] : st[_ERRE]].tobytes())
        a, b = int(st[_ERRA]), int(st[_ERRB])
        messages = {
            _E_LABEL: f"the label {token} is not a number",
            _E_MULTILABEL: f"the label {token} is a list of labels (multilabel files are "
            "not supported)",
            _E_QID_COLON: f"{token} is not qid:N",
            _E_QID: f"the query id {token} is not an integer",
            _E_COLON: f"{token} is not index:value",
            _E_INDEX: f"the feature index {token} is not an integer",
            _E_HUGE: f"Invalid index {token} in SVMlight/LibSVM data file (beyond 64 bits)",
            _E_INVALID: f"Invalid index {a} in SVMlight/LibSVM data file"
            + (" (zero_based=False: the first feature is 1)" if a == 0 else ""),
            _E_ORDER: "Feature indices in SVMlight/LibSVM data file should be sorted and "
            f"unique (index {a} after {b})",
            _E_VALUE: f"the value {token} of feature {a} is not a number",
            _E_WIDTH: f"feature index {a} is beyond n_features={self.n_features}"
            + ("" if self.zero_based is not False else " (indices start at 1)"),
            _E_QID_MIXED: "a line without qid among lines with one, or the other way round "
            "(query_id=True needs a qid on every line)",
        }
        return ValueError(f"line {line}: {messages[status]}")

    # -- results ---------------------------------------------------------------------
    @property
    def rows(self):
        return int(self.st[_ROW])

    def take(self, width=None):
        """The rows held, as a :class:`Chunk` (``width``: the column count, else that
        of the held indices), and empty arrays for the next rows."""
        st = self.st
        rows, nnz = int(st[_ROW]), int(st[_NNZ])
        data, indices, indptr, y, qid = self.out
        first = int(st[_FIRST])
        if width is None:
            width = self.n_features if self.n_features is not None else 1
            if nnz:
                width = max(width, int(indices[:nnz].max()) + 1)
        X = _csr(data[:nnz], indices[:nnz], indptr[: rows + 1], rows, width)
        labels = y[:rows] if self.labels else None
        qids = qid[:rows] if self.query_id else None
        if rows:
            self.nnz_per_row = nnz / rows
        st[_ROW] = st[_NNZ] = 0
        self.out = None
        self.index_dtype = np.int32  # each chunk as narrow as its own indices allow
        return Chunk(X, labels, first), qids

    def next_allocation(self, max_rows, buf):
        """Arrays for the next chunk, sized by what the previous ones held."""
        if self.nnz_per_row is None:
            self._first_allocation(buf, max_rows, None)
        else:
            rows = max(min(max_rows, 1 << 16), 1)
            self._allocate(rows, int(rows * self.nnz_per_row * 1.05) + 64)


def _csr(data, indices, indptr, rows, width):
    """A CSR matrix of these arrays, taken as they are (sorted, no duplicates)."""
    if width > _INT32_MAX or rows > _INT32_MAX:
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    X = sp.csr_matrix((rows, width), dtype=np.float64)
    X.data, X.indices, X.indptr = data, indices, indptr
    X.has_sorted_indices = True
    X.has_canonical_format = True
    return X


def _check_options(n_features, zero_based):
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
            raise ValueError(f"n_features must be an integer >= 1 or None, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be an integer >= 1 or None, got {n_features}")
    if not (isinstance(zero_based, bool) or zero_based == "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")


def _read_svmlight(source, n_features, zero_based, query_id, labels, block_size):
    """(X, y, qid, zero_based as decided) of a whole svmlight source."""
    _check_options(n_features, zero_based)
    reader = _SvmlightReader(n_features, zero_based, query_id, labels)
    expected = None
    if _is_path(source) and Path(source).suffix.lower() not in _DECOMPRESSORS:
        expected = os.path.getsize(source) if os.path.isfile(source) else None
    for block in _source_blocks(source, block_size):
        reader.st[_POS] = 0
        reader.feed(block, _INT64_MAX, expected)
    if reader.out is None:
        reader._allocate(1, 1)
    st = reader.st
    nnz = int(st[_NNZ])
    based = zero_based
    if zero_based == "auto":
        # load_svmlight_file's rule: one-based unless some index is 0 (or none is held)
        based = not (nnz and st[_MIN] > 0)
    data, indices, indptr, y, qid = reader.out
    if zero_based == "auto" and not based:
        indices[:nnz] -= 1
    if n_features is not None:
        if zero_based == "auto" and based and st[_OVERLINE]:
            raise ValueError(
                f"line {int(st[_OVERLINE])}: feature index {n_features} is beyond "
                f"n_features={n_features}"
            )
        width = int(n_features)
    else:
        width = int(indices[:nnz].max()) + 1 if nnz else 1
    rows = int(st[_ROW])
    # trim what the estimate left over, when it is much
    if data.size > nnz + nnz // 8 + 1024:
        data, indices = data[:nnz].copy(), indices[:nnz].copy()
    if y.size > rows + rows // 8 + 1024:
        y, indptr = y[:rows].copy(), indptr[: rows + 1].copy()
        qid = qid[:rows].copy() if query_id else qid
    X = _csr(data[:nnz], indices[:nnz], indptr[: rows + 1], rows, width)
    if query_id:  # none when no line has one, as scikit-learn
        qid = qid[:rows] if st[_QIDMODE] == 1 else np.zeros(0, dtype=np.int64)
    return X, (y[:rows] if labels else None), (qid if query_id else None), based


def read_svmlight(
    source,
    n_features=None,
    *,
    zero_based="auto",
    query_id=False,
    labels=True,
    block_size=BLOCK_SIZE,
):
    """An svmlight / LIBSVM file as ``(X, y)``, or ``(X, y, qid)``: as
    :func:`sklearn.datasets.load_svmlight_file` with ``dtype=np.float64`` gives it.

    Parameters
    ----------
    source : str, path-like, bytes or binary file object
        A path (``.gz``, ``.bz2`` and ``.xz`` are decompressed), or the file's bytes.
    n_features : int >= 1, optional
        The number of columns; an index beyond it is an error. None: the largest index
        read, plus one (one column when there are no entries, as scikit-learn).
    zero_based : bool or "auto", default="auto"
        Whether the first feature's index is 0 (True) or 1 (False: an index 0 is an
        error). "auto": one-based unless some index is 0, decided over the whole file.
    query_id : bool, default=False
        Also return the ``qid`` of each line: every line must have one, or none (then
        the array is empty, as scikit-learn's).
    labels : bool, default=True
        False: the first token of a line is a placeholder label, not read (any token;
        a line may also start with its first ``index:value``), and ``y`` is None.
    block_size : int, default=BLOCK_SIZE
        Bytes read from a file at a time.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), float64
        Indices int32 when they fit, else int64.
    y : ndarray of shape (n_samples,), float64, or None
    qid : ndarray of shape (n_samples,) or (0,), int64
        With ``query_id=True`` only.

    Raises
    ------
    FileNotFoundError
        No file at a path.
    ValueError
        Bytes that are not svmlight (the line and the reason), a file that cannot be
        decompressed, an index beyond ``n_features``, or a bad parameter.
    """
    X, y, qid, _ = _read_svmlight(source, n_features, zero_based, query_id, labels, block_size)
    return (X, y, qid) if query_id else (X, y)


def _svmlight_chunks(source, chunk_size, n_features, zero_based, labels, block_size, on_read=None):
    """Chunks of at most ``chunk_size`` examples; ``zero_based`` True or False."""
    reader = _SvmlightReader(n_features, zero_based, False, labels)
    width = n_features
    for block in _source_blocks(source, block_size, on_read):
        reader.st[_POS] = 0
        while reader.st[_POS] < block.size:
            if reader.out is None:
                reader.next_allocation(chunk_size, block)
            reader.feed(block, chunk_size)
            if reader.rows == chunk_size:
                yield reader.take(width)[0]
    if reader.out is not None and reader.rows:
        yield reader.take(width)[0]


# -- CSV ---------------------------------------------------------------------------------


@njit(**NUMBA_OPTS)
def _clean_csv(buf, out, lines, line):
    """The lines of ``buf`` with something before any ``#``, each cut at its ``#``, and
    their 1-based numbers (from ``line``) in ``lines``: ``(size, rows, lines read,
    copied)``. Nothing is copied while nothing is cut or dropped: then the rows are
    ``buf[:size]`` itself, else ``out[:size]``."""
    end = buf.size
    n = 0
    rows = 0
    read = 0
    p = 0
    copied = False
    while p < end:
        start = p
        while p < end:
            c = buf[p]
            if c == 10 or c == 35:
                break
            p += 1
        stop = p  # the end of what the line holds
        while p < end and buf[p] != 10:  # a comment: skipped
            p += 1
        content = False
        for k in range(start, stop):
            if not _is_space(buf[k]):
                content = True
                break
        whole = content and stop == p
        if not copied and not whole:
            out[:start] = buf[:start]
            n = start
            copied = True
        if content:
            lines[rows] = line + read
            rows += 1
            if copied:
                out[n : n + stop - start] = buf[start:stop]
                n += stop - start
                out[n] = 10
                n += 1
        if p < end:
            p += 1
        read += 1
    return (n if copied else end), rows, read, copied


_NUMBER = re.compile(
    rb"\s*\"?\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)\s*\"?\s*",
    re.IGNORECASE,
)


def _csv_diagnosis(text, lines, width, reason):
    """The first bad row of cleaned CSV ``text``: a ValueError naming its line."""
    for row, raw in enumerate(text.split(b"\n")[: len(lines)]):
        cells = raw.split(b",")
        if len(cells) != width:
            return ValueError(
                f"line {lines[row]}: {len(cells)} values, where the first row has {width}"
            )
        for k, cell in enumerate(cells):
            if not _NUMBER.fullmatch(cell):
                return ValueError(
                    f"line {lines[row]}: the value {_shown(cell.strip())} in column {k + 1} "
                    "is not a number"
                )
    first = lines[0] if len(lines) else "?"
    return ValueError(f"in the lines from {first}: {reason}")


def _csv_tables(source, skip_header, block_size, on_read=None):
    """The rows of a numeric CSV source as ``(float64 table, line numbers)`` pieces."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    width = None
    line = 1
    options = None
    for block in _source_blocks(source, block_size, on_read):
        body = block
        if skip_header and line == 1:
            body = block[_after_first_newline(block) :]
            line = 2
        out = np.empty(body.size + 1, dtype=np.uint8)
        lines = np.empty(body.size // 2 + 2, dtype=np.int64)  # a row takes 2 bytes or more
        n, rows, read, copied = _clean_csv(body, out, lines, line)
        line += read
        if rows == 0:
            continue
        text = out[:n] if copied else body
        lines = lines[:rows]
        if width is None:
            first = text[: _after_first_newline(text)].tobytes().rstrip(b"\r\n")
            width = first.count(b",") + 1
            names = [f"c{k}" for k in range(width)]
            # pyarrow's blocks must hold a whole row: room for rows four times the first
            arrow_block = max(_ARROW_BLOCK, 4 * (len(first) + 1))
            options = (
                pacsv.ReadOptions(column_names=names, block_size=arrow_block, use_threads=True),
                pacsv.ParseOptions(delimiter=","),
                pacsv.ConvertOptions(
                    column_types=dict.fromkeys(names, pa.float64()),
                    null_values=[],
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                ),
            )
        read_options, parse_options, convert_options = options
        done = 0
        # the text in memory of Arrow's own: the parser's threads may drop the last
        # reference to it after an error, even while Python exits, and a buffer of a
        # Python object would need the interpreter then (it aborted the process)
        owned = pa.allocate_buffer(text.size)
        np.frombuffer(owned, dtype=np.uint8)[:] = text
        try:
            reader = pacsv.open_csv(
                pa.BufferReader(owned),
                read_options=read_options,
                parse_options=parse_options,
                convert_options=convert_options,
            )
            for batch in reader:
                table = np.asarray(batch.to_tensor(row_major=True))
                yield table, lines[done : done + batch.num_rows]
                done += batch.num_rows
        except pa.ArrowInvalid as exc:
            rest = text.tobytes().split(b"\n", done)[-1] if done else text.tobytes()
            raise _csv_diagnosis(rest, lines[done:], width, str(exc)) from None


@njit(**NUMBA_OPTS)
def _after_first_newline(buf):
    for i in range(buf.size):
        if buf[i] == 10:
            return i + 1
    return buf.size


def _split_label(tables, label_column):
    """(X, y) of the rows of ``tables`` stacked: ``y`` their column ``label_column``,
    ``X`` the others (None: no label, every column is a feature). One copy."""
    width = tables[0].shape[1]
    rows = sum(t.shape[0] for t in tables)
    if label_column is None:
        if len(tables) == 1:
            return tables[0], None
        return np.concatenate(tables), None
    if width < 2:
        raise ValueError("a CSV file needs a label column and at least one feature")
    if not -width <= label_column < width:
        raise ValueError(f"label_column={label_column} is out of range for rows of {width} values")
    col = label_column % width
    X = np.empty((rows, width - 1))
    y = np.empty(rows)
    start = 0
    for table in tables:
        stop = start + table.shape[0]
        X[start:stop, :col] = table[:, :col]
        X[start:stop, col:] = table[:, col + 1 :]
        y[start:stop] = table[:, col]
        start = stop
    return X, y


def _check_label_column(label_column):
    if label_column is not None and (
        isinstance(label_column, bool) or not isinstance(label_column, int | np.integer)
    ):
        raise ValueError(f"label_column must be an integer or None, got {label_column!r}")


def read_csv(source, *, label_column=-1, skip_header=False, block_size=CSV_BLOCK_SIZE):
    """A numeric CSV file as ``(X, y)``: dense float64 arrays, ``y`` None without labels.

    Lines of nothing but whitespace and comments (``#`` to the end of the line) are
    skipped, as :func:`numpy.loadtxt` skips them.

    Parameters
    ----------
    source : str, path-like, bytes or binary file object
        A path (``.gz``, ``.bz2`` and ``.xz`` are decompressed), or the file's bytes.
    label_column : int or None, default=-1
        The column of the label (negative: from the end); None: there is no label,
        every column is a feature.
    skip_header : bool, default=False
        The first line names the columns.
    block_size : int, default=CSV_BLOCK_SIZE
        Bytes read from a file at a time (pyarrow parses each block in threads).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None

    Raises
    ------
    FileNotFoundError
        No file at a path.
    ValueError
        A row of another length than the first, a value that is not a number (each
        naming its line), no feature column, a bad ``label_column``, or a file that
        cannot be decompressed.
    """
    _check_label_column(label_column)
    tables = [table for table, _ in _csv_tables(source, skip_header, block_size)]
    if not tables:
        return np.zeros((0, 0)), (None if label_column is None else np.zeros(0))
    return _split_label(tables, label_column)


def _csv_chunks(source, chunk_size, label_column, skip_header, block_size, on_read=None):
    held, lines, count = [], [], 0  # rows read and not yet given, and their lines
    for table, rows in _csv_tables(source, skip_header, block_size, on_read):
        held.append(table)
        lines.append(rows)
        count += table.shape[0]
        while count >= chunk_size:
            take, first, taken = [], None, 0
            while taken < chunk_size:
                k = min(chunk_size - taken, held[0].shape[0])
                take.append(held[0][:k])
                first = int(lines[0][0]) if first is None else first
                held[0], lines[0] = held[0][k:], lines[0][k:]
                if held[0].shape[0] == 0:
                    held.pop(0)
                    lines.pop(0)
                taken += k
            X, y = _split_label(take, label_column)
            yield Chunk(X, y, first)
            count -= chunk_size
    if count:
        X, y = _split_label(held, label_column)
        yield Chunk(X, y, int(lines[0][0]))


# -- whole files and chunks, either format ---------------------------------------------------


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
        X, y, _, based = _read_svmlight(path, n_features, zero_based, False, labels, block_size)
        return Dataset(X, y, fmt, based)
    checked_file(path)
    X, y = read_csv(
        path,
        label_column=label_column,
        skip_header=skip_header,
        block_size=block_size or CSV_BLOCK_SIZE,
    )
    return Dataset(X, y, fmt, None)


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
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer):
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size}")
    if _is_path(path):
        checked_file(path)  # now, not when the first chunk is asked for
    fmt = data_format(path, fmt)
    if fmt == "svmlight":
        if not isinstance(zero_based, bool):
            raise ValueError(
                f"zero_based must be True or False to read in chunks, got {zero_based!r}"
            )
        _check_options(n_features, zero_based)
        block_size = block_size or BLOCK_SIZE
        return _svmlight_chunks(
            path, int(chunk_size), n_features, zero_based, labels, block_size, on_read
        )
    _check_label_column(label_column)
    checked_file(path)
    block_size = block_size or CSV_BLOCK_SIZE
    return _csv_chunks(path, int(chunk_size), label_column, skip_header, block_size, on_read)
