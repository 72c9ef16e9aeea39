"""The margin Perceptron, with a fixed or incrementally halved margin guess."""

import warnings
from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from . import _checks as check
from ._checkpoints import check_epoch_loop, check_fingerprint
from ._core import linear as L
from ._core.state import PNormState
from ._docstrings import HORIZON_DOC, KEEP_CORRECTIONS_DOC, SHUFFLE_DOC, intercept_doc
from ._linear_base import LINEAR_CONSTRAINTS, LINEAR_TRAITS, OnlineLinearClassifier
from ._order import epoch_order, rows_by_content
from ._passes import ended_early, still_improving
from ._warnings import user_level
from ._weights import CLASS_WEIGHT_DOC

#: a checkpoint's record of ``tol`` (none in those written before it)
_TOL_KEYS = ("fewest", "ended", "improving")

#: With the incremental guess, ``tol`` ends a problem only at a guess whose budget has
#: room for an update on every row, from this epoch of the guess on: its hypotheses start
#: again from w = 0, and their average needs epochs to settle (scikit-learn's digits,
#: 5-fold: 5.8% test error from the 20th epoch, 4.4% from the 100th; LinearSVC 4.5%) ...
TOL_FROM_EPOCH = 100
#: ... and while the guess has used at most this share of its budget: a guess that has
#: used more will soon overrun it and be halved (on separable data, a guess above the
#: margin, where the updates can stop falling for a while before the budget runs out)
TOL_BUDGET_SHARE = 0.5


def _schedule_start():
    """Where the problems' epochs start: the first problem, its first epoch, and the
    record of ``tol`` and of the problems done."""
    return {"problem": 0, "pos": 0, "done": False, "converged": [], **_fresh_tol()}


def _fresh_tol():
    return {"fewest": np.inf, "ended": False, "improving": []}


def _check_flags(resume, key, problems):
    """``resume[key]`` lists a flag for each of the ``problems`` problems done."""
    flags = resume[key]
    if type(flags) is not list or len(flags) != problems:
        check.fail(f"_resume['{key}']", f"must list the {problems} problems done")
    for flag in flags:
        check.flag(flag, f"_resume['{key}']")


#: why ``intercept_scaling`` defaults to what it does (its docstring)
_BIAS_CHOICE = """its stopping rule (``tol``) counts the guesses' budgets in the
        augmented radius, and ``"2rms"`` came within 1 point of ``LinearSVC`` on more
        of the public data sets than ``"rms"`` or ``"max"`` (docs/defaults.md)."""


class MarginPerceptronClassifier(OnlineLinearClassifier):
    __doc__ = f"""The margin Perceptron: a plane with a guaranteed fraction of the best margin.

    Starting from ``w = 0``, the margin Perceptron updates ``w += y x`` on every example
    that is misclassified or lies closer than ``gamma_guess / 2`` to the plane, i.e.
    while ``y w . x / ||w|| < gamma_guess / 2`` (any example when ``w = 0``), sweeping
    the data until a whole epoch makes no update. If the data are separable through the
    origin with margin ``gamma_opt >= gamma_guess``, it stops after at most
    ``12 R^2 / gamma_guess^2`` updates (R the largest norm of an instance) with a plane
    of margin at least ``gamma_guess / 2``.

    With ``gamma_guess=None`` the guess is found incrementally: it starts at R and is
    halved, and the margin Perceptron restarted from ``w = 0``, whenever an update
    beyond ``12 R^2 / gamma_guess^2`` would be needed. The last guess is then at least
    ``gamma_opt / 2``, so the plane returned has margin at least ``gamma_opt / 4``,
    after ``O(R^2 / gamma_opt^2)`` updates in all. This is the algorithm of the lecture
    notes on large-margin separation (the "margin Perceptron" and its incremental
    version); one-vs-rest problems each find their own guess, one problem after the
    other: so the ``callback`` of :meth:`fit` comes after each epoch of a binary
    problem (after one that overran its guess's budget, the hypothesis is the fresh one
    of the halved guess, w = 0), and once at the end with more classes (before, the
    model is not whole).

    On data that are not separable the guess comes down without end, each guess
    allowed four times the updates of the one before, and the epochs end only at
    ``max_iter``. So by default (``tol=1e-3``) a problem also ends once its guess is
    small and its epochs stop making fewer updates (``tol`` says when): the halving
    reaches such a guess only when ``gamma_opt < R sqrt(48 / n_samples)``, so on data
    separable with a larger margin the fit is the algorithm of the lecture notes, to an
    epoch without update. ``tol=None`` is that algorithm on any data.

    Parameters
    ----------
    gamma_guess : float > 0 or None, default=None
        The margin guess; None for the incremental schedule.
    max_iter : int >= 1, default=1000
        Epochs (passes over the training set) allowed in :meth:`fit`, over all the
        guesses of a binary problem. A :class:`~sklearn.exceptions.ConvergenceWarning`
        says when they ran out before an epoch without update and before ``tol`` ended
        them: the data may not be separable (through the origin, unless
        ``fit_intercept``), or more epochs are needed. When the last epoch overruns its
        guess's budget, no epoch is left to restart in: the hypothesis it reached is
        kept, with its guess.
    tol : float >= 0 or None, default=1e-3
        When a binary problem's epochs end before an epoch without update (which ends
        them in any case, as ``max_iter`` does). A number ends them after an epoch that
        made updates, but no fewer than the fewest of an earlier epoch of its guess
        less ``tol * n_samples``. With the incremental guess this counts only at a guess
        ``g`` whose budget has room for an update on every row (``12 R^2 / g^2 >=
        n_samples``), from the guess's 100th epoch on, while the guess has used at most
        half its budget (one that has used more is near the overrun that halves it);
        with a fixed ``gamma_guess``, from the second epoch, as in the other estimators.
        What this keeps: the schedule reaches a guess ``g < R`` only after the budget
        of ``2 g`` ran out, which proves ``gamma_opt < 2 g``; so the rule cannot end a
        problem separable with margin ``gamma_opt >= R sqrt(48 / n_samples)``, whose
        fit is the algorithm's: ``converged_``, and for ``"last"`` a margin of at least
        ``gamma_opt / 4``. A problem the rule ends has ``converged_`` False, and no
        warning: its model is that of 100 or more epochs of a guess whose epochs
        stopped making fewer updates, by default the average of their hypotheses
        (Letter: 30.05% test error after 221 epochs a problem, against 29.48% after
        1000 with ``tol=None`` and 30.30% for scikit-learn's ``LinearSVC``;
        docs/defaults.md). None runs every problem to an epoch without update or to
        ``max_iter`` epochs, the lecture notes' algorithm: on data that are not
        separable, ``max_iter`` epochs and a warning.
    output : {{"last", "avg", "voted"}}, default="avg"
        The guarantee is for ``"last"``; the average and the vote are over the
        hypotheses of the final guess. The average by default (docs/defaults.md).
    {HORIZON_DOC}
    {KEEP_CORRECTIONS_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    {intercept_doc("2rms", _BIAS_CHOICE)}
        The budget of a guess is that of the augmented instances. The published
        algorithm has no bias (``fit_intercept=False``).
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features)
    intercept_ : ndarray of shape (n_problems,)
    gamma_guess_ : ndarray of shape (n_problems,)
        The guess in use at the end of training, per binary problem.
    radius_ : float
        R, the largest 2-norm of an instance the algorithm sees (augmented with
        ``fit_intercept``).
    n_corrections_ : int
        Updates over all binary problems, restarts included.
    n_corrections_per_class_ : ndarray of shape (n_problems,)
        Updates per binary problem, restarts included.
    n_restarts_ : ndarray of shape (n_problems,)
        Times the guess was halved.
    n_iter_ : ndarray of shape (n_problems,)
        Epochs used per binary problem.
    converged_ : bool
        Whether every binary problem ended with an epoch without update (the margin
        guarantee); False where ``tol`` ended one before.
    n_trials_ : int
    R_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import MarginPerceptronClassifier
    >>> X = np.array([[2.0, 1.0], [1.0, 3.0], [-1.0, -2.0], [-3.0, -1.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> clf = MarginPerceptronClassifier().fit(X, y)
    >>> bool(clf.converged_), clf.predict(X)
    (True, array([ 1,  1, -1, -1]))
    """

    # n_iter_: the epochs of each problem's schedule, which ends by its own rule
    _traits = replace(LINEAR_TRAITS, own_epochs=True)

    #: the budget of updates of the current guess (its learned value; -1: none)
    _max_updates = -1

    _parameter_constraints: dict = {
        "gamma_guess": [Interval(Real, 0, None, closed="neither"), None],
        **LINEAR_CONSTRAINTS,
    }
    _parameter_constraints.pop("n_epochs")  # max_iter from the start
    _parameter_constraints.pop("n_iter_no_change")  # its epochs end by its own rule

    def __init__(
        self,
        *,
        gamma_guess=None,
        max_iter=1000,
        tol=1e-3,
        output="avg",
        horizon=None,
        keep_corrections=False,
        shuffle=True,
        random_state=None,
        fit_intercept=True,
        intercept_scaling="2rms",
        class_weight=None,
        verbose=0,
    ):
        self.gamma_guess = gamma_guess
        self.max_iter = max_iter
        self.tol = tol
        self.output = output
        self.horizon = horizon
        self.keep_corrections = keep_corrections
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose

    def _rule_args(self):
        # the guess in the model's units (gamma_guess_ is in those of the data)
        gamma = float(np.ldexp(self._gamma, -self._exponent))
        return L.Rule(L.RULE_MARGIN_PERCEPTRON, gamma_guess=gamma, max_updates=self._max_updates)

    def _initialise(self, data):
        super()._initialise(data)
        radius = data.max_norm(2.0)
        if self.fit_intercept:
            radius = float(np.hypot(radius, self.R_))
        self.radius_ = radius if radius > 0 else 1.0
        first = self.radius_ if self.gamma_guess is None else float(self.gamma_guess)
        n_problems = self._n_problems
        self.gamma_guess_ = np.full(n_problems, first)
        self.n_restarts_ = np.zeros(n_problems, dtype=np.int64)
        self.n_iter_ = np.zeros(n_problems, dtype=np.int64)
        self._updates_before = np.zeros(n_problems, dtype=np.int64)
        self.converged_ = False

    def _learned(self):
        required, optional = super()._learned()
        required |= {"radius_", "gamma_guess_", "n_restarts_", "n_iter_", "_updates_before"}
        return required | {"converged_"}, optional | {"_gamma", "_max_updates"}

    def _check_fitted(self):
        super()._check_fitted()
        C = self._n_problems
        check.real(self.radius_, "radius_", positive=True)
        guess = check.array(self.gamma_guess_, "gamma_guess_", np.float64, (C,), finite=True)
        if not np.all(guess > 0):
            check.fail("gamma_guess_", "must be > 0")
        for name in ("n_restarts_", "n_iter_", "_updates_before"):
            check.array(getattr(self, name), name, np.int64, (C,), within=(0, 2**62))
        check.flag(self.converged_, "converged_")
        if hasattr(self, "_gamma"):
            check.real(self._gamma, "_gamma", positive=True)
        if hasattr(self, "_max_updates"):
            check.integer(self._max_updates, "_max_updates", -1, 2**62)

    def _check_progress(self, resume, n):
        names = {"fingerprint", "rng", "problem", "pos", "done", "converged"}
        check.attributes(resume, "_resume", names, ("order", "before", *_TOL_KEYS))
        check_fingerprint(resume["fingerprint"])
        problem = check.integer(resume["problem"], "_resume['problem']", 0, self._n_problems)
        _check_flags(resume, "converged", problem)
        if any(key in resume for key in _TOL_KEYS):
            check.attributes(resume, "_resume", names | set(_TOL_KEYS), ("order", "before"))
            fewest = resume["fewest"]
            if isinstance(fewest, (bool, np.bool_)) or not isinstance(fewest, Real):
                check.fail("_resume['fewest']", f"must be a number, got {type(fewest).__name__}")
            if not fewest >= 0:
                check.fail("_resume['fewest']", "must count updates, or be inf")
            check.flag(resume["ended"], "_resume['ended']")
            _check_flags(resume, "improving", problem)
        if n is None:
            order = resume.get("order")
            n = order.shape[0] if isinstance(order, np.ndarray) and order.ndim == 1 else 1
        check_epoch_loop(resume, n, "before")
        return n

    def _fresh_progress(self, X):
        return {"rng": check_random_state(self.random_state), **_schedule_start()}

    def _train_resumable(self, X, y, callback, save, every, weights=None):
        """Each problem's guesses and epochs in turn over the rows of X (of ``weights``);
        a checkpoint every ``every`` trials."""
        r = self._resume
        n = X.shape[0]
        step = n if every is None else int(every)
        batch = self._batch(X, weights)
        targets = self._targets(y)
        rows = rows_by_content(X, y, weights) if self.shuffle else None

        def epoch(j):
            if r["pos"] == 0:  # a new epoch
                r["order"] = epoch_order(r["rng"], n, self.shuffle, rows)
            lo = r["pos"]
            within = True
            while within and lo < n:
                hi = min(n, lo + step)
                within = self._run_all(
                    self._states[j], batch, targets[j], r["order"][:hi], start=lo
                )
                lo = hi
                if within and hi < n and save is not None:
                    r["pos"] = hi
                    self._update_counts()
                    save()
            r["pos"] = 0
            return within, n

        self._schedule(epoch, save, callback)

    def _stream_epochs(self, stream, callback):
        self._resume = _schedule_start()

        def epoch(j):
            rows = 0
            for X, y, weights in self._stream_chunks(stream):
                if not X.shape[0]:
                    continue  # every row weighs 0
                batch = self._batch(X, weights)
                y_pm = self._targets(y)[j]
                if not self._run_all(self._states[j], batch, y_pm, np.arange(X.shape[0])):
                    return False, rows
                rows += X.shape[0]
            return True, rows

        self._schedule(epoch, None, callback)
        del self._resume

    def _tol_applies(self, j, rows):
        """Whether ``tol`` may end problem ``j`` after an epoch of ``rows`` rows within
        its budget: from the second epoch with a fixed guess; with the incremental one,
        at a guess whose budget, ``12 R^2 / gamma^2`` updates, is at least ``rows``, from
        its epoch ``TOL_FROM_EPOCH`` on, while it has used at most ``TOL_BUDGET_SHARE``
        of the budget. Each guess starts from a fresh state, so the state's trials and
        updates are those of the guess: its epochs are its trials over the rows."""
        if self.gamma_guess is not None:
            return True
        state = self._states[j]
        return (
            self._max_updates >= rows
            and state.n_trials >= TOL_FROM_EPOCH * rows
            and state.n_corrections <= TOL_BUDGET_SHARE * self._max_updates
        )

    def _schedule(self, epoch, save, callback):
        """Each problem's epochs (``epoch(j)``: one pass, ``(False, rows)`` when the
        budget ran out, else ``(True, rows)``) until one makes no update (or ``tol``
        ends them, :meth:`_tol_applies`), halving the guess on every overrun."""
        r = self._resume
        if "ended" not in r:  # a checkpoint written before tol
            r.update(_fresh_tol(), improving=[not c for c in r["converged"]])
        schedule = self.gamma_guess is None
        with self._progress(self.max_iter * len(self._states), "epoch") as bar:
            for j in range(r["problem"], len(self._states)):
                while not (r["done"] or r["ended"]) and self.n_iter_[j] < self.max_iter:
                    self._gamma = float(self.gamma_guess_[j])
                    # 12 R^2 / gamma^2 updates (past 2^62, as many as there can be)
                    with np.errstate(over="ignore"):
                        budget = 12.0 * np.square(np.float64(self.radius_) / self._gamma)
                    self._max_updates = int(min(np.floor(budget), 2.0**62)) if schedule else -1
                    if r["pos"] == 0:  # a new epoch
                        r["before"] = self._states[j].n_corrections
                    within, rows = epoch(j)
                    self.n_iter_[j] += 1
                    bar.update(1)
                    if not within and self.n_iter_[j] < self.max_iter:
                        # 12 R^2 / gamma^2 updates did not do: halve the guess, restart
                        # (with no epoch left to restart in, the hypothesis reached stays)
                        self._updates_before[j] += self._states[j].n_corrections
                        self._states[j] = PNormState(self._states[j].d, 2.0, self._keeps_log)
                        self.gamma_guess_[j] /= 2.0
                        self.n_restarts_[j] += 1
                        r["fewest"] = np.inf
                    elif within:
                        made = self._states[j].n_corrections - r["before"]
                        r["done"] = made == 0
                        improving = still_improving(made, r["fewest"], self.tol, rows)
                        r["ended"] = (
                            self.tol is not None and not improving and self._tol_applies(j, rows)
                        )
                        r["fewest"] = min(r["fewest"], made)
                    if save is not None:
                        self._update_counts()
                        save()
                    if callback is not None and len(self._states) == 1:
                        # one problem: its epochs are the model's
                        self._update_counts()
                        callback(self, int(self.n_iter_[0]) - 1)
                r["converged"].append(bool(r["done"]))
                r["improving"].append(not (r["done"] or r["ended"]))
                ended_early(bar, self.max_iter - int(self.n_iter_[j]))
                r["problem"] = j + 1
                r["done"] = r["ended"] = False
                r["fewest"] = np.inf
        self._max_updates = -1
        self._update_counts()
        self.converged_ = bool(all(r["converged"]))
        # tol=None: every problem runs to an epoch without update; with tol, those that
        # ran out of epochs before it or tol ended them
        if any(r["improving"]) if self.tol is not None else not self.converged_:
            warnings.warn(
                f"MarginPerceptronClassifier did not separate the training data with margin "
                f"gamma_guess_ / 2 within max_iter={self.max_iter} epochs"
                + ("" if self.tol is None else f", nor did tol={self.tol!r} end them")
                + "; the data may not be linearly separable"
                + ("" if self.fit_intercept else " through the origin (see fit_intercept)")
                + ". Increase max_iter or check the data.",
                ConvergenceWarning,
                stacklevel=user_level(),
            )
        if callback is not None and len(self._states) > 1:
            # several problems make their epochs one problem after the other: the model
            # is whole only at the end
            callback(self, int(self.n_iter_.max()) - 1)

    def _passes(self, X, y, orders, callback, weights=None):
        # partial_fit: one pass with the current guess of each problem, no budget
        batch = self._batch(X, weights)
        made = 0
        for j, y_pm in enumerate(self._targets(y)):
            self._gamma = float(self.gamma_guess_[j])
            before = self._states[j].n_corrections
            self._run_all(self._states[j], batch, y_pm, np.ascontiguousarray(orders[0]))
            made += self._states[j].n_corrections - before
            self.n_iter_[j] += 1
        self.converged_ = made == 0  # this pass, the last epoch, made no update
        self._update_counts()
        return self

    def _update_counts(self):
        super()._update_counts()
        self.n_corrections_per_class_ = self.n_corrections_per_class_ + self._updates_before
        self.n_corrections_ = int(self.n_corrections_per_class_.sum())
