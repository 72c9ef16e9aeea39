"""Long streams: the scale, the norms and the averaging totals stay finite and exact.

A reduced size runs in CI; the issue's sizes (10^7 linear trials, 10^6 kernel trials) run
under the ``slow`` marker. Over a long stream ALMA's scale s shrinks like 1 / sqrt(k), the
averaging total grows with the trials, and both are renormalised (folded, flushed) by
the compiled passes; the checks are that (a) a prefix equals the plain float64
reference of tests/reference.py, (b) the whole stream equals a run that folds and
flushes at every correction, and (c) every number of the state is finite, with the
hypothesis norms ||w||_q <= 1 the theory promises.
"""

import numpy as np
import pytest
from reference import alma_fit, alma_scores, tie_free

from marginkit import ALMAClassifier, KernelALMAClassifier, PUMMAClassifier


def stream(n, d=20, seed=0, noise=0.1):
    """A noisy linear target: corrections never stop, as in a real stream."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    y = np.where(X @ u > 0, 1, -1)
    flip = rng.uniform(size=n) < noise
    y[flip] = -y[flip]
    return X, y


class EagerRenormalising(ALMAClassifier):
    """Folds s into v at nearly every correction (the same model, by construction)."""

    def _initialise(self, data):
        super()._initialise(data)
        self._fold_below = 0.999


def chunks(n_total, size):
    for lo in range(0, n_total, size):
        yield lo, min(n_total, lo + size)


def _finite_state(clf):
    for state in clf._states:
        for name in ("v", "acc", "u", "fs"):
            assert np.all(np.isfinite(getattr(state, name))), name


def _q_norm(w, p):
    q = p / (p - 1.0)
    return np.sum(np.abs(w) ** q) ** (1 / q)


def run_linear(n_total, p, alpha, chunk=200_000):
    plain = ALMAClassifier(
        shuffle=False, p=p, alpha=alpha, output="last", max_iter=1, fit_intercept=False
    )
    eager = EagerRenormalising(p=p, alpha=alpha, output="last", max_iter=1, fit_intercept=False)
    eager = eager if n_total <= 2_000_000 else None
    for lo, hi in chunks(n_total, chunk):
        X, y = stream(hi - lo, seed=lo)
        plain.partial_fit(X, y, classes=[-1, 1])
        if eager is not None:
            eager.partial_fit(X, y, classes=[-1, 1])
    return plain, eager


@pytest.mark.exactness
@pytest.mark.parametrize("p", [2.0, 6.0])
def test_prefix_equals_the_float64_reference(p):
    X, y = stream(5_000, seed=0)
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=p,
        alpha=0.8,
        output="last",
        max_iter=1,
        fit_intercept=False,
    ).fit(X, y)
    with tie_free():
        runs, _ = alma_fit(X, y, p, 0.8, 1 / 0.8, np.sqrt(2))
    assert clf.n_corrections_ == len(runs[0][0]) - 1
    for output in ["last", "avg"]:
        clf.set_params(output=output)
        want = alma_scores(runs, X[:500], p, output)
        np.testing.assert_allclose(clf.decision_function(X[:500]), want, rtol=1e-9, atol=1e-12)


def _check_linear(n_total):
    for p, alpha in [(2.0, 0.8), (6.0, 0.5)]:
        plain, eager = run_linear(n_total, p, alpha)
        assert plain.n_trials_ == n_total
        _finite_state(plain)
        state = plain._states[0]
        assert state.fs[0] > 0  # the scale never underflowed to 0
        for output in ["last", "avg"]:
            plain.set_params(output=output)
            w = plain.coef_[0]
            assert np.all(np.isfinite(w)) and 0 < _q_norm(w, p) <= 1 + 1e-9
            if eager is not None:
                eager.set_params(output=output)
                X, _ = stream(1000, seed=123)
                np.testing.assert_allclose(
                    plain.decision_function(X), eager.decision_function(X), rtol=1e-8, atol=1e-14
                )


def test_linear_stream_reduced():
    _check_linear(1_000_000)


@pytest.mark.slow
def test_linear_stream_of_ten_million_trials():
    _check_linear(10_000_000)


def _check_kernel(n_total):
    # separable data on the unit circle's two halves: corrections stop, trials go on, and
    # the averaging totals grow with every trial
    rng = np.random.default_rng(1)
    clf = KernelALMAClassifier(
        shuffle=False,
        kernel="rbf",
        gamma=2.0,
        alpha=0.9,
        block_size=4096,
        output="last",
        max_iter=1,
    )
    for lo, hi in chunks(n_total, 250_000):
        angle = rng.uniform(0, 2 * np.pi, size=hi - lo)
        X = np.c_[np.cos(angle), np.sin(angle)]
        y = np.where(np.sin(angle) > 0.05, 1, np.where(np.sin(angle) < -0.05, -1, 0))
        keep = y != 0
        clf.partial_fit(X[keep], y[keep], classes=[-1, 1])
    st = clf._kstate
    m = st.m
    for arr in (st.A[:m], st.acc[:m], st.T_ins[:m], st.s, st.T, st.norm2):
        assert np.all(np.isfinite(arr))
    assert np.all(st.norm2 <= 1 + 1e-12) and np.all(st.s > 0)
    X = np.c_[np.cos(np.linspace(0, 6, 50)), np.sin(np.linspace(0, 6, 50))]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert np.all(np.isfinite(clf.decision_function(X)))
    return clf


@pytest.mark.slow  # about 15 s on 2 cores
def test_kernel_stream_reduced():
    clf = _check_kernel(200_000)
    assert clf.n_trials_ > 190_000


@pytest.mark.slow
def test_kernel_stream_of_a_million_trials():
    clf = _check_kernel(1_000_000)
    assert clf.n_trials_ > 950_000


def test_pumma_long_stream_stays_finite():
    # a noisy stream needs the soft margin: with lam = 0 no hyperplane satisfies all the
    # constraints and ||w|| grows without bound
    clf = PUMMAClassifier(
        shuffle=False, keep_corrections=True, p=3.0, delta=0.1, lam=1.0, output="last"
    )
    for lo, hi in chunks(100_000, 25_000):
        X, y = stream(hi - lo, d=10, seed=lo)
        clf.partial_fit(X, y, classes=[-1, 1])
    _finite_state(clf)
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        X, _ = stream(200, d=10, seed=7)
        assert np.all(np.isfinite(clf.decision_function(X)))
