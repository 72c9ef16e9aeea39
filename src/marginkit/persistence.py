"""Safe persistence of fitted models: :func:`save` and :func:`load`, on top of skops.

A model file is a skops archive (``skops.io``): it stores the estimator's attributes
and arrays as data, and loading it rebuilds only types that are trusted, never running
code that the file names. :func:`load` trusts marginkit's own estimator and state
classes, numpy arrays and the Python built-ins that skops trusts by default; a file that
names any other type (not written by :func:`save`, or altered since) is refused before
anything is built, with the types it names in the error.

The archive holds a small header beside the estimator: the format name and version
and the marginkit version that wrote it. Files of a newer format than this marginkit
reads are refused with a message that says so; there is no older format yet.

Estimators pickle as well (scikit-learn's habit); pickle files run code when loaded, so
only unpickle files you wrote yourself.

Examples
--------
>>> import tempfile, pathlib
>>> import marginkit
>>> from marginkit.datasets import make_sparse_target
>>> X, y, X_test, y_test = make_sparse_target(n_train=500, n_test=200, random_state=0)
>>> clf = marginkit.ALMAClassifier(p=6, alpha=0.5).fit(X, y)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "alma.skops"
>>> marginkit.save(clf, path)
>>> again = marginkit.load(path)
>>> bool((again.predict(X_test) == clf.predict(X_test)).all())
True
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

FORMAT = "marginkit-model"
FORMAT_VERSION = 1


class UntrustedFileError(ValueError):
    """A model file names types that :func:`load` does not trust; nothing was loaded."""


def _own_types():
    """Qualified names of every marginkit class a model file may hold."""
    import marginkit

    from ._engine import KernelState, RowStore
    from ._kernels import Kernel
    from ._pumma_engine import PairState
    from ._state import PNormState
    from .pumma import PUMMAState, _Work

    estimators = [getattr(marginkit, n) for n in marginkit.__all__ if n.endswith("Classifier")]
    states = [KernelState, RowStore, Kernel, PairState, PNormState, PUMMAState, _Work]
    # random_state may be a numpy RandomState (scikit-learn accepts one)
    return {f"{c.__module__}.{c.__qualname__}" for c in estimators + states} | {
        "numpy.random.mtrand.RandomState",
        "numpy.random._mt19937.MT19937",
    }


def _skops():
    try:
        import skops.io as sio
    except ImportError as exc:  # a dependency: only a broken installation lacks it
        raise ImportError(
            "marginkit.save and marginkit.load need skops: pip install skops"
        ) from exc
    return sio


def save(estimator, path) -> None:
    """Write a model (fitted or not) to ``path`` as a skops archive, atomically.

    The file is written beside ``path`` under a temporary name and then renamed, so
    that ``path`` never holds half a model.

    Parameters
    ----------
    estimator : a marginkit estimator
    path : str or path-like
        Conventionally ending in ``.skops``.

    Raises
    ------
    TypeError
        If ``estimator`` is not a marginkit estimator, or uses a callable kernel (a
        function cannot be stored as data; use one of the named kernels).
    """
    if f"{type(estimator).__module__}.{type(estimator).__qualname__}" not in _own_types():
        raise TypeError(
            f"marginkit.save stores marginkit estimators, not {type(estimator).__name__}"
        )
    if callable(getattr(estimator, "kernel", None)):
        raise TypeError(
            "a model with a callable kernel cannot be saved safely (a function is code, "
            "not data); use one of the named kernels, or pickle it"
        )
    from . import __version__

    sio = _skops()
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "marginkit_version": __version__,
        "estimator": estimator,
    }
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            sio.dump(payload, f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path, *, trusted=()):
    """Read a model written by :func:`save`.

    Parameters
    ----------
    path : str or path-like
    trusted : iterable of str, default=()
        Further type names (as in the error of an untrusted file) to trust, for files
        whose source you trust.

    Returns
    -------
    estimator

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    UntrustedFileError
        If the file names types that are not trusted (a ``ValueError``).
    ValueError
        If the file is not a marginkit model file (damaged, or another archive), or
        was written in a newer format than this marginkit reads.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    sio = _skops()
    try:
        names = sio.get_untrusted_types(file=path)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise ValueError(
            f"{path} is not a marginkit model file (cannot be read as a skops archive: {exc})"
        ) from exc
    allowed = _own_types() | set(trusted)
    refused = sorted(set(names) - allowed)
    if refused:
        raise UntrustedFileError(
            f"{path} names types that marginkit does not trust: {', '.join(refused)}. "
            "It was not written by marginkit.save, or was altered since; nothing was "
            "loaded. If you trust its source, pass these names in trusted=."
        )
    try:
        payload = sio.load(path, trusted=list(names))
    except Exception as exc:  # skops raises many kinds on a damaged archive
        raise ValueError(f"{path} is not a marginkit model file ({exc})") from exc
    if not (isinstance(payload, dict) and payload.get("format") == FORMAT):
        raise ValueError(f"{path} is a skops archive but not a marginkit model file")
    version = payload.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"{path}: unknown marginkit model format version {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{path} was written by marginkit {payload.get('marginkit_version')} in model "
            f"format {version}; this marginkit reads formats up to {FORMAT_VERSION}: "
            "upgrade marginkit to load it"
        )
    return payload["estimator"]
