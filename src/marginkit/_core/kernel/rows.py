"""The stores of rows (support vectors, the rows of a call) and their norms."""

import numpy as np
import scipy.sparse as sp

from ..arrays import HOST, Host, times_power_of_two, to_numpy


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
    #: where the rows are (:mod:`marginkit._core.arrays`): the host unless moved (never
    #: saved: a loaded store is on the host)
    _backend = HOST
    #: the row of each example, looked up on demand (never saved), or None
    _where = None

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
        return self._backend

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
        self._backend = HOST if backend.same(HOST) else backend
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
            self.keys = with_room(self.keys, rows, fill=-1)

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
        where = self._where
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
                self.vec = with_room(self.vec, n + entries)
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
            where = self._where
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
                self.indptr = with_room(self.indptr, need_rows)
            nnz0 = self.indptr[at]
            need = nnz0 + X.nnz
            if need > self.data.shape[0]:
                self.indices = with_room(self.indices, need)
                self.data = with_room(self.data, need)
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

    def renumber(self, at, start=0):
        """The examples of the rows held from position ``start`` on are now ``start +
        at[key - start]`` (positions in a larger stream than the one the keys counted)."""
        if self.keys is not None:
            n = self.n_rows
            keys = self.keys[:n]
            moved = keys >= max(start, 0)  # -1: no example
            keys[moved] = start + at[keys[moved] - start]
            self._where = None

    def collapse(self):
        """Make every row one entry, in the rows' order (the arrays per entry summed by
        :meth:`KernelState.collapse` first)."""
        if self.vec is not None:
            self.n, self.vec, self.held = self.held, None, None

    def keep(self, S):
        """Keep the rows ``S`` (rising; every entry its own row: :meth:`collapse`) only,
        in their order, in new arrays of the same room: the old ones stay as they were
        (:meth:`VectorStore.undo_point` keeps them)."""
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
        self._where = None
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


class PassRows:
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


def with_room(a, need, fill=0):
    """``a`` with room for at least ``need`` rows (twice its rows, or ``need``), the new
    rows ``fill``."""
    cap = max(2 * a.shape[0], need)
    shape = (cap,) + a.shape[1:]
    out = np.full(shape, fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


def store_rows(kernel, store, block, lo, hi, backend):
    """K_hat of the block ``(X, inv, sq)`` against the rows of entries lo..hi-1 of
    ``store`` (:class:`RowStore`)."""
    X, inv_x, sq_x = block
    inv, sq = store.norms(lo, hi)
    sq = sq if kernel.needs_norms else None
    return kernel.normalised(X, store.view(lo, hi), inv_x, inv, sq_x, sq, backend)
