"""The exact kernel engine's stored vectors sharded over a cluster: each block's kernel
rows and margin products made where the vectors are, the walk where it always is.

The engine (:mod:`marginkit._core.kernel`) goes through a block in three steps: the
margin sums of its rows over the stored vectors (``b x m`` kernel entries and a product
with the ``m x C`` coefficients: nearly all of the work), the block's Gram, and the
walk. :class:`Sharded` takes the first step to a cluster: the rows of the stored
vectors are split over ``n_shards`` workers (:class:`Shard`, one process each, a Dask
actor), each block goes to the shards that hold vectors its sums need, each returns
its ``b x C`` partial sums, and the driver adds them in the order of the shards. The
block's Gram is made on the driver while the shards work (on the cores the shards on
its machine leave, at least one: the helper threads of OpenBLAS wait for work
spinning, and would take the shards' cores),
and the walk stays there, with the model whole (a shard's rows are a copy of the
driver's): the decisions are those of the one-process engine, only the order of the
floating-point sums differs, and the model is the one-process model.

What moves per block: the block's rows, once, to each shard that holds vectors its
sums need (in float32 where that holds every value exactly: pixels, counts, binary
features; as CSR where most of its values are zeros), the coefficients of those
vectors (``m_s x C``, as they stand: folds of the scale and forgotten hypotheses need
no message of their own), the rows of the vectors stored since the shard's last call,
and ``b x C`` sums back. Where the block's products are made just before its walk
(not ahead of it, in a thread, as on more than two cores), the sums over the vectors
the block before stored come in the same call: one round trip per shard and block.

Which shard holds a vector: an example that comes back (corrected in a later epoch)
is on the shard that holds its row; a new one goes to the shard with the fewest
entries (the lowest-numbered among equals). The assignment depends only on the order
of the corrections, so the same data and shards give the same sums, bit for bit,
whichever worker processes hold the shards. A shard whose worker is lost is made
anew on another (or the restarted) worker from the driver's rows, and the call
repeated: the sums, and so the model, are the same.

Dask's actors already keep an object in a worker and run its calls one at a time;
this module adds only the engine's side (what a shard holds and computes, who holds
what), which no library does, and keeps one call at most in flight to each shard, so
that each call finds the rows and the block that the calls before it sent.
"""

import contextlib
import contextvars
import functools
import threading

import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

from .arrays import HOST
from .kernel.blocks import margin_products
from .kernel.rows import RowStore, store_rows

#: times a call is repeated on a shard made anew after its worker was lost
RETRIES = 3

#: the shards that the kernel fits of this context make their margin products on
#: (:func:`products_on`)
_SHARDS = contextvars.ContextVar("marginkit_shards", default=None)


@contextlib.contextmanager
def products_on(shards):
    """Within it, a kernel estimator's fit (and partial_fit) in this context makes the
    margin products of its stored vectors on ``shards`` (a :class:`Sharded`), which
    ``state.remote`` then names for its blocks: the products' backend passed in by the
    driver (:class:`marginkit.distributed.ShardedKernelClassifier`), not kept on the
    estimator."""
    token = _SHARDS.set(shards)
    try:
        yield shards
    finally:
        _SHARDS.reset(token)


def shards_in_use():
    """The :class:`Sharded` of the :func:`products_on` around this call, or None."""
    return _SHARDS.get()


class Shard:
    """One worker's part of the stored vectors (a Dask actor): their rows, with their
    norms, as a :class:`marginkit._core.kernel.rows.RowStore` whose entries are the vectors
    of the shard in the order the driver stored them, and the margin sums of a block
    over them, made by the engine's own :func:`marginkit._core.kernel.blocks.margin_products`.
    """

    #: kernel entries a row of :meth:`block_rows` costs per stored vector
    EVALS_PER_VECTOR = 1
    #: its products are made here, where its vectors are
    remote = None

    def __init__(self, kernel, n_features, sparse):
        self.kernel = kernel
        self.store = RowStore(n_features, sparse)
        self.block = None

    def block_rows(self, block, lo, hi, backend):
        """K_hat of the block ``(X, inv, sq)`` against the shard's entries lo..hi-1."""
        return store_rows(self.kernel, self.store, block, lo, hi, backend)

    def margins(self, rows, block, plan, rest=None):
        """The (b, C) margin sums of ``block`` over the shard's entries of ``plan``
        (``(first, lo, hi, A)`` in the shard's numbering, as
        :func:`marginkit._core.kernel.blocks.margins_plan` makes them; None where it has no
        entry), after appending ``rows`` (``(X, inv, sq, repeats)``: the entries stored
        since the last call, or None). ``block`` None: the block of the last call (a
        block's sums over the vectors the block before it stored may be a second
        call). With ``rest``, a second plan, ``(sums, sums over rest)``."""
        if rows is not None:
            X, inv, sq, repeats = rows
            self.store.append(X, inv, sq, repeats=repeats)
        if block is None:
            block = self.block
        else:
            X, inv, sq = block
            block = (_unpacked(X, self.store.sparse), _aligned(inv), _aligned(sq))
        self.block = block
        b = block[0].shape[0]
        F, _ = margin_products(self, block, b, _plan_aligned(plan), HOST)
        if rest is None:
            return F
        return F, margin_products(self, block, b, _plan_aligned(rest), HOST)[0]


class _Part:
    """The driver's record of one shard: the actor, the engine's numbers of its entries
    (increasing), the shard's row of each, and how many of them it has received."""

    def __init__(self):
        self.actor = None
        self.ids = np.zeros(256, dtype=np.int64)
        self.local = np.zeros(256, dtype=np.int64)
        self.n = 0  # entries
        self.n_rows = 0  # rows (an example that came back is one row, several entries)
        self.sent = 0  # entries the actor holds
        self.rows_sent = 0
        self.block = None  # the block of the last call, which the actor keeps

    def add(self, entry, local):
        if self.n == self.ids.shape[0]:
            self.ids = np.concatenate([self.ids, np.zeros_like(self.ids)])
            self.local = np.concatenate([self.local, np.zeros_like(self.local)])
        self.ids[self.n] = entry
        self.local[self.n] = local
        self.n += 1


class Sharded:
    """The margin products of a :class:`marginkit._core.kernel.state.KernelState` made on
    ``n_shards`` shards (:class:`Shard`): set as ``state.remote`` for the blocks of a
    fit, it is what :func:`marginkit._core.kernel.blocks.margin_products` calls.

    Parameters
    ----------
    spawn : callable(shard, kernel, n_features, sparse) -> actor
        Makes shard number ``shard`` (a :class:`Shard`) on a worker and returns the
        handle, whose ``margins(...)`` returns a future of the call's result.
    n_shards : int
    lost : callable(shard, exception) -> bool
        Whether an exception raised by a call of shard number ``shard`` means that its
        worker is gone: the shard is then made anew and the call repeated (at most
        :data:`RETRIES` times). Any other exception is the caller's.
    gram_threads : int, default=1
        The most BLAS threads of the blocks' Gram on the driver (no more than the
        driver's BLAS has): the cores that the shards on the driver's machine leave.
    """

    def __init__(self, spawn, n_shards, lost, gram_threads=1):
        self.spawn = spawn
        self.n_shards = int(n_shards)
        self.lost = lost
        self.gram_threads = int(gram_threads)
        self.lock = threading.Lock()
        self.state = self.store = None
        self.parts = []
        #: bytes sent to the shards and received from them (arrays only), shards made
        #: anew after their worker was lost
        self.bytes_sent = self.bytes_received = self.remade = 0
        self._last = None  # the last block sent, and its packed form

    # -- who holds what ------------------------------------------------------------------
    def start(self, state):
        """Shard ``state``'s stored vectors (none are sent before a block needs them).
        Calls for the same state, store unchanged, go on with the shards as they are."""
        if state is self.state and state.store is self.store and state.m >= self.assigned:
            return
        self.close()
        self.state, self.store = state, state.store
        self.parts = [_Part() for _ in range(self.n_shards)]
        self.assigned = 0  # entries of the state given a shard
        self.row_part = np.full(256, -1, dtype=np.int64)  # store row -> shard
        self.row_local = np.zeros(256, dtype=np.int64)  # store row -> row of its shard
        self.loads = np.zeros(self.n_shards, dtype=np.int64)

    def close(self):
        """Let the shards go (their actors end with the last reference; ``spawn``'s
        ``close``, where it has one, lets go of its own)."""
        for part in self.parts:
            part.actor = None
        self.parts = []
        self.state = self.store = None
        self._last = None
        getattr(self.spawn, "close", lambda: None)()

    def sizes(self):
        """Entries held by each shard, as the driver assigned them."""
        return [part.n for part in self.parts]

    def _assign(self, hi):
        """Give entries ``assigned..hi-1`` of the state a shard each."""
        vec = self.store.entry_rows()
        for e in range(self.assigned, hi):
            r = e if vec is None else int(vec[e])
            if r >= self.row_part.shape[0]:
                grow = max(2 * self.row_part.shape[0], r + 1) - self.row_part.shape[0]
                self.row_part = np.concatenate([self.row_part, np.full(grow, -1)])
                self.row_local = np.concatenate([self.row_local, np.zeros(grow, np.int64)])
            s = int(self.row_part[r])
            if s < 0:
                s = int(np.argmin(self.loads))
                part = self.parts[s]
                self.row_part[r], self.row_local[r] = s, part.n_rows
                part.n_rows += 1
            self.parts[s].add(e, self.row_local[r])
            self.loads[s] += 1
        self.assigned = max(self.assigned, hi)

    def _pending(self, part):
        """``(X, inv, sq, repeats)`` of the entries the shard has not received (their
        rows sent once: ``repeats`` -1 for a row sent now, else the shard's row), or
        None."""
        lo, hi = part.sent, part.n
        if hi <= lo:
            return None
        local = part.local[lo:hi]
        repeats = np.full(hi - lo, -1, dtype=np.int64)
        fresh = []
        nxt = part.rows_sent
        for i, r in enumerate(local.tolist()):
            if r < nxt:
                repeats[i] = r
            else:
                fresh.append(i)
                nxt += 1
        store = self.store
        vec = store.entry_rows()
        ids = part.ids[lo:hi][fresh]
        rows = ids if vec is None else vec[ids]
        if store.sparse:
            top = int(rows.max()) + 1 if rows.size else 0
            X = store._rows_view(0, top)[rows]
        else:
            X = store.rows[rows]
        part.sent, part.rows_sent = hi, nxt
        return X, store.inv[rows], store.sq[rows], repeats

    # -- the products --------------------------------------------------------------------
    def margin_products(self, state, block, plan):
        """The (b, C) margin sums of ``block`` over the stored vectors of ``plan`` (as
        :func:`marginkit._core.kernel.blocks.margin_products` takes them, on the host; None
        where it has none): each shard's sums over its vectors, added in the order of
        the shards."""
        with self.lock:
            return self._sums(self._run(self._jobs(block, plan, None)))[0]

    def products(self, state, block, plan, rest=None):
        """``(F, G, F_rest)``: the margin sums of :meth:`margin_products` over ``plan``
        and over ``rest`` (a second plan, or None; one call to each shard for both),
        and the block's Gram (b x b), made here while the shards work, on at most
        ``gram_threads`` BLAS threads: OpenBLAS's helper threads wait for work
        spinning, and must not take the shards' cores."""
        X, inv, sq = block
        blas = _controller().select(user_api="blas")
        now = min((lib["num_threads"] for lib in blas.info()), default=1)
        with self.lock:
            futures = self._jobs(block, plan, rest)
            with blas.limit(limits=max(1, min(now, self.gram_threads))):
                G = state.kernel.normalised(X, X, inv, inv, sq, sq, HOST)
            F, F_rest = self._sums(self._run(futures))
        return F, G, F_rest

    def _jobs(self, block, plan, rest):
        """The shards' calls for ``plan``'s sums (and ``rest``'s), submitted, as
        ``((part, block, plan, rest), future)``: shards without a vector in either
        plan are not called. The caller holds ``lock`` until it has the results: one
        call at most in flight to a shard, so that each finds the rows and the block
        the calls before it sent (the engine's thread that makes products ahead and
        the walk's may both call)."""
        self._assign(max(plan[2], 0 if rest is None else rest[2]))
        jobs = []
        for part in self.parts:
            ids = part.ids[: part.n]
            mine = _local_plan(ids, plan)
            mine_rest = None if rest is None else _local_plan(ids, rest)
            if mine[3] is None and (mine_rest is None or mine_rest[3] is None):
                continue
            job = (part, block, mine, mine_rest)
            jobs.append((job, self._submit(*job)))
        return jobs

    @staticmethod
    def _sums(results):
        """The shards' sums added in shard order (None where none has any), as
        ``(F, F_rest)``."""
        F = F_rest = None
        for out in results:
            out, more = out if isinstance(out, tuple) else (out, None)
            if out is not None:
                F = out if F is None else F + out
            if more is not None:
                F_rest = more if F_rest is None else F_rest + more
        return F, F_rest

    def _run(self, jobs):
        """The results of the submitted ``jobs`` (:meth:`_jobs`), a shard made anew and
        its call repeated where its worker was lost."""
        out = []
        for job, future in jobs:
            tries = RETRIES
            while True:
                try:
                    F = future.result()
                    break
                except Exception as exc:
                    tries = self._lost(job[0], exc, tries)
                    future = self._submit(*job)
            self.bytes_received += _nbytes(F)
            out.append(F)
        return out

    def _submit(self, part, block, plan, rest):
        """The future of ``part``'s sums of ``block`` over ``plan``, its actor made
        first where it has none (made anew where its worker is lost)."""
        tries = RETRIES
        while True:
            try:
                if part.actor is None:
                    s = self.parts.index(part)
                    store = self.store
                    part.actor = self.spawn(s, self.state.kernel, store.n_features, store.sparse)
                rows = self._pending(part)
                # the shard keeps the block of its last call
                sent = None if block is part.block else self._packed(block)
                future = part.actor.margins(rows, sent, plan, rest)
                part.block = block
                break
            except Exception as exc:
                tries = self._lost(part, exc, tries)
        self.bytes_sent += _nbytes(rows) + _nbytes(sent) + _nbytes(plan) + _nbytes(rest)
        return future

    def _packed(self, block):
        """``block`` as it is sent (:func:`_packed`), packed once for every shard."""
        if self._last is None or self._last[0] is not block:
            self._last = (block, (_packed(block[0]), *block[1:]))
        return self._last[1]

    def _lost(self, part, exc, tries):
        """After ``exc`` from a call of ``part``: its shard made anew and the tries left,
        where its worker is lost and tries are left; else ``exc`` raised again."""
        if tries == 0 or not self.lost(self.parts.index(part), exc):
            raise exc
        self._remake(part)
        return tries - 1

    def _remake(self, part):
        """A new actor for ``part``, to receive all of its entries again."""
        part.actor = part.block = None
        part.sent = part.rows_sent = 0
        self.remade += 1


@functools.cache
def _controller():
    """threadpoolctl's view of the BLAS libraries loaded (made once: it looks them up)."""
    return ThreadpoolController()


def _local_plan(ids, plan):
    """``plan`` (``(first, col0, hi, A)`` over the engine's entries) in the numbering of
    a shard holding entries ``ids`` (increasing): its entries from col0 to hi, their
    coefficients, and for each row the first of them it needs (None: no entry)."""
    first, col0, hi, A = plan
    lo_s, hi_s = (int(i) for i in np.searchsorted(ids, [col0, hi]))
    if hi_s <= lo_s:
        return None, 0, 0, None
    first_s = None if first is None else np.searchsorted(ids, first)
    return first_s, lo_s, hi_s, np.ascontiguousarray(A[ids[lo_s:hi_s] - col0])


def _packed(X):
    """The rows ``X`` as they are sent, the same numbers in fewer bytes: float32 where
    that holds every value exactly (pixels, counts, binary features), and dense rows
    mostly zeros as CSR (:func:`_unpacked` undoes both)."""
    sparse = sp.issparse(X)
    values = X.data if sparse else X
    if values.dtype == np.float64:
        narrow = values.astype(np.float32)
        if np.array_equal(narrow, values):
            values = narrow
    if not sparse:
        return sp.csr_matrix(values) if 4 * np.count_nonzero(values) < values.size else values
    if values is X.data:
        return X
    X = X.copy()
    X.data = values
    return X


def _aligned(a):
    """``a`` (or None) in memory aligned to its items: a copy where the message it
    came in left it at another address (:func:`marginkit._rows.canonical` says why)."""
    return None if a is None else np.require(a, requirements="A")


def _plan_aligned(plan):
    first, lo, hi, A = plan
    return _aligned(first), lo, hi, _aligned(A)


def _unpacked(X, sparse):
    """The float64 rows that :func:`_packed` sent (``sparse``: the store's form), in
    arrays that start at aligned addresses (a message's buffers may not: see
    :func:`marginkit._rows.canonical`)."""
    if sp.issparse(X) and not sparse:
        X = X.toarray()
    if sp.issparse(X):
        parts = (X.data, X.indices, X.indptr)
        if X.data.dtype != np.float64 or not all(a.flags.aligned for a in parts):
            X = X.copy()
            X.data = X.data.astype(np.float64)
        return X
    if X.dtype != np.float64 or not X.flags.aligned:
        X = X.astype(np.float64)
    return X


def _nbytes(obj):
    """Bytes of the arrays in ``obj`` (a tuple of arrays, sparse matrices and None)."""
    if obj is None:
        return 0
    if isinstance(obj, tuple | list):
        return sum(_nbytes(o) for o in obj)
    if hasattr(obj, "data") and hasattr(obj, "indptr"):
        return obj.data.nbytes + obj.indices.nbytes + obj.indptr.nbytes
    return getattr(obj, "nbytes", 0)
