"""Guarantees of Gentile (JMLR 2001), Theorem 3 part 1, checked on separable data."""

import numpy as np
import pytest
from reference import pnorm

from marginkit import ALMAClassifier
from marginkit.datasets import make_sparse_target


def pnorm_margin(u, X, y, p):
    """min_t y_t u . x_t / (||u||_q ||x_t||_p): the normalised p-norm margin of u."""
    q = p / (p - 1.0)
    norms = np.array([pnorm(x, p) for x in X])
    return np.min(y * (X @ u) / norms) / pnorm(u, q)


def theorem3_bound(p, alpha, gamma):
    return 2.0 * (p - 1.0) / gamma**2 * (2.0 / alpha - 1.0) ** 2 + 8.0 / alpha - 4.0


def separable(p, n_relevant, seed, n=400, d=30):
    X, y, _, _, u = make_sparse_target(
        n_train=n,
        n_test=1,
        n_features=d,
        n_relevant=n_relevant,
        margin=1.0,
        random_state=seed,
        return_target=True,
    )
    return X, y, pnorm_margin(u, X, y, p)


@pytest.mark.parametrize("p", [2.0, 4.0, 8.0])
@pytest.mark.parametrize("alpha", [1.0, 0.8, 0.5, 0.3])
@pytest.mark.parametrize("n_relevant", [2, 10])
def test_corrections_under_bound_and_margin_reached(p, alpha, n_relevant):
    X, y, gamma = separable(p, n_relevant, seed=int(10 * p + 100 * alpha) + n_relevant)
    assert gamma > 0
    bound = theorem3_bound(p, alpha, gamma)
    clf = ALMAClassifier(
        shuffle=False,
        p=p,
        alpha=alpha,
        B=np.sqrt(8.0) / alpha,
        C=np.sqrt(2.0),
        output="last",
        max_iter=1,
        fit_intercept=False,
    )
    clf.partial_fit(X, y, classes=[-1, 1])
    epochs = 1
    while epochs < 3000:
        before = clf.n_corrections_
        clf.partial_fit(X, y)
        epochs += 1
        assert clf.n_corrections_ <= bound
        if clf.n_corrections_ == before:
            break
    assert clf.n_corrections_ == before, "no epoch without corrections within 3000 epochs"
    # a full epoch without corrections: every margin exceeds (1 - alpha) gamma_k >= ...
    w = clf.coef_[0]
    q = p / (p - 1.0)
    assert pnorm(w, q) <= 1.0 + 1e-12
    margins = y * clf.decision_function(X)
    assert margins.min() >= (1.0 - alpha) * gamma * (1 - 1e-12)


@pytest.mark.parametrize("p", [2.0, 3.0, 10.0])
def test_weights_stay_in_unit_q_ball(p):
    X, y, _ = separable(p, 3, seed=1, n=120, d=12)
    q = p / (p - 1.0)
    clf = ALMAClassifier(
        shuffle=False, p=p, alpha=0.5, output="last", max_iter=1, fit_intercept=False
    )
    norms = []
    for t in range(len(X)):
        clf.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
        norms.append(pnorm(clf.coef_[0], q))
    assert max(norms) <= 1.0 + 1e-12
    # the projection is active: some norm reaches 1
    assert max(norms) > 1.0 - 1e-9


def test_log_p_resolves_to_two_ln_d():
    X, y, _ = separable(2.0, 3, seed=2, n=50, d=40)
    clf = ALMAClassifier(
        shuffle=False, p="log", alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    assert clf.p_ == pytest.approx(2 * np.log(40))
    clf = ALMAClassifier(
        shuffle=False, p="log", fit_intercept=True, alpha=1.0, output="last", max_iter=1
    ).fit(X, y)
    assert clf.p_ == pytest.approx(2 * np.log(41))
    assert (
        ALMAClassifier(
            shuffle=False, p="log", alpha=1.0, output="last", max_iter=1, fit_intercept=False
        )
        .fit(X[:, :2], y)
        .p_
        == 2.0
    )


def test_sparse_target_favours_large_p():
    """Section 4.4: with few relevant attributes, ALMA_p for p > 2 beats ALMA_2."""
    X, y, Xt, yt = make_sparse_target(n_train=4000, n_test=4000, n_relevant=3, random_state=0)
    err2 = 1 - ALMAClassifier(
        shuffle=False, p=2.0, alpha=0.5, output="avg", max_iter=1, fit_intercept=False
    ).fit(X, y).score(Xt, yt)
    err6 = 1 - ALMAClassifier(
        shuffle=False, p=6.0, alpha=0.5, output="avg", max_iter=1, fit_intercept=False
    ).fit(X, y).score(Xt, yt)
    assert err6 < err2 / 3
