"""Early stopping of the kernel estimators' passes on held-out rows
(``early_stopping``, ``validation_fraction``, ``n_iter_no_change``): the passes end
where the documentation says, the model kept is that of the best pass, and the fits
that cannot hold rows out refuse it."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier
from marginkit.streaming import fit_file

ESTIMATORS = [KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier]
ids = [cls.__name__ for cls in ESTIMATORS]


def noisy(n=600, seed=0):
    return make_classification(
        n_samples=n,
        n_features=6,
        n_informative=4,
        n_redundant=0,
        n_classes=3,
        flip_y=0.2,
        random_state=seed,
    )


def make(cls, **params):
    return cls(
        **{
            "shuffle": False,
            "kernel": "rbf",
            "gamma": 0.3,
            "block_size": 32,
            "max_iter": 12,
            **params,
        }
    )


@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_the_passes_end_and_the_best_pass_is_kept(cls):
    """The model is that of a plain fit on the rows not held out, for as many passes as
    the best one; the passes end ``n_iter_no_change`` passes after it; ``support_``
    indexes the rows of X."""
    X, y = noisy()
    est = make(cls, early_stopping=True, random_state=3, validation_fraction=0.2)
    scores = []
    split = StratifiedShuffleSplit(n_splits=1, test_size=0.2, random_state=3)
    train, held = (np.sort(rows) for rows in next(split.split(X, y)))

    def record(model, epoch):
        scores.append(model.score(X[held], y[held]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, callback=record)
    tol = est.tol
    best, since, passes = -np.inf, 0, 0
    for score in scores:  # the rule, pass by pass
        passes += 1
        if score > best + tol:
            best, best_pass, since = score, passes, 0
        else:
            since += 1
        if since >= est.n_iter_no_change:
            break
    assert est.n_iter_ == passes == len(scores) < 12
    plain = make(cls, tol=None, max_iter=best_pass).fit(X[train], y[train])
    np.testing.assert_array_equal(est.decision_function(X), plain.decision_function(X))
    np.testing.assert_array_equal(est.support_, train[plain.support_])
    np.testing.assert_array_equal(est.support_vectors_, X[est.support_])
    assert est.score(X[held], y[held]) == best


def test_the_same_seed_holds_out_the_same_rows():
    X, y = noisy(seed=1)
    a = make(KernelALMAClassifier, early_stopping=True, random_state=0).fit(X, y)
    b = make(KernelALMAClassifier, early_stopping=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.support_, b.support_)


def test_partial_fit_after_early_stopping_counts_the_rows_of_x():
    X, y = noisy(seed=2)
    est = make(KernelPerceptronClassifier, early_stopping=True, random_state=0).fit(X, y)
    est.partial_fit(X[:50], y[:50])
    assert est.support_.max() >= X.shape[0]  # the new rows come after X's


def test_refused_with_checkpoints_and_streams(tmp_path):
    X, y = noisy(n=200)
    est = make(KernelALMAClassifier, early_stopping=True)
    with pytest.raises(ValueError, match="early_stopping=True is not offered with checkpoints"):
        est.fit(X, y, checkpoint=tmp_path / "c.skops")
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path))
    with pytest.raises(ValueError, match="early_stopping=True is not offered with a streamed"):
        fit_file(make(KernelALMAClassifier, early_stopping=True), path, chunk_size=50)


@pytest.mark.parametrize(
    "params",
    [{"validation_fraction": 0.0}, {"validation_fraction": 1.0}, {"n_iter_no_change": 0}],
)
def test_bad_early_stopping_parameters(params):
    X, y = noisy(n=100)
    with pytest.raises(InvalidParameterError):
        make(KernelALMAClassifier, early_stopping=True, **params).fit(X, y)
