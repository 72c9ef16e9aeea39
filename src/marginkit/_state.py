"""Learned state of one binary problem of a linear p-norm algorithm.

A plain container of numpy arrays (picklable, no jitted objects), handed to the
compiled loops of :mod:`marginkit._linear`.
"""

import numpy as np
import scipy.sparse as sp

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
        self.g = np.zeros(d) if self.p != 2.0 else np.zeros(0)  # g is v for p = 2
        self.acc = np.zeros(d)
        self.u = np.zeros(d)
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

    @property
    def direction(self):
        """g = sign(v) |v|^(p-1), a positive multiple of w (v itself for p = 2)."""
        return self.v if self.p == 2.0 else self.g

    def last_weights(self):
        """w_k = f^-1(theta_k), the current hypothesis (||w||_q <= 1)."""
        return self.fs[L.F_SIGMA_W] * self.direction

    def sum_weights(self):
        """sum over trials t of w_(t+1): the Freund-Schapire averaged vector, unnormalised."""
        return self.acc + self.fs[L.F_SIGMA] * self.direction - self.u

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

    def direction_change_matrix(self):
        """For p = 2: CSR matrix (K, d) whose row k is the change of v made by correction k.

        v . x after correction k is the running sum of ``(D @ x)[:k+1]``, rescaled at
        logged folds; see :meth:`voted_scores`.
        """
        K = self.n_corrections
        bounds = [*self.b_first, K]
        datas, indices, indptrs, offset = [], [], [np.zeros(1, dtype=np.int64)], 0
        for b in range(len(self.b_first)):
            first, stop = bounds[b], bounds[b + 1]
            if stop == first:
                continue
            lo, hi = self.h_start[first], self.h_stop[stop - 1]
            out = np.empty(hi)
            L.direction_changes(
                self.h_start,
                self.h_stop,
                self.h_coef,
                self.b_indices[b],
                self.b_data[b],
                first,
                stop,
                out,
            )
            datas.append(out[lo:hi])
            indices.append(self.b_indices[b][lo:hi])
            indptrs.append(self.h_stop[first:stop] - lo + offset)
            offset += hi - lo
        if not datas:
            return sp.csr_matrix((0, self.d))
        return sp.csr_matrix(
            (np.concatenate(datas), np.concatenate(indices), np.concatenate(indptrs)),
            shape=(K, self.d),
        )

    def voted_scores(self, X, aug, max_elems=1 << 24, hyp_sigma=None, hyp_bias=None):
        """sum_k c_k sign(w_k . x) / trials for the rows of X (bias coordinate ``aug``).

        For p = 2, w_k . x is a running sum of ``coef_k x_k . x`` along the
        corrections, as v itself is built: one sparse product with the log gives every
        change, O(nnz(X) x corrections) at most. For p > 2, g_k is not linear in the
        log, and running sums of its changes lose their digits when g_i swings over
        orders of magnitude; the directions g_k are rebuilt in chunks instead
        (:meth:`directions`) and multiplied with X, O(d x corrections) more work.

        With ``hyp_sigma`` and ``hyp_bias`` (per correction k: w_(k+1) = hyp_sigma[k]
        g_(k+1), and the hyperplane's bias) the votes are ``sign(w_k . x + b_k)``.
        """
        K = self.n_corrections
        out = np.zeros(X.shape[0])
        if K == 0:
            return out
        n_feat = X.shape[1]
        counts = self.h_count[1 : K + 1].astype(np.float64)
        if self.p != 2.0:
            for first, G in self.directions(max_elems):
                P = np.asarray(X @ G[:, :n_feat].T)
                if n_feat < self.d:
                    P = P + aug * G[:, n_feat]
                if hyp_bias is not None:
                    stop = first + G.shape[0]
                    P = P * hyp_sigma[first:stop] + hyp_bias[first:stop]
                out += np.sign(P) @ counts[first : first + G.shape[0]]
            return out / self.n_trials
        D = self.direction_change_matrix()
        if not sp.issparse(X) and D.nnz > 0.25 * K * n_feat:
            Dx = D[:, :n_feat].toarray().T
        else:
            Dx = D[:, :n_feat].T.tocsr()
        bias = D[:, n_feat].toarray().ravel() * aug if n_feat < self.d else None
        mult = self.h_rescale[:K]
        if hyp_bias is None:
            hyp_sigma = hyp_bias = np.zeros(0)
        else:
            hyp_sigma, hyp_bias = hyp_sigma[:K], hyp_bias[:K]
        step = max(1, max_elems // K)
        for lo in range(0, X.shape[0], step):
            P = X[lo : lo + step] @ Dx
            P = P.toarray() if sp.issparse(P) else np.asarray(P)
            if bias is not None:
                P = P + bias
            L.accumulate_votes(
                np.ascontiguousarray(P), mult, counts, out[lo : lo + step], hyp_sigma, hyp_bias
            )
        return out / self.n_trials


def _resized(a, n, zero=False):
    """A copy of ``a`` with room for n entries (the new ones zero only if asked)."""
    out = np.zeros(n, dtype=a.dtype) if zero else np.empty(n, dtype=a.dtype)
    m = min(n, a.shape[0])
    out[:m] = a[:m]
    return out
