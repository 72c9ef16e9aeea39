"""The checks of a loaded model: its learned attributes, each of its type and size,
and its counts those of its states, before any compiled pass is given them."""

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError

from . import _checks as check
from . import _order
from ._passes import STOPPED
from ._registry import UntrustedFileError
from ._weights import check_stored


def check_classes(classes):
    if classes.shape[0] < 2:
        check.fail("classes_", f"must hold two classes or more, got {classes.shape[0]}")
    if np.any(classes[1:] <= classes[:-1]):
        check.fail("classes_", "must be sorted and unique")


class Loaded:
    """``_check_loaded``, which :func:`marginkit.load` calls on every model it reads (a
    mixin of :class:`marginkit._base.OnlineClassifier`)."""

    def _learned(self):
        """The attributes a fit sets: those a fitted model has, and those it may have."""
        required = {"classes_", "n_features_in_", "n_trials_", "_fold_below", self._traits.state}
        required |= {"n_corrections_", "n_corrections_per_class_"}
        # _exponent: not in models written before it
        optional = {"feature_names_in_", "input_format_", "_resume", "_exponent"}
        optional |= {"_label_runs"}  # a stream's record of its labels (partial_fit)
        optional |= {"_class_weight"}  # not in models written before weights
        optional |= {"_stopped_by"}  # why fit's passes ended; not in models before it
        # n_iter_: not in models written before it
        return required, optional | (set() if self._traits.own_epochs else {"n_iter_"})

    def _check_loaded(self):
        """An :class:`~marginkit.persistence.UntrustedFileError` unless this estimator,
        read from a file, is one that its methods and the compiled passes can be given.

        :func:`marginkit.load` calls it on every model it reads: the parameters are
        validated as ``fit`` validates them, and a fitted model has exactly the learned
        attributes a fit sets, each of its type, with the widths and numbers of its
        states those of its classes and features, and its counts those of its states
        (each state by the check registered for its class, :mod:`marginkit._state_checks`). A
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
        check_classes(classes)
        n = check.integer(self.n_features_in_, "n_features_in_", 1)
        if not self._traits.own_epochs and "n_iter_" in vars(self):
            check.integer(self.n_iter_, "n_iter_", 1)
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            check.array(names, "feature_names_in_", object, (n,))
            if not all(type(name) is str for name in names):
                check.fail("feature_names_in_", "must hold strings")
        if "_label_runs" in vars(self):
            _order.check_record(self._label_runs, classes.shape[0])
        if "_stopped_by" in vars(self) and self._stopped_by not in STOPPED:
            check.fail("_stopped_by", f"must be one of {', '.join(STOPPED)}")
        if "_class_weight" in vars(self):
            try:
                check_stored(self._class_weight, classes.shape[0])
            except ValueError as exc:
                check.fail("_class_weight", str(exc))
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
