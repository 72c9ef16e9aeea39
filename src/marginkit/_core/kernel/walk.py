"""The compiled walk of kernel ALMA, the kernel Perceptron and ROMMA through a block."""

from collections import namedtuple

import numpy as np
from numba import njit

from .. import NUMBA_OPTS
from ..linear import (
    GROWTH_LIMIT,
    RULE_AGGRESSIVE_ROMMA,
    RULE_ALMA,
    RULE_PERCEPTRON,
    RULE_ROMMA,
)

#: The per-problem state the walks update (arrays of length C; ``hcount`` (m + 1, C)):
#: the scale ``s``, ``norm2`` = ||w||^2, the correction counter ``k``, the running
#: total ``T`` of ``s`` over trials, and the trials each hypothesis lasted; and the
#: averaging weights every problem shares, ``decay`` = (the weight G of the next trial
#: in the averaging totals, what G is multiplied by after each trial, the trials' total
#: weight): (1, 1, -) without a horizon, ``(G, 1 / (1 - 1 / horizon), sum of G)`` with
#: one (:mod:`marginkit._core.linear`, "horizon").
Problems = namedtuple("Problems", ["s", "norm2", "k", "T", "hcount", "decay"])
#: The margin sums of a block (b x C): ``F`` over the stored vectors plus the block's
#: corrections so far, ``f_seen`` as they stood at each row's trial, ``cache`` those
#: kept across the epochs (n x C; 0 x C when none are kept), and ``slack`` the
#: 2-norm soft-margin sums of the rows of the data (n x C: kernel PUMMA's, and kernel
#: ROMMA's in a fit; 0 x C for a stream, and for the walks without one).
Sums = namedtuple("Sums", ["F", "f_seen", "cache", "slack"])
#: Views of the stored vectors' arrays (``VectorStore``): coefficients, averaging total at
#: insertion, closed averaging intervals, membership of each problem.
Old = namedtuple("Old", ["A", "T_ins", "acc", "mask"])
#: The block's candidate support vectors (b x C): coefficient, coefficient as inserted
#: (the vote replays those), averaging total at insertion, closed intervals, made, and
#: whether it forgot the hypothesis before it.
New = namedtuple("New", ["a", "v", "t", "acc", "mask", "reset"])
#: What :func:`kernel_walk` reads of a block: its Gram ``G`` (b x b, normalised:
#: ``K_hat(x_i, x_j)``, the diagonal ``K(x, x)`` of the rule's instances), the
#: one-vs-rest targets ``Y`` (b x C, +1 / -1), ``inv`` (b,), ``1 / sqrt(K(x, x))``
#: (or the 0 / 1 of a rule that does not normalise): 0 marks a row that never updates,
#: ``room``, what the store takes before it is full (a budget,
#: :mod:`marginkit._core.budget`; more than b without one), and ``adds`` (b,), what a
#: correction of each row takes of it: 1, or 0 for a row whose example the store holds
#: already, while only the rows held count against the budget
#: (:meth:`KernelState.filling`), and ``weight`` (b,), the rows' weights (empty: every
#: row weighs 1; see :func:`kernel_walk`), and ``rows`` (b,), the rows of the data
#: (where their slack sums are, ``Sums.slack``).
Block = namedtuple("Block", ["G", "Y", "inv", "room", "adds", "weight", "rows"])


@njit(**NUMBA_OPTS)
def kernel_walk(rule, fold_below, start, block, P, sums, new, old):
    """Walk rows ``start..b-1`` of a block through one update rule, every problem.

    The kernel ALMA_2(alpha; B, C) of Gentile (2001), Remark 5 (Figure 1 at p = 2 on
    the normalised instances ``phi_hat(x)``), and on the same store the kernel
    Perceptron and ROMMA (Li and Long 2002), the exact per-example algorithms: the
    corrections of the block are added to the margin sums of the rows after them.

    Parameters
    ----------
    rule : marginkit._core.linear.Rule
        ``rule.kind`` is ``RULE_ALMA`` (update on ``y w . x <= (1 - alpha) B / sqrt(k)``,
        step ``eta = C / sqrt(k)``, then ``w`` projected on the unit ball),
        ``RULE_PERCEPTRON`` (on ``y w . x <= 0``), ``RULE_ROMMA`` (on ``y w . x <= 0``)
        or ``RULE_AGGRESSIVE_ROMMA`` (on ``y w . x < 1 - delta``); the walk reads
        ``alpha``, ``B``, ``C``, ``delta`` and ``lam`` (ROMMA's 2-norm soft margin:
        ``K(x_i, x_j) + lam / c [i = j]``, c the row's weight; 0 for none).
    fold_below : float
        The walk stops after a correction that takes some ``s_c`` outside
        ``[fold_below, 1 / fold_below]``, for the caller to fold ``s_c`` into the
        coefficients.
    start : int
        The first row of the block to walk.
    block : Block
        The block's in-block Gram, targets, inverse norms, the room left in the
        store and what each row's correction takes of it (:data:`Block`): the walk
        stops after the row that fills it, for the caller to keep the budget.
    P : Problems
        Every problem's scale, squared norm ``||w||^2``, correction counter, averaging
        total and hypothesis lifetimes, and the averaging weights (:data:`Problems`),
        updated in place: each trial adds ``s_c G`` to ``T_c``; with a horizon, the walk
        stops after a row that takes G past ``GROWTH_LIMIT``, for the caller to rescale
        (:func:`marginkit._core.kernel.blocks.rescale_totals`).
    sums : Sums
        ``sums.F[i, c]`` holds ``sum_j A[j, c] K_hat(x_j, x_i)`` over the support
        vectors stored before the block; the walk adds the block's corrections to the
        rows after them, and ``sums.f_seen[i]`` receives ``F[i]`` as it stood at row
        i's trial (:data:`Sums`); with ROMMA's soft margin, ``sums.slack[r, c]`` is
        the sum of problem c's coefficients made at row r of the data (n x C: a row
        keeps its coordinate across the epochs), or empty (0 x C: a stream, whose
        trials are new examples).
    new : New
        Receives the block's corrections, row by row (:data:`New`).
    old : Old
        The support vectors stored before the block (:data:`Old`): a ROMMA update with
        only its new constraint binding (``w' = y x / K(x, x)``) forgets the old
        hypothesis (:func:`forget`), closing their averaging intervals and zeroing
        their coefficients, and marks the correction in ``new.reset``.

    Returns
    -------
    int
        The row reached: b, or the row after a correction that took some ``s_c``
        outside ``[fold_below, 1 / fold_below]`` or that filled the store.

    Notes
    -----
    A row of weight c keeps its rule's test and scales what its update adds, as in
    :func:`marginkit._core.linear.linear_pass`: ALMA's step is ``c eta_k``, the
    Perceptron adds ``c y phi(x)``, ROMMA's ``w' = a w + d y phi(x)`` becomes
    ``a w + c d y phi(x)``.

    ROMMA's 2-norm soft margin (``rule.lam > 0``) runs it on ``phi~(x_r) = (phi(x_r),
    sqrt(lam / c) e_r)``, a coordinate of its own per row (Li and Long, section 6):
    ``y w~ . phi~(x_r) = y s (F_r + lam / c slack_r)`` and ``||phi~(x_r)||^2 = K(x_r,
    x_r) + lam / c``, while a prediction (a row of no coordinate) reads ``F`` alone.
    A weight then enters twice, in the coordinate (the loss of the row's slack
    weighed by c) and in the update's new term, as without the soft margin.
    """
    F = sums.F
    Gb, Y, inv_b = block.G, block.Y, block.inv
    kind, alpha, B, C, delta = rule.kind, rule.alpha, rule.B, rule.C, rule.delta
    lam = rule.lam if kind == RULE_ROMMA or kind == RULE_AGGRESSIVE_ROMMA else 0.0
    slack = sums.slack
    kept = lam > 0.0 and slack.shape[0] > 0  # each row's own coordinate across epochs
    s, norm2, k, T = P.s, P.norm2, P.k, P.T
    decay = P.decay
    growth, step = decay[0], decay[1]
    b, n_classes = F.shape
    last = P.hcount.shape[0] - 1  # a budgeted store keeps no lifetimes (one row)
    room = block.room
    adds = block.adds
    for i in range(start, b):
        for c in range(n_classes):
            sums.f_seen[i, c] = F[i, c]
        weight = block.weight[i] if block.weight.shape[0] > 0 else 1.0
        live = inv_b[i] > 0.0  # K(x, x) = 0: x never updates (footnote 3)
        r = block.rows[i] if kept else 0
        lr2 = lam / weight  # the soft margin's own coordinate, squared (0 without it)
        fold = False
        made = False
        for c in range(n_classes):
            kc = k[c]
            if live:
                f = F[i, c] + lr2 * slack[r, c] if kept else F[i, c]
                wx = s[c] * f
                yt = Y[i, c]
                m = yt * wx
                if kind == RULE_ALMA:
                    update = m <= (1.0 - alpha) * B / np.sqrt(kc)
                elif kind == RULE_AGGRESSIVE_ROMMA:
                    update = m < 1.0 - delta
                else:
                    update = m <= 0.0
                if update:
                    reset = False
                    if kind == RULE_ALMA:
                        eta = weight * (C / np.sqrt(kc))
                        a = eta * yt / s[c]
                        n2 = norm2[c] + 2.0 * eta * yt * wx + eta * eta
                        if n2 > 1.0:
                            s[c] /= np.sqrt(n2)
                            norm2[c] = 1.0
                        else:
                            norm2[c] = n2
                    elif kind == RULE_PERCEPTRON:
                        a = weight * yt / s[c]
                    else:
                        # ROMMA (Li and Long, section 3): w' = c w + d y x with
                        # w' . w = ||w||^2 and y w' . x = 1; d scaled by the weight
                        x2 = Gb[i, i] + lr2
                        W = norm2[c]
                        gap = x2 * W - m * m
                        if W <= 0.0 or m >= x2 * W or gap <= 1e-12 * x2 * W:
                            reset = True
                        else:
                            cc = (x2 * W - m) / gap
                            dd = weight * (W * (1.0 - m) / gap)
                            s[c] *= cc
                            a = dd * yt / s[c]
                            # ||c w + d y x||^2 of the coefficients as computed
                            norm2[c] = cc * cc * W + 2.0 * cc * dd * m + dd * dd * x2
                        if reset:
                            if W > 0.0:
                                own = (new.a[:i, c], new.t[:i, c], new.acc[:i, c], new.mask[:i, c])
                                forget(c, i, T, own, sums, old)
                            s[c] = 1.0
                            a = weight * yt / x2
                            norm2[c] = weight * weight / x2
                        if kept:
                            slack[r, c] += a  # zeroed by forget where it reset
                    new.a[i, c] = a
                    new.v[i, c] = a
                    new.t[i, c] = T[c]
                    new.mask[i, c] = True
                    new.reset[i, c] = reset
                    k[c] = kc + 1
                    made = True
                    for i2 in range(i + 1, b):
                        F[i2, c] += a * Gb[i, i2]
                    if s[c] < fold_below or s[c] * fold_below > 1.0:
                        fold = True
            P.hcount[min(k[c] - 1, last), c] += 1
            T[c] += s[c] * growth
        growth = end_weights(decay, growth, step)
        if made:
            room -= adds[i]
        if fold or room <= 0 or growth > GROWTH_LIMIT:
            return i + 1
    return b


@njit(**NUMBA_OPTS)
def end_weights(decay, growth, step):
    """The end of a trial for the averaging weights ``decay`` (:data:`Problems`): the
    trial's weight ``growth`` joins the total and grows by ``step`` for the next; both
    kept in ``decay``. Returns the new weight. Without a horizon (``step`` 1) G stays 1
    and the total counts the trials."""
    decay[2] += growth
    growth *= step
    decay[0] = growth
    return growth


@njit(**NUMBA_OPTS)
def forget(c, i, T, own, sums, old):
    """Problem c restarts from w = 0 at row i of a block (a ROMMA or PUMMA update whose
    new constraint alone binds): every averaging interval of its vectors is closed at
    ``T_c`` and their coefficients zeroed, then ``T_c``, the block's margin sums (and
    those recorded up to row i), the sums kept across epochs and the slack sums zeroed.

    Parameters
    ----------
    c : int
        The problem.
    i : int
        The row of the block where it restarts.
    T : (C,) array
        The averaging totals of the problems (:data:`Problems`).
    own : tuple of four 1-D arrays
        ``(a, t, acc, mask)``: coefficient, averaging total at insertion and closed
        intervals of the vectors the block has made so far, and whether each is
        problem c's (views of :data:`New` or of kernel PUMMA's atoms).
    sums : Sums
        The block's margin sums, those kept across epochs and the slack sums.
    old : Old
        The vectors stored before the block.
    """
    a, t, acc, mask = own
    for j in range(a.shape[0]):
        if mask[j]:
            acc[j] += a[j] * (T[c] - t[j])
            t[j] = 0.0
            a[j] = 0.0
    for j in range(old.A.shape[0]):
        if old.mask[j, c]:
            old.acc[j, c] += old.A[j, c] * (T[c] - old.T_ins[j, c])
        old.T_ins[j, c] = 0.0
        old.A[j, c] = 0.0
    T[c] = 0.0
    for i2 in range(sums.F.shape[0]):
        sums.F[i2, c] = 0.0
        if i2 <= i:
            sums.f_seen[i2, c] = 0.0
    for r in range(sums.cache.shape[0]):
        sums.cache[r, c] = 0.0
    for r in range(sums.slack.shape[0]):
        sums.slack[r, c] = 0.0
