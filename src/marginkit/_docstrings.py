"""The docstring fragments that several estimators share (their parameters' text).

An estimator's numpydoc docstring is an f-string that places them where they belong
(``{PASSES_DOC}``); ``tests/test_structure.py`` checks that none is left unfilled.
"""

PASSES_DOC = """tol : float >= 0 or None, default=1e-3
        When :meth:`fit` stops before ``max_iter`` passes: after ``n_iter_no_change``
        passes in a row (for the estimators that have it; else one) in which no one-vs-rest
        problem made fewer corrections than in its best earlier pass by more than
        ``tol * n_samples`` (the data no longer change how well the model fits them,
        scikit-learn's rule for its ``Perceptron``), or after a pass without any
        correction (the hypothesis can no longer change). The kernel estimators also stop after a
        pass, from the second on, in which every problem made at least 0.85 times its
        first pass's corrections: data whose errors are noise, which more passes only
        memorise (docs/defaults.md). When ``max_iter`` passes end while the
        corrections still fell, a :class:`~sklearn.exceptions.ConvergenceWarning` says
        so. None makes every one of the ``max_iter`` passes, without the warning, as
        the papers' runs do.
    n_epochs : int >= 1
        Deprecated: the former name of ``max_iter``, taken (with a ``FutureWarning``)
        until marginkit 0.3."""

HORIZON_DOC = """horizon : float > 1 or None, default=None
        The averaged output's horizon, for a stream that changes: over T trials, the
        hypothesis after trial t weighs ``(1 - 1 / horizon)^(T - t)``, an exponential
        average over about the last ``horizon`` trials (each binary problem's), which
        forgets a concept the stream has left. It is kept as exactly as the plain
        average, by the same running sums (no copy of any hypothesis). None weighs every
        trial alike: Freund and Schapire's average, the papers'. Only ``output="avg"``
        reads it (``"last"`` is the horizon of one trial); set after a fit, it takes
        effect at the next (docs/streams.md)."""

KEEP_CORRECTIONS_DOC = """keep_corrections : bool, default=False
        Keep every correction (the non-zeros of the corrected instances and their
        coefficients), which the voted output replays, so that ``output`` can be set to
        ``"voted"`` after fitting. The model then grows with its corrections, and a saved
        one contains the corrected rows; without it, memory and saved models are
        O(n_features) however long the stream. ``output="voted"`` at fit time keeps
        them too."""

KERNEL_DOC = """kernel : {"linear", "poly", "rbf", "poly_rbf"} or callable, default="rbf"
        As in :class:`~marginkit.KernelALMAClassifier`: ``poly`` is
        ``(gamma x . y + coef0)^degree``, ``rbf`` ``exp(-gamma ||x - y||^2)``, ``poly_rbf``
        ``(coef0 + exp(-gamma ||x - y||^2))^degree``; a callable returns the kernel matrix
        of two 2-d arrays.
    degree : int >= 1, default=3
    gamma : float > 0, "scale" or "auto", default="scale"
    coef0 : float, default=1.0
    normalize : bool, default=False
        Run on ``phi(x) / ||phi(x)||``, i.e. ``K(x, y) / sqrt(K(x, x) K(y, y))``, as
        kernel ALMA does.
    block_size : int >= 1 or "auto", default="auto"
        Examples per block of the engine; any value gives the same updates, but for
        ties that rounding decides: aggressive ROMMA puts each example it corrects
        exactly on its margin, and a later trial of that example can fall on either
        side of 1 by the last bit, as the block's sums are ordered. "auto" is 768 for
        arrays on a GPU (under array API dispatch) and 256 otherwise, the fastest
        measured with kernel ALMA (docs/gpu.md).
    cache_size : float >= 0, default=200
        Megabytes for the margin sums kept across the epochs of one :meth:`fit`."""

BUDGET_DOC = """budget : int >= 2 or None, default=None
        The most support vectors the model stores (one store shared by the one-vs-rest
        problems), so that memory, the time per training row and the time per
        prediction stay bounded however long the stream. When a correction fills the
        store, one maintenance step brings it to ``budget - max(1, budget // 20)``
        vectors by ``budget_rule`` (:mod:`marginkit._core.budget`). None: no budget,
        the exact algorithm. A budget above the support vectors a run makes gives that
        run's model. With a budget, ``output="voted"`` is not offered (the vote needs
        every hypothesis of the run).
    budget_rule : {"project_new", "project", "project_old", "merge", "remove_oldest", \
"remove_random"}, default="project_new"
        ``"project_new"``: keep the first ``budget - max(1, budget // 20)`` vectors
        stored, and at each step project the vectors stored since onto them (the
        Projectron of Orabona, Keshet and Caputo 2009 with a fixed set; any kernel;
        ``O(budget^2 x n_classes)`` per step, one factorisation in all). The vectors
        kept never change: a stream that changes does better with ``"project_old"``.
        ``"project"``: remove the vectors that carry least of the last and averaged
        hypotheses and project what they carried onto the vectors kept (any kernel;
        ``O(budget^2 x step)`` per step, a factorisation by LAPACK every 8 steps).
        ``"project_old"``: remove the vectors stored first and project what they
        carried onto the later ones (any kernel; as ``"project"``'s cost): the store
        follows the stream's latest corrections, for a stream that changes.
        ``"merge"``: merge each vector of least weight with the partner that loses
        least into one vector between them (BSGD's
        merge; ``kernel="rbf"`` only; ``O(budget x n_features)`` per vector merged).
        A merged vector's ``support_`` entry is that of the heavier of the two.
        ``"remove_oldest"``: remove the vectors stored first, and what they carried
        with them (the Forgetron's removal; a window over the latest corrections).
        ``"remove_random"``: remove vectors drawn at random (the Randomized Budget
        Perceptron of Cavallanti, Cesa-Bianchi and Gentile 2007, whose bound follows a
        target that changes), drawn with ``random_state``. Both cost a Gram matrix of
        the store per step (``O(budget^2 x n_features)``) and lose, on a stream that
        does not change, what a projection keeps (docs/budget.md)."""

EARLY_STOPPING_DOC = """early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows of :meth:`fit` (each class in
        proportion, drawn with ``random_state``), train on the rest, and after each
        pass score the ``output`` hypothesis on the rows held out: the passes end after
        ``n_iter_no_change`` passes in a row that do not beat the best pass's accuracy
        by more than ``tol`` (0 for None), or after a pass without correction, and the
        model of the best pass is kept (``n_iter_`` counts every pass made). For data
        whose errors are noise, where more passes fit the noise (docs/defaults.md).
        Not offered with checkpoints or streamed fits (:func:`marginkit.fit_file`),
        which hold no rows out.
    validation_fraction : float in (0, 1), default=0.1
        The share of the rows held out by ``early_stopping`` (each class in
        proportion; with ``shuffle``, drawn from the rows sorted by content, so that
        their order does not decide which).
    n_iter_no_change : int >= 1, default=3
        Passes in a row that do not improve before the passes end: by ``tol``'s rule
        (on the corrections, or on the growth of kernel ROMMA's soft-margin norm), or,
        with ``early_stopping``, without a better accuracy on the rows held out. 1
        ends them at the first such pass (the rule of 0.1.0); with three, weighted
        fits no longer end while their corrections still fall (docs/defaults.md,
        "How many passes")."""

N_ITER_NO_CHANGE_DOC = """n_iter_no_change : int >= 1, default=5
        Passes in a row that do not improve by ``tol``'s rule before the passes end,
        scikit-learn's default for its ``Perceptron``. On data that are not separable
        the averaged hypothesis goes on improving over passes whose corrections no
        longer fall (docs/defaults.md); 1 ends the passes at the first such pass."""


def intercept_doc(default, why):
    """The text of ``fit_intercept`` and ``intercept_scaling``, whose default (``"rms"``
    or ``"2rms"``) each estimator chose by measurement, ``why``."""
    return f"""fit_intercept : bool, default=True
        Learn a bias through the augmentation ``x -> (x, -R_)``, R_ a constant bias
        coordinate (``intercept_scaling``), as in section 1 of Ishibashi, Hatano and
        Takeda (COLT 2008). The algorithm's guarantees then hold for the augmented
        instances: its radius is ``sqrt(R^2 + R_^2)`` and the margin is that of the
        augmented data (docs/defaults.md, "The bias").
    intercept_scaling : {{"rms", "2rms", "max"}} or float > 0, default="{default}"
        The bias coordinate R_, fixed at the first :meth:`fit` or :meth:`partial_fit`:
        the root mean square p-norm of its instances (``"rms"``), which one row of
        outlying norm moves by at most its norm over the square root of the number of
        rows; twice that (``"2rms"``, of the order of the largest norm where no row lies
        far out, and moved by at most twice as much); their largest p-norm (``"max"``, the
        papers' R, which one such row sets for all); or the value given, in the units
        of the features (as scikit-learn's ``intercept_scaling``). ``"{default}"`` by
        default, by measurement: {why}"""


SHUFFLE_DOC = """shuffle : bool, default=True
        A new random order of the rows for every pass of :meth:`fit`, drawn from
        ``random_state``, as scikit-learn's ``Perceptron`` and ``SGDClassifier`` do, so
        that the model does not depend on the order of the rows: an online model
        follows the latest rows it saw, and data files are often sorted by class
        (docs/defaults.md). The order shuffled is that of the rows sorted by their
        content, so that the same rows given in any order make the same passes, and so
        the same model but for the rounding of ``gamma="scale"`` and of the BLAS
        products. ``shuffle=False`` presents them in the order given, as the papers'
        runs do (the reproductions pass it). :meth:`partial_fit` and
        :func:`marginkit.fit_file` learn a stream in its own order whatever it says,
        and warn once when the stream comes in long runs of one label.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling: an int gives the same model at every fit; None a new
        order each time."""


def kernel_intercept_doc(default):
    """The ``fit_intercept`` and ``intercept_scaling`` of a kernel estimator whose
    ``fit_intercept`` defaults to ``default``."""
    return f"""fit_intercept : bool, default={default}
        Learn a bias: a constant coordinate ``c`` is appended to every ``phi(x)``, so
        that the kernel becomes ``K(x, y) + c^2`` (before a normalisation), as
        scikit-learn's ``LinearSVC`` appends a constant feature to every ``x``.
        The algorithm and its guarantees are unchanged, in the augmented space: a
        hyperplane through its origin is one with a bias in the kernel's.
        ``dual_coef_`` are the coefficients on that kernel, ``K + c^2``.
        ``budget_rule="merge"`` needs ``fit_intercept=False``.
    intercept_scaling : float > 0, "rms" or "max", default=0.5
        The coordinate ``c``, relative to the norm ``sqrt(K(x, x))`` of a row of the
        root mean square norm of the rows of the fit (of a callable kernel: the root
        mean square of ``sqrt(K(x, x))`` over the first rows trained on), so that the
        model does not depend on the scale of the features: a number is that many
        times it, ``"rms"`` is 1, ``"max"`` the largest norm instead (1 for every row
        under the Gaussian kernel). 0.5 by default (``c^2 = 0.25`` with the Gaussian
        kernel), the best measured (docs/defaults.md)."""
