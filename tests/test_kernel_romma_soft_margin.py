"""Kernel ROMMA's 2-norm soft margin (``lam``, Li and Long's section 6): a stream's trials
as examples of their own against tests/reference.py, the guarantee in the soft-margin
space, the passes that end on the growth of ``||w~||^2``, checkpoints, and the defaults
on data that are not separable. (The fit's rows against the reference, with weights,
a bias, folds and a budget: test_kernel_family, test_weights, test_kernel_intercept,
test_kernel_budget.)"""

import warnings

import numpy as np
import pytest
from conftest import checkpoint_file, make_blobs_pm, noisy_pm, passes_by_growth, rel_err
from reference import (
    kernel_family_binary,
    kernel_family_scores,
    kernel_matrix,
    ovr_targets,
    tie_free,
)
from sklearn.exceptions import ConvergenceWarning

import marginkit
from marginkit import KernelROMMAClassifier
from marginkit.persistence import UntrustedFileError


@pytest.mark.exactness
@pytest.mark.parametrize("aggressive", [False, True])
def test_a_stream_makes_every_trial_an_example_of_its_own(aggressive):
    """partial_fit over the same rows, three times: each trial has its own coordinate
    (the reference with ``stream=True``), where fit's passes give a row one for all of
    them; the first pass is the same either way."""
    X, y = make_blobs_pm(n=70, d=4, n_classes=3, seed=11)
    K = kernel_matrix("rbf", X, X, gamma=0.3)
    params = {"aggressive": aggressive, "lam": 0.5, "shuffle": False, "fit_intercept": False}
    params.update(kernel="rbf", gamma=0.3, block_size=16)
    with tie_free():
        rule = "aggressive" if aggressive else "romma"
        stream = [
            kernel_family_binary(K, t, rule, max_iter=3, lam=0.5, stream=True)
            for t in ovr_targets(y, np.unique(y))
        ]
    est = KernelROMMAClassifier(**params)
    for _ in range(3):
        est.partial_fit(X, y, classes=np.unique(y))
    assert list(est.n_corrections_per_class_) == [len(h) - 1 for h, _ in stream]
    for output in ["last", "avg", "voted"]:
        est.set_params(output=output)
        want = kernel_family_scores(stream, K, output)
        assert rel_err(est.decision_function(X), want) < 1e-9
    fit = KernelROMMAClassifier(max_iter=3, tol=None, **params).fit(X, y)
    assert not np.allclose(fit.decision_function(X), est.decision_function(X))
    one = KernelROMMAClassifier(max_iter=1, **params).fit(X, y)
    first = KernelROMMAClassifier(**params).partial_fit(X, y, classes=np.unique(y))
    np.testing.assert_array_equal(one.decision_function(X), first.decision_function(X))


def test_aggressive_soft_kernel_romma_reaches_the_soft_margin():
    """Aggressive ROMMA(delta) with ``lam`` on the linear kernel: every data set is
    separable in the space of ``(x, sqrt(lam) e_i)``, so fit (tol=None) ends at a pass
    without update, where ``(1 - delta) / gamma~* <= ||w~|| <= 1 / gamma~*`` (Li and
    Long, Lemma 1), ``||w~||`` the walk's norm, slack coordinates included."""
    mm = pytest.importorskip("marginkit.margins")
    pytest.importorskip("cvxpy")
    X, y = noisy_pm(n=120, d=3, seed=3)
    lam, delta = 0.5, 0.05
    est = KernelROMMAClassifier(
        kernel="linear", delta=delta, lam=lam, tol=None, max_iter=100_000, fit_intercept=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X, y)
    assert est._kstate.slack.shape[0] == 0  # the rows' coordinates are not the model's
    norm = np.sqrt(est._kstate.norm2[0])
    Z = np.hstack([X, np.sqrt(lam) * np.eye(y.size)])
    best = mm.max_margin(Z, y, fit_intercept=False, tol=1e-7)
    assert (1 - delta) * (1 - 1e-6) <= norm * best <= 1 + 1e-6
    assert est.n_iter_ < 100_000


def test_the_walks_norm_is_the_soft_margin_spaces():
    """``||w~||^2`` the walk keeps equals ``b (K + lam / c I) b`` of the reference's last
    hypothesis (coefficients b of the rows), weights included."""
    X, y = make_blobs_pm(n=60, d=4, n_classes=2, seed=5)
    c = np.random.default_rng(1).choice([0.5, 1.0, 3.0], size=y.size)
    K = kernel_matrix("rbf", X, X, gamma=0.3)
    with tie_free():
        ((hyps, _),) = [
            kernel_family_binary(
                K, ovr_targets(y, [0, 1])[0], "aggressive", max_iter=4, lam=0.7, weights=c
            )
        ]
    est = KernelROMMAClassifier(
        kernel="rbf",
        gamma=0.3,
        lam=0.7,
        max_iter=4,
        tol=None,
        shuffle=False,
        fit_intercept=False,
    ).fit(X, y, sample_weight=c)
    b = hyps[-1]
    want = b @ K @ b + np.sum(0.7 / c * b * b)
    assert est._kstate.norm2[0] == pytest.approx(want, rel=1e-9)


def test_the_defaults_learn_data_that_no_plane_separates():
    """At its defaults kernel ROMMA neither raises nor warns on noisy data, ends before
    max_iter, and is within 2 points of SVC on held-out rows."""
    svm = pytest.importorskip("sklearn.svm")
    X, y = noisy_pm(n=900, d=5, flip=0.2, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = KernelROMMAClassifier(random_state=0).fit(X[:600], y[:600])
    assert np.all(np.isfinite(est.dual_coef_)) and est.n_iter_ < est.max_iter
    assert est._stopped_by in ("growth", "quiet")
    ref = svm.SVC().fit(X[:600], y[:600]).score(X[600:], y[600:])
    assert est.score(X[600:], y[600:]) >= ref - 0.02


@pytest.mark.parametrize("tol", [1e-2, 1e-3])
def test_the_passes_end_where_the_hypothesis_stops_growing(tol):
    """``||w~||^2`` of every problem never falls from pass to pass, and the passes end
    where the rule applied to the sizes of a 40-pass fit says (after n_iter_no_change
    passes in a row that grew none by more than tol times itself)."""
    X, y = noisy_pm(n=200, d=4, seed=6)
    y[:40] = 2  # three problems
    sizes = []

    def record(est, epoch):
        sizes.append(est._growth())

    kw = {"kernel": "rbf", "gamma": 0.5, "random_state": 0}
    KernelROMMAClassifier(max_iter=40, tol=None, **kw).fit(X, y, callback=record)
    assert np.all(np.diff(np.array(sizes), axis=0) >= 0)
    est = KernelROMMAClassifier(max_iter=40, tol=tol, **kw).fit(X, y)
    assert est.n_iter_ == passes_by_growth(sizes, tol, est.n_iter_no_change) < 40
    assert est._growth() is None  # the rows' coordinates went with the passes


def test_a_budget_once_full_ends_the_passes_on_the_corrections():
    """A maintenance step drops the rows' coordinates (the hypothesis keeps what the
    store holds) and shrinks ``||w~||``: from the first, the corrections decide."""
    X, y = noisy_pm(n=300, d=4, seed=9)
    est = KernelROMMAClassifier(budget=40, max_iter=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    assert est._kstate.filled and est._stopped_by != "growth"
    assert est._kstate.slack.shape[0] == 0


def test_a_checkpointed_fit_resumes_the_growth_and_the_slack(tmp_path):
    """A checkpoint mid-fit holds the rows' coordinates and the growth record: the
    resumed fit is the plain one, bit for bit; a checkpoint whose coordinates are not
    those of these rows is refused."""
    X, y = noisy_pm(n=150, d=3, seed=7)

    def make():
        return KernelROMMAClassifier(random_state=3, block_size=16)

    plain = make().fit(X, y)
    path = checkpoint_file(make, X, y, tmp_path / "ck.skops", stop_after=14, every=32)
    held = marginkit.load(path)
    assert held._kstate.slack.shape == (150, 1) and np.any(held._kstate.slack)
    resumed = make().fit(X, y, checkpoint=path, checkpoint_every=32)
    assert resumed.n_iter_ == plain.n_iter_ > 2
    np.testing.assert_array_equal(resumed.decision_function(X), plain.decision_function(X))
    held._kstate.slack = np.zeros((7, 1))
    marginkit.save(held, tmp_path / "bad.skops")
    with pytest.raises(UntrustedFileError, match="slack must hold a row for each of the 150"):
        make().fit(X, y, checkpoint=tmp_path / "bad.skops")


def test_a_model_saved_before_the_soft_margin_loads_as_the_hard_margin(tmp_path):
    """A file of before ``lam`` (and of its state, before ``slack``) loads with lam=0
    and predicts as it did."""
    X, y = make_blobs_pm(n=80, d=4, seed=8)
    est = KernelROMMAClassifier(lam=0.0, aggressive=False, max_iter=3, random_state=1)
    est.fit(X, y)
    before = est.decision_function(X)
    del est.__dict__["lam"]
    del est._kstate.__dict__["slack"]
    marginkit.save(est, tmp_path / "old.skops")
    old = marginkit.load(tmp_path / "old.skops")
    assert old.lam == 0.0 and old._kstate.slack.shape[0] == 0
    np.testing.assert_array_equal(old.decision_function(X), before)


def test_lam_too_large_for_the_features_is_refused():
    X, y = make_blobs_pm(n=40, d=3)
    with pytest.raises(ValueError, match="lam=1e\\+300 is too large for the scale"):
        KernelROMMAClassifier(lam=1e300, kernel="linear").fit(X * 1e-100, y)
