"""ROMMA's 2-norm soft margin (``lam``): a stream's trials as examples of their own
against tests/reference.py, the guarantee in the soft-margin space, and the defaults on
data that are not separable."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, noisy_pm, passes_by_growth, rel_err
from reference import linear_fit, linear_scores, romma_binary, tie_free
from sklearn.exceptions import ConvergenceWarning

from marginkit import ROMMAClassifier
from marginkit._core import linear as L
from marginkit._state_checks import check_state


@pytest.mark.exactness
@pytest.mark.parametrize("aggressive", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_stream_makes_every_trial_an_example_of_its_own(aggressive, sparse):
    """partial_fit over the same rows, three times: each trial has its own slack
    coordinate (the reference with ``stream=True``), where fit's passes give a row one
    for all of them; the first pass is the same either way."""
    X, y = make_blobs_pm(n=90, d=6, n_classes=3, seed=7)
    X = X + 1.0
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(2).uniform(size=X.shape) < 0.7))
    params = {"aggressive": aggressive, "lam": 0.5, "shuffle": False, "keep_corrections": True}
    params.update(intercept_scaling="max")
    with tie_free():
        stream, R = linear_fit(
            lambda A, t, **k: romma_binary(A, t, stream=True, **k),
            X,
            y,
            fit_intercept=True,
            intercept_scaling="max",
            max_iter=3,
            aggressive=aggressive,
            lam=0.5,
        )
        linear_scores(stream, X, "voted", R=R)
    est = ROMMAClassifier(**params)
    for _ in range(3):
        est.partial_fit(X, y, classes=np.unique(y))
    assert list(est.n_corrections_per_class_) == [len(h) - 1 for h, _ in stream]
    for output in ["last", "avg", "voted"]:
        est.set_params(output=output)
        assert rel_err(est.decision_function(X), linear_scores(stream, X, output, R=R)) < 1e-9
    # fit's passes differ from the stream's after the first, which they share
    fit = ROMMAClassifier(max_iter=3, tol=None, **params).fit(X, y)
    assert not np.allclose(fit.decision_function(X), est.decision_function(X))
    one = ROMMAClassifier(max_iter=1, **params).fit(X, y)
    first = ROMMAClassifier(**params).partial_fit(X, y, classes=np.unique(y))
    np.testing.assert_array_equal(one.decision_function(X), first.decision_function(X))


@pytest.mark.parametrize("weighted", [False, True])
def test_aggressive_soft_romma_reaches_the_soft_margin(weighted):
    """Aggressive ROMMA(delta) with ``lam``: every data set is separable in the space of
    ``(x, sqrt(lam / c) e_i)``, so fit (tol=None) ends at a pass without update, where
    ``(1 - delta) / gamma~* <= ||w~|| <= 1 / gamma~*``: every constraint holds to
    ``1 - delta`` (the lower bound), and the maximum-margin vector satisfies every
    constraint ROMMA keeps (the upper; Li and Long, Lemma 1). A weight c is the row's
    coordinate ``sqrt(lam / c)``: the weighted squared hinge loss. gamma~* is the 2-norm
    soft margin of :func:`marginkit.margins.max_margin`, the squared-hinge SVM's."""
    mm = pytest.importorskip("marginkit.margins")
    pytest.importorskip("cvxpy")
    X, y = noisy_pm(n=120, d=3, seed=3)
    lam, delta = 0.5, 0.05
    c = np.random.default_rng(4).choice([0.5, 1.0, 2.0], size=y.size) if weighted else None
    est = ROMMAClassifier(
        aggressive=True, delta=delta, lam=lam, tol=None, max_iter=100_000, fit_intercept=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X, y, sample_weight=c)
    state = est._states[0]
    assert state.slack.shape == (0,)  # the rows' coordinates are not the model's
    fs = state.fs
    norm = np.sqrt(fs[L.F_S] ** 2 * (fs[L.F_SUM] + fs[L.F_SLACK]))
    # a row of weight c holds sqrt(lam / c): the augmented data, written out
    own = np.sqrt(lam / (np.ones(y.size) if c is None else c))
    Z = np.hstack([X, np.diag(own)])
    best = mm.max_margin(Z, y, fit_intercept=False, tol=1e-7)
    # the weight is in the slack coordinate alone: each update is still the shortest
    # vector of ROMMA's two constraints, in the weighted space
    assert (1 - delta) * (1 - 1e-6) <= norm * best <= 1 + 1e-6
    assert est.n_iter_ < 100_000


def test_the_defaults_learn_data_that_no_plane_separates():
    """At its defaults ROMMA neither raises nor warns on noisy data, and its model is
    that of a soft-margin linear SVM in quality (within 2 points of LinearSVC on
    held-out rows)."""
    svm = pytest.importorskip("sklearn.svm")
    X, y = noisy_pm(n=1200, d=5, flip=0.2, seed=5)
    Xte, yte = X[800:], y[800:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = ROMMAClassifier(random_state=0).fit(X[:800], y[:800])
    assert np.all(np.isfinite(est.coef_)) and est.n_iter_ < est.max_iter
    ref = svm.LinearSVC().fit(X[:800], y[:800]).score(Xte, yte)
    assert est.score(Xte, yte) >= ref - 0.02


def test_lam_zero_is_the_hard_margin_of_before():
    """lam=0 runs the hard-margin passes (no slack coordinates at all), and a model
    saved before the soft margin loads with lam=0."""
    X, y = make_blobs_pm(n=80, d=4, seed=8)
    est = ROMMAClassifier(lam=0.0, max_iter=3, tol=None, random_state=1).fit(X, y)
    fs = est._states[0].fs
    assert fs[L.F_SLACK] == 0.0 and fs[L.F_SLACK_WORK] == 0.0
    state = dict(est.__dict__)
    del state["lam"]
    old = ROMMAClassifier.__new__(ROMMAClassifier)
    old.__setstate__(state)
    assert old.lam == 0.0
    np.testing.assert_array_equal(old.decision_function(X), est.decision_function(X))


def test_a_state_saved_before_the_soft_margin_loads():
    """A state pickled with six scalars (before ``F_SLACK``) gains empty slack."""
    est = ROMMAClassifier(lam=0.0, max_iter=2, random_state=0).fit(*make_blobs_pm(n=50, d=3))
    state = est._states[0]
    saved = dict(state.__getstate__())
    saved["fs"] = saved["fs"][: L.F_SLACK].copy()
    del saved["slack"]
    again = type(state).__new__(type(state))
    again.__setstate__(saved)
    assert again.fs.shape == (L.N_FSTATE,) and again.slack.shape == (0,)
    check_state(again, "state", state.d, 2.0)


def test_lam_too_large_for_the_features_is_refused():
    X, y = make_blobs_pm(n=40, d=3)
    est = ROMMAClassifier(lam=1e300)
    with pytest.raises(ValueError, match="lam=1e\\+300 is too large for the scale"):
        est.fit(X * 1e-100, y)


@pytest.mark.parametrize("patience", [1, 5])
@pytest.mark.parametrize("tol", [1e-2, 1e-3])
def test_the_passes_end_where_the_hypothesis_stops_growing(tol, patience):
    """With the soft margin ``||w~||^2`` grows at every update and stays below
    ``1 / gamma~*^2``; aggressive ROMMA corrects about as often in every pass while it
    converges, so ``tol`` reads the growth: the passes end where the rule applied to the
    sizes of a 60-pass fit says, and the sizes never fall."""
    X, y = noisy_pm(n=200, d=4, seed=6)
    y[:40] = 2  # three problems
    sizes = []

    def record(est, epoch):
        sizes.append(est._growth())

    ROMMAClassifier(max_iter=60, tol=None, random_state=0).fit(X, y, callback=record)
    assert np.all(np.diff(np.array(sizes), axis=0) >= 0)
    est = ROMMAClassifier(max_iter=60, tol=tol, n_iter_no_change=patience, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X, y)
    assert est.n_iter_ == passes_by_growth(sizes, tol, patience) < 60
    assert est._growth() is None  # the rows' coordinates went with the passes


def test_a_checkpointed_fit_resumes_the_growth_and_the_slack(tmp_path):
    """A checkpoint mid-fit holds the rows' slack coordinates and the growth record:
    the resumed fit is the plain one, bit for bit."""
    X, y = noisy_pm(n=150, d=3, seed=7)
    plain = ROMMAClassifier(random_state=3).fit(X, y)
    path = tmp_path / "ck.skops"
    resumed = ROMMAClassifier(random_state=3).fit(X, y, checkpoint=path, checkpoint_every=40)
    assert resumed.n_iter_ == plain.n_iter_ > 2
    np.testing.assert_array_equal(resumed.decision_function(X), plain.decision_function(X))


def test_passes_that_run_out_while_the_hypothesis_grows_say_so():
    X, y = noisy_pm(n=200, d=4, seed=8)
    with pytest.warns(ConvergenceWarning, match="the hypothesis still grew in the last of"):
        ROMMAClassifier(max_iter=3, random_state=0).fit(X, y)
