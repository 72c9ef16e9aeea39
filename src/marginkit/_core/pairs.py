"""Kernel PUMMA_2(delta) on the blocked engine (Ishibashi, Hatano and Takeda, COLT 2008).

At p = 2 an update of PUMMA is w' = c w + d z with z = (phi(x+) - phi(x-)) / 2 (see
:mod:`marginkit._core.pumma`). The store here holds those *pairs*: atom k is the vector
``z_k = (phi(p_k) - phi(n_k)) / 2`` with a coefficient that never changes after it is
appended, so that, as for kernel ALMA (:mod:`marginkit._core.kernel`), a block of examples is
processed with one product of kernel rows against the atoms and a compiled walk that
adds the atoms made inside the block to the examples after them. Kernel rows of a pair
are the difference of two kernel rows; the current x+ and x- of every problem, when
they come from before the block, get one kernel column each per block.

With the 2-norm soft margin, ``K(x_i, x_j) + lam [i = j]``, the score of training row i
has one more term, ``lam * slack[i]``: the sum of the coefficients of the atoms in
which row i is x+ (plus half of each) or x- (minus half). ``w . x+`` and ``w . x-``,
which give the bias, are carried along as sums over the atoms (each new atom adds
one known kernel value to them), so no kernel sum beyond the margins is needed.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from . import NUMBA_OPTS
from .kernel.blocks import WalkOutcome, fold_scales, run_blocks
from .kernel.outputs import class_index, outputs
from .kernel.rows import RowStore
from .kernel.state import VectorStore
from .kernel.walk import Problems, Sums, end_weights, forget
from .linear import GROWTH_LIMIT, Rule, row_weights


@njit(**NUMBA_OPTS)
def _kernel_to(Gb, k0, handle, i2, c):
    """K(x_i2, v) for the stored vector ``v`` of a handle: an in-block row or k0's column."""
    return Gb[handle, i2] if handle >= 0 else k0[i2, c]


#: Kernel PUMMA's per-problem state (arrays of length C): that of :data:`Problems`, then
#: the averaged bias total ``Tb``, the bias, the margin sums of the current x+ and x- over
#: the atoms (``Gp``, ``Gn``) and their slack coordinates (``slp``, ``sln``), which
#: classes were seen (bits 1, 2), the in-block rows of x+ and x- (``pos_blk``, -1: from
#: before the block), their rows in the data (-1: earlier data), their K(x, x), the
#: conflicts, and the weights of x+ and x- (their soft-margin term is lam / weight).
PairProblems = namedtuple(
    "PairProblems",
    [*Problems._fields, "Tb", "bias", "Gp", "Gn", "slp", "sln", "seen", "pos_blk", "neg_blk"]
    + ["pos_row", "neg_row", "pos_diag", "neg_diag", "conflicts", "pos_weight", "neg_weight"],
)
#: What :func:`pumma_walk` reads of a block: its Gram ``G`` (b x b, the kernel,
#: normalised or not, without ``lam``), the one-vs-rest targets ``Y`` (b x C, +1 / -1),
#: the block's ``rows`` in the data (where the slack sums are), ``kpos[:, c]`` and
#: ``kneg[:, c]`` the kernel columns of the x+ and x- problem c had at the start of the
#: block (b x C), ``lam``, the 2-norm soft margin's term on the diagonal of the
#: kernel (``K(x_i, x_j) + lam [i = j]``; ``lam / weight`` for a row of that weight,
#: the soft margin's loss of the row weighed), and ``weight`` (b,), the rows' weights
#: (empty: 1 each).
PairBlock = namedtuple("PairBlock", ["G", "Y", "rows", "kpos", "kneg", "lam", "weight"])
#: The atoms made in a block (capacity b x C, ``n[0]`` made): their problem, the in-block
#: rows of x+ and x- (-1: the one from before the block), coefficient, coefficient as
#: made, averaging total at insertion, closed intervals, bias over s, and whether it
#: forgot the hypothesis before it.
Atoms = namedtuple(
    "Atoms", ["cls", "pos", "neg", "coef", "v", "tins", "acc", "beta", "reset", "n"]
)


def new_atoms(cap):
    """Room for ``cap`` atoms (:data:`Atoms`)."""
    ints = [np.zeros(cap, dtype=np.int64) for _ in range(3)]
    floats = [np.zeros(cap) for _ in range(5)]
    return Atoms(*ints, *floats, np.zeros(cap, dtype=np.bool_), np.zeros(1, dtype=np.int64))


@njit(**NUMBA_OPTS)
def pumma_walk(rule, fold_below, start, block, P, atoms, sums, old):
    """Walk rows ``start..b-1`` of a block through PUMMA_2(delta), every problem.

    PUMMA at p = 2 in a kernel space (Ishibashi, Hatano and Takeda, "Online Learning
    of Approximate Maximum p-Norm Margin Classifiers with Bias", COLT 2008): on
    ``y (w . x + b) < 1 - delta`` the example replaces x+ or x-, and ``w' = c w + d z``
    with ``z = (phi(x+) - phi(x-)) / 2``, ROMMA's closed form on z (see
    :mod:`marginkit._core.pumma`), the bias ``b = -(w . x+ + w . x-) / 2``; the 2-norm
    soft margin adds ``lam`` to the kernel's diagonal (``lam / c`` for a row of weight c).

    Parameters
    ----------
    rule : marginkit._core.linear.Rule
        The walk reads ``rule.delta``, the margin slack of the update condition.
    fold_below, start : float, int
        Where the walk stops to have a scale folded, and the row it starts from, as
        for :func:`marginkit._core.kernel.walk.kernel_walk`.
    block : PairBlock
        The block's in-block Gram, targets, rows in the data, the kernel columns of
        every problem's x+ and x- from before the block, and ``lam`` (:data:`PairBlock`).
    P : PairProblems
        Every problem's state (:data:`PairProblems`), updated in place.
    atoms : Atoms
        Receives the atoms made in the block, in order (:data:`Atoms`).
    sums : Sums
        ``sums.F[i, c]``: the margin sum of row i over the atoms stored before the block
        (no slack term), to which the walk adds the block's atoms for the rows after
        them; ``sums.f_seen[i]`` receives ``F[i]`` as it stood at row i's trial;
        ``sums.slack[r, c]``: the slack sum of row r of the data (:data:`Sums`).
    old : Old
        The atoms stored before the block (:data:`marginkit._core.kernel.walk.Old`), which an
        update whose new constraint alone binds forgets (:func:`forget`).

    Returns
    -------
    int
        The row reached: b, or the row after an update that took some ``s_c`` outside
        ``[fold_below, 1 / fold_below]``.
    """
    F, f_seen, slack = sums.F, sums.f_seen, sums.slack
    Gb, Y, rows, kpos0, kneg0, lam, weights = block
    delta = rule.delta
    s, norm2, k, T = P.s, P.norm2, P.k, P.T
    growth, step = P.decay[0], P.decay[1]
    cur = P
    seen, bias, Gp, Gn, slp, sln = cur.seen, cur.bias, cur.Gp, cur.Gn, cur.slp, cur.sln
    pos_blk, neg_blk, pos_row, neg_row = cur.pos_blk, cur.neg_blk, cur.pos_row, cur.neg_row
    pos_diag, neg_diag = cur.pos_diag, cur.neg_diag
    pos_weight, neg_weight = cur.pos_weight, cur.neg_weight
    b, n_classes = F.shape
    for i in range(start, b):
        for c in range(n_classes):
            f_seen[i, c] = F[i, c]
        fold = False
        r = rows[i]
        wi = weights[i] if weights.shape[0] > 0 else 1.0
        li = lam / wi  # the row's soft-margin term
        for c in range(n_classes):
            # every row takes part, x = 0 too: its constraint is y b >= 1
            yt = Y[i, c]
            score = s[c] * (F[i, c] + li * slack[r, c])
            if yt * (score + bias[c]) < 1.0 - delta:
                mine = 1 if yt > 0 else 2
                a = 0.0
                made = False
                fresh = False
                if (seen[c] | mine) != 3:
                    # one class so far: w = 0 and b = y; the example is stored
                    seen[c] |= mine
                    if yt > 0:
                        pos_blk[c] = i
                        pos_row[c] = r
                        pos_diag[c] = Gb[i, i]
                        pos_weight[c] = wi
                        Gp[c] = F[i, c]
                        slp[c] = slack[r, c]
                    else:
                        neg_blk[c] = i
                        neg_row[c] = r
                        neg_diag[c] = Gb[i, i]
                        neg_weight[c] = wi
                        Gn[c] = F[i, c]
                        sln[c] = slack[r, c]
                    bias[c] = yt
                    p_h = i
                    n_h = i
                    made = True
                    fresh = True
                else:
                    # margin sums in coefficient units (w = s sum_k a_k z_k): the
                    # new example's from F, the kept one's carried along
                    if yt > 0:
                        p_h = i
                        n_h = neg_blk[c]
                        kpn = _kernel_to(Gb, kneg0, n_h, i, c)
                        kpp = Gb[i, i]
                        knn = neg_diag[c]
                        lp, ln = li, lam / neg_weight[c]
                        gp, sp_, gn, sn = F[i, c], slack[r, c], Gn[c], sln[c]
                    else:
                        n_h = i
                        p_h = pos_blk[c]
                        kpn = _kernel_to(Gb, kpos0, p_h, i, c)
                        kpp = pos_diag[c]
                        knn = Gb[i, i]
                        lp, ln = lam / pos_weight[c], li
                        gp, sp_, gn, sn = Gp[c], slp[c], F[i, c], slack[r, c]
                    Z = 0.25 * (kpp + lp - 2.0 * kpn + knn + ln)  # ||z||^2
                    if Z <= 1e-15 * (kpp + knn + (lp + ln)):
                        # x equals the stored example of the other class
                        cur.conflicts[c] += 1
                    else:
                        seen[c] |= mine
                        if yt > 0:
                            pos_blk[c] = i
                            pos_row[c] = r
                            pos_diag[c] = Gb[i, i]
                            pos_weight[c] = wi
                        else:
                            neg_blk[c] = i
                            neg_row[c] = r
                            neg_diag[c] = Gb[i, i]
                            neg_weight[c] = wi
                        W = norm2[c]
                        mz = 0.5 * s[c] * (gp + lp * sp_ - gn - ln * sn)  # w . z
                        gap = Z * W - mz * mz
                        if W <= 0.0 or mz >= Z * W or gap <= 1e-12 * Z * W:
                            # only z . w' >= 1 binds: w' = z / ||z||^2
                            if W > 0.0:
                                na = atoms.n[0]
                                own = (
                                    atoms.coef[:na],
                                    atoms.tins[:na],
                                    atoms.acc[:na],
                                    atoms.cls[:na] == c,
                                )
                                forget(c, i, T, own, sums, old)
                            gp = gn = sp_ = sn = 0.0
                            fresh = True
                            dd = 1.0 / Z
                            s[c] = 1.0
                            norm2[c] = dd
                        else:
                            cc = (Z * W - mz) / gap
                            dd = W * (1.0 - mz) / gap
                            s[c] *= cc
                            # ||c w + d z||^2 of the coefficients as computed
                            norm2[c] = cc * cc * W + 2.0 * cc * dd * mz + dd * dd * Z
                        a = dd / s[c]
                        for i2 in range(i + 1, b):
                            kp = _kernel_to(Gb, kpos0, p_h, i2, c)
                            kn = _kernel_to(Gb, kneg0, n_h, i2, c)
                            F[i2, c] += 0.5 * a * (kp - kn)
                        if pos_row[c] >= 0:
                            slack[pos_row[c], c] += 0.5 * a
                        if neg_row[c] >= 0:
                            slack[neg_row[c], c] -= 0.5 * a
                        Gp[c] = gp + 0.5 * a * (kpp - kpn)
                        Gn[c] = gn + 0.5 * a * (kpn - knn)
                        slp[c] = sp_ + 0.5 * a
                        sln[c] = sn - 0.5 * a
                        wp = s[c] * (Gp[c] + lp * slp[c])
                        wn = s[c] * (Gn[c] + ln * sln[c])
                        bias[c] = -0.5 * (wp + wn)
                        made = True
                        if s[c] < fold_below or s[c] * fold_below > 1.0:
                            fold = True
                if made:
                    j = atoms.n[0]
                    atoms.cls[j] = c
                    atoms.pos[j] = p_h
                    atoms.neg[j] = n_h
                    atoms.coef[j] = a
                    atoms.v[j] = a
                    atoms.tins[j] = T[c]
                    atoms.acc[j] = 0.0
                    atoms.beta[j] = bias[c] / s[c]
                    atoms.reset[j] = fresh
                    atoms.n[0] = j + 1
                    k[c] += 1
            P.hcount[k[c] - 1, c] += 1
            T[c] += s[c] * growth
            cur.Tb[c] += bias[c] * growth
        growth = end_weights(P.decay, growth, step)
        if fold or growth > GROWTH_LIMIT:
            return i + 1
    return b


class PairState(VectorStore):
    """Atoms (pairs x+, x-), their coefficients and the per-problem state of kernel PUMMA."""

    #: a block's margin sums are one product over every atom (:class:`BlockProducts
    #: <marginkit._core.kernel.blocks.BlockProducts>`)
    ONE_SUM = True
    _rows = "POS"  # NEG holds as many

    def __init__(self, n_features, n_problems, sparse, kernel, normalize):
        super().__init__(n_problems, kernel, normalize)
        C = n_problems
        self.POS = RowStore(n_features, sparse)
        self.NEG = RowStore(n_features, sparse)
        cap = self.A.shape[0]
        self.index_p = np.zeros(cap, dtype=np.int64)
        self.index_n = np.zeros(cap, dtype=np.int64)
        self.label_p = np.zeros(cap, dtype=np.int64)  # classes of x+ and x-
        self.label_n = np.zeros(cap, dtype=np.int64)
        self.V = np.zeros((cap, C))
        self.beta = np.zeros((cap, C))
        self.Tb = np.zeros(C)
        self.bias = np.zeros(C)
        # margin sums of the current x+ and x- over the atoms, and their slack
        # coordinates, in coefficient units (w = s sum_k A_k z_k)
        self.Gp = np.zeros(C)
        self.Gn = np.zeros(C)
        self.slp = np.zeros(C)
        self.sln = np.zeros(C)
        self.seen = np.zeros(C, dtype=np.int64)
        self.pos_row = np.full(C, -1, dtype=np.int64)
        self.neg_row = np.full(C, -1, dtype=np.int64)
        self.pos_diag = np.zeros(C)
        self.neg_diag = np.zeros(C)
        self.pos_weight = np.ones(C)  # the weights of x+ and x-
        self.neg_weight = np.ones(C)
        self.conflicts = np.zeros(C, dtype=np.int64)
        # the current x+ and x- of every problem: (atom, store) they were copied into
        self.pos_ref = [None] * C
        self.neg_ref = [None] * C
        self.margin = None  # (C,) training margins, measured by fit

    def problems(self):
        """The per-problem state the walk updates (:data:`PairProblems`), with no x+ or
        x- in the block yet."""
        C = self.n_problems
        none = np.full(C, -1, dtype=np.int64)
        return PairProblems(
            *super().problems(),
            self.Tb, self.bias, self.Gp, self.Gn, self.slp, self.sln, self.seen,
            none, none.copy(), self.pos_row, self.neg_row, self.pos_diag, self.neg_diag,
            self.conflicts, self.pos_weight, self.neg_weight,
        )  # fmt: skip

    def renumber(self, at, n_seen, start=0):
        """Positions ``p >= start`` in the stream become ``start + at[p - start]`` (as
        :meth:`marginkit._core.kernel.state.KernelState.renumber`), and the stream's rows
        ``n_seen``."""
        for index in (self.index_p[: self.m], self.index_n[: self.m]):
            moved = index >= start
            index[moved] = start + at[index[moved] - start]
        self.n_seen = n_seen

    def examples(self):
        """(positions in the stream, classes, problems) of the x+ and x- of every atom."""
        atoms, problem = np.nonzero(self.mask[: self.m])
        index = np.concatenate([self.index_p[atoms], self.index_n[atoms]])
        label = np.concatenate([self.label_p[atoms], self.label_n[atoms]])
        return index, label, np.concatenate([problem, problem])

    #: arrays with a row per atom (``hcount``: one more)
    PER_VECTOR = (
        "index_p",
        "index_n",
        "label_p",
        "label_n",
        "A",
        "V",
        "beta",
        "T_ins",
        "acc",
        "mask",
        "reset",
    )

    _scaled = ("A", "V", "beta")

    #: arrays with one entry per problem
    PER_PROBLEM = ("s", "norm2", "T", "Tb", "bias", "Gp", "Gn", "slp", "sln")
    PER_PROBLEM += ("pos_diag", "neg_diag", "pos_weight", "neg_weight")

    def __setstate__(self, state):
        if "pos_weight" not in state and isinstance(state.get("bias"), np.ndarray):
            # saved before weights: every x+ and x- weighed 1
            state = dict(state)
            C = state["bias"].shape[0]
            state["pos_weight"], state["neg_weight"] = np.ones(C), np.ones(C)
        self.__dict__.update(state)

    def new_data(self):
        """Rows of new data are new examples: no row holds an x+ or x- any more."""
        self.pos_row[:] = -1
        self.neg_row[:] = -1

    # -- kernel rows -------------------------------------------------------------------
    def to(self, backend):
        """Both stores on ``backend`` (where the next call's products are made)."""
        self.POS.to(backend)
        self.NEG.to(backend)
        return self

    def pair_rows(self, X, inv_x, sq_x, lo, hi, backend):
        """(K(X, p_k) - K(X, n_k)) / 2 for atoms lo..hi-1."""
        Kp, Kn = (
            self.kernel.normalised(
                X,
                store.view(lo, hi),
                inv_x,
                store.inv[lo:hi],
                sq_x,
                store.sq[lo:hi] if self.kernel.needs_norms else None,
                backend,
            )
            for store in (self.POS, self.NEG)
        )
        return (Kp - Kn) * 0.5

    EVALS_PER_VECTOR = 2

    def block_rows(self, block, lo, hi, backend):
        """Pair rows of the block ``(X, inv, sq)`` for atoms lo..hi-1."""
        return self.pair_rows(*block, lo, hi, backend)

    def kernel_rows(self, data, max_elems=1 << 23):
        """Yield ``(lo, hi, pair rows of X[lo:hi])`` in chunks of at most ``max_elems``."""
        self.to(data.backend)
        step = max(1, max_elems // max(self.m, 1))
        for lo, hi, X, inv_x, sq_x in data.chunks(step):
            yield lo, hi, self.pair_rows(X, inv_x, sq_x, 0, self.m, data.backend)

    def columns(self, Xb, inv_b, sq_b, refs, backend):
        """K(Xb, v_c) for the stored vector v_c of every problem, on the backend: a list
        of (b, 1) arrays, None where a problem has none (:func:`stacked` puts them
        together on the host)."""
        out = []
        for ref in refs:
            if ref is None:
                out.append(None)
                continue
            store, j = ref
            rows = self.POS if store == 0 else self.NEG
            K = self.kernel.normalised(
                Xb,
                rows.view(j, j + 1),
                inv_b,
                rows.inv[j : j + 1],
                sq_b,
                rows.sq[j : j + 1] if self.kernel.needs_norms else None,
                backend,
            )
            out.append(K)
            self.n_kernel_evals += Xb.shape[0]
        return out

    # -- outputs -----------------------------------------------------------------------
    def coefficients(self, output):
        """``(coefficients, intercepts)`` of the ``last`` or ``avg`` hypothesis."""
        if output == "last":
            return self.A[: self.m] * self.s[None, :], self.bias.copy()
        return self.averaged(), self.Tb / max(self.trial_weight(), 1e-300)

    def rescale_own(self, growth):
        self.Tb /= growth

    def scores(self, data, output):
        """Decision values (n, C) on the backend of ``data``; the vote adds each
        hypothesis's bias (``beta``) to its margin sum."""
        return outputs(self, data, output, self.coefficients, self.beta[: self.m])


class _Pairs:
    """Kernel PUMMA on :func:`marginkit._core.kernel.blocks.run_blocks`: atoms (pairs of a
    stored x+ and x-), up to one per problem a row."""

    def __init__(self, state, Y, slack, params, backend):
        self.state, self.Y, self.slack, self.backend = state, Y, slack, backend
        self.rule = Rule(-1, delta=params["delta"])
        self.lam, self.fold_below = params["lam"], params["fold_below"]
        self.block_size = params["block_size"]
        self.weight = params.get("weight")
        self.per_row = state.n_problems

    def columns(self, block):
        """K(x, v) of the block's rows for the x+ and x- every problem has (made once
        the block before is stored), on the backend."""
        state, bk = self.state, self.backend
        Xb, inv_bd, sq_bd = block
        kpos = state.columns(Xb, inv_bd, sq_bd, state.pos_ref, bk)
        return kpos + state.columns(Xb, inv_bd, sq_bd, state.neg_ref, bk)

    def walk(self, rows, Xb, inv_b, block, F, Gb, cols, cache):
        state = self.state
        b, C = rows.shape[0], state.n_problems
        m0 = state.m
        kpos0, kneg0 = stacked(cols[:C], b), stacked(cols[C:], b)
        P = state.problems()
        atoms = new_atoms(b * C)
        Y_b = self.Y[rows]
        sums = Sums(F, np.empty((b, C)), state.kept_sums(cache), self.slack)
        old = state.old(m0)
        weight = row_weights(self.weight, rows)
        walk_block = PairBlock(Gb, Y_b, rows, kpos0, kneg0, self.lam, weight)
        pos = 0

        def own(c):
            na = int(atoms.n[0])
            return atoms.coef[:na], atoms.tins[:na], atoms.acc[:na], atoms.cls[:na] == c

        def scaled(c):
            na = int(atoms.n[0])
            sel = atoms.cls[:na] == c
            views = [v[c : c + 1] for v in (state.Gp, state.Gn, state.slp, state.sln)]
            return views, [(atoms.v[:na], sel), (atoms.beta[:na], sel)]

        while pos < b:
            pos = pumma_walk(self.rule, self.fold_below, pos, walk_block, P, atoms, sums, old)
            fold_scales(state, self.fold_below, sums, pos, cache, own, scaled)
            if state.horizon is not None and state.decay[0] > GROWTH_LIMIT:
                state.rescale_totals(own)
        na = int(atoms.n[0])
        atoms = Atoms(*(a[:na] for a in atoms[:-1]), atoms.n)
        # atom j was made at row max(pos[j], neg[j]) (its newer example)
        made_at = np.maximum(atoms.pos, atoms.neg)

        def store():
            if na:
                rows_b = (*block, class_index(Y_b))
                _store_atoms(state, rows_b, self.backend, rows, atoms, P)

        return WalkOutcome(sums, atoms.reset, made_at, own, store)


def train_pairs(state, data, Y, order, slack, params, cache=None, progress=None):
    """One pass of kernel PUMMA_2 over ``order`` in blocks (see :func:`pumma_walk`), on
    the loop of kernel ALMA (:func:`marginkit._core.kernel.blocks.run_blocks`).

    ``data`` (:class:`marginkit._core.kernel.rows.Instances`) holds the rows, where their
    products are made, with ``inv`` = 1 / sqrt(K(x, x)) when normalised, else 1 (0
    where K(x, x) = 0; such a row is the zero vector, whose constraint y b >= 1 still
    counts); ``slack`` the (n, C) soft-margin sums of the rows of X; ``params`` a dict
    with ``delta``, ``lam``, ``block_size`` and ``fold_below`` (and ``weight``, the rows'
    weights, or None: 1 each); ``cache`` None or (P,
    seen) as in :func:`marginkit._core.kernel.blocks.train_blocks`. Returns the updates and
    conflicts made.
    """
    updates0 = state.n_corrections.sum()
    conflicts0 = state.conflicts.sum()
    walker = _Pairs(state, Y, slack, params, data.backend)
    run_blocks(state, data, order, walker, cache, progress)
    return state.n_corrections.sum() - updates0, state.conflicts.sum() - conflicts0


def stacked(columns, b):
    """(b, C) on the host: the (b, 1) host columns of :meth:`PairState.columns`, zeros
    where a problem has none."""
    out = np.zeros((b, len(columns)))
    for c, col in enumerate(columns):
        if col is not None:
            out[:, c] = col[:, 0]
    return out


def _store_atoms(state, block, bk, at, atoms, cur):
    """Append the block's atoms (:data:`Atoms`, those made), in order, and point every
    problem at its x+ and x-; ``block``: the block's rows, inverse norms, squared norms
    and class indices; ``at``: their rows in the pass's data (for the indices)."""
    Xb, inv_b, sq_b, labels_b = block
    na = atoms.cls.shape[0]
    m0 = state.m
    m1 = m0 + na
    C = state.n_problems
    for store, handles, index, label, refs in (
        (state.POS, atoms.pos, state.index_p, state.label_p, state.pos_ref),
        (state.NEG, atoms.neg, state.index_n, state.label_n, state.neg_ref),
    ):
        rows, invs, sqs = [], [], []
        for j in range(na):
            h = handles[j]
            if h >= 0:
                # an in-block row
                rows.append(Xb[h : h + 1, :])
                invs.append(inv_b[h : h + 1])
                sqs.append(None if sq_b is None else sq_b[h : h + 1])
                index[m0 + j] = state.n_seen + at[h]
                label[m0 + j] = labels_b[h]
            else:
                # the x+ / x- of this problem from before the block
                ref_store, i = refs[atoms.cls[j]]
                src = state.POS if ref_store == 0 else state.NEG
                rows.append(src.view(i, i + 1))
                invs.append(src.inv[i : i + 1])
                sqs.append(src.sq[i : i + 1])
                index[m0 + j] = (state.index_p if ref_store == 0 else state.index_n)[i]
                label[m0 + j] = (state.label_p if ref_store == 0 else state.label_n)[i]
        store.append(
            bk.concat(rows),
            bk.xp.concat(invs, axis=0),
            None if sq_b is None else bk.xp.concat(sqs, axis=0),
        )
    state.A[m0:m1] = 0.0
    state.V[m0:m1] = 0.0
    state.beta[m0:m1] = 0.0
    state.T_ins[m0:m1] = 0.0
    state.acc[m0:m1] = 0.0
    state.mask[m0:m1] = False
    state.reset[m0:m1] = False
    cols = np.arange(m0, m1)
    state.A[cols, atoms.cls] = atoms.coef
    state.V[cols, atoms.cls] = atoms.v
    state.beta[cols, atoms.cls] = atoms.beta
    state.T_ins[cols, atoms.cls] = atoms.tins
    state.acc[cols, atoms.cls] = atoms.acc
    state.mask[cols, atoms.cls] = True
    state.reset[cols, atoms.cls] = atoms.reset
    # every problem's x+ / x- is now in the store: the last atom holding it
    for c in range(C):
        for handles, blk, refs, kind in (
            (atoms.pos, cur.pos_blk, state.pos_ref, 0),
            (atoms.neg, cur.neg_blk, state.neg_ref, 1),
        ):
            if blk[c] >= 0:
                js = np.flatnonzero(handles == blk[c])
                refs[c] = (kind, m0 + int(js[-1]))
