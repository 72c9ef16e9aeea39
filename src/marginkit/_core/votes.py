"""The voted output of the p-norm passes (Freund and Schapire 1999): every hypothesis of
the correction log (:data:`marginkit._core.linear.Log`) replayed, and its vote cast by
exact signs (the products summed in double-double, so that a vote never depends on
rounding).
"""

import numpy as np
from numba import njit

from . import NUMBA_INLINE, NUMBA_OPTS
from .linear import by_format, power

# A vote whose value is within this fraction of ||g|| ||x|| of 0 is computed again
# exactly enough to be sure of its sign (see ``cast_votes``).
TIE = 1e-10
EPS = 2.220446049250313e-16  # float64's machine epsilon


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


@njit(**NUMBA_INLINE)
def _two_sum(a, b):
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


@njit(**NUMBA_INLINE)
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


@njit(**NUMBA_INLINE)
def _dot2_add(hi, lo, a, b):
    """(hi, lo) + a b, in Dot2's doubled precision."""
    prod, e = _two_product(a, b)
    hi, t = _two_sum(hi, prod)
    return hi, lo + (t + e)


def _dense_exact_dot(rows, r, g):
    hi = 0.0
    lo = 0.0
    X = rows.X
    for j in range(X.shape[1]):
        if X[r, j] != 0.0:
            hi, lo = _dot2_add(hi, lo, g[j], X[r, j])
    return hi, lo


def _csr_exact_dot(rows, r, g):
    hi = 0.0
    lo = 0.0
    for jj in range(rows.indptr[r], rows.indptr[r + 1]):
        if rows.data[jj] != 0.0:
            hi, lo = _dot2_add(hi, lo, g[rows.indices[jj]], rows.data[jj])
    return hi, lo


@by_format(_dense_exact_dot, _csr_exact_dot)
def exact_dot(rows, r, g):
    """``g . x_r`` over the non-zeros of row r in column order, in Dot2's doubled
    precision: ``(hi, lo)``, the bias coordinate left out."""
    raise NotImplementedError("compiled only")


@njit(**NUMBA_OPTS)
def _exact_value(g, rows, r, aug_col, sigma, bias, biased):
    """``g . x_r`` (``sigma (g . x_r) + bias`` when ``biased``) by Dot2, over the row's
    non-zeros in column order and then the bias coordinate (``rows.aug`` at column
    ``aug_col`` of ``g``, none when it is -1): the sign of the exact value unless the sum
    is ill-conditioned beyond about 1e16, and the same arithmetic for a row dense or
    sparse, alone or in a batch."""
    hi, lo = exact_dot(rows, r, g)
    if aug_col >= 0:
        hi, lo = _dot2_add(hi, lo, g[aug_col], rows.aug)
    if not biased:
        return hi + lo
    p1, e1 = _two_product(sigma, hi)
    s1, t1 = _two_sum(p1, bias)
    return s1 + (t1 + e1 + sigma * lo)


@njit(**NUMBA_OPTS)
def cast_votes(P, hypotheses, rows, x_norms, aug_col, ranks):
    """Add ``sum_k counts[k] sign(value_k(x_r))`` to ``ranks`` for every row r.

    ``P[r, k]`` is ``g_k . x_r`` as a matrix product computed it (``rows``, a
    :data:`DenseRows` or :data:`CsrRows` on the chosen columns, against the rows of G,
    ``hypotheses = (G, norms)`` with ``norms`` their 2-norms; the bias coordinate, column
    ``aug_col`` of G (-1: none), holding ``rows.aug``); ``x_norms[r]`` is
    ``||(x_r, aug)||_2``. ``ranks`` is a tuple ``(counts, sigma, bias,
    out)``: with a bias (``bias`` not empty) the value of hypothesis k is ``sigma[k]
    P[r, k] + bias[k]``, else ``P[r, k]``. A product's rounding moves it by less
    than ``TIE * ||g_k|| ||x_r||``; a value that close to 0 is computed again by
    :func:`_exact_value` (Ogita, Rump and Oishi's Dot2), whose sign is that of the
    exact value unless the sum is ill-conditioned beyond 1e16. So a row gets the same
    votes dense or sparse, alone or in a batch.
    """
    counts, sigma, bias, out = ranks
    G, norms = hypotheses
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
                value = _exact_value(G[k], rows, r, aug_col, sk, bk, biased)
            if value > 0.0:
                total += counts[k]
            elif value < 0.0:
                total -= counts[k]
        out[r] += total


@njit(**NUMBA_INLINE)
def _g_of(a, p):
    """g = sign(a)|a|^(p-1), as the passes compute it."""
    if p == 2.0:
        return a
    if a == 0.0:
        return 0.0
    t = power(abs(a), p - 1.0)
    return t if a > 0.0 else -t


@njit(**NUMBA_OPTS)
def vote_rows(log, span, hypothesis, rows, cols, aug_col, sums, ranks):
    """The votes of hypotheses ``first+1 .. stop`` on sparse rows, kept up to date.

    For sparse rows this does less work than rebuilding every hypothesis (as
    ``replay_columns`` does for dense ones): ``hypothesis = (v, g, column, p)``, v and
    g on the rows' columns as in ``replay_columns``, is advanced correction by
    correction (corrections ``span = (first, stop)`` of the block of ``log``), and
    ``P[r]``, the value of ``g . x_r``, by the change of each touched coordinate times
    the rows holding it (``cols``: the rows as CSC ``(indptr, row, value)``, ``rows``: as
    :data:`CsrRows`, both over positions; the bias coordinate, position ``aug_col`` or
    -1 for none, holding ``rows.aug``). The rounding of those running sums is bounded in
    ``E[r]`` (``sums = (P, E)``); a vote whose value is within its bound of 0 is
    decided by :func:`_exact_value`, which also restarts ``P[r]``. A rescale of v (a
    fold, or a fresh start) recomputes every ``P[r]`` exactly. ``ranks`` is ``(counts,
    sigma, bias, out)`` as in :func:`cast_votes`, indexed by correction.
    """
    counts, sigma, bias, out = ranks
    first, stop = span
    v, g, column, p = hypothesis
    P, E = sums
    aug = rows.aug
    c_ptr, c_row, c_val = cols
    n = P.shape[0]
    m = v.shape[0]
    biased = bias.shape[0] > 0
    for k in range(first, stop):
        factor = log.rescale[k]
        if factor != 1.0:
            for j in range(m):
                v[j] *= factor
                g[j] = _g_of(v[j], p)
            for r in range(n):
                P[r] = _exact_value(g, rows, r, aug_col, 1.0, 0.0, False)
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
                value = _exact_value(g, rows, r, aug_col, sk, bk, biased)
                P[r] = _exact_value(g, rows, r, aug_col, 1.0, 0.0, False)
                E[r] = EPS * abs(P[r])
            if value > 0.0:
                out[r] += counts[k]
            elif value < 0.0:
                out[r] -= counts[k]
