"""The svmlight / LIBSVM reader: a compiled tokeniser from the file's bytes to CSR arrays,
as scikit-learn's load_svmlight_file reads the format.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._core import NUMBA_INLINE, NUMBA_OPTS
from .numbers import (
    INT32_MAX,
    INT64_MAX,
    NUMBER_BAD,
    NUMBER_PYTHON,
    POW10,
    is_digit,
    is_space,
    parse_float,
    parse_int,
)
from .sources import DECOMPRESSORS, Chunk, is_path, shown, source_blocks

#: Bytes of svmlight read from a file at a time (a block is cut at its last line end).
BLOCK_SIZE = 1 << 20


@njit(**NUMBA_OPTS)
def _count_lines_and_colons(buf, end):
    lines = 0
    colons = 0
    for i in range(end):
        c = buf[i]
        lines += c == 10
        colons += c == 58
    return lines, colons


@njit(**NUMBA_OPTS)
def _fast_pair(buf, p, end, nul):
    """``index:value`` at ``p`` in its plainest form, read in one pass: digits, a colon,
    then a decimal (sign, digits, point, exponent) with at most 18 significant digits
    that Clinger's fast path converts exactly, ended by whitespace, the line's end or a
    comment. ``(True, index, value, end of token)``; ``(False, ...)`` for any other
    token, which the general path reads (and judges)."""
    q = p
    idx = 0
    while q < end and is_digit(buf[q]):
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
    while q < end and is_digit(buf[q]):
        c = buf[q] - 48
        if nd > 0 or c != 0:
            mant = mant * 10 + c
            nd += 1
        digits += 1
        q += 1
    if q < end and buf[q] == 46:
        q += 1
        while q < end and is_digit(buf[q]):
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
        while q < end and is_digit(buf[q]) and edigits < 6:
            ev = ev * 10 + (buf[q] - 48)
            edigits += 1
            q += 1
        if edigits == 0:
            return False, 0, 0.0, q
        exp10 += -ev if eneg else ev
    if q < end:
        c = buf[q]
        if not (is_space(c) or (c == 35 and not nul)):
            return False, 0, 0.0, q
    if mant == 0:
        return True, idx, -0.0 if neg else 0.0, q
    if mant > 9007199254740992 or exp10 > 22 or exp10 < -22:
        return False, 0, 0.0, q
    v = float(mant) * POW10[exp10] if exp10 >= 0 else float(mant) / POW10[-exp10]
    return True, idx, -v if neg else v, q


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
            while p < end and buf[p] != 10 and is_space(buf[p]):
                p += 1
            if p >= end or buf[p] == 10:
                break
            if buf[p] == 35 and not nul:  # a comment: the rest of the line
                while p < end and buf[p] != 10:
                    p += 1
                break
            if ntok > 0 and is_digit(buf[p]):
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
                if is_space(c) or (c == 35 and not nul):
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
                    code, label = parse_float(buf, t0, t1, scratch, endp)
                    if code == NUMBER_BAD:
                        status = _E_LABEL
                        st[_ERRS], st[_ERRE] = t0, t1
                        break
                    if code == NUMBER_PYTHON:
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
                    code, qid_value = parse_int(buf, colon + 1, t1)
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
            code, idx = parse_int(buf, t0, colon)
            if code != 0:
                status = _E_INDEX if code == 1 else _E_HUGE
                st[_ERRS], st[_ERRE] = t0, colon
                break
            status = _index_status(idx, prev, base, st)
            if status != _DONE:
                break
            code, value = parse_float(buf, colon + 1, t1, scratch, endp)
            if code == NUMBER_BAD:
                status = _E_VALUE
                st[_ERRS], st[_ERRE], st[_ERRA] = colon + 1, t1, idx
                break
            col = idx - base
            status = _room(idx, col, n_features, auto, line, index_limit, nnz, data, st)
            if status != _DONE:
                break
            if code == NUMBER_PYTHON:
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
        self.st[_MIN] = INT64_MAX
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
            limit = INT32_MAX - 1 if self.index_dtype == np.int32 else INT64_MAX - 1
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
        token = shown(buf[st[_ERRS] : st[_ERRE]].tobytes())
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
    if width > INT32_MAX or rows > INT32_MAX:
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    X = sp.csr_matrix((rows, width), dtype=np.float64)
    X.data, X.indices, X.indptr = data, indices, indptr
    X.has_sorted_indices = True
    X.has_canonical_format = True
    return X


def check_svmlight_options(n_features, zero_based):
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
            raise ValueError(f"n_features must be an integer >= 1 or None, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be an integer >= 1 or None, got {n_features}")
    if not (isinstance(zero_based, bool) or zero_based == "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")


def read_svmlight_source(source, n_features, zero_based, query_id, labels, block_size):
    """(X, y, qid, zero_based as decided) of a whole svmlight source."""
    check_svmlight_options(n_features, zero_based)
    reader = _SvmlightReader(n_features, zero_based, query_id, labels)
    expected = None
    if is_path(source) and Path(source).suffix.lower() not in DECOMPRESSORS:
        expected = os.path.getsize(source) if os.path.isfile(source) else None
    for block in source_blocks(source, block_size):
        reader.st[_POS] = 0
        reader.feed(block, INT64_MAX, expected)
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
    X, y, qid, _ = read_svmlight_source(
        source, n_features, zero_based, query_id, labels, block_size
    )
    return (X, y, qid) if query_id else (X, y)


def svmlight_chunks(source, chunk_size, n_features, zero_based, labels, block_size, on_read=None):
    """Chunks of at most ``chunk_size`` examples; ``zero_based`` True or False."""
    reader = _SvmlightReader(n_features, zero_based, False, labels)
    width = n_features
    for block in source_blocks(source, block_size, on_read):
        reader.st[_POS] = 0
        while reader.st[_POS] < block.size:
            if reader.out is None:
                reader.next_allocation(chunk_size, block)
            reader.feed(block, chunk_size)
            if reader.rows == chunk_size:
                yield reader.take(width)[0]
    if reader.out is not None and reader.rows:
        yield reader.take(width)[0]
