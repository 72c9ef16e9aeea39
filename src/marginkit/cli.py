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
from ._cli_types import (
    alpha_list,
    choices_of,
    count,
    dataset_list,
    degree_list,
    int_at_least,
    label_list,
    momentum_value,
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
    _add_model_commands(commands)
    return parser


def _add_data_options(cmd):
    from .formats import FORMATS

    cmd.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="the data file's format (default: csv for .csv names, else svmlight)",
    )
    cmd.add_argument(
        "--label-column",
        type=int,
        default=None,
        metavar="I",
        help="CSV: the column of the label (default: for train -1, the last; for "
        "predict and evaluate, the model's)",
    )
    cmd.add_argument(
        "--skip-header",
        action="store_true",
        help="CSV: the first line names the columns (a first line that is not numbers "
        "is taken as such anyway)",
    )


def _add_model_commands(commands):
    from .tasks import ESTIMATORS

    train = commands.add_parser(
        "train",
        help="fit an estimator on a data file and save the model",
        description="Fit an estimator on an svmlight or CSV file and save it with "
        "marginkit.save (a skops archive that loads without running code).",
    )
    train.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="training data file; several with --workers or --scheduler, each a shard",
    )
    train.add_argument(
        "--estimator",
        required=True,
        choices=sorted(ESTIMATORS),
        metavar="NAME",
        help=f"one of: {', '.join(ESTIMATORS)}",
    )
    train.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an estimator parameter, e.g. --param p=6 --param alpha=0.5 (repeatable); "
        "max_iter caps the passes over the data and tol ends them early (see --max-iter)",
    )
    train.add_argument(
        "--max-iter",
        type=count,
        default=None,
        metavar="N",
        help="at most N passes over the data (--param max_iter=N); fewer when tol ends "
        "them or a pass makes no update (the estimators' default: 1000, with tol=1e-3 "
        "ending them early). Streamed, each pass reads the file again; "
        "--max-iter 1 reads it once. The summary says how many passes were made and why "
        "they stopped",
    )
    train.add_argument(
        "--class-weight",
        choices=("balanced",),
        default=None,
        help="weigh each class by n_samples / (n_classes * its rows) (--param "
        "class_weight=balanced): for imbalanced data. Streamed (--chunk-size), from the "
        "first chunk",
    )
    train.add_argument("--model", required=True, metavar="PATH", help="where to save it")
    train.add_argument(
        "--n-features",
        type=count,
        default=None,
        metavar="N",
        help="svmlight: the number of features (default: the largest index in the file)",
    )
    train.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="write training's progress here, and resume from it when it exists",
    )
    train.add_argument(
        "--checkpoint-every",
        type=count,
        default=None,
        metavar="N",
        help="trials between checkpoints (default: one per epoch)",
    )
    train.add_argument(
        "--chunk-size",
        type=count,
        default=None,
        metavar="N",
        help="stream the file N examples at a time, never holding it whole, in the order "
        "of its rows: the model is that of training in memory with shuffle=False (default: "
        "read it whole, each pass in a new random order; a file sorted by class warns). Each "
        "pass over the data reads the file again (up to max_iter passes; --max-iter 1 "
        "for one), after a first pass that finds the width and labels unless "
        "--classes and --n-features tell them",
    )
    train.add_argument(
        "--classes",
        type=label_list,
        default=None,
        metavar="A,B,...",
        help="with --chunk-size: all the labels of the file (--classes=-1,1 when the "
        "first is negative); with --n-features (and --first-index for svmlight) the "
        "stream needs no first pass over the file",
    )
    train.add_argument(
        "--first-index",
        type=int,
        choices=(0, 1),
        default=None,
        help="svmlight: the index of the first feature (default: 0 if the file uses index "
        "0, else 1, as scikit-learn's zero_based='auto'; streamed, that costs a first pass); "
        "the model keeps it for every file it reads",
    )
    cluster = train.add_argument_group(
        "on a Dask cluster",
        "iterative parameter mixing (marginkit.distributed.MixingClassifier) of ALMA or "
        "the Perceptron: each DATA file is a shard, read on the workers in chunks "
        "(--chunk-size, default 10000), never through this process; --max-iter and tol "
        "bound the epochs",
    )
    where = cluster.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=count,
        default=None,
        metavar="N",
        help="train on a local cluster of N worker processes",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="train on the Dask cluster at ADDRESS, e.g. tcp://host:8786 (the DATA paths "
        "must name the files where its workers run)",
    )
    cluster.add_argument(
        "--mixing",
        choices=("uniform", "corrections"),
        default="uniform",
        help="the shards' weights in each mix: equal, or their corrections (default uniform)",
    )
    cluster.add_argument(
        "--momentum",
        type=momentum_value,
        default=0.0,
        metavar="M",
        help="block momentum over the mixes, in [0, 1), or auto (1 - 1/shards); default 0",
    )
    cluster.add_argument(
        "--mix-every",
        type=count,
        default=None,
        metavar="ROWS",
        help="a mix after every ROWS rows of each file, each file then read once and held "
        "in its worker's memory (default: one mix an epoch, the files streamed)",
    )
    cluster.add_argument(
        "--warm-up",
        type=int_at_least(0),
        default=0,
        metavar="ROWS",
        help="the first epoch's first ROWS rows of each file learnt in sequence, file after "
        "file, before the files learn in parallel (default 0)",
    )
    train.add_argument("--quiet", action="store_true", help="print nothing on success")
    train.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on standard output (examples, features, "
        "corrections, n_passes and why they stopped, seconds, warnings)",
    )
    _add_data_options(train)

    pred = commands.add_parser(
        "predict",
        help="predict the labels of a data file with a saved model",
        description="Print (or write) one predicted label per example of DATA.",
    )
    pred.add_argument("model", metavar="MODEL", help="a model saved by marginkit train")
    pred.add_argument(
        "data",
        metavar="DATA",
        help="data file: svmlight with any placeholder label, or CSV with or without the "
        "label column",
    )
    pred.add_argument("--out", metavar="PATH", help="write the labels here (default: stdout)")
    _add_data_options(pred)

    ev = commands.add_parser(
        "evaluate",
        help="test error, timing, corrections and margins of a saved model",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Evaluate a saved model on a labelled data file.\n\n"
        "test error: the fraction of examples misclassified.\n"
        "smallest / median margin: of y f(x), f the model's decision_function (several "
        "classes: f_y(x) less\n  the largest other f_j(x)), the values that --plot "
        "draws; negative for a mistake. ALMA's\n  are margins of normalised instances "
        "under a hypothesis of norm at most 1, so in [-1, 1];\n  the Perceptron's are "
        "not normalised.\n"
        "geometric margin (two-class linear models): min y (w . x + b) / ||w||_q, the "
        "p-norm distance of\n  the closest example to the hyperplane (1/p + 1/q = 1; b "
        "is 0 without an intercept), scale-free.",
    )
    ev.add_argument(
        "model",
        metavar="MODEL",
        help="a model saved by marginkit train; with --prequential, an estimator name "
        f"({', '.join(ESTIMATORS)})",
    )
    ev.add_argument("data", metavar="DATA", help="labelled data file")
    ev.add_argument(
        "--prequential",
        action="store_true",
        help="train MODEL (an estimator) on DATA as a stream and score it as streams are "
        "scored: each chunk of --chunk-size examples predicted by the model as it stands, "
        "then learnt; accuracy overall and over the last --window examples (--plot: "
        "against the examples read)",
    )
    ev.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="with --prequential: an estimator parameter, as for train (repeatable)",
    )
    ev.add_argument(
        "--chunk-size",
        type=count,
        default=None,
        metavar="N",
        help="with --prequential: the examples predicted, then learnt, at a time (default: 100)",
    )
    ev.add_argument(
        "--window",
        type=count,
        default=None,
        metavar="N",
        help="with --prequential: the examples of the sliding window (default: 1000)",
    )
    ev.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON (a number that is not finite as null)",
    )
    ev.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw the cumulative margin distribution of the data under the model",
    )
    _add_data_options(ev)


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
        result = evaluate_prequential(
            args.model,
            args.data,
            params=params,
            chunk_size=100 if args.chunk_size is None else args.chunk_size,
            window=1000 if args.window is None else args.window,
            plot=args.plot,
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
