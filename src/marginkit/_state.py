"""Learned state of one binary problem of a linear p-norm algorithm.

A plain container of numpy arrays (picklable, no jitted objects), handed to the
compiled loops of :mod:`marginkit._linear`.
"""

import numpy as np

from . import _linear as L

_INDEX = np.int32


class PNormState:
    """Weights, lazy averaging accumulators and correction log of one binary problem.

    Parameters
    ----------
    d : int
        Dimension of the instances the algorithm sees (features, plus one for the
        bias coordinate).
    p : float
        The norm of the instances; the weights live in the dual q-norm.
    """

    def __init__(self, d, p, cap_k=16, cap_nnz=None):
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
        cap_nnz = max(16, cap_k * min(d, 64)) if cap_nnz is None else cap_nnz
        self.h_indptr = np.zeros(cap_k + 1, dtype=np.int64)
        self.h_indices = np.zeros(cap_nnz, dtype=_INDEX)
        self.h_data = np.zeros(cap_nnz)
        self.h_coef = np.zeros(cap_k)
        self.h_rescale = np.ones(cap_k)
        self.h_count = np.zeros(cap_k + 1, dtype=np.int64)

    # -- growth of the correction log --------------------------------------------
    def grow(self, row_nnz):
        """Make room for at least one more correction of ``row_nnz`` non-zeros."""
        k, nnz = self.n_corrections, int(self.ist[L.I_HNNZ])
        if k >= self.h_coef.shape[0]:
            cap = 2 * self.h_coef.shape[0]
            self.h_indptr = _resized(self.h_indptr, cap + 1)
            self.h_coef = _resized(self.h_coef, cap)
            self.h_rescale = _resized(self.h_rescale, cap, fill=1.0)
            self.h_count = _resized(self.h_count, cap + 1)
        if nnz + row_nnz > self.h_data.shape[0]:
            cap = max(2 * self.h_data.shape[0], nnz + row_nnz)
            self.h_indices = _resized(self.h_indices, cap)
            self.h_data = _resized(self.h_data, cap)

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

    def voted_scores(self, X_aug_dot, chunk_elems=1 << 22):
        """sum_k c_k sign(w_k . x) / trials, replaying the correction log.

        ``X_aug_dot(G)`` must return the (n_samples, len(G)) products of the
        instances (with their bias coordinate) with the rows of G.
        """
        K = self.n_corrections
        n_trials = self.n_trials
        total = None
        v = np.zeros(self.d)
        chunk = max(1, chunk_elems // max(self.d, 1))
        for first in range(0, K, chunk):
            stop = min(K, first + chunk)
            G = np.empty((stop - first, self.d))
            L.replay_directions(
                self.h_indptr,
                self.h_indices,
                self.h_data,
                self.h_coef,
                self.h_rescale,
                first,
                stop,
                v,
                self.p,
                G,
            )
            part = np.sign(X_aug_dot(G)) @ self.h_count[first + 1 : stop + 1].astype(float)
            total = part if total is None else total + part
        if total is None:
            return None
        return total / n_trials


def _resized(a, n, fill=0):
    out = np.full(n, fill, dtype=a.dtype)
    m = min(n, a.shape[0])
    out[:m] = a[:m]
    return out
