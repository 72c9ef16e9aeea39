"""The command line's model commands (``train``, ``predict``, ``evaluate``): their
arguments, for :func:`marginkit.cli.build_parser`."""

from __future__ import annotations

import argparse

from ._cli_types import (
    count,
    int_at_least,
    label_list,
    momentum_value,
)


def add_data_options(cmd):
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


def add_model_commands(commands):
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
    add_data_options(train)

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
    add_data_options(pred)

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
    add_data_options(ev)
