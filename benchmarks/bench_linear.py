"""Training time per epoch and test error of marginkit's linear learners against baselines.

One run, the same seeded data for every learner:

* ``marginkit.ALMAClassifier`` (p = 2 with alpha = 1.0 and 0.9; p = 6 with the same
  two alphas), ``output="last"`` (which keeps no correction log: the work of the
  plain algorithm); the ``"avg"`` and ``"voted"`` outputs are timed separately, as
  predictions on the test set, ``"voted"`` from one more fit with
  ``keep_corrections=True`` (whose time is reported too: the cost of the log);
* marginkit's Perceptron, ROMMA, aggressive ROMMA and PUMMA (p = 2, delta = 0.1), one
  epoch each, timed the same way;
* ``sklearn.linear_model.Perceptron``, one epoch (``max_iter=1, tol=None,
  shuffle=False``);
* ``river.linear_model.ALMAClassifier`` (p = 2 only, pure Python), timed on a prefix
  of the training set and extrapolated linearly to one epoch.

Two data sets: (a) dense Gaussian instances labelled by a random hyperplane, with
label noise in training; (b) sparse text-like tf-idf rows with Zipf feature
frequencies, labelled by a sparse target vector. "Time per epoch" is the wall time
of ``fit`` with one epoch, validation included, as for scikit-learn's ``fit``; every
learner takes the rows in the order given (``shuffle=False``, as scikit-learn's
Perceptron here), so that the epochs compared do the same work.

Run ``python benchmarks/bench_linear.py`` (full size, several minutes) or with
``--quick`` (seconds). A benchmark reports: the exit code is 0 whether the targets
are met or not.
"""

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy
import scipy.sparse as sp
import sklearn
from _machine import blas_kernels, cpu_model  # benchmarks/_machine.py, beside this file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron

import marginkit
from marginkit import ALMAClassifier, PerceptronClassifier, PUMMAClassifier, ROMMAClassifier

SIZES = {
    "full": {
        "dense_train": 100_000,
        "dense_test": 20_000,
        "dense_features": 300,
        "sparse_train": 100_000,
        "sparse_test": 20_000,
        "sparse_features": 100_000,
        "sparse_nnz": 500,
        "river_train": 5_000,
        "river_test": 5_000,
        "dense_voted_test": 20_000,
        "sparse_voted_test": 1_000,
    },
    "quick": {
        "dense_train": 10_000,
        "dense_test": 2_000,
        "dense_features": 300,
        "sparse_train": 10_000,
        "sparse_test": 2_000,
        "sparse_features": 20_000,
        "sparse_nnz": 100,
        "river_train": 1_000,
        "river_test": 1_000,
        "dense_voted_test": 2_000,
        "sparse_voted_test": 500,
    },
}
LABEL_NOISE = 0.05  # training labels flipped with this probability; test labels clean
ZIPF_EXPONENT = 1.0  # rank-r feature drawn with probability proportional to r^-s
N_RELEVANT = 1000  # non-zeros of the sparse target vector
RELEVANT_RANKS = (10, 20_000)  # frequency ranks the target's support is drawn from
WARMUP_ROWS = 500

# (label, p, alpha): the marginkit configurations, all with output="last"
MARGINKIT_CONFIGS = [
    ("marginkit ALMA p=2 a=1.0", 2.0, 1.0),
    ("marginkit ALMA p=2 a=0.9", 2.0, 0.9),
    ("marginkit ALMA p=6 a=1.0", 6.0, 1.0),
    ("marginkit ALMA p=6 a=0.9", 6.0, 0.9),
]
# the rest of the family, one epoch each, output="last"
FAMILY_CONFIGS = [
    (
        "marginkit Perceptron",
        lambda: PerceptronClassifier(
            output="last", max_iter=1, fit_intercept=False, shuffle=False
        ),
    ),
    (
        "marginkit ROMMA",
        lambda: ROMMAClassifier(
            aggressive=False,
            lam=0.0,
            output="last",
            max_iter=1,
            fit_intercept=False,
            shuffle=False,
        ),
    ),
    (
        "marginkit aggressive ROMMA",
        lambda: ROMMAClassifier(
            aggressive=True, lam=0.0, output="last", max_iter=1, fit_intercept=False, shuffle=False
        ),
    ),
    (
        "marginkit PUMMA p=2 d=0.1 (1 epoch)",
        lambda: PUMMAClassifier(delta=0.1, max_iter=1, lam=0.0, output="last", shuffle=False),
    ),
]
SKLEARN_LABEL = "sklearn Perceptron (1 epoch)"
RIVER_LABEL = "river ALMA p=2 a=0.9 (extrap.)"
RIVER_PREFIX_LABEL = "marginkit ALMA p=2 a=0.9 (prefix)"


# -- data --------------------------------------------------------------------------
def make_dense(n_train, n_test, n_features, seed):
    """Gaussian instances, labels sign(u . x) for a Gaussian u; training labels noisy."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(n_features)
    X = rng.standard_normal((n_train + n_test, n_features))
    y = np.where(X @ u >= 0.0, 1, -1)
    flip = rng.random(n_train) < LABEL_NOISE
    y[:n_train][flip] *= -1
    description = (
        f"dense: {n_train} train + {n_test} test rows x {n_features} features, "
        "x ~ N(0, I), y = sign(u . x) for u ~ N(0, I); "
        f"{LABEL_NOISE:.0%} of training labels flipped, test labels clean; seed {seed}"
    )
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], description


def _expected_distinct(prob, n_tokens):
    """Expected number of distinct features among ``n_tokens`` independent draws."""
    return float(np.sum(-np.expm1(n_tokens * np.log1p(-prob))))


def make_sparse(n_train, n_test, n_features, nnz, seed, chunk=5000):
    """Text-like CSR rows: Zipf token draws, tf-idf values, a sparse linear target.

    Each row draws a log-normal number of tokens from a Zipf law over the features
    (scaled so that a row holds ``nnz`` distinct features on average); a value is
    ``(1 + ln tf) * idf`` with scikit-learn's smoothed idf from the training rows,
    and rows are scaled to unit Euclidean norm. Labels are ``sign(u . x)`` for a
    target u with ``N_RELEVANT`` Gaussian non-zeros on features of frequency rank in
    ``RELEVANT_RANKS``; training labels are flipped with probability ``LABEL_NOISE``.
    """
    rng = np.random.default_rng(seed)
    n_rows = n_train + n_test
    prob = np.arange(1, n_features + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    prob /= prob.sum()
    lo, hi = float(nnz), 100.0 * nnz
    for _ in range(60):  # tokens per row giving nnz distinct features on average
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _expected_distinct(prob, mid) < nnz else (lo, mid)
    rank_to_feature = rng.permutation(n_features)
    cdf = np.cumsum(prob)
    cdf[-1] = 1.0
    # log-normal document lengths with mean factor 1 (mu = -sigma^2 / 2, sigma = 0.3)
    lengths = np.maximum(1, np.round(hi * rng.lognormal(-0.045, 0.3, n_rows))).astype(np.int64)
    indptr, indices, counts, filled = [np.zeros(1, np.int64)], [], [], 0
    for first in range(0, n_rows, chunk):
        n_tokens = lengths[first : first + chunk]
        rows = np.repeat(np.arange(n_tokens.shape[0], dtype=np.int64), n_tokens)
        ranks = np.searchsorted(cdf, rng.random(rows.shape[0]), side="right")
        keys, tf = np.unique(rows * n_features + rank_to_feature[ranks], return_counts=True)
        key_rows = keys // n_features
        indices.append((keys - key_rows * n_features).astype(np.int32))
        counts.append(tf)
        indptr.append(filled + np.cumsum(np.bincount(key_rows, minlength=n_tokens.shape[0])))
        filled += keys.shape[0]
    indptr = np.concatenate(indptr)
    indices = np.concatenate(indices)
    tf = np.concatenate(counts)
    df = np.bincount(indices[: indptr[n_train]], minlength=n_features)
    idf = np.log((1.0 + n_train) / (1.0 + df)) + 1.0
    data = (1.0 + np.log(tf)) * idf[indices]
    norms = np.sqrt(np.add.reduceat(data * data, indptr[:-1]))
    data /= np.repeat(norms, np.diff(indptr))
    X = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(n_rows, n_features))
    X.has_sorted_indices = True
    by_frequency = np.argsort(-df, kind="stable")
    support = rng.choice(by_frequency[slice(*RELEVANT_RANKS)], N_RELEVANT, replace=False)
    u = np.zeros(n_features)
    u[support] = rng.standard_normal(N_RELEVANT)
    y = np.where(X @ u >= 0.0, 1, -1)
    flip = rng.random(n_train) < LABEL_NOISE
    y[:n_train][flip] *= -1
    row_nnz = np.diff(indptr)
    description = (
        f"sparse: {n_train} train + {n_test} test rows x {n_features} features, CSR, "
        f"{row_nnz.mean():.0f} non-zeros per row on average "
        f"(density {row_nnz.mean() / n_features:.2%}, 1st-99th percentile "
        f"{np.percentile(row_nnz, 1):.0f}-{np.percentile(row_nnz, 99):.0f}); "
        f"Zipf(s={ZIPF_EXPONENT}) feature frequencies, (1 + ln tf) * idf values, "
        f"unit L2 rows; y = sign(u . x) for u with {N_RELEVANT} N(0, 1) non-zeros on "
        f"frequency ranks {RELEVANT_RANKS[0]}-{RELEVANT_RANKS[1]}; "
        f"{np.mean(y[n_train:] > 0):.1%} positive test labels; "
        f"{LABEL_NOISE:.0%} of training labels flipped, test labels clean; seed {seed}"
    )
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], description


def as_dicts(X, n_rows):
    """The first rows of a dense array or CSR matrix as river's {feature: value} dicts."""
    if sp.issparse(X):
        out = []
        for r in range(n_rows):
            lo, hi = X.indptr[r], X.indptr[r + 1]
            out.append(dict(zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist(), strict=True)))
        return out
    return [dict(enumerate(row)) for row in X[:n_rows].tolist()]


# -- timing ------------------------------------------------------------------------
def timed(fn, repeat):
    """Wall times of ``repeat`` calls of ``fn()``, and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def summary(label, times, error, **extra):
    return {
        "label": label,
        "times": times,
        "best": min(times),
        "median": statistics.median(times),
        "test_error": error,
        **extra,
    }


def warm_up(X, y, X_test):
    """Compile every numba path (fit, last/avg/voted predictions) on a small slice."""
    for p in sorted({p for _, p, _ in MARGINKIT_CONFIGS}):
        for keep in (False, True):
            clf = ALMAClassifier(
                p=p,
                alpha=0.9,
                keep_corrections=keep,
                output="last",
                max_iter=1,
                fit_intercept=False,
                shuffle=False,
            )
            clf.fit(X[:WARMUP_ROWS], y[:WARMUP_ROWS])
            for output in ("last", "avg", "voted") if keep else ("last", "avg"):
                clf.set_params(output=output).predict(X_test[:50])
    Perceptron(max_iter=1, tol=None, shuffle=False).fit(X[:WARMUP_ROWS], y[:WARMUP_ROWS])


def bench_marginkit(X, y, X_test, y_test, repeat, n_voted):
    """Every configuration's fits; then each output's predictions, once.

    The voted output replays every hypothesis, so its predictions are timed on the
    first ``n_voted`` test rows only, from a fit that kept its corrections (timed once).
    """
    X_voted = X_test[:n_voted]
    results = []
    configs = [
        (
            label,
            lambda p=p, a=alpha: ALMAClassifier(
                p=p, alpha=a, output="last", max_iter=1, fit_intercept=False, shuffle=False
            ),
            {"p": p, "alpha": alpha},
        )
        for label, p, alpha in MARGINKIT_CONFIGS
    ] + [(label, make, {}) for label, make in FAMILY_CONFIGS]
    for label, make, extra in configs:

        def fit(make=make, keep=False):
            with warnings.catch_warnings():
                # PUMMA is timed for one epoch: it warns that it did not converge
                warnings.simplefilter("ignore", ConvergenceWarning)
                return make().set_params(keep_corrections=keep).fit(X, y)

        times, clf = timed(fit, repeat)
        (log_seconds,), logged = timed(lambda fit=fit: fit(keep=True), 1)
        outputs = {}
        for output in ("last", "avg", "voted"):
            Xo, yo = (X_voted, y_test[:n_voted]) if output == "voted" else (X_test, y_test)
            clf = logged if output == "voted" else clf
            clf.set_params(output=output)
            (seconds,), pred = timed(lambda clf=clf, Xo=Xo: clf.predict(Xo), 1)
            outputs[output] = {
                "predict_seconds": seconds,
                "test_rows": Xo.shape[0],
                "test_error": _error(pred, yo),
            }
        results.append(
            summary(
                label,
                times,
                outputs["last"]["test_error"],
                n_corrections=int(clf.n_corrections_),
                outputs=outputs,
                fit_with_log_seconds=log_seconds,
                **extra,
            )
        )
    return results


def bench_sklearn(X, y, X_test, y_test, repeat):
    def fit():
        clf = Perceptron(max_iter=1, tol=None, shuffle=False, fit_intercept=False)
        return clf.fit(X, y)

    times, clf = timed(fit, repeat)
    return summary(SKLEARN_LABEL, times, _error(clf.predict(X_test), y_test))


def bench_river(X, y, X_test, y_test, n_train, n_test, repeat):
    """river's ALMA on the first ``n_train`` rows, extrapolated to the whole set."""
    from river.linear_model import ALMAClassifier as RiverALMA

    rows = as_dicts(X, n_train)
    labels = (y[:n_train] > 0).tolist()
    test_rows = as_dicts(X_test, n_test)

    def fit():
        model = RiverALMA(p=2, alpha=0.9, B=1 / 0.9, C=2**0.5)
        for x, target in zip(rows, labels, strict=True):
            model.learn_one(x, target)
        return model

    times, model = timed(fit, repeat)
    pred = np.where([model.predict_one(x) for x in test_rows], 1, -1)
    scale = X.shape[0] / n_train
    river = summary(
        RIVER_LABEL,
        [t * scale for t in times],
        _error(pred, y_test[:n_test]),
        prefix_times=times,
        prefix_train_rows=n_train,
        prefix_test_rows=n_test,
        n_corrections=model.k - 1,
    )

    X_prefix, y_prefix = X[:n_train], y[:n_train]

    def fit_ours():
        return ALMAClassifier(
            p=2, alpha=0.9, output="last", max_iter=1, fit_intercept=False, shuffle=False
        ).fit(X_prefix, y_prefix)

    times, clf = timed(fit_ours, repeat)
    ours = summary(
        RIVER_PREFIX_LABEL,
        times,
        _error(clf.predict(X_test[:n_test]), y_test[:n_test]),
        prefix_train_rows=n_train,
        prefix_test_rows=n_test,
        n_corrections=int(clf.n_corrections_),
    )
    return [river, ours]


def _error(pred, y):
    return float(np.mean(np.asarray(pred) != y))


# -- report ------------------------------------------------------------------------
def machine_info():
    cpu = cpu_model()
    blas = blas_kernels()
    try:
        import river

        river_version = river.__version__
    except ImportError:
        river_version = None
    import numba

    return {
        "cpu": cpu,
        "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "blas": "; ".join(blas) or "unknown",
        "versions": {
            "marginkit": f"{marginkit.__version__} ({source_revision() or 'no git'})",
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "numba": numba.__version__,
            "scikit-learn": sklearn.__version__,
            "river": river_version,
        },
    }


def source_revision():
    """The git commit of the source tree, marked when src/ has uncommitted changes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def git(*args):
        out = subprocess.run(
            ["git", "-C", root, *args], capture_output=True, text=True, timeout=30, check=False
        )
        return out.stdout.rstrip("\n") if out.returncode == 0 else None

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "src")
    except (OSError, subprocess.SubprocessError):
        return None
    if commit is None:
        return None
    if not dirty:
        return commit
    changed = [line[3:].removeprefix("src/marginkit/") for line in dirty.splitlines()]
    more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
    return f"{commit}, uncommitted changes to {', '.join(changed[:4])}{more}"


def load_average():
    """The 1, 5 and 15 minute load averages (other work competing for the cores)."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def print_table(result):
    rows = result["rows"]
    print(f"\n== {result['description']}")
    header = (
        f"{'learner':<36}{'best s/epoch':>14}{'median':>10}{'test err':>10}{'corr.':>9}"
        f"{'with log s':>12}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        corr = row.get("n_corrections")
        logged = row.get("fit_with_log_seconds")
        print(
            f"{row['label']:<36}{row['best']:>14.3f}{row['median']:>10.3f}"
            f"{row['test_error']:>10.2%}{'' if corr is None else corr:>9}"
            f"{'' if logged is None else f'{logged:.3f}':>12}"
        )
    for row in rows:
        if "prefix_times" in row:
            print(
                f"  {row['label']}: {min(row['prefix_times']):.3f} s on the first "
                f"{row['prefix_train_rows']} training rows (dicts built before timing), "
                f"times {result['n_train']}/{row['prefix_train_rows']}; test error on the "
                f"first {row['prefix_test_rows']} test rows"
            )
        elif "prefix_train_rows" in row:
            print(
                f"  {row['label']}: same prefix, for comparison: "
                f"fit time {row['best']:.3f} s (not extrapolated)"
            )
    print("\n  predictions on the test set by each output, model fitted once:")
    print(f"  {'learner':<34}{'output':>8}{'test rows':>11}{'predict s':>11}{'test err':>10}")
    for row in rows:
        for output, res in row.get("outputs", {}).items():
            print(
                f"  {row['label']:<34}{output:>8}{res['test_rows']:>11}"
                f"{res['predict_seconds']:>11.3f}{res['test_error']:>10.2%}"
            )


def ratios(results):
    """The ratios the project's speed targets are about, with PASS/MISS."""
    out = []
    for data in ("dense", "sparse"):
        rows = {r["label"]: r for r in results[data]["rows"]}
        for label, _, alpha in MARGINKIT_CONFIGS[:2]:
            out.append(
                _ratio(
                    f"{data}: marginkit p=2 a={alpha} / sklearn Perceptron",
                    rows[label]["best"] / rows[SKLEARN_LABEL]["best"],
                    "<=",
                    1.3,
                )
            )
    rows = {r["label"]: r for r in results["sparse"]["rows"]}
    for (label2, _, alpha), (label6, _, _) in zip(
        MARGINKIT_CONFIGS[:2], MARGINKIT_CONFIGS[2:], strict=True
    ):
        out.append(
            _ratio(
                f"sparse: marginkit p=6 / p=2 (a={alpha})",
                rows[label6]["best"] / rows[label2]["best"],
                "<=",
                3.0,
            )
        )
    for data in ("dense", "sparse"):
        rows = {r["label"]: r for r in results[data]["rows"]}
        # the same algorithm, the same updates (sklearn's with eta0 = 1, no intercept);
        # marginkit's also keeps what the avg and voted outputs need
        out.append(
            _ratio(
                f"{data}: marginkit Perceptron / sklearn Perceptron",
                rows["marginkit Perceptron"]["best"] / rows[SKLEARN_LABEL]["best"],
                "<=",
                1.5,
            )
        )
    for data in ("dense", "sparse"):
        rows = {r["label"]: r for r in results[data]["rows"]}
        if RIVER_LABEL in rows:
            out.append(
                _ratio(
                    f"{data}: river ALMA / marginkit p=2 a=0.9",
                    rows[RIVER_LABEL]["best"] / rows[MARGINKIT_CONFIGS[1][0]]["best"],
                    ">=",
                    50.0,
                )
            )
    return out


def _ratio(name, value, op, target):
    met = value <= target if op == "<=" else value >= target
    return {"name": name, "value": value, "target": f"{op} {target:g}", "met": bool(met)}


# -- driver ------------------------------------------------------------------------
def run(size, repeat, seed, with_river):
    s = SIZES[size]
    results = {}
    datasets = {
        "dense": lambda: make_dense(s["dense_train"], s["dense_test"], s["dense_features"], seed),
        "sparse": lambda: make_sparse(
            s["sparse_train"], s["sparse_test"], s["sparse_features"], s["sparse_nnz"], seed + 1
        ),
    }
    for data, make in datasets.items():
        start = time.perf_counter()
        X, y, X_test, y_test, description = make()
        print(f"\n[{data}] generated in {time.perf_counter() - start:.1f} s", flush=True)
        warm_up(X, y, X_test)
        n_voted = min(s[f"{data}_voted_test"], X_test.shape[0])
        rows = bench_marginkit(X, y, X_test, y_test, repeat, n_voted)
        rows.append(bench_sklearn(X, y, X_test, y_test, repeat))
        if with_river:
            rows += bench_river(
                X,
                y,
                X_test,
                y_test,
                min(s["river_train"], X.shape[0]),
                min(s["river_test"], X_test.shape[0]),
                repeat,
            )
        results[data] = {
            "description": description,
            "n_train": X.shape[0],
            "n_test": X_test.shape[0],
            "rows": rows,
        }
        print_table(results[data])
        del X, X_test
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small data sets (seconds)")
    parser.add_argument("--repeat", type=int, default=3, help="timed fits per learner")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data sets")
    parser.add_argument("--no-river", action="store_true", help="skip river")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")

    size = "quick" if args.quick else "full"
    info = machine_info()
    python = os.path.relpath(sys.executable)
    command = " ".join([python if not python.startswith("..") else sys.executable, *sys.argv])
    print(f"marginkit linear benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"command: {command}")
    print(f"size: {size}; {args.repeat} timed fits per learner, best and median reported")
    print(
        f"cpu: {info['cpu']}; {info['logical_cores']} logical cores, "
        f"{info['usable_cores']} usable by this process"
    )
    print(f"BLAS: {info['blas']}")
    print(f"python {info['python']}, {info['platform']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    with_river = not args.no_river and info["versions"]["river"] is not None
    load = {"start": load_average()}
    print(f"load average (1, 5, 15 min) at start: {load['start']}")

    results = run(size, args.repeat, args.seed, with_river)

    load["end"] = load_average()
    print(f"\nload average (1, 5, 15 min) at end: {load['end']}")

    print("\n== targets (ratios of best times per epoch)")
    checks = ratios(results)
    for c in checks:
        print(
            f"{c['name']:<48}{c['value']:>9.2f}x   target {c['target']:<7}"
            f"{'PASS' if c['met'] else 'MISS'}"
        )
    if with_river:
        print(
            "\nriver's ALMA is pure Python, p = 2 only, and does not normalise instances; "
            "its time is measured on a prefix and extrapolated linearly to one epoch."
        )
    if args.json:
        payload = {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": command,
            "size": size,
            "sizes": SIZES[size],
            "repeat": args.repeat,
            "seed": args.seed,
            "machine": info,
            "load_average": load,
            "results": results,
            "targets": checks,
        }
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
