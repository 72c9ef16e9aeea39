"""p-norm margins of hyperplanes and the exact maximum margin (marginkit.margins)."""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC, LinearSVC
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import ALMAClassifier, KernelALMAClassifier
from marginkit.margins import margin, margin_distribution, max_margin

P_VALUES = [1.0, 1.5, 2.0, 3.0, 7.3, np.inf]


def pnorm(v, p):
    v = np.abs(np.asarray(v, dtype=np.float64))
    return v.max() if np.isinf(p) else np.sum(v**p) ** (1.0 / p)


def dual(p):
    return np.inf if p == 1 else (1.0 if np.isinf(p) else p / (p - 1.0))


def separable(n=60, d=5, p=2.0, gap=0.3, seed=0, bias=True):
    """Gaussian points on either side of a random hyperplane, none within ``gap`` of it."""
    rng = np.random.default_rng(seed)
    w0 = rng.normal(size=d)
    b0 = rng.normal() if bias else 0.0
    X = np.empty((0, d))
    while X.shape[0] < n:
        Z = rng.normal(size=(4 * n, d))
        Z = Z[np.abs(Z @ w0 + b0) / pnorm(w0, dual(p)) > gap]
        X = np.vstack([X, Z])[:n]
    y = np.where(X @ w0 + b0 > 0, 1, -1)
    return X, y, w0, b0


# -- margin of a given hyperplane ------------------------------------------------------
@pytest.mark.parametrize("p", P_VALUES)
def test_margin_is_the_pnorm_distance_to_the_plane(p):
    """Lemma 1 (Ishibashi et al. 2008): |w.x + b| / ||w||_q is the p-norm distance."""
    rng = np.random.default_rng(1)
    w, b, x = rng.normal(size=4), 0.7, rng.normal(size=4)
    dist = abs(margin_distribution(w, x[None, :], [1], p, intercept=b)[0])
    # the nearest point of the plane moves x along the Hoelder-dual direction of w
    q = dual(p)
    if np.isinf(p):
        g = np.sign(w)
    elif p == 1:
        g = np.where(np.arange(4) == np.argmax(np.abs(w)), np.sign(w), 0.0)
    else:
        g = np.sign(w) * np.abs(w) ** (q - 1.0)
    z = x - (w @ x + b) / (w @ g) * g
    assert w @ z + b == pytest.approx(0.0, abs=1e-12)
    assert pnorm(x - z, p) == pytest.approx(dist, rel=1e-12)
    # any other point of the plane is no nearer
    Z = z + rng.normal(size=(2000, 4))
    Z -= np.outer((Z @ w + b) / (w @ w), w)
    assert min(pnorm(x - zz, p) for zz in Z) >= dist * (1 - 1e-12)


def test_margin_values_and_label_order():
    X = np.array([[2.0, 0.0], [0.0, -1.0], [-3.0, 0.0], [1.0, 1.0]])
    y = np.array(["b", "b", "a", "a"])
    w, b = np.array([1.0, -1.0]), 1.0
    values = margin_distribution(w, X, y, intercept=b)
    np.testing.assert_allclose(values * np.sqrt(2), [3.0, 2.0, 2.0, -1.0])
    assert margin(w, X, y, intercept=b) == pytest.approx(-1.0 / np.sqrt(2))
    # a point on the plane has margin 0; the (1, d) shape is accepted too
    assert margin(w[None, :], X[:3], [1, 1, -1], intercept=b) > 0
    assert margin(w, [[0.0, 1.0]], [1], intercept=b) == 0.0


@pytest.mark.parametrize("labels", [(-1, 1), (0, 1), ("neg", "pos")])
def test_labels_mapped_by_sorted_order(labels):
    X = np.array([[1.0], [-1.0]])
    y = np.array([labels[1], labels[0]])
    assert margin([2.0], X, y) == pytest.approx(1.0)


@pytest.mark.parametrize("only", [-1, 1])
def test_one_class_of_plus_minus_one_is_fine(only):
    assert margin([1.0], [[float(only)]], [only]) == pytest.approx(1.0)


@pytest.mark.parametrize("p", P_VALUES)
def test_norm_of_w_is_the_dual_norm(p):
    X = np.array([[1.0, 0.0], [0.0, -2.0]])
    w = np.array([3.0, -4.0])
    expected = 3.0 / pnorm(w, dual(p))
    assert margin(w, X, [1, 1], p) == pytest.approx(expected, rel=1e-12)


def test_scale_invariance():
    X, y, w0, b0 = separable(seed=3)
    m = margin(w0, X, y, 3.0, intercept=b0)
    assert margin(7.5 * w0, X, y, 3.0, intercept=7.5 * b0) == pytest.approx(m, rel=1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0, 4.0, np.inf])
def test_normalized_is_gentile_margin(p):
    """normalize=True: min y w.x / (||w||_q ||x||_p) without bias; zero rows skipped."""
    X, y, w0, _ = separable(seed=4, bias=False)
    X[5] = 0.0
    norms = np.array([pnorm(x, p) for x in X])
    keep = norms > 0
    expected = np.min(y[keep] * (X[keep] @ w0) / norms[keep]) / pnorm(w0, dual(p))
    values = margin_distribution(w0, X, y, p, normalize=True)
    assert np.isnan(values[5]) and np.isfinite(np.delete(values, 5)).all()
    assert margin(w0, X, y, p, normalize=True) == pytest.approx(expected, rel=1e-12)


def test_normalized_with_bias_is_margin_on_normalised_instances():
    X, y, w0, b0 = separable(seed=5)
    X_hat = X / np.linalg.norm(X, axis=1)[:, None]
    assert margin(w0, X, y, intercept=b0, normalize=True) == pytest.approx(
        margin(w0, X_hat, y, intercept=b0), rel=1e-12
    )


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_margin_sparse_equals_dense(p, normalize):
    X, y, w0, b0 = separable(seed=6)
    X[np.abs(X) < 0.5] = 0.0
    X[2] = 0.0
    dense = margin_distribution(w0, X, y, p, intercept=b0, normalize=normalize)
    sparse = margin_distribution(w0, sp.csr_matrix(X), y, p, intercept=b0, normalize=normalize)
    np.testing.assert_allclose(sparse, dense, rtol=1e-12)


def test_large_p_does_not_overflow():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 256, size=(20, 50)).astype(float)
    y = np.where(X[:, 0] > 127, 1, -1)
    w = np.zeros(50)
    w[0] = 1.0
    values = margin_distribution(w, X, y, 2000.0, intercept=-127.5, normalize=True)
    assert np.isfinite(values).all()
    # p -> inf: ||w||_q -> ||w||_1 = 1 and ||x||_p -> max |x_j|
    limit = margin_distribution(w, X, y, np.inf, intercept=-127.5, normalize=True)
    np.testing.assert_allclose(values, limit, rtol=1e-2)


def test_p_log_is_two_log_d():
    X, y, w0, b0 = separable(d=40, seed=8)
    expected = margin(w0, X, y, 2.0 * np.log(40), intercept=b0)
    assert margin(w0, X, y, "log", intercept=b0) == pytest.approx(expected, rel=1e-12)
    # never below 2
    X2, y2, w2, b2 = separable(d=2, seed=8)
    assert margin(w2, X2, y2, "log", intercept=b2) == margin(w2, X2, y2, 2.0, intercept=b2)


def test_margin_of_alma_estimator():
    X, y, _, _ = separable(n=200, seed=9)
    labels = np.where(y > 0, "spam", "ham")
    clf = ALMAClassifier(
        shuffle=False, p=3.0, alpha=0.8, fit_intercept=True, max_iter=20, output="last"
    ).fit(X, labels)
    assert list(clf.classes_) == ["ham", "spam"]
    w, b = clf.coef_[0], clf.intercept_[0]
    expected = np.min(y * (X @ w + b)) / pnorm(w, 1.5)
    assert margin(clf, X, labels, 3.0) == pytest.approx(expected, rel=1e-12)
    assert margin(clf, X, labels, 3.0) == pytest.approx(margin(w, X, y, 3.0, intercept=b))


def test_margin_of_hard_margin_svc_is_one_over_norm():
    X, y, _, _ = separable(n=80, seed=10)
    svc = SVC(kernel="linear", C=1e10, tol=1e-10).fit(X, y)
    assert margin(svc, X, y) == pytest.approx(1.0 / np.linalg.norm(svc.coef_), rel=1e-5)


# -- margin errors -----------------------------------------------------------------------
def test_unfitted_estimator():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        margin(
            ALMAClassifier(
                shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
            ),
            [[1.0]],
            [1],
        )


def test_multiclass_estimator():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), np.arange(30) % 3
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    with pytest.raises(ValueError, match="binary problems; ALMAClassifier was fitted on 3"):
        margin(clf, X, y)


def test_coef_with_several_rows():
    with pytest.raises(ValueError, match=r"coef must have shape .* got shape \(3, 2\)"):
        margin(np.ones((3, 2)), np.ones((4, 2)), [1, -1, 1, -1])


def test_non_finite_coef():
    with pytest.raises(ValueError, match="Input coef contains NaN"):
        margin([1.0, np.nan], np.ones((2, 2)), [1, -1])


@pytest.mark.parametrize(
    "clf",
    [
        KernelALMAClassifier(shuffle=False, kernel="linear", alpha=1.0, output="last", max_iter=1),
        ALMAClassifier(shuffle=False, output="voted", alpha=1.0, max_iter=1, fit_intercept=False),
    ],
)
def test_estimator_without_coef(clf):
    X, y, _, _ = separable(n=40, seed=11)
    clf.fit(X, y)
    with pytest.raises(TypeError, match="margin needs a linear classifier with coef_"):
        margin(clf, X, y)


def test_intercept_with_estimator():
    X, y, _, _ = separable(n=40, seed=12)
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    with pytest.raises(ValueError, match="intercept must be None when an estimator is given"):
        margin(clf, X, y, intercept=0.5)


@pytest.mark.parametrize("bad", [[1.0, 2.0], np.inf])
def test_bad_intercept(bad):
    with pytest.raises(ValueError, match="intercept must be one finite number"):
        margin([1.0], [[1.0]], [1], intercept=bad)


def test_wrong_number_of_features():
    with pytest.raises(ValueError, match="X has 3 features, but the hyperplane has 2"):
        margin([1.0, 2.0], np.ones((2, 3)), [1, -1])


def test_labels_unknown_to_estimator():
    X, y, _, _ = separable(n=40, seed=13)
    clf = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    with pytest.raises(ValueError, match=r"y contains labels \[7\] that are not in classes"):
        margin(clf, X[:3], [1, -1, 7])


@pytest.mark.parametrize("y", [[0, 1, 2], [0, 0, 0], ["a", "a", "a"]])
def test_coef_needs_binary_labels(y):
    with pytest.raises(ValueError, match="margin is defined for binary problems: y has"):
        margin([1.0], [[1.0], [2.0], [3.0]], y)


def test_zero_weight_vector():
    with pytest.raises(ValueError, match="undefined for the zero weight vector"):
        margin([0.0, 0.0], [[1.0, 2.0]], [1], intercept=1.0)


def test_all_instances_zero_when_normalized():
    with pytest.raises(ValueError, match="Every instance is zero"):
        margin([1.0, 1.0], np.zeros((3, 2)), [1, -1, 1], normalize=True)


@pytest.mark.parametrize("p", [0.5, 0, -np.inf, "two"])
def test_margin_bad_p(p):
    with pytest.raises(InvalidParameterError, match="The 'p' parameter of margin"):
        margin([1.0], [[1.0]], [1], p)


def test_margin_non_finite_X():
    with pytest.raises(ValueError, match="Input X contains NaN"):
        margin([1.0], [[np.nan]], [1])


def test_margin_continuous_y():
    with pytest.raises(ValueError, match="Unknown label type"):
        margin([1.0], [[1.0], [2.0]], [0.5, 1.5])


# -- max_margin: closed forms ----------------------------------------------------------
@pytest.mark.parametrize("p", P_VALUES)
def test_two_points_with_bias(p):
    """Two points: the plane bisects them; gamma* = ||x+ - x-||_p / 2."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    rng = np.random.default_rng(20)
    X = rng.normal(size=(2, 4))
    gamma = max_margin(X, [1, -1], p)
    assert gamma == pytest.approx(pnorm(X[0] - X[1], p) / 2, rel=1e-6)


@pytest.mark.parametrize("p", P_VALUES)
def test_two_points_without_bias(p):
    """Through the origin: gamma* = min over the segment [x+, -x-] of the p-norm."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    a, c = np.array([2.0, 1.0, 0.5]), np.array([1.0, -1.0, 0.3])  # x+ and -x-
    res = minimize_scalar(
        lambda t: pnorm(t * a + (1 - t) * c, p),
        bounds=(0.0, 1.0),
        method="bounded",
        options={"xatol": 1e-12},
    )
    gamma = max_margin(np.array([a, -c]), [1, -1], p, fit_intercept=False)
    assert gamma == pytest.approx(res.fun, rel=1e-6)
    if p == 2.0:
        # the nearest point of the segment to the origin, by hand
        t = (c @ (c - a)) / ((c - a) @ (c - a))
        assert gamma == pytest.approx(np.linalg.norm(t * a + (1 - t) * c), rel=1e-7)


@pytest.mark.parametrize("p", [1.5, 2.0, np.inf])
def test_one_dimensional(p):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X = np.array([[2.0], [3.0], [-1.0], [0.5]])
    y = [1, 1, -1, -1]
    assert max_margin(X, y, p) == pytest.approx(0.75, rel=1e-7)  # (2 - 0.5) / 2
    X0 = np.array([[2.0], [3.0], [-1.0], [-0.5]])
    assert max_margin(X0, y, p, fit_intercept=False) == pytest.approx(0.5, rel=1e-7)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("p", P_VALUES)
def test_symmetric_sets(p, fit_intercept):
    """S = {e1, e2} against -S: gamma* = ||(1/2, 1/2)||_p, with or without bias."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    y = [1, 1, -1, -1]
    expected = 0.5 * 2.0 ** (1.0 / p) if np.isfinite(p) else 0.5
    gamma = max_margin(X, y, p, fit_intercept=fit_intercept)
    assert gamma == pytest.approx(expected, rel=1e-6)
    # unit vectors: normalisation changes nothing
    assert max_margin(X, y, p, fit_intercept=fit_intercept, normalize=True) == pytest.approx(
        gamma, rel=1e-6
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("sparse", [False, True])
def test_hard_margin_matches_svc(seed, sparse):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=80, d=6, seed=seed)
    svc = SVC(kernel="linear", C=1e10, tol=1e-10).fit(X, y)
    gamma = max_margin(sp.csr_matrix(X) if sparse else X, y)
    assert gamma == pytest.approx(1.0 / np.linalg.norm(svc.coef_), rel=1e-5)


SCALES = [1e-300, 1e-150, 1e-6, 1e-3, 1e3, 1e6, 1e150, 1e300]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_max_margin_is_scale_invariant(p, fit_intercept, sparse):
    """The margin of the data times c is c times that of the data, from 1e-300 to 1e300,
    and the plane returned attains it there (the solver's tolerances are absolute: the
    program is solved on the data scaled to entries below 1)."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=40, d=5, p=p, seed=3, bias=fit_intercept)
    wrap = sp.csr_matrix if sparse else np.asarray
    gamma = max_margin(wrap(X), y, p, fit_intercept=fit_intercept)
    for c in SCALES:
        Xc = wrap(X * c)
        got, w, b = max_margin(Xc, y, p, fit_intercept=fit_intercept, return_coef=True)
        assert got / c == pytest.approx(gamma, rel=1e-6), c
        assert margin(w, Xc, y, p, intercept=b) == pytest.approx(got, rel=1e-9), c


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_margin_is_scale_invariant(sparse, normalize):
    """The margin of (c w, c d b) on d X is d times that of (w, b) on X (normalised,
    that of (c w, c b): the same), for any scales a float64 holds, also where w . x
    itself would overflow or underflow."""
    X, y, w, b = separable(n=40, d=5, seed=3)
    wrap = sp.csr_matrix if sparse else np.asarray
    base = margin_distribution(w, X, y, intercept=b, normalize=normalize)
    for d in SCALES:
        for c in [1e-300, 1e-20, 1.0, 1e20, 1e300]:
            if not (1e-300 <= c * d <= 1e300):
                continue
            got = margin_distribution(
                w * c,
                wrap(X * d),
                y,
                intercept=b * c * (1 if normalize else d),
                normalize=normalize,
            )
            want = base if normalize else base * d
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{c}, {d}")


@pytest.mark.parametrize("c", [1e-6, 1e-3, 1e3, 1e6])
def test_max_margin_at_any_scale_matches_svc(c):
    """At scale c the margin is c times a hard-margin SVC's at scale 1."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=80, d=6, seed=1)
    svc = SVC(kernel="linear", C=1e10, tol=1e-10).fit(X, y)
    assert max_margin(X * c, y) / c == pytest.approx(1.0 / np.linalg.norm(svc.coef_), rel=1e-5)


def test_soft_margin_scales_with_lam():
    """The soft margin of (c x, c^2 lam) is c times that of (x, lam): the augmented
    coordinate sqrt(lam) scales with the data."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=40, d=4, seed=5)
    X[:4] = -X[:4]  # not separable: only the soft margin exists
    gamma = max_margin(X, y, lam=0.5)
    for c in [1e-100, 1e-3, 1e3, 1e100]:
        assert max_margin(X * c, y, lam=0.5 * c * c) / c == pytest.approx(gamma, rel=1e-6)


def test_max_margin_coef_too_large_for_a_float64():
    """Features near the smallest float64: the margin is returned, but the optimal w,
    of norm 1 / gamma, cannot be."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=30, d=3, seed=3)
    gamma = max_margin(X, y)
    tiny = X * 1e-310
    assert max_margin(tiny, y) / gamma == pytest.approx(1e-310, rel=1e-3)
    with pytest.raises(ValueError, match="more than a float64 holds"):
        max_margin(tiny, y, return_coef=True)


@pytest.mark.parametrize("lam", [0.1, 1.0, 5.0])
def test_soft_margin_matches_svc_on_augmented_kernel(lam):
    """x_i . x_j + lam [i = j] as a precomputed kernel, hard margin, with bias."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    rng = np.random.default_rng(30)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, -1)  # overlapping classes
    K = X @ X.T + lam * np.eye(60)
    svc = SVC(kernel="precomputed", C=1e10, tol=1e-10).fit(K, y)
    a, sv = svc.dual_coef_[0], svc.support_
    norm2 = a @ K[np.ix_(sv, sv)] @ a
    assert max_margin(X, y, lam=lam) == pytest.approx(1.0 / np.sqrt(norm2), rel=1e-5)


@pytest.mark.parametrize("lam", [0.5, 2.0])
def test_soft_margin_without_bias_matches_squared_hinge_svm(lam):
    """||w||^2 + sum(hinge^2) / lam is LinearSVC's squared hinge objective, C = 1 / (2 lam)."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    rng = np.random.default_rng(31)
    X = rng.normal(size=(100, 5))
    y = np.where(X @ rng.normal(size=5) + rng.normal(size=100) > 0, 1, -1)
    svm = LinearSVC(
        loss="squared_hinge", C=1 / (2 * lam), fit_intercept=False, tol=1e-12, max_iter=100000
    ).fit(X, y)
    w = svm.coef_[0]
    hinge = np.maximum(0.0, 1.0 - y * (X @ w))
    expected = 1.0 / np.sqrt(w @ w + hinge @ hinge / lam)
    assert max_margin(X, y, lam=lam, fit_intercept=False) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_soft_margin_symmetric_pair(fit_intercept):
    """x+ = a, x- = -a: the augmented hull's nearest point gives sqrt(||a||^2 + lam / 2)."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    a = np.array([0.3, -1.2, 2.0])
    for lam in (0.25, 1.0, 4.0):
        gamma = max_margin(np.array([a, -a]), [1, -1], lam=lam, fit_intercept=fit_intercept)
        assert gamma == pytest.approx(np.sqrt(a @ a + lam / 2), rel=1e-7)


def test_soft_margin_separates_anything():
    """With lam > 0 even identical instances with opposite labels have a margin."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X = np.array([[1.0, 1.0], [1.0, 1.0], [-1.0, 1.0], [1.0, -1.0]])
    y = [1, -1, 1, -1]
    for p in (1.5, 2.0):
        gamma = max_margin(X, y, p, lam=1.0)
        assert np.isfinite(gamma) and gamma > 0


# -- max_margin: consistency -----------------------------------------------------------
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("p", P_VALUES)
def test_returned_plane_attains_gamma(p, fit_intercept):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=50, d=4, p=p, seed=40, bias=fit_intercept)
    gamma, w, b = max_margin(X, y, p, fit_intercept=fit_intercept, return_coef=True)
    assert isinstance(gamma, float) and isinstance(b, float)
    assert w.shape == (4,)
    if not fit_intercept:
        assert b == 0.0
    assert np.min(y * (X @ w + b)) == pytest.approx(1.0, rel=1e-6)
    assert margin(w, X, y, p, intercept=b) == pytest.approx(gamma, rel=1e-6)


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_soft_margin_returned_plane(p):
    """gamma = 1 / ||(w, v)||_q with v_i = y_i max(0, 1 - y_i (w.x_i + b)) / sqrt(lam)."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    rng = np.random.default_rng(41)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 1] + rng.normal(size=40) > 0, 1, -1)
    lam = 0.7
    gamma, w, b = max_margin(X, y, p, lam=lam, return_coef=True)
    v = y * np.maximum(0.0, 1.0 - y * (X @ w + b)) / np.sqrt(lam)
    assert gamma == pytest.approx(1.0 / pnorm(np.concatenate([w, v]), dual(p)), rel=1e-5)
    assert np.min(y * (X @ w + np.sqrt(lam) * v + b)) == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 4.0, np.inf])
def test_max_margin_bounds_every_separating_plane(p, seed):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, w0, b0 = separable(n=40, d=3, p=p, gap=0.2, seed=100 + seed)
    gamma = max_margin(X, y, p)
    rng = np.random.default_rng(seed)
    planes = [(w0, b0)] + [
        (w0 + 0.3 * rng.normal(size=3), b0 + 0.3 * rng.normal()) for _ in range(50)
    ]
    values = [margin(w, X, y, p, intercept=b) for w, b in planes]
    assert margin(w0, X, y, p, intercept=b0) >= 0.2
    assert max(values) <= gamma * (1 + 1e-6)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_bias_never_lowers_the_margin(p):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=40, d=3, p=p, seed=110, bias=False)
    with_bias = max_margin(X, y, p)
    assert max_margin(X, y, p, fit_intercept=False) <= with_bias * (1 + 1e-6)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_max_margin_sparse_equals_dense(p):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=50, d=6, seed=50)
    X[np.abs(X) < 0.3] = 0.0
    for lam in (0.0, 1.0):
        dense = max_margin(X, y, p, lam=lam)
        sparse = max_margin(sp.csr_matrix(X), y, p, lam=lam)
        assert sparse == pytest.approx(dense, rel=1e-6)


@pytest.mark.parametrize("p", [1.5, 2.0, np.inf])
def test_normalize_solves_on_normalised_instances(p):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=40, d=3, seed=60, bias=False)
    X = np.vstack([X, np.zeros(3)])  # a zero instance is left out
    y = np.append(y, 1)
    norms = np.array([pnorm(x, p) for x in X])
    keep = norms > 0
    X_hat = X[keep] / norms[keep, None]
    gamma, w, b = max_margin(X, y, p, normalize=True, fit_intercept=False, return_coef=True)
    assert gamma == pytest.approx(max_margin(X_hat, y[keep], p, fit_intercept=False), rel=1e-6)
    assert margin(w, X, y, p, normalize=True) == pytest.approx(gamma, rel=1e-6)


def test_max_margin_p_log():
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=40, d=12, seed=61)
    expected = max_margin(X, y, 2.0 * np.log(12))
    assert max_margin(X, y, "log") == pytest.approx(expected, rel=1e-9)


def test_max_margin_of_alma_bounds_alma():
    """ALMA's hypothesis is one separating plane among many."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=200, d=5, seed=62)
    clf = ALMAClassifier(
        shuffle=False, p=2.0, alpha=0.5, fit_intercept=True, max_iter=30, output="last"
    ).fit(X, y)
    assert margin(clf, X, y) <= max_margin(X, y) * (1 + 1e-6)


def test_adult_1k_soft_margin(shared_data):
    """adult-1k, lam = 1, p = 2: 100 gamma* = 5.2027 (the COLT 2008 paper reports 4.95)."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    from marginkit.datasets import load_adult

    X, y = load_adult(data_dir=shared_data, n_train=1000)[:2]
    assert 100 * max_margin(X, y, lam=1.0) == pytest.approx(5.2027, abs=1e-4)


def test_adult_1k_other_norms(shared_data):
    """p = 4 (q = 4/3) ends 'optimal_inaccurate' in Clarabel; the duality gap certifies it."""
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    from marginkit.datasets import load_adult

    X, y = load_adult(data_dir=shared_data, n_train=1000)[:2]
    assert 100 * max_margin(X, y, 4.0, lam=1.0) == pytest.approx(1.2345692, abs=1e-6)
    assert 100 * max_margin(X, y, 3.0, lam=1.0) == pytest.approx(1.9882638, abs=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("p, expected", [(2.0, 0.8530), (3.0, 0.1824)])
def test_adult_full_soft_margin(shared_data, p, expected):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    from marginkit.datasets import load_adult

    X, y = load_adult(data_dir=shared_data)[:2]
    assert 100 * max_margin(X, y, p, lam=1.0) == pytest.approx(expected, abs=1e-4)


# -- max_margin errors -----------------------------------------------------------------
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_not_separable(fit_intercept):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    if fit_intercept:
        X, y = [[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]], [1, 1, -1, -1]  # XOR
        match = "not linearly separable: no hyperplane"
    else:
        X, y = [[1.0], [-1.0], [2.0]], [1, 1, -1]  # needs a bias
        match = "not linearly separable by a hyperplane through the origin"
    with pytest.raises(ValueError, match=match):
        max_margin(X, y, fit_intercept=fit_intercept)


def test_multiclass_y():
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    with pytest.raises(ValueError, match="binary problems; y has 3 classes"):
        max_margin([[0.0], [1.0], [2.0]], [0, 1, 2])


@pytest.mark.parametrize("normalize", [False, True])
def test_one_class(normalize):
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y = ([[1.0], [2.0]], [1, 1]) if not normalize else ([[1.0], [0.0]], [1, -1])
    match = "greater than one; got 1 class" + (" among the nonzero" if normalize else "")
    with pytest.raises(ValueError, match=match):
        max_margin(X, y, normalize=normalize)


def test_solver_not_installed():
    cp = pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    absent = "NOT_A_SOLVER"
    assert absent not in cp.installed_solvers()
    with pytest.raises(ValueError, match="The solver 'NOT_A_SOLVER' is not installed"):
        max_margin([[1.0], [-1.0]], [1, -1], solver=absent)


def test_solver_stops_early():
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=50, seed=70)
    with pytest.raises(RuntimeError, match="stopped with status 'user_limit'"):
        max_margin(X, y, solver_options={"max_iter": 1})


def test_gap_above_tol():
    pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    X, y, _, _ = separable(n=50, seed=71)
    with pytest.raises(RuntimeError, match=r"only known to lie in \[.*\], not within tol=1e-15"):
        max_margin(X, y, 3.0, tol=1e-15)


def test_solver_error(monkeypatch):
    cp = pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")

    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("numerical trouble")

    monkeypatch.setattr(cp.Problem, "solve", fail)
    with pytest.raises(RuntimeError, match="The solver CLARABEL failed: numerical trouble"):
        max_margin([[1.0], [-1.0]], [1, -1])


def test_without_cvxpy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    with pytest.raises(ImportError, match=r'pip install "marginkit\[margins\]"'):
        max_margin([[1.0], [-1.0]], [1, -1])


def test_without_clarabel(monkeypatch):
    cp = pytest.importorskip("cvxpy", reason="max_margin needs the 'margins' extra")
    monkeypatch.setattr(cp, "installed_solvers", lambda: ["SCS"])
    with pytest.raises(ImportError, match=r'pip install "marginkit\[margins\]"'):
        max_margin([[1.0], [-1.0]], [1, -1])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"p": 0.9}, "p"),
        ({"lam": -1.0}, "lam"),
        ({"solver_options": 3}, "solver_options"),
        ({"tol": 0.0}, "tol"),
    ],
)
def test_max_margin_bad_parameters(kwargs, name):
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of max_margin"):
        max_margin([[1.0], [-1.0]], [1, -1], **kwargs)
