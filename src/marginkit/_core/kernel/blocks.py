"""The block driver: each block's margin products, made ahead, and the walk over the blocks."""

import concurrent.futures
import os

import numpy as np
from sklearn import config_context, get_config

from ..budget import maintain
from ..kernels import thread_pool
from ..linear import GROWTH_LIMIT, row_weights
from .outputs import Coefficients
from .rows import PassRows
from .walk import Block, New, Sums, kernel_walk

# Sigma-style restart of the averaging totals (see marginkit._core.linear.FLUSH_RATIO).
FLUSH_RATIO = 1e-4
# Fold s into the coefficients below this (s shrinks, A = eta y / s grows).
FOLD_BELOW = 1e-100
#: Make the next block's products in a worker thread while the walk goes through the
#: current block (:class:`BlockProducts`): on more than two cores, where the products leave
#: room for it (on two, BLAS keeps both busy, and the overlap measured no gain).
OVERLAP = (os.cpu_count() or 1) > 2


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
    against the stored vectors ``state.block_rows`` makes (``state.EVALS_PER_VECTOR`` kernel
    entries each). Reads the state only below the plan's end, so that the products of
    the next block can be made while the walk appends. Without ``multiply``, the
    kernel rows themselves (before :func:`zeroed`), for one product later.

    A state whose stored vectors are sharded over a cluster (``state.remote``, a
    :class:`marginkit._core.shards.Sharded`) has its margin sums made there.
    """
    first, col0, hi, A = plan
    if hi <= col0:
        return None, 0
    remote = state.remote
    if remote is not None and multiply:
        # the stored vectors' rows sharded over a cluster (marginkit._core.shards)
        return remote.margin_products(state, block, plan), state.EVALS_PER_VECTOR * b * (hi - col0)
    K = state.block_rows(block, col0, hi, backend)
    evals = state.EVALS_PER_VECTOR * b * (hi - col0)
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


class BlockProducts:
    """The products of a block, made while the walk goes through the block before it:
    its rows, its margin sums over the vectors stored when it was started (or, with
    ``state.ONE_SUM``, its kernel rows against those), and its kernel rows against
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
    Kernel PUMMA's (``state.ONE_SUM``) are one product over every stored pair, as
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
        if now and state.remote is not None:
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
        if state.ONE_SUM:
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
    """The rows lo..hi-1 of a pass (:class:`PassRows`) and, on the backend, their margin
    sums over the vectors of ``plan`` (None when it has none; with ``state.ONE_SUM``
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
    remote = state.remote
    if remote is not None:
        F, G, F_rest = remote.products(state, block, plan, rest)
        per = state.EVALS_PER_VECTOR * b
        evals = per * max(0, plan[2] - plan[1]) + b * b
        last = None if rest is None else (F_rest, per * max(0, rest[2] - rest[1]))
        return Xb, inv_b, block, F, G, evals, last
    if prev is None:
        F, evals = margin_products(state, block, b, plan, bk, not state.ONE_SUM)
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
    before, where :class:`BlockProducts` can), ``walker.walk`` (the compiled walk and the folds
    of the scale it calls for), then the end shared by both: averaging totals
    flushed, the margin sums at each row's trial kept across epochs, the block's
    vectors stored.

    Parameters
    ----------
    state : VectorStore
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
        block, F, Gb, columns, cache)``, which returns the block's :class:`WalkOutcome`.
    cache : None or (P, seen) arrays
        The margin sums of every row over the first ``seen[row]`` stored vectors,
        filled in and used across epochs.
    progress : callable(n_rows) or None
    """
    bk = data.backend
    state.to(bk)
    coef = Coefficients.of(state, bk)
    ordered = PassRows(data, order)
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
                ahead = BlockProducts(state, ordered, lo, hi, coef, cache, split, now=True)
            Xb, inv_b, block, F, Gb, cols, evals = ahead.result(
                state, data, coef, cache, m0, made, walker.columns
            )
            state.n_kernel_evals += evals
            ahead = None
            if (OVERLAP or bk.queued) and hi < n:
                prev = block if bk.queued and not state.ONE_SUM else None
                nxt = min(n, hi + b_max)
                ahead = BlockProducts(state, ordered, hi, nxt, coef, cache, m0, prev)
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
    """Wait for the products ``ahead`` (:class:`BlockProducts`, or None) may still be making in
    a worker thread, whatever became of them."""
    if ahead is not None and ahead.future is not None:
        concurrent.futures.wait([ahead.future])


class WalkOutcome:
    """What a block's walk made, as :func:`end_block` takes it.

    ``sums``: the block's :data:`Sums`; ``reset``: whether each vector made forgot the
    hypothesis before it; ``rows``: the rows of the block at which the vectors to store
    were made, in their order; ``own(c)``: ``(a, t, acc, mask)`` of the vectors made,
    problem c's where ``mask`` (as :meth:`VectorStore.flush` takes them); ``store()`` appends
    them to the state; ``stop``: the rows walked (None: the whole block).
    """

    def __init__(self, sums, reset, rows, own, store, stop=None):
        self.sums, self.reset, self.rows, self.own, self.store = sums, reset, rows, own, store
        #: the rows walked: all of the block's, or those up to the one that filled a
        #: budgeted store
        self.stop = sums.F.shape[0] if stop is None else stop


def fold_scales(state, fold_below, sums, pos, cache, own, scaled=()):
    """Fold every scale ``s_c`` the walk took outside ``[fold_below, 1 / fold_below]``
    into problem c's coefficients (:meth:`VectorStore.fold`), the walk stopped before row
    ``pos``: the block's margin sums ahead of it, those recorded up to it, the slack
    sums and those kept across epochs (``cache``) with them; ``own(c)`` the vectors the
    block made (as :meth:`VectorStore.flush` takes them), ``scaled(c)`` ``(views, masked)``
    of the walker's own sums (as :meth:`VectorStore.fold` takes them)."""
    for c in np.flatnonzero((state.s < fold_below) | (state.s * fold_below > 1.0)):
        views, masked = scaled(c) if scaled else ([], [])
        views = [sums.F[pos:, c], sums.f_seen[:pos, c], sums.slack[:, c], *views]
        if cache is not None:
            views.append(cache[0][:, c])
        state.fold(c, views, [own(c)], masked)


def end_block(state, rows, done, cache, m0):
    """The end of a block (:class:`WalkOutcome`), kernel ALMA's and kernel PUMMA's alike: older
    coefficients marked changed where a hypothesis was forgotten, the averaging totals
    that outgrew the scale flushed, the margin sums over the ``m0`` vectors stored
    before the block and the block's own before each row's trial kept across epochs
    (``cache``), the block's vectors stored and its trials counted."""
    if done.reset.any():
        state.coefficients_changed()  # a hypothesis forgotten: older A zeroed
    for c in range(state.n_problems):
        # (with a horizon the totals are rescaled as the trials' weight grows instead)
        if state.horizon is None and state.s[c] < FLUSH_RATIO * state.T[c]:
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
            if state.horizon is not None and state.decay[0] > GROWTH_LIMIT:
                state.rescale_totals(own)
        sv_rows = np.flatnonzero(new.mask[:pos].any(axis=1))

        def store():
            sq_bd = block[2]  # the squared norms on the backend (or None)
            state.store_vectors(self.backend, Xb, inv_b, sq_bd, rows, sv_rows, Y_b, new)

        return WalkOutcome(sums, new.reset, sv_rows, own, store, pos)

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
