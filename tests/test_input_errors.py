"""Bad input gets scikit-learn's exception and message from every estimator."""

import numpy as np
import pytest

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

ESTIMATORS = [
    ALMAClassifier,
    KernelALMAClassifier,
    PerceptronClassifier,
    KernelPerceptronClassifier,
    ROMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
    KernelPUMMAClassifier,
]

CASES = {
    "empty": (np.zeros((0, 3)), np.zeros(0), "Found array with 0 sample"),
    "strings": (
        np.array([["a", "b"], ["c", "d"]], dtype=object),
        np.array([0, 1]),
        "could not convert string to float",
    ),
    "mixed labels": (
        np.arange(6.0).reshape(3, 2),
        np.array([1, "a", 2], dtype=object),
        "Unknown label type",
    ),
    "one sample": (np.array([[1.0, 2.0]]), np.array([1]), "number of classes has to be greater"),
    "three dimensions": (np.zeros((2, 2, 2)), np.array([0, 1]), "Found array with dim 3"),
    "2-d targets": (np.zeros((3, 2)), np.zeros((3, 2)), "y should be a 1d array"),
    "lengths": (np.zeros((3, 2)), np.array([0, 1]), "inconsistent numbers of samples"),
    "complex": (np.array([[1 + 1j, 2.0]] * 2), np.array([0, 1]), "Complex data not supported"),
    "infinity": (np.array([[np.inf, 1.0], [0.0, 1.0]]), np.array([0, 1]), "contains infinity"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_bad_input(cls, case):
    X, y, message = CASES[case]
    with pytest.raises(ValueError, match=message):
        cls(shuffle=False).fit(X, y)


def _fitted(cls, X, y):
    params = {"max_iter": 3, "tol": None} if "max_iter" in cls(shuffle=False).get_params() else {}
    return cls(**{"shuffle": False, **params}).fit(X, y)


def _snapshot(clf, X):
    return clf.decision_function(X).copy(), dict(vars(clf))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("bad", ["one class", "too large", "overflow"])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_failed_fit_keeps_the_previous_model(cls, bad):
    """A fit that fails after its data passed validation (one class on other features,
    norms past float64, weights that overflow on data that are not separable) leaves
    the previous model as it was: every attribute, and its answers to the bit."""
    rng = np.random.RandomState(0)
    X = rng.randn(40, 4)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = _fitted(cls, X, y)
    scores, attrs = _snapshot(clf, X)
    if bad == "one class":
        X_bad, y_bad = rng.randn(5, 3), np.zeros(5)
    elif bad == "too large":
        if cls is ALMAClassifier:
            pytest.skip("ALMA scales each batch of instances: it learns from these rows")
        X_bad = np.array([[1.7e308] * 4, [-1.7e308, 1.7e308, 0, 0], [1.7e308, -1.7e308, 0, 0]])
        y_bad = np.array(["a", "b", "c"])
    else:
        if cls is not PUMMAClassifier:
            # ROMMA's grow without bound too, but its fit ends at the last model that
            # kept them finite, with a warning (tests/test_row_order.py)
            pytest.skip("only hard-margin PUMMA's fit raises where its weights overflow")
        X_bad = np.vstack([X, X])
        y_bad = np.concatenate([y, 1 - y])  # every point with both labels
        clf.set_params(max_iter=100000, tol=None)
        if cls is PUMMAClassifier:
            clf.set_params(lam=0.0)
    with pytest.raises(ValueError):
        clf.fit(X_bad, y_bad)
    assert set(vars(clf)) == set(attrs)
    for name, value in attrs.items():
        if name not in ("max_iter", "tol", "lam"):
            assert vars(clf)[name] is value, name
    np.testing.assert_array_equal(clf.decision_function(X), scores)


KERNEL_ESTIMATORS = [
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelROMMAClassifier,
    KernelPUMMAClassifier,
]


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS, ids=lambda c: c.__name__)
def test_sparse_batches_after_a_dense_fit(cls):
    """A kernel model fitted on dense rows learns from sparse ones (stored dense), as
    from the same rows dense."""
    import scipy.sparse as sp

    rng = np.random.RandomState(0)
    X = rng.randn(60, 4)
    y = (X[:, 0] > 0).astype(int)
    dense = (
        cls(shuffle=False)
        .partial_fit(X[:30], y[:30], classes=[0, 1])
        .partial_fit(X[30:], 1 - y[30:])
    )
    mixed = cls(shuffle=False).partial_fit(X[:30], y[:30], classes=[0, 1])
    mixed.partial_fit(sp.csr_matrix(X[30:]), 1 - y[30:])
    assert mixed.support_vectors_.shape == dense.support_vectors_.shape
    np.testing.assert_array_equal(mixed.support_, dense.support_)
    np.testing.assert_allclose(mixed.decision_function(X), dense.decision_function(X))


@pytest.mark.parametrize(
    "cls, params", [(ROMMAClassifier, {"lam": 0.0}), (PUMMAClassifier, {"lam": 0.0})]
)
def test_a_partial_fit_that_overflows_leaves_a_model_that_says_so(cls, params):
    """Weights that overflow in partial_fit (ROMMA, hard-margin PUMMA on data that are
    not separable) are changed in place: the call raises, and so do the model's answers
    and further calls, instead of NaN scores and labels of the first class."""
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3)
    y = rng.randint(0, 3, 200)
    clf = cls(**{"shuffle": False, **params}).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="weights overflowed: on data"):
        for _ in range(200):
            clf.partial_fit(X, y)
    for call in (clf.predict, clf.decision_function, lambda X: clf.partial_fit(X, y)):
        with pytest.raises(ValueError, match="overflowed in an earlier call of partial_fit"):
            call(X)
