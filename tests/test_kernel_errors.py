"""KernelALMAClassifier: bad parameters and bad input get clear errors."""

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import KernelALMAClassifier


@pytest.fixture
def data():
    return make_blobs_pm(n=40, d=5, n_classes=3, seed=0)


def test_overflowing_kernel_raises_instead_of_nan(data):
    X, y = data
    raw = np.abs(X) * 1e6  # "raw pixels" scale with a large degree
    clf = KernelALMAClassifier(
        kernel="poly", degree=60, gamma=1.0, alpha=1.0, output="last", max_iter=1
    )
    with pytest.raises(ValueError, match="The kernel overflows: K\\(x, x\\) is not finite for"):
        clf.fit(raw, y)
    ok = KernelALMAClassifier(
        kernel="poly", degree=4, gamma=1.0, alpha=1.0, output="last", max_iter=1
    ).fit(X, y)
    with pytest.raises(ValueError, match="The kernel overflows"):
        ok.predict(np.full((2, 5), 1e200))


def test_callable_kernel_with_wrong_shape_rejected(data):
    X, y = data
    with pytest.raises(ValueError, match="returned an array of shape \\(3, 3\\).*expected"):
        KernelALMAClassifier(
            kernel=lambda A, B: np.eye(3), alpha=1.0, output="last", max_iter=1
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
    clf = KernelALMAClassifier(kernel=lambda A, B: values(A @ B.T), max_iter=1)
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)
    bad = []

    def later(A, B):
        return values(A @ B.T) if bad else A @ B.T

    fitted = KernelALMAClassifier(kernel=later, max_iter=1).fit(X, y)
    bad.append(True)
    with pytest.raises(ValueError, match=message):
        fitted.decision_function(X)


@pytest.mark.parametrize("params", [{"degree": 10**6}, {"coef0": 1e300}, {"coef0": -1e300}])
def test_poly_rbf_overflow_raises_the_kernel_error(data, params):
    """(coef0 + 1) ^ degree past float64 gets the error of the other kernels, not a bare
    OverflowError."""
    with pytest.raises(ValueError, match="The kernel overflows"):
        KernelALMAClassifier(kernel="poly_rbf", max_iter=1, **params).fit(*data)


def test_indefinite_kernel_rejected(data):
    X, y = data
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelALMAClassifier(
            kernel="poly", degree=3, gamma=1.0, coef0=-1e6, alpha=1.0, output="last", max_iter=1
        ).fit(X, y)


def test_wrong_feature_count_at_predict(data):
    clf = KernelALMAClassifier(alpha=1.0, output="last", max_iter=1).fit(*data)
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
        KernelALMAClassifier(**{name: value}).fit(*data)


def test_nan_rejected(data):
    X, y = data
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        KernelALMAClassifier(alpha=1.0, output="last", max_iter=1).fit(X, y)
