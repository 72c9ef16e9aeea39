"""Kernel ALMA_2 on sparse input: the engine's choice of block product, measured.

A block of kernel rows is one matrix product of the block's rows with the stored
support vectors. For CSR input the engine makes that product dense (BLAS) when the
product of the two operands' densities reaches ``DENSE_PRODUCT_DENSITY`` and the dense
operands stay under ``DENSE_PRODUCT_MAX`` entries, else keeps scipy's sparse product
(``marginkit._core.kernels.product_operands``). This benchmark fits and predicts the same
data three ways in one run:

- *auto*: CSR input, the engine chooses;
- *dense*: CSR input, every product forced dense;
- *sparse*: CSR input, every product forced sparse;

and, for reference, the same data densified by the caller (ndarray input). It prints
each time, the corrections of each (they must be equal: the product's form changes
rounding at most, never a decision on these data) and the ratio of *auto* to the better
of *dense* and *sparse* (target <= 1.15: the choice is never far from the better one).

Every fit is one epoch predicting with the last hypothesis. Data: adult a9a
(32561 x 123, 11% non-zeros; ``KernelALMAClassifier(kernel="rbf", gamma=0.05,
alpha=0.9)``, from ``$MARGINKIT_DATA`` or ``../shared/data``, skipped with a note when
absent) with sklearn's SVC for scale (``--no-svc`` skips it), and seeded synthetic sets
of binary features at densities from 0.2% to 20%, around the threshold.

A benchmark reports; it does not fail. Usage::

    python benchmarks/bench_kernel_sparse.py [--quick] [--no-svc] [--json out.json]
"""

import argparse
import contextlib
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _machine import machine_line  # benchmarks/_machine.py, beside this file

import marginkit
from marginkit import KernelALMAClassifier
from marginkit._core import kernels
from marginkit.datasets import load_adult

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TARGET = 1.15


@contextlib.contextmanager
def products(mode):
    """Force every block product dense or sparse (``mode``), or leave the choice."""
    saved = kernels.DENSE_PRODUCT_DENSITY, kernels.DENSE_PRODUCT_MAX
    if mode == "dense":
        kernels.DENSE_PRODUCT_DENSITY, kernels.DENSE_PRODUCT_MAX = 0.0, np.inf
    elif mode == "sparse":
        kernels.DENSE_PRODUCT_DENSITY = np.inf
    try:
        yield
    finally:
        kernels.DENSE_PRODUCT_DENSITY, kernels.DENSE_PRODUCT_MAX = saved


def run(params, X, y, X_test, y_test, mode, repeat):
    """Best fit and predict times of ``repeat`` runs, with corrections and test error."""
    best_fit = best_predict = np.inf
    with products(mode):
        for _ in range(repeat):
            model = KernelALMAClassifier(
                **params, max_iter=1, output="last", fit_intercept=False, random_state=0
            )
            t = time.perf_counter()
            model.fit(X, y)
            best_fit = min(best_fit, time.perf_counter() - t)
            t = time.perf_counter()
            predicted = model.predict(X_test)
            best_predict = min(best_predict, time.perf_counter() - t)
    return {
        "fit_s": best_fit,
        "predict_s": best_predict,
        "corrections": int(model.n_corrections_),
        "error": float(np.mean(predicted != y_test)),
    }


def synthetic(n_train, n_test, n_features, density, seed):
    """Binary features, each on with probability ``density``; labels from a random
    hyperplane through the rows' mean, so the classes are balanced and separable."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    X = sp.random(n, n_features, density=density, format="csr", random_state=rng, data_rvs=np.ones)
    w = rng.standard_normal(n_features)
    score = X @ w
    y = np.where(score > np.median(score), 1, -1)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def compare(name, params, data, repeat, rows):
    X, y, X_test, y_test = data
    density = X.nnz / (X.shape[0] * X.shape[1])
    for mode in MODES:  # compile each product's loops before any timing
        run(params, X[:300], y[:300], X_test[:10], y_test[:10], mode, 1)
    results = {mode: run(params, X, y, X_test, y_test, mode, repeat) for mode in MODES}
    results["ndarray"] = run(params, X.toarray(), y, X_test.toarray(), y_test, "auto", repeat)
    better = min(
        results["dense"]["fit_s"] + results["dense"]["predict_s"],
        results["sparse"]["fit_s"] + results["sparse"]["predict_s"],
    )
    auto = results["auto"]["fit_s"] + results["auto"]["predict_s"]
    same = len({r["corrections"] for r in results.values()}) == 1
    row = {
        "data": name,
        "shape": list(X.shape),
        "density": density,
        "results": results,
        "ratio": auto / better,
        "same_corrections": same,
    }
    rows.append(row)
    cells = " | ".join(
        f"{results[m]['fit_s']:.2f} / {results[m]['predict_s']:.2f}" for m in (*MODES, "ndarray")
    )
    verdict = "PASS" if row["ratio"] <= TARGET else "MISS"
    print(
        f"| {name} | {density:.2%} | {cells} | {results['auto']['corrections']}"
        f"{'' if same else ' (differ!)'} | {results['auto']['error']:.2%} "
        f"| {row['ratio']:.2f}x {verdict} |",
        flush=True,
    )
    return row


MODES = ("auto", "dense", "sparse")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("MARGINKIT_DATA", DEFAULT_DATA))
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeat", type=int, default=None, help="runs per cell (best kept)")
    parser.add_argument("--no-svc", action="store_true", help="skip sklearn's SVC on a9a")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 2)
    n_train, n_test = (4000, 1000) if args.quick else (20000, 5000)

    print(machine_line(), flush=True)
    print(
        f"marginkit {marginkit.__version__}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; DENSE_PRODUCT_DENSITY = {kernels.DENSE_PRODUCT_DENSITY}"
    )
    print(
        f"fit / predict seconds (best of {repeat}); ratio: auto / better of dense and "
        f"sparse (target <= {TARGET:.2f})\n"
    )
    print(
        "| data | non-zeros | auto | dense | sparse | ndarray input | corrections "
        "| test error | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    svc = None
    rbf = {"kernel": "rbf", "gamma": 0.05, "alpha": 0.9}
    try:
        X, y, X_test, y_test = load_adult(args.data_dir)
    except FileNotFoundError as exc:
        print(f"| a9a | skipped: {exc} |")
    else:
        if args.quick:
            X, y, X_test, y_test = X[:n_train], y[:n_train], X_test[:n_test], y_test[:n_test]
        compare("a9a", rbf, (X, y, X_test, y_test), repeat, rows)
        if not args.no_svc:
            from sklearn.svm import SVC

            t = time.perf_counter()
            model = SVC(kernel="rbf", gamma=0.05).fit(X, y)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            error = float(np.mean(model.predict(X_test) != y_test))
            svc = {"fit_s": fit_s, "predict_s": time.perf_counter() - t, "error": error}

    for density in (0.002, 0.01, 0.03, 0.05, 0.1, 0.2):
        n_features = 2000
        # gamma scaled to the rows' squared distances (about 2 x density x n_features)
        params = {"kernel": "rbf", "gamma": 1.0 / (2 * density * n_features), "alpha": 0.9}
        data = synthetic(n_train, n_test, n_features, density, seed=0)
        compare(f"binary, {n_features} features", params, data, repeat, rows)

    if svc is not None:
        print(
            f"\nsklearn SVC on a9a, same kernel: fit {svc['fit_s']:.2f} s, predict "
            f"{svc['predict_s']:.2f} s, test error {svc['error']:.2%}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "svc": svc}, indent=2))


if __name__ == "__main__":
    main()
