"""Bad input gets scikit-learn's exception types and messages."""

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import ALMAClassifier
from marginkit.datasets import make_sparse_target


@pytest.fixture
def data():
    return make_blobs_pm(n=50, d=5, n_classes=3, seed=0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_rejected(data, bad):
    X, y = data
    X = X.copy()
    X[3, 2] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, y)
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(*data)
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        clf.predict(X)


def test_wrong_feature_count_at_predict(data):
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(*data)
    with pytest.raises(ValueError, match="X has 4 features, but ALMAClassifier is expecting 5"):
        clf.predict(data[0][:, :4])
    with pytest.raises(ValueError, match="X has 6 features"):
        clf.partial_fit(np.ones((2, 6)), [0, 1])


def test_single_class_in_fit(data):
    X, _ = data
    with pytest.raises(ValueError, match="number of classes has to be greater than one; got 1"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, np.zeros(len(X)))


def test_single_class_in_partial_fit_classes():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="number of classes has to be greater than one"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).partial_fit(X, [1, 1, 1], classes=[1])
    # two declared classes with only one seen so far is fine
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).partial_fit(X, [1, 1, 1], classes=[0, 1])
    assert clf.predict(X).shape == (3,)


def test_continuous_targets_rejected(data):
    X, _ = data
    with pytest.raises(ValueError, match="Unknown label type"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, np.linspace(0, 1, len(X)))


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.01, 2])
def test_alpha_outside_unit_interval(data, alpha):
    with pytest.raises(InvalidParameterError, match=r"'alpha' parameter .* range \(0.0, 1.0\]"):
        ALMAClassifier(
            shuffle=False, alpha=alpha, output="last", max_iter=1, fit_intercept=False
        ).fit(*data)


@pytest.mark.parametrize("p", [1.5, 1.999, 0, -3, "two", 150.5, 1000, np.inf])
def test_p_outside_two_to_150(data, p):
    """Below 2 ALMA_p is not defined; beyond 150 the p-th powers of the weights leave
    float64 (at p = 1000 the hypothesis stayed 0)."""
    with pytest.raises(InvalidParameterError, match="'p' parameter of ALMAClassifier"):
        ALMAClassifier(
            shuffle=False, p=p, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(*data)


@pytest.mark.parametrize(
    "name,value", [("B", 0.0), ("B", -1.0), ("C", 0.0), ("max_iter", 0), ("n_epochs", 0)]
)
def test_other_bad_parameters(data, name, value):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        ALMAClassifier(shuffle=False, **{name: value}).fit(*data)


def test_unknown_output(data):
    with pytest.raises(InvalidParameterError, match="'output' parameter .* 'median'"):
        ALMAClassifier(
            shuffle=False, output="median", alpha=1.0, max_iter=1, fit_intercept=False
        ).fit(*data)
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(*data)
    clf.set_params(output="median")
    with pytest.raises(InvalidParameterError, match="'output' parameter"):
        clf.predict(data[0])
    clf.set_params(output="avg")  # the fitted state is intact
    assert clf.predict(data[0]).shape == (50,)


def test_not_fitted(data):
    with pytest.raises(NotFittedError):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).predict(data[0])
    with pytest.raises(NotFittedError):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).coef_


def test_coef_absent_for_voted(data):
    clf = ALMAClassifier(
        shuffle=False, output="voted", alpha=1.0, max_iter=1, fit_intercept=False
    ).fit(*data)
    assert not hasattr(clf, "coef_")
    assert not hasattr(clf, "intercept_")
    with pytest.raises(AttributeError, match="not defined for output='voted'"):
        clf.coef_


def test_partial_fit_needs_classes_first(data):
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).partial_fit(*data)


def test_partial_fit_unknown_label(data):
    X, y = data
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"y contains labels \[7\] that are not in classes"):
        clf.partial_fit(X[:2], [7, 0])


def test_partial_fit_changed_classes(data):
    X, y = data
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="is not the same as on last call to partial_fit"):
        clf.partial_fit(X, y, classes=[0, 1, 2, 3])


def test_failed_call_keeps_model(data):
    X, y = data
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).partial_fit(X, y, classes=[0, 1, 2])
    before = clf.coef_.copy()
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        clf.partial_fit(bad, y)
    np.testing.assert_array_equal(clf.coef_, before)


def test_generator_errors():
    with pytest.raises(ValueError, match="n_relevant=5 must be <= n_features=3"):
        make_sparse_target(n_train=10, n_test=10, n_features=3, n_relevant=5)
    with pytest.raises(ValueError, match="margin=4.0 can never be reached"):
        make_sparse_target(n_train=10, n_test=10, n_features=10, n_relevant=3, margin=4.0)
    with pytest.raises(InvalidParameterError, match="'noise' parameter"):
        make_sparse_target(noise=1.5)


def test_failed_first_partial_fit_leaves_estimator_unfitted(data):
    X, y = data
    bad = X.copy()
    bad[1, 1] = np.inf
    clf = ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
    with pytest.raises(ValueError, match="infinity"):
        clf.partial_fit(bad, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"labels \[2\] that are not in classes"):
        clf.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(NotFittedError):
        clf.predict(X)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    reference = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, reference.coef_)


def test_failed_refit_keeps_previous_model(data):
    X, y = data
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    before = clf.coef_.copy()
    with pytest.raises(ValueError, match="greater than one"):
        clf.fit(X, np.ones(len(X)))
    np.testing.assert_array_equal(clf.coef_, before)
