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
