"""Reading, editing and writing model archives by hand, for the tests of marginkit.load.

An archive is taken apart into its schema (the JSON tree of nodes) and its members (the
``.npy`` bytes by name), edited, and put back together: the files the tests craft are
made here, from models saved by the tests; none is stored in the repository.
"""

import io
import json
import struct
import zipfile

import numpy as np


def read_archive(path):
    """(schema, members) of a model file: the JSON tree, and every member's bytes."""
    with zipfile.ZipFile(path) as zf:
        schema = json.loads(zf.read("schema.json"))
        members = {name: zf.read(name) for name in zf.namelist() if name != "schema.json"}
    return schema, members


def write_archive(path, schema, members, *, raw_schema=None):
    """A zip file of ``schema`` (or the bytes ``raw_schema``) and ``members``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("schema.json", json.dumps(schema) if raw_schema is None else raw_schema)
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def npy(array):
    """The ``.npy`` bytes of an array, as numpy.save writes them."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header(descr, shape, fortran_order=False):
    """The header alone of a ``.npy`` member declaring ``descr`` and ``shape``."""
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": fortran_order, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def node_at(schema, *path):
    """The node reached from the payload by ``path``: keys of dicts and objects' attributes,
    indices of lists and tuples. ``node_at(schema, "estimator", "_states", 0, "v")``."""
    node = schema
    for key in path:
        if node["__loader__"] in ("ObjectNode", "RandomStateNode"):
            node = node["content"]
        node = node["content"][key]
    return node


def array_at(schema, members, *path):
    """The array stored at ``path``."""
    return np.load(io.BytesIO(members[node_at(schema, *path)["file"]]), allow_pickle=False)


def set_array(schema, members, path, array):
    """Store ``array`` at ``path`` (in the member its node names)."""
    members[node_at(schema, *path)["file"]] = npy(array)


def json_node(value):
    """A node holding a JSON scalar, as skops writes one."""
    return {
        "__class__": "str",
        "__module__": "builtins",
        "__loader__": "JsonNode",
        "content": json.dumps(value),
        "is_json": True,
    }


def named(schema):
    """The members the nodes of ``schema`` name."""
    if isinstance(schema, dict):
        found = {schema["file"]} if isinstance(schema.get("file"), str) else set()
        return found.union(*(named(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(named(v) for v in schema))
    return set()


def edit(path, out, change, *, prune=True):
    """Write to ``out`` the archive at ``path`` as ``change(schema, members)`` leaves it,
    without the members no node names any more (with ``prune``)."""
    schema, members = read_archive(path)
    change(schema, members)
    used = named(schema) if prune else set(members)
    return write_archive(out, schema, {k: v for k, v in members.items() if k in used})


def patch_entry(path, name, local, central, fmt, value):
    """Overwrite a field of member ``name``'s local header (at offset ``local``) and its
    central directory entry (at ``central``) in the zip at ``path``."""
    data = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as zf:
        at = zf.getinfo(name).header_offset
    field = struct.pack(fmt, value)
    data[at + local : at + local + len(field)] = field
    start = 0
    while (start := data.find(b"PK\x01\x02", start)) >= 0:
        length = struct.unpack("<H", data[start + 28 : start + 30])[0]
        if data[start + 46 : start + 46 + length] == name.encode():
            data[start + central : start + central + len(field)] = field
        start += 4
    open(path, "wb").write(bytes(data))
    return path


def declare_size(path, name, size):
    """Make the zip at ``path`` declare ``size`` uncompressed bytes for member ``name``,
    whatever its data hold."""
    return patch_entry(path, name, 22, 24, "<I", size)


def set_flags(path, name, flags):
    """Set the general purpose flags of member ``name`` (bit 0: encrypted)."""
    return patch_entry(path, name, 6, 8, "<H", flags)
