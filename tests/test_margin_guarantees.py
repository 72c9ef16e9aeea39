"""The margin guarantees of PUMMA, ROMMA and the margin Perceptron, against exact optima.

The yardstick is :func:`marginkit.margins.max_margin` (cvxpy with Clarabel).
"""

import numpy as np
import pytest

from marginkit import (
    ALMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from marginkit.datasets import load_ionosphere, make_r_of_k
from marginkit.margins import margin, max_margin

pytest.importorskip("cvxpy", reason="the exact margins need the 'margins' extra (cvxpy)")


def biased_blobs(n=200, d=5, seed=0, offset=6.0):
    """Two separable Gaussian classes far from the origin: a hyperplane with a large bias."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(4 * n, d)) + offset
    f = X @ w - np.median(X @ w)
    keep = np.abs(f) > 0.3
    return X[keep][:n], np.where(f[keep][:n] > 0, 1, -1)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("delta", [0.1, 0.3])
def test_pumma_p2_margin_and_update_bound(seed, delta):
    X, y = biased_blobs(seed=seed)
    gamma = max_margin(X, y, p=2)
    clf = PUMMAClassifier(shuffle=False, tol=None, delta=delta, lam=0.0, output="last").fit(X, y)
    assert clf.converged_
    assert clf.margin_[0] >= (1 - delta) * gamma * (1 - 1e-9)
    assert np.isclose(margin(clf, X, y), clf.margin_[0], rtol=1e-9)
    R = np.linalg.norm(X, axis=1).max()
    assert clf.n_updates_ <= 2 + 4 * R**2 / (delta**2 * gamma**2)


@pytest.mark.parametrize("r", [1, 8])
def test_pumma_p_log_margin(r):
    """p = 2 ln n on r-of-k data: the p-norm margin is within (1 - delta) of the best."""
    X, y = make_r_of_k(300, r=r, random_state=r)
    clf = PUMMAClassifier(shuffle=False, tol=None, p="log", delta=0.2, lam=0.0, output="last").fit(
        X, y
    )
    p = clf.p_
    gamma = max_margin(X, y, p=p)
    assert clf.converged_
    assert clf.margin_[0] >= 0.8 * gamma * (1 - 1e-7)
    assert np.isclose(margin(clf, X, y, p=p), clf.margin_[0], rtol=1e-9)
    R = np.max(np.sum(np.abs(X) ** p, axis=1) ** (1 / p))
    assert clf.n_updates_ <= 2 + 4 * (p - 1) * R**2 / (0.2**2 * gamma**2)


def test_pumma_soft_margin_on_ionosphere(shared_data):
    X, y = load_ionosphere(shared_data)
    clf = PUMMAClassifier(shuffle=False, tol=None, lam=1.0, delta=0.01, output="last").fit(X, y)
    gamma = max_margin(X, y, p=2, lam=1.0)
    assert clf.converged_
    assert 0.99 * gamma * (1 - 1e-7) <= clf.margin_[0] <= gamma * (1 + 1e-6)


def test_margin_perceptron_reaches_a_quarter_of_the_best():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    w = rng.normal(size=6)
    f = X @ w / np.linalg.norm(w)
    X, y = X[np.abs(f) > 0.2], np.sign(f[np.abs(f) > 0.2]).astype(int)
    gamma = max_margin(X, y, p=2, fit_intercept=False)
    clf = MarginPerceptronClassifier(
        shuffle=False, tol=None, output="last", fit_intercept=False
    ).fit(X, y)
    assert clf.converged_
    assert margin(clf, X, y) >= gamma / 4
    # each guess g makes at most 12 R^2 / g^2 updates; the last guess is >= gamma / 2
    R = clf.radius_
    assert clf.gamma_guess_[0] >= gamma / 2
    guesses = [R / 2**i for i in range(clf.n_restarts_[0] + 1)]
    assert clf.n_corrections_ <= sum(12 * R**2 / g**2 for g in guesses)


def test_margin_perceptron_default_tol_keeps_the_guarantee_where_it_says():
    """The default ``tol`` ends a problem only at a guess g <= R sqrt(12 / n), which the
    halving reaches only when gamma_opt < 2 g: separable data either get the algorithm's
    fit (tol=None's model, converged_, margin >= gamma_opt / 4) or have gamma_opt <
    R sqrt(48 / n). Both happen here; the rule fires at the small margins only."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    kinds = []
    for seed, eps in [(0, 0.3), (1, 0.3), (0, 0.05), (0, 0.01), (1, 0.01), (2, None)]:
        rng = np.random.default_rng(seed)
        if eps is None:  # two tight clusters: gamma_opt above R sqrt(48 / n)
            X = rng.normal(scale=0.3, size=(400, 10))
            y = np.where(np.arange(400) % 2 == 0, 1, -1)
            X[:, 0] += 3.0 * y
        else:
            X = rng.normal(size=(3000, 10))
            w = rng.normal(size=10)
            f = X @ w / np.linalg.norm(w)
            X, y = X[np.abs(f) > eps][:400], np.sign(f[np.abs(f) > eps][:400]).astype(int)
        n = X.shape[0]
        gamma = max_margin(X, y, p=2, fit_intercept=False)
        params = {"output": "last", "fit_intercept": False, "random_state": 0}
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            clf = MarginPerceptronClassifier(**params).fit(X, y)
        R = clf.radius_
        if gamma >= R * np.sqrt(48 / n):
            assert clf.converged_
        if clf.converged_:
            kinds.append("algorithm")
            assert margin(clf, X, y) >= gamma / 4
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                paper = MarginPerceptronClassifier(tol=None, **params).fit(X, y)
            np.testing.assert_array_equal(clf.coef_, paper.coef_)
            assert clf.n_iter_[0] == paper.n_iter_[0]
        else:
            kinds.append("rule")
            assert clf.n_iter_[0] < clf.max_iter
            assert gamma < 2 * clf.gamma_guess_[0] <= R * np.sqrt(48 / n) * (1 + 1e-12)
    assert kinds == ["algorithm"] * 2 + ["rule"] * 3 + ["algorithm"]


def test_romma_mistake_bound():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 5))
    w = rng.normal(size=5)
    f = X @ w / np.linalg.norm(w)
    X, y = X[np.abs(f) > 0.1], np.sign(f[np.abs(f) > 0.1]).astype(int)
    gamma = max_margin(X, y, p=2, fit_intercept=False)
    R = np.linalg.norm(X, axis=1).max()
    clf = ROMMAClassifier(
        aggressive=False, lam=0.0, shuffle=False, max_iter=30, output="last", fit_intercept=False
    ).fit(X, y)
    assert clf.n_corrections_ <= R**2 / gamma**2
    assert clf.score(X, y) == 1.0


def _updates_until_quiet(est, X, y, max_epochs):
    """Epochs of partial_fit until one makes no correction: (corrections, converged)."""
    before = -1
    for _ in range(max_epochs):
        est.partial_fit(X, y, classes=[-1, 1])
        if est.n_corrections_ == before:
            return est.n_corrections_, True
        before = est.n_corrections_
    return est.n_corrections_, False


def test_pumma_needs_fewer_updates_than_augmented_alma_and_romma_with_a_large_bias():
    """Ishibashi et al., section 4.1: r = 1 puts the best hyperplane far from the origin."""
    X, y = make_r_of_k(400, r=1, random_state=0)
    pumma = PUMMAClassifier(shuffle=False, tol=None, delta=0.1, lam=0.0, output="last").fit(X, y)
    assert pumma.converged_
    alma, _ = _updates_until_quiet(
        ALMAClassifier(shuffle=False, alpha=0.1, fit_intercept=True, output="last", max_iter=1),
        X,
        y,
        60,
    )
    romma, _ = _updates_until_quiet(
        ROMMAClassifier(
            shuffle=False, aggressive=True, fit_intercept=True, output="last", max_iter=1
        ),
        X,
        y,
        60,
    )
    # at 60 epochs the other two have not finished: their totals only grow from here
    assert pumma.n_updates_ < alma and pumma.n_updates_ < romma
