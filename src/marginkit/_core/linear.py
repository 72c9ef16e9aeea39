"""Compiled update loops for the linear p-norm family (Gentile 2001, Figure 1).

The weight vector of ALMA_p lives in the q-norm space (1/p + 1/q = 1) while its
updates are additive in the dual space: theta = f(w) with

    f_i(w) = sign(w_i) |w_i|^(q-1) / ||w||_q^(q-2),

and w = f^-1(theta), the same map with p in place of q (section 2 of the paper).
Lemma 2 gives ||w||_q = ||theta||_p, and f is positively homogeneous, so the
projection ``w / max(1, ||w||_q)`` of Figure 1 is a rescaling of theta.

The loops below keep theta = s * v with one scalar scale ``s`` and maintain

    g_i = sign(v_i) |v_i|^(p-1)          (so that w = sigma * g,
    S   = sum_i |v_i|^p                    sigma = s / S^((p-2)/p))

so that a trial costs one sparse dot product ``g . x`` and a correction touches
only the non-zero coordinates of x: O(nnz(x)) for every p. ``S`` is updated
incrementally and recomputed exactly whenever the corrections since the last
recomputation have touched ``d`` coordinates (amortised O(1) per touched
coordinate). When ``s`` gets small enough for ``S`` to approach overflow, s is
folded into v (an O(d) step that happens at most a few times in a long stream).

The averaged hypothesis sum_t w_(t+1) (Freund and Schapire 1999: each hypothesis
is weighted by the number of trials it survived, the trial that created it
included) is kept lazily: with ``Sigma`` the sum of sigma over trials, a change
dg of g_i at a trial adds ``Sigma_before * dg`` to ``u_i``, and the sum is
``acc + Sigma g - u`` (one extra update per touched coordinate). sigma shrinks as
v grows, so Sigma is restarted from 0 (``acc += Sigma g - u; u = 0``, an O(d)
flush) when the trials' additions become small against it.

For p = 2, g is v itself: callers pass the same array for both.

When the state keeps its log (``ist[I_LOG]``), every correction is logged (the
instance's non-zeros and the coefficient added to v), so that the voted output
sum_k c_k sign(w_k . x) can be replayed after training without keeping a copy of any
hypothesis. Without it a pass writes nothing per trial or correction but the weights:
memory is O(d) however long the stream.

No fastmath: a reordered sum could flip which trial triggers a correction.
"""

from collections import namedtuple
from typing import NamedTuple

import numpy as np
from numba import njit

NUMBA_OPTS = {"cache": True, "nogil": True, "fastmath": False}

# Indices into the float state vector ``fs``.
F_S = 0  # scale s, theta = s * v
F_SUM = 1  # S = sum |v_i|^p
F_SIGMA = 2  # sum over trials of sigma (for the averaged output)
F_WORK = 3  # coordinates touched since S was last recomputed
F_PENDING = 4  # factor v was multiplied by since the last logged correction
F_SIGMA_W = 5  # current sigma = s / S^((p-2)/p), 0 while w = 0
N_FSTATE = 6

# Indices into the integer state vector ``ist``.
I_K = 0  # k of Figure 1: corrections so far + 1
I_NHIST = 1  # corrections logged
I_HNNZ = 2  # non-zeros logged
I_BUDGET = 3  # 1 when the last pass stopped because an update exceeded max_updates
I_TRIALS = 4  # trials so far
I_LOG = 5  # 1 when corrections are logged (for the voted output)
N_ISTATE = 6

#: The learned numbers of one binary problem, as the compiled passes take them:
#: v (theta = s v), g = sign(v)|v|^(p-1) (v itself for p = 2), the averaging
#: accumulators acc and u, and the scalar states ``fs`` (F_*) and ``ist`` (I_*).
Weights = namedtuple("Weights", ["v", "g", "acc", "u", "fs", "ist"])

#: The correction log (kept only with ``ist[I_LOG]``): per correction k, the
#: coefficient added to v, the factor v was rescaled by just before it, the span
#: ``start[k]:stop[k]`` of its instance's non-zeros in ``indices, data`` (the current
#: block), and ``count[k + 1]``, the trials hypothesis k + 1 survived.
Log = namedtuple("Log", ["start", "stop", "coef", "rescale", "count", "indices", "data"])

# A vote whose value is within this fraction of ||g|| ||x|| of 0 is computed again
# exactly enough to be sure of its sign (see ``cast_votes``).
TIE = 1e-10
EPS = 2.220446049250313e-16  # float64's machine epsilon

# Sigma restarts from 0 (an O(d) flush) when a trial adds less than this fraction
# to it, so that Sigma g - u keeps at least 12 significant digits.
FLUSH_RATIO = 1e-4

# Update rules of ``linear_pass``: the same state, log and averaging serve them all.
RULE_ALMA = 0  # Gentile (2001), Figure 1: normalised instances, projection onto the ball
RULE_PERCEPTRON = 1  # Rosenblatt: w += y x on y w . x <= 0
RULE_MARGIN_PERCEPTRON = 2  # w += y x while y w . x / ||w|| < gamma / 2
RULE_ROMMA = 3  # Li and Long (2002): relaxed projection on y w . x <= 0
RULE_AGGRESSIVE_ROMMA = 4  # the same projection whenever y w . x < 1 - delta


class Rule(NamedTuple):
    """An update rule and its parameters, as the estimators hand them to the compiled
    walks (:func:`linear_pass`, :func:`marginkit._core.kernel.kernel_walk`); a rule
    reads only its own: ALMA ``alpha, B, C``, the margin Perceptron ``gamma_guess``,
    aggressive ROMMA ``delta``."""

    kind: int
    alpha: float = 0.0
    B: float = 0.0
    C: float = 0.0
    gamma_guess: float = 0.0
    delta: float = 0.0


@njit(inline="always", **NUMBA_OPTS)
def power(a, e):
    """a ** e for a >= 0; by repeated squaring when e is a small whole number.

    pow() costs tens of cycles; p = 4, 6, 10 are the paper's common choices.
    """
    ie = int(e)
    if ie == e and 0 <= ie <= 64:
        result = 1.0
        base = a
        while ie > 0:
            if ie & 1:
                result *= base
            base *= base
            ie >>= 1
        return result
    return a**e


@njit(**NUMBA_OPTS)
def _recompute(v, g, p):
    """Exact S = sum |v|^p and g = sign(v)|v|^(p-1) from v."""
    total = 0.0
    for i in range(v.shape[0]):
        a = abs(v[i])
        if p == 2.0:
            g[i] = v[i]
            total += a * a
        elif a == 0.0:
            g[i] = 0.0
        else:
            t = power(a, p - 1.0)
            g[i] = t if v[i] > 0.0 else -t
            total += t * a
    return total


@njit(**NUMBA_OPTS)
def _sigma(s, total, p):
    if total <= 0.0:
        return 0.0
    if p == 2.0:
        return s
    return s / total ** ((p - 2.0) / p)


@njit(**NUMBA_OPTS)
def _flush_average(g, acc, u, sigma_total):
    """acc += Sigma g - u and u = 0: the lazy average restarts with Sigma = 0."""
    for i in range(g.shape[0]):
        acc[i] += sigma_total * g[i] - u[i]
        u[i] = 0.0


@njit(inline="always", **NUMBA_OPTS)
def _touch(i, delta, v, g, u, sigma_total, p):
    """v_i += delta, keeping g_i and the averaging accumulator; returns the change of S.

    For p = 2, ``g`` is ``v``.
    """
    old = v[i]
    new = old + delta
    v[i] = new
    if p == 2.0:
        u[i] += sigma_total * delta
        return new * new - old * old
    a_new = abs(new)
    t_new = power(a_new, p - 1.0) if a_new > 0.0 else 0.0
    g_new = t_new if new > 0.0 else -t_new
    g_old = g[i]
    # |g_i| = |v_i|^(p-1), so |v_i|^p = |g_i| |v_i|
    change = t_new * a_new - abs(g_old) * abs(old)
    u[i] += sigma_total * (g_new - g_old)
    g[i] = g_new
    return change


@njit(**NUMBA_OPTS)
def row_scale(X, indptr, indices, data, is_sparse, r, aug, p):
    """1 / ||(x_r, aug)||_p, or 0 for the zero vector; overflow-safe for large p."""
    if is_sparse:
        norm = scaled_norm(data[indptr[r] : indptr[r + 1]], p)
    else:
        norm = scaled_norm(X[r], p)
    if aug != 0.0:
        a = abs(aug)
        big = max(norm, a)
        if p == 2.0:
            norm = big * np.sqrt((norm / big) ** 2 + (a / big) ** 2)
        else:
            norm = big * ((norm / big) ** p + (a / big) ** p) ** (1.0 / p)
    return 1.0 / norm if norm > 0.0 else 0.0


@njit(**NUMBA_OPTS)
def scaled_norm(vals, p):
    """p-norm of a vector, dividing by its largest magnitude first when needed."""
    # one pass when the plain sum of powers neither overflows nor underflows
    if p == 2.0:
        total = np.dot(vals, vals)
    else:
        total = 0.0
        for a in vals:
            total += power(abs(a), p)
    if 1e-290 < total < 1e290:
        return np.sqrt(total) if p == 2.0 else total ** (1.0 / p)
    peak = 0.0
    for a in vals:
        if abs(a) > peak:
            peak = abs(a)
    if peak == 0.0:
        return 0.0
    total = 0.0
    for a in vals:
        t = abs(a) / peak
        total += power(t, p)
    return peak * (np.sqrt(total) if p == 2.0 else total ** (1.0 / p))


@njit(**NUMBA_OPTS)
def _reset(v, g, acc, u, sigma_total, p):
    """w = 0: the average is flushed first, so that the vanished weights stay in it."""
    _flush_average(g, acc, u, sigma_total)
    for i in range(v.shape[0]):
        v[i] = 0.0
    if p != 2.0:
        for i in range(g.shape[0]):
            g[i] = 0.0


@njit(**NUMBA_OPTS)
def _row_sqnorm(X, indptr, data, is_sparse, r, aug):
    """||(x_r, aug)||_2^2."""
    if is_sparse:
        vals = data[indptr[r] : indptr[r + 1]]
        total = np.dot(vals, vals)
    else:
        total = np.dot(X[r], X[r])
    return total + aug * aug


@njit(inline="always", **NUMBA_OPTS)
def load_scalars(fs, ist):
    """The scalars of a p-norm state a pass holds in locals (linear and PUMMA passes)."""
    return (
        fs[F_S],
        fs[F_SUM],
        fs[F_SIGMA],
        fs[F_WORK],
        fs[F_PENDING],
        fs[F_SIGMA_W],
        ist[I_K],
        ist[I_NHIST],
        ist[I_HNNZ],
        ist[I_TRIALS],
    )


@njit(inline="always", **NUMBA_OPTS)
def store_scalars(fs, ist, s, total, sigma_total, work, pending, sigma_w, k, hk, hn, trials):
    """Back into the state: what :func:`load_scalars` gave, as the pass left it."""
    fs[F_S] = s
    fs[F_SUM] = total
    fs[F_SIGMA] = sigma_total
    fs[F_WORK] = work
    fs[F_PENDING] = pending
    fs[F_SIGMA_W] = sigma_w
    ist[I_K] = k
    ist[I_NHIST] = hk
    ist[I_HNNZ] = hn
    ist[I_TRIALS] = trials


@njit(**NUMBA_OPTS)
def linear_pass(
    X,
    indptr,
    indices,
    data,
    is_sparse,
    aug,
    xscale,
    y,
    order,
    start,
    rule,
    p,
    alpha,
    B,
    C,
    gamma_guess,
    delta,
    max_updates,
    fold_below,
    w,
    log,
):
    """One pass of an additive p-norm online algorithm on one binary problem.

    ``rule`` chooses the algorithm (the ``RULE_*`` constants):

    - ALMA_p(alpha; B, C), Figure 1 of Gentile (2001), on normalised instances;
    - the Perceptron, w += y x when y w . x <= 0;
    - the margin Perceptron, w += y x when y w . x < (gamma_guess / 2) ||w|| (or w = 0);
    - ROMMA (Li and Long 2002), on y w . x <= 0, and aggressive ROMMA, on
      y w . x < 1 - delta:
      w' = argmin ||w'|| s.t. w' . w >= ||w||^2 and y w' . x >= 1, the closed form
      w' = c w + d y x of their section 3 (w' = y x / ||x||^2 when only the second
      constraint binds, also the first update).

    The last four are for p = 2 and do not normalise the instances. Rows
    ``order[start:]`` of X (dense, or CSR given as ``indptr, indices, data``) are
    presented in that order. ``aug`` != 0 appends a constant coordinate (index d - 1)
    holding ``aug`` to every instance (the (x, -R) bias augmentation). ``xscale[r]`` is
    ``1 / ||x_r||_p`` for ALMA and 1 for the others (0 for x_r = 0, which never updates:
    Gentile's footnote 3; negative for "not computed yet", filled in here). ``y`` holds
    +1 / -1 for every row of X. The pass also stops, before updating, at a trial that
    would make correction ``max_updates + 1`` (the margin Perceptron's budget; -1 for
    none), and then sets ``ist[I_BUDGET]``.

    ``w`` holds the weights and scalar state (:data:`Weights`). With ``ist[I_LOG]``
    corrections are logged in ``log`` (:data:`Log`; the current block filled up to
    ``ist[I_HNNZ]``); otherwise ``log`` is not touched. Returns the position in
    ``order`` reached: ``len(order)`` when done, less when the log is full (the caller
    makes room and calls again from there).
    """
    v, g, acc, u, fs, ist = w.v, w.g, w.acc, w.u, w.fs, w.ist
    h_start, h_stop, h_coef, h_rescale = log.start, log.stop, log.coef, log.rescale
    h_count, b_indices, b_data = log.count, log.indices, log.data
    logging = ist[I_LOG] != 0
    n_total = order.shape[0]
    d = v.shape[0]
    extra = 1 if aug != 0.0 else 0
    n_feat = d - extra
    sqrt_pm1 = np.sqrt(p - 1.0)
    threshold_scale = (1.0 - alpha) * B * sqrt_pm1
    cap_k = h_coef.shape[0]
    cap_nnz = b_data.shape[0]
    # the state, held in locals for the loop
    s, total, sigma_total, work, pending, sigma_w, k, hk, hn, trials = load_scalars(fs, ist)
    threshold = threshold_scale / np.sqrt(k)
    budget_out = 0
    pos = start
    while pos < n_total:
        r = order[pos]
        if is_sparse:
            lo = indptr[r]
            hi = indptr[r + 1]
            row_nnz = hi - lo
        else:
            lo = 0
            hi = 0
            row_nnz = n_feat
        xs = xscale[r]
        if xs < 0.0:
            if rule == RULE_ALMA:
                xs = row_scale(X, indptr, indices, data, is_sparse, r, aug, p)
            else:
                # not normalised: a zero row is only found (and marked) when it would
                # update, so that a trial costs the one dot product
                xs = 1.0
            xscale[r] = xs
        # Room in the log for a correction on this row?
        if logging and xs > 0.0 and (hk >= cap_k or hn + row_nnz + extra > cap_nnz):
            break
        if xs > 0.0:
            yt = y[r]
            # margin y_t w_k . x_hat_t with w = sigma * g
            if is_sparse:
                dot = 0.0
                for jj in range(lo, hi):
                    dot += g[indices[jj]] * data[jj]
            else:
                dot = np.dot(g[:n_feat], X[r])
            if extra:
                dot += g[d - 1] * aug
            margin = yt * sigma_w * dot * xs
            if rule == RULE_ALMA:
                update = margin <= threshold
            elif rule == RULE_MARGIN_PERCEPTRON:
                wnorm2 = s * s * total
                update = wnorm2 <= 0.0 or margin < 0.5 * gamma_guess * np.sqrt(wnorm2)
            elif rule == RULE_AGGRESSIVE_ROMMA:
                update = margin < 1.0 - delta
            else:
                update = margin <= 0.0
            x2 = 0.0
            if update and rule != RULE_ALMA and (dot == 0.0 or rule >= RULE_ROMMA):
                # ROMMA needs ||x||^2; the Perceptrons only to tell x = 0 (where dot = 0)
                x2 = _row_sqnorm(X, indptr, data, is_sparse, r, aug)
                if x2 == 0.0:
                    # x = 0 never updates (as in ALMA, Gentile's footnote 3)
                    update = False
                    xscale[r] = 0.0
            if update and 0 <= max_updates <= k - 1:
                budget_out = 1
                break
            if update:
                if rule == RULE_ALMA:
                    eta = C / (sqrt_pm1 * np.sqrt(k))
                    # theta' = theta + eta y x_hat, i.e. v += (eta y xs / s) x
                    coef = eta * yt * xs / s
                elif rule == RULE_ROMMA or rule == RULE_AGGRESSIVE_ROMMA:
                    wnorm2 = s * s * total
                    gap = x2 * wnorm2 - margin * margin
                    if wnorm2 <= 0.0 or margin >= x2 * wnorm2 or gap <= 1e-12 * x2 * wnorm2:
                        # only y w' . x >= 1 binds (or the two constraints contradict
                        # each other, x antiparallel to w): w' = y x / ||x||^2
                        _reset(v, g, acc, u, sigma_total, p)
                        sigma_total = 0.0
                        total = 0.0
                        work = 0.0
                        pending = 0.0
                        s = 1.0
                        coef = yt / x2
                    else:
                        s *= (x2 * wnorm2 - margin) / gap
                        coef = yt * wnorm2 * (1.0 - margin) / (gap * s)
                else:
                    coef = yt / s
                if logging:
                    h_coef[hk] = coef
                    h_rescale[hk] = pending
                    h_start[hk] = hn
                pending = 1.0
                touched = 0
                if is_sparse:
                    for jj in range(lo, hi):
                        i = indices[jj]
                        xv = data[jj]
                        total += _touch(i, coef * xv, v, g, u, sigma_total, p)
                        if logging:
                            b_indices[hn] = i
                            b_data[hn] = xv
                            hn += 1
                    touched = hi - lo
                else:
                    for j in range(n_feat):
                        xv = X[r, j]
                        if xv != 0.0:
                            total += _touch(j, coef * xv, v, g, u, sigma_total, p)
                            touched += 1
                            if logging:
                                b_indices[hn] = j
                                b_data[hn] = xv
                                hn += 1
                if extra:
                    total += _touch(d - 1, coef * aug, v, g, u, sigma_total, p)
                    touched += 1
                    if logging:
                        b_indices[hn] = d - 1
                        b_data[hn] = aug
                        hn += 1
                work += touched
                if work >= d:
                    total = _recompute(v, g, p)
                    work = 0.0
                if logging:
                    h_stop[hk] = hn
                hk += 1
                # w_(k+1) = w'_k / max(1, ||w'_k||_q), ||w'||_q = ||theta'||_p = s S^(1/p)
                if rule == RULE_ALMA and total > 0.0:
                    if p == 2.0:
                        norm = s * np.sqrt(total)
                    else:
                        norm = s * total ** (1.0 / p)
                    if norm > 1.0:
                        s /= norm
                k += 1
                threshold = threshold_scale / np.sqrt(k)
                if s < fold_below or s * fold_below > 1.0:
                    # fold s into v before S = sum |v|^p can overflow
                    _flush_average(g, acc, u, sigma_total)
                    sigma_total = 0.0
                    for i in range(d):
                        v[i] *= s
                    total = _recompute(v, g, p)
                    work = 0.0
                    pending *= s
                    s = 1.0
                sigma_w = _sigma(s, total, p)
        # this trial's post-trial hypothesis is the current one
        trials += 1
        if logging:
            h_count[hk] += 1
        sigma_total += sigma_w
        if sigma_w < FLUSH_RATIO * sigma_total:
            # sigma has become small against Sigma: restart Sigma before the
            # differences Sigma - last_i lose their digits
            _flush_average(g, acc, u, sigma_total)
            sigma_total = 0.0
        pos += 1
    store_scalars(fs, ist, s, total, sigma_total, work, pending, sigma_w, k, hk, hn, trials)
    ist[I_BUDGET] = budget_out
    return pos


@njit(**NUMBA_OPTS)
def replay_columns(log, first, stop, v, column, p, G, norms):
    """Rebuild the hypotheses after corrections ``first .. stop-1``, on some columns.

    Corrections ``first .. stop-1`` must all be logged in the block of ``log``. ``v``
    holds, on the chosen columns, v after correction ``first - 1`` and is advanced
    to ``stop - 1`` with the arithmetic of the passes (a rescale, then ``v_i +=
    coef x_i`` per non-zero), so that every value is the one training had.
    ``column[i]`` is the position of coordinate i among the chosen columns, -1 if it
    is not chosen. Row ``k - first`` of ``G`` receives g = sign(v)|v|^(p-1) after
    correction k (a positive multiple of w_(k+1)), ``norms`` its 2-norm.
    """
    m = v.shape[0]
    for k in range(first, stop):
        factor = log.rescale[k]
        if factor != 1.0:
            for j in range(m):
                v[j] *= factor
        c = log.coef[k]
        for jj in range(log.start[k], log.stop[k]):
            j = column[log.indices[jj]]
            if j >= 0:
                v[j] += c * log.data[jj]
        row = G[k - first]
        total = 0.0
        for j in range(m):
            t = _g_of(v[j], p)
            row[j] = t
            total += t * t
        norms[k - first] = np.sqrt(total)


@njit(inline="always", **NUMBA_OPTS)
def _two_sum(a, b):
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


@njit(inline="always", **NUMBA_OPTS)
def _two_product(a, b):
    """a b = p + e exactly (Dekker's product, no fused multiply-add needed)."""
    p = a * b
    factor = 134217729.0  # 2^27 + 1
    t = factor * a
    a_hi = t - (t - a)
    a_lo = a - a_hi
    t = factor * b
    b_hi = t - (t - b)
    b_lo = b - b_hi
    return p, a_lo * b_lo - (((p - a_hi * b_hi) - a_lo * b_hi) - a_hi * b_lo)


@njit(inline="always", **NUMBA_OPTS)
def _dot2_add(hi, lo, a, b):
    """(hi, lo) + a b, in Dot2's doubled precision."""
    prod, e = _two_product(a, b)
    hi, t = _two_sum(hi, prod)
    return hi, lo + (t + e)


@njit(**NUMBA_OPTS)
def _exact_value(g, X, indptr, indices, data, is_sparse, r, aug, aug_col, sigma, bias, biased):
    """``g . x_r`` (``sigma (g . x_r) + bias`` when ``biased``) by Dot2, over the row's
    non-zeros in column order and then the bias coordinate: the sign of the exact value
    unless the sum is ill-conditioned beyond about 1e16, and the same arithmetic for a
    row dense or sparse, alone or in a batch."""
    hi = 0.0
    lo = 0.0
    if is_sparse:
        for jj in range(indptr[r], indptr[r + 1]):
            if data[jj] != 0.0:
                hi, lo = _dot2_add(hi, lo, g[indices[jj]], data[jj])
    else:
        for j in range(X.shape[1]):
            if X[r, j] != 0.0:
                hi, lo = _dot2_add(hi, lo, g[j], X[r, j])
    if aug_col >= 0:
        hi, lo = _dot2_add(hi, lo, g[aug_col], aug)
    if not biased:
        return hi + lo
    p1, e1 = _two_product(sigma, hi)
    s1, t1 = _two_sum(p1, bias)
    return s1 + (t1 + e1 + sigma * lo)


@njit(**NUMBA_OPTS)
def cast_votes(P, G, norms, X, indptr, indices, data, is_sparse, x_norms, aug, aug_col, ranks):
    """Add ``sum_k counts[k] sign(value_k(x_r))`` to ``ranks`` for every row r.

    ``P[r, k]`` is ``g_k . x_r`` as a matrix product computed it (rows of X on the
    chosen columns, dense or CSR, against rows of G; the bias coordinate, column
    ``aug_col`` of G, holding ``aug``). ``ranks`` is a tuple ``(counts, sigma, bias,
    out)``: with a bias (``bias`` not empty) the value of hypothesis k is ``sigma[k]
    P[r, k] + bias[k]``, else ``P[r, k]``. A product's rounding moves it by less
    than ``TIE * ||g_k|| ||x_r||``; a value that close to 0 is computed again by
    :func:`_exact_value` (Ogita, Rump and Oishi's Dot2), whose sign is that of the
    exact value unless the sum is ill-conditioned beyond 1e16. So a row gets the same
    votes dense or sparse, alone or in a batch.
    """
    counts, sigma, bias, out = ranks
    n, K = P.shape
    biased = bias.shape[0] > 0
    m = G.shape[1]
    tol = max(TIE, 8.0 * (m + 2) * EPS)
    for r in range(n):
        total = 0.0
        for k in range(K):
            value = P[r, k]
            bound = tol * norms[k] * x_norms[r]
            sk = sigma[k] if biased else 1.0
            bk = bias[k] if biased else 0.0
            if biased:
                value = sk * value + bk
                bound = abs(sk) * bound + tol * abs(bk)
            if abs(value) <= bound:
                value = _exact_value(
                    G[k], X, indptr, indices, data, is_sparse, r, aug, aug_col, sk, bk, biased
                )
            if value > 0.0:
                total += counts[k]
            elif value < 0.0:
                total -= counts[k]
        out[r] += total


@njit(inline="always", **NUMBA_OPTS)
def _g_of(a, p):
    """g = sign(a)|a|^(p-1), as the passes compute it."""
    if p == 2.0:
        return a
    if a == 0.0:
        return 0.0
    t = power(abs(a), p - 1.0)
    return t if a > 0.0 else -t


@njit(**NUMBA_OPTS)
def vote_rows(log, first, stop, v, g, column, p, rows, cols, aug, aug_col, P, E, ranks):
    """The votes of hypotheses ``first+1 .. stop`` on sparse rows, kept up to date.

    For sparse rows this does less work than rebuilding every hypothesis (as
    ``replay_columns`` does for dense ones): ``v`` and ``g`` (on the rows' columns, as
    in ``replay_columns``) are advanced correction by correction, and ``P[r]``, the
    value of ``g . x_r``, by the change of each touched coordinate times the rows
    holding it (``cols``: the rows as CSC, ``rows``: as CSR, both over positions). The
    rounding of those running sums is bounded in ``E[r]``; a vote whose value is within
    its bound of 0 is decided by :func:`_exact_value`, which also restarts ``P[r]``.
    A rescale of v (a fold, or a fresh start) recomputes every ``P[r]`` exactly.
    ``ranks`` is ``(counts, sigma, bias, out)`` as in :func:`cast_votes`, indexed by
    correction.
    """
    counts, sigma, bias, out = ranks
    r_ptr, r_pos, r_val = rows
    c_ptr, c_row, c_val = cols
    n = P.shape[0]
    m = v.shape[0]
    biased = bias.shape[0] > 0
    empty = np.zeros((1, 1))
    for k in range(first, stop):
        factor = log.rescale[k]
        if factor != 1.0:
            for j in range(m):
                v[j] *= factor
                g[j] = _g_of(v[j], p)
            for r in range(n):
                P[r] = _exact_value(
                    g, empty, r_ptr, r_pos, r_val, True, r, aug, aug_col, 1.0, 0.0, False
                )
                E[r] = EPS * abs(P[r])
        c = log.coef[k]
        for jj in range(log.start[k], log.stop[k]):
            j = column[log.indices[jj]]
            if j < 0:
                continue
            v[j] += c * log.data[jj]
            new = _g_of(v[j], p)
            dg = new - g[j]
            g[j] = new
            if dg == 0.0:
                continue
            if j == aug_col:
                for r in range(n):
                    t = dg * aug
                    P[r] += t
                    E[r] += 2.0 * EPS * (abs(P[r]) + abs(t))
            else:
                for q in range(c_ptr[j], c_ptr[j + 1]):
                    r = c_row[q]
                    t = dg * c_val[q]
                    P[r] += t
                    E[r] += 2.0 * EPS * (abs(P[r]) + abs(t))
        sk = sigma[k] if biased else 1.0
        bk = bias[k] if biased else 0.0
        for r in range(n):
            value = sk * P[r] + bk if biased else P[r]
            bound = abs(sk) * E[r] + 2.0 * EPS * (abs(value) + abs(bk)) if biased else E[r]
            if abs(value) <= bound:
                value = _exact_value(
                    g, empty, r_ptr, r_pos, r_val, True, r, aug, aug_col, sk, bk, biased
                )
                P[r] = _exact_value(
                    g, empty, r_ptr, r_pos, r_val, True, r, aug, aug_col, 1.0, 0.0, False
                )
                E[r] = EPS * abs(P[r])
            if value > 0.0:
                out[r] += counts[k]
            elif value < 0.0:
                out[r] -= counts[k]
