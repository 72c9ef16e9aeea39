"""KernelALMAClassifier: bad parameters and bad input get clear errors."""

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import (
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
)


@pytest.fixture
def data():
    return make_blobs_pm(n=40, d=5, n_classes=3, seed=0)


def test_overflowing_kernel_raises_instead_of_nan(data):
    X, y = data
    raw = np.abs(X) * 1e6  # "raw pixels" scale with a large degree
    clf = KernelALMAClassifier(
        shuffle=False, kernel="poly", degree=60, gamma=1.0, alpha=1.0, output="last", max_iter=1
    )
    with pytest.raises(ValueError, match="The kernel overflows: K\\(x, x\\) is not finite for"):
        clf.fit(raw, y)
    ok = KernelALMAClassifier(
        shuffle=False, kernel="poly", degree=4, gamma=1.0, alpha=1.0, output="last", max_iter=1
    ).fit(X, y)
    with pytest.raises(ValueError, match="The kernel overflows"):
        ok.predict(np.full((2, 5), 1e200))


def test_callable_kernel_with_wrong_shape_rejected(data):
    X, y = data
    with pytest.raises(ValueError, match="returned an array of shape \\(3, 3\\).*expected"):
        KernelALMAClassifier(
            shuffle=False, kernel=lambda A, B: np.eye(3), alpha=1.0, output="last", max_iter=1
        ).fit(X, y)


@pytest.mark.parametrize(
    "values, message",
    [
        (lambda K: np.where(np.arange(K.shape[1]) == K.shape[1] - 1, np.nan, K), "not finite"),
        (lambda K: K * np.inf, "not finite"),
        (lambda K: K + 0j, "complex values"),
    ],
)
def test_callable_kernel_values_checked(data, values, message):
    """Off-diagonal NaN or inf, or complex values, from a callable are refused (they
    would make every output NaN, or be cast silently), at fit and at predict."""
    X, y = data
    clf = KernelALMAClassifier(shuffle=False, kernel=lambda A, B: values(A @ B.T), max_iter=1)
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)
    bad = []

    def later(A, B):
        return values(A @ B.T) if bad else A @ B.T

    fitted = KernelALMAClassifier(shuffle=False, kernel=later, max_iter=1).fit(X, y)
    bad.append(True)
    with pytest.raises(ValueError, match=message):
        fitted.decision_function(X)


@pytest.mark.parametrize("params", [{"degree": 10**6}, {"coef0": 1e300}, {"coef0": -1e300}])
def test_poly_rbf_overflow_raises_the_kernel_error(data, params):
    """(coef0 + 1) ^ degree past float64 gets the error of the other kernels, not a bare
    OverflowError."""
    with pytest.raises(ValueError, match="The kernel overflows"):
        KernelALMAClassifier(kernel="poly_rbf", max_iter=1, **{"shuffle": False, **params}).fit(
            *data
        )


def test_indefinite_kernel_rejected(data):
    X, y = data
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelALMAClassifier(
            shuffle=False,
            kernel="poly",
            degree=3,
            gamma=1.0,
            coef0=-1e6,
            alpha=1.0,
            output="last",
            max_iter=1,
        ).fit(X, y)


def test_wrong_feature_count_at_predict(data):
    clf = KernelALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1).fit(*data)
    with pytest.raises(
        ValueError, match="X has 4 features, but KernelALMAClassifier is expecting 5"
    ):
        clf.predict(data[0][:, :4])


@pytest.mark.parametrize(
    "name,value",
    [
        ("kernel", "sigmoid"),
        ("degree", 0),
        ("gamma", 0.0),
        ("gamma", "median"),
        ("block_size", 0),
        ("cache_size", -1),
        ("alpha", 0.0),
        ("output", "median"),
    ],
)
def test_bad_parameters(data, name, value):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of KernelALMAClassifier"):
        KernelALMAClassifier(shuffle=False, **{name: value}).fit(*data)


def test_nan_rejected(data):
    X, y = data
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        KernelALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1).fit(X, y)


class _FailingKernel:
    """An RBF kernel that raises on its ``fail_at``-th call from now (None: never)."""

    def __init__(self):
        self.fail_at = None

    def __call__(self, A, B):
        if self.fail_at is not None:
            self.fail_at -= 1
            if self.fail_at == 0:
                raise KeyboardInterrupt
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
        return np.exp(-0.3 * np.maximum(d2, 0.0))


@pytest.mark.parametrize(
    "cls",
    [
        KernelALMAClassifier,
        KernelPerceptronClassifier,
        lambda **kw: KernelROMMAClassifier(aggressive=True, **{"shuffle": False, **kw}),
        KernelPUMMAClassifier,
    ],
    ids=["alma", "perceptron", "romma", "pumma"],
)
def test_a_later_partial_fit_that_fails_part_way_leaves_the_model(cls, tmp_path):
    """An interrupt (or a kernel that raises) in the middle of a later partial_fit,
    after some blocks stored support vectors: the model is the one before the call, and
    the same call made again gives the model of a run that never failed."""
    X, y = make_blobs_pm(n=240, d=4, n_classes=3, seed=7)
    y = np.where(np.random.default_rng(0).uniform(size=y.size) < 0.2, (y + 1) % 3, y)
    kernel = _FailingKernel()
    clf = cls(shuffle=False, kernel=kernel, block_size=10, output="last")
    clf.partial_fit(X[:80], y[:80], classes=[0, 1, 2])
    before = clf.decision_function(X), clf.support_.copy(), clf.n_corrections_, clf.n_trials_
    kernel.fail_at = 12  # some blocks in
    with pytest.raises(KeyboardInterrupt):
        clf.partial_fit(X[80:], y[80:])
    kernel.fail_at = None
    np.testing.assert_array_equal(clf.decision_function(X), before[0])
    np.testing.assert_array_equal(clf.support_, before[1])
    assert (clf.n_corrections_, clf.n_trials_) == before[2:]
    clf.partial_fit(X[80:], y[80:])
    plain = cls(shuffle=False, kernel=_FailingKernel(), block_size=10, output="last")
    plain.partial_fit(X[:80], y[:80], classes=[0, 1, 2]).partial_fit(X[80:], y[80:])
    np.testing.assert_array_equal(clf.decision_function(X), plain.decision_function(X))
    np.testing.assert_array_equal(clf.support_, plain.support_)
    assert clf.n_corrections_ == plain.n_corrections_
