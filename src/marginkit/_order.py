"""The order of a stream: one warning when it comes in long runs of one label.

:meth:`~marginkit._base.OnlineClassifier.fit` shuffles its passes (``shuffle=True``),
but a stream is learned in the order it comes (:meth:`partial_fit`,
:func:`marginkit.fit_file`, ``marginkit train --chunk-size``). An online model follows
the latest rows it saw, so a stream sorted by class (a data file written from a grouped
query, most UCI and KEEL files) ends with a model of the last class it saw. Such a
stream is told from an ordinary one by its longest run of one label: in rows that come
in a random order, a label of frequency ``f`` among ``n`` rows makes a run of ``L`` rows
or more with a probability of at most ``n f^(L - 1)``. The warning comes once per model
when that bound falls below :data:`UNLIKELY` for a run of at least :data:`MIN_RUN` rows
(1000 rows of a label of frequency 0.99 in a million random rows do not warn; 500 rows
of one label then 500 of the other do, as soon as the second label has been seen).

The record is a few integers per class, however long the stream: the label of the run
in progress and its length, whether the warning was given, and each class's rows and
longest run (:func:`new_record`).

A fit's passes, by contrast, take no order from the data: :func:`rows_by_content`
sorts the rows by what they hold (a random projection of each row, then its label and
weight), and :func:`epoch_order` shuffles that sorted list, so that the same rows in
any order are presented in the same sequence (the rows in the order given with
``shuffle=False``, the papers' setting).
"""

import math
import warnings

import numpy as np
import scipy.sparse as sp

from . import _checks as check
from ._core.arrays import to_numpy
from ._warnings import user_level

#: the shortest run that can warn (small data make long runs by chance)
MIN_RUN = 50
#: the bound on the probability of the longest run, in a random order, below which
#: the stream is taken to come in runs
UNLIKELY = 1e-3

# the record's fields before the per-class counts
_LABEL, _RUN, _WARNED, _HEAD = 0, 1, 2, 3


class StreamOrderWarning(UserWarning):
    """A stream learned in its own order comes in long runs of one label."""


def new_record(n_classes):
    """A fresh record of a stream's labels (an int64 array): no run yet."""
    record = np.zeros(_HEAD + 2 * n_classes, dtype=np.int64)
    record[_LABEL] = -1
    return record


def check_record(record, n_classes, where="_label_runs"):
    """The checks of a loaded record (:mod:`marginkit._loaded`)."""
    check.array(record, where, np.int64, (_HEAD + 2 * n_classes,))
    if not (-1 <= record[_LABEL] < n_classes and record[_WARNED] in (0, 1)):
        check.fail(where, "holds a label or a flag out of range")
    if np.any(record[_RUN:] < 0) or (record[_LABEL] < 0) != (record[_RUN] == 0):
        check.fail(where, "holds a negative count, or a run without a label")


def observe(record, codes):
    """Add the labels ``codes`` (indices into ``classes_``, in the stream's order) to
    ``record``, in place; True when the stream now looks sorted and has not warned."""
    n_classes = (record.shape[0] - _HEAD) // 2
    counts = record[_HEAD : _HEAD + n_classes]
    longest = record[_HEAD + n_classes :]
    codes = np.asarray(codes, dtype=np.int64)
    if codes.shape[0] == 0:
        return False
    np.add.at(counts, codes, 1)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    lengths = np.diff(np.r_[starts, codes.shape[0]])
    labels = codes[starts]
    if labels[0] == record[_LABEL]:
        lengths[0] += record[_RUN]  # the run in progress goes on
    np.maximum.at(longest, labels, lengths)
    record[_LABEL], record[_RUN] = labels[-1], lengths[-1]
    if record[_WARNED]:
        return False
    n = counts.sum()
    with np.errstate(divide="ignore"):
        log_f = np.log(counts / n)
        # log of n f^(L - 1), the bound on the chance of such a run in a random order
        log_chance = np.log(n) + (longest - 1) * log_f
    runs = (longest >= MIN_RUN) & (counts < n) & (log_chance < np.log(UNLIKELY))
    return bool(np.any(runs))


def observe_one(est, record, code, classes):
    """:func:`observe` and :func:`warn_once` of one row of label ``classes[code]``: the
    same record and warning, in a few operations on Python numbers where no run of
    one label can warn (a stream of single rows would otherwise pay the arithmetic of
    the record's arrays at every row)."""
    values = record.tolist()
    n_classes = (len(values) - _HEAD) // 2
    top = _HEAD + n_classes + code
    run = values[_RUN] + 1 if values[_LABEL] == code else 1
    longest = max(values[top], run)
    if not values[_WARNED] and max(longest, *values[_HEAD + n_classes :]) >= MIN_RUN:
        values[_HEAD + code] += 1
        values[top] = longest
        if _may_warn(values, n_classes):
            warn_once(est, record, np.array([code]), classes)
            return
    record[_HEAD + code] += 1
    record[top] = longest
    record[_LABEL], record[_RUN] = code, run


def _may_warn(values, n_classes):
    """Whether a stream whose record holds ``values`` (a list) after a row may warn
    there: the test of :func:`observe`, in Python's floats, True also where it falls
    within rounding of the bound (the caller then lets :func:`observe` decide)."""
    counts = values[_HEAD : _HEAD + n_classes]
    n = sum(counts)
    bound = math.log(UNLIKELY)
    for count, length in zip(counts, values[_HEAD + n_classes :], strict=True):
        if length >= MIN_RUN and count < n:
            chance = math.log(n) + (length - 1) * math.log(count / n)
            if chance < bound + 1e-9 * (abs(bound) + abs(chance)):
                return True
    return False


def warn_once(est, record, y_codes, classes):
    """:func:`observe`, and the warning the first time the stream looks sorted."""
    if not observe(record, y_codes):
        return
    record[_WARNED] = 1
    n_classes = classes.shape[0]
    counts = record[_HEAD : _HEAD + n_classes]
    longest = record[_HEAD + n_classes :]
    c = int(np.argmax(longest))
    share = 100.0 * counts[c] / counts.sum()
    warnings.warn(
        f"{type(est).__name__} learns a stream in the order it comes, and this one comes "
        f"in long runs of one label ({int(longest[c])} rows of label {classes[c]!r} in a "
        f"row, where that label is {share:.0f}% of the {int(counts.sum())} rows so far): "
        "the model follows the latest run and may know little of the others. Shuffle the "
        "rows beforehand, or fit them in memory (fit, or marginkit train without "
        "--chunk-size), which shuffles every pass.",
        StreamOrderWarning,
        stacklevel=user_level(),
    )


#: the seed of :func:`_row_keys`'s direction (any fixed value: it only has to be the
#: same in every fit)
_KEY_SEED = 0x6D61726B


def _row_keys(X, block=1 << 20):
    """Each row of X projected on a fixed random direction (standard normal entries):
    a number that any two different rows share with probability 0, and that moves by
    rounding only where the row does (rows scaled by statistics summed in another order
    keep their ranks). Rows of another Array API library are read in blocks of about
    ``block`` entries on the host."""
    r = np.random.default_rng(_KEY_SEED).standard_normal(X.shape[1])
    if sp.issparse(X) or isinstance(X, np.ndarray):
        return np.asarray(X @ r, dtype=np.float64).reshape(-1)
    n, d = X.shape
    out = np.empty(n)
    step = max(1, block // max(1, d))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        out[lo:hi] = np.asarray(to_numpy(X[lo:hi, ...]), dtype=np.float64) @ r
    return out


def rows_by_content(X, y, weight=None):
    """The rows of X (a NumPy array, a SciPy sparse matrix or an array of another Array
    API library) sorted by their content: by their projection on a fixed random
    direction (:func:`_row_keys`), then label, then weight.

    The same rows in another order give the same sequence, and so do rows whose values
    differ by the rounding of a scaling fitted in another row order, but for rows that
    are the same in all three (which train alike, wherever they stand) and for two
    rows whose projections come within that rounding of each other."""
    y = np.asarray(to_numpy(y))
    if y.ndim > 1:
        labels = np.asarray(y, dtype=np.float64) @ 2.0 ** np.arange(y.shape[1])
    else:
        labels = np.unique(y, return_inverse=True)[1].reshape(-1)
    keys = [labels, _row_keys(X)]
    if weight is not None:
        keys.insert(0, np.ascontiguousarray(to_numpy(weight), dtype=np.float64))
    return np.lexsort(keys)


def epoch_order(rng, n, shuffle, rows=None):
    """The order of one epoch over ``n`` rows: ``rng``'s permutation of ``rows``
    (:func:`rows_by_content`; of ``range(n)`` where None), or the rows as given
    without ``shuffle``."""
    if not shuffle:
        return np.arange(n)
    order = rng.permutation(n)
    return order if rows is None else rows[order]
