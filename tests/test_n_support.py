"""``n_support_``: the distinct training examples of each class among the support
vectors, the "SV" of Gentile 2001 (Tables 2 and 4), beside ``support_``."""

import warnings

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.exceptions import ConvergenceWarning

import marginkit
from marginkit import (
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
)

ESTIMATORS = [
    lambda: KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, alpha=0.8, max_iter=3, output="last"
    ),
    lambda: KernelPerceptronClassifier(
        shuffle=False, kernel="poly", degree=2, max_iter=2, output="last"
    ),
    lambda: KernelROMMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, aggressive=True, max_iter=2, output="last"
    ),
    lambda: KernelPUMMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, lam=0.5, max_iter=3, output="last"
    ),
]


def _expected(clf, y):
    """Counted from the model's own arrays, the slow way."""
    state, classes = clf._kstate, clf.classes_
    m = state.m
    if hasattr(state, "index_p"):
        mask = state.mask[:m]
        index = [
            np.concatenate([state.index_p[:m][mask[:, c]], state.index_n[:m][mask[:, c]]])
            for c in range(mask.shape[1])
        ]
    else:
        index = [state.index[:m][state.mask[:m, c]] for c in range(state.mask.shape[1])]
    if len(classes) == 2:
        distinct = np.unique(index[0])
        return np.array([np.sum(y[distinct] == c) for c in classes])
    return np.array([np.unique(i).size for i in index])


@pytest.mark.parametrize("make", ESTIMATORS, ids=["alma", "perceptron", "romma", "pumma"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_n_support_counts_distinct_examples_per_class(make, n_classes):
    X, y = make_blobs_pm(n=150, d=4, n_classes=n_classes, seed=3)
    flip = np.random.default_rng(0).uniform(size=y.size) < 0.15  # noise: corrected again
    y = np.where(flip, (y + 1) % n_classes, y)
    labels = np.array([10, 20, 30])[y]  # classes_ other than 0..k-1
    clf = make().set_params(shuffle=False).fit(X, labels)
    support = clf.support_
    assert clf.n_support_.dtype == np.int64 and clf.n_support_.shape == (n_classes,)
    np.testing.assert_array_equal(clf.n_support_, _expected(clf, labels))
    # over several epochs some example is corrected more than once, and counts once;
    # kernel ALMA's family stores it once
    if not isinstance(clf, KernelPUMMAClassifier):
        assert support.size == np.unique(support).size < clf._kstate.m


@pytest.mark.parametrize("make", ESTIMATORS, ids=["alma", "perceptron", "romma", "pumma"])
def test_support_indexes_the_rows_of_x_when_the_passes_shuffle(make):
    """``support_`` is a row of X, not a position in a shuffled pass; ``n_support_``
    counts the distinct rows of each class (here every row is distinct)."""
    X, y = make_blobs_pm(n=150, d=4, n_classes=3, seed=5)
    flip = np.random.default_rng(1).uniform(size=y.size) < 0.15
    y = np.where(flip, (y + 1) % 3, y)
    clf = make().set_params(shuffle=True, random_state=0, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    support = clf.support_
    assert support.size and not np.array_equal(support, np.sort(support))
    np.testing.assert_array_equal(clf.support_vectors_, X[support])
    np.testing.assert_array_equal(clf.n_support_, _expected(clf, y))


def test_n_support_survives_saving_and_partial_fit(tmp_path):
    X, y = make_blobs_pm(n=200, d=4, n_classes=3, seed=4)
    clf = KernelALMAClassifier(
        kernel="rbf", gamma=0.3, shuffle=False, alpha=1.0, output="last", max_iter=1
    )
    clf.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    clf.partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(clf.n_support_, _expected(clf, y))
    marginkit.save(clf, tmp_path / "m.skops")
    np.testing.assert_array_equal(marginkit.load(tmp_path / "m.skops").n_support_, clf.n_support_)


@pytest.mark.exactness
def test_n_support_is_the_papers_sv_per_digit():
    """Against the per-example reference: the distinct examples each one-vs-rest problem
    corrected over three epochs (Gentile 2001, Tables 2 and 4: "SV")."""
    from reference import kernel_alma_fit, tie_free

    X, y = make_blobs_pm(n=90, d=3, n_classes=3, seed=6)
    flip = np.random.default_rng(2).uniform(size=y.size) < 0.2
    y = np.where(flip, (y + 1) % 3, y)
    kw = {"gamma": 0.5, "degree": 2, "coef0": 1.0, "max_iter": 3}
    with tie_free():
        runs, _ = kernel_alma_fit(X, y, "poly", 0.9, 1 / 0.9, np.sqrt(2), **kw)
    want = [len(set(hyps[-1][0])) for hyps, _ in runs]
    clf = KernelALMAClassifier(
        kernel="poly", alpha=0.9, fit_intercept=False, **{"shuffle": False, **kw}
    ).fit(X, y)
    np.testing.assert_array_equal(clf.n_support_, want)
    # some example was corrected twice: more corrections than support vectors
    assert np.all(clf.n_corrections_per_class_ >= want)
    assert np.any(clf.n_corrections_per_class_ > want)
