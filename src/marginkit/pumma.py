"""PUMMA: online approximate maximum p-norm margin classification with a bias."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _linear as L
from . import _pumma as K
from ._base import OnlineLinearClassifier, _Batch
from ._state import PNormState, _resized


class PUMMAState(PNormState):
    """:class:`PNormState` plus what PUMMA keeps: x+, x-, the bias, the slack coordinates."""

    def __init__(self, d, p, cap_k=64):
        super().__init__(d, p, cap_k)
        self.h_sigma = np.zeros(cap_k)
        self.h_bias = np.zeros(cap_k)
        self.pf = np.zeros(K.N_PSTATE)
        self.pi = np.zeros(K.N_QSTATE, dtype=np.int64)
        self.pi[K.Q_POS_ROW] = -1
        self.pi[K.Q_NEG_ROW] = -1
        self.pos_idx = np.zeros(d, dtype=np.int64)
        self.pos_val = np.zeros(d)
        self.neg_idx = np.zeros(d, dtype=np.int64)
        self.neg_val = np.zeros(d)
        self.newton_count = np.zeros(1, dtype=np.int64)

    def make_room(self, row_nnz):
        super().make_room(row_nnz)
        cap = self.h_coef.shape[0]
        if self.h_sigma.shape[0] < cap:
            self.h_sigma = _resized(self.h_sigma, cap)
            self.h_bias = _resized(self.h_bias, cap)

    def new_data(self, n_rows):
        """Rows of new data are new examples: no row holds x+ or x- any more."""
        self.pi[K.Q_POS_ROW] = -1
        self.pi[K.Q_NEG_ROW] = -1
        return np.zeros(n_rows)

    @property
    def bias(self):
        return float(self.pf[K.P_BIAS])

    def avg_bias(self):
        n = self.n_trials
        return float(self.pf[K.P_BIAS_SUM]) / n if n else 0.0


class PUMMAClassifier(OnlineLinearClassifier):
    """PUMMA_p(delta): an online approximate maximum p-norm margin classifier with a bias.

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
    :mod:`marginkit.margins`), ``||w||_q <= 1 / gamma*`` throughout, every update
    increases ``||w||_q^2`` by at least ``delta^2 / (4 (p - 1) R^2)`` (R the largest
    p-norm of an instance; the relaxed problem is ``1 / (p - 1)``-strongly convex for
    p >= 2), so there are at most ``2 + 4 (p - 1) R^2 / (delta^2 gamma*^2)`` updates,
    and when an epoch passes without one the margin is at least
    ``(1 - delta) gamma*``.

    Parameters
    ----------
    p : float > 1 or "log", default=2.0
        The norm of the instances (the margin is measured in it). ``"log"`` means
        ``max(2, 2 ln n_features)``.
    delta : float in [0, 1), default=0.1
        Degree of approximation: the final margin is at least ``(1 - delta)`` times the
        best one. The COLT 2008 experiments use 0.1 (artificial data) and 0.01 (real).
    lam : float >= 0, default=0.0
        The 2-norm soft margin: ``x_i . x_j`` becomes ``x_i . x_j + lam [i = j]``, i.e.
        each training example gets a coordinate of its own holding ``sqrt(lam)``. Those
        coordinates are only stored for the examples that become x+ or x-, and take no
        part in prediction. 0 is the hard margin. With ``lam > 0`` any labelled data
        are separable in the augmented space, so training converges.
    max_epochs : int >= 1, default=1000
        :meth:`fit` passes over the data until an epoch makes no update, or this many.
        A :class:`~sklearn.exceptions.ConvergenceWarning` says when they ran out.
    output : {"last", "avg", "voted"}, default="last"
        The final hyperplane, the average ``sum_k c_k (w_k, b_k)`` or the vote
        ``sum_k c_k sign(w_k . x + b_k)`` (``c_k``: trials hypothesis k survived); all
        three come from one run. The margin guarantee is for ``"last"``.
    shuffle : bool, default=False
        A new random order for every epoch of :meth:`fit`.
    random_state : int, RandomState instance or None, default=None
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
    n_epochs_ : ndarray of shape (n_problems,)
        Epochs of :meth:`fit` (and calls of :meth:`partial_fit`) per binary problem.
    converged_ : bool
        Whether every binary problem ended with an epoch without update.
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
    >>> clf = PUMMAClassifier(delta=0.1).fit(X, y)
    >>> bool(clf.converged_), clf.score(X, y)
    (True, 1.0)
    """

    _parameter_constraints: dict = {
        "p": [Interval(Real, 1, None, closed="neither"), StrOptions({"log"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "lam": [Interval(Real, 0, None, closed="left")],
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "output": [StrOptions({"last", "avg", "voted"})],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # PUMMA's bias is its own; no (x, -R) coordinate
    fit_intercept = False
    # the Newton solver at p = 2 too (to check the closed form against it)
    _newton_at_2 = False

    def __init__(
        self,
        *,
        p=2.0,
        delta=0.1,
        lam=0.0,
        max_epochs=1000,
        output="last",
        shuffle=False,
        random_state=None,
        verbose=0,
    ):
        self.p = p
        self.delta = delta
        self.lam = lam
        self.max_epochs = max_epochs
        self.output = output
        self.shuffle = shuffle
        self.random_state = random_state
        self.verbose = verbose

    def _resolve_p(self, d):
        if self.p == "log":
            return max(2.0, 2.0 * np.log(d))
        return float(self.p)

    def _initialise(self, X):
        super()._initialise(X)
        d = X.shape[1]
        self._states = [PUMMAState(d, self.p_) for _ in range(self._n_problems)]
        self.n_epochs_ = np.zeros(self._n_problems, dtype=np.int64)
        self.converged_ = False
        self._work = _Work(d)

    def _run_pumma(self, state, batch, y_pm, order, slack):
        """One pass over ``order``; returns the updates and conflicts it made."""
        before = state.n_corrections, int(state.pi[K.Q_CONFLICTS])
        w = self._work
        pos = 0
        while pos < order.shape[0]:
            pos = K.pumma_pass(
                batch.X,
                batch.indptr,
                batch.indices,
                batch.data,
                batch.is_sparse,
                y_pm,
                order,
                pos,
                self.p_,
                float(self.delta),
                float(self.lam),
                self._newton_at_2,
                self._fold_below,
                state.v,
                state.direction,
                state.acc,
                state.u,
                state.fs,
                state.ist,
                *state.log_arrays(),
                state.h_sigma,
                state.h_bias,
                state.pf,
                state.pi,
                state.pos_idx,
                state.pos_val,
                state.neg_idx,
                state.neg_val,
                w.new_idx,
                w.new_val,
                slack,
                w.scratch,
                w.mark,
                w.j_index,
                w.j_theta,
                w.j_z,
                state.newton_count,
            )
            if pos < order.shape[0]:
                stored = max(state.pi[K.Q_POS_NNZ], state.pi[K.Q_NEG_NNZ])
                state.make_room(batch.max_row_nnz(order[pos : pos + 1]) + int(stored))
        return (
            state.n_corrections - before[0],
            int(state.pi[K.Q_CONFLICTS]) - before[1],
        )

    def _fit(self, X, y, callback=None):
        X, y = self._validate_Xy(X, y, reset=True)
        classes = np.unique(y)
        if classes.shape[0] < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {classes.shape[0]} class"
            )
        self.classes_ = classes
        self._initialise(X)
        self.margin_ = np.zeros(self._n_problems)
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        batch = _Batch(X, self.p_, 0.0)
        converged = []
        with self._progress(self.max_epochs * self._n_problems, "epoch") as bar:
            for j, y_pm in enumerate(self._targets(y)):
                state = self._states[j]
                slack = state.new_data(n)
                done = False
                while not done and self.n_epochs_[j] < self.max_epochs:
                    order = rng.permutation(n) if self.shuffle else np.arange(n)
                    updates, conflicts = self._run_pumma(state, batch, y_pm, order, slack)
                    self.n_epochs_[j] += 1
                    bar.update(1)
                    done = updates == 0 and conflicts == 0
                converged.append(done)
                self.margin_[j] = self._training_margin(state, X, y_pm, slack)
        self._update_counts()
        self.converged_ = bool(all(converged))
        if not self.converged_:
            warnings.warn(
                f"PUMMAClassifier did not converge within max_epochs={self.max_epochs} "
                f"epochs: an epoch still made updates. The data may not be linearly "
                f"separable (lam={self.lam}); a soft margin lam > 0 makes any data "
                "separable. Increase max_epochs or lam.",
                ConvergenceWarning,
                stacklevel=3,
            )
        if callback is not None:
            callback(self, int(self.n_epochs_.max()) - 1)
        return self

    def _training_margin(self, state, X, y_pm, slack):
        """min_i y_i (w~ . x~_i + b) / ||w~||_q over the training rows (slack included)."""
        sigma = state.fs[L.F_SIGMA_W]
        f = np.asarray(X @ (sigma * state.direction)).ravel() + state.bias
        if self.lam > 0:
            f += np.sqrt(self.lam) * sigma * np.sign(slack) * np.abs(slack) ** (self.p_ - 1)
        total = state.fs[L.F_SUM]
        norm = state.fs[L.F_S] * total ** (1.0 / self.p_) if total > 0 else 0.0
        return float(np.min(y_pm * f) / norm) if norm > 0 else 0.0

    def _passes(self, X, y, orders, callback):
        # partial_fit: one pass; the rows are new examples
        batch = _Batch(X, self.p_, 0.0)
        order = np.ascontiguousarray(orders[0], dtype=np.int64)
        for j, y_pm in enumerate(self._targets(y)):
            state = self._states[j]
            self._run_pumma(state, batch, y_pm, order, state.new_data(X.shape[0]))
            self.n_epochs_[j] += 1
        self._update_counts()
        return self

    def _update_counts(self):
        super()._update_counts()
        self.n_updates_ = self.n_corrections_
        self.n_conflicts_ = int(sum(s.pi[K.Q_CONFLICTS] for s in self._states))
        self.n_newton_steps_ = int(sum(s.newton_count[0] for s in self._states))

    # -- prediction ----------------------------------------------------------------
    def _split(self, W):
        if self.output == "last":
            intercept = np.array([s.bias for s in self._states])
        else:
            intercept = np.array([s.avg_bias() for s in self._states])
        return W, intercept

    def decision_function(self, X):
        """``w . x + b`` for the ``output`` hypothesis (the vote for ``"voted"``).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self, "_states")
        self._validate_params()
        X = self._validate_X(X, reset=False)
        if self.output == "voted":
            scores = np.column_stack(
                [
                    s.voted_scores(X, 0.0, hyp_sigma=s.h_sigma, hyp_bias=s.h_bias)
                    for s in self._states
                ]
            )
        else:
            coef, intercept = self._split(self._weights())
            scores = np.asarray(X @ coef.T) + intercept
        return scores.ravel() if scores.shape[1] == 1 else scores


class _Work:
    """Work arrays of the compiled pass (zeroed between uses)."""

    def __init__(self, d):
        self.new_idx = np.zeros(d, dtype=np.int64)
        self.new_val = np.zeros(d)
        self.scratch = np.zeros(d)
        self.mark = np.zeros(d, dtype=np.int8)
        self.j_index = np.zeros(2 * d + 2, dtype=np.int64)
        self.j_theta = np.zeros(2 * d + 2)
        self.j_z = np.zeros(2 * d + 2)
