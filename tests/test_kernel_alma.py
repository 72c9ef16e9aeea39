"""KernelALMAClassifier: the blocked engine against the per-example reference."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, rel_err
from reference import bias_offset, kernel_alma_fit, tie_free
from sklearn.metrics.pairwise import polynomial_kernel

from marginkit import ALMAClassifier, KernelALMAClassifier

pytestmark = pytest.mark.exactness


def cubic(A, B):
    return polynomial_kernel(A, B, degree=3, gamma=0.1, coef0=1.0)


KERNELS = [
    ("linear", {}),
    ("poly", {"degree": 3, "gamma": 0.2, "coef0": 1.0}),
    ("rbf", {"gamma": 0.3}),
    ("poly_rbf", {"degree": 5, "gamma": 0.2, "coef0": 1.0}),
    (cubic, {}),
]


@pytest.mark.parametrize("kernel,kw", KERNELS, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("n_epochs", [1, 3])
def test_matches_reference(kernel, kw, n_classes, n_epochs):
    X, y = make_blobs_pm(n=70, d=4, n_classes=n_classes, seed=n_classes + 10 * n_epochs)
    alpha = 0.8
    X_test, _ = make_blobs_pm(n=25, d=4, n_classes=n_classes, seed=99)
    with tie_free():
        runs, ref_scores = kernel_alma_fit(
            X,
            y,
            kernel,
            alpha,
            1 / alpha,
            np.sqrt(2),
            max_iter=n_epochs,
            gamma=kw.get("gamma", 1.0),
            degree=kw.get("degree", 3),
            coef0=kw.get("coef0", 1.0),
            offset=bias_offset(kernel, X, **kw),  # the defaults' bias coordinate
        )
        want = {o: ref_scores(X_test, o) for o in ["last", "avg", "voted"]}
    for block_size in [1, 7, 256]:
        clf = KernelALMAClassifier(
            shuffle=False,
            kernel=kernel,
            alpha=alpha,
            max_iter=n_epochs,
            tol=None,
            block_size=block_size,
            **kw,
        ).fit(X, y)
        assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
        for output in ["last", "avg", "voted"]:
            clf.set_params(output=output)
            assert rel_err(clf.decision_function(X_test), want[output]) < 1e-9, (
                block_size,
                output,
            )


@pytest.mark.parametrize("p_output", ["last", "avg", "voted"])
@pytest.mark.parametrize("block_size", [1, 13, 64, 1000])
def test_linear_kernel_is_alma2(p_output, block_size):
    """With K(x, y) = x . y the engine must reproduce linear ALMA_2 (Figure 1)."""
    X, y = make_blobs_pm(n=400, d=6, n_classes=4, seed=1)
    lin = ALMAClassifier(
        shuffle=False, alpha=0.7, max_iter=3, output=p_output, fit_intercept=False
    ).fit(X, y)
    ker = KernelALMAClassifier(
        shuffle=False,
        kernel="linear",
        alpha=0.7,
        max_iter=3,
        output=p_output,
        block_size=block_size,
        fit_intercept=False,
    ).fit(X, y)
    np.testing.assert_array_equal(ker.n_corrections_per_class_, lin.n_corrections_per_class_)
    np.testing.assert_allclose(
        ker.decision_function(X), lin.decision_function(X), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("shuffle", [False, True])
def test_cache_changes_nothing(shuffle):
    X, y = make_blobs_pm(n=300, d=5, n_classes=3, seed=2)
    kw = dict(kernel="rbf", gamma=0.5, alpha=0.9, max_iter=3, shuffle=shuffle, random_state=0)
    a = KernelALMAClassifier(cache_size=200, block_size=32, **kw).fit(X, y)
    b = KernelALMAClassifier(cache_size=0, block_size=32, **kw).fit(X, y)
    np.testing.assert_array_equal(a.n_corrections_per_class_, b.n_corrections_per_class_)
    if not shuffle:  # the same order every epoch: later epochs skip the columns seen
        assert a.n_kernel_evaluations_ < 0.8 * b.n_kernel_evaluations_
    for output in ["last", "avg", "voted"]:
        a.set_params(output=output)
        b.set_params(output=output)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-12)


def test_sparse_input_equals_dense():
    X, y = make_blobs_pm(n=200, d=30, n_classes=3, seed=3, sparse_density=0.2)
    kw = dict(
        shuffle=False, kernel="poly", degree=2, gamma=0.1, alpha=0.9, max_iter=2, block_size=40
    )
    a = KernelALMAClassifier(**kw).fit(X, y)
    b = KernelALMAClassifier(**kw).fit(X.toarray(), y)
    np.testing.assert_array_equal(a.n_corrections_per_class_, b.n_corrections_per_class_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-12)
    assert sp.issparse(a.support_vectors_)
    np.testing.assert_array_equal(a.support_vectors_.toarray(), b.support_vectors_)


@pytest.mark.parametrize("splits", [[1] * 30, [5, 25], [30]])
def test_partial_fit_any_split_equals_fit(splits):
    X, y = make_blobs_pm(n=30, d=4, n_classes=3, seed=4)
    whole = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.4, alpha=0.8, output="last", max_iter=1
    ).fit(X, y)
    part = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.4, alpha=0.8, block_size=4, output="last", max_iter=1
    )
    start = 0
    for size in splits:
        part.partial_fit(X[start : start + size], y[start : start + size], classes=[0, 1, 2])
        start += size
    np.testing.assert_array_equal(part.support_, whole.support_)
    for output in ["last", "avg", "voted"]:
        whole.set_params(output=output)
        part.set_params(output=output)
        np.testing.assert_allclose(
            part.decision_function(X), whole.decision_function(X), atol=1e-12
        )


def test_scale_folding_is_invisible(monkeypatch):
    """Folding s into the coefficients (before it could underflow) changes nothing."""
    from marginkit import alma

    X, y = make_blobs_pm(n=120, d=4, n_classes=3, seed=5)
    kw = dict(shuffle=False, kernel="rbf", gamma=0.5, alpha=0.6, max_iter=2, block_size=16)
    plain = KernelALMAClassifier(**kw).fit(X, y)
    original = alma.KernelALMAClassifier._initialise

    def often(self, X):
        original(self, X)
        self._fold_below = 0.95

    monkeypatch.setattr(alma.KernelALMAClassifier, "_initialise", often)
    folded = KernelALMAClassifier(**kw).fit(X, y)
    m = plain._kstate.m
    # the raw coefficients were rescaled: folds did happen
    assert not np.allclose(folded._kstate.A[:m], plain._kstate.A[:m])
    np.testing.assert_array_equal(folded.n_corrections_per_class_, plain.n_corrections_per_class_)
    for output in ["last", "avg", "voted"]:
        plain.set_params(output=output)
        folded.set_params(output=output)
        assert rel_err(folded.decision_function(X), plain.decision_function(X)) < 1e-9


def test_attributes():
    X, y = make_blobs_pm(n=100, d=4, n_classes=2, seed=6)
    clf = KernelALMAClassifier(
        shuffle=False, kernel="poly", degree=2, alpha=0.9, max_iter=2, output="last"
    ).fit(X, y)
    m = clf.support_.shape[0]
    assert m == clf.n_corrections_  # binary: one problem, one coefficient per SV
    assert clf.support_vectors_.shape == (m, 4)
    np.testing.assert_array_equal(clf.support_vectors_, X[clf.support_])
    assert clf.dual_coef_.shape == (1, m)
    assert clf.n_trials_ == 200
    assert clf.gamma_ == pytest.approx(1.0 / (4 * X.var()))
    clf.set_params(output="voted")
    assert not hasattr(clf, "dual_coef_")
    clf.set_params(output="last")
    # decision values are margins of a unit-ball hypothesis
    assert np.all(np.abs(clf.decision_function(X)) <= 1 + 1e-12)


def test_zero_kernel_diagonal_never_updates():
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=7)
    X[::4] = 0.0
    clf = KernelALMAClassifier(
        shuffle=False, kernel="linear", alpha=0.9, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    assert not np.isin(np.arange(0, 40, 4), clf.support_).any()
    lin = ALMAClassifier(
        shuffle=False, alpha=0.9, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    assert clf.n_corrections_ == lin.n_corrections_


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelALMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.5, alpha=0.9, output="last", max_iter=1
        ),
        lambda: ALMAClassifier(
            shuffle=False, p=3.0, alpha=0.9, output="last", max_iter=1, fit_intercept=False
        ),
    ],
)
def test_epoch_callback_sees_every_epoch_as_separate_fits_would(make):
    X, y = make_blobs_pm(n=150, d=4, n_classes=3, seed=8)
    seen = []

    def record(est, epoch):
        seen.append((epoch, est.n_corrections_, est.decision_function(X)))

    make().set_params(max_iter=3).fit(X, y, callback=record)
    assert [e for e, _, _ in seen] == [0, 1, 2]
    for epoch, corrections, scores in seen:
        alone = make().set_params(max_iter=epoch + 1).fit(X, y)
        assert alone.n_corrections_ == corrections
        np.testing.assert_allclose(alone.decision_function(X), scores, atol=1e-12)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 6, 9])
def test_every_whole_power(degree):
    """Each power has its own compiled loop; negative bases keep their sign when odd."""
    X, y = make_blobs_pm(n=50, d=3, n_classes=2, seed=degree)
    X = X - 0.5  # gamma x . y + coef0 < 0 for many pairs
    kw = {"degree": degree, "gamma": 0.3, "coef0": 0.2}
    with tie_free():
        runs, ref_scores = kernel_alma_fit(
            X, y, "poly", 0.9, 1 / 0.9, np.sqrt(2), offset=bias_offset("poly", X, **kw), **kw
        )
    clf = KernelALMAClassifier(
        shuffle=False, kernel="poly", alpha=0.9, block_size=8, max_iter=1, output="last", **kw
    ).fit(X, y)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    assert rel_err(clf.decision_function(X), ref_scores(X, "last")) < 1e-9
