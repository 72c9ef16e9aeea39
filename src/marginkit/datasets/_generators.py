"""Seeded generators of the papers' artificial data sets."""

from numbers import Integral, Real

import numpy as np
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
