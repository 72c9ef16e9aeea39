"""The scikit-learn front end shared by the linear online classifiers.

An estimator here only validates, maps labels to one-vs-rest +1/-1 problems, and
calls a compiled pass (see :mod:`marginkit._core.linear`) once per binary problem and
epoch; it never loops over samples in Python.
"""

import hashlib
import hmac
import time
import warnings
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, InvalidParameterError, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
    unique_labels,
)
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from . import _checks as check
from ._core import linear as L
from ._core.arrays import answers_in_namespace, move_to, namespace, on_host, to_numpy
from ._core.state import PNormState
from ._utils import (
    DataSummary,
    augmented_norms_p,
    csr_arrays,
    exponent_of,
    inverse_or_zero,
    power_of_two_scaled,
    row_norms_p,
    times_power_of_two,
)
from .persistence import UntrustedFileError, trusted_type

#: The constraint of a former name of ``max_iter`` (deprecated in 0.2, removed in 0.3).
RENAMED = [Interval(Integral, 1, None, closed="left"), Hidden(StrOptions({"deprecated"}))]


#: ``tol``: when fit's passes end (see ``OnlineClassifier._pass_ends``)
TOL = [Interval(Real, 0, None, closed="left"), None]
#: The largest p of the p-norm algorithms (ALMA_p, PUMMA_p): up to it ALMA equals the
#: slow reference to 1e-11; from about p = 200 the p-th powers of a weight vector's
#: coordinates leave float64's range (its hypothesis drifts, and at p = 1000 stayed 0).
#: 2 ln d, the "log" choice, stays below it for any d under 10^32.
P_MAX = 150.0

PASSES_DOC = """tol : float >= 0 or None, default=1e-3
        When :meth:`fit` stops before ``max_iter`` passes: after a pass in which no
        one-vs-rest problem made fewer corrections than in its best earlier pass by more
        than ``tol * n_samples`` (the data no longer change how well the model fits them,
        scikit-learn's rule for its ``Perceptron``), or made no correction at all (the
        hypothesis can no longer change). When ``max_iter`` passes end while the
        corrections still fell, a :class:`~sklearn.exceptions.ConvergenceWarning` says
        so. None makes every one of the ``max_iter`` passes, without the warning, as
        the papers' runs do.
    n_epochs : int >= 1
        Deprecated: the former name of ``max_iter``, taken (with a ``FutureWarning``)
        until marginkit 0.3."""

KEEP_CORRECTIONS_DOC = """keep_corrections : bool, default=False
        Keep every correction (the non-zeros of the corrected instances and their
        coefficients), which the voted output replays, so that ``output`` can be set to
        ``"voted"`` after fitting. The model then grows with its corrections, and a saved
        one contains the corrected rows; without it, memory and saved models are
        O(n_features) however long the stream. ``output="voted"`` at fit time keeps
        them too."""

_EMPTY_F = np.zeros(0)
_EMPTY_I = np.zeros(1, dtype=np.int32)
_EMPTY_U = np.zeros(0, dtype=np.uint32)
_EMPTY_X = np.zeros((1, 1))


#: Instances whose largest entry lies outside [2^-UNIT_RANGE, 2^UNIT_RANGE] are scaled
#: by a power of two into [0.5, 1) before an algorithm that normalises them sees them
#: (:func:`unit_scaled`)
UNIT_RANGE = 64


def unit_scaled(X, aug):
    """``(X 2^-e, aug 2^-e)``: the instances ``(x, aug)`` scaled by the power of two that
    brings their largest entry into [0.5, 1) when it lies outside [2^-UNIT_RANGE,
    2^UNIT_RANGE] (:func:`marginkit._utils.power_of_two_scaled`); else as given.

    An algorithm that normalises its instances (ALMA) sees the same ``x / ||x||`` either
    way, but its products ``w . x`` neither overflow (features near 1e300) nor fall
    into subnormal numbers (near 1e-300).
    """
    X, e = power_of_two_scaled(X, aug, unless_within=UNIT_RANGE)
    return X, float(np.ldexp(aug, -e))


def still_improving(made, fewest, tol, n):
    """``tol``'s rule: whether the corrections a pass over ``n`` rows ``made`` (of each
    problem) fell below the ``fewest`` of any earlier pass by more than ``tol * n`` in
    some problem (any fall when ``tol`` is None), and were not none."""
    margin = 0.0 if tol is None else tol * n
    return bool(np.any(made < fewest - margin)) and bool(np.any(made))


class _Batch:
    """One validated batch, in the form the compiled loops take; with ``unit``, the
    instances of an algorithm that normalises them, scaled by :func:`unit_scaled`."""

    def __init__(self, X, p, aug, unit=False):
        if unit:
            X, aug = unit_scaled(X, aug)
        self.n_samples, self.n_features = X.shape
        self.is_sparse = sp.issparse(X)
        if self.is_sparse:
            self.indptr, indices, self.data = csr_arrays(X)
            # unsigned: the compiled loops then skip numba's negative-index wraparound
            self.indices = indices.view(np.uint32 if indices.dtype == np.int32 else np.uint64)
            self.X = _EMPTY_X
            self.row_nnz = np.diff(self.indptr)
        else:
            self.X = np.ascontiguousarray(X, dtype=np.float64)
            self.indptr, self.indices, self.data = _EMPTY_I, _EMPTY_U, _EMPTY_F
            self.row_nnz = None
        self.aug = float(aug)
        # 1 / ||(x, aug)||_p, computed by the compiled pass on first sight of a row
        self.xscale = np.full(self.n_samples, -1.0)

    def max_row_nnz(self, rows):
        extra = 1 if self.aug != 0.0 else 0
        if self.row_nnz is None:
            return self.n_features + extra
        return int(self.row_nnz[rows].max()) + extra


class _Throttled:
    """``write()`` when the time since the last write is at least ``1 / share`` times
    what that write took: writing then takes at most about ``share`` of the time."""

    def __init__(self, write, share=0.05):
        self.write, self.share = write, share
        self.cost, self.done, self.pending = 0.0, time.perf_counter(), False

    def __call__(self):
        if (time.perf_counter() - self.done) * self.share >= self.cost:
            start = time.perf_counter()
            self.write()
            self.done = time.perf_counter()
            self.cost, self.pending = self.done - start, False
        else:
            self.pending = True

    def flush(self):
        if self.pending:
            self.write()
            self.pending = False


@trusted_type
class EpochOrders:
    """The order of the rows in every epoch of a fit, made when asked for.

    ``orders[e]`` is ``random_state``'s e-th permutation of ``range(n)`` (the rows in
    turn without ``shuffle``), the orders :meth:`OnlineClassifier.fit` presents: a
    checkpoint stores the generator's state at the start of the fit, a few kilobytes,
    instead of ``n_epochs x n`` indices. Epochs are asked for in increasing order.
    ``random_state`` is advanced past all the permutations at once, as a fit that made
    them at the start would leave it. An int seeds a generator of the fit's own; None
    draws that seed from numpy's global generator, so that each fit shuffles anew.
    """

    def __init__(self, n, n_epochs, shuffle, random_state):
        self.n, self.n_epochs, self.shuffle = int(n), int(n_epochs), bool(shuffle)
        self.start = None
        if self.shuffle:
            if random_state is None:
                random_state = int(check_random_state(None).randint(np.iinfo(np.int32).max))
            rng = check_random_state(random_state)
            self.start = rng.get_state()[1:]  # the Mersenne Twister's keys and position
            if isinstance(random_state, np.random.RandomState):
                for _ in range(self.n_epochs):
                    rng.permutation(self.n)
        self._rng, self._made, self._last = None, 0, None

    def __len__(self):
        return self.n_epochs

    def __getitem__(self, epoch):
        if not self.shuffle:
            return np.arange(self.n)
        if self._rng is None or epoch < self._made - 1:
            self._rng = np.random.RandomState()
            self._rng.set_state(("MT19937", *self.start))
            self._made = 0
        while self._made <= epoch:
            self._last = self._rng.permutation(self.n)
            self._made += 1
        return self._last

    def __getstate__(self):
        return {
            "n": self.n,
            "n_epochs": self.n_epochs,
            "shuffle": self.shuffle,
            "start": self.start,
        }

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._rng, self._made, self._last = None, 0, None

    def _check_loaded(self, where, n_epochs, shuffle, n=None):
        """The orders of ``n_epochs`` epochs (shuffled or not) over ``n`` rows (any number
        when None; returned): the generator's state one that numpy reads within its key."""
        w = f"{where}."
        check.attributes(
            self, where, ("n", "n_epochs", "shuffle", "start", "_rng", "_made"), ("_last",)
        )
        got = check.integer(self.n, w + "n", 1)
        n = got if n is None else check.equal(got, w + "n", n)
        check.equal(check.integer(self.n_epochs, w + "n_epochs", 1), w + "n_epochs", n_epochs)
        check.equal(check.flag(self.shuffle, w + "shuffle"), w + "shuffle", bool(shuffle))
        if not self.shuffle:
            check.equal(self.start, w + "start", None)
        elif type(self.start) is not tuple or len(self.start) != 4:
            check.fail(w + "start", "must be the state of a Mersenne Twister")
        else:
            check.mt_state(*self.start, w + "start")
        return n


class OnlineClassifier(ClassifierMixin, BaseEstimator):
    """Validation, labels, fit / partial_fit and predict shared by every online classifier.

    Subclasses define ``_initialise(data)`` (fresh learned state from a
    :class:`~marginkit._utils.DataSummary`, ``classes_`` known),
    ``_passes(X, y, orders, callback)`` (one pass per order over the rows of X, then
    ``callback(self, epoch)`` if given) and
    ``decision_function``; ``_state_attr`` names the attribute that exists once fitted.
    """

    _state_attr = "_states"

    #: the former names of ``max_iter``: taken until marginkit 0.3, with a FutureWarning
    _renamed = ("n_epochs",)

    def _former_name(self):
        """``(name, value)`` of passes given under a former name of ``max_iter``, or None."""
        for old in self._renamed:
            value = getattr(self, old, "deprecated")
            if not (isinstance(value, str) and value == "deprecated"):
                return old, value
        return None

    @property
    def _max_iter(self):
        """``max_iter``, or the value given under a former name."""
        former = self._former_name()
        return self.max_iter if former is None else former[1]

    def _warn_renamed(self):
        former = self._former_name()
        if former is not None:
            old, value = former
            warnings.warn(
                f"{old} was renamed max_iter in marginkit 0.2 and will be removed in 0.3; "
                f"pass max_iter={value!r} instead (max_iter={self.max_iter!r} is ignored "
                "while it is set).",
                FutureWarning,
                stacklevel=3,
            )

    #: whether ``n_iter_`` counts the passes of the last fit here (PUMMA and the margin
    #: Perceptron count their own: they stop when the data no longer change the model)
    _counts_passes = True

    def _made_passes(self, n):
        """``n_iter_``: the passes over the data the last call of fit made (scikit-learn's
        name; 1 for partial_fit)."""
        if self._counts_passes:
            self.n_iter_ = int(n)

    # -- when the passes of fit end (tol) ------------------------------------------
    #: the keys of a fit's progress that ``tol`` decides on (``_fresh_passes``)
    _pass_keys = ("at_start", "fewest", "improving", "ended")

    def _fresh_passes(self):
        """How a fit's passes went, for ``tol``: each problem's corrections when the
        current pass began, the fewest any finished pass made, whether the last one still
        made fewer by more than ``tol * n``, and whether the passes ended."""
        return {
            "at_start": self._problem_corrections(),
            "fewest": np.full(self._n_problems, np.inf),
            "improving": True,
            "ended": False,
        }

    def _pass_ends(self, r, n):
        """Record a finished pass over ``n`` rows in ``r``, and whether the passes end
        there (``r["ended"]``)."""
        counts = self._problem_corrections()
        made = counts - r["at_start"]
        tol = getattr(self, "tol", None)
        r["improving"] = still_improving(made, r["fewest"], tol, n)
        r["at_start"], r["fewest"] = counts, np.minimum(r["fewest"], made)
        r["ended"] = tol is not None and not r["improving"]
        if self._ends_when_quiet and not np.any(made):
            r["ended"] = True  # every later pass would make no update either

    #: whether the passes of fit end at the first that makes no update, whose model is
    #: what the algorithm's guarantee is about (aggressive ROMMA with delta > 0; PUMMA
    #: and the margin Perceptron run their own epochs to it)
    _ends_when_quiet = False

    def _reached_quiet(self, r):
        """Whether every problem has made a pass without update (a problem's first such
        pass is followed by none with an update: its hypothesis no longer changes)."""
        return bool(np.all(r["fewest"] == 0))

    def _end_of_passes(self, r):
        """``n_iter_`` (the passes ``r`` made), and the warning of passes that ran out
        while they still improved."""
        self._made_passes(r["epoch"])
        if self._ends_when_quiet and getattr(self, "tol", None) is None:
            if not self._reached_quiet(r) and r["epoch"] == self._max_iter:
                warnings.warn(
                    f"{type(self).__name__} made no pass without update within "
                    f"max_iter={self._max_iter} passes: its margin guarantee (at least "
                    "1 - delta times the best margin) holds after one. The data may not "
                    "be separable; increase max_iter, or check the data.",
                    ConvergenceWarning,
                    stacklevel=5,
                )
            return
        ran_out = r["epoch"] == self._max_iter > 1 and r["improving"]
        if ran_out and getattr(self, "tol", None) is not None:
            warnings.warn(
                f"{type(self).__name__}: the corrections still fell in the last of "
                f"max_iter={self._max_iter} passes (by more than tol * n_samples); more "
                "passes may fit the data better. Increase max_iter, or set tol=None to "
                "make max_iter passes without this check.",
                ConvergenceWarning,
                stacklevel=5,
            )

    def _progress_of(self, resume):
        """The progress passes go on from: a checkpoint's, or a fresh one."""
        return resume if resume is not None else {"epoch": 0, "pos": 0, **self._fresh_passes()}

    @staticmethod
    def _epochs(r, n_epochs):
        """``(epoch, first position)`` of each epoch still to make from progress ``r``."""
        while r["epoch"] < n_epochs and not r["ended"]:
            yield r["epoch"], r["pos"]

    def _reached(self, r, epoch, pos, n):
        """Progress ``r`` reached row ``pos`` of ``n`` in ``epoch``; at a pass's end, the
        next one (or the end of the passes, by ``tol``)."""
        if pos < n:
            r["epoch"], r["pos"] = epoch, pos
        else:
            self._pass_ends(r, n)
            r["epoch"], r["pos"] = epoch + 1, 0

    def _check_passes(self, r):
        """The ``tol`` record of a loaded checkpoint's progress."""
        C = self._n_problems
        check.array(r["at_start"], "_resume['at_start']", np.int64, (C,), within=(0, 2**62))
        fewest = check.array(r["fewest"], "_resume['fewest']", np.float64, (C,))
        if np.any(np.isnan(fewest) | (fewest < 0)):
            check.fail("_resume['fewest']", "must hold counts of corrections, or inf")
        check.flag(r["improving"], "_resume['improving']")
        check.flag(r["ended"], "_resume['ended']")

    #: parameters added after models were first saved, with the value that does what a
    #: model saved before them did (tol: it made its max_iter passes)
    _added_params = {"tol": None}

    def __setstate__(self, state):
        # a model saved before max_iter: its passes under their former name
        state = dict(state)
        for name, before in self._added_params.items():
            if name in self._get_param_names() and name not in state:
                state[name] = before
        for old in self._renamed:
            if "max_iter" not in state and old in state:
                state["max_iter"], state[old] = state[old], "deprecated"
        super().__setstate__(state)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        trusted_type(cls, model=True)  # marginkit's own estimators load from files

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, callback=None, checkpoint=None, checkpoint_every=None):
        """Train from scratch for ``max_iter`` passes (PUMMA and the margin Perceptron:
        until they converge, or at most ``max_iter``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
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
        if checkpoint is None and checkpoint_every is not None:
            raise ValueError("checkpoint_every needs a checkpoint path")
        if checkpoint is not None and isinstance(
            getattr(self, "random_state", None), np.random.RandomState
        ):
            raise ValueError(
                "a fit with checkpoints needs random_state to be an int or None: a "
                "generator object cannot be told from another when the fit resumes, so "
                "its orders could not be those of an uninterrupted run"
            )
        if checkpoint is not None and callable(getattr(self, "kernel", None)):
            # said before training, not at the first checkpoint
            raise TypeError(
                "a fit with a callable kernel cannot write checkpoints (a function is code, "
                "not data, and marginkit.save does not store it); use one of the named "
                "kernels, or fit without checkpoint"
            )
        # a fit that fails (data found bad late, weights that overflow, an interrupt)
        # leaves the estimator as it was: a fit makes new state, never changes the old
        with unchanged_on_error(self):
            if checkpoint is None:
                return self._fit(X, y, callback)
            return self._fit_with_checkpoints(X, y, callback, checkpoint, checkpoint_every)

    def _fit_with_checkpoints(self, X, y, callback, checkpoint, every):
        from pathlib import Path

        from .persistence import load, save

        if every is not None and (not isinstance(every, Integral) or every < 1):
            raise ValueError(f"checkpoint_every must be an integer >= 1, got {every!r}")
        path = Path(checkpoint)
        resuming = path.exists()
        # X is checked as for a new fit, whatever this estimator learned before: a
        # checkpoint's model replaces it
        X, y = self._validate_Xy(X, y, reset=True)
        fingerprint = _fingerprint(X, y)
        if resuming:
            saved = load(path)
            if type(saved) is not type(self) or _settings(self) != _settings(saved):
                raise ValueError(
                    f"{path} is a checkpoint of {saved!r}, not of {self!r}: resuming it "
                    "would not give this estimator's model"
                )
            resume = getattr(saved, "_resume", None)
            if resume is None:
                raise ValueError(
                    f"{path} holds a model, not a checkpoint (a fit's progress): give fit "
                    "a new path, or load the model with marginkit.load"
                )
            saved._check_resume(path, X, y)  # their width, classes, format, rows
            if not hmac.compare_digest(resume["fingerprint"], fingerprint):
                raise ValueError(f"{path} is a checkpoint of training on other data")
            names = getattr(self, "feature_names_in_", None)
            theirs = getattr(saved, "feature_names_in_", None)
            if (names is None) != (theirs is None) or (
                names is not None and not np.array_equal(names, theirs)
            ):
                raise ValueError(
                    f"{path} is a checkpoint of training on data with "
                    + ("no feature names" if theirs is None else f"features {list(theirs)}")
                    + ", not on these data's "
                    + ("unnamed features" if names is None else f"{list(names)}")
                )
            verbose = self.verbose
            self.__dict__.update(saved.__dict__)
            self.verbose = verbose
        else:
            X, y = self._start_fit(X, y, validated=True)  # validated above, with reset
            self._resume = {"fingerprint": fingerprint, **self._fresh_progress(X)}
        write = _Throttled(lambda: save(self, path)) if every is None else lambda: save(self, path)
        self._train_resumable(X, y, callback, write, every)
        if every is None:
            write.flush()  # the finished state, if the last epoch's was skipped
        if self._counts_passes:
            self._end_of_passes(self._resume)
        del self._resume
        return self

    def _fresh_progress(self, X):
        """Where a resumable fit starts: the orders of every epoch, and position 0."""
        orders = EpochOrders(X.shape[0], self._max_iter, self.shuffle, self.random_state)
        return {"orders": orders, "epoch": 0, "pos": 0, **self._fresh_passes()}

    def _train_resumable(self, X, y, callback, save, every):
        """Train from ``self._resume``, calling ``save()`` at each checkpoint."""
        orders = self._resume["orders"]
        self._passes(X, y, orders, callback, resume=self._resume, save=save, every=every)

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit_stream(self, stream, classes, data, callback=None):
        """:meth:`fit` with ``shuffle=False`` on data that come in chunks, never whole.

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
        _check_two_classes(np.asarray(classes))
        # a stream can turn out bad late (a label outside classes, an index past the
        # width): then the estimator is left as it was, as fit leaves it
        with unchanged_on_error(self):
            self.classes_ = np.asarray(classes)
            self.n_features_in_ = data.n_features
            self._initialise(data)
            self._update_counts()
            self._stream_epochs(stream, callback)
        return self

    def _check_streamable(self):
        """A ValueError when this estimator's fit cannot be made from a stream."""
        if self.shuffle:
            raise ValueError(
                "shuffle=True needs all the data in memory; a stream is learned in its "
                "own order (shuffle the file beforehand, or set shuffle=False)"
            )

    def _stream_epochs(self, stream, callback):
        """Passes over a stream, as :meth:`fit`'s epochs: ``max_iter``, or fewer (tol)."""
        r = self._progress_of(None)
        for epoch, _ in self._epochs(r, self._max_iter):
            rows = self._stream_pass(stream)[1]
            self._reached(r, epoch, rows, rows)
            if callback is not None:
                callback(self, epoch)
        self._end_of_passes(r)

    def _stream_pass(self, stream):
        """One epoch over a stream: the changes (updates, and PUMMA's conflicts) it made,
        and the rows it read."""
        before, rows = self._n_changes(), 0
        for X, y in self._stream_chunks(stream):
            self._passes(X, y, [np.arange(X.shape[0])], None)
            rows += X.shape[0]
        return self._n_changes() - before, rows

    def _stream_chunks(self, stream):
        """A pass over a stream: its chunks, validated, with labels among ``classes_``."""
        for X, y in stream():
            X, y = self._validate_Xy(X, y, reset=False)
            _check_known(y, self.classes_)
            yield X, y

    def _n_changes(self):
        return self.n_corrections_

    # -- checking a loaded model -----------------------------------------------------
    def _learned(self):
        """The attributes a fit sets: those a fitted model has, and those it may have."""
        required = {"classes_", "n_features_in_", "n_trials_", "_fold_below", self._state_attr}
        required |= {"n_corrections_", "n_corrections_per_class_"}
        # _exponent: not in models written before it
        optional = {"feature_names_in_", "input_format_", "_resume", "_exponent"}
        # n_iter_: not in models written before it
        return required, optional | ({"n_iter_"} if self._counts_passes else set())

    def _check_loaded(self):
        """An :class:`~marginkit.persistence.UntrustedFileError` unless this estimator,
        read from a file, is one that its methods and the compiled passes can be given.

        :func:`marginkit.load` calls it on every model it reads: the parameters are
        validated as ``fit`` validates them, and a fitted model has exactly the learned
        attributes a fit sets, each of its type, with the widths and numbers of its
        states those of its classes and features, and its counts those of its states
        (each state checks itself, see ``_check_loaded`` beside each state class). A
        checkpoint's progress is checked too, and again against the data it resumes on
        (:meth:`_check_resume`).
        """
        params = set(self._get_param_names())
        missing = sorted(params - set(vars(self)))
        if missing:
            check.fail("the model", f"lacks the parameters {', '.join(missing)}")
        try:
            self._validate_params()
        except InvalidParameterError as exc:
            raise UntrustedFileError(f"parameters: {exc}") from None
        learned = set(vars(self)) - params
        if not learned:
            return  # not fitted
        required, optional = self._learned()
        missing = sorted(required - learned)
        if missing:
            check.fail("the model", f"is fitted but lacks {', '.join(missing)}")
        extra = sorted(learned - required - optional)
        if extra:
            check.fail("the model", f"has attributes that marginkit does not write: {extra}")
        self._check_fitted()
        self._check_counts()
        if "_resume" in learned:
            if type(self._resume) is not dict:
                check.fail("_resume", f"must be a dict, got {type(self._resume).__name__}")
            self._check_progress(self._resume, None)

    def _check_fitted(self):
        """The learned attributes (``_check_loaded``): here those of every estimator."""
        classes = self.classes_
        # labels of object dtype (pandas' strings) are kept as scikit-learn keeps them
        strings = (
            type(classes) is np.ndarray
            and classes.dtype == object
            and all(type(c) is str for c in classes.ravel())
        )
        if type(classes) is not np.ndarray or not (strings or classes.dtype.kind in "biufU"):
            check.fail("classes_", "must be an array of numbers or strings")
        check.array(classes, "classes_", classes.dtype, (None,), finite=classes.dtype.kind == "f")
        _check_two_classes_loaded(classes)
        n = check.integer(self.n_features_in_, "n_features_in_", 1)
        if self._counts_passes and "n_iter_" in vars(self):
            check.integer(self.n_iter_, "n_iter_", 1)
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            check.array(names, "feature_names_in_", object, (n,))
            if not all(type(name) is str for name in names):
                check.fail("feature_names_in_", "must hold strings")
        fmt = getattr(self, "input_format_", None)
        if fmt is not None:
            # how marginkit.tasks.train read the training file (its keys and their types)
            known = {"format": str, "n_features": int, "zero_based": bool, "label_column": int}
            if type(fmt) is not dict or not all(
                type(k) is str and k in known and type(v) is known[k] for k, v in fmt.items()
            ):
                check.fail(
                    "input_format_",
                    f"must be a dict of {', '.join(known)} to their values (a str, an int, "
                    "a bool, an int)",
                )
            if fmt.get("format") not in ("svmlight", "csv") or "n_features" not in fmt:
                check.fail("input_format_", "must say the format (svmlight or csv) and width")
            if fmt["format"] == "svmlight" and "zero_based" not in fmt:
                check.fail("input_format_", "of svmlight must say zero_based")

    def _check_counts(self):
        """The counts of a loaded model are those of its states (``_update_counts``)."""
        before = dict(vars(self))
        self._update_counts()
        for name, value in vars(self).items():
            old = before.get(name)
            if value is old:
                continue  # not a count
            if isinstance(value, np.ndarray):
                same = (
                    type(old) is np.ndarray
                    and old.dtype == value.dtype
                    and np.array_equal(old, value)
                )
            else:
                same = type(old) in (int, np.int64) and old == value
            if not same:
                check.fail(name, f"must be {value!r}, what the states count, got {old!r}")

    def _check_progress(self, resume, n):
        """A checkpoint's progress (``_resume``): the orders of the epochs over ``n``
        rows (any number when None), and a position in them; the fingerprint of the data.
        """
        names = {"fingerprint", "orders", "epoch", "pos", *self._pass_keys}
        check.attributes(resume, "_resume", names, self._cache_keys)
        self._check_passes(resume)
        check_fingerprint(resume["fingerprint"])
        orders = check.instance(resume["orders"], "_resume['orders']", EpochOrders)
        n = orders._check_loaded("_resume['orders']", self._max_iter, self.shuffle, n)
        epoch = check.integer(resume["epoch"], "_resume['epoch']", 0, self._max_iter)
        check.integer(resume["pos"], "_resume['pos']", 0, n - 1 if epoch < self._max_iter else 0)
        return n

    #: the keys a checkpoint's progress may add (the kernel estimators' caches)
    _cache_keys = ()

    def _check_resume(self, path, X, y):
        """A ValueError unless this checkpoint (loaded, so checked) resumes on ``X, y``: the
        data it was made for, by their width, classes and number of rows."""
        n, width = X.shape
        if self.n_features_in_ != width:
            raise ValueError(
                f"{path} is a checkpoint of training on {self.n_features_in_} features, "
                f"not on these data's {width}"
            )
        classes = np.unique(y)
        if not np.array_equal(classes, self.classes_):
            raise ValueError(
                f"{path} is a checkpoint of training on the classes {self.classes_}, not on "
                f"these data's {classes}"
            )
        try:
            self._check_progress(self._resume, n)
        except UntrustedFileError as exc:
            raise UntrustedFileError(f"{path}: a checkpoint of other data: {exc}") from None

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
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

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, classes)

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

    #: the largest ||x||^2, in the model's units, that an algorithm that does not
    #: normalise takes: sums of up to 1e50 updates of such instances still fit in a float
    MAX_SQUARED_NORM = 1e250

    #: how the weights follow the scale of the instances, w(c x) = c^k w(x): k = 1 for
    #: the sums of instances of the Perceptron and the margin Perceptron, -1 for the
    #: functional margin of 1 of ROMMA and PUMMA (their ``w . x`` does not change)
    _weight_degree = 1

    #: the power of two the instances are divided by before the compiled passes see
    #: them (``_model_units``): 0 for models written before it
    _exponent = 0

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

    def _other_scale(self, which, measure):
        """The ValueError of rows too far from the scale of a model's first fit to
        learn from or score (``measure``: how far)."""
        return ValueError(
            f"The features are too {which} for {type(self).__name__}: {measure} the scale "
            "of the data this model was first fit on, and products of such instances "
            "leave float64. Scale these features as those of the first fit, or fit anew "
            "on them."
        )

    def _exponent_of(self, radius):
        """The power of two :meth:`_model_units` divides by, for data whose instances'
        largest p-norm is ``radius``: none when that lies within [2^-UNIT_RANGE,
        2^UNIT_RANGE]."""
        if not np.isfinite(radius):
            raise ValueError(
                f"The features are too large for {type(self).__name__}: the norm of an "
                "instance overflows float64. Divide the features by a common factor."
            )
        if 0.0 < radius < 2.0**-1000:
            raise ValueError(
                f"The features are too small for {type(self).__name__}: the largest norm "
                f"of an instance is {radius:.3g}, a subnormal number, whose digits float64 "
                "has already lost. Multiply the features by a common factor."
            )
        return exponent_of(radius, UNIT_RANGE)

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

    def _fit(self, X, y, callback=None):
        X, y = self._start_fit(X, y)
        orders = EpochOrders(X.shape[0], self._max_iter, self.shuffle, self.random_state)
        self._end_of_passes(self._passes(X, y, orders, callback))
        return self

    def _fit_by_progress(self, X, y, callback=None):
        """A fit made by the resumable loop (``_fresh_progress``, ``_train_resumable``)
        with no checkpoint: for the estimators whose epochs that loop decides."""
        X, y = self._start_fit(X, y)
        self._resume = self._fresh_progress(X)
        self._train_resumable(X, y, callback, None, None)
        del self._resume
        return self

    def _start_fit(self, X, y, validated=False):
        """Validated X and y of a fresh fit, with ``classes_`` and the state set up."""
        if not validated:
            X, y = self._validate_Xy(X, y, reset=True)
        classes = np.unique(y)
        _check_two_classes(classes)
        self.classes_ = classes
        self._initialise(DataSummary.of(X))
        return X, y

    def _partial_fit(self, X, y, classes):
        if not hasattr(self, self._state_attr):
            # the first call fails as a fit does: leaving no half-made model
            with unchanged_on_error(self):
                return self._partial_fit_pass(X, y, classes, first=True)
        self._check_not_overflowed()
        self._check_unchanged_since_fit()
        undo = self._undo_point()
        if undo is None:
            return self._partial_fit_pass(X, y, classes, first=False)
        with unchanged_on_error(self, undo):
            return self._partial_fit_pass(X, y, classes, first=False)

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

    def _partial_fit_pass(self, X, y, classes, first):
        X, y = self._validate_Xy(X, y, reset=first)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            known = unique_labels(classes)
            _check_two_classes(known)
        else:
            # raises when classes differ from those of the first call
            _check_partial_fit_first_call(self, classes)
            known = self.classes_
        _check_known(y, known)
        if first:
            self.classes_ = known
            self._initialise(DataSummary.of(X))
        self._passes(X, y, [np.arange(X.shape[0])], None)
        self._made_passes(1)
        return self

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
        if self.fit_intercept:
            radius = data.max_norm(self.p_)
            self.R_ = radius if radius > 0 else 1.0
        else:
            self.R_ = 0.0
        n_problems = self._n_problems
        self._states = [PNormState(d, self.p_, self._keeps_log) for _ in range(n_problems)]
        self.n_corrections_per_class_ = np.zeros(n_problems, dtype=np.int64)
        self.n_corrections_ = 0
        self.n_trials_ = 0
        self._fold_below = _fold_threshold(self.p_)

    #: the class of the learned state of each binary problem
    _state_class = PNormState

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
            state._check_loaded(f"_states[{j}]", d, p)

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
        return L.linear_pass(rows, y_pm, order, start, rule, norm, state.weights(), state.log())

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

    def _batch(self, X):
        """The compiled passes' form of training rows X, in the model's units."""
        X = self._model_units(X, training=True)
        return _Batch(X, self.p_, self._model_aug(), self._normalises)

    def _passes(self, X, y, orders, callback, resume=None, save=None, every=None):
        """The passes (until ``tol`` ends them); with ``resume``, from its (epoch, pos),
        calling ``save`` every ``every`` trials (and at the end of each epoch) after
        updating it. Returns the progress (``resume``, or a fresh one)."""
        batch = self._batch(X)
        targets = self._targets(y)
        n = X.shape[0]
        step = n if every is None else int(every)
        r = self._progress_of(resume)
        with self._progress(len(orders) * len(self._states), "pass") as bar:
            for epoch, lo in self._epochs(r, len(orders)):
                order = np.ascontiguousarray(orders[epoch], dtype=np.int64)
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
                self._update_counts()
                if callback is not None:
                    callback(self, epoch)
            ended_early(bar, (len(orders) - r["epoch"]) * len(self._states))
        return r

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
        if self.output == "voted":
            raise AttributeError("coef_ is not defined for output='voted' (a vote of hypotheses)")
        return self._split(self._weights(), self._aug())[0]

    @property
    def intercept_(self):
        """Bias term(s), shape (n_problems,): ``-R_`` times the bias coordinate's weight."""
        check_is_fitted(self, "_states")
        if self.output == "voted":
            raise AttributeError(
                "intercept_ is not defined for output='voted' (a vote of hypotheses)"
            )
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
        trials, in [-1, 1]. At extreme feature scales ``w . x + b`` can leave float64
        (0 or inf) where :meth:`predict` still tells the classes apart.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        scores = self._scores(X)
        if self.output == "voted":
            return scores
        return self._data_units(scores, self._weight_degree + 1)

    def predict(self, X):
        """Class labels: sign for two classes, argmax of the outputs otherwise (of the
        scores in the model's units, whose signs and order those of
        :meth:`decision_function` are, and which neither overflow nor underflow)."""
        xp, device = namespace(X)
        scores = self._scores(X)
        return self._labels(scores if xp is None else move_to(scores, xp=xp, device=device))


def _settings(est):
    """The parameters that decide a model, comparable across estimators (``verbose``
    left out)."""
    params = est.get_params()
    params.pop("verbose", None)
    return repr(params)


def _fingerprint(X, y):
    """A digest of the training data, to tell a checkpoint's data from other data."""
    digest = hashlib.sha256()
    arrays = [X.data, X.indices, X.indptr] if sp.issparse(X) else [to_numpy(X)]
    for a in [*arrays, np.asarray(y).astype(str)]:
        digest.update(np.ascontiguousarray(a).tobytes())
    digest.update(repr(X.shape).encode())
    return digest.hexdigest()


@contextmanager
def unchanged_on_error(est, undo=None):
    """Run the block; if it raises (an interrupt included), put back the estimator's
    attributes as they were before it. For a block that sets new attributes rather than
    changing the objects they hold (a fit, which makes its state anew), or whose changes
    in place ``undo`` takes back (:meth:`OnlineClassifier._undo_point`)."""
    before = dict(est.__dict__)
    try:
        yield
    except BaseException:
        if undo is not None:
            undo()
        est.__dict__.clear()
        est.__dict__.update(before)
        raise


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
        raise ValueError(
            f"{type(est).__name__}'s weights overflowed{when}: on data that are not "
            "separable its hypothesis grows without bound. Use a soft margin (PUMMA's "
            "lam > 0), fewer epochs, or ALMA, whose hypothesis stays in the unit ball"
            + ("; then fit anew." if earlier else ".")
        )


def _fold_threshold(p):
    """The scale below which (and beyond whose inverse) the passes fold it into v, before
    S = sum |v|^p nears overflow (s^p < 1e-200)."""
    return float(np.exp(-460.0 / p))


def check_epoch_loop(resume, n, counter):
    """The progress of a loop of epochs that draws each epoch's order from ``rng``
    (PUMMA's, the margin Perceptron's): ``pos`` in the epoch's ``order`` of ``n`` rows,
    ``counter`` (what the epoch counts so far) and ``done``; ``order`` and ``counter``
    may be missing at the start of an epoch only."""
    check.random_state(resume["rng"], "_resume['rng']")
    check.flag(resume["done"], "_resume['done']")
    pos = check.integer(resume["pos"], "_resume['pos']", 0, max(n - 1, 0))
    if "order" in resume:
        order = check.array(resume["order"], "_resume['order']", np.int64, (n,), within=(0, n))
        if n and np.bincount(order, minlength=n).max() > 1:
            check.fail("_resume['order']", f"must be an order of the {n} rows")
    elif pos:
        check.fail("_resume", "lacks the order of the epoch it is in")
    if counter in resume:
        check.integer(resume[counter], f"_resume[{counter!r}]", 0)
    elif pos:
        check.fail("_resume", f"lacks the {counter!r} of the epoch it is in")


def check_fingerprint(value):
    """A fingerprint as :func:`_fingerprint` makes it: 64 hexadecimal digits."""
    if (
        type(value) is not str
        or len(value) != 64
        or not all(c in "0123456789abcdef" for c in value)
    ):
        check.fail("_resume['fingerprint']", "must be a SHA-256 digest in hexadecimal")


def _check_two_classes_loaded(classes):
    if classes.shape[0] < 2:
        check.fail("classes_", f"must hold two classes or more, got {classes.shape[0]}")
    if np.any(classes[1:] <= classes[:-1]):
        check.fail("classes_", "must be sorted and unique")


def _check_two_classes(classes):
    if classes.shape[0] < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {classes.shape[0]} class"
        )


def _check_known(y, known):
    unseen = np.setdiff1d(np.unique(y), known)
    if unseen.size:
        raise ValueError(f"y contains labels {unseen} that are not in classes {known}")


def _canonical(X):
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def ended_early(bar, skipped):
    """A progress bar whose loop skipped ``skipped`` of the steps of its total (converged
    early): its total shrinks to what is left to do, so that it ends full."""
    if skipped > 0 and bar.total is not None:
        bar.total -= skipped
        bar.refresh()
