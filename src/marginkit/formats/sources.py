"""Where the readers' bytes come from: files (decompressed by Python's modules), bytes or
binary file objects, in large blocks that end at a line's end.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

from .._core import NUMBA_OPTS

#: The decompressing readers of a binary file object, by the file name's suffix.
DECOMPRESSORS = {
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
def opened(path, on_read=None):
    """A binary file object over the file at ``path``, decompressing ``.gz``, ``.bz2``
    and ``.xz``; ``on_read(n)``, when given, is called with the bytes read from the
    file on disk (compressed, where it is) as they are read."""
    with open(path, "rb", buffering=0) as raw:
        source = raw if on_read is None else _Counted(raw, on_read)
        decompressed = DECOMPRESSORS.get(Path(path).suffix.lower())
        if decompressed is None:
            yield source
        else:
            with decompressed(source) as f:
                yield f


#: What Python's decompressors raise on a damaged or truncated file.
_DECOMPRESSION_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


def is_path(source):
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


def source_blocks(source, block_size, on_read=None):
    """Blocks of a path, of bytes, or of a binary file object (see :func:`_blocks`); a
    path's reads reported to ``on_read`` (:func:`opened`)."""
    if is_path(source):
        path = checked_file(source)
        compressed = path.suffix.lower() in DECOMPRESSORS
        with opened(path, on_read) as f:
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
            yield from source_blocks(data, block_size)
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


def shown(raw):
    """A token as an error message shows it: text, at most 40 characters."""
    text = raw.decode("latin-1")
    return repr(text if len(text) <= 40 else text[:37] + "...")


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
