"""Compiled pass of PUMMA_p(delta), the p-norm online maximum-margin algorithm with a bias.

Ishibashi, Hatano and Takeda, "Online Learning of Approximate Maximum p-Norm Margin
Classifiers with Bias" (COLT 2008). PUMMA keeps the last positive and the last negative
example it updated on, x+ and x-. A hyperplane (w, b) with y (w . x + b) >= 1 on both
satisfies w . z >= 1 with z = (x+ - x-) / 2, and the bias that balances them is

    b = -(w . x+ + w . x-) / 2.

On a trial with y (w . x + b) < 1 - delta the example replaces x+ or x-, and the new
weights solve

    min ||w'||_q^2 / 2   s.t.   f(w) . w' >= ||w||_q^2   and   z . w' >= 1,

with f the gradient of ||.||_q^2 / 2 (1/p + 1/q = 1): the first constraint relaxes all
the earlier ones, as in Li and Long's ROMMA (of which PUMMA at p = 2 is the version on
z). Its Lagrange dual is a concave problem in two variables,

    max_{a, c >= 0}  a ||w||_q^2 + c - ||a theta + c z||_p^2 / 2,    theta = f(w),

whose solution gives theta' = a theta + c z and w' = f^-1(theta'). At p = 2 it has a
closed form (both constraints binding, or only the second); otherwise the pass solves
it by Newton's method with a backtracking line search. Every sum over coordinates
that z does not touch is a power of ``a`` times a maintained total, so a Newton step
costs O(nnz(x+) + nnz(x-)), not O(d).

The state is that of :mod:`marginkit._core.linear` (theta = s v, g = sign(v)|v|^(p-1),
S = sum |v|^p, lazy average, correction log). The 2-norm soft margin replaces x_i . x_j
by x_i . x_j + lam [i = j]: every training example has a coordinate of its own
holding sqrt(lam) (sqrt(lam / c) for a row of weight c: its slack's loss weighed by c),
so that the weight vector has one more coordinate per support vector. Those slack
coordinates live in ``slack`` (indexed by row, v units), and only those of x+ and x-
change at an update.

Before both classes have been seen, the best hyperplane is w = 0 with b = y.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from . import NUMBA_INLINE, NUMBA_OPTS
from .linear import (
    F_GROWTH,
    F_MASS,
    F_STEP,
    I_LOG,
    _recompute,
    _reset,
    _sigma,
    _touch,
    copy_row,
    csr_dot,
    end_weighted_trial,
    fold_scale,
    load_scalars,
    power,
    rescale_average,
    row_arrays,
    row_weight,
    store_scalars,
    stored_count,
)
from .state import PNormState, resized

# Indices into the PUMMA float state ``pf``.
P_POS = 0  # w~ . x~+ (slack included)
P_NEG = 1  # w~ . x~-
P_BIAS = 2  # b
P_BIAS_SUM = 3  # sum over trials of b (for the averaged output)
P_SLACK_SUM = 4  # sum |xi|^p over the slack coordinates (v units)
P_XI_POS = 5  # slack coordinate of x+ (v units)
P_XI_NEG = 6  # slack coordinate of x-
P_W_POS = 7  # the weight of x+ (its soft-margin coordinate is sqrt(lam / weight))
P_W_NEG = 8  # the weight of x-
N_PSTATE = 9

# Indices into the PUMMA integer state ``pi``.
Q_POS_NNZ = 0
Q_NEG_NNZ = 1
Q_POS_ROW = 2  # row of x+ in the current data, -1 if none or from earlier data
Q_NEG_ROW = 3
Q_SEEN = 4  # bit 1: a positive seen, bit 2: a negative seen
Q_CONFLICTS = 5  # trials skipped because x equals the stored example of the other class
N_QSTATE = 6

NEWTON_MAX_ITER = 100
NEWTON_TOL = 1e-13

#: PUMMA_p(delta) with its 2-norm soft margin ``lam`` (0: the hard margin), as
#: :func:`pumma_pass` takes it; ``fold_below`` as in :data:`marginkit._core.linear.Norm`.
PUMMARule = namedtuple("PUMMARule", ["p", "delta", "lam", "fold_below"])

#: What PUMMA keeps beside the weights (:class:`PUMMAState`): the
#: scalar states ``pf`` (P_*) and ``pi`` (Q_*); x+ and x-, the last positive and
#: negative examples updated on, as their non-zeros (``pos_idx[:pi[Q_POS_NNZ]]``,
#: ``pos_val``; ``neg_*`` alike); ``slack``, the soft-margin coordinates of the rows of
#: the current data (one per row, v units); per logged correction k the hypothesis's
#: scale ``h_sigma[k]`` (w_(k+1) = h_sigma[k] g_(k+1)) and bias ``h_bias[k]``; and
#: ``newton_count[0]``, the Newton iterations made so far.
Support = namedtuple(
    "Support",
    ["pf", "pi", "pos_idx", "pos_val", "neg_idx", "neg_val", "slack", "h_sigma", "h_bias"]
    + ["newton_count"],
)

#: Scratch of :func:`pumma_pass` (:func:`new_work`): the new example's non-zeros
#: (``new_idx``, ``new_val``), z = (x+ - x-) / 2 gathered by coordinate (``scratch`` and
#: ``mark``, zero between trials), and theta and z on z's coordinates (``j_index``,
#: ``j_theta``, ``j_z``: room for 2 d + 2, the slack coordinates of x+ and x- included).
Work = namedtuple("Work", ["new_idx", "new_val", "scratch", "mark", "j_index", "j_theta", "j_z"])


def new_work(d):
    """Zeroed scratch of :func:`pumma_pass` for d weights (:data:`Work`)."""
    return Work(
        np.zeros(d, dtype=np.int64),
        np.zeros(d),
        np.zeros(d),
        np.zeros(d, dtype=np.int8),
        np.zeros(2 * d + 2, dtype=np.int64),
        np.zeros(2 * d + 2),
        np.zeros(2 * d + 2),
    )


@njit(**NUMBA_INLINE)
def _signed_power(a, e):
    """sign(a) |a|^e (0 at 0)."""
    if a == 0.0:
        return 0.0
    t = power(abs(a), e)
    return t if a > 0.0 else -t


@njit(**NUMBA_OPTS)
def _dual_terms(a, c, th, z, m, s_out, p):
    """Value pieces of phi(a, c) = ||a theta + c z||_p^2 / 2 over the coordinates of z.

    Returns (||u||_p, <theta, h>, <z, h>, <theta theta>, <theta z>, <z z>) where
    u = a theta + c z, h = sign(u)|u|^(p-1) and <e f> = sum e_i f_i |u_i|^(p-2). The
    coordinates outside z (where u = a theta) enter through ``s_out`` = sum |theta_i|^p.
    """
    ap = power(a, p)
    total = ap * s_out
    th_h = power(a, p - 1.0) * s_out
    z_h = 0.0
    tt = power(a, p - 2.0) * s_out if a > 0.0 else 0.0
    tz = 0.0
    zz = 0.0
    for i in range(m):
        ui = a * th[i] + c * z[i]
        au = abs(ui)
        if au == 0.0:
            continue
        w2 = power(au, p - 2.0)
        total += w2 * au * au
        hi = w2 * au if ui > 0.0 else -w2 * au
        th_h += th[i] * hi
        z_h += z[i] * hi
        tt += th[i] * th[i] * w2
        tz += th[i] * z[i] * w2
        zz += z[i] * z[i] * w2
    norm = total ** (1.0 / p) if total > 0.0 else 0.0
    return norm, th_h, z_h, tt, tz, zz


@njit(**NUMBA_OPTS)
def _gradient(a, c, th, z, m, s_out, W, p):
    """(dual value, gradient in a, gradient in c, the pieces of the Hessian)."""
    norm, th_h, z_h, tt, tz, zz = _dual_terms(a, c, th, z, m, s_out, p)
    if norm == 0.0:
        return a * W + c, W, 1.0, 0.0, 0.0, 0.0
    scale = power(norm, 2.0 - p) if p != 2.0 else 1.0
    ga = W - scale * th_h
    gc = 1.0 - scale * z_h
    # Hessian of phi: (p-1) N^(2-p) <e f> - (p-2) N^(2-2p) <e,h><f,h>
    k1 = (p - 1.0) * scale
    k2 = (p - 2.0) * scale / (norm**p) if p != 2.0 else 0.0
    haa = k1 * tt - k2 * th_h * th_h
    hac = k1 * tz - k2 * th_h * z_h
    hcc = k1 * zz - k2 * z_h * z_h
    return a * W + c - 0.5 * norm * norm, ga, gc, haa, hac, hcc


@njit(**NUMBA_OPTS)
def _best_c(a, th, z, m, s_out, W, p):
    """argmax over c >= 0 of the dual at fixed a: the root of its decreasing c-gradient."""
    lo = 0.0
    hi = 1.0
    while _gradient(a, hi, th, z, m, s_out, W, p)[2] > 0.0 and hi < 1e300:
        lo = hi
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _gradient(a, mid, th, z, m, s_out, W, p)[2] > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(**NUMBA_OPTS)
def _solve_nested(th, z, m, s_out, W, p):
    """The dual's maximiser by nested bisection: slow, but needs only its gradient.

    max_c D(a, c) is concave in a with derivative dD/da at (a, c*(a)), so both
    levels are bisections on a decreasing function. For 1 < p < 2, where the
    Hessian is unbounded near coordinates of a theta + c z that vanish.
    """
    lo = 0.0
    hi = 1.0
    while _gradient(hi, _best_c(hi, th, z, m, s_out, W, p), th, z, m, s_out, W, p)[1] > 0.0:
        lo = hi
        hi *= 2.0
        if hi > 1e300:
            break
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _gradient(mid, _best_c(mid, th, z, m, s_out, W, p), th, z, m, s_out, W, p)[1] > 0.0:
            lo = mid
        else:
            hi = mid
    a = 0.5 * (lo + hi)
    return a, _best_c(a, th, z, m, s_out, W, p)


@njit(**NUMBA_OPTS)
def solve_dual(th, z, m, s_out, W, p, a, c, counter):
    """Maximise a W + c - ||a theta + c z||_p^2 / 2 over a, c > 0 by damped Newton.

    ``th`` and ``z`` hold theta and z on the m coordinates of z; ``s_out`` is
    sum |theta_i|^p over the others. Starts from (a, c); returns the maximiser.
    ``counter[0]`` counts the iterations. Should Newton's method stall (possible for
    p < 2 only), nested bisection finishes the job.
    """
    value, ga, gc, haa, hac, hcc = _gradient(a, c, th, z, m, s_out, W, p)
    for it in range(NEWTON_MAX_ITER + 1):
        if abs(ga) <= NEWTON_TOL * max(W, 1.0) and abs(gc) <= NEWTON_TOL:
            break
        if it == NEWTON_MAX_ITER:
            return _solve_nested(th, z, m, s_out, W, p)
        counter[0] += 1
        det = haa * hcc - hac * hac
        if det > 0.0 and haa > 0.0 and np.isfinite(det):
            da = (hcc * ga - hac * gc) / det
            dc = (haa * gc - hac * ga) / det
        else:  # curvature lost (p < 2 near a zero coordinate): gradient ascent
            da = ga
            dc = gc
        slope = ga * da + gc * dc
        gnorm = (ga / max(W, 1.0)) ** 2 + gc * gc
        t = 1.0
        accepted = False
        for _ in range(60):
            na = a + t * da
            nc = c + t * dc
            if na > 0.0 and nc > 0.0:
                nv, nga, ngc, nhaa, nhac, nhcc = _gradient(na, nc, th, z, m, s_out, W, p)
                # the dual rises, or (near the optimum, where its changes are lost to
                # rounding) the gradient shrinks
                ngnorm = (nga / max(W, 1.0)) ** 2 + ngc * ngc
                if nv >= value + 1e-4 * t * slope or ngnorm < (1.0 - 1e-4 * t) * gnorm:
                    accepted = True
                    break
            t *= 0.5
        if not accepted or (na == a and nc == c):
            return _solve_nested(th, z, m, s_out, W, p)
        a, c = na, nc
        value, ga, gc, haa, hac, hcc = nv, nga, ngc, nhaa, nhac, nhcc
    return a, c


@njit(**NUMBA_OPTS)
def _parallel(th, z, m, s_out, s_all):
    """Whether theta is (to rounding) a multiple of z: zero off z's coordinates and
    parallel on them. ``s_out`` and ``s_all`` are sum |theta_i|^p off z and in all."""
    if s_out > 1e-12 * s_all:
        return False
    tt = 0.0
    tz = 0.0
    zz = 0.0
    for i in range(m):
        tt += th[i] * th[i]
        tz += th[i] * z[i]
        zz += z[i] * z[i]
    return tz * tz >= (1.0 - 1e-12) * tt * zz


@njit(**NUMBA_OPTS)
def _dot_g(g, idx, val, n):
    total = 0.0
    for jj in range(n):
        total += g[idx[jj]] * val[jj]
    return total


@njit(**NUMBA_INLINE)
def _gather(idx, val, n, factor, scratch, mark, j_index, m):
    """``scratch[i] += factor * val`` over the n non-zeros ``(idx, val)`` of an example:
    z = (x+ - x-) / 2 is gathered by coordinate, each coordinate met for the first time
    marked in ``mark`` and listed in ``j_index`` from m. Returns the number listed."""
    for jj in range(n):
        i = idx[jj]
        if mark[i] == 0:
            mark[i] = 1
            j_index[m] = i
            m += 1
        scratch[i] += factor * val[jj]
    return m


@njit(**NUMBA_OPTS)
def _closed_form(zn2, W, mz):
    """PUMMA's update at p = 2: ROMMA's closed form on z (Li and Long 2002, section 3).

    ``zn2`` is ||z||^2, ``W`` ||w||^2 and ``mz`` w . z. Returns ``(reset, a, c)``: the
    maximiser theta' = a theta + c z of the dual with both constraints binding, or
    ``reset`` where only z . w' >= 1 binds (or the two contradict each other, theta
    antiparallel to z).
    """
    gap = zn2 * W - mz * mz
    if mz >= zn2 * W or gap <= 1e-12 * zn2 * W:
        return True, 0.0, 0.0
    return False, (zn2 * W - mz) / gap, W * (1.0 - mz) / gap


@njit(**NUMBA_OPTS)
def _newton_update(th, z, m, s, total, s_in, W, mz, zq, p, counter):
    """PUMMA's update for any p: the dual's maximiser by :func:`solve_dual`.

    ``th`` and ``z`` hold theta and z on the m coordinates of z, ``s_in`` is
    sum |v_i|^p over them and ``total`` over all (S, theta = s v); ``W`` is
    ||theta||_p^2, ``mz`` w . z and ``zq`` ||z||_p^2; ``counter[0]`` counts Newton's
    iterations. Returns ``(reset, a, c)`` as :func:`_closed_form` does (with
    ``a = 0, c = 1 / zq`` on a reset): a reset where theta' = c z already satisfies
    f(w) . w' >= ||w||^2, where theta is parallel to z, or where the solver fails.
    """
    c = 1.0 / zq
    s_out = power(s, p) * max(total - s_in, 0.0)
    # does theta' = c z already satisfy f(w) . w' >= ||w||^2 ?
    norm0, th_h0, z_h0, tt0, tz0, zz0 = _dual_terms(0.0, c, th, z, m, s_out, p)
    if power(norm0, 2.0 - p) * th_h0 >= W or _parallel(th, z, m, s_out, power(s, p) * total):
        # theta parallel to z: one constraint implies the other, or they contradict
        # each other (as ROMMA's closed form)
        return True, 0.0, c
    a, c = solve_dual(th, z, m, s_out, W, p, 1.0, max(1.0 - mz, 1e-3) / zq, counter)
    if not (np.isfinite(a) and np.isfinite(c) and a > 0.0):
        return True, 0.0, 1.0 / zq
    return False, a, c


@njit(**NUMBA_OPTS)
def pumma_pass(rows, y, order, start, rule, w, log, support, work):
    """One pass of PUMMA_p(delta) over rows ``order[start:]``, on one binary problem.

    Ishibashi, Hatano and Takeda (COLT 2008): on a trial with y (w . x + b) < 1 - delta
    the example replaces x+ or x-, and the new weights maximise the two-variable dual
    of the module docstring (the closed form at p = 2, :func:`_closed_form`; Newton's
    method otherwise, :func:`_newton_update`); the bias balances x+ and x-.

    Parameters
    ----------
    rows : DenseRows or CsrRows
        The instances (:data:`marginkit._core.linear.DenseRows`, ``CsrRows``), without
        a bias coordinate (``aug`` = 0: PUMMA's bias is its own).
    y : ndarray of float64, shape (n,)
        +1 / -1 for every row of ``rows``.
    order : ndarray of int64
        The rows in the order of their trials.
    start : int
        The position in ``order`` to start from.
    rule : PUMMARule
        ``p``, ``delta`` (the final margin is at least 1 - delta times the best),
        ``lam`` (the 2-norm soft margin: x_i . x_j + lam [i = j]) and ``fold_below``
        (:data:`PUMMARule`).
    w : Weights
        The weights and scalar state (:data:`marginkit._core.linear.Weights`), updated in
        place.
    log : Log
        The correction log, as in :func:`marginkit._core.linear.linear_pass`.
    support : Support
        What PUMMA keeps beside the weights (:data:`Support`), updated in place: x+, x-,
        the bias, the slack coordinates of the rows (read and written when
        ``lam > 0``); a logged correction also records the hypothesis's scale and bias
        (``h_sigma``, ``h_bias``).
    work : Work
        Scratch (:func:`new_work`), left as it was found (``scratch`` and ``mark``
        zeroed).

    Returns
    -------
    int
        The position in ``order`` reached: less than ``len(order)`` when the log is full
        (the caller makes room and calls again from there).
    """
    v, g, acc, u, fs, ist = w.v, w.g, w.acc, w.u, w.fs, w.ist
    h_start, h_stop, h_coef, h_rescale = log.start, log.stop, log.coef, log.rescale
    h_count, b_indices, b_data = log.count, log.indices, log.data
    p, delta, lam, fold_below = rule.p, rule.delta, rule.lam, rule.fold_below
    pf, pi, slack = support.pf, support.pi, support.slack
    pos_idx, pos_val, neg_idx, neg_val = (
        support.pos_idx,
        support.pos_val,
        support.neg_idx,
        support.neg_val,
    )
    h_sigma, h_bias = support.h_sigma, support.h_bias
    new_idx, new_val, scratch, mark = work.new_idx, work.new_val, work.scratch, work.mark
    j_index, j_theta, j_z = work.j_index, work.j_theta, work.j_z
    X, indptr, indices, data = row_arrays(rows)
    logging = ist[I_LOG] != 0
    n_total = order.shape[0]
    d = v.shape[0]
    cap_k = h_coef.shape[0]
    cap_nnz = b_data.shape[0]
    s, total, sigma_total, work_done, pending, sigma_w, k, hk, hn, trials = load_scalars(fs, ist)
    growth, step, mass = fs[F_GROWTH], fs[F_STEP], fs[F_MASS]
    P = pf[P_POS]
    N = pf[P_NEG]
    bias = pf[P_BIAS]
    bias_sum = pf[P_BIAS_SUM]
    s_slack = pf[P_SLACK_SUM]
    xi_pos = pf[P_XI_POS]
    xi_neg = pf[P_XI_NEG]
    w_pos = pf[P_W_POS]
    w_neg = pf[P_W_NEG]
    # the soft-margin coordinates of x+ and x-: sqrt(lam / weight)
    l_pos = np.sqrt(lam / w_pos) if lam > 0.0 else 0.0
    l_neg = np.sqrt(lam / w_neg) if lam > 0.0 else 0.0
    pos_nnz = pi[Q_POS_NNZ]
    neg_nnz = pi[Q_NEG_NNZ]
    pos_row = pi[Q_POS_ROW]
    neg_row = pi[Q_NEG_ROW]
    seen = pi[Q_SEEN]
    pos = start
    while pos < n_total:
        r = order[pos]
        row_nnz = stored_count(rows, r)
        if logging and (hk >= cap_k or hn + row_nnz + max(pos_nnz, neg_nnz) > cap_nnz):
            break
        yt = y[r]
        # score y (w~ . x~ + b), the soft-margin coordinate of the row included
        if indptr.shape[0] == 0:
            dot = np.dot(g[: X.shape[1]], X[r])
        else:
            dot = csr_dot(indptr, indices, data, r, g)
        xi_r = slack[r] if lam > 0.0 else 0.0
        weight = row_weight(rows.weight, r)
        # the row's soft-margin coordinate: sqrt(lam / weight), its weighted loss
        l_r = np.sqrt(lam / weight) if lam > 0.0 else 0.0
        if xi_r != 0.0:
            dot += l_r * _signed_power(xi_r, p - 1.0)
        wx = sigma_w * dot
        if yt * (wx + bias) < 1.0 - delta:
            mine = 1 if yt > 0 else 2
            if (seen | mine) != 3:
                # one class so far: the example is stored, w = 0 and b = y
                seen |= mine
                if yt > 0:
                    pos_nnz = copy_row(rows, r, pos_idx, pos_val)
                    pos_row = r
                    xi_pos = xi_r
                    l_pos = l_r
                    w_pos = weight
                    P = wx
                else:
                    neg_nnz = copy_row(rows, r, neg_idx, neg_val)
                    neg_row = r
                    xi_neg = xi_r
                    l_neg = l_r
                    w_neg = weight
                    N = wx
                bias = yt
                if logging:
                    h_coef[hk] = 0.0
                    h_rescale[hk] = pending
                    h_start[hk] = hn
                    h_stop[hk] = hn
                    h_sigma[hk] = 0.0
                    h_bias[hk] = bias
                pending = 1.0
                hk += 1
                k += 1
            else:
                seen |= mine
                new_nnz = copy_row(rows, r, new_idx, new_val)
                # z = (x+ - x-) / 2 on its coordinates, with theta there
                m = _gather(new_idx, new_val, new_nnz, 0.5 * yt, scratch, mark, j_index, 0)
                if yt > 0:
                    m = _gather(neg_idx, neg_val, neg_nnz, -0.5 * yt, scratch, mark, j_index, m)
                else:
                    m = _gather(pos_idx, pos_val, pos_nnz, -0.5 * yt, scratch, mark, j_index, m)
                s_in = 0.0
                for jj in range(m):
                    i = j_index[jj]
                    j_z[jj] = scratch[i]
                    j_theta[jj] = s * v[i]
                    s_in += power(abs(v[i]), p)
                    scratch[i] = 0.0
                    mark[i] = 0
                n_plain = m
                xp = xi_r if yt > 0 else xi_pos
                xn = xi_neg if yt > 0 else xi_r
                lp = l_r if yt > 0 else l_pos
                ln = l_neg if yt > 0 else l_r
                if lam > 0.0:
                    for xi, sign, l_xi in ((xp, 0.5, lp), (xn, -0.5, ln)):
                        j_index[m] = -1
                        j_z[m] = sign * l_xi
                        j_theta[m] = s * xi
                        s_in += power(abs(xi), p)
                        m += 1
                zn2 = 0.0
                zp = 0.0
                for jj in range(m):
                    zn2 += j_z[jj] * j_z[jj]
                    zp += power(abs(j_z[jj]), p)
                if zp <= 0.0:
                    # x equals the stored example of the other class (and lam = 0): no
                    # hyperplane separates them, the trial is skipped
                    pi[Q_CONFLICTS] += 1
                else:
                    # commit: the example becomes x+ (or x-)
                    if yt > 0:
                        for jj in range(new_nnz):
                            pos_idx[jj] = new_idx[jj]
                            pos_val[jj] = new_val[jj]
                        pos_nnz = new_nnz
                        pos_row = r
                        w_pos = weight
                        P = wx
                    else:
                        for jj in range(new_nnz):
                            neg_idx[jj] = new_idx[jj]
                            neg_val[jj] = new_val[jj]
                        neg_nnz = new_nnz
                        neg_row = r
                        w_neg = weight
                        N = wx
                    xi_pos = xp
                    xi_neg = xn
                    l_pos = lp
                    l_neg = ln
                    zq = zp ** (2.0 / p)  # ||z||_p^2
                    W = s * s * total ** (2.0 / p) if total > 0.0 else 0.0  # ||theta||_p^2
                    mz = 0.5 * (P - N)  # w . z
                    # only z . w' >= 1 binding: theta' = z / ||z||_p^2
                    reset = W <= 0.0
                    a = 0.0
                    c = 1.0 / zq
                    if not reset and p == 2.0:
                        both, a2, c2 = _closed_form(zn2, W, mz)
                        reset = both  # only z . w' >= 1 binds
                        if not reset:
                            a, c = a2, c2
                    elif not reset:
                        reset, a, c = _newton_update(
                            j_theta, j_z, m, s, total, s_in, W, mz, zq, p, support.newton_count
                        )
                    if logging:
                        h_start[hk] = hn
                    if reset:
                        _reset(v, g, acc, u, sigma_total, p)
                        sigma_total = 0.0
                        if lam > 0.0:
                            for i in range(slack.shape[0]):
                                slack[i] = 0.0
                        xi_pos = 0.0
                        xi_neg = 0.0
                        s_slack = 0.0
                        total = 0.0
                        work_done = 0.0
                        pending = 0.0
                        s = 1.0
                        coef = c
                    else:
                        s *= a
                        coef = c / s
                    if logging:
                        h_coef[hk] = coef
                        h_rescale[hk] = pending
                    pending = 1.0
                    for jj in range(n_plain):
                        i = j_index[jj]
                        total += _touch(i, coef * j_z[jj], v, g, u, sigma_total, p)
                        if logging:
                            b_indices[hn] = i
                            b_data[hn] = j_z[jj]
                            hn += 1
                    work_done += n_plain
                    if lam > 0.0:
                        old = power(abs(xi_pos), p) + power(abs(xi_neg), p)
                        xi_pos += coef * 0.5 * l_pos
                        xi_neg -= coef * 0.5 * l_neg
                        change = power(abs(xi_pos), p) + power(abs(xi_neg), p) - old
                        s_slack += change
                        total += change
                        if pos_row >= 0:
                            slack[pos_row] = xi_pos
                        if neg_row >= 0:
                            slack[neg_row] = xi_neg
                    if work_done >= d:
                        total = _recompute(v, g, p) + s_slack
                        work_done = 0.0
                    # w_k = sigma_k g_k in the units of v before a fold (those of the log)
                    if logging:
                        h_sigma[hk] = _sigma(s, total, p)
                    if s < fold_below or s * fold_below > 1.0:
                        total = fold_scale(v, g, acc, u, s, sigma_total, p)
                        sigma_total = 0.0
                        if lam > 0.0:
                            for i in range(slack.shape[0]):
                                slack[i] *= s
                            xi_pos *= s
                            xi_neg *= s
                            s_slack *= power(s, p)
                        total += s_slack
                        work_done = 0.0
                        pending *= s
                        s = 1.0
                    sigma_w = _sigma(s, total, p)
                    # w' . x+ and w' . x- (slack included), and the bias between them
                    P = sigma_w * _dot_g(g, pos_idx, pos_val, pos_nnz)
                    N = sigma_w * _dot_g(g, neg_idx, neg_val, neg_nnz)
                    if lam > 0.0:
                        P += sigma_w * l_pos * _signed_power(xi_pos, p - 1.0)
                        N += sigma_w * l_neg * _signed_power(xi_neg, p - 1.0)
                    bias = -0.5 * (P + N)
                    if logging:
                        h_stop[hk] = hn
                        h_bias[hk] = bias
                    hk += 1
                    k += 1
        # the bias joins its average with the trial's weight (1 without a horizon)
        bias_sum += bias * growth
        trials, sigma_total, growth, mass, restart = end_weighted_trial(
            trials, sigma_total, sigma_w, growth, step, mass
        )
        if restart:
            if growth != 1.0:
                bias_sum /= growth
            sigma_total, growth, mass = rescale_average(g, acc, u, sigma_total, growth, mass)
        if logging:
            h_count[hk] += 1
        pos += 1
    store_scalars(fs, ist, s, total, sigma_total, work_done, pending, sigma_w, k, hk, hn, trials)
    fs[F_GROWTH], fs[F_MASS] = growth, mass
    pf[P_POS] = P
    pf[P_NEG] = N
    pf[P_BIAS] = bias
    pf[P_BIAS_SUM] = bias_sum
    pf[P_SLACK_SUM] = s_slack
    pf[P_XI_POS] = xi_pos
    pf[P_XI_NEG] = xi_neg
    pf[P_W_POS] = w_pos
    pf[P_W_NEG] = w_neg
    pi[Q_POS_NNZ] = pos_nnz
    pi[Q_NEG_NNZ] = neg_nnz
    pi[Q_POS_ROW] = pos_row
    pi[Q_NEG_ROW] = neg_row
    pi[Q_SEEN] = seen
    return pos


class PUMMAState(PNormState):
    """:class:`PNormState` plus what PUMMA keeps: x+, x-, the bias, the slack coordinates."""

    PER_CORRECTION = ("h_sigma", "h_bias")

    def __init__(self, d, p, keep_log=True, cap_k=64, horizon=None):
        super().__init__(d, p, keep_log, cap_k, horizon)
        self.h_sigma = np.zeros(self.h_coef.shape[0])
        self.h_bias = np.zeros(self.h_coef.shape[0])
        self.pf = np.zeros(N_PSTATE)
        self.pf[[P_W_POS, P_W_NEG]] = 1.0  # no x+ or x- yet: weights of 1
        self.pi = np.zeros(N_QSTATE, dtype=np.int64)
        self.pi[Q_POS_ROW] = -1
        self.pi[Q_NEG_ROW] = -1
        self.pos_idx = np.zeros(d, dtype=np.int64)
        self.pos_val = np.zeros(d)
        self.neg_idx = np.zeros(d, dtype=np.int64)
        self.neg_val = np.zeros(d)
        self.newton_count = np.zeros(1, dtype=np.int64)

    def support(self, slack):
        """What PUMMA keeps beside the weights, with the slack coordinates ``slack`` of
        the current data, as :func:`marginkit._core.pumma.pumma_pass` takes it."""
        return Support(
            self.pf,
            self.pi,
            self.pos_idx,
            self.pos_val,
            self.neg_idx,
            self.neg_val,
            slack,
            self.h_sigma,
            self.h_bias,
            self.newton_count,
        )

    def make_room(self, row_nnz):
        super().make_room(row_nnz)
        cap = self.h_coef.shape[0]
        if self.h_sigma.shape[0] < cap:
            self.h_sigma = resized(self.h_sigma, cap)
            self.h_bias = resized(self.h_bias, cap)

    def new_data(self, n_rows):
        """Rows of new data are new examples: no row holds x+ or x- any more."""
        self.pi[Q_POS_ROW] = -1
        self.pi[Q_NEG_ROW] = -1
        return np.zeros(n_rows)

    @property
    def bias(self):
        return float(self.pf[P_BIAS])

    def avg_bias(self):
        n = self.trial_weight()
        return float(self.pf[P_BIAS_SUM]) / n if n else 0.0

    SAVED = (
        *PNormState.SAVED,
        *("h_sigma", "h_bias", "pf", "pi", "pos_idx", "pos_val", "neg_idx", "neg_val"),
        "newton_count",
    )

    def __setstate__(self, state):
        pf = state.get("pf")
        if isinstance(pf, np.ndarray) and pf.dtype == np.float64 and pf.shape == (7,):
            # saved before weights: x+ and x- weighed 1
            state = dict(state)
            state["pf"] = np.concatenate([pf, [1.0, 1.0]])
        super().__setstate__(state)
