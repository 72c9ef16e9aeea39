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
"""

import warnings

import numpy as np

from . import _checks as check
from ._utils import user_level

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
