"""Sample and class weights: ``sample_weight`` in ``fit`` and ``partial_fit``, and the
``class_weight`` parameter, with the meaning they have in scikit-learn's ``Perceptron``
and ``SGDClassifier``: a row's weight is its sample weight times its class's weight,
and it scales the row's update, or, for PUMMA, its soft margin's loss (what that is
for each rule: the docstrings of the compiled passes, and each algorithm's page in
docs/algorithms/).

Two rules hold for every estimator here, whatever its algorithm:

- a row of weight 0 is dropped before anything reads it, so that a zero weight is the
  row left out, exactly (the radius of the instances, the classes, the order of the
  passes and every update are those of the data without it);
- ``class_weight="balanced"`` gives class k the weight ``W / (K W_k)``, ``W_k`` the
  total sample weight of its rows, ``W`` that of all of them, K the number of classes:
  scikit-learn's ``n_samples / (n_classes * np.bincount(y))`` when no sample weight
  is given, and with one, the weight under which an integer sample weight is its row
  repeated.

:meth:`partial_fit` fixes the class weights at its first call (``class_weight_``),
from that call's rows for ``"balanced"``.
"""

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight

from ._core.arrays import on_host, to_numpy

CLASS_WEIGHT_DOC = """class_weight : dict, "balanced" or None, default=None
        Weights of the classes, ``{label: weight}`` (a label left out weighs 1), as in
        scikit-learn's ``Perceptron``: a row's weight is its ``sample_weight`` times
        its class's, and it scales the row's update (the "Weights" section of the
        algorithm's page in docs/algorithms/). ``"balanced"`` weighs class k by
        ``W / (n_classes W_k)``, ``W_k`` the total sample weight of its rows (their
        number when none is given), so that every class weighs as much in all.
        :meth:`partial_fit` and a streamed fit fix them at the first call or chunk,
        from its rows for ``"balanced"``; ``class_weight_`` holds them. A class whose
        rows all weigh 0 is left out of a fit, as its rows are."""


def as_weights(sample_weight, n):
    """``sample_weight`` validated as scikit-learn validates it: a 1-d float64 array of n
    numbers >= 0 on the host (ones when None), all zero allowed."""
    if sample_weight is not None and not np.isscalar(sample_weight):
        sample_weight = on_host(sample_weight)
    # a host stand-in for X: only its number of rows is read
    rows = np.broadcast_to(np.float64(0.0), (n, 1))
    sw = _check_sample_weight(
        sample_weight,
        rows,
        dtype=np.float64,
        ensure_non_negative=True,
        allow_all_zero_weights=True,
    )
    return np.asarray(to_numpy(sw), dtype=np.float64)


def _checked(weights, classes):
    """Class weights, or a ValueError for one that is not a finite number >= 0."""
    bad = ~(np.isfinite(weights) & (weights >= 0))
    if bad.any():
        found = {classes[i].item(): float(weights[i]) for i in np.flatnonzero(bad)}
        raise ValueError(f"class_weight must hold finite numbers >= 0; got {found}")
    return weights


def class_weights(class_weight, classes, y, sample_weight):
    """The weight of each of ``classes`` (sorted) under ``class_weight`` (None, a dict or
    "balanced", from the rows ``y`` of weights ``sample_weight``)."""
    if class_weight is None:
        return np.ones(classes.shape[0])
    if isinstance(class_weight, dict):
        # scikit-learn's check and wording for labels that are not classes
        return _checked(compute_class_weight(class_weight, classes=classes, y=y), classes)
    # W / (K W_k) is the same for weights scaled by any factor: by the largest, so that
    # the totals do not overflow
    scale = sample_weight.max() if sample_weight.size else 1.0
    totals = np.bincount(np.searchsorted(classes, y), sample_weight / scale, classes.shape[0])
    missing = totals <= 0
    if missing.any():
        raise ValueError(
            f"class_weight='balanced' needs rows of weight > 0 of every class, and "
            f"{classes[missing].tolist()} have none in these data. Pass rows of every "
            "class (the first call of partial_fit, or a stream's first chunk, sets the "
            "weights), or class_weight as a dict."
        )
    return totals.sum() / (classes.shape[0] * totals)


def as_stored(per_class):
    """Class weights as a model keeps them: a tuple of floats (not an array, which
    scikit-learn's array API contract would have in the namespace of the data)."""
    return tuple(float(w) for w in per_class)


def check_stored(stored, n_classes):
    """A ValueError unless ``stored`` is what :func:`as_stored` makes for n classes."""
    if (
        type(stored) is not tuple
        or len(stored) != n_classes
        or not all(type(w) is float and np.isfinite(w) and w >= 0 for w in stored)
    ):
        raise ValueError(f"must be a tuple of {n_classes} finite floats >= 0")


def check_finite(weights):
    """A ValueError where a row's sample weight times its class's weight overflows."""
    bad = ~np.isfinite(weights)
    if bad.any():
        raise ValueError(
            f"sample_weight times class_weight overflows float64 for {int(bad.sum())} "
            f"rows (first: row {int(np.flatnonzero(bad)[0])}); scale the weights down."
        )


def no_weight_error():
    return ValueError(
        "Sample weights must contain at least one non-zero number: every row weighs 0 "
        "(its sample_weight times its class's weight)."
    )


def weighed(X, y, sample_weight, class_weight, classes=None, per_class=None):
    """``(X, y, weights, classes, per_class, kept)``: the rows of weight > 0 of
    ``X, y``, their weights (None when every row weighs 1), their classes
    (``classes``, or those of the rows kept: a fit's), the weight of each
    (``per_class``, or computed from ``class_weight``, the estimator's, and the rows), and the
    positions of the rows kept (None: all of them).

    A fit, or the first call of partial_fit, computes the class weights; a later
    call of partial_fit passes ``class_weight_``."""
    a_fit = classes is None
    if sample_weight is None and (
        np.all(per_class == 1.0) if per_class is not None else class_weight is None
    ):
        # no weights: nothing to validate or drop (a stream's call costs nothing more)
        if per_class is None:
            classes = np.unique(y) if a_fit else classes
            per_class = np.ones(classes.shape[0])
        return X, y, None, classes, per_class, None
    sw = as_weights(sample_weight, X.shape[0])
    inside = sw > 0
    if not inside.any():
        if per_class is None:  # a fit, or the first call of partial_fit
            raise no_weight_error()
        return _safe_indexing(X, np.zeros(0, np.int64)), y[:0], None, classes, per_class, None
    if per_class is None:
        if classes is None:
            # a fit's: those of the rows that weigh something (a dict is checked
            # against every label of y, as scikit-learn checks it)
            every = isinstance(class_weight, dict)
            classes = np.unique(y if every else y[inside])
        per_class = class_weights(class_weight, classes, y[inside], sw[inside])
    w = sw * per_class[np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)]
    w[~inside] = 0.0
    check_finite(w)
    keep = w > 0
    kept = None if keep.all() else np.flatnonzero(keep)
    if kept is not None:
        if not kept.size and a_fit:  # not one of a fit's rows weighs anything
            raise no_weight_error()
        X, y, w = _safe_indexing(X, kept), y[kept], w[kept]
    # weights of 1 are no weights: the same pass, and a checkpoint's same data
    return X, y, None if np.all(w == 1.0) else w, classes, per_class, kept
