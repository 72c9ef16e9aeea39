"""p-norm margins of hyperplanes, and the largest margin a labelled data set admits.

The p-norm distance from an instance ``x`` to the hyperplane ``{z : w . z + b = 0}`` is
``|w . x + b| / ||w||_q`` with ``1/p + 1/q = 1`` (Lemma 1 of Ishibashi, Hatano and
Takeda, "Online learning of approximate maximum p-norm margin classifiers with biases",
COLT 2008): the bias enters the distance but not the norm. With labels ``y_i`` in
``{-1, +1}`` the *margin* of the hyperplane on ``(x_i, y_i)`` is

    gamma(w, b) = min_i y_i (w . x_i + b) / ||w||_q,

positive exactly when the hyperplane separates the data. :func:`margin` computes it for a
fitted linear classifier or a coefficient vector, :func:`margin_distribution` gives every
per-example value, and :func:`max_margin` solves for the largest margin
``gamma* = max_(w, b) gamma(w, b)`` as a convex program (an optional dependency:
``pip install "marginkit[margins]"``).

Gentile's normalised margin (JMLR 2 (2001), section 2), the quantity the ALMA_p bounds
are stated in, is the margin on the normalised instances ``x_i / ||x_i||_p``: with
``b = 0`` it is ``min_i y_i w . x_i / (||w||_q ||x_i||_p)``. Every function here takes
``normalize=True`` for it.
"""

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, Options, StrOptions, validate_params
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from ._rows import power_of_two_scaled

__all__ = ["margin", "margin_distribution", "max_margin"]

_P_CONSTRAINTS = [
    Interval(Real, 1, None, closed="left"),
    Options(Real, {np.inf}),
    StrOptions({"log"}),
]

_INSTALL_HINT = 'max_margin needs cvxpy and clarabel: pip install "marginkit[margins]"'


# -- norms ---------------------------------------------------------------------------
def _resolve_p(p, n_features):
    """The p in use: ``"log"`` is ``2 ln d`` (never less than 2), d = n_features."""
    if isinstance(p, str):
        return max(2.0, 2.0 * float(np.log(n_features)))
    return float(p)


def _dual_exponent(p):
    """q with 1/p + 1/q = 1 (inf for p = 1, 1 for p = inf)."""
    if p == 1.0:
        return np.inf
    if np.isinf(p):
        return 1.0
    return p / (p - 1.0)


def _norm(v, p):
    """p-norm of a 1-d array, divided by its largest magnitude first (no overflow)."""
    a = np.abs(np.asarray(v, dtype=np.float64))
    peak = float(a.max(initial=0.0))
    if peak == 0.0 or np.isinf(p):
        return peak
    return peak * float(np.sum((a / peak) ** p)) ** (1.0 / p)


def _row_norms(X, p):
    """p-norm of every row of a dense array or CSR matrix (rows scaled as in ``_norm``)."""
    if sp.issparse(X):
        A = abs(X).tocsr()
        peak = A.max(axis=1).toarray().ravel()
    else:
        A = np.abs(X)
        peak = A.max(axis=1)
    if np.isinf(p):
        return peak
    inv = np.zeros_like(peak)
    np.divide(1.0, peak, out=inv, where=peak > 0)
    if sp.issparse(X):
        total = np.asarray((sp.diags(inv) @ A).power(p).sum(axis=1)).ravel()
    else:
        total = ((A * inv[:, None]) ** p).sum(axis=1)
    return peak * total ** (1.0 / p)


# -- margins of a given hyperplane ---------------------------------------------------
def _binary_classes(y):
    """Default label order for a coefficient vector: -1 and +1, or the two labels of y."""
    labels = np.unique(y)
    if labels.shape[0] == 2:
        return labels
    if labels.dtype.kind in "iuf" and np.isin(labels, [-1, 1]).all():
        return np.array([-1, 1])
    raise ValueError(
        f"margin is defined for binary problems: y has {labels.shape[0]} classes "
        f"{labels}, expected two (or only labels -1 and +1)."
    )


def _hyperplane(estimator_or_coef, intercept, y):
    """(w, b, classes) from a fitted binary linear classifier or a coefficient array."""
    obj = estimator_or_coef
    if hasattr(obj, "fit"):
        name = type(obj).__name__
        if intercept is not None:
            raise ValueError(
                f"intercept must be None when an estimator is given; {name}.intercept_ is used."
            )
        check_is_fitted(obj)
        classes = getattr(obj, "classes_", None)
        if classes is not None and len(classes) != 2:
            raise ValueError(
                f"margin is defined for binary problems; {name} was fitted on "
                f"{len(classes)} classes."
            )
        try:
            coef = obj.coef_
        except AttributeError as exc:
            raise TypeError(f"margin needs a linear classifier with coef_: {exc}") from exc
        intercept = getattr(obj, "intercept_", 0.0)
        if classes is None:
            classes = _binary_classes(y)
    else:
        coef = obj
        intercept = 0.0 if intercept is None else intercept
        classes = _binary_classes(y)
    coef = check_array(
        np.atleast_2d(coef), dtype=np.float64, ensure_min_samples=1, input_name="coef"
    )
    if coef.shape[0] != 1:
        raise ValueError(
            "coef must have shape (n_features,) or (1, n_features), one binary problem; "
            f"got shape {coef.shape}."
        )
    b = np.asarray(intercept, dtype=np.float64).ravel()
    if b.shape[0] != 1 or not np.isfinite(b[0]):
        raise ValueError(f"intercept must be one finite number; got {intercept!r}.")
    return coef[0], float(b[0]), np.asarray(classes)


@validate_params(
    {
        "estimator_or_coef": "no_validation",
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "p": _P_CONSTRAINTS,
        "intercept": [Real, "array-like", None],
        "normalize": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def margin_distribution(estimator_or_coef, X, y, p=2, *, intercept=None, normalize=False):
    """Signed p-norm distances ``y_i (w . x_i + b) / ||w||_q`` of every example.

    The distance in p-norm from ``x_i`` to the hyperplane ``w . x + b = 0`` (Lemma 1 of
    Ishibashi, Hatano and Takeda, COLT 2008), positive on the correct side: the values
    whose minimum is :func:`margin` and whose spread a margin-distribution plot shows.

    Parameters
    ----------
    estimator_or_coef : fitted binary linear classifier or array-like of shape \
            (n_features,) or (1, n_features)
        A classifier with ``coef_`` (one row), ``intercept_`` and ``classes_``, the
        label ``classes_[1]`` meaning +1 (as for
        :class:`~marginkit.ALMAClassifier` or :class:`sklearn.svm.LinearSVC`), or the
        weight vector ``w`` itself.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels. With an estimator, labels of its ``classes_``; with a coefficient
        array, -1 and +1 (either may be absent) or any two labels, the larger in
        sorted order meaning +1.
    p : float in [1, inf] or "log", default=2
        The norm distances are measured in; ``w`` is measured in the dual norm
        ``q = p / (p - 1)``. ``"log"`` is ``2 ln n_features`` and at least 2
        (:class:`~marginkit.ALMAClassifier` with ``fit_intercept=True`` counts one
        more dimension: pass ``p=clf.p_`` to match it).
    intercept : float, default=None
        The bias ``b`` of a coefficient array (None means 0). Must be None with an
        estimator, whose ``intercept_`` is used.
    normalize : bool, default=False
        Measure the margin on the normalised instances ``x_i / ||x_i||_p`` (Gentile,
        JMLR 2001): with ``b = 0`` the values are ``y_i w . x_i / (||w||_q ||x_i||_p)``.
        Zero instances get NaN.

    Returns
    -------
    margins : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        When the hyperplane is not that of a binary problem, its size differs from
        the number of features, ``w = 0`` (the margin is undefined) or y holds labels
        the hyperplane does not know.
    TypeError
        When the estimator has no ``coef_`` (a kernel or voted classifier).

    See Also
    --------
    margin : the smallest of these values.

    Examples
    --------
    >>> from marginkit.margins import margin_distribution
    >>> X = [[2.0, 0.0], [0.0, -1.0], [-3.0, 0.0]]
    >>> y = [1, 1, -1]
    >>> margin_distribution([1.0, -1.0], X, y, p=2, intercept=1.0) * 2**0.5
    array([3., 2., 2.])
    """
    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    check_classification_targets(y)
    w, b, classes = _hyperplane(estimator_or_coef, intercept, y)
    if w.shape[0] != X.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features, but the hyperplane has {w.shape[0]} coefficients."
        )
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(f"y contains labels {unknown} that are not in classes {classes}")
    signs = np.where(y == classes[1], 1.0, -1.0)
    p_ = _resolve_p(p, X.shape[1])
    if not np.any(w):
        raise ValueError("The margin is undefined for the zero weight vector (||w||_q = 0).")
    # X and w scaled by powers of two to entries below 1, so that w . x and ||w|| neither
    # overflow nor underflow at any scale of the features or the weights: the distance
    # is (w' . x' + b 2^-(ew + ex)) / ||w'||_q in units of 2^ex
    X, ex = power_of_two_scaled(X)
    w, ew = power_of_two_scaled(w)
    norm_w = _norm(w, _dual_exponent(p_))
    scores = np.asarray(X @ w).ravel()
    if not normalize:
        return np.ldexp(signs * (scores + np.ldexp(b, -(ew + ex))) / norm_w, ex)
    norms = _row_norms(X, p_)
    out = np.full(X.shape[0], np.nan)
    nonzero = norms > 0
    b = np.ldexp(b, -ew)  # the instances are normalised: b is in units of w only
    out[nonzero] = signs[nonzero] * (scores[nonzero] / norms[nonzero] + b) / norm_w
    return out


@validate_params(
    {
        "estimator_or_coef": "no_validation",
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "p": _P_CONSTRAINTS,
        "intercept": [Real, "array-like", None],
        "normalize": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def margin(estimator_or_coef, X, y, p=2, *, intercept=None, normalize=False):
    """p-norm geometric margin ``min_i y_i (w . x_i + b) / ||w||_q`` of a hyperplane.

    With ``1/p + 1/q = 1``, the signed p-norm distance of the example closest to (or
    deepest on the wrong side of) the hyperplane ``w . x + b = 0``: positive exactly
    when the hyperplane separates the data, and then the width of the empty band
    around it. The bias is not part of the norm (Lemma 1 of Ishibashi, Hatano and
    Takeda, COLT 2008). The value is unchanged by scaling ``(w, b)``.

    Parameters
    ----------
    estimator_or_coef : fitted binary linear classifier or array-like of shape \
            (n_features,) or (1, n_features)
        A classifier with ``coef_`` (one row), ``intercept_`` and ``classes_``
        (``classes_[1]`` means +1), or the weight vector ``w``.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels: see :func:`margin_distribution`.
    p : float in [1, inf] or "log", default=2
        The norm of the instance space (``"log"``: ``2 ln n_features``, at least 2).
    intercept : float, default=None
        The bias ``b`` of a coefficient array (None means 0); None with an estimator.
    normalize : bool, default=False
        Gentile's normalised margin: the margin on ``x_i / ||x_i||_p``, which for
        ``b = 0`` is ``min_i y_i w . x_i / (||w||_q ||x_i||_p)`` (JMLR 2001), the
        margin of the ALMA_p bounds. Zero instances are skipped.

    Returns
    -------
    margin : float
        Negative when some example is misclassified, 0 when one lies on the
        hyperplane.

    Raises
    ------
    ValueError
        As :func:`margin_distribution`; also when ``normalize=True`` and every
        instance is zero.
    TypeError
        When the estimator has no ``coef_``.

    See Also
    --------
    margin_distribution : all the per-example values.
    max_margin : the largest margin over all hyperplanes.

    Examples
    --------
    >>> from marginkit.margins import margin
    >>> X = [[1.0, 1.0], [2.0, 2.0], [-1.0, -1.0]]
    >>> y = [1, 1, -1]
    >>> round(margin([1.0, 1.0], X, y, p=2), 4)     # sqrt(2)
    1.4142
    >>> round(margin([1.0, 1.0], X, y, p=1), 4)     # ||w||_inf = 1
    2.0
    >>> round(margin([1.0, 1.0], X, y, p=2, normalize=True), 4)
    1.0
    """
    values = margin_distribution(
        estimator_or_coef, X, y, p, intercept=intercept, normalize=normalize
    )
    if np.isnan(values).all():
        raise ValueError(
            "Every instance is zero: the normalised margin (normalize=True) is undefined."
        )
    return float(np.nanmin(values))


# -- the maximum margin ----------------------------------------------------------------
def _import_cvxpy():
    try:
        import cvxpy
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return cvxpy


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "p": _P_CONSTRAINTS,
        "fit_intercept": ["boolean"],
        "lam": [Interval(Real, 0, None, closed="left")],
        "normalize": ["boolean"],
        "solver": [str],
        "solver_options": [dict, None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "return_coef": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def max_margin(
    X,
    y,
    p=2,
    *,
    fit_intercept=True,
    lam=0.0,
    normalize=False,
    solver="CLARABEL",
    solver_options=None,
    tol=1e-6,
    return_coef=False,
):
    """The largest p-norm margin ``gamma*`` of any hyperplane on the data, to a certified tol.

    Solves the convex program

        minimise ||w||_q  subject to  y_i (w . x_i + b) >= 1  for every i

    (``b = 0`` without ``fit_intercept``), so that ``gamma* = 1 / ||w||_q`` is the
    largest :func:`margin` of any hyperplane, with ``1/p + 1/q = 1``. For p = 2 it is
    the hard-margin SVM, a quadratic program in ``||w||_2^2``; p = 1 and p = inf give
    linear programs, and other p minimise ``||w||_q^q`` with second-order cones.

    The answer is checked, whatever the solver reports: the hyperplane found attains
    a margin ``gamma`` (a lower bound on ``gamma*``), and the solver's multipliers
    give, by weak duality, an upper bound ``||sum_i a_i y_i x_i||_p`` (``a`` on the
    simplex, balanced between the classes when there is a bias). ``gamma`` is
    returned only when the upper bound is within a factor ``1 + tol`` of it.

    With ``lam > 0`` it gives the 2-norm soft margin that PUMMA's experiments compare
    against (Ishibashi, Hatano and Takeda, COLT 2008): the instances are augmented
    with their own coordinate, ``x_i -> (x_i, sqrt(lam) e_i)``, so that the inner
    products become ``x_i . x_j + lam [i = j]``, and the margin is that of the
    augmented data (always separable, so it always exists):

        minimise ||(w, v)||_q  subject to  y_i (w . x_i + sqrt(lam) v_i + b) >= 1.

    For p = 2 this is the SVM with squared hinge loss and ``C = 1 / (2 lam)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Two classes; the larger label in sorted order is +1.
    p : float in [1, inf] or "log", default=2
        The norm of the instance space (``"log"``: ``2 ln n_features``, at least 2).
    fit_intercept : bool, default=True
        Allow a bias ``b`` (not part of the norm).
    lam : float >= 0, default=0.0
        Soft-margin parameter; 0 gives the hard margin.
    normalize : bool, default=False
        Maximise Gentile's normalised margin: solve on ``x_i / ||x_i||_p``, zero
        instances left out (see :func:`margin`). The augmentation of ``lam > 0`` comes
        after the normalisation.
    solver : str, default="CLARABEL"
        The cvxpy solver; it must return dual values. The default usually brings the
        gap below 1e-7.
    solver_options : dict, default=None
        Keyword arguments for ``cvxpy.Problem.solve``, e.g. ``{"verbose": True}``.
    tol : float > 0, default=1e-6
        Largest relative gap between the returned margin and the upper bound.
    return_coef : bool, default=False
        Also return the optimal hyperplane.

    Returns
    -------
    gamma : float
        The maximum margin, in the units of X: the margin the returned hyperplane
        attains, with ``gamma <= gamma* <= (1 + tol) gamma``.
    coef : ndarray of shape (n_features,)
        Only with ``return_coef``: the optimal ``w``. With ``lam = 0`` it is scaled so
        that the smallest ``y_i (w . x_i + b)`` is 1, hence ``||w||_q = 1 / gamma``,
        and ``margin(coef, X, y, p, intercept=intercept)`` is ``gamma``. With
        ``lam > 0``, ``gamma = 1 / ||(w, v)||_q`` with the augmented coordinates
        ``v_i = y_i max(0, 1 - y_i (w . x_i + b)) / sqrt(lam)``. With ``normalize``
        the hyperplane is one for the normalised instances.
    intercept : float
        Only with ``return_coef``: the optimal ``b`` (0 without ``fit_intercept``).

    Raises
    ------
    ImportError
        When cvxpy (or, for the default solver, clarabel) is not installed.
    ValueError
        When y does not hold two classes, the solver is not installed, (with
        ``lam = 0``) no hyperplane separates the data, or (with ``return_coef``) the
        optimal ``w`` is too large for a float64 (features near 1e-308).
    RuntimeError
        When the solver fails, stops without a solution, or leaves a gap above ``tol``.

    See Also
    --------
    margin : the margin of a given hyperplane.

    Examples
    --------
    >>> from marginkit.margins import max_margin
    >>> X = [[1.0, 1.0], [-1.0, -1.0]]
    >>> y = [1, 0]
    >>> [round(max_margin(X, y, p), 4) for p in (1, 2, float("inf"))]   # ||x+ - x-||_p / 2
    [2.0, 1.4142, 1.0]
    >>> gamma, w, b = max_margin(X, y, fit_intercept=False, lam=1.0, return_coef=True)
    >>> round(gamma, 4)                                               # sqrt(2 + 1 / 2)
    1.5811
    """
    cp = _import_cvxpy()
    solver = solver.upper()
    if solver not in cp.installed_solvers():
        if solver == "CLARABEL":
            raise ImportError(_INSTALL_HINT)
        raise ValueError(
            f"The solver {solver!r} is not installed; installed solvers: {cp.installed_solvers()}."
        )
    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.shape[0] > 2:
        raise ValueError(
            f"max_margin is defined for binary problems; y has {classes.shape[0]} classes."
        )
    signs = np.where(y == classes[-1], 1.0, -1.0)
    n_features = X.shape[1]
    p_ = _resolve_p(p, n_features)
    q = _dual_exponent(p_)
    if normalize:
        norms = _row_norms(X, p_)
        keep = norms > 0
        inv = 1.0 / norms[keep]
        X = sp.diags(inv) @ X[keep] if sp.issparse(X) else X[keep] * inv[:, None]
        signs = signs[keep]
    n_present = np.unique(signs).shape[0]
    if n_present < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {n_present} class"
            + (" among the nonzero instances" if normalize else "")
        )
    # the program solved on the data scaled by a power of two (exactly) to entries below
    # 1: its margins are those of X times that power, whatever the scale of X
    X, lam, exponent = _unit_scaled(X, lam)

    w, b, weights, status = _solve(cp, X, signs, q, fit_intercept, lam, solver, solver_options)
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        where = "" if fit_intercept else " by a hyperplane through the origin"
        raise ValueError(
            f"The data are not linearly separable{where}: no hyperplane has a positive "
            "margin. Use lam > 0 for the soft margin."
        )
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"The solver {solver} stopped with status {status!r}.")
    coef, intercept, lower = _attained(X, signs, p_, w, b, lam)
    upper = _dual_bound(X, signs, p_, weights, fit_intercept, lam)
    if not upper <= lower * (1.0 + tol):
        raise RuntimeError(
            f"The solver {solver} stopped with status {status!r} and the maximum margin "
            f"only known to lie in [{lower:.6g}, {upper:.6g}], not within tol={tol:g}."
        )
    lower = float(np.ldexp(lower, exponent))
    if not return_coef:
        return lower
    coef = np.ldexp(coef, -exponent)
    if not np.all(np.isfinite(coef)):
        raise ValueError(
            f"The optimal hyperplane has ||w||_q = 1 / gamma = 1 / {lower:.6g}, more than a "
            "float64 holds: scale X up (the margin scales with it) to have its coefficients."
        )
    return lower, coef, intercept


def _unit_scaled(X, lam):
    """``(X 2^-e, lam 2^-2e, e)``: the augmented instances ``(x_i, sqrt(lam) e_i)``
    scaled by the power of two that brings their largest entry into [0.5, 1)
    (:func:`marginkit._rows.power_of_two_scaled`). The solver's tolerances are
    absolute: on entries of 1e-6 it finds no plane, on entries of 1e3 it stops short
    of the optimum."""
    X, e = power_of_two_scaled(X, np.sqrt(lam))
    return X, float(np.ldexp(lam, -2 * e)), e


def _solve(cp, X, signs, q, fit_intercept, lam, solver, solver_options):
    """Minimise ||(w, u)||_q s.t. y_i (w . x_i + b) + sqrt(lam) u_i >= 1 (u_i = y_i v_i).

    Returns the solver's ``w``, ``b`` (0 without bias), the constraints' multipliers
    and the cvxpy status.
    """
    A = sp.diags(signs) @ X if sp.issparse(X) else X * signs[:, None]  # rows y_i x_i
    w = cp.Variable(X.shape[1])
    lhs = A @ w
    parts = [w]
    if fit_intercept:
        b = cp.Variable()
        lhs = lhs + b * signs
    if lam > 0:
        u = cp.Variable(X.shape[0])
        lhs = lhs + np.sqrt(lam) * u
        parts.append(u)
    constraint = lhs >= 1
    if q == 2.0:
        objective = sum(cp.sum_squares(z) for z in parts)  # a quadratic program
    else:
        z = cp.hstack(parts) if len(parts) > 1 else w
        if q == 1.0:
            objective = cp.norm1(z)
        elif np.isinf(q):
            objective = cp.norm_inf(z)
        else:
            # ||z||_q^q, same minimiser: cvxpy writes |z_j|^q with second-order cones
            # (q rounded to a fraction of denominator <= 1024, then checked below in
            # the exact q), which Clarabel solves more reliably than power cones here
            objective = cp.sum(cp.power(cp.abs(z), q))
    problem = cp.Problem(cp.Minimize(objective), [constraint])
    try:
        with warnings.catch_warnings():
            # accuracy is judged below, from a duality gap in the exact norm
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            warnings.filterwarnings("ignore", message=".*is being approximated")
            problem.solve(solver=solver, **(solver_options or {}))
    except cp.error.SolverError as exc:
        raise RuntimeError(f"The solver {solver} failed: {exc}") from exc
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None, None, None, problem.status
    return (
        np.asarray(w.value, dtype=np.float64).ravel(),
        float(b.value) if fit_intercept else 0.0,
        np.asarray(constraint.dual_value, dtype=np.float64).ravel(),
        problem.status,
    )


def _attained(X, signs, p, w, b, lam):
    """(w, b) rescaled, and the margin they attain: a lower bound on gamma*.

    Without lam the plane is scaled so that min_i y_i (w . x_i + b) = 1 and the margin
    is ``1 / ||w||_q``. With lam the augmented coordinates
    ``v_i = y_i max(0, 1 - y_i (w . x_i + b)) / sqrt(lam)`` make every constraint hold,
    and the margin is ``1 / ||(w, v)||_q``.
    """
    q = _dual_exponent(p)
    f = signs * (np.asarray(X @ w).ravel() + b)
    if lam > 0:
        v = np.maximum(0.0, 1.0 - f) / np.sqrt(lam)
        norm = _norm(np.concatenate([w, v]), q)
        return w, b, (1.0 / norm if norm > 0 else 0.0)
    low = float(f.min())
    norm = _norm(w, q)
    if low <= 0 or norm == 0:
        return w, b, 0.0
    return w / low, b / low, low / norm


def _dual_bound(X, signs, p, weights, fit_intercept, lam):
    """An upper bound on gamma* from the multipliers (weak duality).

    For weights ``a`` on the simplex (with ``sum_i a_i y_i = 0`` when there is a bias),
    gamma* <= ||sum_i a_i y_i x'_i||_p, x'_i the (augmented) instances.
    """
    a = np.maximum(weights, 0.0)
    if fit_intercept:
        pos, neg = a[signs > 0].sum(), a[signs < 0].sum()
        if pos <= 0 or neg <= 0:
            return np.inf
        a = np.where(signs > 0, a / (2.0 * pos), a / (2.0 * neg))
    else:
        total = a.sum()
        if total <= 0:
            return np.inf
        a = a / total
    point = np.asarray(X.T @ (a * signs)).ravel()
    if lam > 0:
        point = np.concatenate([point, np.sqrt(lam) * a])
    return _norm(point, p)
