"""Guards of training: the labels a fit accepts, and an estimator left as it was
when training fails."""

from contextlib import contextmanager

import numpy as np


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


def check_two_classes(classes):
    if classes.shape[0] < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {classes.shape[0]} class"
        )


def check_known(y, known):
    unseen = np.setdiff1d(np.unique(y), known)
    if unseen.size:
        raise ValueError(f"y contains labels {unseen} that are not in classes {known}")
