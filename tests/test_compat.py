"""Models written by marginkit 0.1.0 load and predict as they did, and a fit today makes
the corrections 0.1.0 made (tests/data/compat, written by its generate.py)."""

import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import marginkit as mk

HERE = Path(__file__).parent / "data" / "compat"
EXPECTED = np.load(HERE / "expected.npz")


def _generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("compat_generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()
NAMES = list(GENERATE.CASES)


def _outputs(name):
    return [o for o in ("last", "avg", "voted") if f"{name}/{o}/decision" in EXPECTED]


def _check_outputs(est, name, X_test):
    outputs = _outputs(name)
    assert outputs
    for output in outputs:
        if "output" in est.get_params():
            est.set_params(output=output)
        decision = est.decision_function(X_test)
        # the kernel products go through BLAS, whose rounding differs between CPUs
        np.testing.assert_allclose(decision, EXPECTED[f"{name}/{output}/decision"], rtol=1e-9)
        np.testing.assert_array_equal(est.predict(X_test), EXPECTED[f"{name}/{output}/predict"])


def _test_rows(name):
    X_test = EXPECTED[f"{name}/X_test"]
    return sp.csr_matrix(X_test) if GENERATE.CASES[name][2] else X_test


@pytest.mark.parametrize("name", NAMES)
def test_files_of_0_1_load_and_predict_the_same(name):
    est = mk.load(HERE / f"{name}.skops")
    _check_outputs(est, name, _test_rows(name))


@pytest.mark.parametrize("name", NAMES)
def test_pickles_of_0_1_load_and_predict_the_same(name):
    with open(HERE / f"{name}.pkl", "rb") as f:
        est = pickle.load(f)
    _check_outputs(est, name, _test_rows(name))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", NAMES)
def test_a_fit_today_makes_the_corrections_of_0_1(name):
    make, n_classes, sparse = GENERATE.CASES[name]
    seed = NAMES.index(name)
    X, y, X_test = GENERATE.data(n_classes, sparse, seed)
    est = make().set_params(shuffle=False)  # 0.1's default: the order given
    params = est.get_params()
    if "keep_corrections" in params:
        est.set_params(keep_corrections=True)
    if "intercept_scaling" in params:
        est.set_params(intercept_scaling="max")  # 0.1's bias: the largest norm
    if "fit_intercept" in params and type(est).__name__.startswith("Kernel"):
        est.set_params(fit_intercept=False)  # 0.1's kernel models: no bias
    if "n_iter_no_change" in params:
        est.set_params(n_iter_no_change=1)  # 0.1's passes: to the first not better
    if type(est).__name__ in ("ROMMAClassifier", "KernelROMMAClassifier"):
        est.set_params(lam=0.0)  # 0.1's ROMMA: the hard margin
    if type(est).__name__ == "KernelROMMAClassifier":
        est.set_params(aggressive=False)  # 0.1's kernel ROMMA: on mistakes
    est.fit(X, y)
    counts = getattr(est, "n_corrections_per_class_", None)
    if counts is None:
        counts = np.atleast_1d(est.n_corrections_)
    np.testing.assert_array_equal(counts, EXPECTED[f"{name}/corrections"])
    _check_outputs(est, name, X_test)
