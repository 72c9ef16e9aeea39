"""Kernel PUMMA on its blocked pair engine, against the per-example reference."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, rel_err
from reference import (
    _dense,
    kernel_matrix,
    kernel_pumma_binary,
    kernel_pumma_scores,
    ovr_targets,
    ovr_until_quiet,
    tie_free,
)
from sklearn.exceptions import ConvergenceWarning

from marginkit import KernelPUMMAClassifier, PUMMAClassifier

pytestmark = pytest.mark.exactness


KERNELS = [
    ("linear", {}),
    ("poly", {"degree": 2, "gamma": 0.2, "coef0": 1.0}),
    ("rbf", {"gamma": 0.3}),
    ("poly_rbf", {"degree": 3, "gamma": 0.2, "coef0": 1.0}),
]


def quiet_fit(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y)


@pytest.mark.parametrize("kernel,kw", KERNELS, ids=lambda v: str(v))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("lam", [0.0, 0.5])
@pytest.mark.parametrize("normalize", [False, True])
def test_matches_reference(kernel, kw, n_classes, lam, normalize):
    X, y = make_blobs_pm(n=50, d=4, n_classes=n_classes, seed=n_classes)
    X = X + 1.5
    X_test, _ = make_blobs_pm(n=20, d=4, n_classes=n_classes, seed=99)
    kargs = {"gamma": kw.get("gamma", 1.0), "degree": kw.get("degree", 3), "coef0": 1.0}
    K = kernel_matrix(kernel, X, X, normalize=normalize, **kargs)
    K_test = kernel_matrix(kernel, X_test, X, normalize=normalize, **kargs)
    with tie_free():
        runs, epochs, converged = ovr_until_quiet(
            lambda t, **kw: kernel_pumma_binary(K, t, delta=0.2, lam=lam, **kw),
            ovr_targets(y, np.unique(y)),
            4,
        )
        want = {o: kernel_pumma_scores(runs, K_test, o) for o in ["last", "avg", "voted"]}
    for block_size in [1, 7, 256]:
        clf = quiet_fit(
            KernelPUMMAClassifier(
                shuffle=False,
                kernel=kernel,
                delta=0.2,
                lam=lam,
                max_iter=4,
                block_size=block_size,
                normalize=normalize,
                **kw,
            ),
            X,
            y,
        )
        assert list(clf.n_corrections_per_class_) == [len(r[0]) - 1 for r in runs]
        assert clf.converged_ == converged and clf.n_epochs_ == epochs
        for output in ["last", "avg", "voted"]:
            clf.set_params(output=output)
            assert rel_err(clf.decision_function(X_test), want[output]) < 1e-8, (
                block_size,
                output,
            )


@pytest.mark.parametrize("lam", [0.0, 1.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_kernel_equals_linear_pumma(lam, sparse):
    # with lam = 0 the data must be separable: on data that are not, ||w|| grows without
    # bound and the two implementations' roundings part ways (same updates, not weights)
    n_classes = 3 if lam > 0 else 2
    X, y = make_blobs_pm(n=150, d=6, n_classes=n_classes, seed=7)
    X = X + 2.0
    if lam == 0:
        X[y == 1] += 3.0
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(0).uniform(size=X.shape) < 0.6))
    # a few epochs: over long runs a near-tie can go either way under the two orders
    # of summation (sparse products against compiled loops)
    # (the reference, replayed on the linear Gram matrix, finds no tie in these epochs)
    with tie_free():
        runs = ovr_until_quiet(
            lambda t, **kw: kernel_pumma_binary(_dense(X) @ _dense(X).T, t, 0.1, lam, **kw),
            ovr_targets(y, np.unique(y)),
            8,
        )[0]
        kernel_pumma_scores(runs, _dense(X) @ _dense(X).T, "voted")
    a = quiet_fit(
        KernelPUMMAClassifier(shuffle=False, kernel="linear", lam=lam, max_iter=8, output="last"),
        X,
        y,
    )
    b = quiet_fit(
        PUMMAClassifier(shuffle=False, lam=lam, max_iter=8, keep_corrections=True, output="last"),
        X,
        y,
    )
    assert list(a.n_corrections_per_class_) == list(b.n_corrections_per_class_)
    np.testing.assert_allclose(a.margin_, b.margin_, rtol=1e-9)
    for output in ["last", "avg", "voted"]:
        a.set_params(output=output)
        b.set_params(output=output)
        assert rel_err(a.decision_function(X), b.decision_function(X)) < 1e-9
    a.set_params(output="last")
    b.set_params(output="last")
    np.testing.assert_allclose(a.dual_coef_ @ a.support_vectors_, b.coef_, atol=1e-9)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9)


def test_cache_and_folds_change_nothing():
    X, y = make_blobs_pm(n=120, d=4, n_classes=3, seed=5)

    class Folding(KernelPUMMAClassifier):
        def _initialise(self, data):
            super()._initialise(data)
            self._fold_below = 0.97

    kw = {
        "shuffle": False,
        "kernel": "rbf",
        "gamma": 0.5,
        "lam": 0.3,
        "max_iter": 6,
        "block_size": 11,
    }
    K = kernel_matrix("rbf", X, X, gamma=0.5)
    with tie_free():
        runs = ovr_until_quiet(
            lambda t, **kw: kernel_pumma_binary(K, t, 0.1, 0.3, **kw), ovr_targets(y, [0, 1, 2]), 6
        )[0]
        kernel_pumma_scores(runs, K, "voted")
    plain = quiet_fit(KernelPUMMAClassifier(**kw), X, y)
    nocache = quiet_fit(KernelPUMMAClassifier(cache_size=0, **kw), X, y)
    folded = quiet_fit(Folding(**kw), X, y)
    for other in (nocache, folded):
        assert other.n_updates_ == plain.n_updates_
        for output in ["last", "avg", "voted"]:
            plain.set_params(output=output)
            other.set_params(output=output)
            assert rel_err(other.decision_function(X), plain.decision_function(X)) < 1e-9


def test_partial_fit_equals_one_epoch():
    X, y = make_blobs_pm(n=120, d=4, n_classes=2, seed=6)
    whole = quiet_fit(
        KernelPUMMAClassifier(
            shuffle=False, gamma=0.5, max_iter=1, block_size=8, lam=0.0, output="last"
        ),
        X,
        y,
    )
    parts = KernelPUMMAClassifier(shuffle=False, gamma=0.5, block_size=8, lam=0.0, output="last")
    for lo in range(0, 120, 40):
        parts.partial_fit(X[lo : lo + 40], y[lo : lo + 40], classes=[0, 1])
    assert parts.n_updates_ == whole.n_updates_
    for output in ["last", "avg", "voted"]:
        whole.set_params(output=output)
        parts.set_params(output=output)
        assert rel_err(parts.decision_function(X), whole.decision_function(X)) < 1e-10


def test_soft_margin_converges_to_a_fraction_of_the_best():
    cvxpy = pytest.importorskip("cvxpy", reason="exact margins need the 'margins' extra")
    del cvxpy
    from marginkit.margins import max_margin

    X, y = make_blobs_pm(n=100, d=3, n_classes=2, seed=2)
    clf = KernelPUMMAClassifier(
        shuffle=False, tol=None, kernel="linear", lam=1.0, delta=0.05, output="last"
    ).fit(X, y)
    gamma = max_margin(X, y, p=2, lam=1.0)
    assert clf.converged_
    assert 0.95 * gamma * (1 - 1e-7) <= clf.margin_[0] <= gamma * (1 + 1e-6)
