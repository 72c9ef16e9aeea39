"""A support-vector budget for the kernel engine (:mod:`marginkit._core.kernel`).

A budgeted store holds at most ``size`` support vectors, shared by every one-vs-rest
problem. When a correction fills it, one maintenance step brings it down to
``size - step`` vectors, by one of six rules (below).

Until the store is first full, a budget changes nothing: the store is the exact
engine's, an example corrected again in a later pass an entry on the row it has (not a
row), the margin sums kept across passes kept, and only the rows held count against
the budget; a budget above the rows a run stores leaves it the exact run, bit for bit
and at its cost. From the first maintenance step on, the entries count (a row, or a
later correction of one: each step sums an example's entries into one vector first),
as the slow reference of the tests counts them
(:meth:`marginkit._core.kernel.state.KernelState.filling`). Before, the entries counted from
the start, so that a fit of several passes whose rows stayed under the budget while its
entries reached it made maintenance steps it did not need: each summed the entries
(the exact model to rounding), dropped the margin sums kept across passes (their
kernel rows made again), and, with more than ``size - step`` rows held, projected
vectors away (on 1 000 rows of ``make_classification``, 521 rows and 1 144 entries,
budget 530: 4 times the exact fit's time, and another model).

``"project"``
    The vectors that carry least of the hypotheses are removed, and what they carried
    is projected onto the span of the vectors kept, in the kernel's feature space (the
    projection step of Orabona, Keshet and Caputo's Projectron, JMLR 2009, and of Wang
    and Vucetic's budgeted passive-aggressive learning, AISTATS 2010, done for ``step``
    vectors at once). With ``K`` the Gram matrix of the store and ``R`` the vectors
    removed, ``S`` those kept, the coefficients of ``S`` gain
    ``K_SS^-1 K_SR a_R`` (Kinv: the inverse of ``K + eps I``, whose blocks give
    ``K_SS^-1 K_SR = -Kinv_SR Kinv_RR^-1``). A vector's loss, alone, is
    ``||a_j||^2 / Kinv_jj`` (the squared distance of ``phi(x_j)`` from the span of the
    others, times its squared coefficients); the ``step`` vectors of least loss go.
    The inverse is carried from one step to the next: the vectors kept inherit the
    Schur complement of their block, and those stored since are bordered in, so that a
    step costs ``O(size^2 (step + d'))`` (``d'``: the kernel rows of the new vectors'
    features) rather than a factorisation's ``O(size^3)``; every
    :data:`REFRESH_EVERY` steps, or where an update would fail, the Gram matrix is
    computed and factorised anew. ``eps`` is the one of that factorisation (a normalised
    kernel's is fixed: its diagonal is 1). On 100 000 noisy rows at budget 1000
    (2-core AMD EPYC, one BLAS thread, the second core busy) the fit took 8.5 s against
    18.0 s with a factorisation at every step, at the same 6.73% averaged test error
    (4.7 s once the kept block was copied by ``take``). The steps still cost
    ``O(size^2)`` per correction (a step of ``size / 20`` vectors every ``size / 20``
    corrections, at ``O(size^2 x step)``), most of such a fit's time.

``"project_new"``
    The projection of the vectors stored last: the store keeps the first
    ``size - step`` vectors it stored, and each step projects the vectors stored
    since onto them (``K_SS^-1 K_SR a_R`` as above, with ``R`` the newest). Once the
    store is full this is Orabona, Keshet and Caputo's Projectron with no insertion
    (every correction projected onto a fixed set), except that the ``step`` latest
    corrections of the stream act exactly until the next step projects them. The
    vectors kept never change, so the inverse of their Gram matrix is computed once and
    kept (from one call of ``partial_fit`` to the next as well), and a step costs
    ``O(size^2 C + size step d')`` (``C``: the problems), against ``"project"``'s
    ``O(size^2 step)``. The vectors it keeps are the first corrections of the stream,
    a sample of them, where ``"project"`` keeps those of most loss. On 400 000 noisy
    rows (benchmarks/bench_budget.py's synthetic stream) at budget 1000 its averaged
    test error measured 6.2% against ``"project"``'s 6.8%, in a fifth of the time
    (docs/budget.md); why the sample does better than the choice by loss there is not
    established. The first vectors are kept for ever: on a stream whose concept changes
    half-way, ``"project"``, whose store follows the stream, measured 0.3 to 0.8 points
    better, and ``"project_old"`` 17 points better averaged (8.34% against 26.48%).
    So with a horizon (a model for a stream that changes) the kept vectors renew: a
    step whose projection would lose more than half of what the vectors projected
    carry of the last hypotheses (:data:`RENEW_LOSS`: the kept vectors no longer span
    the stream's) projects the oldest vectors onto the rest instead, as
    ``"project_old"`` does, and the next step keeps the first vectors of the store as
    it then is, with the inverse that step left (carried, as ``"project"`` carries
    its own: a model saved and loaded right after a renewal makes the inverse anew,
    which may differ in its rounding). Without a horizon, the rule is as above. It is
    the estimators' default rule.

``"project_old"``
    The projection of the vectors stored first: the store keeps the ``size - step``
    vectors it stored last, and each step projects the ``step`` oldest onto them
    (``K_SS^-1 K_SR a_R`` as above, with ``R`` the oldest), with the inverse carried
    from step to step as ``"project"`` carries it. The store is a window over the
    stream's latest corrections, as the Forgetron's (Dekel, Shalev-Shwartz and Singer,
    SIAM J. Comput. 2008), which removes the oldest vector; what the old vectors
    carried is projected onto the new rather than dropped. For a stream that changes:
    the vectors kept follow it, where ``"project_new"``'s never change.

``"remove_oldest"``
    The ``step`` vectors stored first are removed, and what they carried with them:
    the Forgetron's removal (Dekel, Shalev-Shwartz and Singer, SIAM J. Comput. 2008),
    without its shrinking of the coefficients, and the store a window over the
    stream's latest corrections, as ``"project_old"``'s. On a stream that changes, what
    the old concept's vectors carried leaves with them instead of staying in the
    vectors kept.

``"remove_random"``
    ``step`` vectors drawn uniformly at random are removed: the Randomized Budget
    Perceptron of Cavallanti, Cesa-Bianchi and Gentile (Machine Learning 69, 2007),
    whose shifting bound is close to that of the Perceptron without a budget, so that
    it follows a target that changes. The draws come from a seed taken from the
    estimator's ``random_state`` when the model is made and the count of vectors
    removed so far (``state.removal_seed``, ``state.n_removed``, saved with the model):
    the same stream gives the same model however it is cut, saved or resumed.

    Both removals cost one Gram matrix of the store per step (``O(size^2 d)``, for the
    norms of the hypotheses left), and no inverse.

``"merge"``
    For the Gaussian kernel ``exp(-gamma ||x - y||^2)`` only: each of the ``step``
    vectors of least weight is merged with the partner that loses least, into
    ``z = h x_j + (1 - h) x_n`` with coefficients ``a_j k(x_j, z) + a_n k(x_n, z)``
    (``k(x_j, z) = k(x_j, x_n)^((1 - h)^2)``, ``k(x_n, z) = k(x_j, x_n)^(h^2)``), ``h`` in
    [0, 1] maximising the merged vector's weight by golden-section search: the merge of
    Wang, Crammer and Vucetic's budgeted stochastic gradient descent (BSGD, JMLR 13,
    2012, section 4.3), with coefficient vectors of every problem. It costs
    ``O(step size d)``: the kernel rows of the vectors merged. A vector whose kernel
    values with every other are 0 has no merge that keeps anything of it: what no
    merge could take is projected.

Every output lives on the one store. The rules are linear maps of the coefficients,
applied alike to those of the last hypothesis and of the average (whose running sums
are closed first: :meth:`marginkit._core.kernel.state.VectorStore.flush`); the weight that picks
the vectors and ``h`` adds the two hypotheses' shares, each over its squared norm, so
that neither is sacrificed to the other. The voted output needs every past hypothesis,
which no budget keeps: a budgeted model does not offer it.

The average under merging. A merge keeps of two vectors only their part along the
merged one, and the averaged hypothesis, which sums every hypothesis since the start,
takes every merge's loss and keeps it: the last hypothesis is rebuilt by the
corrections, the average's old sums are merged again and again. On a stream of
``make_classification(20 features, 10 informative, flip_y=0.05)`` rows (rbf,
``gamma=0.05``, budget 500, kernel ALMA, ``partial_fit`` in chunks of 10 000) the
averaged output's test accuracy fell from 0.926 after 30 000 rows to 0.890 after
150 000, the last hypothesis's staying at 0.92 to 0.93. So before each merge step the
average's sums, and the trials' total weight that divides them, are multiplied by
``1 - step / size`` (0.95 at the default step): the average weighs the hypotheses of
about the last ``size / step`` steps, the span in which the store's vectors were made,
with geometric weights, and a merge's loss fades from it as from the last hypothesis.
On the same stream it then measured 0.937 after 30 000 rows and 0.935 after 300 000
(the last hypothesis 0.928 to 0.936; factors 0.9 and 0.8 gave 0.927 to 0.931 and
0.925 to 0.931 over 150 000 rows, 0.99 0.919 to 0.925). The projection rules keep
the average's sums as they are.

After a step the squared norm of each problem's hypothesis is computed anew from the
Gram matrix (the walks read it), and the hypotheses are left as the step made them.
Scaling ALMA's back to the norm it had before (a projection only lowers it) measured
worse: on 100 000 noisy rows (benchmarks/bench_budget.py's stream, budget 1000,
project) 7.08% averaged test error against 6.73% left as they are.

No well-kept library maintains a support-vector budget for an online kernel learner
on a shared one-vs-rest store (BudgetedSVM, JSAT and DOGMA are C++, Java and Matlab
programs of their own algorithms), hence this module.
"""

import functools
from collections import namedtuple

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

from .arrays import to_numpy

#: A budget: at most ``size`` stored vectors; a maintenance step brings a full store
#: to ``size - step`` by ``rule`` (one of :data:`RULES`).
Budget = namedtuple("Budget", ["size", "rule", "step"])

RULES = ("project", "project_new", "project_old", "merge", "remove_oldest", "remove_random")
#: The rules that remove vectors without projecting what they carried
REMOVALS = ("remove_oldest", "remove_random")
#: Why a budgeted model has no voted output (fit and predict refuse it alike).
NO_VOTE = (
    "output='voted' is not offered with a budget: the vote needs every hypothesis of the "
    "run, which a budgeted store does not keep. Use output='avg' or 'last', or budget=None."
)
#: The ridge ``eps`` added to the Gram matrix's diagonal before it is inverted, times
#: its mean diagonal (the normalised kernels': 1): a store can hold one example twice
#: (corrected in two epochs), and its Gram matrix is then singular.
RIDGE = 1e-8
#: The golden-section iterations of a merge's ``h`` (its interval shrinks 0.618 times
#: per iteration: to 3e-13 after 60).
GOLDEN_ITERATIONS = 60


def default_step(size):
    """The vectors one maintenance step removes: a twentieth of the budget, at least
    one."""
    return max(1, int(size) // 20)


def weights(state, K):
    """(m, 2C) the coefficients of the last and averaged hypotheses, each problem's
    divided by that hypothesis's norm (0 where the norm is 0), from the store's Gram
    matrix K (the running sums of the average closed: ``state.T`` is 0)."""
    m = state.m
    last = state.A[:m] * state.s[None, :]
    avg = state.acc[:m]
    both = np.hstack([last, avg])
    norms = np.sqrt(np.maximum(squared_norms(both, K), 0.0))
    return both / np.where(norms > 0, norms, 1.0)[None, :]


def squared_norms(A, K):
    """``A[:, c] . K A[:, c]`` of every column c: the squared norms of the hypotheses of
    coefficients A over vectors of Gram matrix K."""
    return np.einsum("jc,jc->c", A, K @ A)


def gram(state, backend, lo=0, hi=None):
    """The normalised kernel matrix of the stored vectors, on the host (m x m); with
    ``lo``, its rows lo..m-1 only ((m - lo) x m); with ``hi``, that of the first ``hi``
    vectors only (rows lo..hi-1, columns 0..hi-1), made from them alone."""
    m = state.m if hi is None else hi
    store = state.store
    inv, sq = store.norms(lo, m)
    block = (store.view(lo, m), inv, sq if state.kernel.needs_norms else None)
    K = backend.host(state.block_rows(block, 0, m, backend))
    K = np.array(K, dtype=np.float64)
    state.n_kernel_evals += (m - lo) * m
    if lo == 0:
        return (K + K.T) / 2.0  # symmetric to the last bit, whatever the product's order
    K[:, lo:] = (K[:, lo:] + K[:, lo:].T) / 2.0
    return K


#: What a projection step leaves for the next (``state._inverse``, not saved): the Gram
#: matrix ``K`` of the first rows of the store, the inverse ``Kinv`` of ``K + eps I``,
#: and the steps since ``Kinv`` was last factorised anew (``age``).
#: ``rows``: the norms of the rows it is of (``fingerprint``, taken by the step that
#: leaves it: None before), ``residual``: how far from the identity the last
#: factorisation's product with ``K + eps I`` was.
Inverse = namedtuple("Inverse", ["K", "Kinv", "eps", "age", "rows", "residual"])
#: A projection step factorises the Gram matrix anew once the inverse it inherits has
#: been updated this many times (the updates' rounding adds up), or where an update
#: fails; between, the inverse of the vectors kept is the inverse's Schur complement
#: and the vectors added since are bordered in, ``O(size^2 x step)`` a step instead of
#: ``O(size^3)``.
REFRESH_EVERY = 8
#: An updated inverse whose product with ``K + eps I`` is further from the identity
#: (on a few of its columns) than this, or than 100 times the last factorisation's,
#: is factorised anew: near-duplicate vectors make the Gram matrix nearly singular,
#: where the updates lose what a factorisation keeps.
RESIDUAL = 1e-6


def fingerprint(state, r):
    """The norms of the store's first ``r`` rows, on the host: what tells the rows a
    carried inverse is of from others."""
    inv, sq = state.store.norms(0, r)
    return np.concatenate([to_numpy(inv, np.float64), to_numpy(sq, np.float64)])


def residual(K, Kinv, eps):
    """``max |(K + eps I) Kinv - I|`` on a few columns (spread over the store)."""
    m = K.shape[0]
    cols = np.unique(np.linspace(0, m - 1, num=min(m, 4)).astype(np.int64))
    R = K @ Kinv[:, cols] + eps * Kinv[:, cols]
    R[cols, np.arange(cols.size)] -= 1.0
    return float(np.abs(R).max())


def factorised(state, backend, K=None):
    """The store's :data:`Inverse`, factorised anew (from its Gram matrix K, where
    given)."""
    K = gram(state, backend) if K is None else K
    Kinv, eps = ridge_inverse(K)
    return Inverse(K, Kinv, eps, 0, None, residual(K, Kinv, eps))


#: Stores below this many vectors are factorised on one BLAS thread: LAPACK's
#: factorisation synchronises its threads often, and on a machine whose cores are
#: busy each synchronisation waits (2-core AMD EPYC, another process on the second
#: core: 200 x 200 in 1.4 ms on one thread, 600 ms on two; 1000 x 1000 in 70 ms
#: against 3.6 s), where a quiet machine gains less than twice from its threads.
ONE_THREAD_BELOW = 2048


@functools.cache
def _blas():
    return ThreadpoolController()


def _small_on_one_thread(fn):
    @functools.wraps(fn)
    def run(K, *args):
        if K.shape[0] < ONE_THREAD_BELOW:
            with _blas().limit(limits=1, user_api="blas"):
                return fn(K, *args)
        return fn(K, *args)

    return run


@_small_on_one_thread
def ridge_inverse(K):
    """``(Kinv, eps)``: the inverse of ``K + eps I`` (``eps``: :data:`RIDGE` times the
    mean diagonal, ten times more until Cholesky's factorisation succeeds)."""
    m = K.shape[0]
    eps = RIDGE * max(float(np.mean(np.diag(K))), np.finfo(float).tiny)
    for _ in range(12):
        L, info = sl.lapack.dpotrf(K + eps * np.eye(m), lower=1)
        if info == 0:
            inv, info = sl.lapack.dpotri(L, lower=1, overwrite_c=1)
            if info == 0:
                return _symmetric(inv), eps
        eps *= 10.0
    raise np.linalg.LinAlgError("the Gram matrix of the support vectors is not positive")


def _symmetric(lower):
    """The symmetric matrix whose lower triangle ``lower`` holds (in place)."""
    upper = np.triu_indices(lower.shape[0], 1)
    lower[upper] = lower.T[upper]
    return lower


@_small_on_one_thread
def bordered(K, old):
    """The inverse of ``K + eps I`` from ``old`` (:data:`Inverse`), that of its leading
    block: the rows added since are bordered in through the Schur complement
    ``S = K_NN + eps I - K_NO Kinv K_ON``. None where ``S`` is not positive (the
    caller factorises anew)."""
    r, eps = old.K.shape[0], old.eps
    B = K[:r, r:]
    AB = old.Kinv @ B
    schur = K[r:, r:] - B.T @ AB
    schur[np.diag_indices_from(schur)] += eps
    L, info = sl.lapack.dpotrf((schur + schur.T) / 2.0, lower=1)
    if info != 0:
        return None
    S_inv, info = sl.lapack.dpotri(L, lower=1, overwrite_c=1)
    if info != 0:
        return None
    S_inv = _symmetric(S_inv)
    off = -AB @ S_inv
    Kinv = np.empty_like(K)
    Kinv[:r, :r] = old.Kinv - off @ AB.T
    Kinv[:r, r:] = off
    Kinv[r:, :r] = off.T
    Kinv[r:, r:] = S_inv
    return Kinv


def store_inverse(state, backend):
    """``(K, Kinv, eps, age)`` of the store (:data:`Inverse`): from the one the last
    projection step left, the rows stored since bordered in (:func:`bordered`), or
    factorised anew (every :data:`REFRESH_EVERY` steps, after a merge, or where the
    update fails)."""
    old = state.__dict__.get("_inverse")
    m = state.m
    r = 0 if old is None else old.K.shape[0]
    if old is not None and old.age < REFRESH_EVERY and r <= m:
        if np.array_equal(old.rows, fingerprint(state, r)):
            K = np.empty((m, m))
            K[:r, :r] = old.K
            if m > r:
                rows = gram(state, backend, r)
                K[r:, :] = rows
                K[:r, r:] = rows[:, :r].T
                Kinv = bordered(K, old)
            else:
                Kinv = old.Kinv
            if Kinv is not None:
                drift = residual(K, Kinv, old.eps)
                if drift <= max(RESIDUAL, 100.0 * old.residual):
                    return Inverse(K, Kinv, old.eps, old.age + 1, None, old.residual)
    return factorised(state, backend)


def maintain(state, budget, backend):
    """Bring a full store (``state.full(budget.size)``) to ``budget.size - budget.step``
    vectors by ``budget.rule``; every problem's averaging sums closed first, its
    squared norm computed anew after. From the first step on, the store's entries count
    against the budget (:meth:`marginkit._core.kernel.state.KernelState.filling`)."""
    state.filled = True
    for c in range(state.n_problems):
        state.flush(c)
    # the entries of examples corrected in several epochs summed: one per vector
    state.collapse()
    target = budget.size - budget.step
    if state.m <= target:
        state.mask[: state.m] = (state.A[: state.m] != 0) | (state.acc[: state.m] != 0)
        return
    inverse = None
    if budget.rule != "project_new":
        state.__dict__.pop("_kept_inverse", None)  # the first vectors may change
    if budget.rule == "merge":
        state.__dict__.pop("_inverse", None)  # the rows change: no inverse carries over
        decay_average(state, budget)
        K = merge(state, gram(state, backend), state.m - target, backend)
        if state.m > target:
            inverse = factorised(state, backend, K)
    elif budget.rule == "project_new":
        K = project_new(state, target, backend, renews=state.horizon is not None)
        if K is None:
            # the kept vectors no longer span the stream's: this step renews them
            state.__dict__.pop("_kept_inverse", None)
            inverse = store_inverse(state, backend)
            K = inverse.K
    elif budget.rule in REMOVALS:
        state.__dict__.pop("_inverse", None)  # the rows change: no inverse carries over
        K = remove(state, removed(state, budget.rule, state.m - target), backend)
    else:
        inverse = store_inverse(state, backend)
        K = inverse.K
    if state.m > target:
        # the projection, or what no merge could take (vectors whose kernel values
        # with every other are 0: no vector between two of them keeps anything)
        oldest = budget.rule in ("project_old", "project_new")
        K = project(state, inverse, state.m - target, oldest=oldest)
        if budget.rule == "project_new":
            # a renewal: the inverse it leaves is that of the next kept vectors
            state._kept_inverse = state._inverse
    # the walks' ||w||^2 (A and the Gram matrix give ||w||^2 / s^2); the soft margin's
    # coordinates of the rows (kernel ROMMA's, in a fit) are dropped with it: the
    # hypothesis goes on from the part the store holds
    state.norm2[:] = state.s**2 * np.maximum(squared_norms(state.A[: state.m], K), 0.0)
    state.slack[:] = 0.0
    state.mask[: state.m] = (state.A[: state.m] != 0) | (state.acc[: state.m] != 0)
    state.n_last = 0
    state.coefficients_changed()


def decay_average(state, budget):
    """The averaged hypothesis's sums (closed) and the trials' total weight times
    ``1 - step / size``, before a merge step (the module's docstring, "The average
    under merging")."""
    state.decay_sums(1.0 - budget.step / budget.size)


def removed(state, rule, r):
    """The ``r`` vectors a removal rule takes out of the store (rising): the ``r``
    stored first, or ``r`` drawn at random from the seed and count of the state (module
    docstring)."""
    if rule == "remove_oldest":
        return np.arange(r)
    rng = np.random.default_rng([state.removal_seed, state.n_removed])
    state.n_removed += r
    return np.sort(rng.choice(state.m, size=r, replace=False))


def remove(state, R, backend):
    """Drop the vectors ``R`` with their coefficients of the last and averaged
    hypotheses; returns the Gram matrix of the vectors kept."""
    keep_rows(state, np.setdiff1d(np.arange(state.m), R))
    return gram(state, backend)


def project(state, inverse, r, oldest=False):
    """Remove the ``r`` vectors of least loss (with ``oldest``: the ``r`` stored first),
    their coefficients projected onto the rest (module docstring), from the store's
    :data:`Inverse`; returns the Gram matrix of the vectors kept, and leaves their
    inverse (the Schur complement of the kept block) to the next step."""
    m = state.m
    K, Kinv = inverse.K, inverse.Kinv
    if oldest:
        R = np.arange(r)
    else:
        U = weights(state, K)
        loss = np.einsum("jc,jc->j", U, U) / np.diag(Kinv)
        # the r of least loss; ties by position, the older first kept
        order = np.lexsort((-np.arange(m), loss))
        R = np.sort(order[:r])
    S = np.setdiff1d(np.arange(m), R)
    # K_SS^-1 K_SR = -Kinv_SR Kinv_RR^-1
    coef = np.hstack([state.A[R], state.acc[R]])
    K_SR = Kinv[np.ix_(S, R)]
    # one solve for the coefficients and the inverse of the rows kept:
    # (K_SS + eps I)^-1 = Kinv_SS - Kinv_SR Kinv_RR^-1 Kinv_RS
    both = np.linalg.solve(Kinv[np.ix_(R, R)], np.hstack([coef, K_SR.T]))
    moved = -K_SR @ both[:, : coef.shape[1]]
    C = state.n_problems
    state.A[S] += moved[:, :C]
    state.acc[S] += moved[:, C:]
    keep_rows(state, S)
    # (two takes copy a block of a matrix several times faster than np.ix_'s gather)
    kept = Kinv.take(S, axis=0).take(S, axis=1)
    kept -= K_SR @ both[:, coef.shape[1] :]
    K_S = K.take(S, axis=0).take(S, axis=1)
    kept += kept.T  # (numpy copies the transpose it reads while it writes)
    kept *= 0.5
    state._inverse = inverse._replace(K=K_S, Kinv=kept, rows=fingerprint(state, len(S)))
    return K_S


def project_new(state, target, backend, renews=False):
    """Project the vectors stored after the first ``target`` onto those (module
    docstring), and cut the store to them; returns their Gram matrix. With ``renews``
    (a model with a horizon), where the projection would lose more than
    :data:`RENEW_LOSS` of what the vectors projected carry of the last hypotheses, the
    store is left as it is and None returned: the kept vectors are renewed instead
    (:func:`maintain` projects the oldest onto the rest, as ``"project_old"``).

    The first ``target`` vectors never change under this rule, so the inverse of their
    Gram matrix is kept (``state._kept_inverse``, :data:`Inverse`) from step to step
    and from one call to the next; it is made from those vectors alone, so that one
    made anew (a model loaded, a fit resumed from a checkpoint: it is not saved) is
    the same to the bit. Any other rule's step drops it (:func:`maintain`)."""
    kept = state.__dict__.get("_kept_inverse")
    if (
        kept is None
        or kept.K.shape[0] != target
        or not np.array_equal(kept.rows, fingerprint(state, target))
    ):
        K = gram(state, backend, hi=target)
        Kinv, eps = ridge_inverse(K)
        kept = Inverse(K, Kinv, eps, 0, fingerprint(state, target), residual(K, Kinv, eps))
        state._kept_inverse = kept
    m = state.m
    rows = gram(state, backend, target)
    K_RS = rows[:, :target]
    coef = np.hstack([state.A[target:m], state.acc[target:m]])
    b = K_RS.T @ coef
    moved = kept.Kinv @ b
    C = state.n_problems
    if renews and lost(coef[:, :C], rows[:, target:], b[:, :C], moved[:, :C]):
        return None
    state.A[:target] += moved[:, :C]
    state.acc[:target] += moved[:, C:]
    keep_rows(state, np.arange(target))
    return kept.K


#: With a horizon, ``"project_new"`` renews its kept vectors at a step whose projection
#: would lose more than this fraction of what the vectors projected carry (the squared
#: norm of their part of the last hypotheses, summed over the problems)
RENEW_LOSS = 0.5


def lost(a, K_RR, b, moved):
    """Whether projecting the vectors of coefficients ``a`` (r x C; Gram matrix
    ``K_RR``) onto the kept ones loses more than :data:`RENEW_LOSS` of their squared
    norm: ``b = K_SR a`` and ``moved = K_SS^-1 b`` give the part kept, ``b . moved``."""
    whole = float(np.einsum("jc,jc->", a, K_RR @ a))
    kept = float(np.einsum("jc,jc->", b, moved))
    return whole > 0.0 and whole - kept > RENEW_LOSS * whole


def merge(state, K, r, backend):
    """Merge up to ``r`` vectors of least weight, each with its best partner (module
    docstring; fewer where no partner has a kernel value above 0); returns the Gram
    matrix of the new store."""
    m = state.m
    U = weights(state, K)
    weight = np.einsum("jc,jc->j", U, U)
    free = np.ones(m, dtype=bool)
    gone, merged = [], []
    for j in np.lexsort((-np.arange(m), weight)):
        if len(merged) == r:
            break
        if not free[j]:
            continue
        free[j] = False
        k = K[j]
        cand = np.flatnonzero(free & (k > 0))
        if cand.size == 0:
            free[j] = True
            continue
        h, loss = best_h(U[j], U[cand], k[cand])
        best = int(np.argmin(loss))
        n = int(cand[best])
        free[n] = False
        gone += [j, n]
        merged.append((j, n, float(h[best]), k[n]))
    if not merged:
        return K
    S = np.setdiff1d(np.arange(m), np.asarray(gone, dtype=np.int64))
    add_merged(state, merged, S, backend)
    return gram(state, backend)


def best_h(u, V, k):
    """For one vector's weights ``u`` (2C) and candidates ``V`` (n, 2C) at kernel values
    ``k`` (n): the ``h`` of each merge and the weight it loses, ``||u||^2 + ||v||^2 +
    2 k u . v - ||u k^((1-h)^2) + v k^(h^2)||^2``."""
    uu = u @ u
    vv = np.einsum("nc,nc->n", V, V)
    uv = V @ u
    logk = np.log(k)

    def kept(h):
        a, b = np.exp(logk * (1 - h) ** 2), np.exp(logk * h * h)
        return a * a * uu + 2 * a * b * uv + b * b * vv

    g = (np.sqrt(5.0) - 1.0) / 2.0
    lo, hi = np.zeros_like(k), np.ones_like(k)
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = kept(x1), kept(x2)
    for _ in range(GOLDEN_ITERATIONS):
        left = f1 >= f2  # the maximum is in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x2n = np.where(left, x1, lo + g * (hi - lo))
        x1n = np.where(left, hi - g * (hi - lo), x2)
        x1, x2 = x1n, x2n
        f1 = kept(x1)
        f2 = kept(x2)
    h = (lo + hi) / 2.0
    return h, uu + vv + 2.0 * k * uv - kept(h)


def add_merged(state, merged, S, backend):
    """The store cut to rows ``S``, then the merged vectors appended: for each
    ``(j, n, h, k)``, ``z = h x_j + (1 - h) x_n`` with every coefficient array combined
    at ``k^((1-h)^2)`` and ``k^(h^2)``; ``z`` takes the position and class of the one
    of more weight."""
    m = state.m
    store = state.store
    rows = [(j, n, h, k ** ((1 - h) ** 2), k ** (h * h)) for j, n, h, k in merged]
    X = store.view(0, m)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        Z = sp.vstack([h * X[j] + (1 - h) * X[n] for j, n, h, _, _ in rows]).tocsr()
        Z.sort_indices()
    else:
        j_idx = backend.index(np.array([r[0] for r in rows]))
        n_idx = backend.index(np.array([r[1] for r in rows]))
        hs = backend.asarray(np.array([r[2] for r in rows]))[:, None]
        Z = hs * backend.take(X, j_idx) + (1 - hs) * backend.take(X, n_idx)
    coef = {}
    for name in ("A", "acc"):
        arr = getattr(state, name)
        coef[name] = np.array([a * arr[j] + b * arr[n] for j, n, _, a, b in rows])
    heavier = [j if abs(state.A[j]).sum() >= abs(state.A[n]).sum() else n for j, n, *_ in rows]
    index, label = state.index[heavier].copy(), state.label[heavier].copy()
    keep_rows(state, S)
    m0 = state.m
    k = len(rows)
    sq = backend.squared_norms(Z) if state.kernel.needs_norms else None
    state.store.append(Z, backend.asarray(np.ones(k)), sq)  # K(z, z) = 1: inv 1
    for name in state.PER_VECTOR:
        arr = getattr(state, name)
        if arr is not None:
            arr[m0 : m0 + k] = 0
    state.A[m0 : m0 + k] = coef["A"]
    state.acc[m0 : m0 + k] = coef["acc"]
    state.index[m0 : m0 + k] = index
    state.label[m0 : m0 + k] = label


def keep_rows(state, S):
    """Cut the store and every array per vector to the rows ``S`` (rising), in order."""
    k = S.shape[0]
    for name in state.PER_VECTOR:
        arr = getattr(state, name)
        if arr is not None:
            arr[:k] = arr[S]
            arr[k:] = 0
    state.store.keep(S)
