"""Learned state of one binary problem of a linear p-norm algorithm.

A plain container of numpy arrays (picklable, no jitted objects), handed to the
compiled loops of :mod:`marginkit._linear`.
"""

import numpy as np

from . import _linear as L

_INDEX = np.int32


class PNormState:
    """Weights, lazy averaging accumulators and correction log of one binary problem.

    The log keeps, for every correction, the coefficient added to v and the
    non-zeros of its instance, in blocks that are appended (never copied) as the
    stream grows; the voted output replays it.

    Parameters
    ----------
    d : int
        Dimension of the instances the algorithm sees (features, plus one for the
        bias coordinate).
    p : float
        The norm of the instances; the weights live in the dual q-norm.
    """

    def __init__(self, d, p, cap_k=64):
        self.d = int(d)
        self.p = float(p)
        self.v = np.zeros(d)
        self.g = np.zeros(d)
        self.acc = np.zeros(d)
        self.last = np.zeros(d)
        self.fs = np.zeros(L.N_FSTATE)
        self.fs[L.F_S] = 1.0
        self.fs[L.F_PENDING] = 1.0
        self.ist = np.zeros(L.N_ISTATE, dtype=np.int64)
        self.ist[L.I_K] = 1
        self.h_start = np.zeros(cap_k, dtype=np.int64)
        self.h_stop = np.zeros(cap_k, dtype=np.int64)
        self.h_coef = np.zeros(cap_k)
        self.h_rescale = np.ones(cap_k)
        self.h_count = np.zeros(cap_k + 1, dtype=np.int64)
        size = max(1024, 16 * (d + 1))
        self.b_indices = [np.empty(size, dtype=_INDEX)]
        self.b_data = [np.empty(size)]
        self.b_first = [0]  # first correction logged in each block

    # -- growth of the correction log --------------------------------------------
    def make_room(self, row_nnz):
        """Room for at least one more correction whose instance has ``row_nnz`` non-zeros."""
        k = self.n_corrections
        if k >= self.h_coef.shape[0]:
            cap = 2 * self.h_coef.shape[0]
            self.h_start = _resized(self.h_start, cap)
            self.h_stop = _resized(self.h_stop, cap)
            self.h_coef = _resized(self.h_coef, cap)
            self.h_rescale = _resized(self.h_rescale, cap)
            self.h_count = _resized(self.h_count, cap + 1, zero=True)
        fill = int(self.ist[L.I_HNNZ])
        if fill + row_nnz > self.b_data[-1].shape[0]:
            size = max(2 * self.b_data[-1].shape[0], row_nnz)
            size = min(size, max(1 << 24, row_nnz))
            self.b_indices.append(np.empty(size, dtype=_INDEX))
            self.b_data.append(np.empty(size))
            self.b_first.append(k)
            self.ist[L.I_HNNZ] = 0

    def log_arrays(self):
        """The arguments of the compiled passes that hold the correction log."""
        return (
            self.h_start,
            self.h_stop,
            self.h_coef,
            self.h_rescale,
            self.h_count,
            self.b_indices[-1],
            self.b_data[-1],
        )

    # -- what the state means ------------------------------------------------------
    @property
    def n_corrections(self):
        return int(self.ist[L.I_NHIST])

    @property
    def n_trials(self):
        return int(self.h_count[: self.n_corrections + 1].sum())

    @property
    def k(self):
        """The correction counter k of Figure 1 (corrections made so far, plus one)."""
        return int(self.ist[L.I_K])

    def last_weights(self):
        """w_k = f^-1(theta_k), the current hypothesis (||w||_q <= 1)."""
        return self.fs[L.F_SIGMA_W] * self.g

    def sum_weights(self):
        """sum over trials t of w_(t+1): the Freund-Schapire averaged vector, unnormalised."""
        return self.acc + self.g * (self.fs[L.F_SIGMA] - self.last)

    def avg_weights(self):
        """Mean over trials of the post-trial hypothesis."""
        n = self.n_trials
        return self.sum_weights() / n if n else np.zeros(self.d)

    def theta(self):
        """theta = f(w), the dual vector to which corrections are added."""
        return self.fs[L.F_S] * self.v

    def directions(self, chunk_elems=1 << 22):
        """Yield ``(first, G)``: rows of G are g_k for hypotheses first+1, first+2, ...

        g_k is a positive multiple of w_k (k >= 1), rebuilt from the log in chunks of
        at most ``chunk_elems`` numbers.
        """
        K = self.n_corrections
        v = np.zeros(self.d)
        chunk = max(1, chunk_elems // max(self.d, 1))
        bounds = [*self.b_first, K]
        for b in range(len(self.b_first)):
            for first in range(bounds[b], bounds[b + 1], chunk):
                stop = min(bounds[b + 1], first + chunk)
                G = np.empty((stop - first, self.d))
                L.replay_directions(
                    self.h_start,
                    self.h_stop,
                    self.h_coef,
                    self.h_rescale,
                    self.b_indices[b],
                    self.b_data[b],
                    first,
                    stop,
                    v,
                    self.p,
                    G,
                )
                yield first, G

    def voted_scores(self, dots):
        """sum_k c_k sign(w_k . x) / trials, replaying the correction log.

        ``dots(G)`` must return the (n_samples, len(G)) products of the instances
        (with their bias coordinate) with the rows of G. None before any correction.
        """
        total = None
        for first, G in self.directions():
            counts = self.h_count[first + 1 : first + 1 + G.shape[0]].astype(float)
            part = np.sign(dots(G)) @ counts
            total = part if total is None else total + part
        return None if total is None else total / self.n_trials


def _resized(a, n, zero=False):
    """A copy of ``a`` with room for n entries (the new ones zero only if asked)."""
    out = np.zeros(n, dtype=a.dtype) if zero else np.empty(n, dtype=a.dtype)
    m = min(n, a.shape[0])
    out[:m] = a[:m]
    return out
