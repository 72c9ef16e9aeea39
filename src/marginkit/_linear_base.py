"""The base of the linear p-norm online classifiers (ALMA_p, the Perceptron family,
ROMMA, the margin Perceptron, PUMMA_p): one-vs-rest weight vectors in the compiled
passes of :mod:`marginkit._core.linear`, their bias coordinate, outputs and counts.
"""

import copy
import math
import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _checks as check
from ._base import (
    ONE_ROW,
    ONLINE_CONSTRAINTS,
    OnlineClassifier,
    RowLearner,
    WeightsOverflowError,
    not_for_voted,
)
from ._checkpoints import EpochOrders
from ._core import linear as L
from ._core.arrays import answers_in_namespace, move_to, namespace
from ._core.state import PNormState
from ._guards import check_known
from ._passes import ADDED_PARAMS, ended_early
from ._rows import (
    augmented_norms_p,
    inverse_or_zero,
    row_norms_p,
    times_power_of_two,
)
from ._scaling import MAX_SQUARED_NORM, other_scale, signs_kept, unit_scaled
from ._state_checks import check_state
from ._training_rows import TrainingRows
from ._traits import Traits
from ._warnings import user_level

#: The largest p of the p-norm algorithms (ALMA_p, PUMMA_p): up to it ALMA equals the
#: slow reference to 1e-11; from about p = 200 the p-th powers of a weight vector's
#: coordinates leave float64's range (its hypothesis drifts, and at p = 1000 stayed 0).
#: 2 ln d, the "log" choice, stays below it for any d under 10^32.
P_MAX = 150.0


#: How far from the largest norm of an instance a given ``intercept_scaling`` may lie
#: (as a ratio): within it, the bias coordinate and the instances share the model's
#: units without leaving float64.
BIAS_RANGE = (2.0**-500, 2.0**500)


#: The parameters of the linear online classifiers (the Perceptron's).
LINEAR_CONSTRAINTS = {
    **ONLINE_CONSTRAINTS,
    "horizon": [Interval(Real, 1, None, closed="neither"), None],
    "keep_corrections": ["boolean"],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [
        StrOptions({"rms", "2rms", "max"}),
        Interval(Real, 0, None, closed="neither"),
    ],
}

#: The traits of the linear forms (:class:`~marginkit._traits.Traits`): a
#: :class:`~marginkit._core.state.PNormState` per binary problem
LINEAR_TRAITS = Traits(state_class=PNormState)

#: The parameters added after linear models were first saved (:data:`ADDED_PARAMS`): a
#: model saved before ``intercept_scaling`` and ``n_iter_no_change`` took the largest
#: norm for its bias and ended its passes at the first that did not improve
LINEAR_ADDED_PARAMS = {**ADDED_PARAMS, "intercept_scaling": "max", "n_iter_no_change": 1}


class LinearLearner(NamedTuple):
    """The learning of a linear estimator as a driver sees it (Dask's parameter mixing
    runs it shard by shard, :mod:`marginkit.distributed`); made by the estimator
    (``_learner``), whose model it trains.

    Attributes
    ----------
    start : callable
        ``start(classes, summary)``: the fresh states of every binary problem for data
        of the labels ``classes`` and the :class:`~marginkit._rows.DataSummary`
        ``summary`` (the width, and the norms that fix the bias and the model's units).
        The estimator then holds no states: the driver does.
    run : callable
        ``run(states, X, y)``: the compiled pass over the rows ``X`` (labels ``y``), in
        their order, for every binary problem, continuing ``states`` in place.
    finish : callable
        ``finish(states, n_epochs)``: the estimator's model is that of ``states``,
        after ``n_epochs`` passes.
    """

    start: Callable
    run: Callable
    finish: Callable


class OnlineLinearClassifier(OnlineClassifier):
    """Base of the linear p-norm online classifiers (one-vs-rest, last/avg/voted).

    Subclasses define ``_rule_args()``: the update rule of
    :func:`marginkit._core.linear.linear_pass` and its parameters (a
    :class:`marginkit._core.linear.Rule`). Only ALMA normalises the instances.
    """

    _traits = LINEAR_TRAITS

    def _initialise(self, data):
        d = data.n_features + (1 if self.fit_intercept else 0)
        self.p_ = self._resolve_p(d)
        self._exponent = (
            0 if self._traits.normalises else self._exponent_of(data.max_norm(self.p_))
        )
        self.R_ = self._bias_coordinate(data.norms(self.p_)) if self.fit_intercept else 0.0
        n_problems = self._n_problems
        self._states = [self._new_state(d, self.p_) for _ in range(n_problems)]
        self.n_corrections_per_class_ = np.zeros(n_problems, dtype=np.int64)
        self.n_corrections_ = 0
        self.n_trials_ = 0
        self._fold_below = _fold_threshold(self.p_)

    _added_params = LINEAR_ADDED_PARAMS

    def _new_state(self, d, p):
        """A problem's fresh state: no corrections, the average of ``horizon``."""
        return PNormState(d, p, self._keeps_log, horizon=L.horizon_of(self.horizon))

    def _checked_summary(self, X):
        data = super()._checked_summary(X)
        if self.fit_intercept:
            d = data.n_features + 1
            self._bias_coordinate(data.norms(self._resolve_p(d)))  # raises if impossible
        return data

    def _bias_coordinate(self, norms):
        """R_, the bias coordinate of ``fit_intercept`` (instances ``(x, -R_)``), from the
        :class:`~marginkit._rows.Norms` of the instances' p-norms: their root mean
        square (``intercept_scaling="rms"``), twice it (``"2rms"``), their largest
        (``"max"``, the papers' R), or the value given. 1 where the instances are all 0."""
        scaling = self.intercept_scaling
        if isinstance(scaling, str):
            value = {"rms": norms.rms, "2rms": 2.0 * norms.rms, "max": norms.top}[scaling]
            return value if value > 0 else 1.0
        value = float(scaling)
        ratio = value / norms.top if 0 < norms.top < np.inf else 1.0
        if not BIAS_RANGE[0] <= ratio <= BIAS_RANGE[1]:
            raise ValueError(
                f"intercept_scaling={scaling!r} is {value / norms.top:.3g} times the "
                f"largest norm of an instance ({norms.top:.3g}); a bias coordinate more "
                "than 2^500 times larger or smaller than the instances would leave "
                "float64 in the model's units. Scale it with the features, or use "
                "intercept_scaling='rms'."
            )
        return value

    def _learned(self):
        required, optional = super()._learned()
        return required | {"p_", "R_"}, optional

    def _check_fitted(self):
        super()._check_fitted()
        # the model's own structure: a bias where R_ > 0 (fit_intercept at the fit; a
        # parameter set since takes effect at the next fit), and a norm p_ among the
        # values of p (2 for the algorithms without a p)
        R = check.real(self.R_, "R_", 0.0)
        d = self.n_features_in_ + (1 if R > 0 else 0)
        if "p" in self._parameter_constraints:
            allowed = self._parameter_constraints["p"][0]  # the Interval of p's values
            p = check.real(self.p_, "p_", allowed.left)
            if p > allowed.right:
                check.fail("p_", f"must be <= {allowed.right:g}, got {p}")
        else:
            p = check.equal(check.real(self.p_, "p_"), "p_", 2.0)
        check.equal(self._fold_below, "_fold_below", _fold_threshold(p))
        if self._traits.normalises:
            check.equal(self._exponent, "_exponent", 0)
        else:
            check.integer(self._exponent, "_exponent", -1100, 1100)
        states = self._states
        if type(states) is not list or len(states) != self._n_problems:
            check.fail("_states", f"must be a list of {self._n_problems} states")
        for j, state in enumerate(states):
            check.instance(state, f"_states[{j}]", self._traits.state_class)
            check_state(state, f"_states[{j}]", d, p)

    @property
    def _keeps_log(self):
        """Whether a fresh fit logs its corrections: only when the voted output is
        wanted, at fit time or later (``keep_corrections``)."""
        return self.output == "voted" or bool(self.keep_corrections)

    def _check_voted(self):
        """A ValueError when ``output="voted"`` is asked of a model that has no log."""
        if self.output == "voted" and not all(s.keeps_log for s in self._states):
            raise ValueError(
                f"This {type(self).__name__} was fitted without keeping its corrections, "
                "which the voted output replays; only output='last' and 'avg' can be "
                "computed from it. Fit with output='voted', or with keep_corrections=True "
                "to choose any output after fitting."
            )

    def _run(self, state, batch, y_pm, order, start):
        """One compiled pass from ``start``; returns the position reached."""
        rule = self._rule_args()
        norm = L.Norm(self.p_, self._fold_below)
        rows = L.rows_of(batch)
        w = state.weights()
        if w.slack.shape[0] not in (0, batch.n_samples):
            # slack coordinates of other rows (a model fitted elsewhere) are not these
            # rows': their trials are new examples (see _slack_rows)
            w = w._replace(slack=L.NO_SLACK)
        return L.linear_pass(rows, y_pm, order, start, rule, norm, w, state.log())

    def _slack_states(self):
        # each problem's state, with a soft-margin coordinate per row (linear_pass)
        return [(state, ()) for state in self._states]

    def _resolve_p(self, d):
        return 2.0

    def _model_units(self, X, training=False):
        """X in the units the compiled passes learn in: divided by ``2^_exponent``, the
        power of two that brought the largest norm of an instance of the first fit into
        [0.5, 1) (when it lay outside [2^-UNIT_RANGE, 2^UNIT_RANGE]). Scaling by a power
        of two is exact, and the algorithms make the same corrections at any scale
        (``Traits.weight_degree``), so the model is the one the data at scale 1 give, while
        no ``||x||^2`` or ``w . x`` overflows (features near 1e300) or underflows (near
        1e-170). A ValueError when, in those units, the instances' squared norms would
        overflow or, ``training`` on them, underflow: later batches of another scale.
        An algorithm that normalises its instances scales each batch instead
        (:func:`unit_scaled`)."""
        if self._traits.normalises:
            return X
        X = times_power_of_two(X, -self._exponent)
        top = float(np.max(row_norms_p(X, self.p_))) if X.shape[0] else 0.0
        limit = np.sqrt(MAX_SQUARED_NORM)
        if top > limit or (training and 0.0 < top < 1.0 / limit):
            raise other_scale(
                type(self).__name__,
                "large" if top > 1.0 else "small",
                f"the largest norm of an instance is {float(np.ldexp(top, self._exponent)):.3g}"
                f", about {top:.3g} times",
            )
        return X

    def _aug(self):
        """The bias coordinate of an instance, in the units of the data (0 without
        one: ``R_`` is 0 there)."""
        return -self.R_

    @property
    def _fitted_intercept(self):
        """Whether the model has a bias: ``fit_intercept`` as it was at the fit."""
        return self.R_ > 0

    def _changed_since_fit(self):
        changed = super()._changed_since_fit()
        if bool(self.fit_intercept) != self._fitted_intercept:
            changed["fit_intercept"] = self._fitted_intercept
        d = self.n_features_in_ + (1 if self._fitted_intercept else 0)
        if self._resolve_p(d) != self.p_:
            changed["p"] = self.p_
        fitted = self._states[0].horizon
        if L.horizon_of(self.horizon) != fitted:
            changed["horizon"] = fitted
        return changed

    def _model_aug(self):
        """The bias coordinate of an instance, in the model's units."""
        return float(np.ldexp(self._aug(), -self._exponent))

    def _batch(self, X, weights=None):
        """The compiled passes' form of training rows X (of ``weights``, None: 1 each),
        in the model's units."""
        X = self._model_units(X, training=True)
        return TrainingRows(X, self.p_, self._model_aug(), self._traits.normalises, weights)

    def _passes(self, X, y, orders, callback, resume=None, save=None, every=None, weights=None):
        """The passes (until ``tol`` ends them) over the rows of X, of ``weights``; with
        ``resume``, from its (epoch, pos), calling ``save`` every ``every`` trials (and at
        the end of each epoch) after updating it. Returns the progress (``resume``, or a
        fresh one)."""
        batch = self._batch(X, weights)
        targets = self._targets(y)
        n = X.shape[0]
        step = n if every is None else int(every)
        plan = self._schedule()
        r = plan.progress(resume)
        # a plain fit keeps the state each pass starts from, to end with a model where
        # the weights overflow (:meth:`_overflowed`); partial_fit and a checkpointed
        # fit cannot go back, and raise
        # (only ROMMA's rules grow without bound: the others' passes keep no copy)
        rescue = (
            isinstance(orders, EpochOrders)
            and resume is None
            and save is None
            and self._rule_args().kind >= L.RULE_ROMMA
        )
        slack = self._slack_rows(n, isinstance(orders, EpochOrders))
        with slack, self._progress(len(orders) * len(self._states), "pass") as bar:
            for epoch, lo in plan.epochs(r, len(orders)):
                order = np.ascontiguousarray(orders[epoch], dtype=np.int64)
                kept = copy.deepcopy(self._states) if rescue else None
                try:
                    while lo < n:
                        hi = min(n, lo + step)
                        for j, state in enumerate(self._states):
                            self._run_all(state, batch, targets[j], order[:hi], start=lo)
                            if hi == n:  # this problem's pass is done
                                bar.update(1)
                        lo = hi
                        plan.reached(r, epoch, hi, n)
                        if save is not None:
                            self._update_counts()
                            save()
                except WeightsOverflowError:
                    if not rescue:
                        raise
                    self._overflowed(r, kept, batch, targets, order, epoch)
                    break
                self._update_counts()
                if callback is not None:
                    callback(self, epoch)
            ended_early(bar, (len(orders) - r["epoch"]) * len(self._states))
        return r

    def _overflowed(self, r, kept, batch, targets, order, epoch):
        """End the passes of a fit at the last model before the weights overflowed in
        pass ``epoch`` (an algorithm whose hypothesis grows without bound on data that
        are not separable, ROMMA's): the model after the pass before, or, in the first
        pass, after the longest run of its sixteenths that kept them finite. A
        :class:`~sklearn.exceptions.ConvergenceWarning` says so."""
        self._states = kept
        where = f"the model after pass {epoch}"
        if epoch == 0:
            n = order.shape[0]
            step = -(-n // 16)
            lo = 0
            while lo < n:
                before = copy.deepcopy(self._states)
                try:
                    for j, state in enumerate(self._states):
                        self._run_all(state, batch, targets[j], order[: lo + step], start=lo)
                except WeightsOverflowError:
                    self._states = before
                    break
                lo += step
            where = f"the model after the first {min(lo, n)} of the {n} rows of pass 1"
        r["epoch"], r["pos"] = max(epoch, 1), 0
        r["ended"], r["improving"] = True, False
        self._update_counts()
        warnings.warn(
            f"{type(self).__name__}'s weights would overflow in pass {epoch + 1}: on data "
            f"that are not separable its hypothesis grows without bound, so the passes "
            f"ended at {where}. For a model that goes on learning from such data, use a "
            "soft margin (lam > 0: ROMMAClassifier's default is lam=1.0) or "
            "ALMAClassifier, whose hypothesis stays in the unit ball.",
            ConvergenceWarning,
            stacklevel=user_level(),
        )

    def _run_all(self, state, batch, y_pm, order, start=0):
        """The pass over ``order[start:]``, growing the log as needed; False if the budget
        ran out."""
        pos = start
        while pos < order.shape[0]:
            pos = self._run(state, batch, y_pm, order, pos)
            if state.ist[L.I_BUDGET]:
                return False
            if pos < order.shape[0]:
                state.make_room(batch.max_row_nnz(order[pos : pos + 1]))
        check_finite_state(self, state)
        return True

    # -- the learner a driver trains (LinearLearner) ---------------------------------
    def _learner(self):
        """This estimator's learning as a driver sees it: a :class:`LinearLearner`."""
        return LinearLearner(self._start_states, self._run_states, self._finish_states)

    def _start_states(self, classes, summary):
        self.classes_ = classes
        self.n_features_in_ = summary.n_features
        self._initialise(summary)
        states = self._states
        del self._states
        return states

    def _run_states(self, states, X, y):
        X, y = self._validate_Xy(X, y, reset=False)
        check_known(y, self.classes_)
        batch = self._batch(X)
        targets = self._targets(y)
        order = np.arange(X.shape[0], dtype=np.int64)
        for state, y_pm in zip(states, targets, strict=True):
            self._run_all(state, batch, y_pm, order)

    def _finish_states(self, states, n_epochs):
        self._states = states
        self._update_counts()
        self._made_passes(n_epochs)

    # -- rows one at a time (RowLearner: the river bridge) ---------------------------
    def _row_learner(self):
        """:meth:`OnlineClassifier._row_learner` with each row handed straight to the
        compiled pass of every problem, without what ``_passes`` does for a batch (the
        schedule of the passes, a progress bar, the batch's form, the counts): the same
        trials, bit for bit. What the checks here cannot vouch for (a row far from the
        scale of 1, a full correction log, a row of weight 0, an error) goes the common
        way, and so do the algorithms that run their own epochs (PUMMA, the margin
        Perceptron). Valid while the estimator's parameters and learned state change
        only through it."""
        common = super()._row_learner()
        if self._traits.own_epochs:
            return common
        rule, norm, aug = self._rule_args(), L.Norm(self.p_, self._fold_below), self._model_aug()
        targets = [self._targets(self.classes_[c : c + 1]) for c in range(len(self.classes_))]
        weights = [
            L.UNWEIGHTED if w == 1.0 else L.read_only(np.array([w]))
            for w in self._fixed_class_weights().tolist()
        ]
        trainable = [w.shape[0] == 0 or w[0] > 0.0 for w in weights]
        in_range = self._row_range(aug)
        held = [None]  # each problem's (weights, log, pass), until its arrays change
        weights_now = [None]  # (output, its weights), until a row changes them
        fast = [True]  # until an error: then every row goes the common way
        made = [False]  # whether n_iter_ says one pass (as after partial_fit)
        xscale = np.full(1, -1.0)

        def learn(X, code):
            if fast[0] and not trainable[code]:
                return None  # a row of weight 0 is the call of partial_fit not made
            weights_now[0] = None
            # (the compiled pass is called without numba's typing: only rows of the one
            # type it was compiled for go that way)
            of_type = X.dtype == np.float64 and X.ndim == 2 and X.flags.c_contiguous
            if not (fast[0] and of_type and in_range(X)):
                held[0] = None  # (the common pass may give a state new arrays)
                return common.learn(X, code)
            weight = weights[code]
            xscale[0] = -1.0  # (computed by the pass at the row's first trial)
            rows = L.DenseRows(L.read_only(X), aug, xscale, weight)
            try:
                self._note_label(code)
                if held[0] is None:
                    held[0] = [[*self._row_state(state), L.linear_pass] for state in self._states]
                for j, problem in enumerate(held[0]):
                    w, log, run = problem
                    y_pm = targets[code][j]
                    args = (rows, y_pm, ONE_ROW[0], 0, rule, norm, w, log)
                    if not run(*args):  # the log is full: _run_all makes room
                        state = self._states[j]
                        batch = self._batch(X, weight if weight.size else None)
                        self._run_all(state, batch, y_pm, ONE_ROW[0])
                        problem[:] = [*self._row_state(state), L.linear_pass]
                        continue
                    if not math.isfinite(sum(w.fs.tolist())):
                        check_finite_state(self, self._states[j])
                    if run is L.linear_pass:  # typed once: then called without numba's dispatch
                        problem[2] = compiled_overload(L.linear_pass, args)
                if not made[0]:
                    self._made_passes(1)
                    made[0] = True
            except BaseException:
                fast[0] = False
                raise
            return None

        def predict(X):
            if not (fast[0] and self.output != "voted" and in_range(X)):
                return common.predict(X)
            if weights_now[0] is None or weights_now[0][0] != self.output:
                weights_now[0] = (self.output, self._model_weights())
            W = weights_now[0][1]
            n = X.shape[1]
            scores = np.asarray(X @ W[:, :n].T)
            if self._fitted_intercept:
                scores = scores + aug * W[:, n]
            scores = scores[0]
            if self._traits.normalises and not _scale_keeps_order(scores):
                # the scores of _scores, divided by the norm of (x, aug)
                scores = scores * inverse_or_zero(augmented_norms_p(X, self.p_, aug))[0]
            return int(scores[0] > 0) if scores.shape[0] == 1 else int(np.argmax(scores))

        return RowLearner(learn, predict, self._update_counts)

    def _row_state(self, state):
        """A problem's weights and log as :func:`~marginkit._core.linear.linear_pass` takes
        them for a pass over one row (whose slack coordinate, a stream's, starts at 0)."""
        if state.slack.shape[0]:
            state.slack = np.zeros(0)  # (as _slack_rows leaves it)
        return state.weights(), state.log()

    def _row_range(self, aug):
        """``in_range(X)``: whether the row X is in the model's units as given (with the
        bias coordinate ``aug``), and :meth:`_batch` (:meth:`_scores`) would neither
        scale it nor find it too large or small: its squared norm tells, where it is
        far enough from the bounds for rounding not to matter."""
        if self._traits.normalises:
            # unit_scaled leaves (x, aug) as given when their largest entry lies within
            # [2^-64, 2^64]: ||x||^2 <= 2^126 bounds it above, |aug| or ||x||^2 / d below
            a = abs(aug)
            if a > 2.0**64:
                return lambda X: False
            low = 0.0 if a >= 2.0**-64 else self.n_features_in_ * 2.0**-126
            return lambda X: low <= np.vdot(X, X) <= 2.0**126
        if self._exponent != 0 or self.p_ != 2.0:
            return lambda X: False
        # _model_units: ||x|| within (1e-125, 1e125) (MAX_SQUARED_NORM)
        return lambda X: 1e-249 < np.vdot(X, X) < 1e249

    def _check_not_overflowed(self):
        # a partial_fit whose weights overflowed changed the state in place: a fit
        # leaves the model before it, a partial_fit cannot (a copy of every weight for
        # each call would cost more than the call), so the model refuses to go on
        for state in self._states:
            check_finite_state(self, state, earlier=True)

    def _problem_corrections(self):
        """The corrections of each one-vs-rest problem so far."""
        return np.array([s.n_corrections for s in self._states], dtype=np.int64)

    def _update_counts(self):
        self.n_corrections_per_class_ = self._problem_corrections()
        self.n_corrections_ = int(self.n_corrections_per_class_.sum())
        self.n_trials_ = self._states[0].n_trials

    # -- prediction ----------------------------------------------------------------
    def _model_weights(self):
        """(n_problems, d) weight matrix of the current ``output`` (last or avg), in the
        model's units (:meth:`_model_units`)."""
        if self.output == "last":
            return np.vstack([s.last_weights() for s in self._states])
        return np.vstack([s.avg_weights() for s in self._states])

    def _weights(self):
        """:meth:`_model_weights` in the units of the data (inf or 0 where they leave
        float64)."""
        return self._data_units(self._model_weights(), self._traits.weight_degree)

    def _split(self, W, aug):
        """(coef, intercept) of weights W of instances ``(x, aug)``."""
        n = self.n_features_in_
        coef = W[:, :n]
        if not self._fitted_intercept:
            return coef, np.zeros(W.shape[0])
        with np.errstate(over="ignore", under="ignore"):  # of the data's units: inf or 0
            return coef, aug * W[:, n]

    @property
    def coef_(self):
        """Weight vector(s) of the ``output`` hypothesis, shape (n_problems, n_features).

        Not defined for ``output="voted"``, a vote of many hypotheses.
        """
        check_is_fitted(self, "_states")
        not_for_voted(self, "coef_")
        return self._split(self._weights(), self._aug())[0]

    @property
    def intercept_(self):
        """Bias term(s), shape (n_problems,): ``-R_`` times the bias coordinate's weight."""
        check_is_fitted(self, "_states")
        not_for_voted(self, "intercept_")
        return self._split(self._weights(), self._aug())[1]

    def _voted_scores(self, state, X, aug):
        return state.voted_scores(X, aug)

    def _scores(self, X):
        """The scores of :meth:`decision_function` in the model's units (times
        ``2^-(k + 1) e`` for the last and averaged hypotheses, where they are ``w . x +
        b``), which neither overflow nor underflow where those would: the same signs."""
        check_is_fitted(self, "_states")
        self._validate_params()
        self._check_voted()
        self._check_not_overflowed()
        X = self._validate_X(X, reset=False)
        # the instances (x, aug) scaled as in training: by the model's power of two, or
        # (an algorithm that normalises them) by their own
        if self._traits.normalises:
            X, aug = unit_scaled(X, self._aug())
        else:
            X, aug = self._model_units(X), self._model_aug()
        if self.output == "voted":
            scores = np.column_stack([self._voted_scores(s, X, aug) for s in self._states])
        else:
            coef, intercept = self._split(self._model_weights(), aug)
            scores = np.asarray(X @ coef.T) + intercept
            if self._traits.normalises:
                scores *= inverse_or_zero(augmented_norms_p(X, self.p_, aug))[:, None]
        return scores.ravel() if scores.shape[1] == 1 else scores

    @answers_in_namespace
    def decision_function(self, X):
        """Scores of the ``output`` hypothesis; positive means ``classes_[1]``.

        For ``output="last"`` or ``"avg"`` this is ``w . x + b``; for ALMA, which
        learns on normalised instances, it is ``w . x_hat`` with
        ``x_hat = (x, -R) / ||(x, -R)||_p`` (no bias coordinate without
        ``fit_intercept``): the p-norm margin, in [-1, 1] since ``||w||_q <= 1``.
        For ``"voted"`` it is ``sum_k c_k sign(w_k . x)`` divided by the number of
        trials, in [-1, 1].

        The values never contradict :meth:`predict`: for two classes a value is
        positive exactly where :meth:`predict` gives ``classes_[1]``, and with more
        classes a row's largest value is that of the class :meth:`predict` gives, at
        any scale of the features. Where ``w . x + b`` leaves float64 (features near
        1e-250 or 1e250), the value is the closest one of the right sign: the smallest
        subnormal number (about 4.9e-324) for one that underflows, the largest finite
        number (about 1.8e308) for one that overflows, and, where rounding made the
        best class's value equal another's, that value moved by one unit in the last
        place.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        scores = self._scores(X)
        if self.output == "voted":
            return scores
        return signs_kept(self._data_units(scores, self._traits.weight_degree + 1), scores)

    def predict(self, X):
        """Class labels: sign for two classes, argmax of the outputs otherwise (of the
        scores in the model's units, whose signs and order those of
        :meth:`decision_function` are, and which neither overflow nor underflow)."""
        xp, device = namespace(X)
        scores = self._scores(X)
        return self._labels(scores if xp is None else move_to(scores, xp=xp, device=device))


def check_finite_state(est, state, earlier=False):
    """A ValueError, rather than a model of NaN, when a state's numbers overflowed.

    The scale is renormalised as the passes go; what can still overflow are the weights
    themselves, when an algorithm whose hypothesis grows without bound on data that are
    not separable (ROMMA, hard-margin PUMMA) runs long enough. An overflowed weight
    shows in the running sum S = sum |v_i|^p of the state's scalars, so the check reads
    those few numbers, not all d weights (partial_fit may bring one row at a time).
    """
    if not np.all(np.isfinite(state.fs)):
        when = " in an earlier call of partial_fit, which lost the model" if earlier else ""
        raise WeightsOverflowError(
            f"{type(est).__name__}'s weights overflowed{when}: on data that are not "
            "separable its hypothesis grows without bound. Use a soft margin (lam > 0, "
            "ROMMA's and PUMMA's default), fewer epochs, or ALMA, whose hypothesis stays "
            "in the unit ball" + ("; then fit anew." if earlier else ".")
        )


def _scale_keeps_order(scores):
    """Whether multiplying ``scores`` (one row's) by any positive number of
    [2^-100, 2^100] (the inverse norm of an instance in the model's units) leaves the
    label they give as it is: the sign of one score not 0 nor near underflow, or the
    first largest of several ahead of the others by more than rounding can close."""
    if scores.shape[0] == 1:
        s = abs(float(scores[0]))
        return s == 0.0 or 2.0**-900 < s < 2.0**900
    top = np.sort(scores)[-2:].tolist()
    return 2.0**-900 < abs(top[1]) < 2.0**900 and top[1] - top[0] > 1e-14 * abs(top[1])


def compiled_overload(function, args):
    """The compiled form of the numba function ``function`` for arguments of the types of
    ``args`` (called once with them), to be called without numba's dispatch, which types
    every argument anew at each call (for a row of a few features, most of its cost);
    ``function`` itself where numba does not say."""
    try:
        types = tuple(function.typeof_pyval(a) for a in args)
        return function.overloads[types].entry_point
    except (AttributeError, KeyError):
        return function


def _fold_threshold(p):
    """The scale below which (and beyond whose inverse) the passes fold it into v, before
    S = sum |v|^p nears overflow (s^p < 1e-200)."""
    return float(np.exp(-460.0 / p))
