"""Parameters that shape a model (a bias, a norm, a kernel, normalisation), set after
it was fit: the model keeps, predicts with and saves its own; they take effect at the
next fit; a partial_fit, which cannot go on with a model of other parameters, says so.
(scikit-learn's convention: ``set_params`` changes what the next ``fit`` does.)"""

import warnings

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)

CASES = [
    (PerceptronClassifier(shuffle=False, max_iter=5), {"fit_intercept": False}),
    (
        PerceptronClassifier(shuffle=False, fit_intercept=False, max_iter=5),
        {"fit_intercept": True},
    ),
    (ROMMAClassifier(shuffle=False, aggressive=True, max_iter=3), {"fit_intercept": False}),
    (MarginPerceptronClassifier(shuffle=False, max_iter=20), {"fit_intercept": False}),
    (ALMAClassifier(shuffle=False, p=2.0, max_iter=3), {"p": 4.0}),
    (ALMAClassifier(shuffle=False, p=3.0, max_iter=3), {"p": "log", "fit_intercept": False}),
    (PUMMAClassifier(shuffle=False, p=3.0, lam=0.5, max_iter=20), {"p": 2.0}),
    (KernelPerceptronClassifier(shuffle=False, kernel="linear", max_iter=2), {"kernel": "rbf"}),
    (
        KernelPerceptronClassifier(shuffle=False, kernel="poly", degree=2, max_iter=2),
        {"normalize": True},
    ),
    (KernelROMMAClassifier(shuffle=False, kernel="poly", degree=2, max_iter=2), {"degree": 3}),
    (KernelPUMMAClassifier(shuffle=False, kernel="rbf", gamma=0.5, lam=0.5), {"gamma": 2.0}),
    (KernelPUMMAClassifier(shuffle=False, kernel="poly", degree=2, lam=0.5), {"normalize": True}),
]


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("est, change", CASES, ids=lambda c: repr(c)[:60])
def test_a_model_keeps_its_own_parameters(est, change, tmp_path):
    X, y = make_blobs_pm(n=90, d=4, n_classes=3, seed=8)
    X = X + 2.0  # a bias matters
    clf = _fit(clone(est), X, y)
    scores = clf.decision_function(X)
    dual = getattr(clf, "dual_coef_", None)
    clf.set_params(**change)
    np.testing.assert_array_equal(clf.decision_function(X), scores)
    if dual is not None:
        np.testing.assert_array_equal(clf.dual_coef_, dual)
    marginkit.save(clf, tmp_path / "m.skops")
    again = marginkit.load(tmp_path / "m.skops")
    assert again.get_params() == clf.get_params()
    np.testing.assert_array_equal(again.decision_function(X), scores)
    for model in (clf, again):
        with pytest.raises(ValueError, match="was fit with .* partial_fit cannot go on"):
            model.partial_fit(X[:10], y[:10])
        np.testing.assert_array_equal(model.decision_function(X), scores)
    # the next fit applies them: the model of a fresh estimator with them
    refit = _fit(clf, X, y)
    fresh = _fit(clone(est).set_params(**change), X, y)
    np.testing.assert_array_equal(refit.decision_function(X), fresh.decision_function(X))
    refit.partial_fit(X[:10], y[:10])  # and partial_fit goes on with them


def test_set_back_the_parameters_partial_fit_goes_on():
    X, y = make_blobs_pm(n=60, d=3, n_classes=2, seed=9)
    clf = PerceptronClassifier(shuffle=False, max_iter=2, tol=None).fit(X, y)
    clf.set_params(fit_intercept=False)
    with pytest.raises(ValueError, match=r"fit with fit_intercept=True, and its parameters"):
        clf.partial_fit(X, y)
    clf.set_params(fit_intercept=True).partial_fit(X, y)
    assert clf.n_trials_ == 3 * 60


def test_parameters_the_kernel_does_not_read_may_change():
    """An rbf model reads no degree or coef0, a linear one no gamma: partial_fit goes on."""
    X, y = make_blobs_pm(n=60, d=3, n_classes=2, seed=9)
    rbf = KernelPerceptronClassifier(shuffle=False, kernel="rbf", max_iter=1).fit(X, y)
    rbf.set_params(degree=5, coef0=3.0).partial_fit(X, y)
    linear = KernelPerceptronClassifier(shuffle=False, kernel="linear", gamma=0.5, max_iter=1).fit(
        X, y
    )
    linear.set_params(gamma=2.0).partial_fit(X, y)
    assert rbf.n_trials_ == linear.n_trials_ == 120


def test_a_kernel_state_pickled_before_it_said_whether_it_normalises(tmp_path):
    """Kernel states of 0.1 hold no ``normalize``: their estimator's parameter says it,
    after unpickling and after loading."""
    import pickle

    X, y = make_blobs_pm(n=60, d=3, n_classes=2, seed=9)
    clf = KernelPerceptronClassifier(
        shuffle=False, kernel="poly", degree=2, normalize=True, max_iter=2
    )
    clf.fit(X, y)
    scores = clf.decision_function(X)
    del clf._kstate.normalize
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), scores)
    marginkit.save(clf, tmp_path / "m.skops")
    loaded = marginkit.load(tmp_path / "m.skops")
    np.testing.assert_array_equal(loaded.decision_function(X), scores)
