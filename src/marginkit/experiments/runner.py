"""A generic, resumable runner for experiments described as data.

An experiment is a :class:`Spec`: a configuration (everything that determines the
results, seeds included) and a list of independent :class:`Cell` objects, each with a
stable key. :func:`run` computes the cells whose key is not yet in the output JSON and
rewrites the file atomically after every cell, so an interrupted run resumes where it
stopped and never leaves a half-written file behind.

The output document has this shape::

    {
      "format": 1,
      "experiment": "<name>",
      "spec": {"config": {...}, "cells": [{"key": "...", "params": {...}}, ...]},
      "versions": {"python": "...", "marginkit": "...", "numpy": "...", ...},
      "created": "<ISO 8601 UTC>", "updated": "<ISO 8601 UTC>",
      "compute_seconds": <sum of the cells' wall-clock times>,
      "results": {"<key>": {..., "seconds": <wall-clock time of the cell>}, ...}
    }

A document is resumed only when its ``experiment``, ``spec`` and ``versions`` equal the
current ones; otherwise it is moved aside to ``<name>.json.bak`` and the run starts over,
with a warning on the ``marginkit.experiments`` logger.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from .._files import atomic_write

FORMAT = 1
logger = logging.getLogger("marginkit.experiments")

_VERSIONED = ("marginkit", "numpy", "scipy", "scikit-learn", "numba")


@dataclass(frozen=True)
class Cell:
    """One independent unit of work of an experiment.

    Parameters
    ----------
    key : str
        Stable identifier: the same cell of the same spec always has the same key.
    params : dict
        JSON-serialisable parameters handed to the experiment's cell function.
    """

    key: str
    params: Mapping[str, Any]

    def to_json(self) -> dict:
        """The cell as stored in the output document."""
        return {"key": self.key, "params": dict(self.params)}


@dataclass(frozen=True)
class Spec:
    """An experiment as data: its name, configuration and cells.

    Parameters
    ----------
    experiment : str
        Name of the experiment (for instance ``"gentile-table6"``).
    config : dict
        JSON-serialisable settings that determine the results (sizes, grids, seeds).
    cells : tuple of Cell
        The independent cells, in the order they are computed.
    """

    experiment: str
    config: Mapping[str, Any]
    cells: tuple[Cell, ...] = field(default_factory=tuple)

    def __post_init__(self):
        keys = [c.key for c in self.cells]
        if len(set(keys)) != len(keys):
            raise ValueError(f"cell keys of {self.experiment!r} are not unique")

    def to_json(self) -> dict:
        """The spec as stored in the output document (JSON types only)."""
        return _jsonable({"config": dict(self.config), "cells": [c.to_json() for c in self.cells]})


@dataclass
class RunReport:
    """What :func:`run` did.

    Attributes
    ----------
    document : dict
        The output document, as written.
    computed : list of str
        Keys of the cells computed by this call.
    skipped : list of str
        Keys of the cells found in an existing document and not recomputed.
    resumed : bool
        Whether an existing document was resumed.
    """

    document: dict
    computed: list[str]
    skipped: list[str]
    resumed: bool


class LastValueCache:
    """Keeps the value of the last key asked for (one large data set at a time).

    Cells that share a data set are ordered consecutively in a spec, so one slot is
    enough to generate each data set once per run without holding all of them.
    """

    def __init__(self):
        self._key = None
        self._value = None
        self._filled = False

    def get(self, key, factory: Callable[[], Any]):
        """Return the value for ``key``, calling ``factory()`` if it is not the held one."""
        if not self._filled or key != self._key:
            self._value = None  # release the old value before building the new one
            self._value = factory()
            self._key = key
            self._filled = True
        return self._value


def environment_versions() -> dict:
    """Versions of Python and of the packages the results depend on.

    Returns
    -------
    versions : dict
        ``{"python": ..., "marginkit": ..., "numpy": ..., "scipy": ...,
        "sklearn": ..., "numba": ...}``; a package that is not installed maps to None.
    """
    out = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            version = None
        out["sklearn" if dist == "scikit-learn" else dist] = version
    return out


def load(path: str | os.PathLike) -> dict | None:
    """Read an output document, or None when it is missing or not valid JSON."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        with path.open(encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def write_json_atomic(path: str | os.PathLike, document: Mapping) -> None:
    """Write ``document`` as JSON to ``path`` atomically (temporary file, then os.replace).

    A reader (or a run killed mid-write) sees either the old file or the new one, never
    a truncated one.
    """
    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    write_text_atomic(path, text)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically, creating its folder if needed.

    Through :func:`marginkit._files.atomic_write`: a temporary file created exclusively
    beside ``path``, then renamed over it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


def run(
    spec: Spec,
    run_cell: Callable[[Cell, LastValueCache], Mapping[str, Any]],
    path: str | os.PathLike,
    *,
    quiet: bool = False,
    client=None,
    data_dir=None,
) -> RunReport:
    """Compute the cells of ``spec`` that ``path`` does not hold yet.

    Parameters
    ----------
    spec : Spec
        The experiment.
    run_cell : callable
        ``run_cell(cell, cache) -> dict`` computes one cell and returns JSON-serialisable
        results; ``cache`` is a :class:`LastValueCache` shared by the cells of this call
        (for data sets shared by consecutive cells).
    path : path-like
        The JSON output document. Created, with its directories, when missing; resumed
        when it holds the same experiment, spec and versions; otherwise moved aside to
        ``path + ".bak"`` and started over (with a warning).
    quiet : bool, default=False
        No progress bar. The bar is also off when standard error is not a terminal.
    client : dask.distributed.Client, optional
        Compute the cells on its cluster instead: every worker builds the experiment's
        cell function itself (loading the data from ``data_dir`` once), and each
        result is written to ``path`` as it arrives. The results are those of the
        serial run (each cell is seeded by its own parameters); only timings differ.

    Returns
    -------
    report : RunReport
    """
    path = Path(path)
    spec_json = spec.to_json()
    versions = environment_versions()
    doc, resumed = _open_document(path, spec.experiment, spec_json, versions)

    results = doc["results"]
    todo = [c for c in spec.cells if c.key not in results]
    skipped = [c.key for c in spec.cells if c.key in results]
    if not resumed:
        write_json_atomic(path, doc)  # the header at once, so the file shows the spec

    computed = []
    bar = tqdm(
        total=len(todo),
        desc=spec.experiment,
        unit="cell",
        disable=quiet or not _isatty(sys.stderr),
        leave=False,
    )

    def record(key, values):
        results[key] = _jsonable(values)
        doc["compute_seconds"] = round(doc.get("compute_seconds", 0.0) + values["seconds"], 4)
        doc["updated"] = _now()
        write_json_atomic(path, doc)
        computed.append(key)
        bar.set_postfix_str(key, refresh=False)
        bar.update(1)

    if client is None:
        cache = LastValueCache()
        for cell in todo:
            record(*_timed_cell(run_cell, cell, cache))
    else:
        from distributed import as_completed

        futures = [
            client.submit(remote_cell, spec.experiment, data_dir, cell, pure=False)
            for cell in todo
        ]
        for future in as_completed(futures):
            record(*future.result())
    bar.close()
    if client is not None:
        # the serial order of the cells, whatever order they arrived in
        order = [c.key for c in spec.cells if c.key in results]
        doc["results"] = {k: results[k] for k in order}
        write_json_atomic(path, doc)
    return RunReport(document=doc, computed=computed, skipped=skipped, resumed=resumed)


def _timed_cell(run_cell, cell, cache):
    start = time.perf_counter()
    values = dict(run_cell(cell, cache))
    values["seconds"] = round(time.perf_counter() - start, 4)
    return cell.key, values


_WORKER_RUNNERS: dict = {}


def remote_cell(experiment: str, data_dir, cell: Cell):
    """One cell of ``experiment`` on a worker: ``(key, values)``.

    The cell function (and, for the real data sets, the data) is built once per worker
    process and experiment.
    """
    from . import get_experiment

    key = (experiment, None if data_dir is None else str(data_dir))
    if key not in _WORKER_RUNNERS:
        module = get_experiment(experiment)
        uses_data = getattr(module, "USES_DATA", False)
        run_cell = module.cell_runner(data_dir) if uses_data else module.run_cell
        _WORKER_RUNNERS[key] = (run_cell, LastValueCache())
    run_cell, cache = _WORKER_RUNNERS[key]
    return _timed_cell(run_cell, cell, cache)


def _open_document(path, experiment, spec_json, versions):
    """The document to carry on with, and whether it was resumed."""
    old = load(path)
    if old is not None:
        reason = None
        if old.get("format") != FORMAT or old.get("experiment") != experiment:
            reason = "it holds another experiment or file format"
        elif old.get("spec") != spec_json:
            reason = "its spec (sizes, grids or seeds) differs from this run's"
        elif old.get("versions") != versions:
            reason = "it was computed with other package versions"
        elif not isinstance(old.get("results"), dict):
            reason = "it has no results section"
        if reason is None:
            known = {c["key"] for c in spec_json["cells"]}
            old["results"] = {k: v for k, v in old["results"].items() if k in known}
            return old, True
        backup = path.with_name(path.name + ".bak")
        os.replace(path, backup)
        logger.warning("%s: %s; starting over (old file moved to %s)", path, reason, backup)
    elif path.exists():
        backup = path.with_name(path.name + ".bak")
        os.replace(path, backup)
        logger.warning(
            "%s: not a readable results file; starting over (moved to %s)", path, backup
        )
    now = _now()
    doc = {
        "format": FORMAT,
        "experiment": experiment,
        "spec": spec_json,
        "versions": versions,
        "created": now,
        "updated": now,
        "compute_seconds": 0.0,
        "results": {},
    }
    return doc, False


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _jsonable(obj):
    """Plain JSON types: tuples to lists, NumPy scalars to Python numbers (round trip safe)."""
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # NumPy scalar
        return obj.item()
    return obj


@cache
def _package_text(name: str) -> str:
    return resources.files("marginkit.experiments").joinpath("data", name).read_text("utf-8")


def published_values(name: str) -> dict:
    """A published table stored in ``marginkit/experiments/data/<name>`` (parsed JSON)."""
    return json.loads(_package_text(name))
