"""ROMMA and aggressive ROMMA: Li and Long's relaxed online maximum margin algorithm."""

from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

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
    KERNEL_ADDED_PARAMS,
    KERNEL_CONSTRAINTS,
    KERNEL_TRAITS,
    KernelOnlineClassifier,
)
from ._linear_base import (
    LINEAR_ADDED_PARAMS,
    LINEAR_CONSTRAINTS,
    LINEAR_TRAITS,
    OnlineLinearClassifier,
)
from ._weights import CLASS_WEIGHT_DOC

#: ROMMA's own parameters, of both forms
ROMMA_CONSTRAINTS = {
    "aggressive": ["boolean"],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "lam": [Interval(Real, 0, None, closed="left")],
}


#: The traits both forms of ROMMA share (:class:`~marginkit._traits.Traits`): a
#: functional margin of 1 (``w . x`` does not change with the scale of x, of phi(x)),
#: and an update that can forget the hypothesis (zero its coefficients), so that a
#: kernel state keeps the vote's record of where each one starts
ROMMA_TRAITS = {"weight_degree": -1, "forgets": True}

#: a model of ROMMA saved before aggressive ROMMA's ``delta`` and the soft margin's ``lam``
ROMMA_ADDED_PARAMS = {"delta": 0.0, "lam": 0.0}


class ROMMARule:
    """The update rule both forms hand their compiled walk, and when their passes end."""

    def _rule_args(self):
        lam = self._model_lam()
        if self.aggressive:
            return L.Rule(L.RULE_AGGRESSIVE_ROMMA, delta=float(self.delta), lam=lam)
        return L.Rule(L.RULE_ROMMA, lam=lam)

    def _initialise(self, data):
        super()._initialise(data)
        self._model_lam()  # a ValueError, before any training, when lam swamps the data

    def _growth(self):
        # with the soft margin, over the rows of a fit (each keeps its slack coordinate,
        # _slack_rows), ||w~||^2 of each problem, slack coordinates included, grows at
        # every update (the new hypothesis lies in the half-space w' . w >= ||w||^2) and
        # stays below 1 / gamma~*^2: the passes end where it stops growing. A stream's
        # trials are new examples, whose space grows with them: its passes count
        # corrections.
        state, _ = self._slack_states()[0]
        if not state.slack.shape[0]:
            return None
        return self._squared_norms()

    @property
    def _ends_when_quiet(self):
        # with delta > 0, a pass without update is reached, and the guarantee is of it
        return bool(self.aggressive) and self.delta > 0


#: why ``intercept_scaling`` defaults to what it does (its docstring)
_BIAS_CHOICE = """with the soft margin, ``"rms"`` came within 1 point of ``LinearSVC`` on
        more public data sets than ``"max"`` (docs/defaults.md; with the hard margin,
        ``"max"`` keeps the hypothesis from outgrowing float64 longer)."""


class ROMMAClassifier(ROMMARule, OnlineLinearClassifier):
    __doc__ = f"""ROMMA, the Relaxed Online Maximum Margin Algorithm, and its aggressive variant.

    Y. Li and P. M. Long, "The Relaxed Online Maximum Margin Algorithm", Machine
    Learning 46 (2002) 361-387, section 3. After an update on ``(x, y)`` the new
    hypothesis is the shortest vector in the intersection of two half-spaces, the one
    of the new constraint ``y w' . x >= 1`` and the relaxation ``w' . w >= ||w||^2``
    of all earlier ones:

        w' = c w + d y x,   c = (||x||^2 ||w||^2 - y w . x) / D,
        d = ||w||^2 (1 - y w . x) / D,   D = ||x||^2 ||w||^2 - (w . x)^2,

    and ``w' = y x / ||x||^2`` when the relaxed constraint does not bind (the first
    update, and aggressive updates with ``y w . x >= ||x||^2 ||w||^2``). ROMMA updates
    on mistakes, ``y w . x <= 0``; aggressive ROMMA whenever ``y w . x < 1 - delta``
    (``delta = 0``: Li and Long's; ``delta > 0``: the approximate maximum-margin
    version Ishibashi, Hatano and Takeda run beside PUMMA, COLT 2008, Table 1). On data
    separable with margin gamma by a plane through the origin, both make at most
    ``R^2 / gamma^2`` mistakes (their Theorem 1; ROMMA's updates are its mistakes), R
    the largest norm of an instance.
    Every hypothesis has ``||w|| <= 1 / gamma*`` (gamma* the largest margin; the
    maximum-margin vector scaled to functional margin 1 satisfies every constraint
    ROMMA keeps), so a pass of aggressive ROMMA without an update ends with a margin of
    at least ``(1 - delta) gamma*``. Each hypothesis is the shortest vector of a
    half-space that holds the one before as its shortest, so an update on
    ``y w . x < 1 - delta`` adds at least ``delta^2 / R^2`` to ``||w||^2``: with
    ``delta > 0`` there are at most ``1 + R^2 / (delta^2 gamma*^2)`` updates. With
    ``fit_intercept`` these margins are those of the ``(x, -R)`` augmented space.
    When ``x`` is antiparallel to ``w`` the two constraints contradict each other (the
    data are not separable): the update then keeps only the new one,
    ``w' = y x / ||x||^2``.

    On data that are not separable the hypothesis of the hard margin grows without
    bound. The 2-norm soft margin ``lam`` (on by default) runs ROMMA on
    ``(x, sqrt(lam) e_t)``, each example with a coordinate of its own (Cristianini and
    Shawe-Taylor 2000, section 6.1.2; Li and Long's section 6 for kernels): there every
    labelled set is separable, the guarantees above hold with its R and margin, and
    aggressive ROMMA approaches the hyperplane of the 2-norm soft-margin SVM, that of
    ``LinearSVC(loss="squared_hinge", C=1 / (2 lam))`` with its intercept regularised
    as this bias is. :meth:`fit` gives a row one such coordinate for all its passes;
    :meth:`partial_fit`, ``fit_file`` and ``MixingClassifier`` learn a stream, in
    which every trial is an example of its own (memory stays that of ``w``).

    Parameters
    ----------
    aggressive : bool, default=True
        Update whenever ``y w . x < 1 - delta`` instead of only on mistakes. On by
        default: with the soft margin it came within 1 point of ``LinearSVC`` on more
        public data sets than ROMMA (docs/defaults.md); Li and Long's ROMMA is
        ``aggressive=False``.
    delta : float in [0, 1), default=0.0
        Degree of approximation of aggressive ROMMA (used only with
        ``aggressive=True``): once a pass makes no update, the margin is at least
        ``(1 - delta)`` times the largest. ``delta=0`` is Li and Long's aggressive
        ROMMA, which approaches the maximum margin without reaching an update-free pass;
        Ishibashi et al. use ``delta=0.01``. With ``delta > 0`` the passes of
        :meth:`fit` end at the first without update, as PUMMA's do; ``tol`` may end
        them sooner, ``tol=None`` waits for it (a ``ConvergenceWarning`` when
        ``max_iter`` comes first).
    lam : float >= 0, default=1.0
        The 2-norm soft margin, in the units of ``x . x``: an example's own coordinate
        holds ``sqrt(lam / c)`` (c its weight), so ``x_i . x_j`` becomes ``x_i . x_j +
        lam / c [i = j]``, the squared hinge loss of ``LinearSVC`` with ``C = 1 / (2
        lam)``. 0 is Li and Long's hard margin, whose hypothesis grows without bound on
        data that are not separable (a fit then ends before it overflows, with a
        ``ConvergenceWarning``). 1.0 as :class:`PUMMAClassifier`.
    output : {{"last", "avg", "voted"}}, default="avg"
        The final hypothesis, the average ``sum_k c_k w_k`` or the vote
        ``sum_k c_k sign(w_k . x)`` (``c_k``: trials ``w_k`` survived); all three come
        from one run. The average by default (docs/defaults.md); the paper's ROMMA
        predicts with ``"last"``.
    {HORIZON_DOC}
    {KEEP_CORRECTIONS_DOC}
    max_iter : int >= 1, default=1000
        The most passes of :meth:`fit` over the training set; ``tol`` ends them when
        the corrections stop falling, or, with the soft margin, when the hypothesis
        stops growing: ``||w~||^2`` (slack coordinates included), which every update
        increases and ``1 / gamma~*^2`` bounds, grew by at most ``tol`` times itself in
        every problem for ``n_iter_no_change`` passes in a row (aggressive ROMMA makes
        about as many updates in each pass while it converges). The paper's
        experiments make one.
    {PASSES_DOC}
    {N_ITER_NO_CHANGE_DOC}
    {SHUFFLE_DOC}
    {CLASS_WEIGHT_DOC}
    {intercept_doc("rms", _BIAS_CHOICE)}
        ``aggressive=False, lam=0, fit_intercept=False, max_iter=1, output="last"`` is
        the published ROMMA.
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
    >>> clf = ROMMAClassifier(lam=0, max_iter=5, output="last", shuffle=False)
    >>> clf = clf.fit(X, y)
    >>> bool(np.all(y * clf.decision_function(X) >= 1 - 1e-12))
    True
    """

    _parameter_constraints: dict = {**ROMMA_CONSTRAINTS, **LINEAR_CONSTRAINTS}

    def __init__(
        self,
        *,
        aggressive=True,
        delta=0.0,
        lam=1.0,
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
        self.aggressive = aggressive
        self.delta = delta
        self.lam = lam
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

    # a model saved before delta updated on y w . x < 1, and before the soft margin
    _added_params = {**LINEAR_ADDED_PARAMS, **ROMMA_ADDED_PARAMS}
    _traits = replace(LINEAR_TRAITS, **ROMMA_TRAITS)

    def _squared_norms(self):
        # ||w~||^2 = s^2 (S + ||zeta||^2) of each problem
        fs = [state.fs for state in self._states]
        return np.array([f[L.F_S] ** 2 * (f[L.F_SUM] + f[L.F_SLACK]) for f in fs])


class KernelROMMAClassifier(ROMMARule, KernelOnlineClassifier):
    __doc__ = f"""ROMMA and aggressive ROMMA in a reproducing kernel Hilbert space.

    The update of :class:`ROMMAClassifier` with inner products replaced by a kernel
    (Li and Long 2002, section 5): ``w = s sum_j a_j phi(x_j)``; an update scales ``s``
    by ``c`` and appends ``a = d y / s``, and ``||w'||^2 = c ||w||^2 + d`` follows from
    the two binding constraints, so no kernel sum beyond the margins is needed. When
    only the new constraint binds, the old hypothesis is dropped
    (``w' = y phi(x) / K(x, x)``). Training runs on the blocked exact engine of
    :class:`~marginkit.KernelALMAClassifier`.

    The 2-norm soft margin ``lam`` (on by default) is Li and Long's section 6: the
    kernel ``K(x_i, x_j) + lam / c [i = j]`` (c the row's weight), every example with a
    coordinate of its own, so that any labelled data are separable and aggressive
    ROMMA approaches the 2-norm soft-margin SVM (the squared hinge loss, with
    ``C = 1 / (2 lam)``). As in :class:`ROMMAClassifier`, :meth:`fit` gives a row
    one such coordinate for all its passes, and a stream (:meth:`partial_fit`,
    ``fit_file``) a new one at every trial. With a budget, a maintenance step keeps the
    part of the hypothesis its store holds and sets those coordinates to 0.

    Parameters
    ----------
    aggressive : bool, default=True
        Update whenever ``y w . phi(x) < 1 - delta`` instead of only on mistakes. On by
        default: with the soft margin it came within 1 point of ``SVC`` on 13 of 14
        public data sets, in either row order, and with ``class_weight="balanced"``
        within 1 point of ``SVC(class_weight="balanced")`` on the imbalanced ones
        (docs/defaults.md); Li and Long's ROMMA is ``aggressive=False``.
    delta : float in [0, 1), default=0.0
        As in :class:`ROMMAClassifier` (used only with ``aggressive=True``): a pass
        without an update ends with at least ``(1 - delta)`` times the largest margin,
        and with ``delta > 0`` the passes of :meth:`fit` end there.
    lam : float >= 0, default=1.0
        The 2-norm soft margin, in the units of ``K(x, x)``: an example's own coordinate
        holds ``sqrt(lam / c)`` (c its weight). A weight enters both that coordinate
        and the update (``a w + c d y phi(x)``, as without the soft margin): with the
        coordinate alone, class weights moved the imbalanced problems of
        docs/defaults.md too little (3 of 6 within 1 point). 0 is Li and Long's hard
        margin, whose hypothesis grows without bound on data that are not separable.
    output : {{"last", "avg", "voted"}}, default="avg"
        The average by default (docs/defaults.md); the published algorithm predicts
        with ``"last"``.
    {HORIZON_DOC}
    max_iter : int >= 1, default=1000
        The most passes of :meth:`fit` over the training set; ``tol`` ends them, with
        the soft margin, when ``||w~||^2`` (its coordinates included), which every
        update increases and ``1 / gamma~*^2`` bounds, grew by at most ``tol`` times
        itself in every problem in a pass; with the hard margin when the corrections
        stop falling, or stay level with the first
        pass's on noisy data (docs/defaults.md). A budget's store, once full, ends
        them as the hard margin does (its maintenance steps shrink the norm).
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
        Updates over all one-vs-rest problems.
    n_corrections_per_class_ : ndarray of shape (n_problems,)
    n_trials_ : int
    n_kernel_evaluations_ : int
    gamma_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import KernelROMMAClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.5).astype(int)
    >>> clf = KernelROMMAClassifier(kernel="rbf", gamma=1.0, max_iter=3)
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    """

    _parameter_constraints: dict = {
        **ROMMA_CONSTRAINTS,
        **KERNEL_CONSTRAINTS,
        **INTERCEPT_CONSTRAINTS,
        **BUDGET_CONSTRAINTS,
        **EARLY_STOPPING_CONSTRAINTS,
        "normalize": ["boolean"],
    }

    def __init__(
        self,
        *,
        aggressive=True,
        delta=0.0,
        lam=1.0,
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
        self.aggressive = aggressive
        self.delta = delta
        self.lam = lam
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

    # a model saved before delta, and before the soft margin
    _added_params = {**KERNEL_ADDED_PARAMS, **ROMMA_ADDED_PARAMS}
    _traits = replace(KERNEL_TRAITS, **ROMMA_TRAITS)
