"""ROMMA and aggressive ROMMA: Li and Long's relaxed online maximum margin algorithm."""

from . import _linear as L
from ._base import OnlineLinearClassifier
from .perceptron import LINEAR_CONSTRAINTS


class ROMMAClassifier(OnlineLinearClassifier):
    """ROMMA, the Relaxed Online Maximum Margin Algorithm, and its aggressive variant.

    Y. Li and P. M. Long, "The Relaxed Online Maximum Margin Algorithm", Machine
    Learning 46 (2002) 361-387, section 3. After an update on ``(x, y)`` the new
    hypothesis is the shortest vector in the intersection of two half-spaces, the one
    of the new constraint ``y w' . x >= 1`` and the relaxation ``w' . w >= ||w||^2``
    of all earlier ones:

        w' = c w + d y x,   c = (||x||^2 ||w||^2 - y w . x) / D,
        d = ||w||^2 (1 - y w . x) / D,   D = ||x||^2 ||w||^2 - (w . x)^2,

    and ``w' = y x / ||x||^2`` when the relaxed constraint does not bind (the first
    update, and aggressive updates with ``y w . x >= ||x||^2 ||w||^2``). ROMMA updates
    on mistakes, ``y w . x <= 0``; aggressive ROMMA whenever ``y w . x < 1``. On data
    separable with margin gamma by a plane through the origin, both make at most
    ``R^2 / gamma^2`` updates (their Theorem 1), R the largest norm of an instance.
    When ``x`` is antiparallel to ``w`` the two constraints contradict each other (the
    data are not separable): the update then keeps only the new one,
    ``w' = y x / ||x||^2``.

    Parameters
    ----------
    aggressive : bool, default=False
        Update whenever ``y w . x < 1`` instead of only on mistakes.
    output : {"last", "avg", "voted"}, default="last"
        The final hypothesis, the average ``sum_k c_k w_k`` or the vote
        ``sum_k c_k sign(w_k . x)`` (``c_k``: trials ``w_k`` survived); all three come
        from one run.
    n_epochs : int >= 1, default=1
    shuffle : bool, default=False
    random_state : int, RandomState instance or None, default=None
    fit_intercept : bool, default=False
        Learn a bias through the augmentation ``x -> (x, -R)`` (section 1 of
        Ishibashi, Hatano and Takeda, COLT 2008), R the largest 2-norm of an instance in
        the first data seen.
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features)
    intercept_ : ndarray of shape (n_problems,)
    n_corrections_ : int
        Updates over all binary problems.
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
    R_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import ROMMAClassifier
    >>> X = np.array([[2.0, 1.0], [1.0, 3.0], [-1.0, -2.0], [-3.0, -1.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> clf = ROMMAClassifier(aggressive=True, n_epochs=5).fit(X, y)
    >>> bool(np.all(y * clf.decision_function(X) >= 1 - 1e-12))
    True
    """

    _parameter_constraints: dict = {"aggressive": ["boolean"], **LINEAR_CONSTRAINTS}

    def __init__(
        self,
        *,
        aggressive=False,
        output="last",
        n_epochs=1,
        shuffle=False,
        random_state=None,
        fit_intercept=False,
        verbose=0,
    ):
        self.aggressive = aggressive
        self.output = output
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.verbose = verbose

    def _rule_args(self):
        rule = L.RULE_AGGRESSIVE_ROMMA if self.aggressive else L.RULE_ROMMA
        return rule, 0.0, 0.0, 0.0, 0.0
