"""The scikit-learn front end shared by every online classifier: the estimator API.

An estimator here only validates, maps labels to one-vs-rest +1/-1 problems, and
calls a compiled pass (see :mod:`marginkit._core.linear`) once per binary problem and
epoch; it never loops over samples in Python. The jobs around the API live in modules
named for them: when the passes end (:mod:`._passes`), checkpoints and the orders of
the epochs (:mod:`._checkpoints`), the checks of a loaded model (:mod:`._loaded`), the
fit from a stream (:mod:`._stream_fit`), the units the passes learn in
(:mod:`._scaling`), the rows they take (:mod:`._batch`).
"""

import contextlib
import copy
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
    unique_labels,
)
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data
from tqdm.auto import tqdm

from . import _checks as check
from . import _order
from . import _weights as W
from ._batch import _Batch
from ._checkpoints import EpochOrders, Resumable
from ._core import linear as L
from ._core.arrays import answers_in_namespace, move_to, namespace, on_host, to_numpy
from ._core.state import PNormState
from ._guards import check_known, check_two_classes, unchanged_on_error
from ._loaded import Loaded
from ._passes import RENAMED, TOL, Passes, ended_early
from ._registry import trusted_type
from ._scaling import Scaled, unit_scaled
from ._state_checks import check_state
from ._stream_fit import Streamed
from ._utils import (
    DataSummary,
    augmented_norms_p,
    inverse_or_zero,
    row_norms_p,
    times_power_of_two,
    user_level,
)

#: The largest p of the p-norm algorithms (ALMA_p, PUMMA_p): up to it ALMA equals the
#: slow reference to 1e-11; from about p = 200 the p-th powers of a weight vector's
#: coordinates leave float64's range (its hypothesis drifts, and at p = 1000 stayed 0).
#: 2 ln d, the "log" choice, stays below it for any d under 10^32.
P_MAX = 150.0

#: The parameters of every online classifier; each estimator starts from these (or
#: :data:`LINEAR_CONSTRAINTS`, or the kernel estimators' ``KERNEL_CONSTRAINTS``) and
#: adds, narrows or pops its own, as scikit-learn's ``Perceptron`` does.
ONLINE_CONSTRAINTS = {
    "output": [StrOptions({"last", "avg", "voted"})],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": TOL,
    "n_epochs": RENAMED,
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
    "class_weight": [StrOptions({"balanced"}), dict, None],
    "verbose": ["verbose"],
}

#: How far from the largest norm of an instance a given ``intercept_scaling`` may lie
#: (as a ratio): within it, the bias coordinate and the instances share the model's
#: units without leaving float64.
BIAS_RANGE = (2.0**-500, 2.0**500)

#: The parameters of the linear online classifiers (the Perceptron's).
LINEAR_CONSTRAINTS = {
    **ONLINE_CONSTRAINTS,
    "keep_corrections": ["boolean"],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [
        StrOptions({"rms", "2rms", "max"}),
        Interval(Real, 0, None, closed="neither"),
    ],
}


def not_for_voted(est, name):
    """An AttributeError for the attribute ``name`` of a single hypothesis (weights,
    a bias, dual coefficients) asked of ``est`` under ``output="voted"``."""
    if est.output == "voted":
        raise AttributeError(f"{name} is not defined for output='voted' (a vote of hypotheses)")


class OnlineClassifier(
    Loaded, Resumable, Streamed, Passes, Scaled, ClassifierMixin, BaseEstimator
):
    """Validation, labels, fit / partial_fit and predict shared by every online classifier.

    Subclasses define ``_initialise(data)`` (fresh learned state from a
    :class:`~marginkit._utils.DataSummary`, ``classes_`` known),
    ``_passes(X, y, orders, callback)`` (one pass per order over the rows of X, then
    ``callback(self, epoch)`` if given) and
    ``decision_function``; ``_state_attr`` names the attribute that exists once fitted.
    """

    _state_attr = "_states"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        trusted_type(cls, model=True)  # marginkit's own estimators load from files

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X, y, *, sample_weight=None, callback=None, checkpoint=None, checkpoint_every=None
    ):
        """Train from scratch for ``max_iter`` passes (PUMMA and the margin Perceptron:
        until they converge, or at most ``max_iter``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights >= 0 of the rows (None: 1 each), multiplied by their classes'
            (``class_weight``). A row's weight scales its update (the "Weights"
            section of the algorithm's page in docs/algorithms/); a row of weight 0
            is left out, exactly.
        callback : callable, optional
            Called as ``callback(self, epoch)`` after each epoch (``epoch`` from 0);
            the estimator can predict there, e.g. to record a learning curve over
            epochs from one run.
        checkpoint : str or path-like, optional
            A file (written with :func:`marginkit.save`, atomically) that holds the
            model and how far training got. When it exists, training resumes from it,
            after checking that it was made by an estimator with the same parameters on
            the same data; the result is exactly that of an uninterrupted run. Needs
            ``random_state`` to be an int or None, and a named kernel.
        checkpoint_every : int >= 1, optional
            Trials between checkpoints; the kernel estimators round it up to a multiple
            of ``block_size``. By default a checkpoint is written at the end of an epoch
            when the training since the last one took at least 20 times as long as
            writing it did (so that checkpoints cost at most about 5% of the training
            they protect), and once more when training ends.

        Returns
        -------
        self
        """
        self._warn_renamed()
        self._check_checkpoint_args(checkpoint, checkpoint_every)
        # a fit that fails (data found bad late, weights that overflow, an interrupt)
        # leaves the estimator as it was: a fit makes new state, never changes the old
        with unchanged_on_error(self):
            if checkpoint is None:
                return self._fit(X, y, callback, sample_weight)
            return self._fit_with_checkpoints(
                X, y, callback, checkpoint, checkpoint_every, sample_weight
            )

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over ``X`` in the order given, carrying on from the current state.

        Any split of a stream into calls gives the same model. It is that of one
        :meth:`fit` with ``max_iter=1, shuffle=False`` on the whole stream, except for
        what a fit takes from all its data at the start: the radius of the instances
        under ``fit_intercept`` (and the margin Perceptron's schedule), a kernel's
        ``gamma="scale"``. The first call takes these from its own batch. (To stream a
        file with the quantities of all of it, see :mod:`marginkit.streaming`.)

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            All the labels the stream can hold; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights >= 0 of the rows, as in :meth:`fit`; the class weights are those
            the first call fixed (``class_weight_``). A call whose rows all weigh 0 is
            the call not made.

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, classes, sample_weight)

    # -- validation ----------------------------------------------------------------
    def _validate_X(self, X, reset, dtype=np.float64, keep=False):
        """X validated, float64 and on the host; with ``keep``, in its namespace, on its
        device and in ``dtype`` (the kernel estimators under array API dispatch)."""
        X = validate_data(
            self,
            X if keep else on_host(X),
            accept_sparse="csr",
            dtype=dtype,
            order="C",
            reset=reset,
        )
        return self._check_magnitude(_canonical(X))

    def _validate_Xy(self, X, y, reset, dtype=np.float64, keep=False):
        X, y = validate_data(
            self,
            X if keep else on_host(X),
            on_host(y),
            accept_sparse="csr",
            dtype=dtype,
            order="C",
            reset=reset,
        )
        check_classification_targets(y)
        return self._check_magnitude(_canonical(X)), y

    def _check_magnitude(self, X):
        """X, or a ValueError when the algorithm's products of it would overflow (the
        kernel estimators; the linear ones check X in their own units, see
        ``OnlineLinearClassifier._model_units``)."""
        return X

    @property
    def _n_problems(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def _targets(self, y):
        """+1/-1 targets of every binary problem, one row each (one-vs-rest)."""
        if len(self.classes_) == 2:
            return [np.where(y == self.classes_[1], 1.0, -1.0)]
        return [np.where(y == c, 1.0, -1.0) for c in self.classes_]

    def _progress(self, total, unit):
        """A progress bar (with ``verbose``) that stays, showing what was done; a loop
        that may end early shortens its total (:func:`ended_early`)."""
        return tqdm(
            total=total,
            disable=not self.verbose,
            desc=type(self).__name__,
            unit=unit,
            leave=True,
        )

    def _fit(self, X, y, callback=None, sample_weight=None):
        n = _num_samples(X)
        X, y, weights, kept = self._start_fit(X, y, sample_weight)
        with self._rows_to_train(X, y, weights) as (X, y, weights):
            orders = EpochOrders(X.shape[0], self._max_iter, self.shuffle, self.random_state)
            orders.over(X, y, weights)
            self._end_of_passes(self._passes(X, y, orders, callback, weights=weights))
        self._left_out(kept, n)
        return self

    def _left_out(self, kept, n, start=0):
        """After training on the rows ``kept`` of ``n`` given from position ``start`` of
        the stream (None: all of them), the others weighing 0: what counts positions in
        the stream counts them among the rows given (the kernel estimators'
        ``support_``)."""

    @contextlib.contextmanager
    def _rows_to_train(self, X, y, weights):
        """The rows of a fit that its passes go over, with their weights: all of them
        (the kernel estimators hold some out for ``early_stopping``)."""
        yield X, y, weights

    def _published(self, a):
        """The host array ``a`` of the model as the model publishes it (the kernel
        estimators': in the namespace of their data)."""
        return a

    def _weighed(self, X, y, sample_weight, classes=None, per_class=None):
        """``(X, y, weights, classes, per_class, kept)``: the rows of weight > 0 of
        ``X, y``, their weights (None when every row weighs 1), their classes
        (``classes``, or those of the rows kept: a fit's), the weight of each
        (``per_class``, or computed from ``class_weight`` and the rows), and the
        positions of the rows kept (None: all of them).

        A fit, or the first call of partial_fit, computes the class weights; a later
        call of partial_fit passes ``class_weight_``."""
        a_fit = classes is None
        if sample_weight is None and (
            np.all(per_class == 1.0) if per_class is not None else self.class_weight is None
        ):
            # no weights: nothing to validate or drop (a stream's call costs nothing more)
            if per_class is None:
                classes = np.unique(y) if a_fit else classes
                per_class = np.ones(classes.shape[0])
            return X, y, None, classes, per_class, None
        sw = W.as_weights(sample_weight, X.shape[0])
        inside = sw > 0
        if not inside.any():
            if per_class is None:  # a fit, or the first call of partial_fit
                raise W.no_weight_error()
            return _safe_indexing(X, np.zeros(0, np.int64)), y[:0], None, classes, per_class, None
        if per_class is None:
            if classes is None:
                # a fit's: those of the rows that weigh something (a dict is checked
                # against every label of y, as scikit-learn checks it)
                every = isinstance(self.class_weight, dict)
                classes = np.unique(y if every else y[inside])
            per_class = W.class_weights(self.class_weight, classes, y[inside], sw[inside])
        w = sw * per_class[np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)]
        w[~inside] = 0.0
        W.check_finite(w)
        keep = w > 0
        kept = None if keep.all() else np.flatnonzero(keep)
        if kept is not None:
            if not kept.size and a_fit:  # not one of a fit's rows weighs anything
                raise W.no_weight_error()
            X, y, w = _safe_indexing(X, kept), y[kept], w[kept]
        # weights of 1 are no weights: the same pass, and a checkpoint's same data
        return X, y, None if np.all(w == 1.0) else w, classes, per_class, kept

    def _fixed_class_weights(self):
        # a model saved before class weights had none: 1 each
        return np.array(getattr(self, "_class_weight", (1.0,) * len(self.classes_)))

    @property
    def class_weight_(self):
        """ndarray of shape (n_classes,): the weight of each class of ``classes_``
        (``class_weight``; 1 each when None), fixed by the fit or the first call of
        :meth:`partial_fit`."""
        check_is_fitted(self)
        return self._published(self._fixed_class_weights())

    def _start_fit(self, X, y, sample_weight=None):
        """Validated X and y of a fresh fit, the rows of weight 0 left out, and the
        others' weights (None when all are 1), with ``classes_`` and the state set up."""
        X, y = self._validate_Xy(X, y, reset=True)
        X, y, weights, present, per_class, kept = self._weighed(X, y, sample_weight)
        # every row kept: the classes present are those of y
        self._set_up(X, y, present, per_class, present if kept is None else None)
        return X, y, weights, kept

    def _set_up(self, X, y, present, per_class, classes=None):
        """``classes_`` (and ``class_weight_``, the weights ``per_class`` of the classes
        ``present``) and a fresh state for the rows ``X, y`` of a fit; ``classes``, those
        of y where the caller has them."""
        classes = np.unique(y) if classes is None else classes
        check_two_classes(classes)
        data = self._checked_summary(X)
        self.classes_ = classes
        self._class_weight = W.as_stored(per_class[np.searchsorted(present, classes)])
        self.__dict__.pop("_label_runs", None)  # a stream's record: a fit starts anew
        self._initialise(data)

    def _checked_summary(self, X):
        """The :class:`~marginkit._utils.DataSummary` of the rows a model starts from,
        once what the parameters ask of them is known to be possible (a ValueError
        before anything of the estimator changes, otherwise)."""
        return DataSummary.of(X)

    def _note_order(self, y):
        """Record the labels of a stream learned in its order (:meth:`partial_fit`,
        :func:`~marginkit.fit_file`), warning once when it comes in long runs of one
        label (:mod:`marginkit._order`)."""
        if "_label_runs" not in self.__dict__:
            self._label_runs = _order.new_record(len(self.classes_))
        codes = np.searchsorted(self.classes_, y)
        _order.warn_once(self, self._label_runs, codes, self.classes_)

    def _partial_fit(self, X, y, classes, sample_weight):
        if not hasattr(self, self._state_attr):
            # the first call fails as a fit does: leaving no half-made model
            with unchanged_on_error(self):
                return self._partial_fit_pass(X, y, classes, sample_weight, first=True)
        self._check_not_overflowed()
        self._check_unchanged_since_fit()
        undo = self._undo_point()
        if undo is None:
            return self._partial_fit_pass(X, y, classes, sample_weight, first=False)
        with unchanged_on_error(self, undo):
            return self._partial_fit_pass(X, y, classes, sample_weight, first=False)

    def _changed_since_fit(self):
        """``{parameter: value at the fit}`` of the parameters that shape the model (a
        bias, a kernel, a norm) and have been set to other values since: those take
        effect at the next fit; the model keeps, and predicts with, its own."""
        return {}

    def _check_unchanged_since_fit(self):
        """A ValueError for a partial_fit after parameters that shape the model changed:
        it cannot go on with a model of other parameters."""
        changed = self._changed_since_fit()
        if changed:
            was = ", ".join(f"{k}={v!r}" for k, v in changed.items())
            now = ", ".join(f"{k}={getattr(self, k)!r}" for k in changed)
            raise ValueError(
                f"{type(self).__name__} was fit with {was}, and its parameters now say "
                f"{now}: partial_fit cannot go on with a model of other parameters. Call "
                "fit to train with the new ones, or set them back."
            )

    def _undo_point(self):
        """A function that puts the learned state back as it is now, where taking one
        costs little against a call (the kernel estimators'), else None."""
        return None

    def _check_not_overflowed(self):
        """A ValueError when an earlier call left the model's weights overflowed."""

    def _partial_fit_pass(self, X, y, classes, sample_weight, first):
        X, y = self._validate_Xy(X, y, reset=first)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            known = unique_labels(classes)
            check_two_classes(known)
        else:
            # raises when classes differ from those of the first call
            _check_partial_fit_first_call(self, classes)
            known = self.classes_
        check_known(y, known)
        fixed = None if first else self._fixed_class_weights()
        n = X.shape[0]
        X, y, weights, _, per_class, kept = self._weighed(X, y, sample_weight, known, fixed)
        if X.shape[0] == 0:
            if first:
                raise W.no_weight_error()
            # every row weighs 0: the call is the rows left out (positions count them)
            self._left_out(np.zeros(0, dtype=np.int64), n, self._stream_position())
            return self
        if first:
            data = self._checked_summary(X)
            self.classes_ = known
            self._class_weight = W.as_stored(per_class)
            self._initialise(data)
        self._note_order(y)
        start = self._stream_position()
        self._passes(X, y, [np.arange(X.shape[0])], None, weights=weights)
        self._left_out(kept, n, start)
        self._made_passes(1)
        return self

    def _stream_position(self):
        """The rows of the stream learned so far, where positions in it are kept (the
        kernel estimators' ``support_``); 0 otherwise."""
        return 0

    def predict(self, X):
        """Class labels: sign for two classes, argmax of the outputs otherwise.

        Under array API dispatch, labels of a numeric type come back in the namespace
        and on the device of ``X``, as its decision values do."""
        return self._labels(self.decision_function(X))

    def _labels(self, scores):
        """The labels of decision values (in their namespace when numeric)."""
        xp, device = namespace(scores)
        if xp is None:
            if scores.ndim == 1:
                return self.classes_[(scores > 0).astype(int)]
            return self.classes_[scores.argmax(axis=1)]
        best = xp.astype(scores > 0, xp.int64) if scores.ndim == 1 else xp.argmax(scores, axis=1)
        labels = self.classes_[to_numpy(best)]
        return xp.asarray(labels, device=device) if labels.dtype.kind in "biuf" else labels

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    @contextlib.contextmanager
    def _slack_rows(self, n, keep):
        """The passes of a fit in memory over its ``n`` rows (``keep``) give each row one
        soft-margin coordinate for all of them (ROMMA's 2-norm soft margin, both forms:
        ``linear.Weights.slack``, ``kernel.Sums.slack``): the states
        (:meth:`_slack_states`) hold them for the passes (a checkpoint's are resumed),
        and drop them after, the model being ``w`` alone. Elsewhere (a stream) every
        trial is an example of its own."""
        keep = keep and self._rule_args().lam > 0
        held = self._slack_states()
        for state, row in held:
            if not keep:
                state.slack = np.zeros((0, *row))
            elif state.slack.shape != (n, *row):
                state.slack = np.zeros((n, *row))
        try:
            yield
        finally:
            if keep:
                for state, row in held:
                    state.slack = np.zeros((0, *row))


class OnlineLinearClassifier(OnlineClassifier):
    """Base of the linear p-norm online classifiers (one-vs-rest, last/avg/voted).

    Subclasses define ``_rule_args()``: the update rule of
    :func:`marginkit._core.linear.linear_pass` and its parameters (a
    :class:`marginkit._core.linear.Rule`). Only ALMA normalises the instances.
    """

    _max_updates = -1

    def _initialise(self, data):
        d = data.n_features + (1 if self.fit_intercept else 0)
        self.p_ = self._resolve_p(d)
        self._exponent = 0 if self._normalises else self._exponent_of(data.max_norm(self.p_))
        self.R_ = self._bias_coordinate(data.norms(self.p_)) if self.fit_intercept else 0.0
        n_problems = self._n_problems
        self._states = [PNormState(d, self.p_, self._keeps_log) for _ in range(n_problems)]
        self.n_corrections_per_class_ = np.zeros(n_problems, dtype=np.int64)
        self.n_corrections_ = 0
        self.n_trials_ = 0
        self._fold_below = _fold_threshold(self.p_)

    #: the class of the learned state of each binary problem
    _state_class = PNormState

    #: a model saved before ``intercept_scaling`` and ``n_iter_no_change`` took the
    #: largest norm for its bias and ended its passes at the first that did not improve
    _added_params = {
        **OnlineClassifier._added_params,
        "intercept_scaling": "max",
        "n_iter_no_change": 1,
    }

    def _checked_summary(self, X):
        data = super()._checked_summary(X)
        if self.fit_intercept:
            d = data.n_features + 1
            self._bias_coordinate(data.norms(self._resolve_p(d)))  # raises if impossible
        return data

    def _bias_coordinate(self, norms):
        """R_, the bias coordinate of ``fit_intercept`` (instances ``(x, -R_)``), from the
        :class:`~marginkit._utils.Norms` of the instances' p-norms: their root mean
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
        if self._normalises:
            check.equal(self._exponent, "_exponent", 0)
        else:
            check.integer(self._exponent, "_exponent", -1100, 1100)
        states = self._states
        if type(states) is not list or len(states) != self._n_problems:
            check.fail("_states", f"must be a list of {self._n_problems} states")
        for j, state in enumerate(states):
            check.instance(state, f"_states[{j}]", self._state_class)
            check_state(state, f"_states[{j}]", d, p)

    #: whether the algorithm learns on normalised instances (ALMA)
    _normalises = False

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
        rule = self._rule_args()._replace(max_updates=self._max_updates)
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
        (``_weight_degree``), so the model is the one the data at scale 1 give, while
        no ``||x||^2`` or ``w . x`` overflows (features near 1e300) or underflows (near
        1e-170). A ValueError when, in those units, the instances' squared norms would
        overflow or, ``training`` on them, underflow: later batches of another scale.
        An algorithm that normalises its instances scales each batch instead
        (:func:`unit_scaled`)."""
        if self._normalises:
            return X
        X = times_power_of_two(X, -self._exponent)
        top = float(np.max(row_norms_p(X, self.p_))) if X.shape[0] else 0.0
        limit = np.sqrt(self.MAX_SQUARED_NORM)
        if top > limit or (training and 0.0 < top < 1.0 / limit):
            raise self._other_scale(
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
        return changed

    def _model_aug(self):
        """The bias coordinate of an instance, in the model's units."""
        return float(np.ldexp(self._aug(), -self._exponent))

    def _batch(self, X, weights=None):
        """The compiled passes' form of training rows X (of ``weights``, None: 1 each),
        in the model's units."""
        X = self._model_units(X, training=True)
        return _Batch(X, self.p_, self._model_aug(), self._normalises, weights)

    def _passes(self, X, y, orders, callback, resume=None, save=None, every=None, weights=None):
        """The passes (until ``tol`` ends them) over the rows of X, of ``weights``; with
        ``resume``, from its (epoch, pos), calling ``save`` every ``every`` trials (and at
        the end of each epoch) after updating it. Returns the progress (``resume``, or a
        fresh one)."""
        batch = self._batch(X, weights)
        targets = self._targets(y)
        n = X.shape[0]
        step = n if every is None else int(every)
        r = self._progress_of(resume)
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
            for epoch, lo in self._epochs(r, len(orders)):
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
                        self._reached(r, epoch, hi, n)
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
        return self._data_units(self._model_weights(), self._weight_degree)

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
        if self._normalises:
            X, aug = unit_scaled(X, self._aug())
        else:
            X, aug = self._model_units(X), self._model_aug()
        if self.output == "voted":
            scores = np.column_stack([self._voted_scores(s, X, aug) for s in self._states])
        else:
            coef, intercept = self._split(self._model_weights(), aug)
            scores = np.asarray(X @ coef.T) + intercept
            if self._normalises:
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
        return signs_kept(self._data_units(scores, self._weight_degree + 1), scores)

    def predict(self, X):
        """Class labels: sign for two classes, argmax of the outputs otherwise (of the
        scores in the model's units, whose signs and order those of
        :meth:`decision_function` are, and which neither overflow nor underflow)."""
        xp, device = namespace(X)
        scores = self._scores(X)
        return self._labels(scores if xp is None else move_to(scores, xp=xp, device=device))


def signs_kept(values, scores):
    """``values`` (``scores`` of the model's units brought to the data's by a power of
    two) made to agree with ``scores`` as :meth:`~OnlineClassifier.predict` reads them.

    Scaling by a power of two keeps every sign and order but where it leaves float64.
    There, a value that underflowed to 0 becomes the smallest subnormal number of its
    score's sign (never 0 where the score is not: a zero would say neither class), and
    one that overflowed to infinity the largest finite number of its sign (finite, so
    that differences and ratios of values stay numbers). In a row of several classes
    where that rounding made another class's value equal the best one's, the best one
    moves up by one unit in the last place when positive (the largest finite number
    moves to infinity), the others down by one when it is not, so that each keeps its
    sign and the row's argmax is the scores'. Works on arrays of any namespace (the
    adjustments are made on the host).
    """
    if values is scores:
        return values
    xp, device = namespace(values)
    out = np.array(to_numpy(values), copy=True)
    ref = np.asarray(to_numpy(scores))
    info = np.finfo(out.dtype)
    lost = (out == 0) & (ref != 0)
    out[lost] = np.copysign(info.smallest_subnormal, ref[lost])
    far = np.isinf(out) & np.isfinite(ref)
    out[far] = np.copysign(info.max, ref[far])
    if out.ndim == 2 and out.shape[1] > 1:
        best = ref.argmax(axis=1)
        for i in np.flatnonzero(out.argmax(axis=1) != best):
            v = out[i, best[i]]
            if v > 0:
                with np.errstate(over="ignore"):  # the largest finite number: to inf
                    out[i, best[i]] = np.nextafter(v, np.inf)
            else:
                tied = out[i] == v
                tied[best[i]] = False
                out[i, tied] = np.nextafter(v, -np.inf)
    return out if xp is None else move_to(out, xp=xp, device=device)


class WeightsOverflowError(ValueError):
    """A state's weights overflowed (:func:`check_finite_state`)."""


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


def _fold_threshold(p):
    """The scale below which (and beyond whose inverse) the passes fold it into v, before
    S = sum |v|^p nears overflow (s^p < 1e-200)."""
    return float(np.exp(-460.0 / p))


def _canonical(X):
    """X as the compiled passes take it: a CSR matrix in canonical format (sorted
    indices, no duplicates), and numpy arrays aligned to their items. An array
    received from another process (dask's, after a compute) may start at any byte, and
    OpenBLAS's SSE kernels (``OPENBLAS_CORETYPE=Prescott``) crash on such data where the
    compiled code hands it to BLAS; a copy is aligned."""
    if sp.issparse(X):
        parts = (X.data, X.indices, X.indptr)
        if not X.has_canonical_format or not all(a.flags.aligned for a in parts):
            X = X.copy()
            X.sum_duplicates()
    elif isinstance(X, np.ndarray) and not X.flags.aligned:
        X = X.copy()
    return X
