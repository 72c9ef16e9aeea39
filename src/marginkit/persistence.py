"""Safe persistence of fitted models: :func:`save` and :func:`load`, on top of skops.

A model file is a skops archive (``skops.io``): it stores the estimator's attributes
and arrays as data, and loading it rebuilds only types that are trusted, never running
code that the file names. :func:`load` trusts marginkit's own estimator and state
classes, numpy arrays and the Python built-ins that skops trusts by default; a file that
names any other type (not written by :func:`save`, or altered since) is refused before
anything is built, with the types it names in the error.

A saved model holds the model and no more: no spare capacity of growing arrays, and
the voted log only when the model kept it (``keep_corrections``, or ``output="voted"``
at fit time; such a file contains the corrected rows). Saving the same model twice
gives the same bytes: the archive's members are named by their order in the file and
dated 1980-01-01, not by memory addresses and the clock.

Which classes a file may hold is declared by the modules that define them, with
:func:`trusted_type` (every marginkit estimator is declared by its base class); this
module imports none of them.

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

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

FORMAT = "marginkit-model"
FORMAT_VERSION = 1


class UntrustedFileError(ValueError):
    """A model file names types that :func:`load` does not trust; nothing was loaded."""


#: Qualified names of the classes a model file may hold, declared by their modules.
_TRUSTED = {
    # random_state may be a numpy RandomState (scikit-learn accepts one)
    "numpy.random.mtrand.RandomState",
    "numpy.random._mt19937.MT19937",
}
#: The subset of those that :func:`save` stores as a model.
_MODELS = set()


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def trusted_type(cls, *, model=False):
    """Declare ``cls`` (a marginkit class) as one that model files may hold.

    Usable as a class decorator. With ``model=True`` it is also a model that
    :func:`save` stores. Classes outside the ``marginkit`` package are not declared.
    """
    if cls.__module__.split(".")[0] == "marginkit":
        _TRUSTED.add(_name(cls))
        if model:
            _MODELS.add(_name(cls))
    return cls


def _own_types():
    """Qualified names of every class a model file may hold."""
    return set(_TRUSTED)


def _stable(archive):
    """The skops archive ``archive`` (bytes) with names, ids and dates that depend only
    on its contents: members and objects numbered in the order the schema holds them
    (skops names them by memory address), every member dated 1980-01-01."""
    with zipfile.ZipFile(io.BytesIO(archive)) as src:
        schema = json.loads(src.read("schema.json"))
        members, ids = {}, {}

        def renumber(node):
            if isinstance(node, list):
                for value in node:
                    renumber(value)
            elif isinstance(node, dict):
                if isinstance(node.get("file"), str):
                    name = node["file"]
                    members.setdefault(name, f"{len(members)}{Path(name).suffix}")
                    node["file"] = members[name]
                if isinstance(node.get("__id__"), int):
                    node["__id__"] = ids.setdefault(node["__id__"], len(ids))
                for value in node.values():
                    renumber(value)

        renumber(schema)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as dst:
            entries = [("schema.json", json.dumps(schema, indent=1).encode())]
            entries += [(new, src.read(old)) for old, new in members.items()]
            for name, data in entries:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                dst.writestr(info, data, compresslevel=6)
    return out.getvalue()


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
    if _name(type(estimator)) not in _MODELS:
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
    archive = _stable(sio.dumps(payload))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(archive)
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
