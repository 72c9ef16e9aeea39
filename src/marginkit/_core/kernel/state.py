"""The kernel state: the support vectors, their coefficients and their averaging bookkeeping."""

import numpy as np

from ..budget import NO_VOTE
from ..linear import growth_step
from .outputs import class_index, outputs
from .rows import RowStore, store_rows, trimmed, with_room
from .walk import Old, Problems


class VectorStore:
    """The bookkeeping that kernel ALMA's support vectors (:class:`KernelState`) and
    kernel PUMMA's pairs (:class:`marginkit._core.pairs.PairState`) keep alike.

    A row per stored vector in the arrays ``PER_VECTOR`` (grown together), of which
    ``A`` holds the coefficient of every problem, ``T_ins`` the averaging total at its
    insertion and ``acc`` what closed averaging intervals left (``mask``: the problems
    it belongs to); per problem, the scale ``s``, the running total ``T`` of ``s`` over
    trials and the correction counter ``k``; ``hcount[k - 1, c]``: the trials each
    hypothesis of problem c lasted. Subclasses name ``_rows``, their :class:`RowStore`
    (``m``: its rows).
    """

    PER_VECTOR = ()
    #: vectors stored by the last block: where :class:`BlockProducts` splits the margin sums
    n_last = 0
    #: whether a block's margin sums are one product over every stored vector (kernel
    #: PUMMA), rather than two split where the block before started (:class:`BlockProducts`)
    ONE_SUM = False
    #: the kernel entries each stored vector's column takes (kernel PUMMA's pairs: two)
    EVALS_PER_VECTOR = 1
    #: where the margin products over the stored vectors are made when not in this
    #: process: the shards of a fit on a cluster (:class:`marginkit._core.shards.Sharded`),
    #: for the blocks of such a fit (:func:`marginkit._core.shards.products_on`); None:
    #: here
    remote = None
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
        return trimmed(self, self.m, self.PER_VECTOR)

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
            for name in self.PER_VECTOR:
                if getattr(self, name) is not None:
                    setattr(self, name, with_room(getattr(self, name), need))
        if need + 1 > self.hcount.shape[0] and not self.budgeted:
            self.hcount = with_room(self.hcount, need + 1)

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

    #: The seed of ``budget_rule="remove_random"``'s draws, and the vectors it has
    #: removed (:func:`marginkit._core.budget.removed`)
    removal_seed = 0
    n_removed = 0

    #: The averaged output's horizon (None: every trial weighs 1), and with one the
    #: averaging weights of :data:`Problems` (``decay``: the weight of the next trial,
    #: its growth per trial and the trials' total weight, in the units of the totals)
    horizon = None
    decay = None

    def set_horizon(self, horizon):
        """Weigh the hypothesis after trial t by ``(1 - 1 / horizon)^(T - t)`` in the
        average (:mod:`marginkit._core.linear`, "horizon"); None: every trial alike."""
        if horizon is not None:
            self.horizon = float(horizon)
            self.decay = np.array([1.0, growth_step(self.horizon), 0.0])

    def trial_weight(self):
        """The total weight of the trials in the averaged hypothesis's sums."""
        if self.horizon is not None:
            return float(self.decay[2])
        return float(self.n_trials) if self.decayed is None else self.decayed

    def decay_sums(self, rho):
        """The averaged hypothesis's sums (closed) and the trials' total weight times
        ``rho``."""
        self.acc[: self.m] *= rho
        if self.horizon is not None:
            self.decay[2] *= rho
        else:
            self.decayed = rho * self.trial_weight()

    def rescale_totals(self, extra=()):
        """With a horizon, once the weight G of the next trial has grown past
        :data:`marginkit._core.linear.GROWTH_LIMIT`: every problem's averaging intervals
        closed (:meth:`flush`; ``extra(c)`` as there) and the sums divided by G, which
        becomes 1: the same average in smaller units."""
        growth = float(self.decay[0])
        for c in range(self.n_problems):
            own = extra(c) if extra else None
            self.flush(c, [own] if own is not None else ())
            if own is not None:
                own[2][own[3]] /= growth
        self.acc[: self.m] /= growth
        self.rescale_own(growth)
        self.decay[0] = 1.0
        self.decay[2] /= growth

    def rescale_own(self, growth):
        """Sums of a subclass's own kept in the units of the averaging weights, divided
        by ``growth`` (:meth:`rescale_totals`)."""

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
        decay = self.decay if self.decay is not None else np.array([1.0, 1.0, 0.0])
        return Problems(self.s, self.norm2, self.k, self.T, self.hcount, decay)

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
                store._where = None  # a lookup the call added to
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


class KernelState(VectorStore):
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
    PER_VECTOR = ("index", "label", "A", "T_ins", "acc", "mask", "reset", "V")
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
        for name in self.PER_VECTOR:
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
