"""The arithmetic of iterative parameter mixing: a shard's pass from the mixed weights, the
shards' sums added up by a tree of tasks, and block momentum.
"""

from __future__ import annotations

import copy

import numpy as np

from .._core.linear import scaled_norm
from .._core.state import PNormState
from ..margins import _dual_exponent


def shard_epoch(learner, states, X, y, start=None, stop=None):
    """One epoch of a shard: the estimator's own compiled pass (``learner.run``, a
    :class:`~marginkit._linear_base.LinearLearner`'s) over its rows (those from
    ``start`` to ``stop``, between two mixes of ``mix_every``), in their order, for
    every one-vs-rest problem, from (copies of) the mixed ``states``."""
    states = copy.deepcopy(states)  # the mixed states are shared by the shards of a worker
    if start is not None:
        X, y = X[start:stop], y[start:stop]
    learner.run(states, X, y)
    return states


def file_epoch(learner, states, path, reading, start=None, stop=None):
    """One epoch of a file shard, on a worker: its file streamed in chunks (read and
    parsed by :class:`marginkit.streaming.FileStream`, one chunk ahead in a background
    thread), each chunk's pass continuing from the one before, in file order; only
    the rows from ``start`` to ``stop`` (the earlier ones read and passed over, the
    file left at ``stop``)."""
    states = copy.deepcopy(states)
    start = 0 if start is None else start
    seen = 0
    chunks = reading.stream(path)()
    try:
        for X, y in chunks:
            lo = max(start - seen, 0)
            hi = X.shape[0] if stop is None else min(stop - seen, X.shape[0])
            seen += X.shape[0]
            if lo < hi:
                learner.run(states, X[lo:hi], y[lo:hi])
            if stop is not None and seen >= stop:
                break
    finally:
        chunks.close()
    return states


def held_epoch(learner, states, rows, start=None, stop=None):
    """:func:`shard_epoch` over the rows a worker holds (:func:`file_rows`)."""
    return shard_epoch(learner, states, *rows, start, stop)


def corrections_of(states):
    return [s.n_corrections for s in states]


def mixing_rounds(rows, step, skip):
    """The mixes of an epoch over shards of ``rows`` rows, a mix after every ``step``
    rows of each from row ``skip``: per mix, its first row and the ``(shard, rows)``
    that take part (those with rows left)."""
    firsts = range(skip, max(rows), step)
    return [
        (first, [(i, min(step, n - first)) for i, n in enumerate(rows) if n > first])
        for first in firsts
    ]


def _rounded_mean(num, den):
    """``num / den`` of integers, rounded half up, in integer arithmetic."""
    return (2 * num + den) // (2 * den)


#: The most shards' results (or partial sums) one task of the mix's tree adds up
TREE_FAN_IN = 4


class MixSums:
    """What an epoch's mix takes of some consecutive shards, summed (one record per
    one-vs-rest problem, and each shard's corrections): a node of the tree in which
    :class:`MixingClassifier` reduces the shards' states on the workers, so that the
    driver receives one record, whatever the number of shards.

    Per problem: ``w``, the shards' hypotheses times their mixing weights (1, or the
    shard's corrections of the epoch), summed, and ``weight`` the weights'; ``acc``,
    their sums of hypotheses times the same weights; ``k`` the weighted sum of their
    correction counters and its weights (integers); ``made``, ``trials`` and
    ``rows_made`` (corrections times rows, for the factor of ``mixing="corrections"``'s
    sums); and, for that mixing, the unweighted ``acc`` and ``k`` sums, its fallback
    when no shard corrected the problem.
    """

    def __init__(self, start_counts, mixing, rows, states):
        pairs = list(zip(states, start_counts, strict=True))
        self.by_shard = [[s.n_corrections - corrections for s, (corrections, _) in pairs]]
        self.problems = []
        weighted = mixing == "corrections"
        for (s, (_, trials)), made in zip(pairs, self.by_shard[0], strict=True):
            weight = made if weighted else 1
            sums = s.sum_weights()
            one = {
                "w": weight * s.last_weights() if weight else np.zeros(s.d),
                "weight": weight,
                "acc": weight * sums if weighted else sums,
                "k": (weight * s.k, weight),
                "made": made,
                "trials": s.n_trials - trials,
                "rows_made": made * rows,
            }
            if weighted:
                one["acc_uniform"], one["k_uniform"] = sums, (s.k, 1)
            self.problems.append(one)

    def plus(self, other):
        """The sums of this node's shards followed by ``other``'s (in place)."""
        self.by_shard += other.by_shard
        for mine, theirs in zip(self.problems, other.problems, strict=True):
            for key, value in mine.items():
                if isinstance(value, tuple):
                    mine[key] = (value[0] + theirs[key][0], value[1] + theirs[key][1])
                else:
                    mine[key] = value + theirs[key]
        return self

    def mixed(self, starts, n_samples, momentum=None):
        """The mixed state of every problem (:meth:`PNormState.from_sums`), its step
        filtered by ``momentum`` (a :class:`Momentum`) when one is given."""
        out = []
        for j, (start, one) in enumerate(zip(starts, self.problems, strict=True)):
            acc, k = one["acc"], one["k"]
            if "acc_uniform" in one:
                if one["made"] > 0:
                    # each shard's sum of hypotheses times mu_i n_samples / sum_j mu_j n_j
                    acc = acc * (n_samples / float(one["rows_made"]))
                else:
                    acc, k = one["acc_uniform"], one["k_uniform"]
            w = one["w"] / float(one["weight"]) if one["made"] else None
            if momentum is None:
                k = _rounded_mean(*k)
            else:
                w, k = momentum.step(j, start, w, k, one["made"])
            out.append(PNormState.from_sums(start, w, acc, one["made"], one["trials"], k))
        return out


class Momentum:
    """Block momentum over the mixes (K. Chen and Q. Huo, "Scalable training of deep
    learning machines by incremental block training with intra-block parallel
    optimization and blockwise model-update filtering", ICASSP 2016, equations 3-5,
    with their block learning rate 1 and classical block momentum).

    A mix of S shards moves the weights by the mean of the shards' moves, about as
    far as one shard's rows alone would; the filtered step ``G = mu G + (w_mix -
    w_start)`` adds the earlier mixes' steps, decayed by ``mu``, so that in a steady
    direction the weights move ``1 / (1 - mu)`` times the mean step (S times for
    ``mu = 1 - 1 / S``: about the shards' moves summed, as one learner making every
    shard's corrections would). Per one-vs-rest problem, on the driver, between the
    mixes of one fit: ``G`` of the weights and ``K`` of ALMA's correction counter k,
    which sets its steps and margin (filtered alike, so that k counts about the
    corrections the filtered weights hold, and at most the corrections made so far
    plus one, as one learner that made them all would count: ``K`` is held there too).
    For ALMA the new weights are projected back onto the unit q-ball of its hypotheses
    (Gentile, JMLR 2001, Figure 1: ``w / max(1, ||w||_q)``), and ``G`` is the step
    actually taken. A problem that no shard corrected in a mix keeps its weights, and
    its momentum is dropped.
    """

    def __init__(self, mu, ball):
        self.mu = float(mu)
        self.ball = bool(ball)
        self.steps = {}  # problem -> (G, K)

    def step(self, j, start, w, k_sums, made):
        """The filtered weights and correction counter of problem ``j``, from
        ``start`` (the state the shards began from), the mixed weights ``w`` (None:
        no shard corrected), the weighted sum of the shards' k and its weight, and
        the corrections the shards made in the mix."""
        k0 = start.k
        if w is None:
            self.steps.pop(j, None)
            return None, k0
        g, big_k = self.steps.get(j, (0.0, 0.0))
        w0 = start.last_weights()
        g = self.mu * g + (w - w0)
        # k counts at most the corrections made so far, plus one
        big_k = min(
            self.mu * big_k + (k_sums[0] / k_sums[1] - k0), start.n_corrections + made + 1 - k0
        )
        w = w0 + g
        if self.ball:
            norm = float(scaled_norm(w, _dual_exponent(start.p)))
            if norm > 1.0:
                w = w / norm
                g = w - w0
        self.steps[j] = (g, big_k)
        return w, max(1, k0 + int(np.floor(big_k + 0.5)))


def tree_node(start_counts, mixing, items):
    """A node of the mix's tree: ``items``, ``(rows, a shard's states)`` or ``(None,
    MixSums)`` in shard order, summed in that order."""
    total = None
    for rows, item in items:
        part = item if rows is None else MixSums(start_counts, mixing, rows, item)
        total = part if total is None else total.plus(part)
    return total
