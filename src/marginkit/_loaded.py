"""The checks of a loaded model: its learned attributes, each of its type and size,
and its counts those of its states, before any compiled pass is given them.

Each check reads a model's attributes as the dict they are (``vars``): what a file
holds, not what the estimator's properties make of it. The estimators' own
``_check_loaded`` and ``_check_fitted`` call them, and add their states' checks.
"""

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


def learned_attributes(traits):
    """``(required, optional)``: the attributes a fit sets that a fitted model of
    :class:`~marginkit._traits.Traits` ``traits`` has, and those it may have."""
    required = {"classes_", "n_features_in_", "n_trials_", "_fold_below", traits.state}
    required |= {"n_corrections_", "n_corrections_per_class_"}
    # _exponent: not in models written before it
    optional = {"feature_names_in_", "input_format_", "_resume", "_exponent"}
    optional |= {"_label_runs"}  # a stream's record of its labels (partial_fit)
    optional |= {"_class_weight"}  # not in models written before weights
    optional |= {"_stopped_by"}  # why fit's passes ended; not in models before it
    # n_iter_: not in models written before it
    return required, optional | (set() if traits.own_epochs else {"n_iter_"})


def learned_of(attrs, names, validate_params):
    """The learned attributes of a model whose attributes are ``attrs`` and whose
    parameters are ``names``, once those are all there and valid
    (``validate_params()``, scikit-learn's validation, as ``fit`` makes it)."""
    missing = sorted(set(names) - set(attrs))
    if missing:
        check.fail("the model", f"lacks the parameters {', '.join(missing)}")
    try:
        validate_params()
    except InvalidParameterError as exc:
        raise UntrustedFileError(f"parameters: {exc}") from None
    return set(attrs) - set(names)


def check_learned(learned, required, optional):
    """A fitted model has exactly the attributes a fit sets (``required``, and some of
    ``optional``)."""
    missing = sorted(required - learned)
    if missing:
        check.fail("the model", f"is fitted but lacks {', '.join(missing)}")
    extra = sorted(learned - required - optional)
    if extra:
        check.fail("the model", f"has attributes that marginkit does not write: {extra}")


def check_common(attrs, own_epochs):
    """The learned attributes that every estimator has, of a model whose attributes are
    ``attrs`` (``own_epochs``: its ``n_iter_`` is its own count, see
    :class:`~marginkit._traits.Traits`)."""
    classes = attrs["classes_"]
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
    n = check.integer(attrs["n_features_in_"], "n_features_in_", 1)
    if not own_epochs and "n_iter_" in attrs:
        check.integer(attrs["n_iter_"], "n_iter_", 1)
    names = attrs.get("feature_names_in_")
    if names is not None:
        check.array(names, "feature_names_in_", object, (n,))
        if not all(type(name) is str for name in names):
            check.fail("feature_names_in_", "must hold strings")
    if "_label_runs" in attrs:
        _order.check_record(attrs["_label_runs"], classes.shape[0])
    if "_stopped_by" in attrs and attrs["_stopped_by"] not in STOPPED:
        check.fail("_stopped_by", f"must be one of {', '.join(STOPPED)}")
    if "_class_weight" in attrs:
        try:
            check_stored(attrs["_class_weight"], classes.shape[0])
        except ValueError as exc:
            check.fail("_class_weight", str(exc))
    fmt = attrs.get("input_format_")
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


def check_counts(read, counted):
    """The counts of a loaded model (its attributes ``read``) are those its states give
    (its attributes ``counted``, after ``_update_counts``)."""
    for name, value in counted.items():
        old = read.get(name)
        if value is old:
            continue  # not a count
        if isinstance(value, np.ndarray):
            same = (
                type(old) is np.ndarray and old.dtype == value.dtype and np.array_equal(old, value)
            )
        else:
            same = type(old) in (int, np.int64) and old == value
        if not same:
            check.fail(name, f"must be {value!r}, what the states count, got {old!r}")
