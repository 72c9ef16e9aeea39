"""Perceptron, ROMMA and the margin Perceptron against tests/reference.py, and their bounds."""

import contextlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import hard_romma_cases, make_blobs_pm, slow_case
from reference import (
    linear_fit,
    linear_scores,
    margin_perceptron_binary,
    passes_until_quiet,
    perceptron_binary,
    romma_binary,
    tie_free,
)
from sklearn.exceptions import ConvergenceWarning

from marginkit import MarginPerceptronClassifier, PerceptronClassifier, ROMMAClassifier

RTOL = 1e-10


def rel_err(a, b):
    scale = max(np.max(np.abs(b)), 1e-300)
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / scale


def separable(n=200, d=6, margin=0.3, seed=0, bias=0.0):
    """Gaussian points, labelled by a unit w*, minus those within ``margin`` of its plane."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(4 * n, d))
    f = X @ w + bias
    keep = np.abs(f) >= margin
    return X[keep][:n], np.where(f[keep][:n] > 0, 1, -1)


ESTIMATORS = {
    "perceptron": (PerceptronClassifier, {}, perceptron_binary, {}),
    **hard_romma_cases(),
    "aggressive-delta": (
        ROMMAClassifier,
        {"aggressive": True, "delta": 0.3, "lam": 0.0},
        romma_binary,
        {"aggressive": True, "delta": 0.3},
    ),
    # the 2-norm soft margin: every row a coordinate of its own, kept across the passes
    "soft-romma": (
        ROMMAClassifier,
        {"aggressive": False, "lam": 0.7},
        romma_binary,
        {"lam": 0.7},
    ),
    "soft-aggressive": (
        ROMMAClassifier,
        {"aggressive": True, "lam": 2.0},
        romma_binary,
        {"aggressive": True, "lam": 2.0},
    ),
}


@pytest.mark.exactness
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("bias", [None, "rms", "max"])
def test_equals_reference(name, sparse, n_classes, bias):
    """... without a bias and with either bias coordinate (``intercept_scaling``)."""
    fit_intercept, scaling = bias is not None, bias or "rms"
    cls, params, binary, ref_params = ESTIMATORS[name]
    X, y = make_blobs_pm(n=120, d=8, n_classes=n_classes, seed=n_classes)
    X = X + (2.0 if fit_intercept else 0.0)
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(1).uniform(size=X.shape) < 0.6))

    def runs_of(passes):
        return linear_fit(
            binary,
            X,
            y,
            fit_intercept=fit_intercept,
            intercept_scaling=scaling,
            max_iter=passes,
            **ref_params,
        )

    with tie_free():
        runs, R = runs_of(3)
        if ref_params.get("delta", 0) > 0:  # the passes end at the first without update
            runs = passes_until_quiet(lambda e: runs_of(e)[0], 3)[1]
        linear_scores(runs, X, "voted", R=R)
    clf = cls(
        shuffle=False,
        max_iter=3,
        tol=None,
        fit_intercept=fit_intercept,
        intercept_scaling=scaling,
        keep_corrections=True,
        **params,
    )
    clf.fit(X, y)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    assert clf.n_trials_ == sum(runs[0][1])
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        want = linear_scores(runs, X, output, R=R)
        assert rel_err(clf.decision_function(X), want) < 1e-9, output
    clf.set_params(output="last")
    for j, (hyps, _) in enumerate(runs):
        n = X.shape[1]
        assert rel_err(clf.coef_[j], hyps[-1][:n]) < RTOL
        if fit_intercept:
            assert np.isclose(clf.intercept_[j], -R * hyps[-1][n], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_partial_fit_equals_fit(name):
    cls, params, _, _ = ESTIMATORS[name]
    X, y = make_blobs_pm(n=150, d=5, n_classes=3, seed=4)
    params = {**params, "max_iter": 1, "fit_intercept": False}
    whole = cls(keep_corrections=True, **{"shuffle": False, **params}).fit(X, y)
    parts = cls(keep_corrections=True, **{"shuffle": False, **params})
    for lo in range(0, 150, 40):
        parts.partial_fit(X[lo : lo + 40], y[lo : lo + 40], classes=np.unique(y))
    for output in ["last", "avg", "voted"]:
        whole.set_params(output=output)
        parts.set_params(output=output)
        np.testing.assert_allclose(
            parts.decision_function(X), whole.decision_function(X), rtol=1e-12, atol=1e-14
        )


@pytest.mark.exactness
def test_scale_folds_keep_romma_exact():
    """ROMMA's scale grows and shrinks; folding it into v changes nothing."""
    X, y = make_blobs_pm(n=150, d=6, seed=9)

    class Folding(ROMMAClassifier):
        def _initialise(self, data):
            super()._initialise(data)
            self._fold_below = 0.99  # fold after nearly every update

    with tie_free():
        runs, _ = linear_fit(romma_binary, X, y, aggressive=True, max_iter=2)
        linear_scores(runs, X, "voted")
    clf = Folding(
        shuffle=False,
        aggressive=True,
        lam=0.0,
        max_iter=2,
        keep_corrections=True,
        fit_intercept=False,
    )
    clf.fit(X, y)
    assert clf.n_corrections_ == len(runs[0][0]) - 1
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), linear_scores(runs, X, output)) < 1e-9


@pytest.mark.parametrize("aggressive", [False, True])
def test_romma_bound_and_aggressive_margin(aggressive):
    """Li and Long, Theorem 1: at most R^2 / gamma^2 updates on separable data."""
    gamma = 0.4
    X, y = separable(n=300, d=5, margin=gamma, seed=1)
    R = np.linalg.norm(X, axis=1).max()
    clf = ROMMAClassifier(
        shuffle=False,
        aggressive=aggressive,
        lam=0.0,
        max_iter=50,
        tol=None,
        output="last",
        fit_intercept=False,
    ).fit(X, y)
    assert clf.score(X, y) == 1.0
    w = clf.coef_[0]
    # ||w|| <= 1 / gamma*: w* / gamma* satisfies every constraint ROMMA relaxes
    assert np.linalg.norm(w) <= 1.0 / gamma + 1e-12
    if aggressive:
        # the bound is on mistakes, not updates; the constraints y w . x >= 1 are
        # approached from below, and with ||w|| <= 1 / gamma* the geometric margin
        # min y w . x / ||w|| is at least that fraction of gamma*
        worst = np.min(y * (X @ w))
        assert worst >= 0.8
        assert worst / np.linalg.norm(w) >= worst * gamma
    else:
        assert clf.n_corrections_ <= R**2 / gamma**2


@pytest.mark.parametrize("delta", [0.3, 0.1, 0.01])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_aggressive_romma_delta_reaches_its_margin(delta, fit_intercept):
    """Aggressive ROMMA on y w . x < 1 - delta: fit (tol=None) ends at the first pass
    without an update, after at most 1 + R^2 / (delta^2 gamma*^2) updates, with every
    y w . x >= 1 - delta and ||w|| <= 1 / gamma*, so a margin of at least (1 - delta)
    gamma*; Ishibashi et al.'s ROMMA, COLT 2008."""
    mm = pytest.importorskip("marginkit.margins")
    pytest.importorskip("cvxpy")
    X, y = separable(n=200, d=5, margin=0.3, seed=2, bias=0.8 if fit_intercept else 0.0)
    params = {"aggressive": True, "delta": delta, "lam": 0.0, "output": "last", "shuffle": False}
    params.update(fit_intercept=fit_intercept, tol=None, max_iter=10_000)
    with _no_warning():
        clf = ROMMAClassifier(**params).fit(X, y)
    loop = ROMMAClassifier(**params)
    made = []  # pass after pass until one makes no update
    while not made or made[-1] > 0:
        before = loop.n_corrections_ if made else 0
        loop.partial_fit(X, y, classes=[-1, 1])
        made.append(loop.n_corrections_ - before)
        assert len(made) < 10_000
    assert clf.n_iter_ == len(made) and clf.n_corrections_ == loop.n_corrections_
    np.testing.assert_array_equal(clf.coef_, loop.coef_)
    with pytest.warns(ConvergenceWarning, match="no pass without update within max_iter"):
        ROMMAClassifier(**{**params, "max_iter": len(made) - 1}).fit(X, y)
    # the augmented instances the algorithm saw: (x, -R) with a bias
    Z = np.hstack([X, -clf.R_ * np.ones((len(X), 1))]) if fit_intercept else X
    v = np.append(clf.coef_[0], -clf.intercept_[0] / clf.R_) if fit_intercept else clf.coef_[0]
    best = mm.max_margin(Z, y, fit_intercept=False)
    assert np.min(y * (Z @ v)) >= (1 - delta) * (1 - 1e-9)
    assert np.linalg.norm(v) * best <= 1 + 1e-6
    got = np.min(y * (Z @ v)) / np.linalg.norm(v)
    assert got >= (1 - delta) * best * (1 - 1e-6)
    R = np.linalg.norm(Z, axis=1).max()
    assert clf.n_corrections_ <= 1 + R**2 / (delta**2 * best**2)
    # the margin with the bias left out of the norm is larger still
    assert mm.margin(clf, X, y) >= got * (1 - 1e-9)


def test_romma_unit_constraint_binds_on_the_last_update():
    X, y = separable(n=100, d=4, margin=0.2, seed=5)
    clf = ROMMAClassifier(
        aggressive=False, lam=0.0, shuffle=False, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    runs, _ = linear_fit(romma_binary, X, y)
    w = clf.coef_[0]
    # the last hypothesis is feasible for its own defining constraints
    assert np.isclose(np.linalg.norm(w), np.linalg.norm(runs[0][0][-1]), rtol=1e-12)


def test_romma_contradiction_does_not_break():
    """x and -x with opposite labels: the two constraints contradict; w stays finite."""
    X = np.array([[1.0, 2.0], [-1.0, -2.0], [1.0, 2.0], [2.0, 0.0]])
    y = np.array([1, 1, 1, -1])
    clf = ROMMAClassifier(
        aggressive=False, lam=0.0, shuffle=False, max_iter=3, output="last", fit_intercept=False
    ).fit(X, y)
    assert np.all(np.isfinite(clf.coef_))


# -- the margin Perceptron ------------------------------------------------------------


def _margin_perceptron_cases():
    """Every bias scaling, input format and gamma_guess; the CSR rows of a biased fit
    without a gamma_guess (the most epochs: 1 to 2 s each on 2 cores) are in make
    test-all, those rows' dense twins and the unbiased CSR fit in make test."""
    for bias in (None, "rms", "max"):
        for sparse in (False, True):
            for gamma_guess in (None, 0.3, 2.0):
                slow = bias is not None and sparse and gamma_guess is None
                yield slow_case(
                    gamma_guess, sparse, bias, slow=slow, id=f"{bias}-{sparse}-{gamma_guess}"
                )


@pytest.mark.exactness
@pytest.mark.parametrize("gamma_guess,sparse,bias", list(_margin_perceptron_cases()))
def test_margin_perceptron_equals_reference(gamma_guess, sparse, bias):
    fit_intercept, scaling = bias is not None, bias or "rms"
    X, y = separable(n=150, d=5, margin=0.25, seed=2, bias=0.5 if fit_intercept else 0.0)
    Xs = sp.csr_matrix(X) if sparse else X
    with tie_free():
        runs, R = linear_fit(
            lambda A, t: margin_perceptron_binary(A, t, gamma_guess, max_iter=200)[:2],
            X,
            y,
            fit_intercept=fit_intercept,
            intercept_scaling=scaling,
        )
        linear_scores(runs, X, "voted", R=R)
    full = margin_perceptron_binary(
        X if R is None else np.hstack([X, np.full((X.shape[0], 1), -R)]),
        y,
        gamma_guess,
        max_iter=200,
    )
    with pytest.warns(ConvergenceWarning) if not full[5] else _no_warning():
        clf = MarginPerceptronClassifier(
            shuffle=False,
            tol=None,
            keep_corrections=True,
            gamma_guess=gamma_guess,
            max_iter=200,
            fit_intercept=fit_intercept,
            intercept_scaling=scaling,
            output="last",
        ).fit(Xs, y)
    assert clf.n_corrections_ == full[3]
    assert clf.n_iter_[0] == full[4]
    assert clf.converged_ == full[5]
    assert np.isclose(clf.gamma_guess_[0], full[2], rtol=1e-14)
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), linear_scores(runs, X, output, R=R)) < 1e-9


@pytest.mark.exactness
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("max_iter", range(1, 9))
def test_margin_perceptron_keeps_its_hypothesis_when_epochs_run_out(max_iter):
    """An epoch that overruns its guess's budget restarts from w = 0 only when an epoch
    is left to restart in; the last one keeps the hypothesis it reached (here epochs 1
    and 5 overrun), as the reference does."""
    rng = np.random.RandomState(0)
    X = rng.randn(30, 4)
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    runs, R = linear_fit(
        lambda A, t: margin_perceptron_binary(A, t, None, max_iter=max_iter)[:2], X, y
    )
    with tie_free():
        full = margin_perceptron_binary(X, y, None, max_iter=max_iter)
    clf = MarginPerceptronClassifier(
        shuffle=False, tol=None, keep_corrections=True, max_iter=max_iter, fit_intercept=False
    ).fit(X, y)
    assert clf.n_corrections_ == full[3]
    assert clf.gamma_guess_[0] == full[2]
    assert np.any(clf.coef_ != 0)
    assert clf.score(X, y) > 0.8
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), linear_scores(runs, X, output, R=R)) < 1e-9


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        yield


@pytest.mark.parametrize("seed", range(4))
def test_margin_perceptron_guarantee(seed):
    """Incremental guess: margin >= gamma_opt / 4 within 12 R^2 / gamma^2 per guess."""
    gamma = 0.3
    X, y = separable(n=200, d=6, margin=gamma, seed=seed)
    R = np.linalg.norm(X, axis=1).max()
    clf = MarginPerceptronClassifier(
        shuffle=False, tol=None, output="last", fit_intercept=False
    ).fit(X, y)
    assert clf.converged_
    w = clf.coef_[0]
    achieved = np.min(y * (X @ w)) / np.linalg.norm(w)
    # gamma_opt >= gamma, and the last guess is >= gamma_opt / 2
    assert achieved >= clf.gamma_guess_[0] / 2 >= gamma / 4
    # halving stops at the first guess <= gamma_opt: at most ceil(log2(R / gamma)) restarts
    assert clf.n_restarts_[0] <= np.ceil(np.log2(R / gamma))
    bound = sum(12 * R**2 / (R / 2**i) ** 2 for i in range(clf.n_restarts_[0] + 1))
    assert clf.n_corrections_ <= bound


def test_margin_perceptron_fixed_guess_below_opt():
    gamma = 0.4
    X, y = separable(n=200, d=4, margin=gamma, seed=7)
    R = np.linalg.norm(X, axis=1).max()
    clf = MarginPerceptronClassifier(
        shuffle=False, tol=None, gamma_guess=gamma, output="last", fit_intercept=False
    ).fit(X, y)
    w = clf.coef_[0]
    assert clf.converged_ and clf.n_corrections_ <= 12 * R**2 / gamma**2
    assert np.min(y * (X @ w)) / np.linalg.norm(w) >= gamma / 2


def test_margin_perceptron_warns_on_inseparable_data():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([1, -1, 1])
    with pytest.warns(ConvergenceWarning, match="did not separate the training data"):
        clf = MarginPerceptronClassifier(
            shuffle=False, tol=None, max_iter=30, output="last", fit_intercept=False
        ).fit(X, y)
    assert not clf.converged_
    assert clf.n_iter_[0] == 30
    assert np.all(np.isfinite(clf.coef_))


def test_margin_perceptron_partial_fit_uses_current_guess():
    X, y = separable(n=100, d=4, margin=0.3, seed=3)
    clf = MarginPerceptronClassifier(
        shuffle=False, tol=None, gamma_guess=0.5, output="last", fit_intercept=False
    )
    clf.partial_fit(X[:50], y[:50], classes=[-1, 1]).partial_fit(X[50:], y[50:])
    whole = MarginPerceptronClassifier(
        shuffle=False, tol=None, gamma_guess=0.5, max_iter=1, output="last", fit_intercept=False
    )
    with pytest.warns(ConvergenceWarning):
        whole.fit(X, y)
    np.testing.assert_allclose(clf.coef_, whole.coef_, rtol=1e-12)
