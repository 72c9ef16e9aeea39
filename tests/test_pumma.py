"""PUMMAClassifier against tests/reference.py, its closed form against its Newton solver."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, rel_err, slow_case
from reference import (
    kernel_pumma_binary,
    ovr_targets,
    ovr_until_quiet,
    pumma_binary,
    pumma_scores,
    tie_free,
)
from sklearn.exceptions import ConvergenceWarning

from marginkit import KernelPUMMAClassifier, PUMMAClassifier
from marginkit._core import pumma as K


def shifted_blobs(n=80, d=5, n_classes=2, seed=0, sparse=False):
    X, y = make_blobs_pm(n=n, d=d, n_classes=n_classes, seed=seed)
    X = X + 3.0  # the best hyperplane is far from the origin
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(seed).uniform(size=X.shape) < 0.7))
    return X, y


def reference_runs(X, y, max_iter, **kwargs):
    return ovr_until_quiet(
        lambda t, **kw: pumma_binary(X, t, **kw, **kwargs),
        ovr_targets(y, np.unique(y)),
        max_iter,
    )


def _reference_cases():
    """Every p, lam, input format and number of classes; of the three-class cases (1 to
    2 s each on 2 cores), make test runs the dense ones at p = 2 and 3 and the sparse one
    at p = 2 with the hard margin (p = 1.5 on two classes): the others are in make
    test-all."""
    for n_classes in (2, 3):
        for sparse in (False, True):
            for lam in (0.0, 1.0):
                for p in (2.0, 3.0, 1.5):
                    slow = n_classes == 3 and (
                        (sparse and (lam, p) != (0.0, 2.0)) or (not sparse and p == 1.5)
                    )
                    yield slow_case(
                        p, lam, sparse, n_classes, slow=slow, id=f"{n_classes}-{sparse}-{lam}-{p}"
                    )


@pytest.mark.exactness
@pytest.mark.parametrize("p,lam,sparse,n_classes", list(_reference_cases()))
def test_equals_reference(p, lam, sparse, n_classes):
    X, y = shifted_blobs(n=60, n_classes=n_classes, seed=int(3 * p) + n_classes, sparse=sparse)
    # the reference solves by root bracketing, and the test holds the engine's weights
    # to it within 1e-7: no margin may come closer than 1e-7 x its scale to its threshold
    # (with p = 1.5 and no soft margin, w grows to 1e6 while the margins stay near 1)
    with tie_free(rtol=1e-7):
        runs, epochs, converged = reference_runs(X, y, p=p, delta=0.2, lam=lam, max_iter=4)
        pumma_scores(runs, X, "voted")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = PUMMAClassifier(
            shuffle=False,
            tol=None,
            keep_corrections=True,
            p=p,
            delta=0.2,
            lam=lam,
            max_iter=4,
            output="last",
        ).fit(X, y)
    assert clf.converged_ == converged
    assert list(clf.n_corrections_per_class_) == [len(r[0]) - 1 for r in runs]
    assert clf.n_epochs_ == epochs
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), pumma_scores(runs, X, output)) < 1e-7, output
    clf.set_params(output="last")
    for j, run in enumerate(runs):
        w, b = run[0][-1]
        assert rel_err(clf.coef_[j], w) < 1e-7
        assert np.isclose(clf.intercept_[j], b, rtol=1e-7, atol=1e-9)


def test_closed_form_equals_newton():
    """At p = 2 the pass takes ROMMA's closed form on z (``_closed_form``); Newton's
    method on the same dual (``_newton_update``, the update of every other p) finds the
    same update, and resets where it does."""
    rng = np.random.default_rng(11)
    solved = 0
    for _ in range(300):
        m = int(rng.integers(1, 8))
        theta, z = rng.normal(size=m), rng.normal(size=m)
        s = rng.uniform(0.25, 4.0)  # theta = s v
        s_in = float(theta @ theta) / s**2  # sum v_i^2 on z's coordinates
        total = s_in + rng.uniform(0.0, 3.0) / s**2  # and off them
        W, mz, zn2 = s * s * total, float(theta @ z), float(z @ z)
        if mz >= 1.0:
            continue  # z . w >= 1 already: no trial of PUMMA updates there
        reset, a, c = K._closed_form(zn2, W, mz)
        steps = np.zeros(1, dtype=np.int64)
        n_reset, n_a, n_c = K._newton_update(theta, z, m, s, total, s_in, W, mz, zn2, 2.0, steps)
        assert n_reset == reset
        if not reset:
            assert steps[0] > 0
            np.testing.assert_allclose([n_a, n_c], [a, c], rtol=1e-9)
            solved += 1
    assert solved > 100


def test_partial_fit_equals_one_epoch():
    X, y = shifted_blobs(n=150, n_classes=3, seed=5)
    whole = PUMMAClassifier(
        shuffle=False, tol=None, keep_corrections=True, max_iter=1, p=3.0, lam=0.0, output="last"
    )
    with pytest.warns(ConvergenceWarning):
        whole.fit(X, y)
    parts = PUMMAClassifier(
        shuffle=False, tol=None, keep_corrections=True, p=3.0, lam=0.0, output="last"
    )
    for lo in range(0, 150, 50):
        parts.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=np.unique(y))
    for output in ["last", "avg", "voted"]:
        whole.set_params(output=output)
        parts.set_params(output=output)
        np.testing.assert_allclose(
            parts.decision_function(X), whole.decision_function(X), rtol=1e-12, atol=1e-14
        )


@pytest.mark.parametrize("kernel", [False, True])
def test_fit_callback_sees_every_epoch(kernel):
    """``callback(est, epoch)`` after each epoch of fit, as the other estimators call it,
    with the model as that epoch left it: what a fit of that many epochs makes."""
    X, y = shifted_blobs(n=60, seed=2)
    cls = KernelPUMMAClassifier if kernel else PUMMAClassifier
    params = {"lam": 1.0, "tol": None, "output": "last"}
    if kernel:
        params["kernel"] = "linear"
    seen = []

    def record(est, epoch):
        seen.append((epoch, est.n_epochs_, est.n_updates_, est.decision_function(X)))

    clf = cls(**{"shuffle": False, **params}).fit(X, y, callback=record)
    assert clf.n_epochs_ > 2
    assert [s[:2] for s in seen] == [(e, e + 1) for e in range(clf.n_epochs_)]
    for epoch in (0, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            short = cls(max_iter=epoch + 1, **{"shuffle": False, **params}).fit(X, y)
        assert short.n_updates_ == seen[epoch][2]
        np.testing.assert_allclose(short.decision_function(X), seen[epoch][3], rtol=1e-12)
    assert seen[-1][2] == clf.n_updates_


@pytest.mark.parametrize("kernel", [False, True])
def test_tol_ends_the_epochs_as_max_iter_would(kernel):
    """With ``tol`` the epochs end once no problem's ``||w~||^2`` grows by more than
    ``tol`` times itself (the soft margin): the model is that of ``tol=None`` and as
    many epochs, found before the epoch without update that ``tol=None`` runs to."""
    X, y = shifted_blobs(n=300, n_classes=3, seed=4)
    X = X + np.random.default_rng(0).normal(scale=2.0, size=X.shape)  # overlapping
    cls = KernelPUMMAClassifier if kernel else PUMMAClassifier
    params = {"lam": 1.0, "output": "avg"}
    if kernel:
        params["kernel"] = "linear"
    early = cls(tol=1e-3, **{"shuffle": False, **params}).fit(X, y)
    full = cls(tol=None, **{"shuffle": False, **params}).fit(X, y)
    assert 1 < early.n_epochs_ < full.n_epochs_
    assert not early.converged_ and full.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        same = cls(tol=None, max_iter=early.n_epochs_, **{"shuffle": False, **params}).fit(X, y)
    np.testing.assert_array_equal(same.decision_function(X), early.decision_function(X))
    assert same.n_updates_ == early.n_updates_
    assert early.n_iter_ == early.n_epochs_


@pytest.mark.parametrize("kernel", [False, True])
def test_soft_margin_epochs_end_where_the_norm_stops_growing(kernel):
    """With ``lam > 0``, ``||w~||^2`` (the slack coordinates included) grows at every
    epoch with an update, and the epochs end after the first in which no problem's grew
    by more than ``tol`` times itself."""
    X, y = shifted_blobs(n=300, n_classes=3, seed=4)
    X = X + np.random.default_rng(0).normal(scale=2.0, size=X.shape)
    cls = KernelPUMMAClassifier if kernel else PUMMAClassifier
    params = {"kernel": "linear"} if kernel else {}
    sizes = []
    clf = cls(shuffle=False, lam=1.0, tol=1e-3, **params).fit(
        X, y, callback=lambda est, epoch: sizes.append(est._squared_norms())
    )
    sizes = np.array(sizes)
    assert sizes.shape == (clf.n_epochs_, 3) and clf.n_epochs_ > 2
    assert np.all(sizes[1:] >= sizes[:-1] * (1 - 1e-12))
    grew = np.any(sizes[1:] > sizes[:-1] * (1 + 1e-3), axis=1)
    assert grew[:-1].all() and not grew[-1]


@pytest.mark.parametrize("p", [2.0, 3.0])
def test_the_norm_the_epochs_watch_is_the_augmented_hypothesis(p):
    """The size the soft margin's epochs end on is ``||w~||_q^2`` of the last hypothesis
    in the space where every row has its own coordinate, as tests/reference.py builds
    it (d + n coordinates)."""
    X, y = shifted_blobs(n=60, seed=2)
    X = X + np.random.default_rng(1).normal(scale=1.5, size=X.shape)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=y.size)
    clf = PUMMAClassifier(p=p, delta=0.1, lam=0.5, tol=None, shuffle=False, output="last")
    clf.fit(X, y, sample_weight=weights)
    y_pm = np.where(y == clf.classes_[1], 1.0, -1.0)
    hyps, *_ = pumma_binary(
        X, y_pm, p, 0.1, lam=0.5, max_iter=clf.n_epochs_, weights=weights, augmented=True
    )
    q = p / (p - 1.0)
    expected = np.sum(np.abs(hyps[-1][0]) ** q) ** (2.0 / q)
    assert rel_err(clf._squared_norms()[0], expected) < 1e-9


def test_kernel_norm_the_epochs_watch_is_the_augmented_hypothesis():
    """Kernel PUMMA's ``||w~||^2 = beta (K + lam / c) beta`` of its last hypothesis,
    as tests/reference.py computes it."""
    X, y = shifted_blobs(n=60, seed=2)
    X = X + np.random.default_rng(1).normal(scale=1.5, size=X.shape)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=y.size)
    clf = KernelPUMMAClassifier(
        kernel="linear", delta=0.1, lam=0.5, tol=None, shuffle=False, output="last"
    ).fit(X, y, sample_weight=weights)
    y_pm = np.where(y == clf.classes_[1], 1.0, -1.0)
    K = X @ X.T
    hyps, *_ = kernel_pumma_binary(K, y_pm, 0.1, lam=0.5, max_iter=clf.n_epochs_, weights=weights)
    beta = hyps[-1][0]
    expected = beta @ (K + np.diag(0.5 / weights)) @ beta
    assert rel_err(clf._squared_norms()[0], expected) < 1e-9


def test_tol_warns_only_when_the_epochs_ran_out_still_improving():
    """Epochs that ``tol`` ended end quietly; ``max_iter`` epochs whose updates still
    fell warn (``tol=None``: any ``max_iter`` epochs before one without update)."""
    X, y = shifted_blobs(n=300, n_classes=3, seed=4)
    X = X + np.random.default_rng(0).normal(scale=2.0, size=X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        PUMMAClassifier(shuffle=False, lam=1.0).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="hypothesis still grew"):
        PUMMAClassifier(shuffle=False, lam=1.0, max_iter=2).fit(X, y)
    # the hard margin's norm grows without bound here: its epochs count updates
    with pytest.warns(ConvergenceWarning, match="corrections still fell"):
        PUMMAClassifier(shuffle=False, lam=0.0, max_iter=2).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        PUMMAClassifier(shuffle=False, lam=1.0, max_iter=2, tol=None).fit(X, y)
