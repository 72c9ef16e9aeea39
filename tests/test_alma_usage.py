"""Everyday use: labels, input kinds, pipelines, persistence, progress."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from marginkit import ALMAClassifier


def test_string_labels_and_classes_order():
    X, y = make_blobs_pm(n=120, d=6, n_classes=3, seed=1)
    names = np.array(["cat", "dog", "emu"])[y]
    a = ALMAClassifier(
        shuffle=False, alpha=0.8, output="last", max_iter=1, fit_intercept=False
    ).fit(X, names)
    b = ALMAClassifier(
        shuffle=False, alpha=0.8, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    np.testing.assert_array_equal(a.classes_, ["cat", "dog", "emu"])
    np.testing.assert_array_equal(a.predict(X), np.array(["cat", "dog", "emu"])[b.predict(X)])


def test_binary_decision_sign_matches_predict():
    X, y = make_blobs_pm(n=100, d=5, n_classes=2, seed=2)
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        alpha=0.9,
        output="last",
        max_iter=1,
        fit_intercept=False,
    ).fit(X, np.where(y == 1, "yes", "no"))
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        scores = clf.decision_function(X)
        assert scores.shape == (100,)
        assert np.all(np.abs(scores) <= 1 + 1e-12)
        np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "yes", "no"))


def test_sparse_layouts_give_the_same_model():
    X, y = make_blobs_pm(n=150, d=20, n_classes=3, seed=3, sparse_density=0.2)
    ref = ALMAClassifier(
        shuffle=False, p=3.0, alpha=0.7, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    # explicit zeros, unsorted indices, duplicate entries, other formats
    coo = X.tocoo()
    dup = sp.coo_matrix(
        (
            np.r_[coo.data / 2, coo.data / 2, np.zeros(5)],
            (np.r_[coo.row, coo.row, np.arange(5)], np.r_[coo.col, coo.col, np.arange(5)]),
        ),
        shape=X.shape,
    )
    unsorted = X.copy()
    for r in range(unsorted.shape[0]):
        lo, hi = unsorted.indptr[r], unsorted.indptr[r + 1]
        unsorted.indices[lo:hi] = unsorted.indices[lo:hi][::-1]
        unsorted.data[lo:hi] = unsorted.data[lo:hi][::-1]
    unsorted.has_sorted_indices = False
    for variant in [dup, unsorted, X.tocsc(), sp.csr_array(X), X.astype(np.float32)]:
        clf = ALMAClassifier(
            shuffle=False, p=3.0, alpha=0.7, output="last", max_iter=1, fit_intercept=False
        ).fit(variant, y)
        assert clf.n_corrections_ == ref.n_corrections_
        np.testing.assert_allclose(
            clf.coef_, ref.coef_, rtol=1e-6 if variant.dtype == np.float32 else 1e-12, atol=1e-12
        )


def test_in_pipeline_and_grid_search():
    X, y = make_blobs_pm(n=300, d=8, n_classes=3, seed=4)
    pipe = make_pipeline(
        StandardScaler(),
        ALMAClassifier(shuffle=False, fit_intercept=True, max_iter=3, alpha=1.0, output="last"),
    )
    grid = GridSearchCV(
        pipe,
        {"almaclassifier__alpha": [1.0, 0.5], "almaclassifier__output": ["last", "avg"]},
        cv=3,
    ).fit(X, y)
    assert grid.best_score_ > 0.7


def test_pickle_round_trip_keeps_every_output():
    X, y = make_blobs_pm(n=200, d=7, n_classes=3, seed=5)
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=4.0,
        alpha=0.6,
        max_iter=2,
        output="last",
        fit_intercept=False,
    ).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        again.set_params(output=output)
        np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    # and training goes on from where it was
    clf.partial_fit(X, y)
    again.partial_fit(X, y)
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))


def test_verbose_shows_progress(capsys):
    X, y = make_blobs_pm(n=50, d=4, n_classes=3, seed=6)
    ALMAClassifier(
        shuffle=False, verbose=1, max_iter=2, alpha=1.0, output="last", fit_intercept=False
    ).fit(X, y)
    assert "ALMAClassifier" in capsys.readouterr().err


@pytest.mark.parametrize("sparse", [False, True])
def test_long_log_grows_across_blocks(sparse):
    """Many corrections fill several log blocks; voted replays across them."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(6000, 300))
    y = rng.integers(0, 2, size=6000)  # pure noise: a correction on most trials
    if sparse:
        X = sp.csr_matrix(X * (rng.uniform(size=X.shape) < 0.5))
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        alpha=0.5,
        output="last",
        max_iter=1,
        fit_intercept=False,
    ).fit(X, y)
    state = clf._states[0]
    assert len(state.b_first) > 2
    # voted through the log equals voted recomputed from the replayed hypotheses
    clf.set_params(output="voted")
    scores = clf.decision_function(X[:50])
    G = np.vstack([G for _, G, _ in state.hypotheses(np.arange(300))])
    Xd = X[:50].toarray() if sparse else X[:50]
    counts = state.h_count[1 : state.n_corrections + 1]
    want = np.sign(Xd @ G.T) @ counts / state.n_trials
    np.testing.assert_allclose(scores, want, rtol=1e-12, atol=1e-15)
    # the last replayed hypothesis is the final one, up to a positive factor
    w = clf.set_params(output="last").coef_[0]
    cos = G[-1] @ w / np.linalg.norm(G[-1]) / np.linalg.norm(w)
    assert cos == pytest.approx(1.0, abs=1e-12)
