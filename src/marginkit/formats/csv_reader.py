"""The numeric CSV reader: pyarrow's CSV reader over the file's lines, its comments and
blank lines taken out first, the label one column.
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit

from .._core import NUMBA_OPTS
from .numbers import is_space
from .sources import Chunk, shown, source_blocks

#: Bytes of CSV text read at a time (pyarrow parses each block in threads).
CSV_BLOCK_SIZE = 1 << 24


#: Bytes of CSV text each of pyarrow's threads parses at a time.
_ARROW_BLOCK = 1 << 20


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
            if not is_space(buf[k]):
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


NUMBER_TEXT = re.compile(
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
            if not NUMBER_TEXT.fullmatch(cell):
                return ValueError(
                    f"line {lines[row]}: the value {shown(cell.strip())} in column {k + 1} "
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
    for block in source_blocks(source, block_size, on_read):
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


def check_label_column(label_column):
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
    check_label_column(label_column)
    tables = [table for table, _ in _csv_tables(source, skip_header, block_size)]
    if not tables:
        return np.zeros((0, 0)), (None if label_column is None else np.zeros(0))
    return _split_label(tables, label_column)


def csv_chunks(source, chunk_size, label_column, skip_header, block_size, on_read=None):
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
