"""One vocabulary: ``max_iter`` is the passes of every estimator, as in scikit-learn;
the former names (``n_epochs``, PUMMA's ``max_epochs``) still work, with a
FutureWarning, until marginkit 0.3."""

import pickle
import warnings

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.exceptions import ConvergenceWarning

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

RENAMED = [
    (ALMAClassifier, "n_epochs"),
    (PerceptronClassifier, "n_epochs"),
    (ROMMAClassifier, "n_epochs"),
    (KernelALMAClassifier, "n_epochs"),
    (KernelPerceptronClassifier, "n_epochs"),
    (KernelROMMAClassifier, "n_epochs"),
    (PUMMAClassifier, "max_epochs"),
    (KernelPUMMAClassifier, "max_epochs"),
]
ALL = [cls for cls, _ in RENAMED] + [MarginPerceptronClassifier]


@pytest.fixture(scope="module")
def data():
    return make_blobs_pm(n=120, d=5, n_classes=3, seed=2)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_every_estimator_says_max_iter(cls):
    params = cls().get_params()
    assert "max_iter" in params
    assert not any(name in params for name in ("n_iter", "epochs")), params


@pytest.mark.parametrize("cls,old", RENAMED, ids=lambda v: getattr(v, "__name__", v))
def test_the_former_name_warns_and_means_max_iter(data, cls, old):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(FutureWarning, match=rf"{old} was renamed max_iter .* max_iter=2"):
            before = cls(random_state=0, **{old: 2}).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)
            now = cls(random_state=0, max_iter=2).fit(X, y)
    np.testing.assert_array_equal(before.decision_function(X), now.decision_function(X))
    assert before.n_trials_ == now.n_trials_
    # the former name wins while it is set (the warning says so)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = cls(random_state=0, max_iter=7, **{old: 2}).fit(X, y)
    assert both.n_trials_ == now.n_trials_


@pytest.mark.parametrize("cls,old", RENAMED, ids=lambda v: getattr(v, "__name__", v))
def test_a_model_pickled_before_the_rename_loads(data, cls, old):
    """A model written with its passes under the former name (and no max_iter) loads
    with them as max_iter, and fits again without a warning."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = cls(random_state=0, max_iter=2).fit(X, y)
        state = dict(clf.__getstate__())
        state[old] = state.pop("max_iter")
        old_model = cls.__new__(cls)
        old_model.__setstate__(state)
        loaded = pickle.loads(pickle.dumps(old_model))
        assert loaded.max_iter == 2 and getattr(loaded, old) == "deprecated"
        np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))
        with warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)
            loaded.fit(X, y)


def test_the_former_name_warns_for_a_stream_too(tmp_path):
    from marginkit.streaming import fit_file

    X, y = make_blobs_pm(n=60, d=4, seed=3)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.6g")
    with pytest.warns(FutureWarning, match="n_epochs was renamed max_iter"):
        fit_file(ALMAClassifier(n_epochs=2), path)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_n_iter_counts_the_passes(data, cls):
    """scikit-learn's n_iter_ beside max_iter: the passes fit made (partial_fit: 1);
    PUMMA's are its epochs until quiet, the margin Perceptron's those of each problem."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = cls(random_state=0, max_iter=3).fit(X, y)
    n_iter = np.asarray(clf.n_iter_)
    assert np.all((n_iter >= 1) & (n_iter <= 3))
    if cls in (PUMMAClassifier, KernelPUMMAClassifier):
        assert clf.n_iter_ == clf.n_epochs_
    elif cls is not MarginPerceptronClassifier:
        assert clf.n_iter_ == 3
        assert cls(max_iter=3).partial_fit(X, y, classes=np.unique(y)).n_iter_ == 1
