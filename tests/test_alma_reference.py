"""ALMAClassifier against the slow reference of tests/reference.py (Figure 1)."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm
from reference import alma_fit, alma_scores, tie_free

from marginkit import ALMAClassifier

RTOL = 1e-10


def rel_err(a, b):
    scale = max(np.max(np.abs(b)), 1e-300)
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / scale


@pytest.mark.exactness
@pytest.mark.parametrize("p", [2.0, 3.0, 6.0, 10.0])
@pytest.mark.parametrize("alpha", [1.0, 0.9, 0.5])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_same_corrections_and_weights(p, alpha, sparse, n_classes):
    X, y = make_blobs_pm(
        n=150,
        d=10,
        n_classes=n_classes,
        seed=int(p * 10 + alpha * 7 + n_classes),
        sparse_density=0.6 if sparse else None,
    )
    B, C = 1.0 / alpha, np.sqrt(2.0)
    with tie_free():
        runs, _ = alma_fit(X, y, p, alpha, B, C, max_iter=2)
        alma_scores(runs, X, p, "voted")
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=p,
        alpha=alpha,
        max_iter=2,
        output="last",
        fit_intercept=False,
    ).fit(X, y)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    assert clf.n_corrections_ == sum(len(h) - 1 for h, _ in runs)
    for j, (hyps, counts) in enumerate(runs):
        assert rel_err(clf.coef_[j], hyps[-1]) < RTOL
        assert clf.n_trials_ == sum(counts)
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        want = alma_scores(runs, X, p, output)
        assert rel_err(clf.decision_function(X), want) < 1e-9, output


@pytest.mark.exactness
@pytest.mark.parametrize("p", [2.0, 6.0])
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("scaling", ["rms", "max", 2.5])
def test_intercept_matches_augmented_reference(p, n_classes, scaling):
    X, y = make_blobs_pm(n=120, d=6, n_classes=n_classes, seed=3)
    X = X + 4.0  # far from the origin: the bias matters
    with tie_free():
        runs, R = alma_fit(
            X, y, p, 0.8, 1 / 0.8, np.sqrt(2), fit_intercept=True, intercept_scaling=scaling
        )
        alma_scores(runs, X, p, "voted", R=R)
    clf = ALMAClassifier(
        intercept_scaling=scaling,
        shuffle=False,
        keep_corrections=True,
        p=p,
        alpha=0.8,
        fit_intercept=True,
        output="last",
        max_iter=1,
    ).fit(X, y)
    assert np.isclose(clf.R_, R, rtol=1e-12)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), alma_scores(runs, X, p, output, R=R)) < 1e-9
    clf.set_params(output="last")
    for j, (hyps, _) in enumerate(runs):
        assert rel_err(clf.coef_[j], hyps[-1][:-1]) < RTOL
        assert np.isclose(clf.intercept_[j], -R * hyps[-1][-1], rtol=1e-9, atol=1e-15)


@pytest.mark.exactness
def test_dense_and_sparse_agree_exactly():
    X, y = make_blobs_pm(n=300, d=15, n_classes=3, seed=5, sparse_density=0.3)
    with tie_free():
        alma_fit(X, y, 4.0, 0.7, 1 / 0.7, np.sqrt(2))
    a = ALMAClassifier(
        shuffle=False, p=4.0, alpha=0.7, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    b = ALMAClassifier(
        shuffle=False, p=4.0, alpha=0.7, output="last", max_iter=1, fit_intercept=False
    ).fit(X.toarray(), y)
    assert a.n_corrections_ == b.n_corrections_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=0)


@pytest.mark.parametrize("splits", [[1] * 40, [7, 13, 20], [39, 1], [40]])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_any_split_equals_fit(splits, sparse):
    X, y = make_blobs_pm(n=40, d=8, n_classes=3, seed=11, sparse_density=0.5 if sparse else None)
    whole = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=3.0,
        alpha=0.9,
        output="last",
        max_iter=1,
        fit_intercept=False,
    ).fit(X, y)
    part = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=3.0,
        alpha=0.9,
        output="last",
        max_iter=1,
        fit_intercept=False,
    )
    start = 0
    for size in splits:
        part.partial_fit(X[start : start + size], y[start : start + size], classes=[0, 1, 2])
        start += size
    assert part.n_corrections_ == whole.n_corrections_
    for output in ["last", "avg", "voted"]:
        whole.set_params(output=output)
        part.set_params(output=output)
        np.testing.assert_array_equal(part.decision_function(X), whole.decision_function(X))


@pytest.mark.exactness
def test_zero_instances_never_update():
    X, y = make_blobs_pm(n=60, d=5, seed=2)
    X[::3] = 0.0
    with tie_free():
        runs, _ = alma_fit(X, y, 2.0, 0.9, 1 / 0.9, np.sqrt(2))
    clf = ALMAClassifier(
        shuffle=False, alpha=0.9, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    assert clf.n_corrections_ == len(runs[0][0]) - 1
    assert clf.n_trials_ == 60
    Xs = sp.csr_matrix(X)
    assert (
        ALMAClassifier(shuffle=False, alpha=0.9, output="last", max_iter=1, fit_intercept=False)
        .fit(Xs, y)
        .n_corrections_
        == clf.n_corrections_
    )


def test_shuffle_is_seeded_and_changes_order():
    X, y = make_blobs_pm(n=200, d=8, n_classes=3, seed=4)
    a = ALMAClassifier(
        alpha=0.8, shuffle=True, random_state=0, max_iter=2, output="last", fit_intercept=False
    ).fit(X, y)
    b = ALMAClassifier(
        alpha=0.8, shuffle=True, random_state=0, max_iter=2, output="last", fit_intercept=False
    ).fit(X, y)
    c = ALMAClassifier(
        alpha=0.8, shuffle=False, max_iter=2, output="last", fit_intercept=False
    ).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


@pytest.mark.exactness
@pytest.mark.parametrize("p", [2.0, 5.0])
def test_scale_folding_is_invisible(p, monkeypatch):
    """Folding s into v (done on long streams before |v|^p overflows) changes nothing.

    The threshold is raised so that folds happen every few corrections here.
    """
    from marginkit import alma

    original = alma.ALMAClassifier._initialise

    def often(self, X):
        original(self, X)
        self._fold_below = 0.9

    X, y = make_blobs_pm(n=200, d=9, n_classes=3, seed=8, sparse_density=0.7)
    with tie_free():
        runs, _ = alma_fit(X, y, p, 0.6, 1 / 0.6, np.sqrt(2), max_iter=2)
        alma_scores(runs, X, p, "voted")
    monkeypatch.setattr(alma.ALMAClassifier, "_initialise", often)
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=p,
        alpha=0.6,
        max_iter=2,
        output="last",
        fit_intercept=False,
    ).fit(X, y)
    assert any(s.h_rescale[: s.n_corrections].min() < 1.0 for s in clf._states)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), alma_scores(runs, X, p, output)) < 1e-9


@pytest.mark.exactness
@pytest.mark.parametrize("scale", [1e-60, 1e-20, 1.0, 1e20, 1e60])
@pytest.mark.parametrize("p", [2.0, 10.0])
def test_extreme_scales_are_normalised_exactly(scale, p):
    """Instance norms neither overflow nor underflow: ALMA sees x / ||x||_p."""
    X, y = make_blobs_pm(n=80, d=6, n_classes=2, seed=12)
    with tie_free():
        alma_fit(X, y, p, 0.8, 1 / 0.8, np.sqrt(2))
    ref = ALMAClassifier(
        shuffle=False, p=p, alpha=0.8, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    for data in (X * scale, sp.csr_matrix(X * scale)):
        clf = ALMAClassifier(
            shuffle=False, p=p, alpha=0.8, output="last", max_iter=1, fit_intercept=False
        ).fit(data, y)
        assert clf.n_corrections_ == ref.n_corrections_
        np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-9, atol=1e-15)
