"""Learned state of one binary problem of a linear p-norm algorithm.

A plain container of numpy arrays (picklable, no jitted objects), handed to the
compiled loops of :mod:`marginkit._core.linear`.
"""

import copy

import numpy as np
import scipy.sparse as sp

from . import linear as L
from . import votes as V

_INDEX = np.int32


class PNormState:
    """Weights, lazy averaging accumulators and (optionally) correction log of one problem.

    The last and averaged hypotheses need only the O(d) weights and accumulators. The
    voted one needs every hypothesis, so with ``keep_log`` the state also keeps, for
    every correction, the coefficient added to v and the non-zeros of its instance,
    in blocks that are appended (never copied) as the stream grows; the voted output
    replays it. Pickled or saved, the state holds what it has used: no spare capacity.

    Parameters
    ----------
    d : int
        Dimension of the instances the algorithm sees (features, plus one for the
        bias coordinate).
    p : float
        The norm of the instances; the weights live in the dual q-norm.
    keep_log : bool, default=True
        Log the corrections, for the voted output.
    horizon : float > 1 or None, default=None
        The horizon of the averaged output (:mod:`marginkit._core.linear`): the
        hypothesis after trial t weighs ``(1 - 1 / horizon)^(T - t)``; None: every
        trial weighs 1 (Freund and Schapire's average).
    """

    def __init__(self, d, p, keep_log=True, cap_k=64, horizon=None):
        self.d = int(d)
        self.p = float(p)
        self.v = np.zeros(d)
        self.g = np.zeros(d) if self.p != 2.0 else np.zeros(0)  # g is v for p = 2
        self.acc = np.zeros(d)
        self.u = np.zeros(d)
        self.fs = np.zeros(L.N_FSTATE)
        self.fs[L.F_S] = 1.0
        self.fs[L.F_PENDING] = 1.0
        self.fs[L.F_GROWTH] = 1.0
        self.fs[L.F_STEP] = L.growth_step(horizon)
        if horizon is not None:
            self.fs[L.F_HORIZON] = horizon
        self.ist = np.zeros(L.N_ISTATE, dtype=np.int64)
        self.ist[L.I_K] = 1
        self.ist[L.I_LOG] = int(bool(keep_log))
        cap_k = cap_k if keep_log else 0
        self.h_start = np.zeros(cap_k, dtype=np.int64)
        self.h_stop = np.zeros(cap_k, dtype=np.int64)
        self.h_coef = np.zeros(cap_k)
        self.h_rescale = np.ones(cap_k)
        self.h_count = np.zeros(cap_k + 1 if keep_log else 0, dtype=np.int64)
        size = max(1024, 16 * (d + 1)) if keep_log else 0
        self.b_indices = [np.zeros(size, dtype=_INDEX)]
        self.b_data = [np.zeros(size)]
        self.b_first = [0]  # first correction logged in each block
        # ROMMA's soft-margin coordinates of the rows of a fit in memory, during its
        # passes (see linear.Weights); empty otherwise
        self.slack = np.zeros(0)

    @property
    def keeps_log(self):
        return bool(self.ist[L.I_LOG])

    # -- growth of the correction log --------------------------------------------
    def make_room(self, row_nnz):
        """Room for at least one more correction whose instance has ``row_nnz`` non-zeros."""
        k = self.n_corrections
        if k >= self.h_coef.shape[0]:
            cap = max(64, 2 * self.h_coef.shape[0])
            self.h_start = resized(self.h_start, cap)
            self.h_stop = resized(self.h_stop, cap)
            self.h_coef = resized(self.h_coef, cap)
            self.h_rescale = resized(self.h_rescale, cap)
            self.h_count = resized(self.h_count, cap + 1)
        fill = int(self.ist[L.I_HNNZ])
        if fill + row_nnz > self.b_data[-1].shape[0]:
            size = max(2 * self.b_data[-1].shape[0], row_nnz, 1024)
            size = min(size, max(1 << 24, row_nnz))
            self.b_indices.append(np.zeros(size, dtype=_INDEX))
            self.b_data.append(np.zeros(size))
            self.b_first.append(k)
            self.ist[L.I_HNNZ] = 0

    def weights(self):
        """The weights and scalar state, as the compiled passes take them."""
        return L.Weights(self.v, self.direction, self.acc, self.u, self.fs, self.ist, self.slack)

    def log(self, block=-1):
        """The correction log (its current block), as the compiled passes take it."""
        return L.Log(
            self.h_start,
            self.h_stop,
            self.h_coef,
            self.h_rescale,
            self.h_count,
            self.b_indices[block],
            self.b_data[block],
        )

    # -- saving: the state as used, without spare room ------------------------------
    def __getstate__(self):
        state = dict(self.__dict__)
        K = self.n_corrections if self.keeps_log else 0
        for name in ("h_start", "h_stop", "h_coef", "h_rescale", *self.PER_CORRECTION):
            state[name] = self.__dict__[name][:K].copy()
        state["h_count"] = self.h_count[: K + 1 if self.keeps_log else 0].copy()
        ends = [*self.b_first[1:], K]
        used = [
            int(self.ist[L.I_HNNZ])
            if b == len(ends) - 1
            else (int(self.h_stop[ends[b] - 1]) if ends[b] > self.b_first[b] else 0)
            for b in range(len(ends))
        ]
        state["b_indices"] = [a[:n].copy() for a, n in zip(self.b_indices, used, strict=True)]
        state["b_data"] = [a[:n].copy() for a, n in zip(self.b_data, used, strict=True)]
        return state

    def __setstate__(self, state):
        ist = state.get("ist")
        old = isinstance(ist, np.ndarray) and ist.dtype == np.int64 and ist.ndim == 1
        if old and L.I_NHIST < ist.shape[0] < L.N_ISTATE and "h_count" in state:
            # saved before the log was optional: it was always kept
            K = int(ist[L.I_NHIST])
            full = np.zeros(L.N_ISTATE, dtype=np.int64)
            full[: ist.shape[0]] = ist
            full[L.I_TRIALS] = int(state["h_count"][: K + 1].sum())
            full[L.I_LOG] = 1
            state["ist"] = full
        fs = state.get("fs")
        if isinstance(fs, np.ndarray) and fs.dtype == np.float64 and fs.shape == (L.F_SLACK,):
            # saved before ROMMA's soft margin: no slack coordinates
            fs = state["fs"] = np.concatenate([fs, np.zeros(L.F_GROWTH - L.F_SLACK)])
        if isinstance(fs, np.ndarray) and fs.dtype == np.float64 and fs.shape == (L.F_GROWTH,):
            # saved before the horizon: every trial weighs 1 in the average
            trials = float(state["ist"][L.I_TRIALS])
            state["fs"] = np.concatenate([fs, [1.0, 1.0, trials, 0.0]])
        state.setdefault("slack", np.zeros(0))
        self.__dict__.update(state)

    #: further arrays with one entry per logged correction (subclasses add theirs)
    PER_CORRECTION = ()

    #: the attributes of a state, as saved
    SAVED = (
        *("d", "p", "v", "g", "acc", "u", "fs", "ist"),
        *("h_start", "h_stop", "h_coef", "h_rescale", "h_count"),
        *("b_indices", "b_data", "b_first", "slack"),
    )

    # -- checking a loaded state ---------------------------------------------------
    # -- iterative parameter mixing ------------------------------------------------
    @classmethod
    def from_sums(cls, start, w, acc, made, trials, k):
        """The state after one epoch of iterative parameter mixing (McDonald, Hall and
        Mann, NAACL 2010, Figure 2), from the shards' sums: the mixed hypothesis as the
        next epoch's start.

        Every shard began the epoch from ``start`` with its running sum of hypotheses
        at 0 (``acc``, ``u`` and Sigma zero; ``start`` holds the sum before the epoch,
        flushed). The mixed hypothesis ``w`` is the primal one, ``sum_i weights_i w_i /
        sum_i weights_i``, mapped back to the dual ``theta = f(w)`` of Gentile (JMLR
        2001, section 2) for the next epoch: v = theta / s with s = ``||theta||_p =
        ||w||_q`` (Lemma 2), so that ``S = sum |v|^p`` is 1 and far from overflow; for
        p = 2, v = w and s = 1. A convex mix of hypotheses in ALMA's unit q-ball stays
        in it. A problem no shard corrected (``made`` 0) keeps ``start``'s weights
        exactly (every shard still holds them; ``w`` is not read).

        The running sum becomes ``start``'s plus ``acc`` (the shards' sums of their
        epoch's hypotheses, ``acc + Sigma g - u``, each times its factor, summed), and
        restarts lazy (``u = 0``, Sigma = 0); the trials and corrections are ``start``'s
        plus the shards' (``trials``, ``made``), and the correction counter is ``k``
        (ALMA's k: the caller's mean of the shards', not their total). The result
        keeps no log.

        Parameters
        ----------
        start : PNormState
            The state every shard began the epoch from.
        w : ndarray of shape (d,)
            The mixed hypothesis.
        acc : ndarray of shape (d,)
            The shards' sums of hypotheses, weighted and summed.
        made, trials : int
            The shards' corrections and trials in the epoch, summed.
        k : int >= 1
            The mixed state's correction counter.

        Returns
        -------
        PNormState
        """
        out = cls(start.d, start.p, keep_log=False)
        p = start.p
        if made == 0:
            out.v[:] = start.v
            out.g[:] = start.g
            out.fs[:] = start.fs  # its scale, norm sum and count since S's recomputation
        else:
            s_scale = 1.0
            if p == 2.0:
                out.v[:] = w
            else:
                q = p / (p - 1.0)
                nq = L.scaled_norm(w, q)
                if nq > 0.0:
                    # theta = f(w) = s v: v_i = sign(w_i) (|w_i| / ||w||_q)^(q - 1)
                    out.v[:] = np.sign(w) * (np.abs(w) / nq) ** (q - 1.0)
                    s_scale = nq
            total = L._recompute(out.v, out.direction, p)
            out.fs[L.F_S] = s_scale
            out.fs[L.F_SUM] = total
            out.fs[L.F_SIGMA_W] = L._sigma(s_scale, total, p)
        out.fs[L.F_SIGMA] = 0.0
        out.acc[:] = start.sum_weights() + acc
        out.ist[L.I_K] = int(k)
        out.ist[L.I_NHIST] = start.n_corrections + made
        out.ist[L.I_TRIALS] = start.n_trials + trials
        out.fs[L.F_MASS] = out.n_trials
        return out

    def without_sum(self):
        """A copy whose running sum of hypotheses is 0 (``acc``, ``u``, Sigma): what a
        shard of iterative parameter mixing (:meth:`from_sums`) starts its epoch from,
        so that it returns its own sum."""
        out = copy.deepcopy(self)
        out.acc[:] = 0.0
        out.u[:] = 0.0
        out.fs[L.F_SIGMA] = 0.0
        return out

    # -- what the state means ------------------------------------------------------
    @property
    def n_corrections(self):
        return int(self.ist[L.I_NHIST])

    @property
    def n_trials(self):
        return int(self.ist[L.I_TRIALS])

    @property
    def horizon(self):
        """The horizon of the averaged output, or None (every trial weighs 1)."""
        h = float(self.fs[L.F_HORIZON])
        return h if h > 0.0 else None

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

    def trial_weight(self):
        """The trials' total weight in :meth:`sum_weights`: their number, or with a
        horizon the sum of their weights in the units of the sums."""
        return float(self.n_trials) if self.horizon is None else float(self.fs[L.F_MASS])

    def avg_weights(self):
        """Mean over trials of the post-trial hypothesis (with a horizon, weighted: the
        hypothesis after trial t by ``(1 - 1 / horizon)^(T - t)``)."""
        n = self.trial_weight()
        return self.sum_weights() / n if n else np.zeros(self.d)

    def theta(self):
        """theta = f(w), the dual vector to which corrections are added."""
        return self.fs[L.F_S] * self.v

    def hypotheses(self, columns, max_elems=1 << 22):
        """Yield ``(first, G, norms)``: row j of G is g on ``columns`` after correction
        ``first + j`` (a positive multiple of w_(first+j+1)), ``norms`` their 2-norms.

        The hypotheses are rebuilt from the log with the arithmetic of training, in
        chunks of at most ``max_elems`` numbers, and only on the columns asked for:
        predicting sparse rows costs the columns they use, not d.
        """
        K = self.n_corrections
        column = np.full(self.d, -1, dtype=np.int64)
        column[columns] = np.arange(columns.shape[0])
        v = np.zeros(columns.shape[0])
        chunk = max(1, max_elems // max(columns.shape[0], 1))
        bounds = [*self.b_first, K]
        for b in range(len(self.b_first)):
            log = self.log(b)
            for first in range(bounds[b], bounds[b + 1], chunk):
                stop = min(bounds[b + 1], first + chunk)
                G = np.empty((stop - first, columns.shape[0]))
                norms = np.empty(stop - first)
                V.replay_columns(log, first, stop, v, column, self.p, G, norms)
                yield first, G, norms

    def voted_scores(self, X, aug, hyp_sigma=None, hyp_bias=None, max_elems=1 << 22):
        """sum_k c_k sign(w_k . x) / trials for the rows of X (bias coordinate ``aug``).

        The votes are those of the exact values of the hypotheses training used: every
        w_k is replayed from the log with the arithmetic of training, on the columns X
        uses only, and no running sum decides a vote whose value is within its rounding
        of 0 (:func:`marginkit._core.votes.cast_votes`). So there is no cancellation however
        the hypotheses' scale swings, and a row gets the same decisions dense or sparse,
        alone or in a batch. Dense rows are multiplied with the rebuilt hypotheses in
        blocks (:meth:`hypotheses`, BLAS); sparse rows follow each correction's changed
        coordinates instead (:func:`marginkit._core.votes.vote_rows`), O(corrections x rows
        + the rows' non-zeros on the changed columns).

        With ``hyp_sigma`` and ``hyp_bias`` (per correction k: w_(k+1) = hyp_sigma[k]
        g_(k+1), and the hyperplane's bias) the votes are ``sign(w_k . x + b_k)``.
        """
        K = self.n_corrections
        n = X.shape[0]
        out = np.zeros(n)
        if K == 0 or n == 0:
            return out
        n_feat = X.shape[1]
        has_aug = n_feat < self.d
        counts = self.h_count[1 : K + 1].astype(np.float64)
        if hyp_bias is None:
            hyp_sigma = hyp_bias = np.zeros(0)
        else:
            hyp_sigma, hyp_bias = hyp_sigma[:K], hyp_bias[:K]
        if sp.issparse(X):
            columns = np.unique(X.indices).astype(np.int64)
            rows = X[:, columns]
            rows.sort_indices()
            m = columns.shape[0]
            if has_aug:
                columns = np.append(columns, self.d - 1)
            cols = rows.tocsc()
            cols.sort_indices()
            column = np.full(self.d, -1, dtype=np.int64)
            column[columns] = np.arange(columns.shape[0])
            v, g = np.zeros(columns.shape[0]), np.zeros(columns.shape[0])
            P, E = np.zeros(n), np.zeros(n)
            csr = L.CsrRows(
                rows.indptr.astype(np.int64),
                rows.indices.astype(np.int64),
                rows.data,
                float(aug),
                np.zeros(0),
            )
            csc = (cols.indptr.astype(np.int64), cols.indices.astype(np.int64), cols.data)
            bounds = [*self.b_first, K]
            for b in range(len(self.b_first)):
                V.vote_rows(
                    self.log(b),
                    (bounds[b], bounds[b + 1]),
                    (v, g, column, self.p),
                    csr,
                    csc,
                    m if has_aug else -1,
                    (P, E),
                    (counts, hyp_sigma, hyp_bias, out),
                )
            return out / self.n_trials
        columns = np.arange(n_feat + has_aug, dtype=np.int64)
        if has_aug:
            columns[-1] = self.d - 1
        Xd = np.ascontiguousarray(X, dtype=np.float64)
        x_norms = np.sqrt(np.einsum("ij,ij->i", Xd, Xd) + aug * aug)
        empty = np.zeros(0)
        for first, G, norms in self.hypotheses(columns, max_elems):
            stop = first + G.shape[0]
            ranks_at = (
                counts[first:stop],
                hyp_sigma[first:stop] if hyp_sigma.shape[0] else hyp_sigma,
                hyp_bias[first:stop] if hyp_bias.shape[0] else hyp_bias,
            )
            Gt = G[:, :n_feat].T
            step = max(1, max_elems // G.shape[0])
            for lo in range(0, n, step):
                hi = min(n, lo + step)
                P = Xd[lo:hi] @ Gt
                if has_aug:
                    P += aug * G[:, n_feat]
                V.cast_votes(
                    np.ascontiguousarray(P),
                    (G, norms),
                    L.DenseRows(Xd[lo:hi], float(aug), empty),
                    x_norms[lo:hi],
                    n_feat if has_aug else -1,
                    (*ranks_at, out[lo:hi]),
                )
        return out / self.n_trials


def resized(a, n):
    """A copy of ``a`` with room for n entries, the new ones zero."""
    out = np.zeros(n, dtype=a.dtype)
    m = min(n, a.shape[0])
    out[:m] = a[:m]
    return out
