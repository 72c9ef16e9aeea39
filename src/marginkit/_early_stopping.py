"""Early stopping of the kernel estimators' passes on held-out rows: the rows held out
(each class in proportion), and the best pass so far, whose model is kept.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.utils._param_validation import Interval

#: The parameters of early stopping on held-out rows (:class:`Validation`): kernel ALMA,
#: the kernel Perceptron and kernel ROMMA.
EARLY_STOPPING_CONSTRAINTS = {
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
}
#: Why a fit that streams its rows, or writes checkpoints, holds none out.
NO_EARLY_STOPPING = (
    "early_stopping=True is not offered with {what}: it holds out a part of the rows "
    "in memory and keeps the model of the best pass, which {why}. Use fit on the rows "
    "in memory, or early_stopping=False."
)


def validation_split(y, fraction, random_state):
    """The rows of ``y`` to train on and those held out (``fraction`` of them, each
    class in proportion: scikit-learn's ``StratifiedShuffleSplit``), each in the data's
    order."""
    split = StratifiedShuffleSplit(n_splits=1, test_size=fraction, random_state=random_state)
    train, held = next(split.split(np.zeros((y.shape[0], 1)), y))
    return np.sort(train), np.sort(held)


class Validation:
    """Early stopping: the held-out rows, and the best pass so far.

    After each pass the estimator's accuracy on the held-out rows (with its ``output``)
    is compared with the best of the passes before: a pass that beats it by more than
    ``tol`` (0 for None) becomes the best, and its model is kept (the state's undo
    point: copies of the O(m C) arrays per stored vector, the rows themselves are only
    appended to); ``n_iter_no_change`` passes in a row that do not end the passes, and
    the model of the best pass is put back.
    """

    def __init__(self, X, y, patience, tol, score, undo_point):
        self.X, self.y = X, y
        self.patience = int(patience)
        self.tol = 0.0 if tol is None else float(tol)
        # score(X, y): the model's accuracy; undo_point(): a function that puts the
        # model back as it is now
        self.score, self.undo_point = score, undo_point
        self.best, self.undo, self.since = -np.inf, None, 0

    def after_pass(self):
        """Score the pass; whether the passes end."""
        score = float(self.score(self.X, self.y))
        if score > self.best + self.tol:
            self.best, self.undo, self.since = score, self.undo_point(), 0
        else:
            self.since += 1
        return self.since >= self.patience

    def keep_best(self):
        """The model of the best pass, where a later one was made: whether it was put
        back."""
        if self.undo is not None and self.since:
            self.undo()
            return True
        return False
