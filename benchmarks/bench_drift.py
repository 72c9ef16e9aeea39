"""Prequential accuracy, time and size on streams that change, against river's learners.

Every stream is scored prequentially (each row predicted, then learnt): marginkit's
models by :func:`marginkit.prequential.prequential_score` in chunks of ``--chunk-size``
rows, river's by ``river.evaluate.progressive_val_score`` one row at a time. The streams:
river's shipped ``Bananas`` and ``Phishing``, and its generators ``RandomRBFDrift``
(50 centroids, 25 of them drifting at speed 0.001), ``Hyperplane`` (drifting, 5%
noise; and a still one changed for another half-way), ``SEA`` and ``STAGGER`` with a
change of concept half-way (``ConceptDriftStream``, over a twentieth of the rows: river's
sigmoid overflows on a narrower one). Features are standardised by running statistics:
each row by the mean and deviation of the rows up to it (marginkit's models) or by
river's ``StandardScaler`` in a pipeline (river's); STAGGER's categories are one-hot
coded for marginkit's models, and given as their codes to river's.

marginkit's models: ``ALMAClassifier`` and ``KernelALMAClassifier(kernel="rbf")``, exact
and with a budget of ``--budget`` vectors under each rule of ``--rules``, each with its averaged
output, the average over a ``--horizon`` of trials and its last hypothesis. river's:
``ARFClassifier``, ``HoeffdingAdaptiveTreeClassifier``, ``ALMAClassifier``,
``PAClassifier``, on the same rows (the forest on the first ``--river-rows`` only where
that is given, its time then extrapolated per row).

Run ``python benchmarks/bench_drift.py`` (about ten minutes on 2 cores) or with
``--quick``. A benchmark reports: the exit code is 0 whatever the numbers.
"""

import argparse
import itertools
import pickle
import time
from pathlib import Path

import numpy as np
from _machine import machine_line

WINDOW = 1000


def streams(n_rows, seed):
    """``{name: list of (dict, label)}``: the streams of the benchmark, ``n_rows`` rows
    of each generator."""
    from river import datasets
    from river.datasets import synth

    def changing(first, second):
        # the concept changes half-way, over a twentieth of the rows
        width = max(n_rows // 20, 1)
        return synth.ConceptDriftStream(first, second, n_rows // 2, width, seed=seed)

    made = {
        "Bananas": datasets.Bananas(),
        "Phishing": datasets.Phishing(),
        "RandomRBFDrift": synth.RandomRBFDrift(
            seed_model=7,
            seed_sample=8,
            n_classes=2,
            n_features=10,
            n_centroids=50,
            change_speed=0.001,
            n_drift_centroids=25,
        ),
        "Hyperplane": synth.Hyperplane(seed=seed, n_features=10, mag_change=0.001),
        "Hyperplane, change": changing(
            synth.Hyperplane(seed=seed, n_features=10),
            synth.Hyperplane(seed=seed + 1, n_features=10),
        ),
        "SEA, change": changing(
            synth.SEA(variant=0, seed=seed), synth.SEA(variant=2, seed=seed + 1)
        ),
        "STAGGER, change": changing(
            synth.STAGGER(classification_function=0, seed=seed),
            synth.STAGGER(classification_function=2, seed=seed + 1),
        ),
    }
    return {name: list(itertools.islice(data, n_rows)) for name, data in made.items()}


#: The streams whose features are categories (STAGGER's size, colour and shape, coded
#: 0, 1, 2): one-hot coded for marginkit's linear and kernel models, as such a model
#: takes categories (river's forest and trees split the codes themselves)
CATEGORICAL = ("STAGGER, change",)


def as_arrays(rows, one_hot=False):
    """The rows as a float64 matrix (features in the first row's order) and the labels
    as an array: with ``one_hot``, a 0 / 1 column per value of each feature (the
    stream's schema: the values it takes); otherwise the running standardisation, each
    row by the mean and deviation of the rows up to it."""
    names = list(rows[0][0])
    y = np.array([label for _, label in rows])
    if one_hot:
        values = {k: sorted({x[k] for x, _ in rows}) for k in names}
        columns = [(k, v) for k in names for v in values[k]]
        X = np.array([[float(x[k] == v) for k, v in columns] for x, _ in rows])
        return X, y
    X = np.array([[float(x[k]) for k in names] for x, _ in rows])
    n = np.arange(1, X.shape[0] + 1)[:, None]
    mean = np.cumsum(X, axis=0) / n
    var = np.maximum(np.cumsum(X * X, axis=0) / n - mean**2, 0.0)
    scale = np.where(var > 0, np.sqrt(var), 1.0)
    return (X - mean) / scale, y


#: The budget rules the benchmark scores (each with its averaged output, that of the
#: horizon, and its last hypothesis)
RULES = ("project_new", "project", "project_old", "remove_oldest", "remove_random", "merge")


def marginkit_models(budget, horizon, rules=RULES):
    """``{label: estimator}``: ALMA, exact kernel ALMA and budgeted kernel ALMA under each
    rule, each with its averaged output, the average of ``horizon`` trials and its last
    hypothesis."""
    from marginkit import ALMAClassifier, KernelALMAClassifier

    outputs = {"avg": {}, f"avg, horizon {horizon:g}": {"horizon": horizon}}
    outputs["last"] = {"output": "last"}
    models = {f"ALMA ({out})": ALMAClassifier(**kw) for out, kw in outputs.items()}
    for out, kw in outputs.items():
        # the exact model: its store grows with the corrections
        models[f"kernel ALMA rbf, exact ({out})"] = KernelALMAClassifier(kernel="rbf", **kw)
    for rule in rules:
        for out, kw in outputs.items():
            models[f"kernel ALMA rbf, budget {budget} {rule} ({out})"] = KernelALMAClassifier(
                kernel="rbf",
                budget=budget,
                budget_rule=rule,
                fit_intercept=rule != "merge",
                random_state=0,
                **kw,
            )
    return models


def river_models():
    from river import forest, linear_model, preprocessing, tree

    def scaled(model):
        return preprocessing.StandardScaler() | model

    return {
        "river ARFClassifier": lambda: scaled(forest.ARFClassifier(seed=0)),
        "river HoeffdingAdaptiveTree": lambda: scaled(
            tree.HoeffdingAdaptiveTreeClassifier(seed=0)
        ),
        "river ALMAClassifier": lambda: scaled(linear_model.ALMAClassifier()),
        "river PAClassifier": lambda: scaled(linear_model.PAClassifier()),
    }


def score_river(make, rows, label, every):
    """A river model's :class:`~marginkit.prequential.PrequentialScore` on ``rows``, row
    by row, its record taken every ``every`` rows (the first row, which no model has
    learnt before, left out as ``prequential_score`` leaves out its first chunk)."""
    from river import evaluate, metrics

    from marginkit.prequential import PrequentialScore

    model = make()
    hits = []

    class Record(metrics.Accuracy):
        def update(self, y_true, y_pred, w=1.0):
            hits.append(y_true == y_pred)
            return super().update(y_true, y_pred, w)

    start = time.perf_counter()
    evaluate.progressive_val_score(rows, model, Record())
    seconds = time.perf_counter() - start
    # the rows scored after the first (river records no first row for a model that
    # predicts nothing before it has learnt one)
    hits = np.array(hits[len(hits) - (len(rows) - 1) :], dtype=float)
    total = np.concatenate([[0.0], np.cumsum(hits)])
    points = np.unique(np.r_[np.arange(every, len(rows), every), len(rows)])
    scored = points - 1
    low = np.maximum(scored - WINDOW, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        windowed = (total[scored] - total[low]) / (scored - low)
    return PrequentialScore(
        estimator=model,
        label=label,
        n_rows=len(rows),
        n_scored=hits.shape[0],
        accuracy=float(hits.mean()),
        rows=points,
        windowed=windowed,
        window=WINDOW,
        seconds=seconds,
        model_bytes=len(pickle.dumps(model)),
    )


#: the models each stream's figure draws (``--plot``)
DRAWN = (
    "ALMA (avg)",
    "kernel ALMA rbf, budget {budget} project_new (avg)",
    "kernel ALMA rbf, budget {budget} project_new (avg, horizon {horizon:g})",
    "river ARFClassifier",
    "river HoeffdingAdaptiveTree",
)


def draw(name, scores, budget, horizon, folder):
    """The windowed accuracy of the models of :data:`DRAWN` on one stream, saved as a PNG
    in ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from marginkit.plotting import plot_prequential

    wanted = [label.format(budget=budget, horizon=horizon) for label in DRAWN]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    plot_prequential([s for s in scores if s.label in wanted], ax=ax, title=name)
    fig.tight_layout()
    stem = name.split(",")[0].lower()
    fig.savefig(Path(folder) / f"drift-{stem}.png", dpi=100)
    plt.close(fig)


def report(score, n_rows):
    """One line of the table: accuracy overall and over the last rows, time, size."""
    note = f" (first {score.n_rows} rows)" if score.n_rows < n_rows else ""
    print(
        f"{score.label + note:<48} {100 * score.accuracy:7.2f}% "
        f"{100 * score.windowed[-1]:7.2f}% {1e6 * score.seconds_per_row:9.1f} "
        f"{score.model_bytes:10d}",
        flush=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000, help="rows of each generator")
    parser.add_argument(
        "--river-rows", type=int, default=None, help="rows of the forest (default: all)"
    )
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--horizon", type=float, default=100.0, help="of the averages")
    parser.add_argument("--rules", nargs="+", choices=RULES, default=list(RULES))
    parser.add_argument("--streams", nargs="+", help="only these streams (by first word)")
    parser.add_argument("--chunk-size", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="3000 rows, budget 200")
    parser.add_argument("--plot", metavar="DIR", help="draw each stream's curves there")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.river_rows, args.budget = 3000, 1000, 200

    from marginkit.prequential import prequential_score

    print(machine_line())
    print(
        f"prequential accuracy: overall / over the last {WINDOW} rows; marginkit in chunks "
        f"of {args.chunk_size} rows, river row by row"
    )
    for name, rows in streams(args.rows, args.seed).items():
        if args.streams and name.split(",")[0] not in args.streams:
            continue
        X, y = as_arrays(rows, one_hot=name in CATEGORICAL)
        print(f"\n== {name}: {X.shape[0]} rows x {X.shape[1]} features")
        print(f"{'model':<48} {'overall':>8} {'window':>8} {'us/row':>9} {'bytes':>10}")
        scores = []
        for label, est in marginkit_models(args.budget, args.horizon, args.rules).items():
            scores.append(
                prequential_score(
                    est, X, y, chunk_size=args.chunk_size, window=WINDOW, label=label
                )
            )
            report(scores[-1], len(rows))
        for label, make in river_models().items():
            part = rows[: args.river_rows] if "ARF" in label and args.river_rows else rows
            scores.append(score_river(make, part, label, args.chunk_size))
            report(scores[-1], len(rows))
        if args.plot:
            draw(name, scores, args.budget, args.horizon, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
