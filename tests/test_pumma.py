"""PUMMAClassifier against tests/reference.py, its closed form against its Newton solver."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm
from reference import ovr_targets, ovr_until_quiet, pumma_binary, pumma_scores
from sklearn.exceptions import ConvergenceWarning

from marginkit import PUMMAClassifier


def rel_err(a, b):
    scale = max(np.max(np.abs(b)), 1e-300)
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / scale


def shifted_blobs(n=80, d=5, n_classes=2, seed=0, sparse=False):
    X, y = make_blobs_pm(n=n, d=d, n_classes=n_classes, seed=seed)
    X = X + 3.0  # the best hyperplane is far from the origin
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(seed).uniform(size=X.shape) < 0.7))
    return X, y


def reference_runs(X, y, max_iter, **kwargs):
    return ovr_until_quiet(
        lambda t, **kw: pumma_binary(X, t, **kw, **kwargs),
        ovr_targets(y, np.unique(y)),
        max_iter,
    )


@pytest.mark.parametrize("p", [2.0, 3.0, 1.5])
@pytest.mark.parametrize("lam", [0.0, 1.0])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_equals_reference(p, lam, sparse, n_classes):
    X, y = shifted_blobs(n=60, n_classes=n_classes, seed=int(3 * p) + n_classes, sparse=sparse)
    runs, epochs, converged = reference_runs(X, y, p=p, delta=0.2, lam=lam, max_iter=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = PUMMAClassifier(
            keep_corrections=True, p=p, delta=0.2, lam=lam, max_iter=4, output="last"
        ).fit(X, y)
    assert clf.converged_ == converged
    assert list(clf.n_corrections_per_class_) == [len(r[0]) - 1 for r in runs]
    assert clf.n_epochs_ == epochs
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), pumma_scores(runs, X, output)) < 1e-7, output
    clf.set_params(output="last")
    for j, run in enumerate(runs):
        w, b = run[0][-1]
        assert rel_err(clf.coef_[j], w) < 1e-7
        assert np.isclose(clf.intercept_[j], b, rtol=1e-7, atol=1e-9)


class NewtonAt2(PUMMAClassifier):
    _newton_at_2 = True


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_closed_form_equals_newton(lam):
    X, y = shifted_blobs(n=200, d=8, seed=11)
    closed = PUMMAClassifier(delta=0.05, lam=lam, output="last").fit(X, y)
    newton = NewtonAt2(delta=0.05, lam=lam, output="last").fit(X, y)
    assert newton.n_newton_steps_ > 0 and closed.n_newton_steps_ == 0
    assert closed.n_updates_ == newton.n_updates_
    np.testing.assert_allclose(newton.coef_, closed.coef_, rtol=1e-9)
    np.testing.assert_allclose(newton.intercept_, closed.intercept_, rtol=1e-9)


def test_partial_fit_equals_one_epoch():
    X, y = shifted_blobs(n=150, n_classes=3, seed=5)
    whole = PUMMAClassifier(keep_corrections=True, max_iter=1, p=3.0, lam=0.0, output="last")
    with pytest.warns(ConvergenceWarning):
        whole.fit(X, y)
    parts = PUMMAClassifier(keep_corrections=True, p=3.0, lam=0.0, output="last")
    for lo in range(0, 150, 50):
        parts.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=np.unique(y))
    for output in ["last", "avg", "voted"]:
        whole.set_params(output=output)
        parts.set_params(output=output)
        np.testing.assert_allclose(
            parts.decision_function(X), whole.decision_function(X), rtol=1e-12, atol=1e-14
        )


def test_fit_callback_sees_the_last_epoch():
    X, y = shifted_blobs(n=60, seed=2)
    seen = []
    clf = PUMMAClassifier(lam=1.0, output="last").fit(
        X, y, callback=lambda est, epoch: seen.append(epoch)
    )
    assert seen == [clf.n_epochs_ - 1]
