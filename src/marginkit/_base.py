"""The scikit-learn front end shared by every online classifier: the estimator API.

An estimator here only validates, maps labels to one-vs-rest +1/-1 problems, and
calls a compiled pass (see :mod:`marginkit._core.linear`) once per binary problem and
epoch; it never loops over samples in Python. What its algorithm is comes as data
(:class:`~marginkit._traits.Traits`). The rules and checks it applies live in modules
named for them, as functions of explicit values or objects made per fit: when the
passes end (:class:`~marginkit._passes.Schedule`), checkpoints and the orders of the
epochs (:mod:`._checkpoints`), the checks of a loaded model (:mod:`._loaded`), the
units the passes learn in (:mod:`._scaling`), the weights of rows and classes
(:mod:`._weights`), the rows the passes take (:mod:`._training_rows`).
"""

import contextlib
from numbers import Integral
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
    unique_labels,
)
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data
from tqdm.auto import tqdm

from . import _checks as check
from . import _order, persistence
from . import _weights as W
from ._checkpoints import (
    EpochOrders,
    Throttled,
    check_checkpoint_args,
    check_fingerprint,
    check_resumes_on,
    fingerprint,
    resumed,
)
from ._core.arrays import namespace, on_host, times_power_of_two, to_numpy
from ._guards import check_known, check_two_classes, unchanged_on_error
from ._loaded import check_common, check_counts, check_learned, learned_attributes, learned_of
from ._passes import (
    ADDED_PARAMS,
    FIRST_KEY,
    GROWTH_KEY,
    PASS_KEYS,
    RENAMED,
    SINCE_KEY,
    TOL,
    WHY_KEY,
    Schedule,
    check_passes,
    former_name,
    warn_renamed,
    with_added_params,
)
from ._registry import UntrustedFileError, trusted_type
from ._rows import DataSummary, canonical
from ._scaling import exponent_for, in_model_units
from ._traits import Traits

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


#: The orders of a pass over one row: its epoch's
ONE_ROW = (np.zeros(1, dtype=np.int64),)


class RowLearner(NamedTuple):
    """The learning of a fitted estimator one row at a time, as a caller that already
    holds its rows in the estimator's form sees it (the river bridge,
    :mod:`marginkit.river`); made by the estimator (``_row_learner``), whose model it
    trains, and valid until the estimator is fitted, loaded or trained otherwise.

    A row ``X`` is a float64 C-contiguous array of shape (1, ``n_features_in_``) with
    finite entries, its label ``classes_[code]``: what :meth:`~OnlineClassifier.partial_fit`
    checks of a row is the caller's to check, once for the whole stream. The model is
    that of partial_fit on the same rows, one call each, bit for bit.

    Attributes
    ----------
    learn : callable
        ``learn(X, code)``: one trial on the row, as ``partial_fit(X, classes_[code:code
        + 1])`` makes it (the class weight of its label included).
    predict : callable
        ``predict(X)``: the index into ``classes_`` of the label that ``predict(X)``
        gives the row.
    sync : callable
        ``sync()``: the estimator's counts (``n_corrections_``, ``n_trials_``, ...)
        brought up to date; ``learn`` may leave them behind, for speed.
    """

    learn: object
    predict: object
    sync: object


def not_for_voted(est, name):
    """An AttributeError for the attribute ``name`` of a single hypothesis (weights,
    a bias, dual coefficients) asked of ``est`` under ``output="voted"``."""
    if est.output == "voted":
        raise AttributeError(f"{name} is not defined for output='voted' (a vote of hypotheses)")


class OnlineClassifier(ClassifierMixin, BaseEstimator):
    """Validation, labels, fit / partial_fit and predict shared by every online classifier.

    Subclasses define ``_initialise(data)`` (fresh learned state from a
    :class:`~marginkit._rows.DataSummary`, ``classes_`` known),
    ``_passes(X, y, orders, callback)`` (one pass per order over the rows of X, then
    ``callback(self, epoch)`` if given) and
    ``decision_function``; ``_traits`` (a :class:`~marginkit._traits.Traits`) says
    what its algorithm is: the attribute that exists once fitted, how its weights scale,
    how its passes end.
    """

    _traits = Traits()

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
        return self._check_magnitude(canonical(X))

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
        return self._check_magnitude(canonical(X)), y

    def _check_magnitude(self, X):
        """X, or a ValueError when the algorithm's products of it would overflow (the
        kernel estimators; the linear ones check X in their own units, see
        ``OnlineLinearClassifier._model_units``)."""
        return X

    # -- a fit that can stop and resume (checkpoints, :mod:`marginkit._checkpoints`) ---
    def _check_checkpoint_args(self, checkpoint, every):
        """A ValueError (TypeError) before training when fit cannot write or resume
        ``checkpoint`` as asked."""
        kernel = getattr(self, "kernel", None)  # (None: a linear estimator)
        check_checkpoint_args(checkpoint, every, self.random_state, kernel)

    def _fit_with_checkpoints(self, X, y, callback, checkpoint, every, sample_weight=None):
        """A fit whose progress (``_resume``) is written to ``checkpoint`` and, where that
        exists, resumed from it."""
        if every is not None and (not isinstance(every, Integral) or every < 1):
            raise ValueError(f"checkpoint_every must be an integer >= 1, got {every!r}")
        path = Path(checkpoint)
        # X is checked as for a new fit, whatever this estimator learned before: a
        # checkpoint's model replaces it
        X, y = self._validate_Xy(X, y, reset=True)
        n = X.shape[0]
        X, y, weights, present, per_class, kept = W.weighed(X, y, sample_weight, self.class_weight)
        digest = fingerprint(X, y, weights)
        if path.exists():
            verbose = self.verbose
            self.__dict__.update(vars(resumed(path, self, X, y, digest)))
            self.verbose = verbose
        else:
            self._set_up(X, y, present, per_class)  # validated above, with reset
            self._resume = {"fingerprint": digest, **self._fresh_progress(X)}

        def save():
            persistence.save(self, path)  # looked up at each write (tests stand in for it)

        write = Throttled(save) if every is None else save
        self._train_resumable(X, y, callback, write, every, weights)
        if every is None:
            write.flush()  # the finished state, if the last epoch's was skipped
        self._left_out(kept, n)  # after the last checkpoint, which resumes on the rows kept
        if not self._traits.own_epochs:
            self._end_of_passes(self._resume)
        del self._resume
        return self

    def _fresh_progress(self, X):
        """Where a resumable fit starts: the orders of every epoch, and position 0."""
        orders = EpochOrders(X.shape[0], self._max_iter, self.shuffle, self.random_state)
        return {"orders": orders, "epoch": 0, "pos": 0, **self._schedule().fresh()}

    def _train_resumable(self, X, y, callback, save, every, weights=None):
        """Train from ``self._resume`` on the rows of X (of ``weights``), calling
        ``save()`` at each checkpoint."""
        orders = self._resume["orders"].over(X, y, weights)
        self._passes(
            X, y, orders, callback, resume=self._resume, save=save, every=every, weights=weights
        )

    def _fit_by_progress(self, X, y, callback=None, sample_weight=None):
        """A fit made by the resumable loop (``_fresh_progress``, ``_train_resumable``)
        with no checkpoint: for the algorithms that decide their epochs
        (``Traits.own_epochs``)."""
        n = _num_samples(X)
        X, y, weights, kept = self._start_fit(X, y, sample_weight)
        self._resume = self._fresh_progress(X)
        self._train_resumable(X, y, callback, None, None, weights)
        self._left_out(kept, n)
        del self._resume
        return self

    def _check_progress(self, resume, n):
        """A checkpoint's progress (``_resume``): the orders of the epochs over ``n``
        rows (any number when None), and a position in them; the fingerprint of the data.
        """
        names = {"fingerprint", "orders", "epoch", "pos", *PASS_KEYS}
        optional = (*self._traits.cache_keys, FIRST_KEY, SINCE_KEY, GROWTH_KEY, WHY_KEY)
        check.attributes(resume, "_resume", names, optional)
        check_passes(resume, self._n_problems)
        check_fingerprint(resume["fingerprint"])
        orders = check.instance(resume["orders"], "_resume['orders']", EpochOrders)
        n = orders.check_loaded("_resume['orders']", self._max_iter, self.shuffle, n)
        epoch = check.integer(resume["epoch"], "_resume['epoch']", 0, self._max_iter)
        check.integer(resume["pos"], "_resume['pos']", 0, n - 1 if epoch < self._max_iter else 0)
        return n

    def _check_resume(self, path, X, y):
        """A ValueError unless this checkpoint (loaded, so checked) resumes on ``X, y``: the
        data it was made for, by their width, classes and number of rows."""
        check_resumes_on(path, self.n_features_in_, self.classes_, X, y)
        try:
            self._check_progress(self._resume, X.shape[0])
        except UntrustedFileError as exc:
            raise UntrustedFileError(f"{path}: a checkpoint of other data: {exc}") from None

    # -- a fit from a stream (marginkit.streaming.fit_file) ---------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def _fit_stream(self, stream, classes, data, callback=None):
        """:meth:`fit` with ``shuffle=False`` on data that come in chunks, never whole:
        a stream is learned in its own order, whatever ``shuffle`` says (a stream
        that comes in long runs of one label warns once).

        Used by :func:`marginkit.streaming.fit_file`.

        Parameters
        ----------
        stream : callable
            ``stream()`` starts a pass over the data: an iterable of ``(X, y)`` chunks,
            in the same order every time. Each epoch is one such pass.
        classes : ndarray
            The sorted labels of all the data.
        data : DataSummary
            The data-wide quantities a fit starts from (the radius of the instances for
            ``fit_intercept``, the variance for a kernel's ``gamma="scale"``), so that the
            model is that of :meth:`fit` on the chunks stacked. Under
            :meth:`partial_fit` they come from the first chunk instead.

        Returns
        -------
        self
        """
        self._warn_renamed()
        self._check_streamable()
        check_classification_targets(classes)
        check_two_classes(np.asarray(classes))
        # a stream can turn out bad late (a label outside classes, an index past the
        # width): then the estimator is left as it was, as fit leaves it
        with unchanged_on_error(self):
            self.classes_ = np.asarray(classes)
            self.__dict__.pop("_label_runs", None)
            self.__dict__.pop("_class_weight", None)  # set by the first chunk
            self.n_features_in_ = data.n_features
            self._initialise(data)
            self._update_counts()
            self._stream_epochs(stream, callback)
        return self

    def _check_streamable(self):
        """A ValueError when this estimator's fit cannot be made from a stream (a
        stream is learned in its own order: ``shuffle`` does not apply to it)."""

    def _stream_epochs(self, stream, callback):
        """Passes over a stream, as :meth:`fit`'s epochs: ``max_iter``, or fewer (tol)."""
        plan = self._schedule()
        r = plan.progress()
        for epoch, _ in plan.epochs(r, self._max_iter):
            rows = self._stream_pass(stream)[1]
            plan.reached(r, epoch, rows, rows)
            if callback is not None:
                callback(self, epoch)
        self._end_of_passes(r)

    def _stream_pass(self, stream):
        """One epoch over a stream: the changes (updates, and PUMMA's conflicts) it made,
        and the rows it read."""
        before, rows = self._n_changes(), 0
        for X, y, weights in self._stream_chunks(stream):
            if X.shape[0]:  # (none where every row of the chunk weighs 0)
                self._passes(X, y, [np.arange(X.shape[0])], None, weights=weights)
            rows += X.shape[0]
        return self._n_changes() - before, rows

    def _stream_chunks(self, stream):
        """A pass over a stream: ``(X, y, weights)`` of each chunk, validated, with labels
        among ``classes_``: its rows of weight > 0 (none may be left) and their weights
        (None: 1 each). The class weights are
        fixed by the first chunk, as by the first call of partial_fit. Unlike a fit's,
        a stream's radius and ``gamma="scale"`` come from its scan, rows of weight 0
        included, and its positions (a kernel model's ``support_``) count the rows of
        weight > 0: renumbering them to the file's rows would keep a position per row."""
        for X, y in stream():
            X, y = self._validate_Xy(X, y, reset=False)
            check_known(y, self.classes_)
            fixed = getattr(self, "_class_weight", None)
            fixed = None if fixed is None else np.array(fixed)
            X, y, weights, _, per_class, _ = W.weighed(
                X, y, None, self.class_weight, self.classes_, fixed
            )
            if fixed is None:
                self._class_weight = W.as_stored(per_class)
            self._note_order(y)
            yield X, y, weights

    def _n_changes(self):
        return self.n_corrections_

    # -- the passes: how many, and when they end ------------------------------------
    @property
    def _max_iter(self):
        """``max_iter``, or the value given under a former name."""
        former = former_name(vars(self), self._parameter_constraints)
        return self.max_iter if former is None else former[1]

    def _warn_renamed(self):
        former = former_name(vars(self), self._parameter_constraints)
        if former is not None:
            warn_renamed(former, self.max_iter)

    def _schedule(self):
        """When the passes of this estimator's fit end: a
        :class:`~marginkit._passes.Schedule` of its parameters and traits."""
        return Schedule(
            type(self).__name__,
            self._max_iter,
            getattr(self, "tol", None),
            int(getattr(self, "n_iter_no_change", 1)),  # 1: the first such pass ends them
            self._n_problems,
            self._problem_corrections,
            self._growth,
            noise_ratio=self._traits.noise_ratio,
            quiet_ends=self._ends_when_quiet,
            validation=self.__dict__.get("_validation"),  # early stopping, during a fit
        )

    def _growth(self):
        """Each problem's size, where the passes end when it stops growing (by ``tol``,
        :func:`~marginkit._passes.growth_ends`) rather than when the corrections stop
        falling: None here. ROMMA's soft margin gives the squared norm of its
        hypothesis, which grows at every update and is bounded (an aggressive rule
        corrects about as often in each pass while its hypothesis converges)."""
        return None

    @property
    def _ends_when_quiet(self):
        """Whether the passes of fit end at the first that makes no update, whose model
        is what the algorithm's guarantee is about (aggressive ROMMA with delta > 0;
        PUMMA and the margin Perceptron run their own epochs to it)."""
        return False

    def _made_passes(self, n):
        """``n_iter_``: the passes over the data the last call of fit made (scikit-learn's
        name; 1 for partial_fit). Why an earlier fit's passes ended no longer holds."""
        if not self._traits.own_epochs:  # (theirs is their own count)
            self.n_iter_ = int(n)
        self.__dict__.pop("_stopped_by", None)

    def _end_of_passes(self, r):
        """``n_iter_`` (the passes ``r`` made), why they ended (``_stopped_by``, one of
        :data:`~marginkit._passes.STOPPED`), and the warning of passes that ran out while
        they still improved."""
        self._made_passes(r["epoch"])
        self._stopped_by = self._schedule().end(r)

    _added_params = ADDED_PARAMS

    def __setstate__(self, state):
        # a model saved before some of the parameters: the values that did what it did
        names = self._get_param_names()
        constraints = self._parameter_constraints
        super().__setstate__(with_added_params(state, names, self._added_params, constraints))

    # -- the checks of a loaded model (:mod:`marginkit._loaded`) ----------------------
    def _check_loaded(self):
        """An :class:`~marginkit.persistence.UntrustedFileError` unless this estimator,
        read from a file, is one that its methods and the compiled passes can be given.

        :func:`marginkit.load` calls it on every model it reads: the parameters are
        validated as ``fit`` validates them, and a fitted model has exactly the learned
        attributes a fit sets (``_learned``), each of its type (``_check_fitted``), with
        the widths and numbers of its states those of its classes and features, and its
        counts those of its states (each state by the check registered for its class,
        :mod:`marginkit._state_checks`). A checkpoint's progress is checked too, and again
        against the data it resumes on (:meth:`_check_resume`).
        """
        learned = learned_of(vars(self), self._get_param_names(), self._validate_params)
        if not learned:
            return  # not fitted
        check_learned(learned, *self._learned())
        self._check_fitted()
        read = dict(vars(self))
        self._update_counts()
        check_counts(read, vars(self))
        if "_resume" in learned:
            if type(self._resume) is not dict:
                check.fail("_resume", f"must be a dict, got {type(self._resume).__name__}")
            self._check_progress(self._resume, None)

    def _learned(self):
        """The attributes a fit sets: those a fitted model has, and those it may have."""
        return learned_attributes(self._traits)

    def _check_fitted(self):
        """The learned attributes (``_check_loaded``): here those of every estimator."""
        check_common(vars(self), self._traits.own_epochs)

    # -- the units of the model (:mod:`marginkit._scaling`) ---------------------------
    #: the power of two the instances are divided by before the compiled passes see
    #: them (``_model_units``); the learned value, 0 in models written before it
    _exponent = 0

    def _exponent_of(self, radius):
        """The power of two ``_model_units`` divides by, for data whose instances'
        largest p-norm is ``radius``."""
        return exponent_for(radius, type(self).__name__)

    def _product_shift(self):
        """The power of two by which the products of instances (``x . y``, or the kernel
        values) in the units of the data exceed those in the model's units."""
        return 2 * self._exponent

    def _data_units(self, a, degree):
        """``a`` of the model's units, of ``degree`` in the instances (1 for a margin, 2
        for a product of two), in those of the data: times ``2^(degree shift / 2)``
        (``_product_shift``), where ``a`` is; 0 or inf where it leaves float64."""
        with np.errstate(over="ignore", under="ignore"):
            return times_power_of_two(a, degree * self._product_shift() // 2)

    def _model_lam(self):
        """``lam`` (a 2-norm soft margin's) in the model's units."""
        return in_model_units(self.lam, self._product_shift())

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
        if self._traits.own_epochs:
            return self._fit_by_progress(X, y, callback, sample_weight)
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
        X, y, weights, present, per_class, kept = W.weighed(X, y, sample_weight, self.class_weight)
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
        """The :class:`~marginkit._rows.DataSummary` of the rows a model starts from,
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
        if not hasattr(self, self._traits.state):
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
        X, y, weights, _, per_class, kept = W.weighed(
            X, y, sample_weight, self.class_weight, known, fixed
        )
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

    # -- rows one at a time (RowLearner: the river bridge) ---------------------------
    def _row_learner(self):
        """This fitted estimator's learning one row at a time: a :class:`RowLearner`.
        Here through :meth:`_passes`, as :meth:`partial_fit` goes (a family may give a
        faster one: the model must be the same, bit for bit)."""
        check_is_fitted(self, self._traits.state)
        return RowLearner(self._learn_row, self._predict_row, self._update_counts)

    def _learn_row(self, X, code):
        """:meth:`partial_fit` of the row X of label ``classes_[code]`` without validating
        them: the checks of the state and the undo point of a later call, then its pass."""
        self._check_not_overflowed()
        self._check_unchanged_since_fit()
        undo = self._undo_point()
        if undo is None:
            return self._row_pass(X, code)
        with unchanged_on_error(self, undo):
            return self._row_pass(X, code)

    def _row_pass(self, X, code):
        """The pass of :meth:`_partial_fit_pass` over one row, of a known label."""
        weight = self._row_weight(code)
        if weight == 0.0:
            # a row of weight 0 is the call not made, but for the positions it counts
            self._left_out(np.zeros(0, dtype=np.int64), 1, self._stream_position())
            return
        self._note_label(code)
        weights = None if weight == 1.0 else np.array([weight])
        self._passes(X, self.classes_[code : code + 1], ONE_ROW, None, weights=weights)
        self._made_passes(1)

    def _row_weight(self, code):
        """The weight of a row of label ``classes_[code]`` (its class's, a row's own being
        1), as :func:`~marginkit._weights.weighed` gives it."""
        return float(self._fixed_class_weights()[code])

    def _predict_row(self, X):
        """The index into ``classes_`` of the label of the row X (validated anew here)."""
        scores = self._scores(X)
        return int(scores[0] > 0) if scores.ndim == 1 else int(np.argmax(scores[0]))

    def _note_label(self, code):
        """:meth:`_note_order` of one row of label ``classes_[code]``
        (:func:`marginkit._order.observe_one`)."""
        record = self.__dict__.get("_label_runs")
        if record is None:
            self._label_runs = record = _order.new_record(len(self.classes_))
        _order.observe_one(self, record, code, self.classes_)

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


class WeightsOverflowError(ValueError):
    """A state's weights overflowed (:func:`check_finite_state`)."""
