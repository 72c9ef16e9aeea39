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

With a horizon H (``fs[F_HORIZON]``), the averaged output weighs the hypothesis
after trial t by ``beta^(T - t)``, ``beta = 1 - 1 / H``, T the trials so far: an
exponential average over about the last H trials, for a stream that changes. The
same lazy sums keep it without any decay step: trial t adds its hypothesis times a
growing weight ``G_t = beta^-t`` (``fs[F_GROWTH]``, times ``fs[F_STEP] = 1 / beta``
after each trial), and the output is the sum divided by the trials' total weight
``sum_t G_t`` (``fs[F_MASS]``), both in the units of G. When G passes
``GROWTH_LIMIT``, the sums are flushed and divided by it (G back to 1), an O(d)
step every ``200 ln 2 H`` trials or so. Without a horizon G is 1 throughout and the
sums are those above, bit for bit.

For p = 2, g is v itself: callers pass the same array for both.

When the state keeps its log (``ist[I_LOG]``), every correction is logged (the
instance's non-zeros and the coefficient added to v), so that the voted output
sum_k c_k sign(w_k . x) can be replayed after training without keeping a copy of any
hypothesis. Without it a pass writes nothing per trial or correction but the weights:
memory is O(d) however long the stream.

No fastmath: a reordered sum could flip which trial triggers a correction.
"""

import inspect
from collections import namedtuple
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from . import NUMBA_INLINE, NUMBA_OPTS

# Indices into the float state vector ``fs``.
F_S = 0  # scale s, theta = s * v
F_SUM = 1  # S = sum |v_i|^p
F_SIGMA = 2  # sum over trials of sigma (for the averaged output)
F_WORK = 3  # coordinates touched since S was last recomputed
F_PENDING = 4  # factor v was multiplied by since the last logged correction
F_SIGMA_W = 5  # current sigma = s / S^((p-2)/p), 0 while w = 0
F_SLACK = 6  # ROMMA's soft margin: sum of the squared slack coordinates (v units)
F_SLACK_WORK = 7  # slack coordinates changed since that sum was last recomputed
F_GROWTH = 8  # weight of the next trial in the averaging sums (1 without a horizon)
F_STEP = 9  # what F_GROWTH is multiplied by after each trial: 1 / (1 - 1 / horizon)
F_MASS = 10  # the trials' total weight in the averaging sums (with a horizon)
F_HORIZON = 11  # the horizon of the averaged output; 0: every trial (no horizon)
N_FSTATE = 12

# Indices into the integer state vector ``ist``.
I_K = 0  # k of Figure 1: corrections so far + 1
I_NHIST = 1  # corrections logged
I_HNNZ = 2  # non-zeros logged
I_BUDGET = 3  # 1 when the last pass stopped because an update exceeded max_updates
I_TRIALS = 4  # trials so far
I_LOG = 5  # 1 when corrections are logged (for the voted output)
N_ISTATE = 6

#: No slack coordinates kept per row (see :data:`Weights`).
NO_SLACK = np.zeros(0)  # writable: a pass that may write slack compiles once

#: The learned numbers of one binary problem, as the compiled passes take them:
#: v (theta = s v), g = sign(v)|v|^(p-1) (v itself for p = 2), the averaging
#: accumulators acc and u, the scalar states ``fs`` (F_*) and ``ist`` (I_*), and
#: ``slack``, ROMMA's soft-margin coordinates of the rows of the data in memory (v
#: units, one per row and kept across the passes of a fit; empty for a stream, whose
#: every trial is an example of its own, see :func:`linear_pass`).
Weights = namedtuple("Weights", ["v", "g", "acc", "u", "fs", "ist", "slack"])

#: The correction log (kept only with ``ist[I_LOG]``): per correction k, the
#: coefficient added to v, the factor v was rescaled by just before it, the span
#: ``start[k]:stop[k]`` of its instance's non-zeros in ``indices, data`` (the current
#: block), and ``count[k + 1]``, the trials hypothesis k + 1 survived.
Log = namedtuple("Log", ["start", "stop", "coef", "rescale", "count", "indices", "data"])

# Sigma restarts from 0 (an O(d) flush) when a trial adds less than this fraction
# to it, so that Sigma g - u keeps at least 12 significant digits.
FLUSH_RATIO = 1e-4

#: With a horizon, the averaging sums are rescaled to a trial weight of 1 (an O(d)
#: step) when the weight of the next trial passes this, far from float64's overflow.
GROWTH_LIMIT = 2.0**200


def horizon_of(value):
    """A ``horizon`` parameter as the states keep it: a float, or None."""
    return None if value is None else float(value)


def growth_step(horizon):
    """What the weight of a trial in the averaging sums is multiplied by after it:
    ``1 / (1 - 1 / horizon)`` (module docstring), 1 without a horizon (None)."""
    return 1.0 if horizon is None else 1.0 / (1.0 - 1.0 / horizon)


def weights_follow(horizon, growth, step, mass):
    """Whether averaging weights as a saved state holds them follow from its horizon
    (None: none): the growth per trial :func:`growth_step`'s, the weight of the next
    trial from 1 up to past its limit by one step (1 without a horizon), the trials'
    total weight >= 0."""
    top = GROWTH_LIMIT * step if horizon is not None else 1.0
    ok = horizon is None or horizon > 1.0
    return ok and step == growth_step(horizon) and 1.0 <= growth <= top and mass >= 0


# Update rules of ``linear_pass``: the same state, log and averaging serve them all.
RULE_ALMA = 0  # Gentile (2001), Figure 1: normalised instances, projection onto the ball
RULE_PERCEPTRON = 1  # Rosenblatt: w += y x on y w . x <= 0
RULE_MARGIN_PERCEPTRON = 2  # w += y x while y w . x / ||w|| < gamma / 2
RULE_ROMMA = 3  # Li and Long (2002): relaxed projection on y w . x <= 0
RULE_AGGRESSIVE_ROMMA = 4  # the same projection whenever y w . x < 1 - delta


class Rule(NamedTuple):
    """An update rule and its parameters, as the estimators hand them to the compiled
    walks (:func:`linear_pass`, :func:`marginkit._core.kernel.walk.kernel_walk`); a rule
    reads only its own: ALMA ``alpha, B, C``, the margin Perceptron ``gamma_guess``
    and ``max_updates``, aggressive ROMMA ``delta``, both ROMMAs ``lam`` (their 2-norm
    soft margin in :func:`linear_pass`, in the model's units; 0: the hard margin).

    ``max_updates`` is the margin Perceptron's budget (the 12 R^2 / gamma_guess^2
    updates after which a guess is halved, see
    :class:`~marginkit.MarginPerceptronClassifier`): :func:`linear_pass` stops, before
    updating, at a trial that would make correction ``max_updates + 1``; -1 for none.
    """

    kind: int
    alpha: float = 0.0
    B: float = 0.0
    C: float = 0.0
    gamma_guess: float = 0.0
    delta: float = 0.0
    max_updates: int = -1
    lam: float = 0.0


#: The geometry of a p-norm pass: the norm ``p`` of the instances (the weights live in
#: the dual q-norm), and ``fold_below``, the scale s of theta = s v outside
#: ``[fold_below, 1 / fold_below]`` at which the pass folds s into v before
#: S = sum |v|^p can overflow (``s^p`` near 1e-200).
Norm = namedtuple("Norm", ["p", "fold_below"])


# -- one row reader for dense and CSR rows ----------------------------------------------
# The passes read a row through the functions below, which numba compiles once per
# format: a pass holds no branch on the format, and each format keeps the arithmetic
# (and so every rounding) it always had.

#: The weights of rows that have none: every row weighs 1 (see :data:`DenseRows`).
UNWEIGHTED = np.zeros(0)
UNWEIGHTED.flags.writeable = False

#: Dense rows: ``X`` (n, n_features), C-contiguous float64. ``aug`` != 0 appends a
#: constant coordinate holding ``aug`` to every row (the (x, -R) bias augmentation, at
#: index d - 1 of the weights); ``xscale[r]`` caches ``1 / ||(x_r, aug)||_p`` (ALMA's
#: normalisation; 1 for the rules that do not normalise; 0 for a zero row, which never
#: updates; negative for "not computed yet", filled in by the pass). ``weight[r] > 0``
#: is row r's weight (``sample_weight`` times its class's weight), which scales its
#: update (see :func:`linear_pass`); empty when every row weighs 1.
DenseRows = namedtuple("DenseRows", ["X", "aug", "xscale", "weight"], defaults=(UNWEIGHTED,))

#: CSR rows: row r holds the values ``data[indptr[r]:indptr[r + 1]]`` at the columns
#: ``indices[...]`` (unsigned, so that numba skips its negative-index wraparound),
#: explicit zeros included. ``aug``, ``xscale`` and ``weight`` as in :data:`DenseRows`.
CsrRows = namedtuple(
    "CsrRows", ["indptr", "indices", "data", "aug", "xscale", "weight"], defaults=(UNWEIGHTED,)
)


def read_only(a):
    """``a`` if it is read-only, else a read-only view of it.

    The passes only read the rows and their weights. numba compiles a pass once per
    argument type, and a writeable and a read-only array are two types; input arrives
    as either (a user's array, a memory map, :data:`UNWEIGHTED`), so the passes are
    handed read-only arrays only: one compiled pass per format, not four."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def row_weights(weight, rows):
    """The weights of ``rows`` (:data:`UNWEIGHTED` where ``weight`` is None), read-only."""
    return UNWEIGHTED if weight is None else read_only(weight[rows])


def rows_of(batch):
    """The rows of a batch (``X``, or ``indptr, indices, data`` where ``is_sparse``, and
    ``aug``, ``xscale``, ``weight``) as the passes read them: :data:`DenseRows` or
    :data:`CsrRows`, read-only (:func:`read_only`) but for ``xscale``, which the passes
    fill in."""
    weight = read_only(batch.weight)
    if batch.is_sparse:
        indptr, data = read_only(batch.indptr), read_only(batch.data)
        return CsrRows(indptr, read_only(batch.indices), data, batch.aug, batch.xscale, weight)
    return DenseRows(read_only(batch.X), batch.aug, batch.xscale, weight)


@njit(**NUMBA_INLINE)
def row_weight(weight, r):
    """Row r's weight: ``weight[r]``, or 1 where ``weight`` is empty (no weights)."""
    return weight[r] if weight.shape[0] > 0 else 1.0


def by_format(dense, sparse):
    """Make the stub it decorates a compiled function of ``(rows, ...)`` that runs
    ``dense`` on :data:`DenseRows` and ``sparse`` on :data:`CsrRows` (inlined)."""

    def decorate(stub):
        def choose(rows, *args):
            if isinstance(rows, types.BaseNamedTuple):
                if rows.instance_class is DenseRows:
                    return dense
                if rows.instance_class is CsrRows:
                    return sparse
            return None

        choose.__signature__ = inspect.signature(stub)
        overload(stub, inline="always")(choose)
        return stub

    return decorate


def _dense_count(rows, r):
    return rows.X.shape[1]


def _csr_count(rows, r):
    return rows.indptr[r + 1] - rows.indptr[r]


@by_format(_dense_count, _csr_count)
def stored_count(rows, r):
    """The number of values row r stores: every column of a dense row, the non-zeros
    (explicit zeros included) of a CSR row; the bias coordinate not counted."""
    raise NotImplementedError("compiled only")


def _dense_values(rows, r):
    return rows.X[r]


def _csr_values(rows, r):
    return rows.data[rows.indptr[r] : rows.indptr[r + 1]]


@by_format(_dense_values, _csr_values)
def stored_values(rows, r):
    """The values row r stores (a view), in column order."""
    raise NotImplementedError("compiled only")


#: The arrays a format does not have, in :func:`row_arrays`
_NO_ROWS = np.zeros((0, 0))
_NO_INDPTR = np.zeros(0, dtype=np.int64)
_NO_INDICES = np.zeros(0, dtype=np.uint32)
_NO_DATA = np.zeros(0)


def _dense_arrays(rows):
    return rows.X, _NO_INDPTR, _NO_INDICES, _NO_DATA


def _csr_arrays(rows):
    return _NO_ROWS, rows.indptr, rows.indices, rows.data


@by_format(_dense_arrays, _csr_arrays)
def row_arrays(rows):
    """``(X, indptr, indices, data)`` of the rows, as the passes read them: the dense rows
    and empty CSR arrays, or an empty ``X`` and the CSR arrays. A pass takes them once,
    before its loop: numba counts the references of every array of a bundle handed to a
    function at each call, which at every trial cost the sparse pass a third of its
    time."""
    raise NotImplementedError("compiled only")


def _dense_copy(rows, r, out_idx, out_val):
    X = rows.X
    n = 0
    for j in range(X.shape[1]):
        if X[r, j] != 0.0:
            out_idx[n] = j
            out_val[n] = X[r, j]
            n += 1
    return n


def _csr_copy(rows, r, out_idx, out_val):
    n = 0
    for jj in range(rows.indptr[r], rows.indptr[r + 1]):
        if rows.data[jj] != 0.0:
            out_idx[n] = rows.indices[jj]
            out_val[n] = rows.data[jj]
            n += 1
    return n


@by_format(_dense_copy, _csr_copy)
def copy_row(rows, r, out_idx, out_val):
    """The non-zeros of row r (in column order) into ``(out_idx, out_val)``; returns
    their number."""
    raise NotImplementedError("compiled only")


@njit(**NUMBA_INLINE)
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
    """acc += Sigma g - u and u = 0: the lazy average restarts with Sigma = 0, which
    it returns."""
    for i in range(g.shape[0]):
        acc[i] += sigma_total * g[i] - u[i]
        u[i] = 0.0
    return 0.0


@njit(**NUMBA_INLINE)
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


@njit(**NUMBA_INLINE)
def row_scale(rows, r, p):
    """1 / ||(x_r, aug)||_p, or 0 for the zero vector; overflow-safe for large p."""
    norm = scaled_norm(stored_values(rows, r), p)
    aug = rows.aug
    if aug != 0.0:
        a = abs(aug)
        big = max(norm, a)
        if p == 2.0:
            norm = big * np.sqrt((norm / big) ** 2 + (a / big) ** 2)
        else:
            norm = big * ((norm / big) ** p + (a / big) ** p) ** (1.0 / p)
    return 1.0 / norm if norm > 0.0 else 0.0


@njit(**NUMBA_INLINE)
def sum_squares(vals):
    """``vals . vals`` summed in one fixed order (four running sums, then their pairs):
    BLAS's ``ddot`` rounds differently by CPU kernel and by the alignment of ``vals``,
    so that a row's norm would differ between a file read in chunks and the same rows
    in memory; the order here is the same for every row wherever it lies."""
    n = vals.shape[0]
    t0 = t1 = t2 = t3 = 0.0
    m = n - n % 4
    for i in range(0, m, 4):
        t0 += vals[i] * vals[i]
        t1 += vals[i + 1] * vals[i + 1]
        t2 += vals[i + 2] * vals[i + 2]
        t3 += vals[i + 3] * vals[i + 3]
    for i in range(m, n):
        t0 += vals[i] * vals[i]
    return (t0 + t1) + (t2 + t3)


@njit(**NUMBA_INLINE)
def scaled_norm(vals, p):
    """p-norm of a vector, dividing by its largest magnitude first when needed."""
    # one pass when the plain sum of powers neither overflows nor underflows
    if p == 2.0:
        total = sum_squares(vals)
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
def _row_sqnorm(rows, r):
    """||(x_r, aug)||_2^2."""
    vals = stored_values(rows, r)
    return sum_squares(vals) + rows.aug * rows.aug


@njit(**NUMBA_INLINE)
def csr_dot(indptr, indices, data, r, g):
    """``g . x_r`` over the stored values of CSR row r, in column order."""
    dot = 0.0
    for jj in range(indptr[r], indptr[r + 1]):
        dot += g[indices[jj]] * data[jj]
    return dot


@njit(**NUMBA_INLINE)
def fold_scale(v, g, acc, u, s, sigma_total, p):
    """Fold the scale s of theta = s v into v (before S = sum |v|^p can overflow): the
    lazy average is flushed first (it restarts with Sigma = 0), v is multiplied by s and
    g and S are recomputed exactly from it. Returns S; the caller sets s = 1."""
    _flush_average(g, acc, u, sigma_total)
    for i in range(v.shape[0]):
        v[i] *= s
    return _recompute(v, g, p)


@njit(**NUMBA_INLINE)
def end_trial(trials, sigma_total, sigma_w):
    """The end of a trial: its post-trial hypothesis (the current one, of scale
    ``sigma_w``) enters the average (Freund and Schapire 1999). Returns ``(trials,
    Sigma, restart)``: ``restart`` where sigma has become small against Sigma, so that
    the caller flushes the lazy average (:func:`_flush_average`) and restarts Sigma at 0
    before the differences Sigma - last_i lose their digits. Scalars only: numba counts
    the references of the arrays handed to a function at each call, here every trial."""
    sigma_total += sigma_w
    return trials + 1, sigma_total, sigma_w < FLUSH_RATIO * sigma_total


@njit(**NUMBA_INLINE)
def end_weighted_trial(trials, sigma_total, sigma_w, growth, step, mass):
    """:func:`end_trial` under a horizon (module docstring): the hypothesis enters the
    sums with the trial's weight ``growth``, which then grows by ``step``. Returns
    ``(trials, Sigma, growth, mass, restart)``; without a horizon (``step`` 1, ``growth``
    1) the sums and ``restart`` are :func:`end_trial`'s bit for bit, with a horizon
    ``restart`` where the weight of the next trial passes ``GROWTH_LIMIT``, so that the
    caller flushes and rescales the sums (:func:`rescale_average`)."""
    if step == 1.0:
        trials, sigma_total, restart = end_trial(trials, sigma_total, sigma_w)
        return trials, sigma_total, growth, mass + 1.0, restart
    sigma_total += sigma_w * growth
    mass += growth
    growth *= step
    return trials + 1, sigma_total, growth, mass, growth > GROWTH_LIMIT


@njit(**NUMBA_OPTS)
def rescale_average(g, acc, u, sigma_total, growth, mass):
    """Flush the lazy average (:func:`_flush_average`) and divide its sums by the
    weight ``growth`` of the next trial, which becomes 1: the averaged output is the
    same, in smaller units. Returns ``(Sigma, growth, mass)``, Sigma 0."""
    _flush_average(g, acc, u, sigma_total)
    if growth != 1.0:
        for i in range(acc.shape[0]):
            acc[i] /= growth
        mass /= growth
    return 0.0, 1.0, mass


@njit(**NUMBA_INLINE)
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


@njit(**NUMBA_INLINE)
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
def linear_pass(rows, y, order, start, rule, norm, w, log):
    """One pass of an additive p-norm online algorithm on one binary problem.

    ``rule.kind`` chooses the algorithm (the ``RULE_*`` constants):

    - ALMA_p(alpha; B, C), Figure 1 of Gentile (2001), on normalised instances;
    - the Perceptron, w += y x when y w . x <= 0;
    - the margin Perceptron, w += y x when y w . x < (gamma_guess / 2) ||w|| (or w = 0);
    - ROMMA (Li and Long 2002), on y w . x <= 0, and aggressive ROMMA, on
      y w . x < 1 - delta:
      w' = argmin ||w'|| s.t. w' . w >= ||w||^2 and y w' . x >= 1, the closed form
      w' = c w + d y x of their section 3 (w' = y x / ||x||^2 when only the second
      constraint binds, also the first update).

    The last four are for p = 2 and do not normalise the instances.

    A row of weight c (``rows.weight``; 1 when it is empty) keeps its rule's test and
    scales what its update adds: ALMA's step is ``c eta_k``, the Perceptrons add
    ``c y x``, and ROMMA's ``w' = a w + d y x`` becomes ``a w + c d y x`` (``c y x /
    ||x||^2`` where only the new constraint binds); with ROMMA's soft margin the weight
    is in the row's slack coordinate instead (below). A weight of 1 is the unweighted
    algorithm bit for bit.

    ROMMA's 2-norm soft margin (``rule.lam > 0``) runs it on ``x~ = (x, l e_r)``: every
    example gets a coordinate of its own holding ``l = sqrt(lam / c)`` (c its weight),
    so that ``x_i . x_j`` becomes ``x_i . x_j + lam / c [i = j]`` and any labelled data
    are separable (Cristianini and Shawe-Taylor 2000, section 6.1.2). The update is
    ROMMA's projection in that space, unscaled: aggressive ROMMA's hypothesis approaches
    the 2-norm soft-margin SVM's, the squared hinge loss weighed by c with
    ``C = 1 / (2 lam)``. ``w~ = (w, zeta)``: the slack part enters ``||w~||^2``
    (``fs[F_SLACK]``) and the margins of the rows it belongs to, never a prediction.
    With ``w.slack`` of one entry per row (a fit in memory) a row keeps its coordinate
    across the passes; empty (a stream), every trial is a new example, whose
    coordinate is 0 before its update. A zero row (bias included) never updates, as
    without the soft margin.

    Parameters
    ----------
    rows : DenseRows or CsrRows
        The instances (:data:`DenseRows`, :data:`CsrRows`): the rows, the bias
        coordinate ``aug`` appended to each when not 0 (index d - 1 of the weights),
        and ``xscale``, ``1 / ||(x_r, aug)||_p`` for ALMA (Figure 1 normalises the
        instances) and 1 for the others; 0 for a zero row, which never updates
        (Gentile's footnote 3), negative for "not computed yet": the pass fills it in
        on a row's first trial.
    y : ndarray of float64, shape (n,)
        +1 / -1 for every row of ``rows`` (one one-vs-rest problem).
    order : ndarray of int64
        The rows in the order of their trials.
    start : int
        The position in ``order`` to start from.
    rule : Rule
        The update rule and its parameters (:class:`Rule`); ``rule.max_updates`` stops
        the pass, before updating, at a trial that would make correction
        ``max_updates + 1`` (the margin Perceptron's budget; -1 for none), and then
        sets ``ist[I_BUDGET]``.
    norm : Norm
        ``p`` (the norm of the instances; the weights live in the dual q-norm,
        section 2 of the paper) and ``fold_below`` (:data:`Norm`).
    w : Weights
        The weights and scalar state (:data:`Weights`), updated in place.
    log : Log
        The correction log (:data:`Log`; its current block, filled up to
        ``ist[I_HNNZ]``): every correction is logged there when ``ist[I_LOG]`` is set
        (for the voted output); otherwise it is not touched.

    Returns
    -------
    int
        The position in ``order`` reached: ``len(order)`` when done, less when the log
        is full (the caller makes room and calls again from there) or the budget is
        spent.
    """
    v, g, acc, u, fs, ist, slack = w.v, w.g, w.acc, w.u, w.fs, w.ist, w.slack
    h_start, h_stop, h_coef, h_rescale = log.start, log.stop, log.coef, log.rescale
    h_count, b_indices, b_data = log.count, log.indices, log.data
    kind, alpha, B, C = rule.kind, rule.alpha, rule.B, rule.C
    gamma_guess, delta, max_updates = rule.gamma_guess, rule.delta, rule.max_updates
    lam = rule.lam if kind >= RULE_ROMMA else 0.0
    kept = slack.shape[0] > 0
    slack_sum, slack_work = fs[F_SLACK], fs[F_SLACK_WORK]
    p, fold_below = norm.p, norm.fold_below
    xscale, aug = rows.xscale, rows.aug
    X, indptr, indices, data = row_arrays(rows)
    logging = ist[I_LOG] != 0
    n_total = order.shape[0]
    d = v.shape[0]
    extra = 1 if aug != 0.0 else 0
    sqrt_pm1 = np.sqrt(p - 1.0)
    threshold_scale = (1.0 - alpha) * B * sqrt_pm1
    cap_k = h_coef.shape[0]
    cap_nnz = b_data.shape[0]
    # the state, held in locals for the loop
    s, total, sigma_total, work, pending, sigma_w, k, hk, hn, trials = load_scalars(fs, ist)
    growth, step, mass = fs[F_GROWTH], fs[F_STEP], fs[F_MASS]
    threshold = threshold_scale / np.sqrt(k)
    budget_out = 0
    pos = start
    while pos < n_total:
        r = order[pos]
        xs = xscale[r]
        if xs < 0.0:
            if kind == RULE_ALMA:
                xs = row_scale(rows, r, p)
            else:
                # not normalised: a zero row is only found (and marked) when it would
                # update, so that a trial costs the one dot product
                xs = 1.0
            xscale[r] = xs
        # Room in the log for a correction on this row?
        if logging and xs > 0.0 and (hk >= cap_k or hn + stored_count(rows, r) + extra > cap_nnz):
            break
        if xs > 0.0:
            yt = y[r]
            # margin y_t w_k . x_hat_t with w = sigma * g
            # g . (x_r, aug): BLAS for a dense row, a loop in column order for a
            # CSR row (csr_dot, written out: numba counts the references of the
            # arrays handed to a function at every call, which here, once a trial,
            # cost the sparse pass a fifth of its time)
            if indptr.shape[0] == 0:
                dot = np.dot(g[: X.shape[1]], X[r])
            else:
                dot = 0.0
                for jj in range(indptr[r], indptr[r + 1]):
                    dot += g[indices[jj]] * data[jj]
            if aug != 0.0:
                dot += g[d - 1] * aug
            weight = row_weight(rows.weight, r)
            l_r = 0.0
            if lam > 0.0:
                # y w~ . x~ = y s (v . x + zeta_r l_r): the row's own slack coordinate
                l_r = np.sqrt(lam / weight)
                z_r = slack[r] if kept else 0.0
                margin = yt * s * (dot + z_r * l_r)
            else:
                margin = yt * sigma_w * dot * xs
            if kind == RULE_ALMA:
                update = margin <= threshold
            elif kind == RULE_MARGIN_PERCEPTRON:
                wnorm2 = s * s * total
                update = wnorm2 <= 0.0 or margin < 0.5 * gamma_guess * np.sqrt(wnorm2)
            elif kind == RULE_AGGRESSIVE_ROMMA:
                update = margin < 1.0 - delta
            else:
                update = margin <= 0.0
            x2 = 0.0
            if update and kind != RULE_ALMA and (dot == 0.0 or kind >= RULE_ROMMA):
                # ROMMA needs ||x||^2; the Perceptrons only to tell x = 0 (where dot = 0)
                x2 = _row_sqnorm(rows, r)
                if x2 == 0.0:
                    # x = 0 never updates (as in ALMA, Gentile's footnote 3)
                    update = False
                    xscale[r] = 0.0
            if update and 0 <= max_updates <= k - 1:
                budget_out = 1
                break
            if update:
                if kind == RULE_ALMA:
                    eta = weight * (C / (sqrt_pm1 * np.sqrt(k)))
                    # theta' = theta + c eta y x_hat, i.e. v += (c eta y xs / s) x
                    coef = eta * yt * xs / s
                elif kind == RULE_ROMMA or kind == RULE_AGGRESSIVE_ROMMA:
                    wnorm2 = s * s * total
                    if lam > 0.0:
                        # ||x~||^2 and ||w~||^2 with the slack coordinates
                        x2 += l_r * l_r
                        wnorm2 = s * s * (total + slack_sum)
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
                        if lam > 0.0:
                            slack[:] = 0.0
                            slack_sum = 0.0
                            slack_work = 0.0
                    else:
                        s *= (x2 * wnorm2 - margin) / gap
                        coef = yt * wnorm2 * (1.0 - margin) / (gap * s)
                    if lam > 0.0:
                        # the soft margin weighs a row in its slack coordinate alone,
                        # sqrt(lam / c), and the update is the projection in that space:
                        # the row's slack coordinate takes its share of d y x~
                        if kept:
                            old = slack[r]
                            new = old + coef * l_r
                            slack[r] = new
                            slack_sum += new * new - old * old
                            slack_work += 1.0
                            if slack_work >= slack.shape[0]:
                                # recomputed exactly every n changes (amortised O(1))
                                slack_sum = sum_squares(slack)
                                slack_work = 0.0
                        else:
                            slack_sum += (coef * l_r) * (coef * l_r)
                    else:
                        # w' = a w + c d y x: the new example's term scaled by its weight
                        coef = weight * coef
                else:
                    coef = weight * yt / s
                if logging:
                    h_coef[hk] = coef
                    h_rescale[hk] = pending
                    h_start[hk] = hn
                pending = 1.0
                # v += coef x_r on the row's stored coordinates (the non-zeros of a
                # dense row, every stored value of a CSR row), each by _touch, S
                # receiving the changes in column order; logged from hn
                touched = 0
                if indptr.shape[0] == 0:
                    for j in range(X.shape[1]):
                        xv = X[r, j]
                        if xv != 0.0:
                            total += _touch(j, coef * xv, v, g, u, sigma_total, p)
                            touched += 1
                            if logging:
                                b_indices[hn] = j
                                b_data[hn] = xv
                                hn += 1
                else:
                    for jj in range(indptr[r], indptr[r + 1]):
                        xv = data[jj]
                        total += _touch(indices[jj], coef * xv, v, g, u, sigma_total, p)
                        touched += 1
                        if logging:
                            b_indices[hn] = indices[jj]
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
                if kind == RULE_ALMA and total > 0.0:
                    if p == 2.0:
                        norm_w = s * np.sqrt(total)
                    else:
                        norm_w = s * total ** (1.0 / p)
                    if norm_w > 1.0:
                        s /= norm_w
                k += 1
                threshold = threshold_scale / np.sqrt(k)
                if s < fold_below or s * fold_below > 1.0:
                    total = fold_scale(v, g, acc, u, s, sigma_total, p)
                    if lam > 0.0:
                        slack *= s
                        slack_sum *= s * s
                    sigma_total = 0.0
                    work = 0.0
                    pending *= s
                    s = 1.0
                sigma_w = _sigma(s, total, p)
        # this trial's post-trial hypothesis is the current one
        trials, sigma_total, growth, mass, restart = end_weighted_trial(
            trials, sigma_total, sigma_w, growth, step, mass
        )
        if restart:
            sigma_total, growth, mass = rescale_average(g, acc, u, sigma_total, growth, mass)
        if logging:
            h_count[hk] += 1
        pos += 1
    store_scalars(fs, ist, s, total, sigma_total, work, pending, sigma_w, k, hk, hn, trials)
    fs[F_GROWTH], fs[F_MASS] = growth, mass
    fs[F_SLACK] = slack_sum
    fs[F_SLACK_WORK] = slack_work
    ist[I_BUDGET] = budget_out
    return pos
