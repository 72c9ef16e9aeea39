"""The checks of the engines' states as a model file holds them, and the engines'
classes that a file may hold.

The compiled engines (:mod:`marginkit._core`) know nothing of files: this module, on the
persistence side, declares their classes to the registry of trusted types
(:mod:`marginkit._registry`) and checks a loaded state before any compiled pass is given
it. A model file is data from anywhere, and the passes index their arrays without
bounds checks: every array is checked for its type, dtype and shape, every index against
the size it addresses and every count against its array (:mod:`marginkit._checks`, whose
checks raise :class:`~marginkit.persistence.UntrustedFileError` naming the attribute).

:func:`check_state` checks a state by the checks registered for its class
(:func:`checks_state_of`): every state of :mod:`marginkit._core` has its check here.
"""

import numpy as np

from . import _checks as check
from ._core import linear as L
from ._core import pumma as K
from ._core.kernel.rows import RowStore
from ._core.kernel.state import KernelState
from ._core.kernels import KERNELS, Kernel
from ._core.pairs import PairState
from ._core.pumma import PUMMAState
from ._core.state import PNormState
from ._registry import trusted_type

#: The checks of each state class, by class (:func:`checks_state_of`)
_CHECKS = {}


def checks_state_of(cls):
    """Register the decorated function as the load-time check of ``cls``'s states
    (``check(state, where, *sizes)``), and ``cls`` as a class that files may hold."""

    def register(check_fn):
        trusted_type(cls)
        _CHECKS[cls] = check_fn
        return check_fn

    return register


def check_state(state, where, *sizes):
    """An :class:`~marginkit.persistence.UntrustedFileError` unless ``state`` (from a
    file, read as the attribute ``where``) is one the compiled passes can be given: the
    check registered for its class, with the sizes it is checked against (the number of
    features, of problems...)."""
    for cls in type(state).__mro__:
        if cls in _CHECKS:
            return _CHECKS[cls](state, where, *sizes)
    check.fail(where, f"is of type {type(state).__name__}, which no check is registered for")


@checks_state_of(Kernel)
def check_kernel(kernel, where):
    """A named kernel (a file holds no function) with finite parameters."""
    w = f"{where}."
    check.attributes(kernel, where, ("kernel", "gamma", "degree", "coef0"), ("offset",))
    if not isinstance(kernel.kernel, str) or kernel.kernel not in KERNELS:
        check.fail(w + "kernel", f"must be one of {', '.join(KERNELS)}, got {kernel.kernel!r}")
    check.real(kernel.gamma, w + "gamma", positive=True)
    check.integer(kernel.degree, w + "degree", 1)
    check.real(kernel.coef0, w + "coef0")
    check.real(kernel.offset, w + "offset", 0.0)


@checks_state_of(RowStore)
def check_row_store(store, where, n_features):
    """The rows as saved: ``n`` entries, each a row of ``n_features`` finite values
    with its norms (or, with ``vec``, one of ``held`` such rows, every row some
    entry's); for sparse rows, a CSR structure whose pointers rise from 0 to the
    non-zeros and whose column indices are sorted in each row and less than
    ``n_features`` (scipy's products follow them unchecked)."""
    w = f"{where}."
    check.equal(check.integer(store.n_features, w + "n_features", 1), w + "n_features", n_features)
    entries = check.integer(store.n, w + "n", 0)
    n = entries
    if store.vec is not None:
        n = check.integer(store.held, w + "held", 0, entries)
        vec = check.array(store.vec, w + "vec", np.int64, (entries,), within=(0, max(n, 1)))
        if np.unique(vec).size != n:
            check.fail(w + "vec", f"must map the entries onto all {n} rows")
    common = ("n_features", "sparse", "n", "inv", "sq")
    if not check.flag(store.sparse, w + "sparse"):
        check.attributes(store, where, (*common, "rows"), ("vec", "keys", "held"))
        check.array(store.rows, w + "rows", np.float64, (n, n_features), finite=True)
    else:
        check.attributes(
            store, where, (*common, "indptr", "indices", "data"), ("vec", "keys", "held")
        )
        indptr = check.array(store.indptr, w + "indptr", np.int64, (n + 1,))
        if indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            check.fail(w + "indptr", "must rise from 0")
        nnz = int(indptr[-1])
        indices = check.array(
            store.indices, w + "indices", np.int32, (nnz,), within=(0, n_features)
        )
        check.array(store.data, w + "data", np.float64, (nnz,), finite=True)
        rising = np.diff(indices) > 0
        ends = indptr[1:-1]
        rising[ends[(ends > 0) & (ends < nnz)] - 1] = True  # from one row to the next
        if not rising.all():
            check.fail(w + "indices", "must be sorted within each row, without repeats")
    for name in ("inv", "sq"):
        check.array(getattr(store, name), w + name, np.float64, (n,), finite=True)
    if store.keys is not None:
        check.array(store.keys, w + "keys", np.int64, (n,), within=(-1, 2**62))


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


@checks_state_of(KernelState)
def check_kernel_state(state, where, n_features, n_problems, forgets):
    """The support vectors and every array per support vector (``m`` rows) and per
    problem (``n_problems``), as the compiled walk and the outputs index them: the
    correction counters ``k`` against the support vectors each problem has, the
    trials ``hcount`` against ``n_trials``."""
    w = f"{where}."
    names = ("kernel", "normalize", "n_problems", "store", "s", "norm2", "k", "T")
    names += ("hcount", "n_trials", "n_seen", "n_kernel_evals", "n_last", *state.PER_VECTOR)
    # a file of 0.1 has no budget, one saved before ``filled`` counted its entries
    optional = ("budget", "filled", "slack", "decayed", "horizon", "decay")
    optional += ("removal_seed", "n_removed")
    check.attributes(state, where, names, optional)
    check.flag(state.filled, w + "filled")
    check_kernel(check.instance(state.kernel, w + "kernel", Kernel), w + "kernel")
    check.flag(state.normalize, w + "normalize")
    C = check.equal(state.n_problems, w + "n_problems", n_problems)
    store = check.instance(state.store, w + "store", RowStore)
    check_row_store(store, w + "store", n_features)
    m = state.store.n
    check.integer(state.n_last, w + "n_last", 0, m)
    check.array(state.index, w + "index", np.int64, (m,), within=(0, 2**62))
    check.array(state.label, w + "label", np.int64, (m,), within=(0, max(2, C)))
    for name in ("A", "T_ins", "acc"):
        check.array(getattr(state, name), w + name, np.float64, (m, C), finite=True)
    for name in ("mask", "reset"):
        check.array(getattr(state, name), w + name, np.bool_, (m, C))
    if not forgets:
        check.equal(state.V, w + "V", None)
    else:
        check.array(state.V, w + "V", np.float64, (m, C), finite=True)
    check_problems(state, where, m, C, ("s", "norm2", "T"))
    if "slack" in vars(state):
        check.array(state.slack, w + "slack", np.float64, (None, C), finite=True)
    if "decayed" in vars(state):
        if check.real(state.decayed, w + "decayed", 0.0) > state.n_trials:
            check.fail(w + "decayed", f"must be at most the {state.n_trials} trials")
    check_horizon(state, where)
    if "removal_seed" in vars(state):
        check.integer(state.removal_seed, w + "removal_seed", 0, 2**63)
    if "n_removed" in vars(state):
        check.integer(state.n_removed, w + "n_removed", 0, 2**62)


def check_horizon(state, where):
    """A kernel store's horizon and its averaging weights (:data:`Problems`): none, or
    a horizon > 1 whose growth per trial follows from it, the weight of the next trial
    between 1 and its limit, the trials' total weight finite and >= 0."""
    w = f"{where}."
    if "horizon" not in vars(state) and "decay" not in vars(state):
        return
    h = check.real(state.horizon, w + "horizon")
    decay = check.array(state.decay, w + "decay", np.float64, (3,), finite=True)
    if not L.weights_follow(h, decay[0], decay[1], decay[2]):
        check.fail(w + "decay", "holds averaging weights that do not follow from the horizon")


@checks_state_of(PairState)
def check_pairs_state(state, where, n_features, n_problems):
    """The atoms' two stores and every array per atom (``m`` rows) and per problem,
    as :func:`pumma_walk` and the outputs index them; the stored x+ and x- of every
    problem (``pos_ref``: an atom of one of the stores, there whenever the problem has
    seen that class); the rows holding them (``pos_row``: checked against the data
    where a fit resumes)."""
    w = f"{where}."
    names = ("kernel", "normalize", "n_problems", "POS", "NEG", "hcount", "k", "seen")
    names += ("pos_row", "neg_row", "conflicts", "pos_ref", "neg_ref", "n_trials")
    names += ("n_seen", "n_kernel_evals", "margin", *state.PER_VECTOR, *state.PER_PROBLEM)
    check.attributes(state, where, names, ("horizon", "decay"))
    check_horizon(state, where)
    check_kernel(check.instance(state.kernel, w + "kernel", Kernel), w + "kernel")
    check.flag(state.normalize, w + "normalize")
    C = check.equal(state.n_problems, w + "n_problems", n_problems)
    for name in ("POS", "NEG"):
        store = check.instance(getattr(state, name), w + name, RowStore)
        check_row_store(store, w + name, n_features)
    m = state.POS.n
    check.equal(state.NEG.n, w + "NEG.n", m)
    for name in ("label_p", "label_n"):
        check.array(getattr(state, name), w + name, np.int64, (m,), within=(0, max(2, C)))
    for name in ("index_p", "index_n"):
        check.array(getattr(state, name), w + name, np.int64, (m,), within=(0, 2**62))
    for name in ("A", "V", "beta", "T_ins", "acc"):
        check.array(getattr(state, name), w + name, np.float64, (m, C), finite=True)
    for name in ("mask", "reset"):
        check.array(getattr(state, name), w + name, np.bool_, (m, C))
    check_problems(state, where, m, C, state.PER_PROBLEM)
    if not (np.all(state.pos_weight > 0) and np.all(state.neg_weight > 0)):
        check.fail(w + "pos_weight", "and neg_weight must be > 0 (the weights of x+, x-)")
    seen = check.array(state.seen, w + "seen", np.int64, (C,), within=(0, 4))
    for name in ("pos_row", "neg_row"):
        check.array(getattr(state, name), w + name, np.int64, (C,), within=(-1, 2**62))
    check.array(state.conflicts, w + "conflicts", np.int64, (C,), within=(0, 2**62))
    if state.margin is not None:
        check.array(state.margin, w + "margin", np.float64, (C,))
    for name, bit in (("pos_ref", 1), ("neg_ref", 2)):
        refs = getattr(state, name)
        if type(refs) is not list or len(refs) != C:
            check.fail(w + name, f"must be a list of {C} references")
        for c, ref in enumerate(refs):
            if ref is None and not seen[c] & bit:
                continue
            if not (type(ref) is tuple and len(ref) == 2):
                check.fail(f"{w}{name}[{c}]", "must be the (store, atom) of a stored example")
            check.integer(ref[0], f"{w}{name}[{c}] store", 0, 1)
            check.integer(ref[1], f"{w}{name}[{c}] atom", 0, m - 1)


def check_pairs_rows(state, where, n):
    """The rows of x+ and x- are rows of the ``n`` the fit resumes on."""
    for name in ("pos_row", "neg_row"):
        check.array(getattr(state, name), f"{where}.{name}", np.int64, (None,), within=(-1, n))


@checks_state_of(PNormState)
def check_pnorm_state(state, where, d, p):
    """An :class:`~marginkit.persistence.UntrustedFileError` unless this state (from a
    file) is one the compiled passes can be given: ``d`` weights at norm ``p``.

    Every index the passes and the vote follow is checked against the size it
    addresses: the scalar states ``fs`` and ``ist`` by their constants, the log's
    fill ``ist[I_HNNZ]`` in its last block, each correction's span ``h_start[k] :
    h_stop[k]`` in its block (``b_first``), every logged coordinate (``b_indices``)
    against d, and the counts (corrections, trials, ``h_count``) against each other
    and their arrays.
    """
    w = f"{where}."
    check.attributes(state, where, state.SAVED)
    check.equal(check.integer(state.d, w + "d", 1), w + "d", d)
    check.equal(check.real(state.p, w + "p"), w + "p", p)
    for name in ("v", "acc", "u"):
        check.array(getattr(state, name), w + name, np.float64, (d,), finite=True)
    # the direction g is v itself at p = 2
    check.array(state.g, w + "g", np.float64, (d if p != 2.0 else 0,), finite=True)
    fs = check.array(state.fs, w + "fs", np.float64, (L.N_FSTATE,), finite=True)
    sums = (fs[L.F_SUM], fs[L.F_WORK], fs[L.F_SIGMA_W], fs[L.F_SLACK], fs[L.F_SLACK_WORK])
    if not (fs[L.F_S] > 0 and min(sums) >= 0):
        check.fail(w + "fs", "holds a scale, norm or count that is not positive")
    # the horizon's weights (marginkit._core.linear; a horizon of 0: none)
    horizon = fs[L.F_HORIZON] if fs[L.F_HORIZON] != 0 else None
    if not L.weights_follow(horizon, fs[L.F_GROWTH], fs[L.F_STEP], fs[L.F_MASS]):
        check.fail(w + "fs", "holds a horizon whose trial weights do not follow from it")
    # the slack coordinates of a fit's rows (a checkpoint mid-fit); a pass takes
    # them only when they number its rows (OnlineLinearClassifier._run)
    check.array(state.slack, w + "slack", np.float64, (None,), finite=True)
    ist = check.array(state.ist, w + "ist", np.int64, (L.N_ISTATE,))
    K = check.integer(ist[L.I_NHIST], w + "ist (corrections)", 0)
    if ist[L.I_LOG]:
        check.equal(int(ist[L.I_K]), w + "ist (k: corrections + 1)", K + 1)
    else:
        # a mixed state (:meth:`from_sums`) restarts k from the shards' mean, below the
        # corrections made on every shard; k is a count, not an index
        check.integer(ist[L.I_K], w + "ist (k)", 1, K + 1)
    trials = check.integer(ist[L.I_TRIALS], w + "ist (trials)", K)
    check.integer(ist[L.I_BUDGET], w + "ist (budget flag)", 0, 1)
    logs = check.integer(ist[L.I_LOG], w + "ist (log flag)", 0, 1)
    # the log: the arrays per correction of one length, with room for the K logged
    # (none without a log), h_count one longer
    n = state.h_coef.shape[0] if logs and isinstance(state.h_coef, np.ndarray) else 0
    if logs and n < K:
        check.fail(w + "h_coef", f"must hold the {K} corrections logged, holds {n}")
    for name in ("h_start", "h_stop"):
        check.array(getattr(state, name), w + name, np.int64, (n,))
    for name in ("h_coef", "h_rescale", *state.PER_CORRECTION):
        check.array(getattr(state, name), w + name, np.float64, (n,), finite=True)
    counts = check.array(
        state.h_count, w + "h_count", np.int64, (n + 1 if logs else 0,), within=(0, 2**62)
    )
    if logs and int(counts.sum()) != trials:
        check.fail(w + "h_count", f"must add up to the {trials} trials, not {counts.sum()}")
    # the blocks of logged instances
    blocks = [state.b_indices, state.b_data, state.b_first]
    if any(type(b) is not list for b in blocks) or len({len(b) for b in blocks}) != 1:
        check.fail(w + "b_indices", "b_data and b_first must be lists of one length")
    if not state.b_first or (not logs and len(state.b_first) != 1):
        check.fail(w + "b_first", "must list one block, or more with a log")
    lengths = []
    for b, (indices, data) in enumerate(zip(state.b_indices, state.b_data, strict=True)):
        at = f"[{b}]"
        size = None if logs else 0
        check.array(indices, w + "b_indices" + at, np.int32, (size,), within=(0, d))
        check.array(data, w + "b_data" + at, np.float64, indices.shape, finite=True)
        lengths.append(indices.shape[0])
    first = [check.integer(f, w + "b_first", 0, K) for f in state.b_first]
    if first[0] != 0 or any(a > b for a, b in zip(first, first[1:], strict=False)):
        check.fail(w + "b_first", f"must rise from 0, got {first[:8]}")
    check.integer(ist[L.I_HNNZ], w + "ist (log fill)", 0, lengths[-1])
    if logs and K:
        block = np.searchsorted(first, np.arange(K), side="right") - 1
        start, stop = state.h_start[:K], state.h_stop[:K]
        bad = (start < 0) | (start > stop) | (stop > np.asarray(lengths)[block])
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            check.fail(
                w + "h_start",
                f"and h_stop must span their block: correction {k} spans "
                f"{start[k]}:{stop[k]} of a block of {lengths[block[k]]}",
            )


@checks_state_of(PUMMAState)
def check_pumma_state(state, where, d, p):
    """:func:`~marginkit._state_checks.check_pnorm_state`, and PUMMA's own: the stored
    x+ and x- (``pos_idx[:pi[Q_POS_NNZ]]`` index the weights), the rows that hold them
    (``pi[Q_POS_ROW]`` indexes the data's slack coordinates: checked against the data
    where a fit resumes, :func:`check_pumma_rows`), the scalar states ``pf`` and
    ``pi``."""
    check_pnorm_state(state, where, d, p)
    w = f"{where}."
    pf = check.array(state.pf, w + "pf", np.float64, (K.N_PSTATE,), finite=True)
    if not (pf[K.P_W_POS] > 0 and pf[K.P_W_NEG] > 0):
        check.fail(w + "pf", "must hold the weights of x+ and x-, > 0")
    pi = check.array(state.pi, w + "pi", np.int64, (K.N_QSTATE,))
    check.integer(pi[K.Q_POS_NNZ], w + "pi (nonzeros of x+)", 0, d)
    check.integer(pi[K.Q_NEG_NNZ], w + "pi (nonzeros of x-)", 0, d)
    check.integer(pi[K.Q_POS_ROW], w + "pi (row of x+)", -1)
    check.integer(pi[K.Q_NEG_ROW], w + "pi (row of x-)", -1)
    check.integer(pi[K.Q_SEEN], w + "pi (classes seen)", 0, 3)
    check.integer(pi[K.Q_CONFLICTS], w + "pi (conflicts)", 0)
    for name in ("pos_idx", "neg_idx"):
        check.array(getattr(state, name), w + name, np.int64, (d,), within=(0, d))
    for name in ("pos_val", "neg_val"):
        check.array(getattr(state, name), w + name, np.float64, (d,), finite=True)
    check.array(state.newton_count, w + "newton_count", np.int64, (1,), within=(0, 2**62))


def check_pumma_rows(state, where, n):
    """The rows of x+ and x- are rows of the ``n`` the fit resumes on."""
    check.integer(state.pi[K.Q_POS_ROW], f"{where}.pi (row of x+)", -1, n - 1)
    check.integer(state.pi[K.Q_NEG_ROW], f"{where}.pi (row of x-)", -1, n - 1)
