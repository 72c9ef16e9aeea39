"""Published experiments as data, and a resumable runner for them.

Each experiment holds the spec of one published table (``build_spec``), the
computation of one cell (``run_cell``), the report (``render``) and, in ``data/``, the
published values that are stored beside it. An experiment is a module
(:mod:`~marginkit.experiments.gentile_table6`) or an object with the same attributes (the
three kernel tables of :mod:`~marginkit.experiments.gentile_kernel`). Experiments that
read real data files also have ``cell_runner(data_dir)``, which loads the data once and
returns the ``run_cell`` to use; the keyword options an experiment's ``build_spec``
takes beyond ``quick`` and ``seed`` are listed in its ``OPTIONS``. :func:`reproduce` ties
them together, and :func:`reproduce_all` runs them all and scores every published cell
(:mod:`~marginkit.experiments.published`):

>>> from marginkit.experiments import available_experiments
>>> available_experiments()  # doctest: +NORMALIZE_WHITESPACE
['gentile-letter', 'gentile-mnist', 'gentile-table6', 'gentile-usps',
 'pumma-artificial', 'pumma-real']
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

from .._files import prepare_output
from . import gentile_kernel, gentile_table6, pumma_artificial, pumma_real
from . import published as _published
from .gentile_kernel import MissingDataError
from .runner import Cell, LastValueCache, RunReport, Spec, load, run, write_text_atomic

EXPERIMENTS = {
    gentile_table6.NAME: gentile_table6,
    **{e.NAME: e for e in gentile_kernel.EXPERIMENTS},
    pumma_artificial.NAME: pumma_artificial,
    pumma_real.NAME: pumma_real,
}


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
    figures : list of Path
        The figures drawn (experiments that have them, when matplotlib is installed).
    figure_note : str or None
        Why an experiment that has figures drew none.
    """

    json_path: Path
    markdown_path: Path
    markdown: str
    report: RunReport
    figures: list = field(default_factory=list)
    figure_note: str | None = None


def reproduce(
    name: str,
    prefix: str | os.PathLike | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    quiet: bool = False,
    data_dir: str | os.PathLike | None = None,
    figures: str | os.PathLike | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    **options,
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
        Base seed of the experiment's randomness (the generated data sets of Table 6, the
        permutations of the training sets of the kernel tables).
    quiet : bool, default=False
        No progress bar.
    data_dir : path-like, optional
        Where the real data files are (experiments that read them only; default
        ``$MARGINKIT_DATA`` or ``~/marginkit_data``).
    figures : path-like, optional
        Path prefix of the figures (experiments that draw some; default ``prefix``).
    workers : int, optional
        Run the cells on a local Dask cluster of this many worker processes (the
        ``dask`` extra). The results are those of the serial run.
    scheduler : str, optional
        Run the cells on the Dask cluster whose scheduler is at this address.
    **options
        Options of the experiment's ``build_spec`` listed in its ``OPTIONS`` (e.g.
        ``permutations``, ``epochs``, ``degrees``, ``alphas`` for the kernel tables);
        None means the default.

    Returns
    -------
    reproduction : Reproduction

    Raises
    ------
    ValueError
        For an option the experiment does not take, or a bad value.
    MissingDataError
        When a data file is missing (before anything is written).
    """
    module = get_experiment(name)
    if seed < 0:
        raise ValueError(f"the seed must be >= 0, got {seed}")
    options = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(options) - set(getattr(module, "OPTIONS", ())))
    if unknown:
        raise ValueError(f"{name} does not take the option(s): {', '.join(unknown)}")
    uses_data = getattr(module, "USES_DATA", False)
    if data_dir is not None and not uses_data:
        raise ValueError(f"{name} reads no data files: data_dir does not apply")
    if figures is not None and getattr(module, "write_figures", None) is None:
        raise ValueError(f"{name} draws no figures")
    prefix = Path(default_prefix(name, quick=quick) if prefix is None else prefix)
    if prefix.suffix in (".json", ".md"):
        prefix = prefix.with_suffix("")
    json_path = prefix.with_name(prefix.name + ".json")
    markdown_path = prefix.with_name(prefix.name + ".md")
    if workers is not None and scheduler is not None:
        raise ValueError("give workers (a local cluster) or scheduler (a running one), not both")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    spec = module.build_spec(quick=quick, seed=seed, **options)
    # every output path checked (its folder made) before any cell runs
    prepare_output(json_path, "the results")
    write_figures = getattr(module, "write_figures", None)
    where = prefix if figures is None else Path(figures)
    if where.suffix == ".png":
        where = where.with_suffix("")
    if write_figures is not None:
        prepare_output(where.with_name(where.name + ".png"), "the figures")
    if workers is None and scheduler is None:
        run_cell = module.cell_runner(data_dir) if uses_data else module.run_cell
        report = run(spec, run_cell, json_path, quiet=quiet)
    else:
        with _dask_client(workers, scheduler) as client:
            report = run(spec, None, json_path, quiet=quiet, client=client, data_dir=data_dir)
    markdown = module.render(report.document)
    write_text_atomic(markdown_path, markdown)
    result = Reproduction(json_path, markdown_path, markdown, report)
    if write_figures is not None:
        try:
            result.figures = list(write_figures(report.document, where))
        except ImportError as exc:  # matplotlib is an optional extra
            result.figure_note = f"no figures drawn: {exc}"
    return result


#: What :func:`reproduce_all` runs, in order: the quick tables first, MNIST last.
ALL = (
    "gentile-table6",
    "pumma-real",
    "pumma-artificial",
    "gentile-usps",
    "gentile-letter",
    "gentile-mnist",
)
_PAPER_ORDER = list(_published.PAPERS)


@dataclass
class Scoreboard:
    """The outcome of :func:`reproduce_all`.

    Attributes
    ----------
    reproductions : dict
        ``{name: Reproduction}`` of the experiments run.
    missing : dict
        ``{name: reason}`` of the experiments skipped for missing data files.
    scores : list of Score
        Every published cell, in the papers' order.
    markdown : str
        The scoreboard.
    markdown_path : Path
    """

    reproductions: dict
    missing: dict
    scores: list
    markdown: str
    markdown_path: Path


def score_documents(documents: dict, missing: dict | None = None) -> list:
    """Every published cell scored against the run documents of the experiments.

    Parameters
    ----------
    documents : dict
        ``{experiment name: run document or None}`` (None: not run).
    missing : dict, optional
        ``{experiment name: reason}``: the note of its cells, not run.

    Returns
    -------
    scores : list of Score
        In the order of the papers and their tables.
    """
    missing = missing or {}
    scores = []
    for name in ALL:
        score = getattr(get_experiment(name), "score", None)
        if score is None:
            continue
        found = score(documents.get(name))
        if name in missing:
            found = [
                dataclasses.replace(s, note=missing[name]) if s.status == _published.NOT_RUN else s
                for s in found
            ]
        scores += found

    def order(s):
        table = s.cell["table"]
        number = int(table.split()[-1]) if table.startswith("Table") else 99
        return (_PAPER_ORDER.index(s.cell["paper"]), number, table)

    return sorted(scores, key=order)


def reproduce_all(
    directory: str | os.PathLike | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    quiet: bool = False,
    data_dir: str | os.PathLike | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress=None,
) -> Scoreboard:
    """Run (or resume) every experiment of :data:`ALL`, then score every published cell.

    Each experiment writes ``<directory>/<name>.json`` and ``.md`` as :func:`reproduce`
    does (``-quick`` names with ``quick``), so an interrupted run resumes; an
    experiment whose data files are missing is skipped, its cells marked not run with
    the reason. The scoreboard goes to ``<directory>/scoreboard.md``
    (``scoreboard-quick.md``).

    Parameters
    ----------
    directory : path-like, optional
        Default ``results``.
    quick, seed, quiet, data_dir, workers, scheduler
        As for :func:`reproduce`.
    progress : callable, optional
        Called with a line of text as each experiment starts and ends.

    Returns
    -------
    scoreboard : Scoreboard
    """
    directory = Path("results" if directory is None else directory)
    reproductions, missing, documents = {}, {}, {}
    for name in ALL:
        module = get_experiment(name)
        prefix = directory / default_prefix(name, quick=quick).name
        if progress is not None:
            progress(f"{name}: running (results in {prefix}.json)")
        try:
            result = reproduce(
                name,
                prefix,
                quick=quick,
                seed=seed,
                quiet=quiet,
                data_dir=data_dir if getattr(module, "USES_DATA", False) else None,
                workers=workers,
                scheduler=scheduler,
            )
        except MissingDataError as exc:
            missing[name] = f"data missing: {exc}"
            if progress is not None:
                progress(f"{name}: skipped, {missing[name]}")
            continue
        reproductions[name] = result
        documents[name] = load(result.json_path)
        if progress is not None:
            report = result.report
            progress(
                f"{name}: {len(report.computed)} cells computed, {len(report.skipped)} reused"
            )
    scores = score_documents(documents, missing)
    lines = [
        "# Every published number, scored",
        "",
        "Each cell of the papers' tables (and the correction counts of Gentile's section "
        "4.4 text) beside our mean. Tolerance: for a test error the larger of two of our "
        "standard deviations over the permutations and the spread the paper states (0.12 "
        "points on USPS, 0.09 on MNIST, 1 point on the artificial data); 3% of a count of "
        "corrections or support vectors; 1% of a margin. Published times are not scored.",
        "",
    ]
    if quick:
        lines += [
            "**Quick run**: every experiment ran on a small part of its data, so these "
            "counts show only that the scoreboard works.",
            "",
        ]
    lines += _published.scoreboard(scores)
    lines += ["## Runs", ""]
    for name in ALL:
        if name in reproductions:
            lines.append(f"- {name}: `{reproductions[name].json_path}`")
        elif name in missing:
            lines.append(f"- {name}: not run, {missing[name]}")
    markdown = "\n".join(lines) + "\n"
    path = directory / ("scoreboard-quick.md" if quick else "scoreboard.md")
    write_text_atomic(path, markdown)
    return Scoreboard(reproductions, missing, scores, markdown, path)


#: environment of local Dask workers: one thread for every BLAS and OpenMP pool
BLAS_ONE_THREAD = {
    name: "1"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
}


@contextlib.contextmanager
def _dask_client(workers, scheduler):
    """A dask.distributed Client: on a new local cluster, or connected to ``scheduler``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ImportError(
            'running on a Dask cluster needs the dask extra: pip install "marginkit[dask]"'
        ) from exc
    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # one BLAS thread per worker: the workers share the cores among themselves
            env=BLAS_ONE_THREAD,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


__all__ = [
    "ALL",
    "EXPERIMENTS",
    "Cell",
    "LastValueCache",
    "MissingDataError",
    "Reproduction",
    "RunReport",
    "Scoreboard",
    "Spec",
    "UnknownExperimentError",
    "available_experiments",
    "default_prefix",
    "get_experiment",
    "reproduce",
    "reproduce_all",
    "run",
    "score_documents",
]
