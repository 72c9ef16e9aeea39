"""The one way marginkit writes a file: :func:`atomic_write`.

Models, checkpoints, experiment results and figures are all written through it. The
new contents go to a temporary file in the target's folder, created exclusively by
:func:`tempfile.mkstemp` (``O_CREAT | O_EXCL`` under an unpredictable name, so that
no file or symbolic link planted there beforehand is opened or followed), flushed to
disk, and renamed over the target. A reader, or a run killed mid-write, sees the old
file or the new one, never half of one; a symbolic link at the target is replaced, not
written through.

This module imports nothing from marginkit: every other module may use it.
"""

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "prepare_output"]


def prepare_output(path, what="the output"):
    """Check, before any work, that ``path`` can be written: it is not a folder, and its
    folder either is a writable folder or can be made (the nearest folder that exists
    above it is writable, and no file stands in the way). Nothing is created here:
    :func:`atomic_write` makes the missing folders when it writes.

    Returns
    -------
    path : pathlib.Path

    Raises
    ------
    ValueError
        One line naming ``what`` and ``path``, and why it cannot be written.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"cannot write {what} to {path}: it is a folder")
    folder = path.parent
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"cannot write {what} to {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {what} to {path}: the folder {existing} is not writable")
    return path


def atomic_write(path, data, *, private=False):
    """Replace the file at ``path`` by ``data``, atomically.

    Parameters
    ----------
    path : str or path-like
        The file to write; missing folders above it are made.
    data : bytes, str or callable
        The contents: bytes, text (written as UTF-8), or a function called as
        ``data(f)`` with the temporary file open for binary writing (to let a library
        write into it, e.g. ``lambda f: fig.savefig(f, format="png")``).
    private : bool, default=False
        Readable by the owner only (mode 0600), as :func:`tempfile.mkstemp` creates
        it; otherwise the file gets the usual permissions (0666 less the umask).

    Returns
    -------
    path : pathlib.Path
        The file written.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        # name the file asked for, not the temporary one
        raise OSError(exc.errno, f"cannot write {path}: {exc.strerror}") from None
    try:
        if not private:
            os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _sync_folder(path.parent)
    return path


def _umask():
    """The process's umask, read without changing it where the system tells it."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it back
    os.umask(mask)
    return mask


def _sync_folder(folder):
    """Make the rename durable (best effort: not every system opens folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
