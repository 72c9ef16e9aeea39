"""The ``marginkit`` command: argument parsing only; the work is in :mod:`marginkit.experiments`.

Usage::

    marginkit demo [--seed N]
    marginkit reproduce gentile-table6 [--quick] [--out PATH_PREFIX] [--seed N] [--quiet]
    marginkit --version

User errors (bad arguments, an unknown experiment) print one line on standard error and
exit with status 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from . import __version__

PROG = "marginkit"


class _UsageError(Exception):
    """A command-line mistake, reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing the usage and exiting."""

    def error(self, message):
        raise _UsageError(message)


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``marginkit`` command."""
    from .experiments import available_experiments

    parser = _Parser(
        prog=PROG,
        description="Online approximate maximum-margin classifiers: demos and paper "
        "reproductions.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="a short tour of ALMA_p on generated sparse and dense targets",
        description="Train ALMA_p for a few settings of p and alpha on a sparse and on a "
        "dense generated target and print their test errors and corrections.",
    )
    demo.add_argument("--seed", type=_seed, default=0, help="seed of the data (default 0)")

    names = ", ".join(available_experiments())
    rep = commands.add_parser(
        "reproduce",
        help=f"run (or resume) a published experiment: {names}",
        description="Run a published experiment, resuming from an existing PATH_PREFIX.json "
        "with the same spec; write PATH_PREFIX.json and PATH_PREFIX.md and print the table.",
    )
    rep.add_argument("experiment", metavar="EXPERIMENT", help=f"one of: {names}")
    rep.add_argument(
        "--quick", action="store_true", help="a small version that runs in a few seconds"
    )
    rep.add_argument(
        "--out",
        metavar="PATH_PREFIX",
        default=None,
        help="output path without extension (default results/EXPERIMENT, or "
        "results/EXPERIMENT-quick with --quick)",
    )
    rep.add_argument("--seed", type=_seed, default=0, help="base seed of the data (default 0)")
    rep.add_argument("--quiet", action="store_true", help="no progress bar or status lines")
    return parser


def main(argv=None) -> int:
    """Run the ``marginkit`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success, 2 on a usage error, 1 when the run fails (e.g. an unwritable
        output path), 130 when interrupted.
    """
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        if args.command is None:
            raise _UsageError("a command is required: demo or reproduce (see marginkit --help)")
        if args.command == "demo":
            return _demo(args)
        return _reproduce(args)
    except _UsageError as exc:
        _say(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        _say("interrupted (a reproduction resumes where it stopped when run again)")
        return 130


def _demo(args) -> int:
    from .experiments.demo import format_demo, run_demo

    settings = {"n_train": 3000, "n_test": 3000, "n_features": 300, "sparse": 3}
    rows, seconds = run_demo(seed=args.seed, **settings)
    print(format_demo(rows, seconds, **settings))
    return 0


def _reproduce(args) -> int:
    from .experiments import UnknownExperimentError, get_experiment, reproduce

    try:
        get_experiment(args.experiment)
    except UnknownExperimentError as exc:
        raise _UsageError(str(exc)) from None

    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(f"{PROG}: warning: %(message)s"))
    log = logging.getLogger("marginkit.experiments")
    log.addHandler(handler)
    start = time.perf_counter()
    try:
        result = reproduce(
            args.experiment, args.out, quick=args.quick, seed=args.seed, quiet=args.quiet
        )
    except OSError as exc:
        _say(f"error: {exc}")
        return 1
    finally:
        log.removeHandler(handler)
    print(result.markdown)
    if not args.quiet:
        report = result.report
        _say(
            f"{len(report.computed)} cells computed, {len(report.skipped)} reused, "
            f"{time.perf_counter() - start:.1f} s; wrote {result.json_path} and "
            f"{result.markdown_path}"
        )
    return 0


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
