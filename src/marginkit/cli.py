"""The ``marginkit`` command: argument parsing only; the work is in :mod:`marginkit.experiments`.

Usage::

    marginkit demo [--seed N]
    marginkit reproduce gentile-table6 [--quick] [--out PATH_PREFIX] [--seed N] [--quiet]
    marginkit reproduce gentile-mnist [--permutations N] [--epochs E] [--degrees 4,6]
        [--alphas 1.0,0.9] [--data-dir DIR] [--quick] [--out PATH_PREFIX] [--seed N] [--quiet]
    marginkit reproduce gentile-usps|gentile-letter [...]  (the options that apply)
    marginkit reproduce pumma-artificial [--max-epochs N] [--repeats N] [--quick] [...]
    marginkit reproduce pumma-real [--max-epochs N] [--datasets ionosphere,adult-1k]
        [--data-dir DIR] [--quick] [...]
    marginkit reproduce ... [--workers N | --scheduler ADDRESS] [--plot PATH]
    marginkit train DATA --estimator NAME [--param NAME=VALUE ...] [--max-iter N]
        --model MODEL.skops
        [--checkpoint PATH [--checkpoint-every N] | --chunk-size N [--classes A,B,...]]
        [--n-features N] [--first-index 0|1] [--json]
    marginkit predict MODEL.skops DATA [--out LABELS.txt]
    marginkit evaluate MODEL.skops DATA [--json]
    marginkit evaluate --prequential ESTIMATOR DATA [--param NAME=VALUE ...]
        [--chunk-size N] [--window N] [--plot PNG] [--json]
    marginkit --version

DATA is an svmlight / LIBSVM file, or CSV (``.csv``, or ``--format csv``) with the label in
the last column (``--label-column``); plain, ``.gz``, ``.bz2`` or ``.xz``. A model reads
every file as its training data were read (the same width and, for svmlight, the same
first index); ``predict`` needs no labels (an svmlight label is a placeholder, and a CSV
file may leave the label column out).

User errors (bad arguments, an option that does not apply to the experiment, an unknown
experiment or estimator, a missing or unreadable data or model file, a bad parameter)
print one line on standard error and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time

from . import __version__
from ._cli_models import add_model_commands
from ._cli_types import (
    alpha_list,
    choices_of,
    count,
    dataset_list,
    degree_list,
    seed,
)

PROG = "marginkit"


class _UsageError(Exception):
    """A command-line mistake, reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing the usage and exiting."""

    def error(self, message):
        raise _UsageError(message)


#: Command-line options of ``reproduce`` passed to the experiment's ``build_spec``.
_SPEC_OPTIONS = {
    "permutations": "--permutations",
    "epochs": "--epochs",
    "degrees": "--degrees",
    "alphas": "--alphas",
    "algorithms": "--algorithms",
    "b_settings": "--b-settings",
    "max_epochs": "--max-epochs",
    "repeats": "--repeats",
    "datasets": "--datasets",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``marginkit`` command."""
    from .experiments import available_experiments

    parser = _Parser(
        prog=PROG,
        description="Online approximate maximum-margin classifiers: train, predict and "
        "evaluate on data files; demos and paper reproductions.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="a short tour of ALMA_p on generated sparse and dense targets",
        description="Train ALMA_p for a few settings of p and alpha on a sparse and on a "
        "dense generated target and print their test errors and corrections.",
    )
    demo.add_argument("--seed", type=seed, default=0, help="seed of the data (default 0)")

    names = ", ".join(available_experiments())
    rep = commands.add_parser(
        "reproduce",
        help=f"run (or resume) a published experiment ({names}), or all of them",
        description="Run a published experiment, resuming from an existing PATH_PREFIX.json "
        "with the same spec; write PATH_PREFIX.json and PATH_PREFIX.md and print the table. "
        "'all' runs every experiment into a folder (--out, default results) and ends with "
        "the scoreboard of every published cell (scoreboard.md there).",
    )
    rep.add_argument("experiment", metavar="EXPERIMENT", help=f"all, or one of: {names}")
    rep.add_argument(
        "--workers",
        type=count,
        default=None,
        metavar="N",
        help="run the cells on a local Dask cluster of N processes (the dask extra)",
    )
    rep.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run the cells on the Dask cluster at ADDRESS, e.g. tcp://host:8786",
    )
    rep.add_argument(
        "--plot",
        metavar="PATH",
        help="where the experiment's figures go (a path prefix, or PATH.png; default "
        "beside the report); gentile-mnist, -usps, -letter and pumma-artificial draw some",
    )
    rep.add_argument(
        "--quick", action="store_true", help="a small version that runs in under a minute"
    )
    rep.add_argument(
        "--out",
        metavar="PATH_PREFIX",
        default=None,
        help="output path without extension (default results/EXPERIMENT, or "
        "results/EXPERIMENT-quick with --quick); with 'all', the folder (default results)",
    )
    rep.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="base seed: of the generated data (gentile-table6), of the permutations of the "
        "training set (the kernel experiments); default 0",
    )
    rep.add_argument("--quiet", action="store_true", help="no progress bar or status lines")
    kernel = rep.add_argument_group(
        "kernel experiments (gentile-mnist, gentile-usps, gentile-letter; gentile-table6 "
        "takes --permutations)"
    )
    kernel.add_argument(
        "--permutations",
        type=count,
        metavar="N",
        help="random permutations of the training set (default 10; 2 with --quick, 1 for "
        "gentile-table6)",
    )
    kernel.add_argument(
        "--epochs",
        type=count,
        metavar="E",
        help="epochs of every fit, each recorded (default: the table's; at most 2 with --quick)",
    )
    kernel.add_argument(
        "--degrees",
        type=degree_list,
        metavar="D[,D...]",
        help="kernel degrees of every row (default: those the tables print; gentile-mnist "
        "4 to 6, gentile-letter 5)",
    )
    kernel.add_argument(
        "--alphas",
        type=alpha_list,
        metavar="A[,A...]",
        help="ALMA_2's alphas, each with every degree (default: those the tables print)",
    )
    kernel.add_argument(
        "--algorithms",
        type=choices_of(("Perceptron", "ROMMA", "agg-ROMMA", "ALMA2"), "algorithm(s)"),
        metavar="NAME[,NAME...]",
        help="some of Perceptron, ROMMA, agg-ROMMA, ALMA2 (default: all the tables print)",
    )
    kernel.add_argument(
        "--b-settings",
        type=choices_of(("1/alpha", "sqrt8/alpha"), "B setting(s)"),
        metavar="B[,B...]",
        help="ALMA_2's B for alpha < 1: 1/alpha (the paper's, default) and/or sqrt8/alpha",
    )
    kernel.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="directory of the data files (default: $MARGINKIT_DATA or ~/marginkit_data)",
    )
    pumma = rep.add_argument_group(
        "PUMMA experiments (pumma-artificial, pumma-real; pumma-real also takes --data-dir)"
    )
    pumma.add_argument(
        "--max-epochs",
        type=count,
        metavar="N",
        help="epoch cap: of every algorithm (pumma-artificial, default 3000; 200 with "
        "--quick), of plain ROMMA and ALMA (pumma-real, default 1000; 100 with --quick; "
        "PUMMA and aggressive ROMMA there run to convergence)",
    )
    pumma.add_argument(
        "--repeats",
        type=count,
        metavar="N",
        help="data sets per r (pumma-artificial; default 5, 1 with --quick)",
    )
    pumma.add_argument(
        "--datasets",
        type=dataset_list,
        metavar="NAME[,NAME...]",
        help="data sets of pumma-real (default: all eight; three with --quick)",
    )
    add_model_commands(commands)
    return parser


def _read_options(args, default_label_column="model"):
    label_column = args.label_column
    return {
        "fmt": args.format,
        "label_column": default_label_column if label_column is None else label_column,
        "skip_header": args.skip_header,
    }


def _train(args) -> int:
    from sklearn.utils._param_validation import InvalidParameterError

    from .tasks import describe_passes, parse_param, train

    try:
        params = dict(parse_param(p) for p in args.param)
        if args.max_iter is not None:
            if params.get("max_iter", args.max_iter) != args.max_iter:
                raise ValueError(
                    f"--max-iter {args.max_iter} and --param max_iter={params['max_iter']} "
                    "disagree: give one"
                )
            params["max_iter"] = args.max_iter
        if args.class_weight is not None:
            if params.get("class_weight", args.class_weight) != args.class_weight:
                raise ValueError(
                    f"--class-weight {args.class_weight} and --param class_weight="
                    f"{params['class_weight']} disagree: give one"
                )
            params["class_weight"] = args.class_weight
        if not args.quiet and sys.stderr.isatty():
            params.setdefault("verbose", 1)  # a progress bar, on a terminal only
        summary = train(
            args.data,
            args.estimator,
            args.model,
            params=params,
            n_features=args.n_features,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            chunk_size=args.chunk_size,
            classes=args.classes,
            zero_based="auto" if args.first_index is None else args.first_index == 0,
            workers=args.workers,
            scheduler=args.scheduler,
            mixing=args.mixing,
            momentum=args.momentum,
            mix_every=args.mix_every,
            warm_up=args.warm_up,
            **_read_options(args, -1),
        )
    except (
        FileNotFoundError,
        IsADirectoryError,
        ImportError,
        InvalidParameterError,
        TypeError,
        ValueError,
    ) as exc:
        raise _UsageError(str(exc)) from None
    except OSError as exc:
        _say(f"error: {exc}")
        return 1
    if args.json:
        print(json.dumps(_strict_json(summary), indent=2, allow_nan=False))
        return 0
    if not args.quiet:
        if summary["resumed_from"]:
            _say(f"resumed from the checkpoint {summary['resumed_from']}")
        for message in summary["warnings"]:
            _say(f"warning: {message}")
        shards = summary.get("n_shards")
        where = f" in {shards} shard{'s' * (shards != 1)} on a Dask cluster" if shards else ""
        _say(
            f"trained {summary['estimator']} on {summary['n_samples']} examples x "
            f"{summary['n_features']} features{where} in {summary['train_seconds']:.2f} s "
            f"({summary['n_corrections']} corrections; {describe_passes(summary)}); saved "
            f"{summary['model']}"
        )
    return 0


def _predict(args) -> int:
    from ._files import atomic_write, prepare_output
    from .tasks import predict

    try:
        if args.out:
            prepare_output(args.out, "the labels")
        labels = predict(args.model, args.data, **_read_options(args))
    except (FileNotFoundError, IsADirectoryError, ValueError) as exc:
        raise _UsageError(str(exc)) from None
    text = "".join(f"{label}\n" for label in labels)
    if args.out:
        atomic_write(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _evaluate_prequential(args) -> int:
    from .tasks import evaluate_prequential, parse_param

    try:
        params = dict(parse_param(p) for p in args.param)
        sizes = {"chunk_size": args.chunk_size, "window": args.window}
        result = evaluate_prequential(
            args.model,
            args.data,
            params=params,
            plot=args.plot,
            **{name: value for name, value in sizes.items() if value is not None},
            **_read_options(args, -1),
        )
    except (FileNotFoundError, IsADirectoryError, ImportError, ValueError) as exc:
        raise _UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(_strict_json(result), indent=2, allow_nan=False))
        return 0
    lately = result["window_accuracy"]
    rows = [
        ("estimator", result["estimator"]),
        (
            "examples",
            f"{result['n_samples']} ({result['n_scored']} scored: all but the first chunk)",
        ),
        ("accuracy", f"{100 * result['accuracy']:.2f}%"),
        (
            f"over the last {result['window']}",
            "-" if lately is None else f"{100 * lately:.2f}%",
        ),
        ("time per example", f"{1e6 * result['seconds_per_row']:.1f} us (predict and learn)"),
        ("model size", f"{result['model_bytes']} bytes"),
    ]
    if "plot" in result:
        rows.append(("plot", result["plot"]))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


def _strict_json(value):
    """``value`` with every float that is not finite (a margin of an overflowed model)
    as None: JSON has no infinity, and a parser of the standard refuses Python's."""
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _evaluate(args) -> int:
    from .tasks import describe_passes, evaluate

    if args.prequential:
        return _evaluate_prequential(args)
    options = {"--param": args.param, "--chunk-size": args.chunk_size, "--window": args.window}
    given = [flag for flag, value in options.items() if value]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise _UsageError(f"{', '.join(given)} {verb} only with --prequential")
    try:
        result = evaluate(args.model, args.data, plot=args.plot, **_read_options(args))
    except (FileNotFoundError, IsADirectoryError, ImportError, ValueError) as exc:
        raise _UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(_strict_json(result), indent=2, allow_nan=False))
        return 0
    rows = [
        ("model", f"{result['model']} ({result['estimator']}, output={result['output']})"),
        ("examples", str(result["n_samples"])),
        ("test error", f"{100 * result['error']:.2f}%"),
        ("predict time", f"{result['predict_seconds']:.3f} s"),
        ("training corrections", str(result["n_corrections"])),
        ("training passes", describe_passes(result)),
    ]
    if result["unknown_labels"]:
        rows.append(("labels unknown to the model", str(result["unknown_labels"])))
    if result["smallest_margin"] is not None:
        rows.append(("smallest margin y f(x)", f"{result['smallest_margin']:.6g}"))
        rows.append(("median margin y f(x)", f"{result['median_margin']:.6g}"))
    if result["geometric_margin"] is not None:
        rows.append(
            (
                f"geometric margin (p = {result['p']:g})",
                f"{result['geometric_margin']:.6g}",
            )
        )
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


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
    args = None
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        if args.command is None:
            raise _UsageError(
                "a command is required: demo, reproduce, train, predict or evaluate "
                "(see marginkit --help)"
            )
        commands = {
            "demo": _demo,
            "reproduce": _reproduce,
            "train": _train,
            "predict": _predict,
            "evaluate": _evaluate,
        }
        return commands[args.command](args)
    except _UsageError as exc:
        _say(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        _say(_interrupted(args))
        return 130


def _interrupted(args):
    """What a Ctrl-C of the command ``args`` left, and how to go on from it."""
    command = getattr(args, "command", None)
    if command == "reproduce":
        return "interrupted (a reproduction resumes where it stopped when run again)"
    if command == "train":
        if getattr(args, "checkpoint", None):
            return (
                f"interrupted: the same command resumes from the last checkpoint written "
                f"to {args.checkpoint}"
            )
        return (
            "interrupted: nothing was saved, and training starts over when run again; "
            "pass --checkpoint PATH to make it resumable"
        )
    return "interrupted"


def _demo(args) -> int:
    from .experiments.demo import format_demo, run_demo

    settings = {"n_train": 3000, "n_test": 3000, "n_features": 300, "sparse": 3}
    rows, seconds = run_demo(seed=args.seed, **settings)
    print(format_demo(rows, seconds, **settings))
    return 0


def _reproduce(args) -> int:
    from .experiments import (
        MissingDataError,
        UnknownExperimentError,
        get_experiment,
        reproduce,
        reproduce_all,
    )

    if args.workers is not None and args.scheduler is not None:
        raise _UsageError(
            "--workers (a local cluster) and --scheduler (a running one) exclude each other"
        )
    common = {
        "quick": args.quick,
        "seed": args.seed,
        "quiet": args.quiet,
        "data_dir": args.data_dir,
        "workers": args.workers,
        "scheduler": args.scheduler,
    }
    given = [
        (name, flag) for name, flag in _SPEC_OPTIONS.items() if getattr(args, name) is not None
    ]
    if args.experiment == "all":
        flags = [flag for _, flag in given] + ([] if args.plot is None else ["--plot"])
        if flags:
            raise _UsageError(
                f"{', '.join(flags)} do(es) not apply to 'all' (it runs every default grid)"
            )

        def run():
            return reproduce_all(args.out, progress=None if args.quiet else _say, **common)

    else:
        try:
            experiment = get_experiment(args.experiment)
        except UnknownExperimentError as exc:
            raise _UsageError(str(exc)) from None
        accepted = getattr(experiment, "OPTIONS", ())
        for name, flag in given:
            if name not in accepted:
                raise _UsageError(f"{flag} does not apply to {args.experiment}")
        options = {name: getattr(args, name) for name, _ in given}
        if args.data_dir is not None and not getattr(experiment, "USES_DATA", False):
            raise _UsageError(
                f"--data-dir does not apply to {args.experiment} (it reads no files)"
            )
        if args.plot is not None and getattr(experiment, "write_figures", None) is None:
            raise _UsageError(f"--plot does not apply to {args.experiment} (it draws no figures)")

        def run():
            return reproduce(args.experiment, args.out, figures=args.plot, **common, **options)

    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(f"{PROG}: warning: %(message)s"))
    log = logging.getLogger("marginkit.experiments")
    log.addHandler(handler)
    start = time.perf_counter()
    try:
        result = run()
    except (MissingDataError, ImportError, ValueError) as exc:
        raise _UsageError(str(exc)) from None
    except OSError as exc:
        _say(f"error: {exc}")
        return 1
    finally:
        log.removeHandler(handler)
    seconds = time.perf_counter() - start
    if args.experiment == "all":
        print(result.markdown, end="")
        if not args.quiet:
            _say(f"{seconds:.1f} s; wrote {result.markdown_path}")
        return 0
    print(result.markdown)
    if result.figure_note:
        _say(f"warning: {result.figure_note}")
    if not args.quiet:
        if result.figures:
            _say("wrote " + " and ".join(str(f) for f in result.figures))
        report = result.report
        _say(
            f"{len(report.computed)} cells computed, {len(report.skipped)} reused, "
            f"{seconds:.1f} s; wrote {result.json_path} and {result.markdown_path}"
        )
    return 0


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
