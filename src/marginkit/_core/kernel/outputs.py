"""The outputs of a kernel state: the coefficients on the products' backend and the vote."""

import numpy as np

from ..arrays import Host


class Coefficients:
    """The coefficients ``A`` (m x C, on the host, where the walk changes them) as an
    array of the products' backend: ``A`` itself on the host in float64, else a copy,
    extended by the rows each block appends and made anew after anything changed older
    rows (a fold of the scale, a hypothesis forgotten)."""

    def __init__(self, backend):
        self.backend = backend
        self.array = None
        self.rows = 0
        self.version = 0  # counts the changes to older rows

    @staticmethod
    def of(state, backend):
        """The copy kept on ``state`` for ``backend`` (one at a time)."""
        mirror = state.__dict__.get("_mirror")
        if mirror is None or not mirror.backend.same(backend):
            mirror = state._mirror = Coefficients(backend)
        return mirror

    def stale(self):
        self.array = None
        self.version += 1

    def view(self, A, lo, hi):
        bk = self.backend
        if isinstance(bk, Host) and bk.dtype == np.float64:
            return A[lo:hi]
        if self.array is None:
            self.array, self.rows = bk.asarray(A[:hi]), hi
        elif self.rows < hi:
            self.array = bk.concat([self.array, bk.asarray(A[self.rows : hi])])
            self.rows = hi
        return self.array[lo:hi, :]


def vote(K, V, mask, reset, hcount, trials, backend, beta=None, out=None):
    """``sum_k c_k sign(w_k . x)`` of every problem: K (n x m, on the backend) holds
    the kernel rows of the points against the stored vectors; prefix sums of
    ``V[j, c] K[:, j]`` along the insertion order give every ``w_k . x`` up to its
    positive scale (``beta``: the bias of each hypothesis, in the same units). A
    hypothesis that started afresh at correction r (``reset``) sums from r on.

    Returns the (n, C) votes divided by ``trials``, on the backend.
    """
    xp = backend.xp
    n, C = K.shape[0], mask.shape[1]
    cols = []
    for c in range(C):
        idx = np.flatnonzero(mask[:, c])
        if idx.size == 0:
            cols.append(backend.zeros((n,)))
            continue
        prefix = xp.cumulative_sum(
            backend.take_columns(K, idx) * backend.asarray(V[idx, c])[None, :], axis=1
        )
        fresh = reset[idx, c]
        if fresh[1:].any():
            start = np.maximum.accumulate(np.where(fresh, np.arange(idx.size), 0))
            before = backend.take_columns(prefix, np.where(start > 0, start - 1, 0))
            prefix = prefix - backend.where_columns(before, start > 0)
        if beta is not None:
            prefix = prefix + backend.asarray(beta[idx, c])[None, :]
        counts = backend.asarray(hcount[1 : idx.size + 1, c])
        cols.append(xp.sign(prefix) @ counts / trials)
    return xp.stack(cols, axis=1)


def class_index(Y):
    """The class of each row of one-vs-rest targets Y (+1 / -1): for one problem, 1
    where its target is +1 (``classes_[1]``), else 0; for several, the problem whose
    target is +1."""
    if Y.shape[1] == 1:
        return (Y[:, 0] > 0).astype(np.int64)
    return np.argmax(Y, axis=1).astype(np.int64)


def outputs(state, data, output, coefficients, beta):
    """The (n, C) decision values of a kernel state (:class:`KernelState`, or kernel
    PUMMA's pairs) over ``data``: ``coefficients(output)`` give the last and averaged
    hypotheses as ``(coef, intercept or None)``; the vote is :func:`vote`."""
    bk = data.backend
    m = state.m
    parts = []
    if m == 0 or output != "voted":
        coef, intercept = coefficients("last" if output == "voted" else output)
        if intercept is None or output == "voted":
            intercept = np.zeros(state.n_problems)
        intercept = bk.asarray(intercept)[None, :]
        if m == 0:
            return bk.zeros((data.n, state.n_problems)) + intercept
        coef = bk.asarray(state.per_row(coef))
        for _, _, K in state.kernel_rows(data):
            parts.append(K @ coef + intercept)
    else:
        trials = max(state.n_trials, 1)
        V = state.A if state.V is None else state.V
        for _, _, K in state.kernel_rows(data):
            K = state.per_entry(K, bk)
            parts.append(
                vote(K, V[:m], state.mask[:m], state.reset[:m], state.hcount, trials, bk, beta)
            )
    return parts[0] if len(parts) == 1 else bk.concat(parts)
