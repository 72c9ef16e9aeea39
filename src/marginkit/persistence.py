"""Safe persistence of fitted models: :func:`save` and :func:`load`.

A model file is a skops archive (``skops.io``): a zip file holding ``schema.json``, a
tree of typed nodes, and one numpy ``.npy`` member per array. :func:`save` writes it
with skops. :func:`load` reads it with a reader of its own, which knows exactly the
nodes :func:`save` writes and builds nothing else:

- dicts with string keys, lists, tuples and JSON scalars;
- numpy arrays of booleans, integers, floats or strings (and numpy scalars of those
  types), read with ``allow_pickle=False``; the one array of Python strings a model
  may hold, the ``feature_names_in_`` of a fit on a data frame, is built from its JSON
  list; numpy's ``RandomState`` (a ``random_state`` parameter, a checkpoint's
  generator), after checking its state;
- marginkit's own classes, declared by their modules with :func:`trusted_type`.

Any other node (a function, a scikit-learn estimator, a masked, object or void array,
an unknown loader) makes the file an :class:`UntrustedFileError`, with the names in the
message, before anything is built.

Why not ``skops.io.load``: skops trusts more than marginkit writes (scikit-learn
estimators, masked arrays, numpy functions), reads every array member while it audits
the tree (so that a small file naming one compressed member many times takes gigabytes
before any check), and lets the errors of a hostile tree through as ``TypeError`` or
``RecursionError``. Trusting less than skops does is simpler here than restricting it:
the reader audits the whole tree from ``schema.json`` first, then the ``.npy`` headers
of the members (reading no data): dtype, shape, byte order and size, each against the
size the zip declares; a member may be named by one node only, and the size of all of
them together is bounded (``max_bytes``). Only then are the arrays read, each once.

Types are not enough: a file made only of trusted types can still hold an index that the
compiled passes would follow out of bounds. So every loaded model is then checked whole
by its own ``_check_loaded``, and each of its states by the check registered for its
class (:mod:`marginkit._state_checks`: every array's dtype and shape, every index
against the size it addresses, every count against its array, the scalars that must be
finite; the estimator checks its classes, widths and counts against its states), and a
checkpoint is checked once more against the data it resumes on. The page
``docs/trust.md`` tells what a loaded file can and cannot do.

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
import math
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ._checks import mt_state
from ._files import atomic_write
from ._registry import (
    _MODELS,
    _TRUSTED,
    UntrustedFileError,
    _name,
    trusted_type,  # noqa: F401 (public here: marginkit.persistence)
)
from ._version import __version__

FORMAT = "marginkit-model"
FORMAT_VERSION = 1

#: The most bytes a model file may declare, its arrays and schema together, unless
#: :func:`load` is given another ``max_bytes``.
MAX_BYTES = 4 * 2**30
#: The largest ``schema.json``, and the most JSON values (counted by their ``{``,
#: ``[`` and ``,``) it may hold: a model of thousands of one-vs-rest problems fits.
MAX_SCHEMA_BYTES = 64 * 2**20
MAX_SCHEMA_ITEMS = 2**21
#: The deepest nesting of nodes (marginkit's models nest about ten deep).
MAX_DEPTH = 64
#: The largest ``.npy`` header read (numpy's own default).
MAX_HEADER_BYTES = 10_000


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
        raise ImportError("marginkit.save needs skops: pip install skops") from exc
    return sio


def save(estimator, path) -> None:
    """Write a model (fitted or not) to ``path`` as a skops archive, atomically.

    The file is written beside ``path`` under a temporary name, created exclusively,
    and then renamed (:func:`marginkit._files.atomic_write`), so that ``path`` never
    holds half a model. It is readable by its owner only.

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
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "marginkit_version": __version__,
        "estimator": estimator,
    }
    atomic_write(path, _stable(_skops().dumps(payload)), private=True)


def load(path, *, max_bytes=MAX_BYTES):
    """Read a model written by :func:`save`, and check it before returning it.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, default=MAX_BYTES (4 GiB)
        The most the file may declare, its arrays and schema together; a larger file is
        refused before any array is read.

    Returns
    -------
    estimator

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    UntrustedFileError
        A ``ValueError``: the file names types that marginkit does not write, or holds
        values that its code must not be given (see the message), or declares more
        than ``max_bytes``.
    ValueError
        If the file is not a marginkit model file (damaged, or another archive),
        cannot be read, or was written in a newer format than this marginkit reads.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        with open(path, "rb") as fh:
            return _Reader(fh, path, int(max_bytes)).read()
    except (ValueError, FileNotFoundError):  # UntrustedFileError is a ValueError
        raise
    except RecursionError:
        raise UntrustedFileError(f"{path}: its nodes are nested too deeply") from None
    except MemoryError:
        raise ValueError(f"{path}: not enough memory to load this model") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ValueError(f"{path} is a damaged archive: {exc}") from exc
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    except Exception as exc:  # the checks did not foresee it: still no model
        raise UntrustedFileError(f"{path} cannot be loaded: {type(exc).__name__}: {exc}") from exc


# -- the reader --------------------------------------------------------------------------

_CONTAINERS = {
    "DictNode": "builtins.dict",
    "ListNode": "builtins.list",
    "TupleNode": "builtins.tuple",
}
_JSON_TYPES = {f"builtins.{t}" for t in ("str", "int", "float", "bool", "NoneType")}
_RANDOM_STATE = "numpy.random.mtrand.RandomState"
#: numpy scalar types by name (a scalar is stored as a 0-d array of its dtype)
_SCALARS = {
    np.dtype(t).type.__name__: np.dtype(t)
    for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")
    + ("uint64", "float32", "float64")
}


def _dtype_ok(dtype):
    """Whether an array of ``dtype`` is one marginkit writes: booleans, integers and
    floats of up to 8 bytes, or strings; native byte order; no fields, objects, voids."""
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        return False
    if not dtype.isnative:
        return False
    if dtype.kind in "biuf":
        return dtype.itemsize <= 8
    return dtype.kind == "U" and dtype.itemsize > 0


class _Reader:
    """One reading of one model file: audit the schema, then the headers, then build."""

    def __init__(self, fh, path, max_bytes):
        self.fh, self.path, self.max_bytes = fh, path, max_bytes
        self.members = {}  # member name -> where in the tree it is named
        self.headers = {}  # member name -> (shape, dtype, offset, nbytes)
        self.values = {}  # (id, content) of a JSON node -> its value
        self.untrusted = set()

    def untrusted_file(self, message):
        return UntrustedFileError(f"{self.path}: {message}")

    def not_a_model(self, why):
        return ValueError(f"{self.path} is not a marginkit model file ({why})")

    # -- the archive ---------------------------------------------------------------------
    def read(self):
        try:
            self.zip = zipfile.ZipFile(self.fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
            raise self.not_a_model(f"cannot be read as a skops archive: {exc}") from exc
        with self.zip:
            self.check_members()
            schema = self.read_schema()
            payload = self.check_header(schema)
            self.audit(schema, "the file", 0)
            if self.untrusted:
                raise UntrustedFileError(
                    f"{self.path} names types that marginkit does not trust: "
                    f"{', '.join(sorted(self.untrusted))}. It was not written by "
                    "marginkit.save, or was altered since; nothing was loaded."
                )
            extra = sorted(set(payload) - {"format", "format_version", "marginkit_version"})
            if extra != ["estimator"]:
                raise self.untrusted_file(
                    f"holds {', '.join(extra) or 'nothing'} where a model file holds "
                    "an estimator only"
                )
            unused = sorted(set(self.infos) - set(self.members) - {"schema.json"})
            if unused:
                raise self.untrusted_file(f"holds members no node names: {', '.join(unused)}")
            self.check_headers()
            node = payload["estimator"]
            name = f"{node['__module__']}.{node['__class__']}"
            if node["__loader__"] != "ObjectNode" or name not in _MODELS:
                raise self.untrusted_file(f"holds a {name} where a model file holds an estimator")
            estimator = self.build(node)
        try:
            estimator._check_loaded()
        except UntrustedFileError as exc:
            raise self.untrusted_file(str(exc)) from None
        except Exception as exc:  # a check met what it did not foresee: still refused
            raise self.untrusted_file(f"{type(exc).__name__}: {exc}") from exc
        return estimator

    def check_members(self):
        infos = self.zip.infolist()
        self.infos = {info.filename: info for info in infos}
        if len(self.infos) != len(infos):
            raise self.untrusted_file("holds two members of one name")
        for info in infos:
            if info.flag_bits & 0x1:
                raise self.untrusted_file(f"member {info.filename} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise self.untrusted_file(
                    f"member {info.filename} is compressed by a method marginkit does not use"
                )

    def read_schema(self):
        info = self.infos.get("schema.json")
        if info is None:
            raise self.not_a_model("no schema.json: not a skops archive")
        if info.file_size > min(MAX_SCHEMA_BYTES, self.max_bytes):
            raise self.untrusted_file(
                f"its schema.json declares {info.file_size} bytes, more than the "
                f"{min(MAX_SCHEMA_BYTES, self.max_bytes)} a model file may"
            )
        with self.zip.open(info) as f:
            raw = f.read(info.file_size + 1)
        items = raw.count(b"{") + raw.count(b"[") + raw.count(b",")
        if items > MAX_SCHEMA_ITEMS:
            raise self.untrusted_file(
                f"its schema.json holds about {items} values, more than the "
                f"{MAX_SCHEMA_ITEMS} a model file may"
            )
        try:
            schema = json.loads(raw)
        except RecursionError:
            raise self.untrusted_file(
                f"its schema.json is nested too deeply (more than {MAX_DEPTH} levels)"
            ) from None
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise self.not_a_model(f"schema.json is not JSON: {exc}") from exc
        self.total = info.file_size
        return schema

    def check_header(self, schema):
        """The payload's nodes by key, once its format and version are known to be ours."""
        content = schema.get("content") if isinstance(schema, dict) else None
        if schema_name(schema) != "builtins.dict" or not isinstance(content, dict):
            raise ValueError(f"{self.path} is a skops archive but not a marginkit model file")
        if json_value(content.get("format")) != FORMAT:
            raise ValueError(f"{self.path} is a skops archive but not a marginkit model file")
        version = json_value(content.get("format_version"))
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"{self.path}: unknown marginkit model format version {version!r}")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"{self.path} was written by marginkit "
                f"{json_value(content.get('marginkit_version'))} in model format {version}; "
                f"this marginkit reads formats up to {FORMAT_VERSION}: upgrade marginkit to "
                "load it"
            )
        if "estimator" not in content:
            raise ValueError(f"{self.path} is a marginkit model file without a model")
        return content

    # -- the tree ------------------------------------------------------------------------
    def malformed(self, where, what):
        return self.untrusted_file(f"malformed node at {where}: {what}")

    def audit(self, node, where, depth):
        """Check ``node`` and its children without reading any member: every node one
        that :func:`save` writes, every type one that marginkit trusts (the names of
        those it does not are collected), every array member named once."""
        if depth > MAX_DEPTH:
            raise self.untrusted_file(f"its nodes are nested more than {MAX_DEPTH} deep")
        if not isinstance(node, dict):
            raise self.malformed(where, f"a {type(node).__name__}, not a node")
        loader, name = node.get("__loader__"), schema_name(node)
        if not isinstance(loader, str) or name is None:
            raise self.malformed(where, "no __loader__, __module__ or __class__")
        if loader in _CONTAINERS:
            if name != _CONTAINERS[loader]:
                self.untrusted.add(name)
                return
            content = node.get("content")
            if loader == "DictNode":
                if not isinstance(content, dict):
                    raise self.malformed(where, "a dict without content")
                self.audit_keys(node.get("key_types"), len(content), where)
                for key, value in content.items():
                    self.audit(value, f"{where}[{key!r}]", depth + 1)
            else:
                if not isinstance(content, list):
                    raise self.malformed(where, f"a {name} without content")
                for i, value in enumerate(content):
                    self.audit(value, f"{where}[{i}]", depth + 1)
        elif loader == "JsonNode":
            if name not in _JSON_TYPES:
                self.untrusted.add(name)
                return
            if node.get("is_json") is not True or not isinstance(node.get("content"), str):
                raise self.malformed(where, "a JSON node without JSON content")
            try:
                value = json.loads(node["content"])
            except (ValueError, RecursionError):
                raise self.malformed(where, "a JSON node whose content is not JSON") from None
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise self.malformed(where, f"a JSON {type(value).__name__}, not a scalar")
        elif loader == "NdArrayNode":
            self.audit_array(node, name, where, depth)
        elif loader == "ObjectNode":
            if name not in _TRUSTED:
                self.untrusted.add(name)
                return
            content = node.get("content")
            if schema_name(content) != "builtins.dict" or content.get("__loader__") != "DictNode":
                raise self.malformed(where, f"a {name} without a dict of attributes")
            self.audit(content, where, depth + 1)
        elif loader == "RandomStateNode":
            if name != _RANDOM_STATE:
                self.untrusted.add(name)
                return
            content = node.get("content")
            if schema_name(content) != "builtins.dict" or content.get("__loader__") != "DictNode":
                raise self.malformed(where, "a RandomState without its state")
            self.audit(content, where, depth + 1)
        else:  # functions, types, masked arrays, scikit-learn's own nodes, unknown ones
            self.untrusted.add(f"{name} (as {loader})")

    def audit_keys(self, key_types, n, where):
        """A dict's keys are all strings (the only keys marginkit's dicts have)."""
        content = key_types.get("content") if isinstance(key_types, dict) else None
        if (
            schema_name(key_types) != "builtins.list"
            or key_types.get("__loader__") != "ListNode"
            or not isinstance(content, list)
            or len(content) != n
        ):
            raise self.malformed(where, "a dict without the types of its keys")
        for key_type in content:
            if not isinstance(key_type, dict) or key_type.get("__loader__") != "TypeNode":
                raise self.malformed(where, "a dict key type that is not a type")
            if schema_name(key_type) != "builtins.str":
                self.untrusted.add(f"{schema_name(key_type)} (as a dict key)")

    def audit_array(self, node, name, where, depth):
        module, cls = node["__module__"], node["__class__"]
        if module != "numpy" or (cls != "ndarray" and cls not in _SCALARS):
            self.untrusted.add(name)
            return
        kind = node.get("type")
        if kind == "numpy":
            member = node.get("file")
            if not isinstance(member, str):
                raise self.malformed(where, "an array without its member")
            if member not in self.infos or member == "schema.json":
                raise self.untrusted_file(f"{where} names a member the file lacks: {member}")
            if member in self.members:
                raise self.untrusted_file(
                    f"member {member} is named twice ({self.members[member]} and {where}); "
                    "a model file names each array once"
                )
            self.members[member] = where
        elif kind == "json":
            # an array of Python objects: only the strings of feature_names_in_
            items, shape = node.get("content"), node.get("shape")
            if cls != "ndarray" or not isinstance(items, list):
                raise self.malformed(where, "an object array that is not a list")
            for item in items:
                if schema_name(item) != "builtins.str" or not isinstance(json_value(item), str):
                    self.untrusted.add("numpy.ndarray of objects other than strings")
                    return
            dims = shape.get("content") if isinstance(shape, dict) else None
            if (
                schema_name(shape) != "builtins.tuple"
                or not isinstance(dims, list)
                or [json_value(d) for d in dims] != [len(items)]
            ):
                raise self.malformed(where, "an array of strings that is not one list")
        else:
            raise self.malformed(where, f"an array stored as {kind!r}")

    # -- the members ---------------------------------------------------------------------
    def check_headers(self):
        """Read every array member's header (not its data): dtype, shape and size, each
        against the size the zip declares; the sizes together against ``max_bytes``."""
        for member, where in self.members.items():
            info = self.infos[member]
            with self.zip.open(info) as f:
                header = self.header(f, info, where)
            self.total += header[2] + header[3]
            if self.total > self.max_bytes:
                raise self.untrusted_file(
                    f"declares more than max_bytes={self.max_bytes} bytes (at {where}); "
                    "pass a larger max_bytes to load a model this large"
                )
            self.headers[member] = header

    def header(self, f, info, where):
        """(shape, dtype, offset of the data, bytes of the data) of one ``.npy`` member."""
        fmt = np.lib.format
        try:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f, MAX_HEADER_BYTES)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f, MAX_HEADER_BYTES)
            else:
                raise ValueError(f"npy format {version} is not one numpy.save writes")
        except (ValueError, TypeError, SyntaxError, KeyError) as exc:
            raise self.untrusted_file(f"{where} is not a numpy array member: {exc}") from None
        if fortran:
            raise self.untrusted_file(f"{where} is in Fortran order, which marginkit never writes")
        if not _dtype_ok(dtype):
            raise self.untrusted_file(
                f"{where} is an array of {dtype}; marginkit's arrays hold booleans, "
                "integers, floats or strings"
            )
        if len(shape) > 2 or any(n < 0 for n in shape):
            raise self.untrusted_file(f"{where} has shape {shape}, not one marginkit writes")
        offset = f.tell()
        nbytes = math.prod(shape) * dtype.itemsize
        if offset + nbytes != info.file_size:
            raise self.untrusted_file(
                f"{where}: its header declares {offset + nbytes} bytes, the zip {info.file_size}"
            )
        return shape, dtype, offset, nbytes

    def read_member(self, member, where):
        """The array of one member, read once (its header checked again, in case the file
        changed since the audit; the zip checks the data's CRC as the last byte is read)."""
        info = self.infos[member]
        with self.zip.open(info) as f:
            shape, dtype, offset, nbytes = self.header(f, info, where)
            if (shape, dtype, offset, nbytes) != self.headers[member]:
                raise self.untrusted_file(f"{where} changed while it was read")
            flat = np.empty(math.prod(shape), dtype=dtype)
            view = memoryview(flat.view(np.uint8)) if nbytes else None
            done = 0
            while done < nbytes:
                chunk = f.read(min(1 << 20, nbytes - done))
                if not chunk:
                    raise self.untrusted_file(f"{where} is shorter than its header declares")
                view[done : done + len(chunk)] = chunk
                done += len(chunk)
        if dtype.kind == "b" and nbytes and flat.view(np.uint8).max() > 1:
            raise self.untrusted_file(f"{where} holds booleans other than 0 and 1")
        return flat.reshape(shape)

    # -- building --------------------------------------------------------------------------
    def build(self, node, where="the file"):
        """The object of an audited node."""
        loader = node["__loader__"]
        if loader == "DictNode":
            return {k: self.build(v, f"{where}[{k!r}]") for k, v in node["content"].items()}
        if loader == "ListNode":
            return [self.build(v, f"{where}[{i}]") for i, v in enumerate(node["content"])]
        if loader == "TupleNode":
            return tuple(self.build(v, f"{where}[{i}]") for i, v in enumerate(node["content"]))
        if loader == "JsonNode":
            # one value for the nodes of one object, as it was saved (so that saving
            # it again gives the same bytes); values of JSON are immutable
            key = (
                node.get("__id__") if type(node.get("__id__")) is int else None,
                node["content"],
            )
            if key not in self.values:
                self.values[key] = json.loads(node["content"])
            return self.values[key]
        if loader == "NdArrayNode":
            if node["type"] == "json":
                names = np.empty(len(node["content"]), dtype=object)
                names[:] = [json_value(item) for item in node["content"]]
                return names
            array = self.read_member(node["file"], where)
            cls = node["__class__"]
            if cls == "ndarray":
                return array
            if array.shape != () or array.dtype != _SCALARS[cls]:
                raise self.untrusted_file(f"{where} is not a numpy {cls}")
            return array[()]
        if loader == "RandomStateNode":
            return self.random_state(self.build(node["content"], where), where)
        cls = _TRUSTED[schema_name(node)]  # an ObjectNode of a trusted class
        attrs = self.build(node["content"], where)
        obj = cls.__new__(cls)
        try:
            if hasattr(obj, "__setstate__"):
                obj.__setstate__(attrs)
            else:
                obj.__dict__.update(attrs)
        except Exception as exc:
            raise self.untrusted_file(
                f"{where}: a {cls.__name__} that cannot be rebuilt: {exc}"
            ) from exc
        return obj

    def random_state(self, state, where):
        """numpy's RandomState, from a state checked first (numpy does not check the
        position in its key, and reads the key at it)."""
        inner = state.get("state")
        if (
            set(state) != {"bit_generator", "state", "has_gauss", "gauss"}
            or state["bit_generator"] != "MT19937"
            or not isinstance(inner, dict)
            or set(inner) != {"key", "pos"}
        ):
            raise self.untrusted_file(f"{where} is not the state of a Mersenne Twister")
        try:
            mt_state(inner["key"], inner["pos"], state["has_gauss"], state["gauss"], where)
        except UntrustedFileError as exc:
            raise self.untrusted_file(str(exc)) from None
        rng = np.random.RandomState()
        rng.set_state(state)
        return rng


def schema_name(node):
    """``module.class`` of a schema node, or None if it has no such names."""
    if not isinstance(node, dict):
        return None
    module, cls = node.get("__module__"), node.get("__class__")
    if not (isinstance(module, str) and isinstance(cls, str)):
        return None
    return f"{module}.{cls}"


def json_value(node):
    """The value of a JSON node of the schema, None if it is not one."""
    if not isinstance(node, dict) or node.get("__loader__") != "JsonNode":
        return None
    try:
        return json.loads(node["content"])
    except (KeyError, TypeError, ValueError, RecursionError):
        return None
