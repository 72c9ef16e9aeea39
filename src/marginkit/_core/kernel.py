"""The blocked exact engine of the kernel algorithms (kernel ALMA_2, Gentile 2001, Remark 5).

The hypothesis of every one-vs-rest problem c is ``w_c = s_c sum_j A[j, c] phi_hat(x_j)``
over one support-vector store shared by all problems, ``phi_hat(x) = phi(x) / ||phi(x)||``
(so ``phi_hat(x) . phi_hat(y) = K(x, y) / sqrt(K(x, x) K(y, y))``). A correction of
problem c on x appends ``A = eta y / s_c`` and divides ``s_c`` by
``N = max(1, ||w'||)``, with ``||w'||^2 = ||w||^2 + 2 eta y w . x_hat + eta^2``: no
coefficient ever changes afterwards, which is what makes the blocking exact.

For a block of b incoming examples against m support vectors:

1. one GEMM gives the normalised kernel rows K_hat(block, SV) (b x m),
2. one more gives the margins of every problem at once (b x m times m x C),
3. one small GEMM gives the in-block Gram (b x b), and a compiled walk goes through
   the block in order, adding the contribution of every correction made inside the
   block to the examples after it.

The walk makes exactly the decisions of the per-example algorithm; only the order of
floating-point sums differs. Across epochs of one ``fit``, the margin sum of each
example over the support vectors it has already seen is kept (n x C numbers, within
``cache_size``), so a later epoch computes only the kernel columns of support vectors
that are new to that example.

Outputs, with no copy of any hypothesis:

- last: ``s_c sum_j A[j, c] K_hat(x_j, x)``;
- avg (sum_k c_k w_k, Freund and Schapire 1999): a running total ``T_c`` of ``s_c``
  over trials; the averaged coefficient of support vector j is
  ``A[j, c] (T_c - T_c at j's insertion)``;
- voted (sum_k c_k sign(w_k . x)): prefix sums of ``A[j, c] K_hat(x_j, x)`` along the
  insertion order give every ``w_k . x`` up to its positive scale.

Every j above is an entry: one correction of one example (all problems corrected on
that trial). The rows of the store are the examples (:class:`RowStore`): an example
corrected again in a later epoch adds an entry, a few numbers per problem, on the row
it has. The walk and the margin products read the entries (a block's products gather
the rows of the entries they need), so the decisions are those of the per-example
algorithm; the last and averaged outputs sum each row's entries into one coefficient,
and the vote takes each entry's kernel column from its row: memory and the kernel
rows of a prediction grow with the distinct examples, not with the corrections.
"""

import concurrent.futures
import os
from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn import config_context, get_config

from .. import _checks as check
from .._registry import trusted_type
from .._utils import times_power_of_two
from .arrays import HOST, Host, to_numpy
from .budget import NO_VOTE, maintain
from .kernels import Kernel, thread_pool
from .linear import (
    RULE_AGGRESSIVE_ROMMA,
    RULE_ALMA,
    RULE_PERCEPTRON,
    RULE_ROMMA,
    row_weights,
)

# Sigma-style restart of the averaging totals (see marginkit._core.linear.FLUSH_RATIO).
FLUSH_RATIO = 1e-4
# Fold s into the coefficients below this (s shrinks, A = eta y / s grows).
FOLD_BELOW = 1e-100
#: Make the next block's products in a worker thread while the walk goes through the
#: current block (:class:`Ahead`): on more than two cores, where the products leave
#: room for it (on two, BLAS keeps both busy, and the overlap measured no gain).
OVERLAP = (os.cpu_count() or 1) > 2


#: The per-problem state the walks update (arrays of length C; ``hcount`` (m + 1, C)):
#: the scale ``s``, ``norm2`` = ||w||^2, the correction counter ``k``, the running
#: total ``T`` of ``s`` over trials, and the trials each hypothesis lasted.
Problems = namedtuple("Problems", ["s", "norm2", "k", "T", "hcount"])
#: The margin sums of a block (b x C): ``F`` over the stored vectors plus the block's
#: corrections so far, ``f_seen`` as they stood at each row's trial, ``cache`` those
#: kept across the epochs (n x C; 0 x C when none are kept), and ``slack`` the
#: 2-norm soft-margin sums of the rows of the data (n x C: kernel PUMMA's, and kernel
#: ROMMA's in a fit; 0 x C for a stream, and for the walks without one).
Sums = namedtuple("Sums", ["F", "f_seen", "cache", "slack"])
#: Views of the stored vectors' arrays (``Stored``): coefficients, averaging total at
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


@njit(cache=True, nogil=True)
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
        total and hypothesis lifetimes (:data:`Problems`), updated in place.
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
            T[c] += s[c]
        if made:
            room -= adds[i]
        if fold or room <= 0:
            return i + 1
    return b


@njit(cache=True, nogil=True)
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


@trusted_type
class RowStore:
    """A growing store of rows with their kernel norms, sliced without copies.

    Dense rows live on the products' backend (:mod:`marginkit._core.arrays`: the host, or
    the device of the data under array API dispatch), sparse ones on the host as CSR.
    ``inv[j]`` is ``1 / sqrt(K(x_j, x_j))`` (or the 0 / 1 of an unnormalised rule),
    ``sq[j]`` is ``||x_j||^2`` (0 where the kernel needs no norms). A saved store holds
    host float64 arrays; :meth:`to` moves it to where the next call's data are.

    A keyed store (``keyed=True``: kernel ALMA's support vectors) holds each example
    once: its ``n`` entries, which the engine indexes, are rows of the store, ``vec``
    mapping an entry to its row once an example has come back (None while every entry
    is a row of its own, and in the stores of kernel PUMMA's pairs), ``keys`` the
    example of each row (its position in the training stream; -1: no example, a merged
    vector). An example corrected in several epochs is then one row, however many
    entries (coefficients) it has.
    """

    #: the entry -> row map, or None: entry j is row j
    vec = None
    #: the example of each row (-1: none), or None: the store does not look them up
    keys = None
    #: the rows held, where ``vec`` maps entries to them (None: ``n``)
    held = None

    def __init__(self, n_features, sparse, capacity=256, backend=None, keyed=False):
        self.n_features = n_features
        self.sparse = sparse
        self.n = 0
        bk = HOST if backend is None or sparse else backend
        if not bk.same(HOST):
            self._backend = bk
        if sparse:
            self.indptr = np.zeros(capacity + 1, dtype=np.int64)
            self.indices = np.zeros(capacity * 8, dtype=np.int32)
            self.data = np.zeros(capacity * 8)
        else:
            self.rows = bk.zeros((capacity, n_features))
        self.inv = bk.zeros(capacity)
        self.sq = bk.zeros(capacity)
        if keyed:
            self.keys = np.full(capacity, -1, dtype=np.int64)

    @property
    def backend(self):
        return self.__dict__.get("_backend", HOST)

    @property
    def n_rows(self):
        """The rows held (as many as the entries, but in a store where an example came
        back)."""
        return self.n if self.vec is None else self.held

    def to(self, backend):
        """Move the store to ``backend`` (sparse stores stay on the host)."""
        if self.sparse or backend.same(self.backend):
            return self
        n = self.n_rows
        if not self.sparse:
            self.rows = _moved(self.rows[:n, :], backend)
        self.inv = _moved(self.inv[:n], backend)
        self.sq = _moved(self.sq[:n], backend)
        if backend.same(HOST):
            self.__dict__.pop("_backend", None)
        else:
            self._backend = backend
        return self

    def _room(self, rows):
        """Capacity for ``rows`` rows (the stored ones kept)."""
        if rows > self.inv.shape[0]:
            bk = self.backend
            cap = max(2 * self.inv.shape[0], rows)
            n = self.n_rows
            self.inv = _grown(self.inv, n, (cap,), bk)
            self.sq = _grown(self.sq, n, (cap,), bk)
            if not self.sparse:
                self.rows = _grown(self.rows, n, (cap, self.n_features), bk)
        if self.keys is not None and rows > self.keys.shape[0]:
            self.keys = _grow(self.keys, rows, fill=-1)

    def _spans(self, lo, hi):
        """The rows of entries lo..hi-1: ``(a, b)`` where they are rows a..b-1 in
        order, else their row indices (host integers)."""
        if self.vec is None:
            return lo, hi
        r = self.vec[lo:hi]
        if r.size == 0 or (r[-1] - r[0] == r.size - 1 and np.all(np.diff(r) == 1)):
            a = int(r[0]) if r.size else 0
            return a, a + r.size
        return r

    def found(self, keys):
        """The row holding each example of ``keys`` (-1: none). A store without keys
        finds none."""
        if self.keys is None:
            return np.full(len(keys), -1, dtype=np.int64)
        where = self.__dict__.get("_where")
        if where is None:
            held = self.keys[: self.n_rows]
            mine = np.flatnonzero(held >= 0)
            where = self._where = dict(zip(held[mine].tolist(), mine.tolist(), strict=True))
        return np.array([where.get(k, -1) for k in np.asarray(keys).tolist()], dtype=np.int64)

    def beside(self, parts, lo):
        """Dense rows of entries lo..n-1 followed by the rows of ``parts`` (``(X, inv,
        sq)`` each, arrays of the store's backend; ``sq`` may be None), as ``(rows,
        inv, sq)``: the parts are written in the room after the rows held, where the
        next append writes, and the result is a view where the entries are those rows
        in order (a copy where they repeat older rows). A product that reads them must
        be made, or queued on a device (which runs its work in order), before that
        append."""
        held = self.n_rows
        span = self._spans(lo, self.n)
        at = held
        self._room(at + sum(X.shape[0] for X, _, _ in parts))
        for X, inv, sq in parts:
            k = X.shape[0]
            self.rows[at : at + k, :] = X
            self.inv[at : at + k] = inv
            if sq is not None:
                self.sq[at : at + k] = sq
            at += k
        if isinstance(span, tuple) and span[1] == held:
            a = span[0]
            return self.rows[a:at, :], self.inv[a:at], self.sq[a:at]
        bk = self.backend
        idx = np.concatenate(
            [span if not isinstance(span, tuple) else np.arange(*span), np.arange(held, at)]
        )
        idx = bk.index(idx)
        return bk.take(self.rows, idx), bk.take(self.inv, idx), bk.take(self.sq, idx)

    def append(self, X, inv, sq=None, keys=None, repeats=None):
        """Append entries: the rows of ``X`` (with ``inv`` and ``sq``), and, with
        ``repeats`` (one per entry, in order: the row an entry repeats, or -1 for the
        next row of ``X``), entries that repeat rows held. ``keys``: the example of each
        entry (for :meth:`found`), or None."""
        m = X.shape[0]
        entries = m if repeats is None else len(repeats)
        if entries == 0:
            return
        n, held = self.n, self.n_rows
        fresh = None if repeats is None else np.asarray(repeats) < 0
        if fresh is not None and not fresh.all() and self.vec is None:
            self.vec = np.arange(max(n + entries, self.inv.shape[0]), dtype=np.int64)
            self.held = held
        if m:
            self._append_rows(X, inv, sq, held)
        if self.vec is not None:
            if n + entries > self.vec.shape[0]:
                self.vec = _grow(self.vec, n + entries)
            if fresh is None:
                placed = held + np.arange(m)
            else:
                placed = np.array(repeats, dtype=np.int64)
                placed[fresh] = held + np.arange(m)
            self.vec[n : n + entries] = placed
            self.held = held + m
        if self.keys is not None and m:
            new_keys = np.full(m, -1, dtype=np.int64)
            if keys is not None:
                new_keys[:] = np.asarray(keys)[fresh] if fresh is not None else keys
            self.keys[held : held + m] = new_keys
            where = self.__dict__.get("_where")
            if where is not None:
                where.update((k, held + i) for i, k in enumerate(new_keys.tolist()) if k >= 0)
        self.n = n + entries

    def _append_rows(self, X, inv, sq, at):
        m = X.shape[0]
        self._room(at + m)
        self.inv[at : at + m] = inv
        if sq is not None:
            self.sq[at : at + m] = sq
        if self.sparse:
            X = sp.csr_matrix(X)
            need_rows = at + m + 1
            if need_rows > self.indptr.shape[0]:
                self.indptr = _grow(self.indptr, need_rows)
            nnz0 = self.indptr[at]
            need = nnz0 + X.nnz
            if need > self.data.shape[0]:
                self.indices = _grow(self.indices, need)
                self.data = _grow(self.data, need)
            self.indices[nnz0:need] = X.indices
            self.data[nnz0:need] = X.data
            self.indptr[at + 1 : at + m + 1] = nnz0 + X.indptr[1:]
        else:
            self.rows[at : at + m, :] = X

    def __getstate__(self):
        """The rows stored, on the host in float64, without the spare room (saved models
        hold no more)."""
        state = dict(self.__dict__)
        state.pop("_backend", None)
        state.pop("_where", None)
        n = self.n_rows
        if self.sparse:
            state["indptr"] = self.indptr[: n + 1].copy()
            state["indices"] = self.indices[: self.indptr[n]].copy()
            state["data"] = self.data[: self.indptr[n]].copy()
        else:
            state["rows"] = np.array(to_numpy(self.rows[:n, :]), dtype=np.float64)
        state["inv"] = np.array(to_numpy(self.inv[:n]), dtype=np.float64)
        state["sq"] = np.array(to_numpy(self.sq[:n]), dtype=np.float64)
        if self.vec is not None:
            state["vec"] = self.vec[: self.n].copy()
        if self.keys is not None:
            state["keys"] = self.keys[:n].copy()
        return state

    def _check_loaded(self, where, n_features):
        """The rows as saved: ``n`` entries, each a row of ``n_features`` finite values
        with its norms (or, with ``vec``, one of ``held`` such rows, every row some
        entry's); for sparse rows, a CSR structure whose pointers rise from 0 to the
        non-zeros and whose column indices are sorted in each row and less than
        ``n_features`` (scipy's products follow them unchecked)."""
        w = f"{where}."
        check.equal(
            check.integer(self.n_features, w + "n_features", 1), w + "n_features", n_features
        )
        entries = check.integer(self.n, w + "n", 0)
        n = entries
        if self.vec is not None:
            n = check.integer(self.held, w + "held", 0, entries)
            vec = check.array(self.vec, w + "vec", np.int64, (entries,), within=(0, max(n, 1)))
            if np.unique(vec).size != n:
                check.fail(w + "vec", f"must map the entries onto all {n} rows")
        common = ("n_features", "sparse", "n", "inv", "sq")
        if not check.flag(self.sparse, w + "sparse"):
            check.attributes(self, where, (*common, "rows"), ("vec", "keys", "held"))
            check.array(self.rows, w + "rows", np.float64, (n, n_features), finite=True)
        else:
            check.attributes(
                self, where, (*common, "indptr", "indices", "data"), ("vec", "keys", "held")
            )
            indptr = check.array(self.indptr, w + "indptr", np.int64, (n + 1,))
            if indptr[0] != 0 or np.any(np.diff(indptr) < 0):
                check.fail(w + "indptr", "must rise from 0")
            nnz = int(indptr[-1])
            indices = check.array(
                self.indices, w + "indices", np.int32, (nnz,), within=(0, n_features)
            )
            check.array(self.data, w + "data", np.float64, (nnz,), finite=True)
            rising = np.diff(indices) > 0
            ends = indptr[1:-1]
            rising[ends[(ends > 0) & (ends < nnz)] - 1] = True  # from one row to the next
            if not rising.all():
                check.fail(w + "indices", "must be sorted within each row, without repeats")
        for name in ("inv", "sq"):
            check.array(getattr(self, name), w + name, np.float64, (n,), finite=True)
        if self.keys is not None:
            check.array(self.keys, w + "keys", np.int64, (n,), within=(-1, 2**62))

    def renumber(self, at, start=0):
        """The examples of the rows held from position ``start`` on are now ``start +
        at[key - start]`` (positions in a larger stream than the one the keys counted)."""
        if self.keys is not None:
            n = self.n_rows
            keys = self.keys[:n]
            moved = keys >= max(start, 0)  # -1: no example
            keys[moved] = start + at[keys[moved] - start]
            self.__dict__.pop("_where", None)

    def collapse(self):
        """Make every row one entry, in the rows' order (the arrays per entry summed by
        :meth:`KernelState.collapse` first)."""
        if self.vec is not None:
            self.n, self.vec, self.held = self.held, None, None

    def keep(self, S):
        """Keep the rows ``S`` (rising; every entry its own row: :meth:`collapse`) only,
        in their order, in new arrays of the same room: the old ones stay as they were
        (:meth:`Stored.undo_point` keeps them)."""
        if self.vec is not None:
            raise RuntimeError("collapse the store's entries before keeping rows")
        k = S.shape[0]
        bk = self.backend
        if self.sparse:
            kept = sp.csr_matrix(self.view(0, self.n))[S]
            for name, part in (("indptr", kept.indptr), ("indices", kept.indices)):
                room = np.zeros_like(getattr(self, name))
                room[: part.shape[0]] = part
                setattr(self, name, room)
            self.data = _grown(kept.data, kept.nnz, self.data.shape, HOST)
        else:
            self.rows = _grown(bk.take(self.rows, bk.index(S)), k, self.rows.shape, bk)
        idx = bk.index(S)
        self.inv = _grown(bk.take(self.inv, idx), k, self.inv.shape, bk)
        self.sq = _grown(bk.take(self.sq, idx), k, self.sq.shape, bk)
        if self.keys is not None:
            keys = np.full_like(self.keys, -1)
            keys[:k] = self.keys[S]
            self.keys = keys
        self.__dict__.pop("_where", None)
        self.n = k

    def _rows_view(self, a, b):
        if not self.sparse:
            return self.rows[a:b, :]
        p, z = self.indptr[a], self.indptr[b]
        return sp.csr_matrix(
            (self.data[p:z], self.indices[p:z], self.indptr[a : b + 1] - p),
            shape=(b - a, self.n_features),
        )

    def view(self, lo, hi):
        """The rows of entries lo..hi-1 (a view where they are rows in order, else a
        gather)."""
        span = self._spans(lo, hi)
        if isinstance(span, tuple):
            return self._rows_view(*span)
        if self.sparse:
            return self._rows_view(0, self.n_rows)[span]
        return self.backend.take(self.rows, self.backend.index(span))

    def norms(self, lo, hi):
        """``(inv, sq)`` of the rows of entries lo..hi-1."""
        span = self._spans(lo, hi)
        if isinstance(span, tuple):
            a, b = span
            return self.inv[a:b], self.sq[a:b]
        idx = self.backend.index(span)
        return self.backend.take(self.inv, idx), self.backend.take(self.sq, idx)

    def distinct(self):
        """``(rows, inv, sq)`` of the rows held, each once."""
        n = self.n_rows
        return self._rows_view(0, n), self.inv[:n], self.sq[:n]

    def entry_rows(self):
        """The row of each entry (host integers), or None where entry j is row j."""
        return None if self.vec is None else self.vec[: self.n]

    def rows_copy(self, lo, hi):
        """A copy of rows lo..hi-1 held, in the store's namespace."""
        rows = self._rows_view(lo, hi)
        if sp.issparse(rows) or isinstance(rows, np.ndarray):
            return rows.copy()
        return self.backend.xp.asarray(rows, copy=True)


def _grown(a, n, shape, backend):
    out = backend.zeros(shape)
    out[:n, ...] = a[:n, ...]
    return out


def _moved(a, target):
    """``a`` as an array of ``target``, by way of the host (stores move rarely: a model
    loaded from a file, or used with data of another device or dtype)."""
    host = np.ascontiguousarray(to_numpy(a))
    return np.array(host, dtype=target.dtype) if isinstance(target, Host) else target.asarray(host)


class Instances:
    """The rows of one call (training or prediction) where its products are made.

    ``inv`` (``1 / sqrt(K(x, x))``, or the 0 / 1 of a rule that does not normalise) is
    kept on the host, where the walk reads it, and on the backend with ``sq``
    (``||x||^2``, None when the kernel needs no norms), where the products do.
    """

    def __init__(self, X, inv, sq, backend, exponent=0):
        self.X = X
        self.backend = backend
        self.inv = inv
        self.inv_dev = backend.asarray(inv)
        self.sq_dev = None if sq is None else backend.asarray(sq)
        #: the rows' units are X's times ``2^exponent``, applied a chunk at a time (a
        #: power of two is exact: no copy of the whole of X is made)
        self.exponent = exponent

    @property
    def n(self):
        return self.X.shape[0]

    def rows(self, X):
        """Rows of X in the units of the products."""
        return times_power_of_two(X, self.exponent)

    def chunks(self, step):
        """``(lo, hi, X, inv, sq)`` of consecutive rows, ``step`` at a time."""
        for lo in range(0, self.n, step):
            hi = min(self.n, lo + step)
            sq = None if self.sq_dev is None else self.sq_dev[lo:hi]
            yield lo, hi, self.rows(self.X[lo:hi, :]), self.inv_dev[lo:hi], sq


class Ordered:
    """The rows of one pass (:class:`Instances`) in the order of the pass: the order as
    an index of the backend and the norms in that order, each gathered once, so that
    a block costs one gather of its rows."""

    def __init__(self, data, order):
        bk = self.backend = data.backend
        self.X, self.order, self.rows = data.X, order, data.rows
        self.index = bk.index(order)
        self.inv = data.inv[order]
        self.inv_dev = bk.take(data.inv_dev, self.index)
        self.sq_dev = None if data.sq_dev is None else bk.take(data.sq_dev, self.index)

    def block(self, lo, hi):
        """``(X, inv on the host, inv, sq)`` of the pass's rows lo..hi-1 (``hi`` within
        the pass: the standard leaves slices past the end unspecified)."""
        sq = None if self.sq_dev is None else self.sq_dev[lo:hi]
        X = self.rows(self.backend.take(self.X, self.index[lo:hi]))
        return X, self.inv[lo:hi], self.inv_dev[lo:hi], sq


def trimmed(obj, rows, names):
    """``obj.__dict__`` with the arrays ``names`` cut to their first ``rows`` rows, and
    ``hcount`` to ``rows + 1``: what a growing per-support-vector state has used. The
    coefficients' copy on a device (:class:`Coefficients`) and the shards of a fit on a
    cluster (``remote``, :mod:`marginkit._core.shards`) are not saved."""
    state = dict(obj.__dict__)
    state.pop("_mirror", None)
    state.pop("remote", None)
    # a budget's inverses (marginkit._core.budget), made anew
    state.pop("_inverse", None)
    state.pop("_kept_inverse", None)
    for name in names:
        if state.get(name) is not None:
            state[name] = state[name][:rows].copy()
    state["hcount"] = obj.hcount[: rows + 1].copy()
    return state


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


def check_problems(state, where, m, C, floats):
    """The per-problem arrays of a kernel state of ``m`` vectors: the scales ``s``
    positive, the other ``floats`` finite, the counters ``k`` one more than the vectors
    each problem made (what ``hcount[k - 1]`` indexes), ``hcount`` adding up to the trials
    in every problem."""
    w = f"{where}."
    for name in floats:
        check.array(getattr(state, name), w + name, np.float64, (C,), finite=True)
    if not (np.all(state.s > 0) and np.all(state.norm2 >= 0)):
        check.fail(w + "s", "must be positive, and norm2 not negative")
    k = check.array(state.k, w + "k", np.int64, (C,))
    budget = getattr(state, "budget", None)
    if budget is None:
        if not np.array_equal(k - 1, state.mask.sum(axis=0)):
            check.fail(w + "k", f"must count the vectors of each problem, plus one: got {k[:8]}")
    else:
        # the vectors that count against it (KernelState.filling): at most the budget
        check.integer(budget, w + "budget", max(state.filling(), 2))
        if np.any(k < 1):
            check.fail(w + "k", f"must be at least 1: got {k[:8]}")
    trials = check.integer(state.n_trials, w + "n_trials", 0, 2**62)
    check.integer(state.n_seen, w + "n_seen", 0, 2**62)
    check.integer(state.n_kernel_evals, w + "n_kernel_evals", 0, 2**62)
    rows = m + 1 if budget is None else 1
    hcount = check.array(state.hcount, w + "hcount", np.int64, (rows, C), within=(0, 2**62))
    if np.any(hcount.sum(axis=0) != trials):
        check.fail(w + "hcount", f"must add up to the {trials} trials in every problem")


def _grow(a, need, fill=0):
    cap = max(2 * a.shape[0], need)
    shape = (cap,) + a.shape[1:]
    out = np.full(shape, fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


class Stored:
    """The bookkeeping that kernel ALMA's support vectors (:class:`KernelState`) and
    kernel PUMMA's pairs (:class:`marginkit._core.pairs.PairState`) keep alike.

    A row per stored vector in the arrays ``_per_vector`` (grown together), of which
    ``A`` holds the coefficient of every problem, ``T_ins`` the averaging total at its
    insertion and ``acc`` what closed averaging intervals left (``mask``: the problems
    it belongs to); per problem, the scale ``s``, the running total ``T`` of ``s`` over
    trials and the correction counter ``k``; ``hcount[k - 1, c]``: the trials each
    hypothesis of problem c lasted. Subclasses name ``_rows``, their :class:`RowStore`
    (``m``: its rows).
    """

    _per_vector = ()
    #: vectors stored by the last block: where :class:`Ahead` splits the margin sums
    n_last = 0
    #: whether a block's margin sums are one product over every stored vector (kernel
    #: PUMMA), rather than two split where the block before started (:class:`Ahead`)
    _one_sum = False
    #: the most vectors stored (:mod:`marginkit._core.budget`), or None (files of 0.1)
    budget = None

    @property
    def budgeted(self):
        """Whether the store has a budget: it then keeps no lifetimes of the hypotheses
        (``hcount`` is one row, the vote is not offered)."""
        return self.budget is not None

    def __init__(self, n_problems, kernel, normalize, capacity=256):
        """What every store keeps: ``capacity`` rows of the arrays per vector that
        :meth:`fold`, :meth:`flush`, :meth:`averaged` and :func:`vote` read, the
        per-problem state of :data:`Problems` and the counters."""
        self.kernel = kernel
        self.normalize = bool(normalize)  # whether the rows' norms divide the kernel
        self.n_problems = C = n_problems
        self.A = np.zeros((capacity, C))
        self.T_ins = np.zeros((capacity, C))
        self.acc = np.zeros((capacity, C))
        self.mask = np.zeros((capacity, C), dtype=bool)
        self.reset = np.zeros((capacity, C), dtype=bool)
        self.hcount = np.zeros((capacity + 1, C), dtype=np.int64)
        self.s = np.ones(C)
        self.norm2 = np.zeros(C)
        self.k = np.ones(C, dtype=np.int64)
        self.T = np.zeros(C)
        self.n_trials = 0
        self.n_seen = 0  # stream position, for support indices
        self.n_kernel_evals = 0  # kernel entries computed in training

    def __getstate__(self):
        return trimmed(self, self.m, self._per_vector)

    #: the :class:`RowStore` whose rows are the stored vectors (one of them, for pairs)
    _rows = "store"

    @property
    def m(self):
        """The vectors stored."""
        return getattr(self, self._rows).n

    @property
    def backend(self):
        """Where the stored vectors are (the products' backend of the last data)."""
        return getattr(self, self._rows).backend

    @property
    def n_corrections(self):
        return self.k - 1

    def reserve(self, extra):
        """Room for ``extra`` more vectors."""
        need = self.m + extra
        if need > self.A.shape[0]:
            for name in self._per_vector:
                if getattr(self, name) is not None:
                    setattr(self, name, _grow(getattr(self, name), need))
        if need + 1 > self.hcount.shape[0] and not self.budgeted:
            self.hcount = _grow(self.hcount, need + 1)

    def flush(self, c, extra=()):
        """Close the averaging intervals of problem c; T_c restarts from 0.

        ``extra`` holds ``(A, T_ins, acc, mask)`` views of vectors made in the block and
        not stored yet (``mask``: those of problem c).
        """
        m = self.m
        self.acc[:m, c] += self.A[:m, c] * (self.T[c] - self.T_ins[:m, c]) * self.mask[:m, c]
        self.T_ins[:m, c] = 0.0
        for a, t, acc, mask in extra:
            acc += a * (self.T[c] - t) * mask
            t[mask] = 0.0
        self.T[c] = 0.0

    #: the arrays per vector in the units of the scale s (``A`` and its kin)
    _scaled = ("A",)

    def fold(self, c, views=(), extra=(), masked=()):
        """Multiply problem c's coefficients, and every sum made of them, by s_c; s_c = 1.

        ``views`` are arrays of such sums, scaled whole; ``extra`` as in :meth:`flush`
        (their coefficients scaled where their mask is); ``masked``: ``(array, mask)``
        pairs scaled where ``mask`` is.
        """
        self.flush(c, extra)
        f = self.s[c]
        for name in self._scaled:
            if getattr(self, name) is not None:
                getattr(self, name)[: self.m, c] *= f
        for v in views:
            v *= f
        for a, _, _, mask in extra:
            a[mask] *= f
        for a, mask in masked:
            a[mask] *= f
        self.s[c] = 1.0
        self.coefficients_changed()

    def n_support(self, n_classes):
        """(n_classes,) distinct examples (one corrected in several epochs is one): with
        several one-vs-rest problems, those among the support vectors of each class's
        problem (Gentile 2001's "SV" of each digit, Tables 2 and 4); with one problem,
        those of each class among its support vectors (as scikit-learn's SVC counts)."""
        index, label, problem = self.examples()
        out = np.zeros(n_classes, dtype=np.int64)
        if index.size:
            group = label if self.n_problems == 1 else problem
            pairs = np.unique(np.stack([group, index]), axis=1)
            np.add.at(out, pairs[0], 1)
        return out

    #: The trials' total weight in the averaged hypothesis where a budget's merges
    #: decay its sums (:func:`marginkit._core.budget.maintain`); None: every trial
    #: weighs 1, the total is ``n_trials``
    decayed = None

    def trial_weight(self):
        """The total weight of the trials in the averaged hypothesis's sums."""
        return float(self.n_trials) if self.decayed is None else self.decayed

    def averaged(self):
        """(m, C): the coefficients of the averaged hypothesis, ``sum_k c_k w_k`` over the
        trials (Freund and Schapire 1999) divided by their number (by their total
        weight, where a budget's merges decayed the sums)."""
        m = self.m
        total = self.acc[:m] + self.A[:m] * (self.T[None, :] - self.T_ins[:m]) * self.mask[:m]
        weight = self.trial_weight()
        return total / (weight if weight > 0 else 1.0)

    def problems(self):
        """The per-problem state the compiled walks update (:data:`Problems`)."""
        return Problems(self.s, self.norm2, self.k, self.T, self.hcount)

    def old(self, m):
        """Views of the first ``m`` stored vectors' arrays (:data:`Old`)."""
        return Old(self.A[:m], self.T_ins[:m], self.acc[:m], self.mask[:m])

    def kept_sums(self, cache):
        """The margin sums kept across epochs (``cache[0]``), or an empty (0, C) array."""
        return cache[0] if cache is not None else np.zeros((0, self.n_problems))

    def undo_point(self):
        """A function that puts the state back as it is now, for a call that fails
        part-way (an error, an interrupt). The stored rows are only ever appended to, so
        their stores get back their arrays of now (which a move to another backend or
        dtype replaces) cut to the rows they hold now; every other array (a row per
        stored vector or per problem, O(m C), against the O(m b d) of a block's products)
        is copied."""
        saved, stores = {}, {}
        for name, value in self.__dict__.items():
            if isinstance(value, RowStore):
                stores[name] = dict(value.__dict__)
            elif isinstance(value, np.ndarray):
                saved[name] = value.copy()
            elif isinstance(value, list):
                saved[name] = list(value)
            elif name != "_mirror":
                saved[name] = value

        def undo():
            for name, fields in stores.items():
                store = self.__dict__[name]
                store.__dict__.clear()
                store.__dict__.update(fields)
                store.__dict__.pop("_where", None)  # a lookup the call added to
            for name in set(self.__dict__) - set(saved) - set(stores) - {"_mirror"}:
                del self.__dict__[name]  # made since (a budget's carried inverse)
            self.__dict__.update(saved)
            self.coefficients_changed()

        return undo

    def coefficients_changed(self):
        """Older coefficients changed: a device's copy of them is made anew."""
        mirror = self.__dict__.get("_mirror")
        if mirror is not None:
            mirror.stale()

    def per_row(self, coef):
        """Coefficients per stored vector (m, C) as the rows of :meth:`kernel_rows`
        take them: here one row per vector."""
        return coef

    def per_entry(self, K, backend):
        """Kernel rows of :meth:`kernel_rows` as columns per stored vector (for the
        vote, which replays the vectors in order): here the same."""
        return K


@trusted_type
class KernelState(Stored):
    """Support vectors, coefficients and averaging/voting totals of all problems."""

    #: Whether a budgeted store has been full (a maintenance step made,
    #: :func:`marginkit._core.budget.maintain`); see :meth:`filling`. A state saved
    #: before it was kept counted its entries from the start: it goes on as it did.
    filled = True

    def __init__(
        self,
        n_features,
        n_problems,
        sparse,
        kernel,
        forgets=False,
        backend=None,
        normalize=False,
        budget=None,
    ):
        super().__init__(n_problems, kernel, normalize)
        self.budget = None if budget is None else int(budget)
        self.filled = False
        if self.budgeted:
            self.hcount = np.zeros((1, n_problems), dtype=np.int64)
        self.store = RowStore(n_features, sparse, backend=backend, keyed=True)
        cap = self.A.shape[0]
        self.index = np.zeros(cap, dtype=np.int64)  # position in the training stream
        self.label = np.zeros(cap, dtype=np.int64)  # its class, an index of classes_
        # ROMMA can forget its hypothesis (zeroing A): the vote then needs the
        # coefficients as inserted (V) and where each hypothesis started afresh
        self.V = np.zeros((cap, n_problems)) if forgets else None
        self.n_last = 0  # support vectors the last block stored
        self.slack = np.zeros((0, n_problems))

    #: ROMMA's soft-margin sums of the rows of a fit (``Sums.slack``), held for its
    #: passes (a checkpoint's are resumed) and dropped after; empty otherwise, and in a
    #: state saved before the soft margin
    slack = np.zeros((0, 0))

    #: arrays with a row per support vector (``hcount``: one more)
    _per_vector = ("index", "label", "A", "T_ins", "acc", "mask", "reset", "V")
    _scaled = ("A", "V")

    def filling(self):
        """What counts against the budget: until the store has first been full, the
        rows it holds (the distinct examples corrected: a later pass's correction of
        one is an entry on its row, as without a budget), so that a budget above the
        rows a run stores never acts and leaves it the exact run, bit for bit and at
        its cost; from the first maintenance step on, the entries (rows, and later
        corrections of them), as the slow reference (tests/reference.py) counts them,
        so that a store that fills goes on as it always did."""
        return self.m if self.filled else self.store.n_rows

    def full(self, size):
        """Whether the store is full at budget ``size`` (:meth:`filling`): a
        maintenance step is due."""
        return self.filling() >= size

    def _check_loaded(self, where, n_features, n_problems, forgets):
        """The support vectors and every array per support vector (``m`` rows) and per
        problem (``n_problems``), as the compiled walk and the outputs index them: the
        correction counters ``k`` against the support vectors each problem has, the
        trials ``hcount`` against ``n_trials``."""
        w = f"{where}."
        names = ("kernel", "normalize", "n_problems", "store", "s", "norm2", "k", "T")
        names += ("hcount", "n_trials", "n_seen", "n_kernel_evals", "n_last", *self._per_vector)
        # a file of 0.1 has no budget, one saved before ``filled`` counted its entries
        check.attributes(self, where, names, ("budget", "filled", "slack", "decayed"))
        check.flag(self.filled, w + "filled")
        check.instance(self.kernel, w + "kernel", Kernel)._check_loaded(w + "kernel")
        check.flag(self.normalize, w + "normalize")
        C = check.equal(self.n_problems, w + "n_problems", n_problems)
        check.instance(self.store, w + "store", RowStore)._check_loaded(w + "store", n_features)
        m = self.store.n
        check.integer(self.n_last, w + "n_last", 0, m)
        check.array(self.index, w + "index", np.int64, (m,), within=(0, 2**62))
        check.array(self.label, w + "label", np.int64, (m,), within=(0, max(2, C)))
        for name in ("A", "T_ins", "acc"):
            check.array(getattr(self, name), w + name, np.float64, (m, C), finite=True)
        for name in ("mask", "reset"):
            check.array(getattr(self, name), w + name, np.bool_, (m, C))
        if not forgets:
            check.equal(self.V, w + "V", None)
        else:
            check.array(self.V, w + "V", np.float64, (m, C), finite=True)
        check_problems(self, where, m, C, ("s", "norm2", "T"))
        if "slack" in self.__dict__:
            check.array(self.slack, w + "slack", np.float64, (None, C), finite=True)
        if "decayed" in self.__dict__:
            if check.real(self.decayed, w + "decayed", 0.0) > self.n_trials:
                check.fail(w + "decayed", f"must be at most the {self.n_trials} trials")

    def to(self, backend):
        """The support vectors on ``backend`` (where the next call's products are made)."""
        if not backend.same(self.store.backend):
            # a budget's kept inverse is made from the products of the store's backend
            self.__dict__.pop("_kept_inverse", None)
        self.store.to(backend)
        return self

    def store_vectors(self, bk, Xb, inv_b, sq_b, rows, sv_rows, Y_b, new):
        """Append the block's support vectors, its rows ``sv_rows`` (of ``Xb``, on the
        backend ``bk``, with their inverse norms on the host and squared norms on the backend,
        or None), in order: ``rows`` are the block's rows in the pass's data (for the
        indices), ``Y_b`` its targets, ``new`` (:data:`New`) its corrections."""
        n_new = sv_rows.shape[0]
        if n_new:
            m0 = self.m
            m1 = m0 + n_new
            keys = self.n_seen + rows[sv_rows]
            # an example corrected in an earlier epoch is a row of the store already
            repeats = self.store.found(keys)
            fresh = sv_rows[repeats < 0]
            idx = bk.index(fresh)
            self.store.append(
                bk.take(Xb, idx),
                bk.asarray(inv_b[fresh]),  # the host's copy: no gather on the device
                None if sq_b is None else bk.take(sq_b, idx),
                keys=keys,
                repeats=repeats,
            )
            self.index[m0:m1] = keys
            self.label[m0:m1] = class_index(Y_b[sv_rows])
            self.A[m0:m1] = new.a[sv_rows]
            self.T_ins[m0:m1] = new.t[sv_rows]
            self.acc[m0:m1] = new.acc[sv_rows]
            self.mask[m0:m1] = new.mask[sv_rows]
            self.reset[m0:m1] = new.reset[sv_rows]
            if self.V is not None:
                self.V[m0:m1] = new.v[sv_rows]
        self.n_last = n_new

    def examples(self):
        """(positions in the stream, classes, problems) of the support vectors: one
        entry for each problem a vector belongs to."""
        rows, problem = np.nonzero(self.mask[: self.m])
        return self.index[rows], self.label[rows], problem

    def renumber(self, at, n_seen, start=0):
        """Positions ``p >= start`` in the stream of a fit become ``start + at[p -
        start]``, and the stream's rows ``n_seen`` (a fit of some of the rows of the data
        it was given: positions in those data)."""
        m = self.m
        index = self.index[:m]
        moved = index >= start
        index[moved] = start + at[index[moved] - start]
        self.store.renumber(at, start)
        self.n_seen = n_seen

    def row_entries(self):
        """The first entry of each row of the store (each row is an entry's, in the
        order of their first entries)."""
        vec = self.store.entry_rows()
        if vec is None:
            return np.arange(self.m)
        return np.unique(vec, return_index=True)[1]

    def per_row(self, coef):
        """(rows, C): the coefficients of every entry summed on its row of the store."""
        vec = self.store.entry_rows()
        if vec is None:
            return coef
        out = np.zeros((self.store.n_rows,) + coef.shape[1:])
        np.add.at(out, vec, coef)
        return out

    def per_entry(self, K, backend):
        """The kernel rows of :meth:`kernel_rows` (against the rows of the store) as
        columns per entry."""
        vec = self.store.entry_rows()
        return K if vec is None else backend.take_columns(K, vec)

    def collapse(self):
        """One entry per row of the store: the coefficients of an example's entries
        summed, its averaging intervals closed first (every problem's, which restarts
        the averaging totals), its memberships and resets joined, its position and
        class those of its first entry."""
        vec = self.store.entry_rows()
        if vec is None:
            return
        for c in range(self.n_problems):
            self.flush(c)
        m, n = self.m, self.store.n_rows
        first = self.row_entries()
        for name in self._per_vector:
            arr = getattr(self, name)
            if arr is None:
                continue
            if name in ("index", "label"):
                out = arr[first]
            elif arr.dtype == np.bool_:
                out = np.zeros((n,) + arr.shape[1:], dtype=bool)
                np.logical_or.at(out, vec, arr[:m])
            else:
                out = np.zeros((n,) + arr.shape[1:], dtype=arr.dtype)
                np.add.at(out, vec, arr[:m])
            arr[:n] = out
            arr[n:m] = 0
        self.store.collapse()
        self.n_last = 0
        self.coefficients_changed()

    # -- numerical housekeeping ------------------------------------------------------
    # -- outputs ---------------------------------------------------------------------
    def coefficients(self, output):
        """(m, C) coefficients of the ``last`` or ``avg`` hypothesis on K_hat(x_j, .)."""
        if output == "last":
            return self.A[: self.m] * self.s[None, :]
        return self.averaged()

    #: kernel entries a row of :meth:`block_rows` costs per stored vector
    _evals = 1

    def block_rows(self, block, lo, hi, backend):
        """K_hat of the block ``(X, inv, sq)`` against support vectors lo..hi-1."""
        return store_rows(self.kernel, self.store, block, lo, hi, backend)

    def kernel_rows(self, data, max_elems=1 << 24):
        """Yield ``(lo, hi, K_hat(X[lo:hi], SV))`` in chunks of at most ``max_elems``."""
        store = self.store.to(data.backend)
        sv, inv, sq = store.distinct()
        step = max(1, max_elems // max(sv.shape[0], 1))
        for lo, hi, X, inv_x, sq_x in data.chunks(step):
            K = self.kernel.normalised(
                X, sv, inv_x, inv, sq_x, sq if self.kernel.needs_norms else None, data.backend
            )
            yield lo, hi, K

    def scores(self, data, output):
        """Decision values (n, C) of the ``last``, ``avg`` or ``voted`` hypothesis, on
        the backend of ``data`` (:class:`Instances`)."""
        if output == "voted" and self.budgeted:
            raise ValueError(NO_VOTE)
        return outputs(self, data, output, lambda out: (self.coefficients(out), None), None)


def store_rows(kernel, store, block, lo, hi, backend):
    """K_hat of the block ``(X, inv, sq)`` against the rows of entries lo..hi-1 of
    ``store`` (:class:`RowStore`)."""
    X, inv_x, sq_x = block
    inv, sq = store.norms(lo, hi)
    sq = sq if kernel.needs_norms else None
    return kernel.normalised(X, store.view(lo, hi), inv_x, inv, sq_x, sq, backend)


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


def margins_plan(state, rows, coef, cache, lo, hi):
    """What the margin sums of a block over stored vectors lo..hi-1 need, taken where
    the walk runs: ``(first, col0, hi, coefficients)``. With ``cache`` (the sums kept
    across the epochs of one fit) row i needs only the vectors from ``first[i]`` on."""
    first = None
    if cache is not None:
        first = cache[1][rows]
        lo = max(lo, int(first.min())) if rows.shape[0] else hi
    return first, lo, hi, coef.view(state.A, lo, hi) if hi > lo else None


def margin_products(state, block, b, plan, backend, multiply=True):
    """On the backend: the (b, C) margin sums ``sum_j A[j, c] K(x_j, x_i)`` of the block
    over the stored vectors of ``plan`` (:func:`margins_plan`; None when it has none),
    and the number of kernel entries that took.

    ``block`` is ``(X, inv, sq)`` of the block's rows on the backend, whose kernel rows
    against the stored vectors ``state.block_rows`` makes (``state._evals`` kernel
    entries each). Reads the state only below the plan's end, so that the products of
    the next block can be made while the walk appends. Without ``multiply``, the
    kernel rows themselves (before :func:`zeroed`), for one product later.

    A state whose stored vectors are sharded over a cluster (``state.remote``, a
    :class:`marginkit._core.shards.Sharded`) has its margin sums made there.
    """
    first, col0, hi, A = plan
    if hi <= col0:
        return None, 0
    remote = state.__dict__.get("remote")
    if remote is not None and multiply:
        # the stored vectors' rows sharded over a cluster (marginkit._core.shards)
        return remote.margin_products(state, block, plan), state._evals * b * (hi - col0)
    K = state.block_rows(block, col0, hi, backend)
    evals = state._evals * b * (hi - col0)
    if not multiply:
        return K, evals
    return zeroed(K, first, col0, backend) @ A, evals


def zeroed(K, first, col0, backend):
    """Kernel rows K of a block against stored vectors from ``col0`` on, zero before each
    row's ``first`` (those are in the sums kept across epochs; ``first`` None: none)."""
    if first is not None and (first > col0).any():
        K = backend.zero_before(K, first - col0)
    return K


def walk_sums(F, rows, n_problems, plan=None, cache=None):
    """F, margin sums brought to the host (None: over no stored vector), as the walk
    takes them: a writeable (b, C) array (one transfer's view may not be), plus, with
    ``plan``, the sums kept across the epochs (``cache``) over the vectors before each
    row's ``first`` of ``plan``."""
    if F is None:
        F = np.zeros((rows.shape[0], n_problems))
    else:
        F = np.require(F, requirements=["C", "W"])
    first = None if plan is None else plan[0]
    if first is not None:
        known = first > 0
        F[known] += cache[0][rows[known]]
    return F


def block_margins(state, block, rows, plan, cache, backend, with_cache=True):
    """(b, C) on the host: :func:`margin_products` of the block's ``rows``, with the sums
    kept across the epochs (``with_cache``), and the kernel entries that took."""
    F, evals = margin_products(state, block, rows.shape[0], plan, backend)
    F = None if F is None else backend.host(F)
    return walk_sums(F, rows, state.n_problems, plan if with_cache else None, cache), evals


class Ahead:
    """The products of a block, made while the walk goes through the block before it:
    its rows, its margin sums over the vectors stored when it was started (or, with
    ``state._one_sum``, its kernel rows against those), and its kernel rows against
    itself (the in-block Gram) and, on a device, against the block before.

    On a device the products are queued there before the walk and the results come
    in one transfer after it (:meth:`result`), so that the device works while the host
    walks; the margins over the vectors the block before adds then come from its
    kernel rows against that block (:func:`cross_margins`), queued after the walk,
    in the same transfer. On the host, with ``OVERLAP``, a worker thread makes them
    (BLAS and the compiled passes release the GIL) and the margins over the new
    vectors are one more product after the walk.

    Kernel ALMA's margins are summed in two parts, split where the block before
    started (``m - state.n_last``), made ahead or not, so that the result does not
    depend on whether the products were made ahead, nor on where checkpoints fell.
    Kernel PUMMA's (``state._one_sum``) are one product over every stored pair, as
    its walk has always summed them: the kernel rows against the pairs stored before
    the block before are made ahead, those against the pairs it stored after its walk,
    and the two placed side by side before the one product.
    """

    def __init__(self, state, data, lo, hi, coef, cache, split, prev=None, now=False):
        self.rows = rows = data.order[lo:hi]
        self.split = split
        self.version = coef.version
        self.plan = margins_plan(state, rows, coef, cache, 0, self.split)
        rest = None
        if now and state.__dict__.get("remote") is not None:
            # the sums over the vectors the block before stored, in the same calls
            rest = margins_plan(state, rows, coef, cache, split, state.m)
        args = (state, data, lo, hi, self.plan, prev, rest)
        if now or data.backend.queued or not OVERLAP:
            self.future, self.done = None, products(*args)
        else:
            # scikit-learn's configuration (array API dispatch) is the caller's thread's
            self.future = thread_pool(1, "products").submit(
                _configured, get_config(), products, *args
            )

    def result(self, state, data, coef, cache, m, made, extra=None):
        """``(X, inv, block, F, Gb, extras, evals)`` of the block as the walk needs it
        now, on the host: F its margin sums over the ``m`` stored vectors (with those
        kept across epochs), Gb its in-block Gram, ``extras`` the arrays that
        ``extra(block)`` makes on the backend (brought in the same transfer), and the
        kernel entries all but those took. ``made``: the rows of the block before that
        stored its vectors (where its kernel rows against that block find them)."""
        done = self.done if self.future is None else self.future.result()
        Xb, inv_b, block, F, G, evals, rest = done
        bk = data.backend
        b = self.rows.shape[0]
        more = [] if extra is None else extra(block)
        if state._one_sum:
            F, evals_rest, plan = self._one_sum(state, block, F, coef, cache, m, bk)
            F, G, *more = bk.hosts(F, G, *more)
            G = exact_diagonal(G, state.kernel, inv_b)
            F = walk_sums(F, self.rows, state.n_problems, plan, cache)
            return Xb, inv_b, block, F, G, more, evals + evals_rest
        stale = coef.version != self.version
        last, width = None, G.shape[1]
        if width > b:
            last = cross_margins(state, G[:, b:], made, self.rows, cache, self.split, m, coef, bk)
            G = G[:, :b]
        # one wait for the device
        F, last, G, *more = bk.hosts(None if stale else F, last, G, *more)
        G = exact_diagonal(G, state.kernel, inv_b)
        if stale:
            # the walk rescaled or forgot coefficients of vectors these sums used
            plan = self.plan = margins_plan(state, self.rows, coef, cache, 0, self.split)
            F, evals_F = block_margins(state, block, self.rows, plan, cache, bk)
            evals = evals_F + b * width
        else:
            F = walk_sums(F, self.rows, state.n_problems, self.plan, cache)
        if last is None and rest is not None:
            # made with the block's other products (marginkit._core.shards)
            last = walk_sums(rest[0], self.rows, state.n_problems)
            evals += rest[1]
        elif last is None:
            # the vectors the block before stored (the cache's sums are in the first term)
            plan = margins_plan(state, self.rows, coef, cache, self.split, m)
            last, evals_last = block_margins(state, block, self.rows, plan, cache, bk, False)
            evals += evals_last
        F += last
        return Xb, inv_b, block, F, G, more, evals

    def _one_sum(self, state, block, K, coef, cache, m, bk):
        """On the backend: the margin sums of the block over the ``m`` stored vectors as
        one product, from ``K``, its kernel rows against those before ``split`` (made
        by :func:`products`), and its kernel rows against the rest, made now; the kernel
        entries those took and the plan of the sums."""
        plan = margins_plan(state, self.rows, coef, cache, 0, m)
        first, col0, _, A = plan
        b = self.rows.shape[0]
        mid = max(col0, self.split)
        K_rest, evals = margin_products(state, block, b, (first, mid, m, None), bk, False)
        if K is None or K_rest is None:
            K = K_rest if K is None else K
        else:
            K = bk.xp.concat([K, K_rest], axis=1)
        if K is None:
            return None, evals, plan
        return zeroed(K, first, col0, bk) @ A, evals, plan


def exact_diagonal(G, kernel, inv):
    """A block's Gram matrix G, on the host, with its diagonal exact for the Gaussian
    kernels: K(x, x) is a constant there, but the product computes it from the distance
    ``||x||^2 + ||x||^2 - 2 x . x``, whose rounding a large gamma turns into a value far
    from it (0 for gamma near 1e18 on ordinary data), where ROMMA divides by K(x, x) and
    PUMMA takes it for a norm. ``inv``: the rows' ``1 / sqrt(K(x, x))`` (or 0 / 1)."""
    c = kernel.constant_diagonal()
    if c is None:
        return G
    if not G.flags.writeable:
        G = G.copy()
    G[np.diag_indices(G.shape[0])] = c * inv * inv
    return G


def _configured(config, fn, *args):
    with config_context(**config):
        return fn(*args)


def products(state, data, lo, hi, plan, prev=None, rest=None):
    """The rows lo..hi-1 of a pass (:class:`Ordered`) and, on the backend, their margin
    sums over the vectors of ``plan`` (None when it has none; with ``state._one_sum``
    their kernel rows against those instead), their kernel rows against themselves
    followed by those against ``prev`` (the block before, as ``(X, inv, sq)``, when
    given), the kernel entries they took, and None.

    A state whose stored vectors are sharded over a cluster (``state.remote``,
    :class:`marginkit._core.shards.Sharded`) has the sums made there, and, with
    ``rest`` (a second plan: the vectors the block before stored), their sums over
    those in the same calls, last in the tuple as ``(sums or None, kernel entries)``
    (the walk adds the two as it does those made by two calls).

    With ``prev`` (a device, whose queue runs in order) all of these are one product:
    the block and the block before are written after the stored vectors
    (:meth:`RowStore.beside`), and the block's kernel rows against all of them are
    made at once."""
    bk = data.backend
    Xb, inv_b, inv_bd, sq_bd = data.block(lo, hi)
    block = (Xb, inv_bd, sq_bd)
    b = hi - lo
    remote = state.__dict__.get("remote")
    if remote is not None:
        F, G, F_rest = remote.products(state, block, plan, rest)
        evals = state._evals * b * max(0, plan[2] - plan[1]) + b * b
        last = None if rest is None else (F_rest, state._evals * b * max(0, rest[2] - rest[1]))
        return Xb, inv_b, block, F, G, evals, last
    if prev is None:
        F, evals = margin_products(state, block, b, plan, bk, not state._one_sum)
        G = state.kernel.normalised(Xb, Xb, inv_bd, inv_bd, sq_bd, sq_bd, bk)
        return Xb, inv_b, block, F, G, evals + b * b, None
    first, col0, split, A = plan
    col0 = min(col0, split)  # past the stored vectors when every row has seen them all
    B, inv_B, sq_B = state.store.beside([block, prev], col0)
    sq_B = sq_B if state.kernel.needs_norms else None
    K = state.kernel.normalised(Xb, B, inv_bd, inv_B, sq_bd, sq_B, bk)
    n_sv = split - col0
    F = None
    if n_sv:
        F = zeroed(K[:, :n_sv], first, col0, bk) @ A
    return Xb, inv_b, block, F, K[:, n_sv:], b * K.shape[1], None


def cross_margins(state, cross, made, rows, cache, lo, hi, coef, backend):
    """On the backend: the (b, C) margin sums of a block over stored vectors lo..hi-1,
    which the block before stored from its rows ``made``, taken from ``cross``, the
    block's kernel rows against that block (None when there are no such vectors). With
    ``cache``, row i skips the vectors before its ``first`` (those are in the sums kept
    across epochs)."""
    if hi <= lo:
        return None
    first = None if cache is None else cache[1][rows] - lo
    if first is None or not (first > 0).any():
        # every column counts: one product with the coefficients scattered to the
        # block's rows (zero where a row stored nothing), one upload, no gather
        A = np.zeros((cross.shape[1], state.n_problems))
        A[made] = state.A[lo:hi]
        return cross @ backend.asarray(A)
    K = backend.zero_before(backend.take_columns(cross, made), first)
    return K @ coef.view(state.A, lo, hi)


def run_blocks(state, data, order, walker, cache=None, progress=None):
    """One pass over ``order`` in blocks of ``walker.block_size`` rows: the loop of
    kernel ALMA's family (:func:`train_blocks`) and kernel PUMMA
    (:func:`marginkit._core.pairs.train_pairs`) alike.

    For every block: its products (made ahead, while the walk goes through the block
    before, where :class:`Ahead` can), ``walker.walk`` (the compiled walk and the folds
    of the scale it calls for), then the end shared by both: averaging totals
    flushed, the margin sums at each row's trial kept across epochs, the block's
    vectors stored.

    Parameters
    ----------
    state : Stored
        :class:`KernelState` or :class:`marginkit._core.pairs.PairState`.
    data : Instances
        The rows, where their products are made, with their norms.
    order : int array
        The rows of ``data`` in presentation order.
    walker : object
        The algorithm's side (:class:`_Corrections` or
        :class:`marginkit._core.pairs._Pairs`): ``block_size``, ``per_row`` (vectors a
        row may store), ``columns(block)`` (more kernel columns the walk reads, made on
        the backend once the block before is stored), and ``walk(rows, Xb, inv_b,
        block, F, Gb, columns, cache)``, which returns the block's :class:`Made`.
    cache : None or (P, seen) arrays
        The margin sums of every row over the first ``seen[row]`` stored vectors,
        filled in and used across epochs.
    progress : callable(n_rows) or None
    """
    bk = data.backend
    state.to(bk)
    coef = Coefficients.of(state, bk)
    ordered = Ordered(data, order)
    n = order.shape[0]
    b_max = walker.block_size
    budget = getattr(walker, "budget", None)
    ahead, made = None, None
    lo = 0
    try:
        while lo < n:
            hi = min(n, lo + b_max)
            rows = order[lo:hi]
            b = hi - lo
            m0 = state.m
            state.reserve(b * walker.per_row)
            if ahead is None:
                split = m0 - state.n_last  # where the block before this one started
                ahead = Ahead(state, ordered, lo, hi, coef, cache, split, now=True)
            Xb, inv_b, block, F, Gb, cols, evals = ahead.result(
                state, data, coef, cache, m0, made, walker.columns
            )
            state.n_kernel_evals += evals
            ahead = None
            if (OVERLAP or bk.queued) and hi < n:
                prev = block if bk.queued and not state._one_sum else None
                nxt = min(n, hi + b_max)
                ahead = Ahead(state, ordered, hi, nxt, coef, cache, m0, prev)
            done = walker.walk(rows, Xb, inv_b, block, F, Gb, cols, cache)
            stop = done.stop  # b, or the row after the one that filled a budgeted store
            end_block(state, rows[:stop], done, cache, m0)
            made = done.rows  # where the next block's kernel rows against this one find them
            if progress is not None:
                progress(stop)
            if budget is not None and state.full(budget.size):
                # the step changes the store: the next block's products first
                _settled(ahead)
                maintain(state, budget, bk)
                # the store changed under every sum made ahead or kept across epochs: the
                # rest of the block is walked as a block of its own, its sums made anew
                ahead, made = None, None
                if cache is not None:
                    cache[0][:] = 0.0
                    cache[1][:] = 0
            lo += stop
    finally:
        # a worker still making the next block's products reads the store: a failed
        # call's undo must not put the store back under it
        _settled(ahead)
    # a budget's carried inverse lives within one run of blocks (a pass, or the rows
    # between two checkpoints): a model saved, or a fit resumed, goes on bit for bit
    state.__dict__.pop("_inverse", None)


def _settled(ahead):
    """Wait for the products ``ahead`` (:class:`Ahead`, or None) may still be making in
    a worker thread, whatever became of them."""
    if ahead is not None and ahead.future is not None:
        concurrent.futures.wait([ahead.future])


class Made:
    """What a block's walk made, as :func:`end_block` takes it.

    ``sums``: the block's :data:`Sums`; ``reset``: whether each vector made forgot the
    hypothesis before it; ``rows``: the rows of the block at which the vectors to store
    were made, in their order; ``own(c)``: ``(a, t, acc, mask)`` of the vectors made,
    problem c's where ``mask`` (as :meth:`Stored.flush` takes them); ``store()`` appends
    them to the state; ``stop``: the rows walked (None: the whole block).
    """

    def __init__(self, sums, reset, rows, own, store, stop=None):
        self.sums, self.reset, self.rows, self.own, self.store = sums, reset, rows, own, store
        #: the rows walked: all of the block's, or those up to the one that filled a
        #: budgeted store
        self.stop = sums.F.shape[0] if stop is None else stop


def fold_scales(state, fold_below, sums, pos, cache, own, scaled=()):
    """Fold every scale ``s_c`` the walk took outside ``[fold_below, 1 / fold_below]``
    into problem c's coefficients (:meth:`Stored.fold`), the walk stopped before row
    ``pos``: the block's margin sums ahead of it, those recorded up to it, the slack
    sums and those kept across epochs (``cache``) with them; ``own(c)`` the vectors the
    block made (as :meth:`Stored.flush` takes them), ``scaled(c)`` ``(views, masked)``
    of the walker's own sums (as :meth:`Stored.fold` takes them)."""
    for c in np.flatnonzero((state.s < fold_below) | (state.s * fold_below > 1.0)):
        views, masked = scaled(c) if scaled else ([], [])
        views = [sums.F[pos:, c], sums.f_seen[:pos, c], sums.slack[:, c], *views]
        if cache is not None:
            views.append(cache[0][:, c])
        state.fold(c, views, [own(c)], masked)


def end_block(state, rows, done, cache, m0):
    """The end of a block (:class:`Made`), kernel ALMA's and kernel PUMMA's alike: older
    coefficients marked changed where a hypothesis was forgotten, the averaging totals
    that outgrew the scale flushed, the margin sums over the ``m0`` vectors stored
    before the block and the block's own before each row's trial kept across epochs
    (``cache``), the block's vectors stored and its trials counted."""
    if done.reset.any():
        state.coefficients_changed()  # a hypothesis forgotten: older A zeroed
    for c in range(state.n_problems):
        if state.s[c] < FLUSH_RATIO * state.T[c]:
            state.flush(c, [done.own(c)])
    b = rows.shape[0]
    if cache is not None:
        # margin sums over the vectors stored before each row's trial
        cache[0][rows] = done.sums.f_seen[:b]
        cache[1][rows] = m0 + np.searchsorted(done.rows, np.arange(b))
    done.store()
    state.n_trials += b
    if state.decayed is not None:
        state.decayed += b


class _Corrections:
    """Kernel ALMA's family on :func:`run_blocks`: a support vector per corrected row
    (one per row, whatever the problems), its coefficient per problem."""

    per_row = 1
    columns = None

    def __init__(self, state, Y, params, backend):
        self.state, self.Y, self.backend = state, Y, backend
        self.rule, self.fold_below = params["rule"], params["fold_below"]
        self.block_size = params["block_size"]
        self.budget = params.get("budget")
        self.weight = params.get("weight")

    def walk(self, rows, Xb, inv_b, block, F, Gb, cols, cache):
        state = self.state
        b, C = rows.shape[0], state.n_problems
        m0 = state.m
        a = np.zeros((b, C))
        new = New(
            a,
            a if state.V is None else np.zeros((b, C)),
            np.zeros((b, C)),
            np.zeros((b, C)),
            np.zeros((b, C), dtype=bool),
            np.zeros((b, C), dtype=bool),
        )
        Y_b = self.Y[rows]
        sums = Sums(F, np.empty((b, C)), state.kept_sums(cache), state.slack)
        P, old = state.problems(), state.old(m0)
        room, adds = self.room(rows)
        weight = row_weights(self.weight, rows)
        pos = 0

        def own(c):
            return new.a[:pos, c], new.t[:pos, c], new.acc[:pos, c], new.mask[:pos, c]

        def scaled(c):
            return ([] if state.V is None else [new.v[:pos, c]]), []

        while pos < b and room > 0:
            walk_block = Block(Gb, Y_b, inv_b, room, adds, weight, rows)
            start = pos
            pos = kernel_walk(self.rule, self.fold_below, pos, walk_block, P, sums, new, old)
            room -= int(adds[start:pos][new.mask[start:pos].any(axis=1)].sum())
            fold_scales(state, self.fold_below, sums, pos, cache, own, scaled)
        sv_rows = np.flatnonzero(new.mask[:pos].any(axis=1))

        def store():
            sq_bd = block[2]  # the squared norms on the backend (or None)
            state.store_vectors(self.backend, Xb, inv_b, sq_bd, rows, sv_rows, Y_b, new)

        return Made(sums, new.reset, sv_rows, own, store, pos)

    def room(self, rows):
        """``(room, adds)`` of the walk (:data:`Block`) of the block's ``rows``: without a
        budget, more room than rows; with one, the room left in the store, and whether a
        correction of each row takes some of it (:meth:`KernelState.filling`)."""
        state = self.state
        b = rows.shape[0]
        adds = np.ones(b, dtype=np.int64)
        if self.budget is None:
            return b + 1, adds
        size = self.budget.size
        if state.filled:
            return size - state.m, adds
        # an example corrected in an earlier pass adds an entry on its row, not a row
        adds[state.store.found(state.n_seen + rows) >= 0] = 0
        return size - state.store.n_rows, adds


def train_blocks(state, data, Y, order, params, cache=None, progress=None):
    """One pass over ``order`` in blocks; exact kernel ALMA_2 (Gentile 2001, Remark 5),
    or the kernel Perceptron or ROMMA, on every problem (:func:`kernel_walk`).

    A support vector's index is ``state.n_seen`` plus its row in ``data`` (the rows of
    the pass, in their own order, whatever order ``order`` presents them in).

    Parameters
    ----------
    state : KernelState
    data : Instances
        The rows, where their products are made, with their norms.
    Y : (n, C) array of +1 / -1 targets
    order : int array, the rows of X in presentation order
    params : dict
        ``rule`` (a :class:`marginkit._core.linear.Rule`), ``block_size`` and
        ``fold_below`` (see :func:`kernel_walk`); optional: ``budget``, and ``weight``,
        the rows' positive weights (n,) (None: every row weighs 1).
    cache : None or (P, seen) arrays: the margin sums of every row over the first
        ``seen[row]`` support vectors, filled in and used across epochs
    progress : callable(n_rows) or None
    """
    run_blocks(state, data, order, _Corrections(state, Y, params, data.backend), cache, progress)
