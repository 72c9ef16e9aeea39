"""Write the model files and outputs that tests/test_compat.py holds later versions to.

Run once with the version whose files are kept (the files here were written by
marginkit 0.1.0, before the engines took bundles and ``_base`` was split)::

    python tests/data/compat/generate.py tests/data/compat

Each case is an estimator fitted on small generated data, dense or sparse, saved with
:func:`marginkit.save` and pickled; ``expected.npz`` holds, per case and output, the
decision values and predictions on held-out rows, and the correction counts. The data
are drawn so that no held-out decision value lies near 0 and no training trial near its
threshold is needed: the test compares correction counts exactly and decision values to
a relative 1e-9 (a BLAS kernel of another CPU rounds the kernel products differently).
"""

import pickle
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import marginkit as mk


def data(n_classes, sparse, seed):
    rng = np.random.default_rng(seed)
    n, d = 90, 6
    centres = rng.normal(scale=2.0, size=(n_classes, d))
    y = rng.integers(n_classes, size=n)
    X = centres[y] + rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.3] = 0.0
    X_train, y_train, X_test = X[:60], y[:60], X[60:]
    if sparse:
        X_train, X_test = sp.csr_matrix(X_train), sp.csr_matrix(X_test)
    return X_train, y_train, X_test


KERNEL = {"kernel": "rbf", "gamma": 0.3}

CASES = {
    "alma2": (lambda: mk.ALMAClassifier(alpha=0.9, max_iter=3, tol=None), 2, False),
    "alma6_sparse": (lambda: mk.ALMAClassifier(p=6, max_iter=2, tol=None), 2, True),
    "alma_log_multi": (lambda: mk.ALMAClassifier(p="log", max_iter=2, tol=None), 3, False),
    "perceptron_voted": (
        lambda: mk.PerceptronClassifier(max_iter=2, tol=None, output="voted"),
        2,
        False,
    ),
    "margin_perceptron": (lambda: mk.MarginPerceptronClassifier(max_iter=3), 2, False),
    "romma_aggressive": (
        lambda: mk.ROMMAClassifier(aggressive=True, max_iter=2, tol=None),
        3,
        True,
    ),
    "pumma2": (lambda: mk.PUMMAClassifier(max_iter=3), 2, False),
    "pumma4_sparse_multi": (lambda: mk.PUMMAClassifier(p=4, max_iter=2), 3, True),
    "kernel_alma_voted": (
        lambda: mk.KernelALMAClassifier(**KERNEL, max_iter=2, tol=None, output="voted"),
        3,
        False,
    ),
    "kernel_perceptron_sparse": (
        lambda: mk.KernelPerceptronClassifier(**KERNEL, max_iter=2, tol=None),
        2,
        True,
    ),
    "kernel_romma": (
        lambda: mk.KernelROMMAClassifier(kernel="poly", degree=2, max_iter=2, tol=None),
        2,
        False,
    ),
    "kernel_pumma": (lambda: mk.KernelPUMMAClassifier(**KERNEL, max_iter=3), 2, False),
}


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    expected = {}
    for seed, (name, (make, n_classes, sparse)) in enumerate(CASES.items()):
        X, y, X_test = data(n_classes, sparse, seed)
        est = make()
        if "keep_corrections" in est.get_params():
            est.set_params(keep_corrections=True)
        est.fit(X, y)
        fitted_output = est.get_params().get("output")
        mk.save(est, out / f"{name}.skops")
        with open(out / f"{name}.pkl", "wb") as f:
            pickle.dump(est, f)
        counts = getattr(est, "n_corrections_per_class_", None)
        if counts is None:
            counts = np.atleast_1d(est.n_corrections_)
        expected[f"{name}/corrections"] = np.asarray(counts)
        for output in ("last", "avg", "voted"):
            if "output" not in est.get_params():
                if output != "last":
                    continue
            else:
                est.set_params(output=output)
            try:
                scores = est.decision_function(X_test)
            except ValueError:
                continue
            if output != "voted":  # votes are counts, each sign decided exactly
                assert np.min(np.abs(scores)) > 1e-6, (name, output)
            expected[f"{name}/{output}/decision"] = scores
            expected[f"{name}/{output}/predict"] = est.predict(X_test)
        if fitted_output is not None:
            est.set_params(output=fitted_output)
        expected[f"{name}/X_test"] = X_test.toarray() if sparse else X_test
    np.savez_compressed(out / "expected.npz", **expected)
    print(f"{len(CASES)} cases, {len(expected)} arrays written to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
