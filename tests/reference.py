"""Slow, obviously correct references written straight from the papers.

Nothing here is optimised: dense numpy vectors, one example at a time, every
hypothesis kept. The tests compare marginkit's compiled estimators with these.
"""

import math
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

# -- ties: decisions that rounding could turn ----------------------------------------------

#: The decisions of the references while ``tie_free`` records them, else None
_DECISIONS = None

#: How close, relative to its scale, a margin may come to its threshold. The engines
#: compute every margin in another order than the references (blocked BLAS products,
#: scale folds, recursions for norms) and so round it differently, by far less than this.
TIE_RTOL = 1e-9


def _decision(where, margin, threshold, scale):
    """Record that a reference compared ``margin`` with ``threshold`` (at ``where``);
    ``scale`` bounds the magnitudes that rounded on the way, sum_i |a_i b_i| of a dot
    product a . b (plus |threshold|), so that rounding moves the margin by less than
    n eps scale. A margin of scale 0 is an exact zero (every term was 0), which no
    rounding moves."""
    if _DECISIONS is not None:
        _DECISIONS.append((where, float(margin), float(threshold), float(scale)))


def _terms(a, b):
    """sum_i |a_i b_i|: the scale of the rounding of a . b."""
    return float(np.abs(a) @ np.abs(b))


def ties(decisions, rtol=TIE_RTOL):
    """The recorded decisions whose margin lies within ``rtol * scale`` of its threshold:
    the ones another order of the same arithmetic (another BLAS kernel) may decide the
    other way."""
    return [d for d in decisions if d[3] > 0 and abs(d[1] - d[2]) <= rtol * d[3]]


@contextmanager
def tie_free(rtol=TIE_RTOL):
    """Record every decision the references take inside the block (a trial's margin
    against its threshold; with ``output="voted"`` each hypothesis's sign on the rows
    scored) and, on leaving it, assert that none is a tie: each margin lies further than
    ``rtol`` times its scale from its threshold. A test that compares the engines'
    decisions with a reference's then depends on the arithmetic alone, not on the order
    in which a CPU's BLAS kernel sums, and data that drift into a tie fail here, naming
    the trial, rather than on some machines only. Yields the list of decisions."""
    global _DECISIONS
    outer, _DECISIONS = _DECISIONS, []
    recorded = _DECISIONS
    try:
        yield recorded
    finally:
        _DECISIONS = outer
        if outer is not None:
            outer.extend(recorded)
    close = ties(recorded, rtol)
    assert not close, (
        f"{len(close)} of {len(recorded)} decisions lie within {rtol:g} x their scale of "
        "the threshold (where, margin, threshold, scale): "
        + "; ".join(
            f"{w}: {m!r} vs {t!r} (scale {s:.3g}, gap {abs(m - t):.3g})"
            for w, m, t, s in close[:5]
        )
    )


def link(w, r):
    """f_i(w) = sign(w_i) |w_i|^(r-1) / ||w||_r^(r-2) (Gentile 2001, section 2); f(0) = 0.

    With r = q this is f; with r = p it is f^-1.
    """
    norm = np.sum(np.abs(w) ** r) ** (1.0 / r)
    if norm == 0.0:
        return np.zeros_like(w)
    return np.sign(w) * np.abs(w) ** (r - 1.0) / norm ** (r - 2.0)


def pnorm(x, r):
    return np.sum(np.abs(x) ** r) ** (1.0 / r)


def alma_binary(X, y, p, alpha, B, C, max_iter=1, weights=None):
    """ALMA_p(alpha; B, C), Figure 1 of Gentile (JMLR 2001), for labels in {-1, +1}.

    Returns the list of hypotheses w_1 = 0, w_2, ... and the number of trials each
    one was the post-trial hypothesis for (the Freund-Schapire counts c_k). A row of
    weight c > 0 (``weights``; 1 each when None) takes the step ``c eta_k``.
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    c = _weights(weights, X.shape[0])
    q = p / (p - 1.0)
    w = np.zeros(X.shape[1])
    k = 1
    hyps, counts = [w], [0]
    for e in range(max_iter):
        for t, (x, yt) in enumerate(zip(X, y, strict=True)):
            nx = pnorm(x, p)
            if nx > 0:  # footnote 3: x = 0 never updates
                x_hat = x / nx
                gamma_k = B * np.sqrt(p - 1.0) / np.sqrt(k)
                thr = (1.0 - alpha) * gamma_k
                _decision(
                    f"ALMA pass {e}, trial {t}", yt * (w @ x_hat), thr, _terms(w, x_hat) + thr
                )
                if yt * (w @ x_hat) <= thr:
                    eta_k = c[t] * C / (np.sqrt(p - 1.0) * np.sqrt(k))
                    w_prime = link(link(w, q) + eta_k * yt * x_hat, p)
                    w = w_prime / max(1.0, pnorm(w_prime, q))
                    k += 1
                    hyps.append(w)
                    counts.append(0)
            counts[-1] += 1
    return hyps, counts


def trial_weights(counts, horizon=None):
    """The weight of each hypothesis in the average, from the trials it was the
    post-trial hypothesis of (``counts``, in order): c_k; with a horizon H, the sum over
    its trials t of ``(1 - 1 / H)^(T - t)``, T the trials in all, written out trial by
    trial."""
    if horizon is None:
        return [float(c) for c in counts]
    beta = 1.0 - 1.0 / horizon
    T = sum(counts)
    out, t = [], 0
    for c in counts:
        out.append(sum(beta ** (T - (t + j + 1)) for j in range(c)))
        t += c
    return out


def combine(values, counts, output, scales=None, horizon=None):
    """The 'last', 'avg' or 'voted' output from every hypothesis's values and counts.

    avg: sum_k c_k v_k / sum_k c_k (with a horizon, the weights of
    :func:`trial_weights` in place of c_k); voted: sum_k c_k sign(v_k) / sum_k c_k.
    ``scales`` (the rounding scale of each value, as ``values``) records the signs the
    vote takes.
    """
    if output == "last":
        return values[-1]
    if output == "avg":
        weights = trial_weights(counts, horizon)
        return sum(c * v for v, c in zip(values, weights, strict=True)) / sum(weights)
    if scales is not None:
        for k, (v, s, c) in enumerate(zip(values, scales, counts, strict=True)):
            if c > 0:
                for i, (vi, si) in enumerate(zip(np.ravel(v), np.ravel(s), strict=True)):
                    _decision(f"vote: hypothesis {k}, row {i}", vi, 0.0, si)
    return sum(c * np.sign(v) for v, c in zip(values, counts, strict=True)) / sum(counts)


def normalise(X, p):
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    norms = np.array([pnorm(x, p) for x in X])
    return X / np.where(norms > 0, norms, 1.0)[:, None]


def augment(X, R):
    """(x, -R): the bias augmentation of section 1 of Ishibashi, Hatano and Takeda."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    return np.hstack([X, np.full((X.shape[0], 1), -R)])


def bias_coordinate(X, p, scaling="max"):
    """``fit_intercept``'s bias coordinate R of the rows X: their largest p-norm (``"max"``,
    the papers' R), the root mean square of their p-norms (``"rms"``), twice that
    (``"2rms"``), or the value given; 1 where every row is 0."""
    if not isinstance(scaling, str):
        return float(scaling)
    norms = [pnorm(x, p) for x in X]
    rms = math.sqrt(sum(v * v for v in norms) / len(norms))
    value = {"max": max(norms), "rms": rms, "2rms": 2 * rms}[scaling]
    return value or 1.0


def ovr_targets(y, classes):
    if len(classes) == 2:
        return [np.where(y == classes[1], 1.0, -1.0)]
    return [np.where(y == c, 1.0, -1.0) for c in classes]


def alma_fit(
    X, y, p, alpha, B, C, max_iter=1, fit_intercept=False, weights=None, intercept_scaling="max"
):
    """One-vs-rest ALMA_p: per binary problem, (hypotheses, counts)."""
    classes = np.unique(y)
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    R = None
    if fit_intercept:
        R = bias_coordinate(X, p, intercept_scaling)
        X = augment(X, R)
    runs = [alma_binary(X, t, p, alpha, B, C, max_iter, weights) for t in ovr_targets(y, classes)]
    return runs, R


def alma_scores(runs, X, p, output, R=None, horizon=None):
    """Decision values of the 'last', 'avg' or 'voted' hypothesis on normalised X (the
    average of ``horizon``, :func:`trial_weights`)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    if R is not None:
        X = augment(X, R)
    Xh = normalise(X, p)
    cols = [
        combine(
            [Xh @ w for w in hyps],
            counts,
            output,
            [np.abs(Xh) @ np.abs(w) for w in hyps],
            horizon,
        )
        for hyps, counts in runs
    ]
    scores = np.column_stack(cols)
    return scores.ravel() if scores.shape[1] == 1 else scores


# -- kernel ALMA_2 (Remark 5) -----------------------------------------------------------


def kernel_value(kernel, x, z, gamma, degree, coef0, offset=0.0):
    """K(x, z) for one pair, from the textbook formulas, plus ``offset`` (the squared
    bias coordinate c^2 of ``fit_intercept``: the kernel of ``(phi(x), c)``)."""
    if callable(kernel):
        value = float(kernel(x[None, :], z[None, :])[0, 0])
    elif kernel == "linear":
        value = float(x @ z)
    elif kernel == "poly":
        value = float((gamma * (x @ z) + coef0) ** degree)
    else:
        d2 = float(np.sum((x - z) ** 2))
        if kernel == "rbf":
            value = float(np.exp(-gamma * d2))
        else:
            value = float((coef0 + np.exp(-gamma * d2)) ** degree)  # poly_rbf
    return value + offset


def bias_offset(kernel, X, gamma=1.0, degree=3, coef0=1.0, scaling=0.5):
    """c^2, the offset of a kernel estimator's ``fit_intercept``: ``scaling^2`` times
    K(x, x) of a row of the root mean square norm of X (for a callable, the mean of
    its K(x, x); ``scaling="max"``: of the largest norm)."""
    X = _dense(X)
    if callable(kernel):
        diag = np.array([kernel_value(kernel, x, x, gamma, degree, coef0) for x in X])
        value = diag.max() if scaling == "max" else diag.mean()
    else:
        sq = np.einsum("ij,ij->i", X, X)
        s = sq.max() if scaling == "max" else sq.mean()
        z = np.zeros(X.shape[1])
        z[0] = np.sqrt(s)
        value = kernel_value(kernel, z, z, gamma, degree, coef0)
    factor = 1.0 if isinstance(scaling, str) else scaling
    return factor * factor * value


def kernel_alma_binary(X, y, khat, alpha, B, C, max_iter=1, weights=None):
    """Kernel ALMA_2(alpha; B, C) one example at a time, for labels in {-1, +1}.

    ``khat(i, j)`` is the normalised kernel between rows i and j of X (0 when either
    has K(x, x) = 0). Every hypothesis is kept as a coefficient vector over the rows of
    the support vectors, and ||w'|| is computed from its definition, sum_ij b_i b_j
    khat(i, j), not from Remark 5's recursion. A row of weight c > 0 (``weights``)
    takes the step ``c eta_k``.
    """
    n = X.shape[0]
    c = _weights(weights, n)
    sv, beta = [], np.zeros(0)
    k = 1
    hyps, counts = [(list(sv), beta.copy())], [0]
    for e in range(max_iter):
        for t in range(n):
            if khat(t, t) > 0:
                f = sum(b * khat(j, t) for j, b in zip(sv, beta, strict=True))
                thr = (1 - alpha) * B / np.sqrt(k)
                scale = sum(abs(b * khat(j, t)) for j, b in zip(sv, beta, strict=True)) + thr
                _decision(f"kernel ALMA pass {e}, trial {t}", y[t] * f, thr, scale)
                if y[t] * f <= thr:
                    eta = c[t] * C / np.sqrt(k)
                    sv.append(t)
                    beta = np.append(beta, eta * y[t])
                    norm2 = sum(
                        bi * bj * khat(i, j)
                        for i, bi in zip(sv, beta, strict=True)
                        for j, bj in zip(sv, beta, strict=True)
                    )
                    beta = beta / max(1.0, np.sqrt(norm2))
                    k += 1
                    hyps.append((list(sv), beta.copy()))
                    counts.append(0)
            counts[-1] += 1
    return hyps, counts


def kernel_alma_fit(
    X,
    y,
    kernel,
    alpha,
    B,
    C,
    max_iter=1,
    gamma=1.0,
    degree=3,
    coef0=1.0,
    weights=None,
    offset=0.0,
):
    """One-vs-rest kernel ALMA_2; returns the runs and the normalised kernel function
    (``offset``: see :func:`kernel_value`)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    diag = np.array([kernel_value(kernel, x, x, gamma, degree, coef0, offset) for x in X])

    def khat_between(a, za, b, zb):
        if za <= 0 or zb <= 0:
            return 0.0
        return kernel_value(kernel, a, b, gamma, degree, coef0, offset) / np.sqrt(za * zb)

    memo = {}

    def khat(i, j):
        key = (min(i, j), max(i, j))
        if key not in memo:
            memo[key] = khat_between(X[i], diag[i], X[j], diag[j])
        return memo[key]

    classes = np.unique(y)
    runs = [
        kernel_alma_binary(X, t, khat, alpha, B, C, max_iter, weights)
        for t in ovr_targets(y, classes)
    ]

    def scores(X_test, output, horizon=None):
        X_test = X_test.toarray() if sp.issparse(X_test) else np.asarray(X_test, dtype=float)
        cols = []
        for hyps, counts in runs:
            col = []
            for x in X_test:
                zx = kernel_value(kernel, x, x, gamma, degree, coef0, offset)
                row = {j: khat_between(X[j], diag[j], x, zx) for j in hyps[-1][0]}
                values = [
                    sum(b * row[j] for j, b in zip(s, beta, strict=True)) for s, beta in hyps
                ]
                scales = [
                    sum(abs(b * row[j]) for j, b in zip(s, beta, strict=True)) for s, beta in hyps
                ]
                col.append(combine(values, counts, output, scales, horizon))
            cols.append(col)
        out = np.array(cols).T
        return out.ravel() if out.shape[1] == 1 else out

    return runs, scores


# -- the Perceptron family and ROMMA (unnormalised instances, p = 2) ---------------------


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def _weights(weights, n):
    """The rows' weights, each > 0 (a row of weight 0 is one left out of the data)."""
    c = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    assert c.shape == (n,) and np.all(c > 0)
    return c


def perceptron_binary(X, y, max_iter=1, weights=None):
    """Rosenblatt's Perceptron: w += y x when y w . x <= 0 (x = 0 never updates); a row
    of weight c (``weights``) adds ``c y x``."""
    X = _dense(X)
    c = _weights(weights, X.shape[0])
    w = np.zeros(X.shape[1])
    hyps, counts = [w], [0]
    for e in range(max_iter):
        for t, (x, yt) in enumerate(zip(X, y, strict=True)):
            if np.any(x != 0):
                _decision(f"Perceptron pass {e}, trial {t}", yt * (w @ x), 0.0, _terms(w, x))
            if np.any(x != 0) and yt * (w @ x) <= 0:
                w = w + c[t] * yt * x
                hyps.append(w)
                counts.append(0)
            counts[-1] += 1
    return hyps, counts


def romma_binary(
    X, y, aggressive=False, max_iter=1, delta=0.0, weights=None, lam=0.0, stream=False
):
    """ROMMA / aggressive ROMMA (Li and Long 2002, section 3), solved from its definition.

    At an update, w' = argmin ||w'|| subject to w' . w >= ||w||^2 and y w' . x >= 1,
    found by trying the two cases of the KKT conditions (only the second constraint
    binds, or both do) instead of the closed form. Aggressive ROMMA updates on
    y w . x < 1 - delta (delta > 0: the version Ishibashi et al. run, COLT 2008).

    A row of weight c (``weights``) scales the new example's term of the update: the
    ROMMA solution ``a w + b y x`` becomes ``a w + c b y x``.

    ``lam > 0``: the 2-norm soft margin, written out: every example is ``(x, sqrt(lam /
    c) e_j)`` with a column j of its own, one per row for all passes, or with
    ``stream``, one per trial (each pass's rows new examples); the weight is in that
    coordinate alone (the update is unscaled). The hypotheses returned are their first
    ``d`` coordinates, ``w``; a row of zeros (in ``x``) never updates.
    """
    X = _dense(X)
    n, d = X.shape
    cw = _weights(weights, n)
    if lam > 0:
        columns = n * max_iter if stream else n
        X = np.hstack([X, np.zeros((n, columns))])
    w = np.zeros(X.shape[1])
    hyps, counts = [w[:d]], [0]
    for e in range(max_iter):
        for t, (x, yt) in enumerate(zip(X, y, strict=True)):
            if not np.any(x[:d] != 0):
                counts[-1] += 1
                continue
            if lam > 0:
                x = x.copy()
                x[d + (e * n + t if stream else t)] = np.sqrt(lam / cw[t])
            m = yt * (w @ x)
            thr = 1.0 - delta if aggressive else 0.0
            _decision(f"ROMMA pass {e}, trial {t}", m, thr, _terms(w, x) + abs(thr))
            if (m < 1.0 - delta) if aggressive else (m <= 0.0):
                z = yt * x
                only_new = z / (z @ z)  # the projection of 0 onto {v : v . z >= 1}
                step = cw[t] if lam == 0 else 1.0  # the soft margin's weight is in x
                if w @ w == 0.0 or only_new @ w >= w @ w:
                    w = step * only_new
                else:
                    # both bind: v = a w + b z with v . w = ||w||^2 and v . z = 1
                    G = np.array([[w @ w, w @ z], [w @ z, z @ z]])
                    a, b = np.linalg.solve(G, [w @ w, 1.0])
                    w = a * w + step * b * z
                hyps.append(w[:d])
                counts.append(0)
            counts[-1] += 1
    return hyps, counts


def margin_perceptron_binary(X, y, gamma_guess=None, max_iter=1000, weights=None):
    """The margin Perceptron of the lecture notes; gamma_guess=None halves from R. A row
    of weight c (``weights``) adds ``c y x``; the test and the budget count as before.

    Returns (hypotheses of the final guess, their counts, final guess, total updates,
    epochs, converged).
    """
    X = _dense(X)
    c = _weights(weights, X.shape[0])
    R = max(np.linalg.norm(x) for x in X) or 1.0
    gamma = R if gamma_guess is None else gamma_guess
    epochs, total = 0, 0
    while True:
        budget = np.floor(12 * R**2 / gamma**2) if gamma_guess is None else np.inf
        w = np.zeros(X.shape[1])
        hyps, counts, updates, restart, converged = [w], [0], 0, False, False
        while epochs < max_iter and not restart:
            epochs += 1
            changed = False
            for t, (x, yt) in enumerate(zip(X, y, strict=True)):
                nw = np.linalg.norm(w)
                if np.any(x != 0) and nw > 0:
                    _decision(
                        f"margin Perceptron pass {epochs}, trial {t}",
                        yt * (w @ x) / nw,
                        gamma / 2,
                        _terms(w, x) / nw + gamma / 2,
                    )
                if np.any(x != 0) and (nw == 0 or yt * (w @ x) / nw < gamma / 2):
                    if updates >= budget:
                        restart = True
                        break
                    w = w + c[t] * yt * x
                    updates += 1
                    changed = True
                    hyps.append(w)
                    counts.append(0)
                counts[-1] += 1
            if not restart and not changed:
                converged = True
                break
        total += updates
        if not restart or epochs >= max_iter:
            # no epoch left to restart in: the hypotheses reached are the model
            return hyps, counts, gamma, total, epochs, converged
        gamma /= 2


def linear_fit(binary, X, y, fit_intercept=False, intercept_scaling="max", **kwargs):
    """One-vs-rest runs of ``binary`` (perceptron_binary, romma_binary) and R."""
    classes = np.unique(y)
    X = _dense(X)
    R = None
    if fit_intercept:
        R = bias_coordinate(X, 2.0, intercept_scaling)
        X = augment(X, R)
    return [binary(X, t, **kwargs) for t in ovr_targets(y, classes)], R


def linear_scores(runs, X, output, R=None, horizon=None):
    """w . x (+ the bias coordinate) for the 'last', 'avg' or 'voted' hypothesis (the
    average of ``horizon``, :func:`trial_weights`)."""
    X = _dense(X)
    if R is not None:
        X = augment(X, R)
    cols = [
        combine(
            [X @ w for w in hyps], counts, output, [np.abs(X) @ np.abs(w) for w in hyps], horizon
        )
        for hyps, counts in runs
    ]
    scores = np.column_stack(cols)
    return scores.ravel() if scores.shape[1] == 1 else scores


# -- PUMMA (Ishibashi, Hatano and Takeda, COLT 2008) --------------------------------------


def _pumma_step(w, z, p):
    """argmin ||w'||_q s.t. f(w) . w' >= ||w||_q^2 and z . w' >= 1, from the KKT conditions.

    Either only the second constraint binds (theta' = z / ||z||_p^2), or both do and
    theta' = a f(w) + c z solves the two equations z . w' = 1 and f(w) . w' = ||w||^2,
    found here by nested root bracketing (scipy's brentq): for each a, the c that
    satisfies the first; then the a that satisfies the second. Both are monotone in
    their variable, as derivatives of a concave function.
    """
    from scipy.optimize import brentq

    q = p / (p - 1.0)
    theta = link(w, q)
    W = pnorm(w, q) ** 2
    c0 = 1.0 / pnorm(z, p) ** 2
    only_z = link(c0 * z, p)
    if W == 0.0 or theta @ only_z >= W * (1 - 1e-15):
        return only_z

    def root(f):
        hi = 1.0
        while f(hi) < 0:
            hi *= 2.0
        return brentq(f, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)

    def c_of(a):
        return root(lambda c: z @ link(a * theta + c * z, p) - 1.0)

    a = root(lambda a: theta @ link(a * theta + c_of(a) * z, p) - W)
    return link(a * theta + c_of(a) * z, p)


def pumma_binary(
    X, y, p, delta, lam=0.0, max_iter=100, min_epochs=1, weights=None, augmented=False
):
    """PUMMA_p(delta) on labels in {-1, +1}: hypotheses (w, b), counts, epochs, converged.

    The soft margin is taken literally: every instance gets n more coordinates, its
    own holding sqrt(lam), so w has d + n coordinates (the first d are returned, all of
    them with ``augmented``). A row of weight c (``weights``) holds sqrt(lam / c) there:
    the 2-norm soft margin's loss of the row, lam^-1 xi^2, weighed by c.
    """
    X = _dense(X)
    n, d = X.shape
    c = _weights(weights, n)
    Xa = np.hstack([X, np.diag(np.sqrt(lam / c))]) if lam > 0 else X
    w, b = np.zeros(Xa.shape[1]), 0.0
    pos = neg = None
    hyps, counts = [(w[:d], b)], [0]
    epochs, changed = 0, True
    while (changed or epochs < min_epochs) and epochs < max_iter:
        epochs += 1
        changed = False
        for t in range(n):
            x = Xa[t]
            thr = 1.0 - delta
            scale = _terms(w, x) + abs(b) + abs(thr)
            _decision(f"PUMMA pass {epochs}, trial {t}", y[t] * (w @ x + b), thr, scale)
            if y[t] * (w @ x + b) < 1.0 - delta:
                new_pos, new_neg = (t, neg) if y[t] > 0 else (pos, t)
                if new_pos is None or new_neg is None:
                    w, b = np.zeros_like(w), float(y[t])
                else:
                    z = (Xa[new_pos] - Xa[new_neg]) / 2
                    if not np.any(z != 0):
                        counts[-1] += 1
                        continue
                    w = _pumma_step(w, z, p)
                    b = -(w @ Xa[new_pos] + w @ Xa[new_neg]) / 2
                pos, neg = new_pos, new_neg
                hyps.append((w if augmented else w[:d], b))
                counts.append(0)
                changed = True
            counts[-1] += 1
    return hyps, counts, epochs, not changed


def pumma_scores(runs, X, output, horizon=None):
    """w . x + b for the 'last', 'avg' or 'voted' hypothesis of each binary run."""
    X = _dense(X)
    cols = [
        combine(
            [X @ w + b for w, b in hyps],
            counts,
            output,
            [np.abs(X) @ np.abs(w) + abs(b) for w, b in hyps],
            horizon,
        )
        for hyps, counts, *_ in runs
    ]
    scores = np.column_stack(cols)
    return scores.ravel() if scores.shape[1] == 1 else scores


# -- the kernel Perceptron and kernel ROMMA ------------------------------------------------


def kernel_matrix(kernel, A, B, gamma=1.0, degree=3, coef0=1.0, normalize=False, offset=0.0):
    """K(a, b) for every pair of rows, entry by entry from the textbook formulas
    (``offset``: see :func:`kernel_value`)."""
    A, B = _dense(A), _dense(B)
    args = (gamma, degree, coef0, offset)
    K = np.array([[kernel_value(kernel, a, b, *args) for b in B] for a in A])
    if normalize:
        da = np.array([kernel_value(kernel, a, a, *args) for a in A])
        db = np.array([kernel_value(kernel, b, b, *args) for b in B])
        with np.errstate(divide="ignore"):
            ia = np.where(da > 0, 1 / np.sqrt(da), 0.0)
            ib = np.where(db > 0, 1 / np.sqrt(db), 0.0)
        K = K * ia[:, None] * ib[None, :]
    return K


def kernel_family_binary(K, y, rule, max_iter=1, delta=0.0, weights=None, lam=0.0, stream=False):
    """Perceptron or (aggressive) ROMMA on the training Gram matrix K, one trial at a time.

    Every hypothesis is a coefficient vector over the trials, w = sum_t beta_t
    phi~(x_t); ||w||^2 = beta Kt beta is computed from its definition, Kt the Gram
    matrix of the trials. ``rule``: "perceptron", "romma" or "aggressive" (on
    y w . phi(x) < 1 - delta). A row of weight c (``weights``) adds ``c y phi(x)``
    (the Perceptron), or scales the new example's term of ROMMA's ``a w + b y phi(x)``
    to ``c b``. ``lam > 0``: ROMMA's 2-norm soft margin, written out: every example is
    ``(phi(x), sqrt(lam / c) e_j)`` with a coordinate j of its own, one per row for all
    passes, or with ``stream``, one per trial, so that Kt adds lam / c between two
    trials of one example.
    Returns (hypotheses, counts), each hypothesis as coefficients of the rows of K.
    """
    n = K.shape[0]
    c = _weights(weights, n)
    rows = np.tile(np.arange(n), max_iter)  # the row of each trial
    Kt = K[np.ix_(rows, rows)]
    if lam > 0:
        same = np.eye(rows.size, dtype=bool) if stream else rows[:, None] == rows[None, :]
        Kt = Kt + same * (lam / c[rows])[None, :]
    beta = np.zeros(rows.size)  # a coefficient per trial
    hyps, counts = [np.zeros(n)], [0]
    for t, r in enumerate(rows):
        if K[r, r] > 0:
            x2 = Kt[t, t]
            m = y[r] * (beta @ Kt[:, t])
            thr = 1.0 - delta if rule == "aggressive" else 0.0
            scale = _terms(beta, Kt[:, t]) + abs(thr)
            _decision(f"kernel {rule} pass {t // n}, trial {r}", m, thr, scale)
            if (m < 1.0 - delta) if rule == "aggressive" else (m <= 0.0):
                if rule == "perceptron":
                    beta = beta.copy()
                    beta[t] += c[r] * y[r]
                else:
                    W = beta @ Kt @ beta
                    fresh = np.zeros(rows.size)
                    fresh[t] = y[r] / x2
                    if W == 0.0 or m >= x2 * W:
                        beta = c[r] * fresh
                    else:
                        # both constraints bind: w' = a w + b y phi~(x_t)
                        a, b = np.linalg.solve([[W, m], [m, x2]], [W, 1.0])
                        beta = a * beta + c[r] * b * x2 * fresh
                hyps.append(np.bincount(rows, weights=beta, minlength=n))
                counts.append(0)
        counts[-1] += 1
    return hyps, counts


def kernel_family_scores(runs, K_test, output, horizon=None):
    """Decision values on test rows, ``K_test[i, j] = K(test_i, train_j)``."""
    cols = [
        combine(
            [K_test @ beta for beta in hyps],
            counts,
            output,
            [np.abs(K_test) @ np.abs(beta) for beta in hyps],
            horizon,
        )
        for hyps, counts in runs
    ]
    out = np.column_stack(cols)
    return out.ravel() if out.shape[1] == 1 else out


def kernel_pumma_binary(K, y, delta, lam=0.0, max_iter=100, min_epochs=1, weights=None):
    """Kernel PUMMA_2(delta) on the training Gram matrix K, one trial at a time.

    w = sum_j beta_j phi~(x_j) with phi~(x_i) . phi~(x_j) = K[i, j] + lam [i = j];
    the update solves the two KKT equations of min ||w'|| s.t. w' . w >= ||w||^2 and
    w' . z >= 1 (z = (phi~(x+) - phi~(x-)) / 2) by a 2 x 2 linear solve.
    A row of weight c (``weights``) has lam / c on the diagonal.
    Returns (hypotheses (beta, b), counts, epochs, converged).
    """
    n = K.shape[0]
    Kt = K + np.diag(lam / _weights(weights, n))
    beta, b = np.zeros(n), 0.0
    pos = neg = None
    hyps, counts = [(beta, b)], [0]
    epochs, changed = 0, True
    while (changed or epochs < min_epochs) and epochs < max_iter:
        epochs += 1
        changed = False
        for t in range(n):
            # no exception for x = 0: its constraint y b >= 1 is on the bias
            thr = 1.0 - delta
            scale = _terms(beta, Kt[:, t]) + abs(b) + abs(thr)
            _decision(
                f"kernel PUMMA pass {epochs}, trial {t}", y[t] * (beta @ Kt[:, t] + b), thr, scale
            )
            if y[t] * (beta @ Kt[:, t] + b) < 1.0 - delta:
                new_pos, new_neg = (t, neg) if y[t] > 0 else (pos, t)
                if new_pos is None or new_neg is None:
                    beta, b = np.zeros(n), float(y[t])
                else:
                    z = np.zeros(n)
                    z[new_pos] += 0.5
                    z[new_neg] -= 0.5
                    Z = z @ Kt @ z
                    if Z <= 1e-15 * (Kt[new_pos, new_pos] + Kt[new_neg, new_neg]):
                        counts[-1] += 1
                        continue
                    W = beta @ Kt @ beta
                    m = beta @ Kt @ z
                    if W == 0.0 or m >= Z * W:
                        beta = z / Z
                    else:
                        a, c = np.linalg.solve([[W, m], [m, Z]], [W, 1.0])
                        beta = a * beta + c * z
                    b = -(beta @ Kt[:, new_pos] + beta @ Kt[:, new_neg]) / 2
                pos, neg = new_pos, new_neg
                hyps.append((beta, b))
                counts.append(0)
                changed = True
            counts[-1] += 1
    return hyps, counts, epochs, not changed


def kernel_pumma_scores(runs, K_test, output, horizon=None):
    """Decision values on test rows, ``K_test[i, j] = K(test_i, train_j)`` (no lam)."""
    cols = [
        combine(
            [K_test @ beta + b for beta, b in hyps],
            counts,
            output,
            [np.abs(K_test) @ np.abs(beta) + abs(b) for beta, b in hyps],
            horizon,
        )
        for hyps, counts, *_ in runs
    ]
    out = np.column_stack(cols)
    return out.ravel() if out.shape[1] == 1 else out


def passes_until_quiet(runs_of, max_iter):
    """``(passes, runs)`` of a fit whose passes end at the first in which no one-vs-rest
    problem updates, or at ``max_iter`` (aggressive ROMMA with delta > 0): ``runs_of(e)``
    gives the runs of exactly ``e`` passes, a ``(hypotheses, counts)`` pair each."""
    before = None
    for e in range(1, max_iter + 1):
        runs = runs_of(e)
        made = [len(hyps) for hyps, *_ in runs]
        if made == before:
            return e, runs
        before = made
    return max_iter, runs


def ovr_until_quiet(binary, targets, max_iter, **kwargs):
    """One-vs-rest runs of a ``*_pumma_binary`` that all see the same epochs.

    Every problem runs until an epoch passes in which no problem updates (or
    ``max_iter``), as the estimators do: those that stop updating earlier keep
    seeing trials, which count for their final hypothesis.
    """
    first = [binary(t, max_iter=max_iter, **kwargs) for t in targets]
    epochs = max(r[2] for r in first)
    runs = [binary(t, max_iter=epochs, min_epochs=epochs, **kwargs) for t in targets]
    converged = all(r[3] for r in runs)
    return runs, epochs, converged


# -- a support-vector budget (one store shared by the one-vs-rest problems) -------------


def _golden_max(f, iterations):
    """The argmax of f on [0, 1] by golden-section search (BSGD's search for h)."""
    g = (np.sqrt(5.0) - 1.0) / 2.0
    lo, hi = 0.0, 1.0
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(iterations):
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
    return (lo + hi) / 2.0


def budgeted_kernel_fit(
    X,
    y,
    rule,
    budget,
    budget_rule,
    step,
    max_iter=1,
    kernel="rbf",
    gamma=1.0,
    degree=3,
    coef0=1.0,
    normalize=True,
    alpha=0.9,
    B=None,
    C=2.0**0.5,
    delta=0.0,
    ridge=1e-8,
    golden=60,
    lam=0.0,
    horizon=None,
    removal_seed=0,
):
    """Kernel ALMA_2 (``rule="alma"``), the kernel Perceptron or (aggressive) ROMMA on
    one store of at most ``budget`` support vectors, shared by the one-vs-rest problems,
    one example at a time.

    Every hypothesis is kept as explicit coefficients ``W[j, c]`` on the stored vectors
    (``w_c = sum_j W[j, c] phi_hat(x_j)``), their norms computed from their definition,
    and the average as its running sum over the trials, added after every trial (with a
    ``horizon`` H, the sum times ``1 - 1 / H`` before each addition, and the trials'
    total weight with it). A trial that stores a vector and so fills the store to
    ``budget`` is followed by a maintenance step. An example corrected again (in a later
    pass) is the vector it was stored as, its coefficients summed; the store counts
    ``entries``, a vector or a later correction of one, and a trial that adds one and so
    brings them to ``budget`` is followed by a maintenance step: the entries become the
    vectors, and where more than ``budget - step`` vectors remain, a step that removes
    or merges them:

    - ``"project"`` (Projectron's projection, Orabona, Keshet and Caputo 2009; Wang
      and Vucetic 2010): the loss of vector j is ``||u_j||^2 / (K + eps I)^-1_jj``, u_j
      its coefficients of the last and averaged hypotheses, each problem's over that
      hypothesis's norm; the ``step`` vectors of least loss R go, and the coefficients
      of the rest S gain ``(K_SS + eps I)^-1 K_SR W_R``, computed by solving the
      system (not from the inverse);
    - ``"project_new"`` (the Projectron with a fixed set, Orabona, Keshet and Caputo
      2009): the vectors kept S are the first ``budget - step`` stored, those stored
      after them R go, and the coefficients of S gain ``(K_SS + eps I)^-1 K_SR W_R``
      (``eps`` from S's diagonal), computed by solving the system;
    - with a ``horizon``, ``"project_new"`` renews: where its projection keeps at most
      half of the squared norm of what the vectors R carry of the last hypotheses,
      ``W_R . K_RR W_R`` against ``(K_SR W_R) . (K_SS + eps I)^-1 K_SR W_R`` summed over
      the problems, the step is ``"project_old"``'s instead;
    - ``"project_old"``: as ``"project"``, but R are the vectors stored first (the
      store a window over the latest corrections, as the Forgetron's, Dekel,
      Shalev-Shwartz and Singer 2008, what it removes projected);
    - ``"merge"`` (BSGD, Wang, Crammer and Vucetic 2012): each of the ``step``
      vectors of least ``||u_j||^2`` merges with the free partner n of least loss into
      ``h x_j + (1 - h) x_n``, ``h`` maximising ``||u_j k^((1-h)^2) + u_n k^(h^2)||``;
      a vector with no partner of kernel value above 0 is left, and what no merge
      took is projected. Before it, the average's running sum and the trials' total
      weight that divides it are multiplied by ``1 - step / budget``.

    - ``"remove_oldest"``: the ``step`` vectors stored first go, with what they carry;
    - ``"remove_random"``: ``step`` vectors drawn at random go, with what they carry:
      ``numpy.random.default_rng([removal_seed, removed]).choice(m, step,
      replace=False)``, ``removed`` the vectors removed before (the engine's draws, so
      that the two remove the same).

    ROMMA's soft margin (``lam > 0``) gives every example a coordinate of its own,
    holding sqrt(lam), for all passes: ``Z[t, c]``, the coefficients of the
    hypothesis on example t's, enters the margin of t (``lam Z[t, c]``) and the norm
    (``lam ||Z[:, c]||^2``), never a prediction; a maintenance step that removes or
    merges vectors sets Z to 0 (the hypothesis goes on from what the store holds).

    Returns ``scores(X_test, output)`` for ``"last"`` and ``"avg"``, and the state
    ``(rows, W, avg, n_trials, corrections)``.
    """
    X = _dense(X)
    classes = np.unique(y)
    targets = np.column_stack(ovr_targets(y, classes))
    n, P = targets.shape
    B = 1.0 / alpha if B is None else B

    def kv(a, b):
        value = kernel_value(kernel, a, b, gamma, degree, coef0)
        if not normalize:
            return value
        da = kernel_value(kernel, a, a, gamma, degree, coef0)
        db = kernel_value(kernel, b, b, gamma, degree, coef0)
        return value / np.sqrt(da * db) if da > 0 and db > 0 else 0.0

    def self_value(a):
        if normalize:
            return 1.0 if kernel_value(kernel, a, a, gamma, degree, coef0) > 0 else 0.0
        return kernel_value(kernel, a, a, gamma, degree, coef0)

    rows, W, avg = [], np.zeros((0, P)), np.zeros((0, P))
    n_removed = 0
    ids = []  # the example of each vector (None: a merged one)
    entries = 0
    k = np.ones(P, dtype=int)
    trials = 0
    weight_total = 0.0  # the trials' total weight in the average
    Z = np.zeros((n, P))  # the soft margin's coordinates of the examples

    def gram():
        return np.array([[kv(a, b) for b in rows] for a in rows])

    def weighted(both, K):
        norms = np.sqrt(np.maximum(np.einsum("jc,jk,kc->c", both, K, both), 0.0))
        return both / np.where(norms > 0, norms, 1.0)

    def project(both, r, oldest=False):
        """Remove r vectors (of least loss; under "project_old", or ``oldest``, the
        oldest), their coefficients projected onto the rest."""
        nonlocal rows
        K = gram()
        U = weighted(both, K)
        m = len(rows)
        eps = ridge * np.mean(np.diag(K))
        loss = np.sum(U * U, axis=1) / np.diag(np.linalg.inv(K + eps * np.eye(m)))
        order = sorted(range(m), key=lambda j: (loss[j], -j))
        R = list(range(r)) if oldest or budget_rule == "project_old" else sorted(order[:r])
        S = [j for j in range(m) if j not in R]
        moved = np.linalg.solve(K[np.ix_(S, S)] + eps * np.eye(len(S)), K[np.ix_(S, R)] @ both[R])
        rows = [rows[j] for j in S]
        ids[:] = [ids[j] for j in S]
        return both[S] + moved

    def maintain():
        nonlocal rows, W, avg, entries, weight_total, n_removed
        entries = len(rows)
        if entries <= budget - step:
            return
        Z[:] = 0.0
        K = gram()
        both = np.hstack([W, avg])
        U = weighted(both, K)
        m = len(rows)
        if budget_rule == "project_new":
            S, R = list(range(budget - step)), list(range(budget - step, m))
            K_SS = K[np.ix_(S, S)]
            eps = ridge * np.mean(np.diag(K_SS))
            moved = np.linalg.solve(K_SS + eps * np.eye(len(S)), K[np.ix_(S, R)] @ both[R])
            # with a horizon: where the kept vectors keep at most half of the squared norm
            # of what the newest carry of the last hypotheses, the oldest go instead
            a = both[R, :P]
            whole = np.trace(a.T @ K[np.ix_(R, R)] @ a)
            kept = np.trace((K[np.ix_(S, R)] @ a).T @ moved[:, :P])
            if horizon is not None and whole > 0 and whole - kept > 0.5 * whole:
                both = project(both, m - (budget - step), oldest=True)
            else:
                rows = [rows[j] for j in S]
                ids[:] = [ids[j] for j in S]
                both = both[S] + moved
        elif budget_rule in ("remove_oldest", "remove_random"):
            r = m - (budget - step)
            if budget_rule == "remove_oldest":
                R = set(range(r))
            else:
                R = set(np.random.default_rng([removal_seed, n_removed]).choice(m, r, False))
                n_removed += r
            S = [j for j in range(m) if j not in R]
            rows = [rows[j] for j in S]
            ids[:] = [ids[j] for j in S]
            both = both[S]
        elif budget_rule == "merge":
            decay = 1.0 - step / budget
            both[:, P:] *= decay
            weight_total *= decay
            weight = np.sum(U * U, axis=1)
            free = [True] * m
            pairs = []
            for j in sorted(range(m), key=lambda j: (weight[j], -j)):
                if len(pairs) == m - (budget - step):
                    break
                if not free[j]:
                    continue
                best = None
                for c in range(m):
                    if c == j or not free[c] or K[j, c] <= 0:
                        continue
                    kjc = K[j, c]

                    def kept(h, u=U[j], v=U[c], kjc=kjc):
                        z = u * kjc ** ((1 - h) ** 2) + v * kjc ** (h * h)
                        return z @ z

                    h = _golden_max(kept, golden)
                    loss = U[j] @ U[j] + U[c] @ U[c] + 2 * kjc * (U[j] @ U[c]) - kept(h)
                    if best is None or loss < best[0]:
                        best = (loss, c, h)
                if best is None:
                    continue
                _, c, h = best
                free[j] = free[c] = False
                pairs.append((j, c, h))
            gone = {i for j, c, _ in pairs for i in (j, c)}
            S = [j for j in range(m) if j not in gone]
            merged_rows, merged = [], []
            for j, c, h in pairs:
                kjc = K[j, c]
                merged_rows.append(h * rows[j] + (1 - h) * rows[c])
                merged.append(both[j] * kjc ** ((1 - h) ** 2) + both[c] * kjc ** (h * h))
            rows = [rows[j] for j in S] + merged_rows
            ids[:] = [ids[j] for j in S] + [None] * len(merged_rows)
            both = np.vstack([both[S], np.array(merged).reshape(-1, 2 * P)])
        if len(rows) > budget - step:  # the projection, or what no merge could take
            both = project(both, len(rows) - (budget - step))
        W, avg = both[:, :P].copy(), both[:, P:].copy()
        entries = len(rows)

    for e in range(max_iter):
        for t in range(n):
            x = X[t]
            x2 = self_value(x)
            live = x2 > 0
            x2 += lam
            kx = np.array([kv(r, x) for r in rows])
            stored = False
            j = ids.index(t) if t in ids else None
            for c in range(P):
                if not live:
                    continue
                f = W[:, c] @ kx + lam * Z[t, c]
                m_ = targets[t, c] * f
                if rule == "alma":
                    thr = (1 - alpha) * B / np.sqrt(k[c])
                elif rule == "aggressive":
                    thr = 1.0 - delta
                else:
                    thr = 0.0
                _decision(
                    f"budgeted {rule} pass {e}, trial {t}, problem {c}",
                    m_,
                    thr,
                    _terms(W[:, c], kx) + lam * abs(Z[t, c]) + abs(thr),
                )
                update = m_ < thr if rule == "aggressive" else m_ <= thr
                if not update:
                    continue
                if not stored:
                    if j is None:
                        rows.append(x)
                        ids.append(t)
                        W = np.vstack([W, np.zeros(P)])
                        avg = np.vstack([avg, np.zeros(P)])
                        kx = np.append(kx, x2)
                        j = len(rows) - 1
                    entries += 1
                    stored = True
                yt = targets[t, c]
                if rule == "alma":
                    W[j, c] += C / np.sqrt(k[c]) * yt
                    K = gram()
                    norm = np.sqrt(W[:, c] @ K @ W[:, c])
                    W[:, c] /= max(1.0, norm)
                elif rule == "perceptron":
                    W[j, c] += yt
                else:
                    K = gram()
                    Wn = W[:, c] @ K @ W[:, c] + lam * Z[:, c] @ Z[:, c]
                    if Wn == 0.0 or m_ >= x2 * Wn:
                        # only the new constraint binds: w' = y x / K(x, x)
                        W[:, c] = 0.0
                        Z[:, c] = 0.0
                        W[j, c] = Z[t, c] = yt / x2
                    else:
                        a_, b_ = np.linalg.solve([[Wn, m_], [m_, x2]], [Wn, 1.0])
                        W[:, c] *= a_
                        Z[:, c] *= a_
                        W[j, c] += b_ * yt
                        if lam > 0:
                            Z[t, c] += b_ * yt
                k[c] += 1
            trials += 1
            if horizon is None:
                weight_total += 1.0
                avg += W
            else:
                weight_total = (1.0 - 1.0 / horizon) * weight_total + 1.0
                avg = (1.0 - 1.0 / horizon) * avg + W
            if stored and entries >= budget:
                maintain()

    def scores(X_test, output):
        X_test = _dense(X_test)
        K = np.array([[kv(r, x) for r in rows] for x in X_test]).reshape(len(X_test), len(rows))
        out = K @ (W if output == "last" else avg / weight_total)
        return out.ravel() if out.shape[1] == 1 else out

    return scores, (rows, W, avg, trials, k - 1)
