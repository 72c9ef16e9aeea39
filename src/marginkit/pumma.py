"""PUMMA: online approximate maximum p-norm margin classification with a bias."""

from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _checks as check
from ._base import not_for_voted
from ._checkpoints import check_epoch_loop, check_fingerprint
from ._core import linear as L
from ._core import pumma as K
from ._core.pairs import PairState, train_pairs
from ._core.pumma import PUMMAState
from ._docstrings import HORIZON_DOC, KEEP_CORRECTIONS_DOC, KERNEL_DOC, SHUFFLE_DOC
from ._kernel_base import KERNEL_CONSTRAINTS, KERNEL_TRAITS, KernelOnlineClassifier, block_size_for
from ._linear_base import (
    LINEAR_CONSTRAINTS,
    LINEAR_TRAITS,
    P_MAX,
    OnlineLinearClassifier,
    check_finite_state,
)
from ._order import rows_by_content
from ._pumma_epochs import PROGRESS_OPTIONAL, PUMMAEpochs
from ._registry import trusted_type
from ._state_checks import check_pairs_rows, check_pumma_rows, check_state
from ._training_rows import TrainingRows
from ._weights import CLASS_WEIGHT_DOC

#: ``tol`` of PUMMA's epochs, which also end when one makes no update
TOL_DOC = """tol : float >= 0 or None, default=1e-3
        :meth:`fit` also stops, before an epoch without update, after an epoch in which
        no one-vs-rest problem's ``||w~||_q^2`` grew by more than ``tol`` times itself
        (the soft margin, ``lam > 0``: the slack coordinates included; every update
        increases it, and it stays below ``1 / gamma~*^2``). With the hard margin, whose
        norm grows without bound on data no hyperplane separates, after an epoch in
        which no problem made fewer updates than in its best earlier epoch by more than
        ``tol * n_samples`` (scikit-learn's rule for its ``Perceptron``). None runs
        until an epoch makes no update, the setting of the margin guarantee (and of the
        COLT 2008 experiments), or ``max_iter`` epochs."""


#: The traits both forms of PUMMA share (:class:`~marginkit._traits.Traits`): a
#: functional margin of 1 (``w . x`` does not change with the scale of x), and epochs
#: of its own, run to one without update (its soft margin makes every data set
#: separable) and ended early by ``tol`` alone
PUMMA_TRAITS = {"weight_degree": -1, "own_epochs": True}


#: The smallest p of PUMMA_p: below it the link's powers |u|^(p - 1) of coordinates that an
#: update makes by cancellation lose every digit (see the ``p`` parameter)
P_MIN = 1.5

#: PUMMA's own parameters, of both forms
PUMMA_CONSTRAINTS = {
    "delta": [Interval(Real, 0, 1, closed="left")],
    "lam": [Interval(Real, 0, None, closed="left")],
}


class PUMMAClassifier(PUMMAEpochs, OnlineLinearClassifier):
    __doc__ = f"""PUMMA_p(delta): an online approximate maximum p-norm margin classifier with bias.

    K. Ishibashi, K. Hatano and M. Takeda, "Online Learning of Approximate Maximum
    p-Norm Margin Classifiers with Bias", COLT 2008. PUMMA learns the bias directly
    instead of through the augmentation ``x -> (x, -R)``, which shrinks the margin and
    slows learning when the best hyperplane is far from the origin. It keeps the last
    positive and negative examples it updated on, x+ and x-; the hyperplane is
    ``w . x + b`` with ``b = -(w . x+ + w . x-) / 2``. On an example with
    ``y (w . x + b) < 1 - delta`` the example replaces x+ or x-, and
    (``z = (x+ - x-) / 2``, ``f`` the gradient of ``||w||_q^2 / 2``, ``1/p + 1/q = 1``)

        w' = argmin ||w'||_q  s.t.  f(w) . w' >= ||w||_q^2  and  z . w' >= 1,

    the first constraint standing for all the earlier ones, as in ROMMA. At p = 2 this
    is ROMMA's closed form on z; for other p the two-variable dual is solved by
    Newton's method, each step costing O(nnz(x+) + nnz(x-)). Before both classes have
    been seen the hyperplane is ``w = 0, b = y``.

    When the data are separable with p-norm margin gamma* (``max_margin`` in
    :mod:`marginkit.margins`), ``||w||_q <= 1 / gamma*`` throughout (the best
    hyperplane, scaled to margin 1, satisfies every relaxed constraint), and every
    update increases ``||w||_q^2`` by at least ``delta^2 / (4 (p - 1) R^2)`` (R the
    largest p-norm of an instance; ``||w||_q^2 / 2`` is ``1 / (p - 1)``-strongly
    convex for p >= 2, and the violated constraint is at distance ``delta / (2 R)``).
    So there are at most ``2 + 4 (p - 1) R^2 / (delta^2 gamma*^2)`` updates, the
    bound the tests check (it follows from the construction; the paper's Theorem 2
    bounds the updates in the same terms), and once an epoch passes without one the
    margin is at least ``(1 - delta) gamma*``.

    Parameters
    ----------
    p : float in [1.5, 150] or "log", default=2.0
        The norm of the instances (the margin is measured in it). ``"log"`` means
        ``max(2, 2 ln n_features)``. Beyond p = 150 the p-th powers of the weights
        leave float64's range (as ALMA's ``p``). Below p = 1.5 the dual exponent
        ``q = p / (p - 1)`` passes 3 and an update's weights ``|theta_i|^(q - 1)`` come
        from differences that float64 cannot resolve: on small blob data, at p = 1.01 to
        1.05 the weights were wrong by 13% to 73% against the same updates in
        high-precision arithmetic (mpmath, up to 240 digits), at p = 1.1 by about 1e-4
        after 84 updates; at p = 1.5 the estimator equals the slow reference to 4e-14.
    delta : float in [0, 1), default=0.1
        Degree of approximation: the final margin is at least ``(1 - delta)`` times the
        best one. The COLT 2008 experiments use 0.1 (artificial data) and 0.01 (real).
    lam : float >= 0, default=1.0
        The 2-norm soft margin: ``x_i . x_j`` becomes ``x_i . x_j + lam [i = j]``, i.e.
        each training example gets a coordinate of its own holding ``sqrt(lam)``. Those
        coordinates are only stored for the examples that become x+ or x-, and take no
        part in prediction. 0 is the hard margin, whose hypothesis grows without bound
        on data that are not separable. With ``lam > 0`` any labelled data are
        separable in the augmented space, so training converges; 1 is the COLT 2008
        real-data setting and the default (docs/defaults.md).
    max_iter : int >= 1, default=1000
        :meth:`fit` passes over the data until an epoch makes no update (or ``tol``
        ends them), or this many. A :class:`~sklearn.exceptions.ConvergenceWarning`
        says when they ran out.
    {TOL_DOC}
    max_epochs : int >= 1
        Deprecated: the former name of ``max_iter``, taken (with a ``FutureWarning``)
        until marginkit 0.3.
    output : {{"last", "avg", "voted"}}, default="avg"
        The final hyperplane, the average ``sum_k c_k (w_k, b_k)`` or the vote
        ``sum_k c_k sign(w_k . x + b_k)`` (``c_k``: trials hypothesis k survived); all
        three come from one run. The margin guarantee is for ``"last"``; the average
        predicts better on data that are not separable (docs/defaults.md).
    {HORIZON_DOC}
    {KEEP_CORRECTIONS_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    verbose : int, default=0
        A progress bar over epochs.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features)
    intercept_ : ndarray of shape (n_problems,)
    n_updates_ : int
        Updates over all binary problems (``n_corrections_`` is the same number).
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_epochs_ : int
        Epochs of :meth:`fit` (and calls of :meth:`partial_fit`). Every one-vs-rest
        problem sees all of them, also after it stopped updating.
    converged_ : bool
        Whether the last epoch made no update in any binary problem.
    n_conflicts_ : int
        Trials skipped because the example equalled the stored example of the other
        class (possible only with ``lam = 0``, on data that no hyperplane separates).
    margin_ : ndarray of shape (n_problems,)
        After :meth:`fit`: the p-norm margin of the last hyperplane on the training
        data, ``min_i y_i (w . x_i + b) / ||w||_q`` (in the soft-margin space when
        ``lam > 0``: each example's own coordinate and the weights' slack coordinates
        included). With convergence it is at least ``(1 - delta)`` times the best.
    n_newton_steps_ : int
        Newton iterations over all updates (0 at p = 2).
    p_ : float
    n_trials_ : int
    n_features_in_ : int

    Examples
    --------
    >>> from marginkit import PUMMAClassifier
    >>> from marginkit.datasets import make_r_of_k
    >>> X, y = make_r_of_k(400, r=1, random_state=0)
    >>> clf = PUMMAClassifier(delta=0.1, tol=None).fit(X, y)  # to an epoch without update
    >>> bool(clf.converged_), clf.score(X, y)
    (True, 1.0)
    """

    _parameter_constraints: dict = {
        "p": [Interval(Real, P_MIN, P_MAX, closed="both"), StrOptions({"log"})],
        **PUMMA_CONSTRAINTS,
        **LINEAR_CONSTRAINTS,
    }
    _parameter_constraints.pop("fit_intercept")  # PUMMA's bias is its own
    _parameter_constraints.pop("intercept_scaling")
    _parameter_constraints.pop("n_iter_no_change")  # its epochs end by tol alone
    # max_iter's former name: max_epochs, not the others' n_epochs
    _parameter_constraints["max_epochs"] = _parameter_constraints.pop("n_epochs")

    # PUMMA's bias is its own; no (x, -R) coordinate
    fit_intercept = False
    # a functional margin of 1: w . x + b does not change with the scale of x
    _traits = replace(LINEAR_TRAITS, state_class=PUMMAState, **PUMMA_TRAITS)

    def __init__(
        self,
        *,
        p=2.0,
        delta=0.1,
        lam=1.0,
        max_iter=1000,
        tol=1e-3,
        output="avg",
        horizon=None,
        keep_corrections=False,
        shuffle=True,
        random_state=None,
        class_weight=None,
        verbose=0,
        max_epochs="deprecated",
    ):
        self.p = p
        self.delta = delta
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.output = output
        self.horizon = horizon
        self.keep_corrections = keep_corrections
        self.shuffle = shuffle
        self.random_state = random_state
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_epochs = max_epochs

    def _resolve_p(self, d):
        if self.p == "log":
            return max(2.0, 2.0 * np.log(d))
        return float(self.p)

    def _initialise(self, data):
        super()._initialise(data)
        d = data.n_features
        horizon = L.horizon_of(self.horizon)
        self._states = [
            PUMMAState(d, self.p_, self._keeps_log, horizon=horizon)
            for _ in range(self._n_problems)
        ]
        self.n_epochs_ = 0
        self.converged_ = False
        self._model_lam()  # a ValueError, before any training, when lam swamps the data

    def _squared_norms(self):
        """``||w~||_q^2`` of every problem, the slack coordinates included: the p-norm
        of theta = s v is its dual, ``(s^p S)^(2 / p)``."""
        fs = [state.fs for state in self._states]
        return np.array([f[L.F_S] ** 2 * f[L.F_SUM] ** (2.0 / self.p_) for f in fs])

    def _run_pumma(self, state, batch, y_pm, order, slack, start=0):
        """One pass over ``order[start:]``; returns the updates and conflicts it made."""
        before = state.n_corrections, int(state.pi[K.Q_CONFLICTS])
        rows = L.rows_of(batch)
        rule = K.PUMMARule(self.p_, float(self.delta), self._model_lam(), self._fold_below)
        work = K.new_work(state.d)  # scratch: made for the pass, never saved
        pos = start
        while pos < order.shape[0]:
            w, log, support = state.weights(), state.log(), state.support(slack)
            pos = K.pumma_pass(rows, y_pm, order, pos, rule, w, log, support, work)
            if pos < order.shape[0]:
                stored = max(state.pi[K.Q_POS_NNZ], state.pi[K.Q_NEG_NNZ])
                state.make_room(batch.max_row_nnz(order[pos : pos + 1]) + int(stored))
        check_finite_state(self, state)
        return (
            state.n_corrections - before[0],
            int(state.pi[K.Q_CONFLICTS]) - before[1],
        )

    def _learned(self):
        required, optional = super()._learned()
        return required | {"n_newton_steps_"}, optional

    def __setstate__(self, state):
        # models saved by marginkit 0.1 hold the pass's scratch: made afresh per pass now
        state = dict(state)
        state.pop("_work", None)
        super().__setstate__(state)

    def _check_progress(self, resume, n):
        names = {"fingerprint", "rng", "slacks", "pos", "done"}
        check.attributes(resume, "_resume", names, PROGRESS_OPTIONAL)
        check_fingerprint(resume["fingerprint"])
        self._check_tol_record(resume)
        slacks = resume["slacks"]
        if type(slacks) is not list or len(slacks) != self._n_problems:
            check.fail("_resume['slacks']", f"must be a list of {self._n_problems} arrays")
        if n is None:
            n = slacks[0].shape[0] if isinstance(slacks[0], np.ndarray) else 0
        for j, slack in enumerate(slacks):
            check.array(slack, f"_resume['slacks'][{j}]", np.float64, (n,), finite=True)
        check_epoch_loop(resume, n, "changes")
        for j, state in enumerate(self._states):
            check_pumma_rows(state, f"_states[{j}]", n)
        return n

    def _fresh_progress(self, X):
        n = X.shape[0]
        self.margin_ = np.zeros(self._n_problems)
        return {
            "rng": check_random_state(self.random_state),
            "slacks": [state.new_data(n) for state in self._states],
            "pos": 0,
            "done": False,
            **self._schedule().fresh(),
        }

    def _train_resumable(self, X, y, callback, save, every, weights=None):
        """Epochs until one makes no update; a checkpoint every ``every`` trials."""
        r = self._resume
        n = X.shape[0]
        step = n if every is None else int(every)
        X = self._model_units(X, training=True)
        batch = TrainingRows(X, self.p_, 0.0, weight=weights)
        targets = self._targets(y)
        problems = list(zip(self._states, targets, r["slacks"], strict=True))

        def run_chunk(order, lo, hi):
            changes = 0
            for state, y_pm, slack in problems:
                updates, conflicts = self._run_pumma(
                    state, batch, y_pm, order[:hi], slack, start=lo
                )
                changes += updates + conflicts
            return changes

        rows = rows_by_content(X, y, weights) if self.shuffle else None
        self._epochs_until_quiet(n, step, save, run_chunk, callback, rows)
        for j, (state, y_pm, slack) in enumerate(problems):
            self.margin_[j] = self._training_margin(state, X, y_pm, slack, weights)
        self._end_of_fit(r)

    def _chunk_margins(self, X, y):
        """The training margin of every problem on one chunk (no slack: lam = 0)."""
        X = self._model_units(X)
        return np.array(
            [
                self._training_margin(state, X, y_pm, np.zeros(X.shape[0]))
                for state, y_pm in zip(self._states, self._targets(y), strict=True)
            ]
        )

    def _training_margin(self, state, X, y_pm, slack, weights=None):
        """min_i y_i (w~ . x~_i + b) / ||w~||_q over the training rows X (of ``weights``)
        in the model's units (slack included: a row's coordinate is sqrt(lam / weight)),
        in the units of the data."""
        sigma = state.fs[L.F_SIGMA_W]
        f = np.asarray(X @ (sigma * state.direction)).ravel() + state.bias
        lam = self._model_lam()
        if lam > 0:
            coordinate = np.sqrt(lam if weights is None else lam / weights)
            f += coordinate * sigma * np.sign(slack) * np.abs(slack) ** (self.p_ - 1)
        total = state.fs[L.F_SUM]
        norm = state.fs[L.F_S] * total ** (1.0 / self.p_) if total > 0 else 0.0
        # the margin of a separator scales as the instances do
        return float(self._data_units(np.min(y_pm * f) / norm, 1)) if norm > 0 else 0.0

    def _passes(self, X, y, orders, callback, weights=None):
        # partial_fit: one pass; the rows are new examples
        batch = self._batch(X, weights)
        order = np.ascontiguousarray(orders[0], dtype=np.int64)
        changes = 0
        for j, y_pm in enumerate(self._targets(y)):
            state = self._states[j]
            updates, conflicts = self._run_pumma(
                state, batch, y_pm, order, state.new_data(X.shape[0])
            )
            changes += updates + conflicts
        self._end_of_partial_fit(changes)
        self.__dict__.pop("margin_", None)  # of the training set of a fit: measured by fit
        return self

    def _update_counts(self):
        super()._update_counts()
        self.n_updates_ = self.n_corrections_
        self.n_conflicts_ = int(sum(s.pi[K.Q_CONFLICTS] for s in self._states))
        self.n_newton_steps_ = int(sum(s.newton_count[0] for s in self._states))

    # -- prediction ----------------------------------------------------------------
    def _split(self, W, aug):
        if self.output == "last":
            intercept = np.array([s.bias for s in self._states])
        else:
            intercept = np.array([s.avg_bias() for s in self._states])
        return W, intercept

    def _voted_scores(self, state, X, aug):
        return state.voted_scores(X, 0.0, hyp_sigma=state.h_sigma, hyp_bias=state.h_bias)


@trusted_type
class _Work:
    """The scratch of the compiled pass that models saved by marginkit 0.1 hold (as
    ``_work``): such files still load, and :meth:`PUMMAClassifier.__setstate__` drops
    it (the scratch is made for each pass, :func:`marginkit._core.pumma.new_work`)."""


class KernelPUMMAClassifier(PUMMAEpochs, KernelOnlineClassifier):
    __doc__ = f"""PUMMA_2(delta) in a reproducing kernel Hilbert space, with a bias.

    The p = 2 algorithm of :class:`PUMMAClassifier` with inner products replaced by a
    kernel (Ishibashi, Hatano and Takeda, COLT 2008): each update is
    ``w' = c w + d z`` with ``z = (phi(x+) - phi(x-)) / 2`` and the bias
    ``b = -(w . x+ + w . x-) / 2``. The hypothesis is a sum over *pairs*
    ``s sum_k a_k (phi(p_k) - phi(n_k)) / 2`` whose coefficients never change once
    made, so training runs on a blocked exact engine like that of
    :class:`~marginkit.KernelALMAClassifier`: per block, kernel rows against the pairs
    and a compiled walk. The 2-norm soft margin ``K(x_i, x_j) + lam [i = j]`` costs
    one number per training example. The updates are those of the plain per-example
    algorithm.

    Parameters
    ----------
    delta : float in [0, 1), default=0.1
        The final margin is at least ``(1 - delta)`` times the best.
    lam : float >= 0, default=1.0
        The 2-norm soft margin; 0 is the hard margin (see
        :class:`~marginkit.PUMMAClassifier`; docs/defaults.md).
    max_iter : int >= 1, default=1000
        :meth:`fit` passes over the data until an epoch makes no update (or ``tol``
        ends them), or this many.
    {TOL_DOC}
    max_epochs : int >= 1
        Deprecated: the former name of ``max_iter``, taken (with a ``FutureWarning``)
        until marginkit 0.3.
    output : {{"last", "avg", "voted"}}, default="avg"
    {HORIZON_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    {KERNEL_DOC}
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (2 n_pairs,)
        Positions in the training stream of the x+ then the x- of every pair.
    support_vectors_ : ndarray or sparse matrix of shape (2 n_pairs, n_features)
    dual_coef_ : ndarray of shape (n_problems, 2 n_pairs)
        Coefficients of the ``output`` hypothesis on ``K(support_vectors_, x)``.
    intercept_ : ndarray of shape (n_problems,)
    n_updates_ : int
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_epochs_ : int
        Epochs of :meth:`fit` (and calls of :meth:`partial_fit`), seen by every
        one-vs-rest problem.
    converged_ : bool
        Whether the last epoch made no update in any binary problem.
    n_conflicts_ : int
    margin_ : ndarray of shape (n_problems,)
        After :meth:`fit`: ``min_i y_i (w . phi(x_i) + b) / ||w||`` on the training data
        (in the soft-margin space when ``lam > 0``).
    n_trials_ : int
    n_kernel_evaluations_ : int
    gamma_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import KernelPUMMAClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.5).astype(int)
    >>> clf = KernelPUMMAClassifier(kernel="rbf", gamma=1.0, lam=0.1, tol=None).fit(X, y)
    >>> bool(clf.converged_), clf.score(X, y)
    (True, 1.0)
    """

    _parameter_constraints: dict = {
        **PUMMA_CONSTRAINTS,
        **KERNEL_CONSTRAINTS,
        "normalize": ["boolean"],
    }
    _parameter_constraints["max_epochs"] = _parameter_constraints.pop("n_epochs")

    def __init__(
        self,
        *,
        delta=0.1,
        lam=1.0,
        max_iter=1000,
        tol=1e-3,
        output="avg",
        horizon=None,
        shuffle=True,
        random_state=None,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=1.0,
        normalize=False,
        block_size="auto",
        cache_size=200,
        class_weight=None,
        verbose=0,
        max_epochs="deprecated",
    ):
        self.delta = delta
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.output = output
        self.horizon = horizon
        self.shuffle = shuffle
        self.random_state = random_state
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.normalize = normalize
        self.block_size = block_size
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_epochs = max_epochs

    # a functional margin of 1: w . phi(x) + b does not change with the scale of phi
    _traits = replace(KERNEL_TRAITS, noise_ratio=None, **PUMMA_TRAITS)

    def _keep_margin(self, margin):
        # a state's array, published where the model is
        self._kstate.margin = margin

    @property
    def margin_(self):
        check_is_fitted(self, "_kstate")
        if self._kstate.margin is None:
            raise AttributeError("margin_ is measured by fit, not by partial_fit")
        return self._published(self._kstate.margin)

    def _new_state(self, data, kernel):
        self.n_epochs_ = 0
        self.converged_ = False
        self._model_lam()  # a ValueError, before any training, when lam swamps the data
        return PairState(
            data.n_features, self._n_problems, data.sparse, kernel, self._normalise_param
        )

    def _params(self, data):
        return {
            "delta": float(self.delta),
            "lam": self._model_lam(),
            "block_size": block_size_for(self.block_size, data.backend),
            "fold_below": self._fold_below,
        }

    def _check_state(self):
        state = check.instance(self._kstate, "_kstate", PairState)
        check_state(state, "_kstate", self.n_features_in_, self._n_problems)
        self._check_kernel_gamma(state)

    def _check_progress(self, resume, n):
        names = {"fingerprint", "rng", "slack", "cache_P", "cache_seen", "pos", "done"}
        check.attributes(resume, "_resume", names, PROGRESS_OPTIONAL)
        check_fingerprint(resume["fingerprint"])
        self._check_tol_record(resume)
        slack = resume["slack"]
        if n is None:
            n = slack.shape[0] if isinstance(slack, np.ndarray) and slack.ndim == 2 else 0
        check.array(slack, "_resume['slack']", np.float64, (n, self._n_problems), finite=True)
        self._check_cache(resume, n)
        check_epoch_loop(resume, n, "changes")
        check_pairs_rows(self._kstate, "_kstate", n)
        return n

    def _fresh_progress(self, X):
        n, C = X.shape[0], self._n_problems
        cache = self._max_iter > 1 and n * (C + 1) * 8 <= self.cache_size * 2**20
        self._kstate.new_data()
        return {
            "rng": check_random_state(self.random_state),
            "slack": np.zeros((n, C)),
            "cache_P": np.zeros((n, C)) if cache else None,
            "cache_seen": np.zeros(n, dtype=np.int64) if cache else None,
            "pos": 0,
            "done": False,
            **self._schedule().fresh(),
        }

    def _train_resumable(self, X, y, callback, save, every, weights=None):
        """Epochs until one makes no update; checkpoints on block boundaries."""
        r = self._resume
        state = self._kstate
        data = self._instances(X, training=True)
        Y = np.column_stack(self._targets(y))
        n = X.shape[0]
        b = block_size_for(self.block_size, data.backend)
        step = n if every is None else -(-int(every) // b) * b
        cache = None if r["cache_P"] is None else (r["cache_P"], r["cache_seen"])
        slack = r["slack"]

        params = {**self._params(data), "weight": weights}

        def run_chunk(order, lo, hi):
            updates, conflicts = train_pairs(state, data, Y, order[lo:hi], slack, params, cache)
            return updates + conflicts

        rows = rows_by_content(X, y, weights) if self.shuffle else None
        self._epochs_until_quiet(n, step, save, run_chunk, callback, rows)
        state.n_seen += n
        self._keep_margin(self._margins(data, Y, slack, weights))
        self._end_of_fit(r)

    def _margins(self, data, Y, slack, weights=None):
        """The training margin of every problem on rows X (of ``weights``), slack
        coordinates included (a row's soft-margin term is lam / weight)."""
        state = self._kstate
        lam = self._model_lam()
        lam = lam if weights is None else (lam / weights)[:, None]
        f = data.backend.host(state.scores(data, "last")) + lam * state.s * slack
        norm = np.sqrt(state.norm2)
        with np.errstate(divide="ignore", invalid="ignore"):
            margin = np.where(norm > 0, np.min(Y * f, axis=0) / norm, 0.0)
        # the margin of a separator scales as the instances do
        return self._data_units(margin, 1)

    def _chunk_margins(self, X, y):
        Y = np.column_stack(self._targets(y))
        return self._margins(self._instances(X), Y, np.zeros_like(Y))

    def _passes(self, X, y, orders, callback, weights=None):
        # partial_fit: one pass; the rows are new examples
        state = self._kstate
        data = self._instances(X, training=True)
        Y = np.column_stack(self._targets(y))
        state.new_data()
        slack = np.zeros((X.shape[0], Y.shape[1]))
        order = np.ascontiguousarray(orders[0], dtype=np.int64)
        params = {**self._params(data), "weight": weights}
        updates, conflicts = train_pairs(state, data, Y, order, slack, params)
        state.n_seen += X.shape[0]
        state.margin = None  # of the training set of a fit: measured by fit
        self._end_of_partial_fit(updates + conflicts)
        return self

    def _update_counts(self):
        super()._update_counts()
        self.n_updates_ = self.n_corrections_
        self.n_conflicts_ = int(self._kstate.conflicts.sum())

    @property
    def intercept_(self):
        check_is_fitted(self, "_kstate")
        not_for_voted(self, "intercept_")
        return self._published(self._kstate.coefficients(self.output)[1])

    @property
    def support_(self):
        check_is_fitted(self, "_kstate")
        m = self._kstate.m
        return self._published(
            np.concatenate([self._kstate.index_p[:m], self._kstate.index_n[:m]])
        )

    @property
    def support_vectors_(self):
        check_is_fitted(self, "_kstate")
        st = self._kstate
        rows = st.POS.backend.concat([st.POS.rows_copy(0, st.m), st.NEG.rows_copy(0, st.m)])
        return self._data_rows(rows)

    @property
    def dual_coef_(self):
        check_is_fitted(self, "_kstate")
        not_for_voted(self, "dual_coef_")
        coef = self._dual_units(self._kstate.coefficients(self.output)[0])
        return self._published(np.hstack([0.5 * coef.T, -0.5 * coef.T]))
