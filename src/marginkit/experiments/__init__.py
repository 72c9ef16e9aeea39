"""Published experiments as data, and a resumable runner for them.

Each experiment module holds the spec of one published table (``build_spec``), the
computation of one cell (``run_cell``), the report (``render``) and, in ``data/``, the
published values that are stored beside it. :func:`reproduce` ties them together:

>>> from marginkit.experiments import available_experiments
>>> available_experiments()
['gentile-table6']
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import gentile_table6
from .runner import Cell, LastValueCache, RunReport, Spec, run, write_text_atomic

EXPERIMENTS = {gentile_table6.NAME: gentile_table6}


class UnknownExperimentError(KeyError):
    """The name does not belong to any experiment of :data:`EXPERIMENTS`."""

    def __str__(self):
        return str(self.args[0]) if self.args else "unknown experiment"


def available_experiments() -> list[str]:
    """Names of the experiments :func:`reproduce` knows, sorted."""
    return sorted(EXPERIMENTS)


def get_experiment(name: str):
    """The module of the experiment ``name``.

    Raises
    ------
    UnknownExperimentError
        When ``name`` is not one of :func:`available_experiments`.
    """
    try:
        return EXPERIMENTS[name]
    except KeyError:
        known = ", ".join(available_experiments())
        raise UnknownExperimentError(f"unknown experiment {name!r} (available: {known})") from None


def default_prefix(name: str, *, quick: bool = False) -> Path:
    """``results/<name>``, or ``results/<name>-quick`` for the quick version.

    The quick version has its own default so that it never overwrites a full run.
    """
    return Path("results") / (f"{name}-quick" if quick else name)


@dataclass
class Reproduction:
    """The outcome of :func:`reproduce`.

    Attributes
    ----------
    json_path, markdown_path : Path
        Where the results and the report were written.
    markdown : str
        The report.
    report : RunReport
        What the runner computed and skipped.
    """

    json_path: Path
    markdown_path: Path
    markdown: str
    report: RunReport


def reproduce(
    name: str,
    prefix: str | os.PathLike | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    quiet: bool = False,
) -> Reproduction:
    """Run (or resume) a published experiment and write its JSON results and report.

    Parameters
    ----------
    name : str
        One of :func:`available_experiments`, e.g. ``"gentile-table6"``.
    prefix : path-like, optional
        Output path without extension: results go to ``prefix.json`` and the markdown
        report to ``prefix.md`` (a trailing ``.json`` or ``.md`` is dropped). Default
        :func:`default_prefix`. Directories are created.
    quick : bool, default=False
        The small version of the experiment.
    seed : int >= 0, default=0
        Base seed of the data sets.
    quiet : bool, default=False
        No progress bar.

    Returns
    -------
    reproduction : Reproduction
    """
    module = get_experiment(name)
    if seed < 0:
        raise ValueError(f"the seed must be >= 0, got {seed}")
    prefix = Path(default_prefix(name, quick=quick) if prefix is None else prefix)
    if prefix.suffix in (".json", ".md"):
        prefix = prefix.with_suffix("")
    json_path = prefix.with_name(prefix.name + ".json")
    markdown_path = prefix.with_name(prefix.name + ".md")
    spec = module.build_spec(quick=quick, seed=seed)
    report = run(spec, module.run_cell, json_path, quiet=quiet)
    markdown = module.render(report.document)
    write_text_atomic(markdown_path, markdown)
    return Reproduction(json_path, markdown_path, markdown, report)


__all__ = [
    "EXPERIMENTS",
    "Cell",
    "LastValueCache",
    "Reproduction",
    "RunReport",
    "Spec",
    "UnknownExperimentError",
    "available_experiments",
    "default_prefix",
    "get_experiment",
    "reproduce",
    "run",
]
