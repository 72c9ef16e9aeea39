"""The Perceptron with last, averaged and voted outputs: the baseline of Gentile's tables."""

from ._core import linear as L
from ._docstrings import (
    BUDGET_DOC,
    EARLY_STOPPING_DOC,
    HORIZON_DOC,
    KEEP_CORRECTIONS_DOC,
    KERNEL_DOC,
    N_ITER_NO_CHANGE_DOC,
    PASSES_DOC,
    SHUFFLE_DOC,
    intercept_doc,
    kernel_intercept_doc,
)
from ._early_stopping import EARLY_STOPPING_CONSTRAINTS
from ._kernel_base import (
    BUDGET_CONSTRAINTS,
    INTERCEPT_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    KernelOnlineClassifier,
)
from ._linear_base import LINEAR_CONSTRAINTS, OnlineLinearClassifier
from ._weights import CLASS_WEIGHT_DOC

#: why ``intercept_scaling`` defaults to what it does (its docstring)
_BIAS_CHOICE = """within 1 point of ``LinearSVC`` on more public data sets, sorted or
        not (docs/defaults.md)."""


class PerceptronClassifier(OnlineLinearClassifier):
    __doc__ = f"""Rosenblatt's Perceptron, with Freund and Schapire's voted and averaged outputs.

    Starting from ``w = 0``, on each trial the Perceptron updates ``w += y x`` when
    ``y w . x <= 0`` (F. Rosenblatt, 1958). Freund and Schapire ("Large margin
    classification using the perceptron algorithm", Machine Learning 37, 1999) predict
    with the vote ``sum_k c_k sign(w_k . x)`` or the average ``sum_k c_k w_k`` of all
    hypotheses, ``c_k`` the number of trials ``w_k`` survived; Gentile (JMLR 2001)
    compares ALMA with both in his Tables 1 to 5. Instances are not normalised, and a
    zero instance never updates (as in ALMA). More than two classes are learnt
    one-vs-rest.

    Parameters
    ----------
    output : {{"last", "avg", "voted"}}, default="avg"
        The final ``w``, the average or the vote; all three come from one run (switch
        with ``set_params`` after fitting; to ``"voted"`` with ``keep_corrections``).
        The average by default (docs/defaults.md); Rosenblatt's Perceptron predicts
        with ``"last"``. Where no plane separates the classes the vote is more
        accurate (Bananas 38.00% against 47.40%), but the model is its log of
        corrections (104 MB on USPS against 0.1 MB) and predicting replays it.
    {HORIZON_DOC}
    {KEEP_CORRECTIONS_DOC}
    max_iter : int >= 1, default=1000
        The most passes of :meth:`fit` over the training set; ``tol`` ends them when
        the mistakes stop falling (after 4 to 15 on the real data sets of
        docs/defaults.md).
    {PASSES_DOC}
    {N_ITER_NO_CHANGE_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    {intercept_doc("rms", _BIAS_CHOICE)}
        ``fit_intercept=False, max_iter=1, output="last"`` is the Perceptron of
        Gentile's comparisons.
    verbose : int, default=0
        A progress bar over epochs and binary problems.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features)
        Weights of the ``output`` hypothesis (not for ``"voted"``); ``n_problems`` is 1
        for two classes, else ``n_classes``.
    intercept_ : ndarray of shape (n_problems,)
    n_corrections_ : int
        Updates (mistakes) over all binary problems.
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
    R_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import PerceptronClassifier
    >>> X = np.array([[1.0, 2.0], [2.0, 0.5], [-1.0, -1.5], [-2.0, 0.0]])
    >>> y = np.array([1, 1, 0, 0])
    >>> clf = PerceptronClassifier(output="voted", max_iter=3).fit(X, y)
    >>> clf.predict(X)
    array([1, 1, 0, 0])
    """

    _parameter_constraints: dict = dict(LINEAR_CONSTRAINTS)

    def __init__(
        self,
        *,
        output="avg",
        horizon=None,
        keep_corrections=False,
        max_iter=1000,
        tol=1e-3,
        n_iter_no_change=5,
        shuffle=True,
        random_state=None,
        fit_intercept=True,
        intercept_scaling="rms",
        class_weight=None,
        verbose=0,
        n_epochs="deprecated",
    ):
        self.output = output
        self.horizon = horizon
        self.keep_corrections = keep_corrections
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.n_epochs = n_epochs

    def _rule_args(self):
        return L.Rule(L.RULE_PERCEPTRON)


class KernelPerceptronClassifier(KernelOnlineClassifier):
    __doc__ = f"""The kernel Perceptron, with last, averaged and voted outputs.

    The Perceptron of :class:`PerceptronClassifier` in a reproducing kernel Hilbert
    space: ``w = sum_j a_j phi(x_j)`` with ``a_j = y_j`` for every example ``x_j`` it
    erred on (``y w . phi(x) <= 0``). Freund and Schapire's voted and averaged outputs
    come from the same run (Gentile, JMLR 2001, Tables 1 and 3, use them as the
    baseline of kernel ALMA). Training runs on the blocked exact engine of
    :class:`~marginkit.KernelALMAClassifier`: the mistakes are those of the plain
    per-example algorithm.

    Parameters
    ----------
    output : {{"last", "avg", "voted"}}, default="avg"
        The average by default (docs/defaults.md); the published algorithm predicts
        with ``"last"``.
    {HORIZON_DOC}
    max_iter : int >= 1, default=1000
        The most passes of :meth:`fit` over the training set; ``tol`` ends them when
        the mistakes stop falling (after 8 passes on USPS, 16 on Letter), or
        stay level with the first pass's on noisy data (2 on adult: docs/defaults.md).
    {PASSES_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    {KERNEL_DOC}
    {kernel_intercept_doc(True)}
    {BUDGET_DOC}
    {EARLY_STOPPING_DOC}
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Position in the training stream of each support vector; an example corrected
        in several epochs is one (as :class:`KernelALMAClassifier`'s).
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_problems, n_SV)
    n_corrections_ : int
        Mistakes over all one-vs-rest problems.
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
    n_kernel_evaluations_ : int
    gamma_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import KernelPerceptronClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.5).astype(int)
    >>> clf = KernelPerceptronClassifier(kernel="poly", degree=2, gamma=1.0, max_iter=5)
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    """

    _parameter_constraints: dict = {
        **KERNEL_CONSTRAINTS,
        **INTERCEPT_CONSTRAINTS,
        **BUDGET_CONSTRAINTS,
        **EARLY_STOPPING_CONSTRAINTS,
        "normalize": ["boolean"],
    }

    def __init__(
        self,
        *,
        output="avg",
        horizon=None,
        max_iter=1000,
        tol=1e-3,
        shuffle=True,
        random_state=None,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=1.0,
        fit_intercept=True,
        intercept_scaling=0.5,
        normalize=False,
        block_size="auto",
        cache_size=200,
        budget=None,
        budget_rule="project_new",
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=3,
        class_weight=None,
        verbose=0,
        n_epochs="deprecated",
    ):
        self.output = output
        self.horizon = horizon
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.normalize = normalize
        self.block_size = block_size
        self.cache_size = cache_size
        self.budget = budget
        self.budget_rule = budget_rule
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.class_weight = class_weight
        self.verbose = verbose
        self.n_epochs = n_epochs

    def _rule_args(self):
        return L.Rule(L.RULE_PERCEPTRON)
