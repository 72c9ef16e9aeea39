"""decision_function never contradicts predict: at every feature scale from 1e-300 to
1e300, for every linear and kernel estimator, dense and sparse, its sign is predict's
class (two classes) and its argmax predict's class (more), also where the value in the
units of the data leaves float64."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from marginkit._scaling import signs_kept

SCALES = [10.0**k for k in range(-300, 301, 50)] + [3e-250, 7e250, 2.0**-1000, 2.0**1000]

ESTIMATORS = {
    "perceptron": lambda: PerceptronClassifier(shuffle=False, max_iter=3, tol=None),
    "perceptron-avg": lambda: PerceptronClassifier(
        shuffle=False, max_iter=3, tol=None, output="avg"
    ),
    "alma": lambda: ALMAClassifier(shuffle=False, alpha=0.9, max_iter=2, tol=None),
    "romma": lambda: ROMMAClassifier(shuffle=False, max_iter=2, tol=None),
    "margin-perceptron": lambda: MarginPerceptronClassifier(shuffle=False, max_iter=3),
    "pumma": lambda: PUMMAClassifier(shuffle=False, max_iter=3),
    "kernel-perceptron": lambda: KernelPerceptronClassifier(
        shuffle=False, kernel="linear", max_iter=2, tol=None
    ),
    "kernel-alma": lambda: KernelALMAClassifier(
        shuffle=False, kernel="linear", max_iter=2, tol=None
    ),
    "kernel-romma": lambda: KernelROMMAClassifier(
        shuffle=False, kernel="linear", max_iter=2, tol=None
    ),
    "kernel-pumma": lambda: KernelPUMMAClassifier(shuffle=False, kernel="linear", max_iter=2),
    "kernel-rbf": lambda: KernelPerceptronClassifier(shuffle=False, max_iter=2, tol=None),
}


def data(n_classes, n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
    else:
        y = np.argmax(X[:, :n_classes], axis=1)
    return X, y


def agrees(clf, X):
    """Whether decision_function says on every row what predict says."""
    scores = clf.decision_function(X)
    pred = clf.predict(X)
    if scores.ndim == 1:
        assert np.array_equal(clf.classes_[(scores > 0).astype(int)], pred)
        assert not np.any(np.isnan(scores))
    else:
        assert np.array_equal(clf.classes_[scores.argmax(axis=1)], pred)
    return scores


@pytest.mark.parametrize(
    "name,n_classes,sparse",
    # the kernel estimators' three-class CSR fits at every scale in make test-all
    [
        pytest.param(
            name,
            n_classes,
            sparse,
            marks=[pytest.mark.slow]
            if name.startswith("kernel-") and n_classes == 3 and sparse
            else [],
        )
        for sparse in (False, True)
        for n_classes in (2, 3)
        for name in sorted(ESTIMATORS)
    ],
)
def test_sign_and_argmax_agree_with_predict_at_every_scale(name, n_classes, sparse):
    X, y = data(n_classes)
    wrap = sp.csr_matrix if sparse else np.asarray
    # fit at scale 1, score at every scale (the values then leave float64 at the ends),
    # and fit at every scale (the model's own units)
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # passes that ran out: no matter here
        base = ESTIMATORS[name]().fit(wrap(X), y)
        for c in SCALES:
            Xc = wrap(X * c)
            for clf in (base, None):
                try:  # a refusal (too far from the fit's scale, a kernel that overflows)
                    clf = clf or ESTIMATORS[name]().fit(Xc, y)  # says nothing false
                    agrees(clf, Xc)
                except ValueError:
                    continue
                checked += 1
    assert checked >= len(SCALES)  # every fit at its own scale, at least


def test_perceptron_near_1e_250_is_not_zero():
    """The case of the report: the data-unit value underflows, predict says +1."""
    X, y = data(2)
    c = 1e-250
    clf = PerceptronClassifier(shuffle=False, max_iter=3, tol=None).fit(X * c, y)
    scores = agrees(clf, X * c)
    assert np.all(scores != 0)
    positive = clf.predict(X * c) == 1
    assert np.all(scores[positive] > 0) and np.all(scores[~positive] < 0)
    assert np.min(np.abs(scores)) >= np.finfo(float).smallest_subnormal


def test_signs_kept_clamps_and_breaks_ties():
    tiny, big = np.finfo(float).smallest_subnormal, np.finfo(float).max
    scores = np.array([1e-10, -1e-10, 0.0, 1e300, -1e300])
    values = np.array([0.0, -0.0, 0.0, np.inf, -np.inf])
    np.testing.assert_array_equal(signs_kept(values, scores), [tiny, -tiny, 0.0, big, -big])
    # rows of three classes whose values rounding made equal
    scores = np.array([[1e-10, 2e-10, -1.0], [-2e-10, -1e-10, -3.0], [1e300, 2e300, 0.0]])
    values = np.array([[0.0, 0.0, -1.0], [-0.0, -0.0, -3.0], [np.inf, np.inf, 0.0]])
    out = signs_kept(values, scores)
    np.testing.assert_array_equal(out.argmax(axis=1), [1, 1, 1])
    np.testing.assert_array_equal(np.sign(out), np.sign(scores))
    # values as given, where the scaling made no change
    assert signs_kept(scores, scores) is scores


@pytest.mark.parametrize("cls", [KernelPerceptronClassifier, KernelALMAClassifier])
def test_agrees_on_arrays_of_another_namespace(cls):
    """Under array API dispatch the values that leave float64 are adjusted on the host
    and come back in the namespace of X."""
    xps = pytest.importorskip("array_api_strict")
    import sklearn

    X, y = data(2)
    c = 1e-250
    with sklearn.config_context(array_api_dispatch=True):
        Xc = xps.asarray(X * c)
        clf = cls(shuffle=False, kernel="linear", max_iter=2, tol=None).fit(Xc, xps.asarray(y))
        scores = clf.decision_function(Xc)
        pred = clf.predict(Xc)
    assert not isinstance(scores, np.ndarray)  # the namespace of X
    scores, pred = np.asarray(scores), np.asarray(pred)
    assert np.all(scores != 0)
    np.testing.assert_array_equal(clf.classes_[(scores > 0).astype(int)], pred)
