"""ALMA_p and kernel ALMA_2: approximate maximal margin classification (Gentile 2001)."""

from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from . import _checks as check
from ._core import linear as L
from ._docstrings import (
    BUDGET_DOC,
    EARLY_STOPPING_DOC,
    HORIZON_DOC,
    KEEP_CORRECTIONS_DOC,
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
    KERNEL_TRAITS,
    KernelOnlineClassifier,
)
from ._linear_base import LINEAR_CONSTRAINTS, LINEAR_TRAITS, P_MAX, OnlineLinearClassifier
from ._weights import CLASS_WEIGHT_DOC

SQRT2 = float(np.sqrt(2.0))

#: ALMA's own parameters, of both forms
ALMA_CONSTRAINTS = {
    "alpha": [Interval(Real, 0, 1, closed="right")],
    "B": [Interval(Real, 0, None, closed="neither"), None],
    "C": [Interval(Real, 0, None, closed="neither")],
}


class ALMAMarginScale:
    """``B_``, the scale of ALMA's margin threshold: a learned attribute of both forms."""

    def _learned(self):
        required, optional = super()._learned()
        return required | {"B_"}, optional

    def _check_fitted(self):
        super()._check_fitted()
        check.real(self.B_, "B_", positive=True)

    def _initialise(self, data):
        super()._initialise(data)
        self.B_ = 1.0 / self.alpha if self.B is None else float(self.B)


#: why ``intercept_scaling`` defaults to what it does (its docstring)
_BIAS_CHOICE = """within 1 point of ``LinearSVC`` on more public data sets, sorted or
        not (docs/defaults.md)."""


class ALMAClassifier(ALMAMarginScale, OnlineLinearClassifier):
    __doc__ = f"""ALMA_p(alpha; B, C), Gentile's approximate maximal p-norm margin classifier.

    Figure 1 of C. Gentile, "A New Approximate Maximal Margin Classification
    Algorithm", JMLR 2 (2001) 213-242. Instances are normalised,
    ``x_hat = x / ||x||_p``. With ``w_1 = 0`` and ``k = 1``, on each trial the
    algorithm makes a *correction* when

        y_t w_k . x_hat_t <= (1 - alpha) gamma_k,    gamma_k = B sqrt(p - 1) / sqrt(k),

    namely ``w'_k = f^-1(f(w_k) + eta_k y_t x_hat_t)`` with
    ``eta_k = C / (sqrt(p - 1) sqrt(k))``, then ``w_(k+1) = w'_k / max(1, ||w'_k||_q)``
    and ``k = k + 1`` (``f`` is the gradient of ``||w||_q^2 / 2``, ``1/p + 1/q = 1``).
    With ``B = sqrt(8) / alpha`` and ``C = sqrt(2)``, Theorem 3 (part 1) bounds the
    number of corrections on data with normalised p-norm margin ``gamma*`` by
    ``2 (p - 1) / gamma*^2 (2 / alpha - 1)^2 + 8 / alpha - 4``, and the hypothesis
    then separates the data with p-norm margin at least ``(1 - alpha) gamma*``.

    More than two classes are learnt one-vs-rest, predicting the argmax of the
    outputs as in section 5 of the paper.

    Parameters
    ----------
    alpha : float in (0, 1], default=0.9
        Degree of approximation to the maximal margin; ``alpha = 1`` corrects only
        on mistakes (a normalised Perceptron with decreasing rate). 0.9 is the
        paper's best setting on MNIST and the default (docs/defaults.md).
    p : float in [2, 150] or "log", default=2.0
        The norm of the instances. ``"log"`` means ``2 ln d`` (Remark 6), d the
        dimension the algorithm sees (``n_features``, plus one with
        ``fit_intercept``), and never less than 2: a multiplicative, Winnow-like
        regime suited to sparse targets. From about p = 200 the p-th powers of the
        weights leave float64's range (the hypothesis drifts from an exact computation,
        and at p = 1000 stayed 0); 2 ln d stays below 150 for any d below 10^32.
    B : float > 0 or None, default=None
        Scale of the margin threshold gamma_k; None means ``1 / alpha``, the value
        section 4 of the paper states for its experiments. Theorem 3 part 1 uses
        ``sqrt(8) / alpha``, and the correction counts published in Table 6 come out
        with that value, not with ``1 / alpha`` (see ``docs/reproductions.md``).
        B has no effect when ``alpha = 1`` (the threshold is then 0).
    C : float > 0, default=sqrt(2)
        Scale of the learning rate eta_k.
    output : {{"last", "avg", "voted"}}, default="avg"
        Which hypothesis predicts: the final ``w``; the average ``sum_k c_k w_k``
        (``c_k`` the number of trials ``w_k`` survived, the trial that created it
        included); or the vote ``sum_k c_k sign(w_k . x)`` (Freund and Schapire 1999).
        All three come from the same run: switch between ``"last"`` and ``"avg"``
        with ``set_params`` after fitting, no retraining needed (``"voted"`` needs the
        corrections: see ``keep_corrections``). The default is the average: the paper
        finds it "substantially more accurate" in every experiment, at no extra cost
        (docs/defaults.md); Figure 1 of the paper predicts with ``"last"``.
    {HORIZON_DOC}
    {KEEP_CORRECTIONS_DOC}
    max_iter : int >= 1, default=1000
        The most passes over the training set :meth:`fit` makes (the counter k carries
        on); ``tol`` ends them when the corrections stop falling, after 2 to 12 passes
        on the real data sets of docs/defaults.md. The paper's experiments make one.
    {PASSES_DOC}
    {N_ITER_NO_CHANGE_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    {intercept_doc("rms", _BIAS_CHOICE)}
        The paper's ALMA has no bias: ``fit_intercept=False, max_iter=1,
        output="last"`` is exactly its Figure 1.
    verbose : int, default=0
        Show a progress bar over epochs and binary problems.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_features)
        Weights of the ``output`` hypothesis (not for ``"voted"``); ``n_problems`` is 1
        for two classes, else ``n_classes``. Predictions use them on *normalised*
        instances: see :meth:`decision_function`.
    intercept_ : ndarray of shape (n_problems,)
    n_corrections_ : int
        Corrections over all binary problems (the paper's "Corr." column).
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
        Trials seen by each binary problem.
    p_ : float
        The p in use (``"log"`` resolved).
    B_ : float
        The B in use.
    R_ : float
        The bias coordinate's magnitude (0 without ``fit_intercept``).
    n_features_in_ : int

    Examples
    --------
    >>> from marginkit import ALMAClassifier
    >>> from marginkit.datasets import make_sparse_target
    >>> X, y, X_test, y_test = make_sparse_target(n_train=2000, n_test=1000,
    ...                                           n_relevant=3, random_state=0)
    >>> clf = ALMAClassifier(p=6, alpha=0.5, output="avg").fit(X, y)
    >>> clf.score(X_test, y_test) > 0.9
    True
    """

    _parameter_constraints: dict = {
        **ALMA_CONSTRAINTS,
        "p": [Interval(Real, 2, P_MAX, closed="both"), StrOptions({"log"})],
        **LINEAR_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        alpha=0.9,
        p=2.0,
        B=None,
        C=SQRT2,
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
        self.alpha = alpha
        self.p = p
        self.B = B
        self.C = C
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

    _traits = replace(LINEAR_TRAITS, normalises=True)

    def _resolve_p(self, d):
        if self.p == "log":
            return max(2.0, 2.0 * np.log(d))
        return float(self.p)

    def _rule_args(self):
        return L.Rule(L.RULE_ALMA, float(self.alpha), self.B_, float(self.C))


class KernelALMAClassifier(ALMAMarginScale, KernelOnlineClassifier):
    __doc__ = f"""Kernel ALMA_2(alpha; B, C): ALMA in a reproducing kernel Hilbert space.

    Remark 5 of C. Gentile, "A New Approximate Maximal Margin Classification
    Algorithm", JMLR 2 (2001) 213-242: ALMA_2 of Figure 1 run on the instances
    ``phi(x) / ||phi(x)||``, so that ``x_hat . y_hat = K(x, y) / sqrt(K(x, x) K(y, y))``.
    Each hypothesis is ``w = s sum_j a_j phi_hat(x_j)`` over the support vectors (the
    instances of past corrections); a correction appends ``a = eta y / s`` and divides
    ``s`` by ``max(1, ||w'||)``, ``||w'||^2 = ||w||^2 + 2 eta y w . x_hat + eta^2``.

    Training is exact and organised as matrix products: per block of ``block_size``
    examples, one product for the kernel rows against the support vectors, one for the
    margins of every one-vs-rest problem, and a compiled walk through the block that
    adds the corrections made inside it, in order (see :mod:`marginkit._core.kernel`). The
    corrections are those of the plain per-example algorithm.

    Parameters
    ----------
    alpha : float in (0, 1], default=0.9
        Degree of approximation to the maximal margin (0.9: the paper's best setting
        on MNIST, Table 3, and the default; 1 corrects only on mistakes).
    B : float > 0 or None, default=None
        Scale of the margin threshold ``gamma_k = B / sqrt(k)``; None means ``1 / alpha``
        (section 4; with it the MNIST correction counts of Table 3 come out).
    C : float > 0, default=sqrt(2)
        Scale of the learning rate ``eta_k = C / sqrt(k)``.
    output : {{"last", "avg", "voted"}}, default="avg"
        The final hypothesis, the average ``sum_k c_k w_k`` or the vote
        ``sum_k c_k sign(w_k . x)`` (``c_k``: trials ``w_k`` survived, the one that
        created it included). Switch with ``set_params`` after fitting: all three come
        from the same run, each at the cost of one kernel row per test point. The
        average by default: the paper finds it "substantially more accurate" in every
        experiment (docs/defaults.md).
    {HORIZON_DOC}
    max_iter : int >= 1, default=1000
        The most passes of :meth:`fit` over the training set (the paper's MNIST runs:
        1 to 3); ``tol`` ends them when the corrections stop falling (after 9 passes on
        USPS, 12 on Letter), or stay level with the first pass's on noisy data (2 on
        adult: docs/defaults.md).
    {PASSES_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    kernel : {{"linear", "poly", "rbf", "poly_rbf"}} or callable, default="rbf"
        ``poly``: ``(gamma x . y + coef0)^degree`` (the paper's MNIST kernel
        ``(1 + x . y / 255)^d`` is ``gamma=1/255, coef0=1``); ``rbf``:
        ``exp(-gamma ||x - y||^2)`` (USPS, Table 1: ``gamma = 1 / (2 sigma^2)``);
        ``poly_rbf``: ``(coef0 + exp(-gamma ||x - y||^2))^degree`` (Letter, Table 5).
        A callable takes two 2-d arrays and returns their kernel matrix.
    degree : int >= 1, default=3
    gamma : float > 0, "scale" or "auto", default="scale"
        As in :class:`sklearn.svm.SVC`: "scale" is ``1 / (n_features X.var())``, "auto"
        ``1 / n_features`` (both from the first data seen).
    coef0 : float, default=1.0
        Unlike scikit-learn's default of 0: ``poly`` with ``coef0 = 0`` is homogeneous
        and ``poly_rbf`` with ``coef0 = 0`` is an RBF kernel.
    {kernel_intercept_doc(True)}
    block_size : int >= 1 or "auto", default="auto"
        Examples per block. Any value gives the same corrections (up to ties that the
        last bit of a sum decides). "auto" is 768 for arrays on a GPU (under array API
        dispatch) and 256 otherwise, the fastest measured (docs/gpu.md).
    cache_size : float >= 0, default=200
        Megabytes for the cache of each example's margin sums over the support vectors
        it has seen (``n_samples x n_problems`` numbers), which lets a later epoch of
        :meth:`fit` compute only the kernel columns of support vectors new to each
        example. 0 disables it.
    {BUDGET_DOC}
    {EARLY_STOPPING_DOC}
    verbose : int, default=0
        A progress bar over the blocks.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Position in the training stream of each support vector (a row index of X for
        :meth:`fit`). An example corrected in several epochs is one support vector,
        its corrections summed in its coefficients (the vote replays them in order
        on its kernel column): the model's memory and each prediction's kernel rows
        grow with the distinct examples, not with the corrections.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        Coefficients of the ``output`` hypothesis on ``K_hat(support_vectors_, x)``
        (not for ``"voted"``).
    n_corrections_ : int
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
    n_kernel_evaluations_ : int
        Kernel entries computed in training (each a dot product of two instances):
        the work of training, against which its time can be measured.
    gamma_ : float
    B_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import KernelALMAClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.5).astype(int)   # a circle
    >>> clf = KernelALMAClassifier(alpha=0.9, kernel="rbf", gamma=1.0, max_iter=3)
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        **ALMA_CONSTRAINTS,
        **KERNEL_CONSTRAINTS,
        **INTERCEPT_CONSTRAINTS,
        **BUDGET_CONSTRAINTS,
        **EARLY_STOPPING_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        alpha=0.9,
        B=None,
        C=SQRT2,
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
        self.alpha = alpha
        self.B = B
        self.C = C
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

    _traits = replace(KERNEL_TRAITS, normalises=True)

    def _rule_args(self):
        return L.Rule(L.RULE_ALMA, float(self.alpha), self.B_, float(self.C))
