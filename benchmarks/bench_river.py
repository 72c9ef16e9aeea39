"""The river bridge (marginkit.river.RiverClassifier) row by row, against river's own
linear learners and against partial_fit on a chunk of rows; and its prequential
accuracy on river's Bananas and Phishing.

Timing: the per-row time of ``learn_one`` (a fresh model learning every row of a stream,
the first two left untimed: they make the first fit) and of ``predict_one`` (the model
then predicting every row), for the bridge on ``ALMAClassifier()``,
``PerceptronClassifier()`` and ``KernelALMAClassifier(kernel="rbf")`` (on the first
``--kernel-rows`` rows: its cost grows with its support vectors), and for river's
``ALMAClassifier()`` and ``PAClassifier()``; beside them, ``partial_fit`` on all the
rows as one chunk (the cost of the learning itself, per row) and on one row a call. The
streams: river's Phishing (9 features), standardised beforehand so that every learner
is timed on the same dicts, and a synthetic stream of ``--width`` features (river's
learners loop over a row's features in Python). Each round times every learner once,
in turn; the table gives the median over ``--repeat`` rounds, and each ratio the median
of the rounds' ratios (a machine that slows down in a round slows every learner).

Accuracy: ``river.evaluate.progressive_val_score`` of ``StandardScaler() | model`` on
Bananas and Phishing, for the bridge on those estimators and for river's learners.

Run ``python benchmarks/bench_river.py`` (one to three minutes on 2 cores) or with ``--quick``.
A benchmark reports: the exit code is 0 whatever the numbers.
"""

import argparse
import itertools
import statistics
import time

import numpy as np
from _machine import machine_line


def standardised(rows):
    """The rows as river's ``StandardScaler`` gives them to the next step of a pipeline
    (each row by the statistics of the rows up to it), with their labels."""
    from river import preprocessing

    scaler, out = preprocessing.StandardScaler(), []
    for x, y in rows:
        scaler.learn_one(x)
        out.append((scaler.transform_one(x), y))
    return out


def synthetic(n_rows, width, seed):
    """Two overlapping Gaussian classes of ``width`` features, as dicts, bool labels."""
    rng = np.random.default_rng(seed)
    y = rng.random(n_rows) < 0.5
    X = rng.normal(size=(n_rows, width)) + np.where(y, 0.3, -0.3)[:, None]
    names = [f"x{j}" for j in range(width)]
    return [
        (dict(zip(names, row.tolist(), strict=True)), bool(label))
        for row, label in zip(X, y, strict=True)
    ]


def learners():
    """``{name: make()}`` of the row-by-row learners timed."""
    from river import linear_model

    from marginkit import ALMAClassifier, KernelALMAClassifier, PerceptronClassifier
    from marginkit.river import RiverClassifier

    return {
        "river ALMAClassifier()": linear_model.ALMAClassifier,
        "river PAClassifier()": linear_model.PAClassifier,
        "bridge ALMAClassifier()": lambda: RiverClassifier(ALMAClassifier(), classes=[0, 1]),
        "bridge PerceptronClassifier()": lambda: RiverClassifier(
            PerceptronClassifier(), classes=[0, 1]
        ),
        "bridge KernelALMAClassifier(rbf)": lambda: RiverClassifier(
            KernelALMAClassifier(kernel="rbf"), classes=[0, 1]
        ),
    }


def time_rows(make, rows):
    """Seconds per row of ``learn_one`` (a fresh model, rows 2 on) and of
    ``predict_one`` (every row, after)."""
    model = make()
    for x, y in rows[:2]:
        model.learn_one(x, y)
    start = time.perf_counter()
    for x, y in rows[2:]:
        model.learn_one(x, y)
    learn = (time.perf_counter() - start) / (len(rows) - 2)
    start = time.perf_counter()
    for x, _ in rows:
        model.predict_one(x)
    return learn, (time.perf_counter() - start) / len(rows)


def time_partial_fit(rows):
    """Seconds per row of ``ALMAClassifier().partial_fit`` on all the rows as one chunk,
    and on one row a call (the first 200 rows)."""
    from marginkit import ALMAClassifier

    names = sorted(rows[0][0])
    X = np.array([[x.get(name, 0.0) for name in names] for x, _ in rows])
    y = np.array([label for _, label in rows])
    est = ALMAClassifier().partial_fit(X[:2], y[:2], classes=[0, 1])
    start = time.perf_counter()
    est.partial_fit(X[2:], y[2:])
    chunk = (time.perf_counter() - start) / (len(rows) - 2)
    n = min(len(rows), 202)
    est = ALMAClassifier().partial_fit(X[:2], y[:2], classes=[0, 1])
    start = time.perf_counter()
    for i in range(2, n):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    return chunk, (time.perf_counter() - start) / (n - 2)


def timing(name, rows, repeat, kernel_rows):
    """The table of one stream: median us per row of each learner, and the ratios."""
    rows = [(x, int(y)) for x, y in rows]
    makes = learners()
    times = {label: [] for label in makes}
    times["partial_fit, one chunk"], times["partial_fit, one row a call"] = [], []
    for _ in range(repeat):
        for label, make in makes.items():
            part = rows[:kernel_rows] if "Kernel" in label else rows
            times[label].append(time_rows(make, part))
        chunk, single = time_partial_fit(rows)
        times["partial_fit, one chunk"].append((chunk, np.nan))
        times["partial_fit, one row a call"].append((single, np.nan))
    width = len(rows[0][0])
    print(f"\n== {name}: {len(rows)} rows x {width} features; us per row, median of {repeat}")
    print(f"{'learner':<50} {'learn_one':>10} {'predict_one':>12}")
    for label, runs in times.items():
        learn = 1e6 * statistics.median(r[0] for r in runs)
        predict = 1e6 * statistics.median(r[1] for r in runs)
        note = f" (first {kernel_rows} rows)" if "Kernel" in label else ""
        shown = "" if np.isnan(predict) else f"{predict:12.2f}"
        print(f"{label + note:<50} {learn:10.2f} {shown}")

    def ratio(a, b, k=0):
        return statistics.median(x[k] / y[k] for x, y in zip(times[a], times[b], strict=True))

    river = "river ALMAClassifier()"
    print("ratios (median of the rounds'):")
    for label in ("bridge ALMAClassifier()", "bridge PerceptronClassifier()"):
        print(
            f"  {label} / {river}: learn_one {ratio(label, river):.2f}x, "
            f"predict_one {ratio(label, river, 1):.2f}x; learn_one / partial_fit on one "
            f"chunk {ratio(label, 'partial_fit, one chunk'):.2f}x"
        )
    print(
        f"  partial_fit, one row a call / bridge ALMAClassifier() learn_one: "
        f"{ratio('partial_fit, one row a call', 'bridge ALMAClassifier()'):.0f}x"
    )


def accuracy(quick):
    """The prequential accuracy of ``StandardScaler() | model`` on Bananas and Phishing."""
    from river import datasets, evaluate, linear_model, metrics, preprocessing

    from marginkit import ALMAClassifier, KernelALMAClassifier, PerceptronClassifier
    from marginkit.river import RiverClassifier

    models = {
        "bridge KernelALMAClassifier(rbf)": lambda: RiverClassifier(
            KernelALMAClassifier(kernel="rbf"), classes=[False, True]
        ),
        "bridge ALMAClassifier()": lambda: RiverClassifier(
            ALMAClassifier(), classes=[False, True]
        ),
        "bridge PerceptronClassifier()": lambda: RiverClassifier(
            PerceptronClassifier(), classes=[False, True]
        ),
        "river ALMAClassifier()": linear_model.ALMAClassifier,
        "river PAClassifier()": linear_model.PAClassifier,
    }
    print("\n== prequential accuracy of StandardScaler() | model (progressive_val_score)")
    print(f"{'model':<36} {'Bananas':>9} {'Phishing':>9} {'s':>7}")
    for label, make in models.items():
        cells, start = [], time.perf_counter()
        for data in (datasets.Bananas(), datasets.Phishing()):
            if quick:
                data = itertools.islice(data, 1000)
            model = preprocessing.StandardScaler() | make()
            score = evaluate.progressive_val_score(data, model, metrics.Accuracy())
            cells.append(f"{100 * score.get():8.2f}%")
        print(f"{label:<36} {cells[0]} {cells[1]} {time.perf_counter() - start:7.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the timing")
    parser.add_argument("--width", type=int, default=50, help="features of the synthetic stream")
    parser.add_argument("--rows", type=int, default=2000, help="rows of the synthetic stream")
    parser.add_argument("--kernel-rows", type=int, default=500, help="rows of the kernel model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-accuracy", action="store_true", help="the timing only")
    parser.add_argument("--quick", action="store_true", help="2 rounds, 1000 rows of each")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.rows = 2, 1000

    from river import datasets

    print(machine_line())
    phishing = standardised(list(datasets.Phishing()))
    timing("Phishing, standardised", phishing, args.repeat, args.kernel_rows)
    stream = synthetic(args.rows, args.width, args.seed)
    timing(f"synthetic, {args.width} features", stream, args.repeat, args.kernel_rows)
    if not args.no_accuracy:
        accuracy(args.quick)


if __name__ == "__main__":
    main()
