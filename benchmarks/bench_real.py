"""The scoreboard: every marginkit estimator against scikit-learn's on real data.

Each marginkit estimator runs twice, at its defaults and with a fixed budget of passes
(``BUDGET`` below, as docs/scoreboard.md gives them), beside scikit-learn's
``Perceptron``, ``SGDClassifier(loss="hinge", average=True)``, ``LinearSVC`` and
``SVC`` (rbf), all at their defaults, on the real data sets of ``$MARGINKIT_DATA`` (or
``../shared/data``): USPS, Letter, the first 10000 digits of MNIST's training set (the
whole test set), ionosphere and house-votes (70/30 stratified splits, random_state=0)
and adult a9a. The data go in as loaded, unscaled, as a user's first call would give
them. Each fit runs in a child process with a time limit (``--timeout``): a fit that
raises or runs past it is a cell of the table, not the end of the run.

It prints one table of test error and training time per data set, and the largest
difference of each marginkit estimator to its peer (SVC for the kernel estimators,
LinearSVC for the linear ones). A benchmark reports; it does not fail. Usage::

    python benchmarks/bench_real.py [--quick] [--only usps,adult] [--json out.json]
"""

import argparse
import json
import multiprocessing as mp
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from _machine import machine_line  # benchmarks/_machine.py, beside this file
from sklearn.model_selection import train_test_split

import marginkit
from marginkit.datasets import (
    load_adult,
    load_house_votes,
    load_ionosphere,
    load_letter,
    load_mnist,
    load_usps,
)
from marginkit.tasks import ESTIMATORS

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

#: marginkit's estimators by the command line's names (``marginkit train``); the kernel
#: ones are scored against SVC, the linear ones against LinearSVC
MARGINKIT = {
    name: (cls, "kernel" if name.startswith("kernel-") else "linear")
    for name, cls in ESTIMATORS.items()
}

#: a fixed budget of passes for each (docs/scoreboard.md): what to run where every pass
#: costs, beside the defaults, which pass until the corrections stop falling
BUDGET = {
    "alma": {"max_iter": 5, "tol": None},
    "perceptron": {"max_iter": 5, "tol": None},
    "romma": {"max_iter": 5, "tol": None},
    "margin-perceptron": {"max_iter": 20},
    "pumma": {"max_iter": 20},
    "kernel-alma": {"max_iter": 3, "tol": None},
    "kernel-perceptron": {"max_iter": 3, "tol": None},
    "kernel-romma": {"max_iter": 3, "tol": None},
    "kernel-pumma": {"max_iter": 10},
}


def peers():
    from sklearn.linear_model import Perceptron, SGDClassifier
    from sklearn.svm import SVC, LinearSVC

    return {
        "sklearn Perceptron": lambda: Perceptron(random_state=0),
        "sklearn SGD (hinge, avg)": lambda: SGDClassifier(
            loss="hinge", average=True, random_state=0
        ),
        "sklearn LinearSVC": lambda: LinearSVC(random_state=0),
        "sklearn SVC (rbf)": lambda: SVC(),
    }


def contenders(names=None):
    """(row name, factory) of every estimator run, peers last."""
    out = []
    for name, (cls, _) in MARGINKIT.items():
        if names and name not in names:
            continue
        out.append((f"{name} (defaults)", cls))
        out.append((f"{name} (budget)", lambda cls=cls, name=name: cls(**BUDGET[name])))
    out.extend(peers().items())
    return out


def _split(X, y):
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    return X, y, X_test, y_test


def _mnist(data_dir):
    X, y, X_test, y_test = load_mnist(data_dir)
    return X[:10000], y[:10000], X_test, y_test


DATASETS = {
    "usps": load_usps,
    "letter": load_letter,
    "mnist-10k": _mnist,
    "ionosphere": lambda d: _split(*load_ionosphere(d)),
    "house-votes": lambda d: _split(*load_house_votes(d)),
    "adult": load_adult,
}


def _fit_score(factory, data, conn):
    X, y, X_test, y_test = data
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = factory()
            t = time.perf_counter()
            model.fit(X, y)
            fit_s = time.perf_counter() - t
            error = float(np.mean(model.predict(X_test) != y_test))
        said = sorted({type(w.message).__name__ for w in caught})
        conn.send({"error": error, "fit_s": fit_s, "warnings": said})
    except Exception as exc:  # a cell of the table, not the end of the run
        conn.send({"raised": f"{type(exc).__name__}: {exc}".splitlines()[0][:160]})
    finally:
        conn.close()


def score(factory, data, timeout):
    """Test error and training time of one fit, in a child process (fork: the data
    are not copied) given ``timeout`` seconds."""
    receive, send = mp.Pipe(duplex=False)
    child = mp.get_context("fork").Process(target=_fit_score, args=(factory, data, send))
    child.start()
    send.close()
    if receive.poll(timeout):
        try:
            result = receive.recv()
        except EOFError:
            result = {"raised": f"the process ended (exit code {child.exitcode})"}
    else:
        child.kill()
        result = {"raised": f"still fitting after {timeout:.0f} s (stopped)"}
    child.join()
    return result


def warm(rows):
    """Fit each contender once on a few rows, dense and CSR, two and three classes, so
    that the compiled code is loaded before the children fork off: their times are
    then training alone."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, factory in rows:
            for data in (X, sp.csr_matrix(X)):
                for y in (np.arange(30) % 2, np.arange(30) % 3):
                    try:
                        factory().fit(data, y).predict(data)
                    except Exception:  # its cell will say what it raises
                        pass


def cell(result):
    if "raised" in result:
        return result["raised"]
    note = " (warned)" if result["warnings"] else ""
    return f"{result['error']:.2%} / {result['fit_s']:.2f} s{note}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("MARGINKIT_DATA", DEFAULT_DATA))
    parser.add_argument("--only", help="comma-separated data sets (default: all)")
    parser.add_argument(
        "--estimators", help="comma-separated names of marginkit train (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="at most 2000 training rows")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per fit")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    wanted = args.only.split(",") if args.only else list(DATASETS)
    unknown = sorted(set(wanted) - set(DATASETS))
    if unknown:
        parser.error(f"unknown data sets {unknown}; choose from {sorted(DATASETS)}")
    names = args.estimators.split(",") if args.estimators else None

    print(machine_line(), flush=True)
    print(
        f"marginkit {marginkit.__version__}, {platform.machine()}, {os.cpu_count()} cores; "
        "cells: test error / training time (warned: a ConvergenceWarning or another)\n"
    )
    rows = contenders(names)
    warm(rows)
    results = {}
    for dataset in wanted:
        try:
            X, y, X_test, y_test = DATASETS[dataset](args.data_dir)
        except FileNotFoundError as exc:
            print(f"{dataset}: skipped, {exc}\n")
            continue
        if args.quick and X.shape[0] > 2000:
            X, y = X[:2000], y[:2000]
        print(f"### {dataset}: {X.shape[0]} train, {X_test.shape[0]} test, {X.shape[1]} features")
        print("\n| estimator | test error / training time |\n| --- | --- |", flush=True)
        results[dataset] = {}
        for row, factory in rows:
            result = score(factory, (X, y, X_test, y_test), args.timeout)
            results[dataset][row] = result
            print(f"| {row} | {cell(result)} |", flush=True)
        print()

    print("Largest difference to the peer (points of test error, positive: worse)\n")
    print("| estimator | peer | defaults | budget |\n| --- | --- | --- | --- |")
    for name, (_, kind) in MARGINKIT.items():
        peer = "sklearn SVC (rbf)" if kind == "kernel" else "sklearn LinearSVC"
        worst = {}
        for setting in ("defaults", "budget"):
            gaps = []
            for table in results.values():
                mine, theirs = table.get(f"{name} ({setting})"), table.get(peer)
                if not mine or not theirs or "raised" in theirs:
                    continue
                gaps.append(
                    np.inf if "raised" in mine else 100 * (mine["error"] - theirs["error"])
                )
            worst[setting] = f"{max(gaps):+.2f}" if gaps else "n/a"
        if any(f"{name} (defaults)" in table for table in results.values()):
            print(f"| {name} | {peer} | {worst['defaults']} | {worst['budget']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
