"""Seeded generators of the papers' artificial data sets."""

from numbers import Integral, Real

import numpy as np
from scipy.stats import binom
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, validate_params


@validate_params(
    {
        "n_train": [Interval(Integral, 1, None, closed="left")],
        "n_test": [Interval(Integral, 0, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_relevant": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "return_target": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_sparse_target(
    n_train=10000,
    n_test=10000,
    n_features=300,
    n_relevant=3,
    noise=0.0,
    margin=1.0,
    random_state=None,
    return_target=False,
):
    """Gentile's sparse-target data (JMLR 2001, section 4.4, Table 6).

    A target ``u`` in {-1, 0, 1}^n has ``n_relevant`` non-zero components at random
    places with random signs. Instances are uniform in [-1, 1]^n. Training instances
    with ``|u . x| < margin`` are rejected (so the clean training set has margin
    ``margin`` w.r.t. u), and each training label ``sign(u . x)`` is then flipped
    with probability ``noise``. Test instances are neither rejected nor flipped.

    Parameters
    ----------
    n_train, n_test : int
        Sizes of the training and test sets (10000 each in the paper).
    n_features : int, default=300
        n in the paper.
    n_relevant : int, default=3
        s in the paper: the number of non-zero components of u (3, 10, 100 or 300).
    noise : float in [0, 1], default=0.0
        eps in the paper: training label noise (0, 0.05, 0.10 or 0.15).
    margin : float >= 0, default=1.0
        Training instances with ``|u . x| < margin`` are rejected.
    random_state : int, RandomState instance or None
    return_target : bool, default=False
        Also return u.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarrays (labels are -1 / +1)
    u : ndarray of shape (n_features,), only with ``return_target=True``
    """
    if n_relevant > n_features:
        raise ValueError(f"n_relevant={n_relevant} must be <= n_features={n_features}")
    rng = check_random_state(random_state)
    u = np.zeros(n_features)
    support = rng.choice(n_features, size=n_relevant, replace=False)
    u[support] = rng.choice([-1.0, 1.0], size=n_relevant)
    # Acceptance probability of |u.x| >= margin; u.x has variance s/3.
    if margin > n_relevant:
        raise ValueError(
            f"margin={margin} can never be reached with n_relevant={n_relevant} "
            "(|u . x| <= n_relevant)"
        )
    chunks, have = [], 0
    while have < n_train:
        batch = max(1024, 2 * (n_train - have))
        Z = rng.uniform(-1.0, 1.0, size=(batch, n_features))
        keep = np.abs(Z @ u) >= margin
        Z = Z[keep][: n_train - have]
        chunks.append(Z)
        have += Z.shape[0]
    X_train = np.vstack(chunks)
    y_train = np.where(X_train @ u > 0, 1, -1)
    flip = rng.uniform(size=n_train) < noise
    y_train[flip] = -y_train[flip]
    X_test = rng.uniform(-1.0, 1.0, size=(n_test, n_features))
    y_test = np.where(X_test @ u > 0, 1, -1)
    if return_target:
        return X_train, y_train, X_test, y_test, u
    return X_train, y_train, X_test, y_test


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "r": [Interval(Integral, 1, None, closed="left")],
        "balanced": ["boolean"],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
        "return_coef": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_r_of_k(
    n_samples=1000,
    n_features=100,
    k=16,
    r=1,
    *,
    balanced=True,
    noise=0.0,
    random_state=None,
    return_coef=False,
):
    """r-of-k threshold data (Ishibashi, Hatano and Takeda, COLT 2008, section 4.1).

    Instances are vectors in {-1, +1}^n. The first ``k`` features are the relevant
    ones, and the label is +1 exactly when at least ``r`` of them are +1 (an r-of-k
    threshold function); the other ``n - k`` features are independent fair coins
    that do not affect the label. The paper takes n = 100 and k = 16.

    With ``balanced=True`` (the paper's setting) half of the examples are positive
    and half negative, and each class is distributed as the uniform distribution on
    {-1, +1}^n conditioned on that class. Sampling is exact and needs no rejection:
    the number s of +1s among the relevant features is drawn from Binomial(k, 1/2)
    conditioned on ``s >= r`` (positives) or ``s < r`` (negatives), then a uniformly
    random set of s relevant features is set to +1. With ``balanced=False``
    instances are uniform on {-1, +1}^n and labelled by the rule, so the class
    proportions are those of the threshold function (for r = 1 only a fraction
    2^-k of the examples is negative).

    The target is the hyperplane ``w . x + b = 0`` with ``w`` the indicator of the
    relevant features and ``b = k + 1 - 2r``. The sum of the relevant features is
    ``2s - k``, which moves in steps of 2; positives have ``w . x >= 2r - k`` and
    negatives ``w . x <= 2r - k - 2``, and the hyperplane lies halfway, so every
    clean example has ``y (w . x + b) >= 1``: the distance to the hyperplane is at
    least ``1 / ||w||_q = k^(-1/q)`` in the q-norm dual to the p-norm of the
    instances. The bias ``|b| = |k + 1 - 2r|`` is largest for r = 1 and r = k
    (``k - 1``, i.e. 15 for k = 16), where the hyperplane is far from the origin
    compared with the margin; this is the regime in which the paper compares
    learners that treat the bias differently. It is smallest for r near
    ``(k + 1) / 2``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of examples. With ``balanced=True`` there are ``n_samples // 2``
        negatives and ``n_samples - n_samples // 2`` positives, in random order.
    n_features : int, default=100
        n in the paper. Must be at least ``k``.
    k : int, default=16
        Number of relevant features (the first ``k`` columns).
    r : int, default=1
        Threshold: the label is +1 iff at least ``r`` relevant features are +1.
        ``1 <= r <= k``.
    balanced : bool, default=True
        Equal numbers of positives and negatives (see above).
    noise : float in [0, 1], default=0.0
        Each label is flipped independently with this probability after the data
        are drawn (not part of the paper's section 4.1, whose data are noiseless).
        The flips are drawn last, so for a given ``random_state`` the instances and
        clean labels do not depend on ``noise``. With ``noise > 0`` the classes are
        no longer exactly balanced and the target no longer separates every example.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.
    return_coef : bool, default=False
        Also return the target hyperplane ``(w, b)``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        Values -1.0 and +1.0.
    y : ndarray of shape (n_samples,), int64
        Labels -1 and +1.
    coef : ndarray of shape (n_features,), float64
        ``w``: 1.0 on the first ``k`` features, 0.0 elsewhere. Only with
        ``return_coef=True``.
    intercept : float
        ``b = k + 1 - 2r``. Only with ``return_coef=True``.

    Raises
    ------
    ValueError
        If a parameter is out of range, ``k > n_features`` or ``r > k``.

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit.datasets import make_r_of_k
    >>> X, y, w, b = make_r_of_k(200, r=4, random_state=0, return_coef=True)
    >>> X.shape, int((y == 1).sum()), int((y == -1).sum()), b
    ((200, 100), 100, 100, 9.0)
    >>> bool(np.all(y * (X @ w + b) >= 1))
    True
    """
    if k > n_features:
        raise ValueError(
            f"The 'k' parameter of make_r_of_k must be <= n_features={n_features}. "
            f"Got {k} instead."
        )
    if r > k:
        raise ValueError(f"The 'r' parameter of make_r_of_k must be <= k={k}. Got {r} instead.")
    rng = check_random_state(random_state)
    if balanced:
        n_neg = n_samples // 2
        y = np.ones(n_samples, dtype=np.int64)
        y[rng.permutation(n_samples)[:n_neg]] = -1
        counts = np.empty(n_samples, dtype=np.int64)
        for label, levels in ((1, np.arange(r, k + 1)), (-1, np.arange(0, r))):
            rows = np.flatnonzero(y == label)
            # Binomial(k, 1/2) restricted to the class's levels, in log space so that
            # large k neither overflows nor underflows.
            logp = binom.logpmf(levels, k, 0.5)
            p = np.exp(logp - logp.max())
            counts[rows] = rng.choice(levels, size=rows.size, p=p / p.sum())
    else:
        counts = rng.binomial(k, 0.5, size=n_samples).astype(np.int64)
        y = np.where(counts >= r, 1, -1).astype(np.int64)
    # A uniformly random subset of size counts[i] of the relevant features is +1.
    order = np.argsort(rng.random_sample((n_samples, k)), axis=1)
    values = np.where(np.arange(k) < counts[:, None], 1.0, -1.0)
    X = np.empty((n_samples, n_features), dtype=np.float64)
    np.put_along_axis(X[:, :k], order, values, axis=1)
    X[:, k:] = 2.0 * rng.randint(0, 2, size=(n_samples, n_features - k)) - 1.0
    flip = rng.random_sample(n_samples) < noise
    y[flip] = -y[flip]
    if return_coef:
        coef = np.zeros(n_features)
        coef[:k] = 1.0
        return X, y, coef, float(k + 1 - 2 * r)
    return X, y
