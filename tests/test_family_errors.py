"""Bad parameters and bad input for the Perceptron, ROMMA, margin Perceptron and PUMMA."""

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import (
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)

ALL = [
    PerceptronClassifier,
    ROMMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
    KernelPerceptronClassifier,
    KernelROMMAClassifier,
    KernelPUMMAClassifier,
]


@pytest.fixture
def data():
    return make_blobs_pm(n=60, d=5, n_classes=3, seed=0)


@pytest.mark.parametrize(
    ("cls", "param", "value"),
    [
        (PerceptronClassifier, "output", "median"),
        (PerceptronClassifier, "n_epochs", 0),
        (ROMMAClassifier, "aggressive", "yes"),
        (ROMMAClassifier, "n_epochs", 1.5),
        (ROMMAClassifier, "max_iter", 1.5),
        (ROMMAClassifier, "delta", 1.0),
        (ROMMAClassifier, "delta", -0.01),
        (KernelROMMAClassifier, "delta", 1.0),
        (MarginPerceptronClassifier, "gamma_guess", 0.0),
        (MarginPerceptronClassifier, "gamma_guess", -1.0),
        (MarginPerceptronClassifier, "max_iter", 0),
        (PUMMAClassifier, "p", 1.0),
        (PUMMAClassifier, "p", 1.1),
        (PUMMAClassifier, "p", "ln"),
        (PUMMAClassifier, "p", 151.0),
        (PUMMAClassifier, "delta", 1.0),
        (PUMMAClassifier, "delta", -0.1),
        (PUMMAClassifier, "lam", -1.0),
        (PUMMAClassifier, "max_epochs", 0),
        (PUMMAClassifier, "max_iter", 0),
        (KernelPerceptronClassifier, "normalize", "yes"),
        (KernelROMMAClassifier, "kernel", "sigmoid"),
        (KernelPUMMAClassifier, "lam", -0.5),
        (KernelPUMMAClassifier, "delta", 1.5),
        (KernelPUMMAClassifier, "block_size", 0),
        (KernelPerceptronClassifier, "block_size", "large"),
    ],
)
def test_invalid_parameters(data, cls, param, value):
    with pytest.raises(InvalidParameterError, match=f"The '{param}' parameter of {cls.__name__}"):
        cls(shuffle=False, **{param: value}).fit(*data)


@pytest.mark.parametrize("cls", ALL)
def test_input_errors(data, cls):
    X, y = data
    with pytest.raises(NotFittedError):
        cls(shuffle=False).predict(X)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        cls(shuffle=False).fit(bad, y)
    with pytest.raises(ValueError, match="number of classes has to be greater than one"):
        cls(shuffle=False).fit(X, np.zeros(len(X)))
    clf = _fit_quietly(cls(shuffle=False), X, y)
    with pytest.raises(ValueError, match=f"X has 4 features, but {cls.__name__} is expecting 5"):
        clf.predict(X[:, :4])
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        cls(shuffle=False).partial_fit(X, y)
    clf.set_params(output="voted")
    attribute = "dual_coef_" if hasattr(cls, "support_") else "coef_"
    with pytest.raises(AttributeError, match=f"{attribute} is not defined for output='voted'"):
        getattr(clf, attribute)


def _fit_quietly(clf, X, y):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y)


def test_pumma_warns_when_not_converged():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1, -1, -1, 1])  # the same point with both labels: not separable
    with pytest.warns(ConvergenceWarning, match="PUMMAClassifier did not converge"):
        clf = PUMMAClassifier(shuffle=False, tol=None, max_iter=5, lam=0.0, output="last").fit(
            X, y
        )
    assert not clf.converged_ and clf.n_conflicts_ > 0
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    # a soft margin separates anything
    clf = PUMMAClassifier(shuffle=False, tol=None, lam=1.0, delta=0.1, output="last").fit(X, y)
    assert clf.converged_


def test_zero_rows_never_update():
    X = np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 0.0], [-1.0, -1.0]])
    y = np.array([1, 1, -1, -1])
    for cls in [PerceptronClassifier, ROMMAClassifier]:
        # without an intercept: a zero row has nothing to update
        clf = cls(shuffle=False, max_iter=3, fit_intercept=False, output="last").fit(X, y)
        assert clf.n_corrections_ <= 2
        assert np.all(np.isfinite(clf.coef_))


def test_kernel_pumma_warns_when_not_converged():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1, -1, -1, 1])
    with pytest.warns(ConvergenceWarning, match="KernelPUMMAClassifier did not converge"):
        clf = KernelPUMMAClassifier(
            shuffle=False, tol=None, kernel="linear", max_iter=5, lam=0.0, output="last"
        ).fit(X, y)
    assert not clf.converged_ and clf.n_conflicts_ > 0
    clf = KernelPUMMAClassifier(
        shuffle=False, tol=None, kernel="linear", lam=1.0, output="last"
    ).fit(X, y)
    assert clf.converged_


@pytest.mark.parametrize(
    "make",
    [
        lambda: PerceptronClassifier(
            shuffle=False, output="last", max_iter=1, fit_intercept=False
        ),
        lambda: ROMMAClassifier(
            shuffle=False, aggressive=True, output="last", max_iter=1, fit_intercept=False
        ),
        lambda: MarginPerceptronClassifier(shuffle=False, output="last", fit_intercept=False),
        lambda: PUMMAClassifier(shuffle=False, p=3.0, lam=0.0, output="last"),
    ],
)
def test_too_large_values_for_unnormalised_algorithms(make):
    """A fit takes features of any scale (the model's units are fixed by its first
    data); data far larger than those a model was fit on are refused, to learn from or
    to predict."""
    X = np.array([[0.0], [-1e200], [3.0]])
    y = np.array([0, 1, 0])
    assert make().fit(X, y).n_corrections_ > 0
    clf = make().fit(np.array([[0.0], [-1.0], [3.0]]), y)
    message = "The features are too large for .*the scale of the data this model was first fit"
    with pytest.raises(ValueError, match=message):
        clf.predict(X)
    if hasattr(clf, "partial_fit"):
        with pytest.raises(ValueError, match=message):
            clf.partial_fit(X, y)


def test_too_large_kernel_values():
    X = np.array([[0.0, 1.0], [1e33, 0.0], [3.0, 1.0]])
    y = np.array([0, 1, 0])
    with pytest.raises(ValueError, match="kernel values are too large for KernelPerceptron"):
        KernelPerceptronClassifier(
            shuffle=False, kernel="poly", degree=4, gamma=1.0, output="last", max_iter=1
        ).fit(X, y)
    # normalised, the same data are fine
    KernelPerceptronClassifier(
        shuffle=False,
        kernel="poly",
        degree=4,
        gamma=1.0,
        normalize=True,
        output="last",
        max_iter=1,
    ).fit(X, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ROMMAClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False),
        lambda: PUMMAClassifier(shuffle=False, p=3.0, lam=0.0, output="last"),
    ],
)
def test_overflowed_weights_are_an_error_not_nan(make, data):
    from marginkit._core import linear as L
    from marginkit._linear_base import check_finite_state

    X, y = data
    clf = _fit_quietly(make(), X, y)
    state = clf._states[0]
    check_finite_state(clf, state)  # a normal fit passes the check every pass makes
    # what a long run on inseparable data can come to: a weight, and so the running
    # sum S = sum |v_i|^p the pass keeps, overflow
    state.v[0] = np.inf
    state.fs[L.F_SUM] = np.inf
    with pytest.raises(ValueError, match="weights overflowed: on data that are not separable"):
        check_finite_state(clf, state)
