"""Features at any scale a float64 holds, 1e-300 to 1e300: every estimator makes on
the data times c the corrections and predictions it makes on the data, with its
weights, scores and margins scaled as the algorithm implies (ALMA scales each batch of
instances by a power of two into [0.5, 1); the others fix such a power of two at their
first fit, and a named kernel's gamma takes it back), or refuses the data with a
ValueError that names the scale."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import slow_case
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from marginkit._scaling import UNIT_RANGE, unit_scaled

#: 1e-300 to 1e300 in steps of 1e50, and powers of two at the ends of the range
SCALES = [10.0**k for k in range(-300, 301, 50)] + [2.0**-1000, 2.0**1000, 3e-250, 7e250]


def noisy(n=300, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, :3].sum(axis=1) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize(
    "p,fit_intercept,sparse",
    # CSR rows without the intercept (1 s a case on 2 cores) in make test-all; with it
    # in make test
    [
        slow_case(p, fit_intercept, sparse, slow=sparse and not fit_intercept)
        for sparse in (False, True)
        for fit_intercept in (False, True)
        for p in (2.0, 50.0)
    ],
)
def test_alma_is_the_same_at_any_feature_scale(p, fit_intercept, sparse):
    X, y = noisy()
    wrap = sp.csr_matrix if sparse else np.asarray
    params = {"alpha": 0.5, "p": p, "fit_intercept": fit_intercept, "max_iter": 3}
    params.update(tol=None, keep_corrections=True, output="last", shuffle=False)
    base = ALMAClassifier(**params).fit(wrap(X), y)
    want = {out: base.set_params(output=out).decision_function(wrap(X)) for out in OUTPUTS}
    for c in SCALES:
        Xc = wrap(X * c)
        clf = ALMAClassifier(**params).fit(Xc, y)
        assert clf.n_corrections_ == base.n_corrections_, c
        for out in OUTPUTS:
            got = clf.set_params(output=out).decision_function(Xc)
            np.testing.assert_allclose(got, want[out], rtol=1e-6, atol=1e-12, err_msg=f"{c}")
            np.testing.assert_array_equal(clf.predict(Xc), base.set_params(output=out).predict(X))


OUTPUTS = ("last", "avg", "voted")


def test_partial_fit_batches_of_other_scales():
    """Each batch is scaled on its own: batches of scales 1e-300 and 1e300 teach what
    the same batches at scale 1 do."""
    X, y = noisy(n=400)
    params = {"alpha": 0.5, "p": 20.0, "fit_intercept": False, "output": "last"}
    ref = ALMAClassifier(**{"shuffle": False, **params})
    mixed = ALMAClassifier(**{"shuffle": False, **params})
    classes = np.unique(y)
    for k, scale in enumerate([1e-300, 1e300, 1.0, 1e-150]):
        rows = slice(100 * k, 100 * (k + 1))
        ref.partial_fit(X[rows], y[rows], classes=classes)
        mixed.partial_fit(X[rows] * scale, y[rows], classes=classes)
    assert mixed.n_corrections_ == ref.n_corrections_
    np.testing.assert_array_equal(mixed.predict(X * 1e200), ref.predict(X))


def test_unit_scaled_is_exact_and_leaves_ordinary_data_alone():
    X, _ = noisy(n=20, d=4)
    same, aug = unit_scaled(X, -3.0)
    assert same is X and aug == -3.0
    for c in [2.0**-500, 2.0 ** (UNIT_RANGE + 1), 2.0**900]:
        scaled, aug = unit_scaled(X * c, -3.0 * c)
        peak = max(np.abs(scaled).max(), abs(aug))
        assert 0.5 <= peak < 1.0
        ratio = scaled / X  # one power of two, exactly
        assert np.all(ratio == ratio.flat[0]) and aug / -3.0 == ratio.flat[0]
        sparse, aug_s = unit_scaled(sp.csr_matrix(X * c), -3.0 * c)
        np.testing.assert_array_equal(sparse.toarray(), scaled)
        assert aug_s == aug


# -- every estimator ----------------------------------------------------------------
#: (make(c), k, kernel): the estimator for the data times c (parameters that scale with
#: the features scaled with them), the degree k of its weights, w(c x) = c^k w(x) (None:
#: scores that do not change, ALMA's and the normalised kernels'), and whether it is a
#: kernel estimator (its products of instances are then the kernel's values)
ESTIMATORS = {
    "alma": (
        lambda c: ALMAClassifier(shuffle=False, alpha=0.5, p=4.0, max_iter=2, tol=None),
        None,
    ),
    "perceptron": (lambda c: PerceptronClassifier(shuffle=False, max_iter=2, tol=None), 1),
    "romma": (
        lambda c: ROMMAClassifier(shuffle=False, aggressive=False, lam=0.0, max_iter=2, tol=None),
        -1,
    ),
    # the soft margin scales with the squares of the features
    "romma lam": (
        lambda c: ROMMAClassifier(shuffle=False, lam=0.5 * c * c, max_iter=2, tol=None),
        -1,
    ),
    "aggressive romma": (
        lambda c: ROMMAClassifier(shuffle=False, aggressive=True, lam=0.0, max_iter=2, tol=None),
        -1,
    ),
    "margin perceptron": (lambda c: MarginPerceptronClassifier(shuffle=False, max_iter=30), 1),
    "pumma": (lambda c: PUMMAClassifier(shuffle=False, lam=0.0, max_iter=6, tol=None), -1),
    "pumma p=3": (
        lambda c: PUMMAClassifier(shuffle=False, p=3.0, lam=0.0, max_iter=6, tol=None),
        -1,
    ),
    # the soft margin's lam is added to x . x: it scales as its square
    "pumma lam": (
        lambda c: PUMMAClassifier(shuffle=False, lam=0.5 * c * c, max_iter=6, tol=None),
        -1,
    ),
    "kernel alma linear": (
        lambda c: KernelALMAClassifier(shuffle=False, kernel="linear", max_iter=2),
        None,
    ),
    "kernel alma rbf": (
        lambda c: KernelALMAClassifier(shuffle=False, gamma="scale", max_iter=2),
        None,
    ),
    # a fixed gamma scales as 1 / the square of the features
    "kernel alma poly": (
        lambda c: KernelALMAClassifier(
            shuffle=False, kernel="poly", degree=2, gamma=0.1 / c / c, max_iter=2
        ),
        None,
    ),
    "kernel perceptron linear": (
        lambda c: KernelPerceptronClassifier(shuffle=False, kernel="linear", max_iter=2),
        1,
    ),
    "kernel perceptron poly": (
        lambda c: KernelPerceptronClassifier(
            shuffle=False, kernel="poly", degree=2, gamma="scale", max_iter=2
        ),
        0,
    ),
    "kernel romma linear": (
        lambda c: KernelROMMAClassifier(shuffle=False, kernel="linear", lam=0.0, max_iter=2),
        -1,
    ),
    "kernel romma linear lam": (
        lambda c: KernelROMMAClassifier(
            shuffle=False, kernel="linear", lam=0.5 * c * c, max_iter=2, tol=None
        ),
        -1,
    ),
    "kernel pumma linear lam": (
        lambda c: KernelPUMMAClassifier(
            shuffle=False, kernel="linear", lam=0.5 * c * c, max_iter=6, tol=None
        ),
        -1,
    ),
    "kernel pumma rbf": (
        lambda c: KernelPUMMAClassifier(
            shuffle=False, gamma="scale", lam=0.5, max_iter=6, tol=None
        ),
        -1,
    ),
}

#: the scales of the property test: 1e-300 to 1e300 in steps of 1e50, and some between
PROPERTY_SCALES = [10.0**k for k in range(-300, 301, 50)] + [3e-170, 7e-78, 2e130, 5e-249]


def _fitted(name, c, sparse, seed):
    make, _ = ESTIMATORS[name]
    X, y = noisy(n=60, d=5, seed=seed)
    Xc = (sp.csr_matrix if sparse else np.asarray)(X * c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of a few epochs
        return make(c).fit(Xc, y), Xc


@settings(max_examples=120, deadline=None)
@given(
    name=st.sampled_from(sorted(ESTIMATORS)),
    c=st.sampled_from(PROPERTY_SCALES),
    sparse=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_same_model_at_any_feature_scale(name, c, sparse, seed):
    """The corrections and predictions of the data at scale 1, on the data times c; the
    scores times c^(k + 1) (for a linear kernel or no kernel; a named kernel's values do
    not change), the linear weights times c^k, PUMMA's margins times c."""
    # the scaled parameters themselves in float64
    assume("lam" not in name or 1e-290 < 0.5 * c * c < 1e290)
    assume(name != "kernel alma poly" or 1e-290 < 0.1 / c / c < 1e290)
    base, X1 = _fitted(name, 1.0, sparse, seed)
    clf, Xc = _fitted(name, c, sparse, seed)
    assert clf.n_corrections_ == base.n_corrections_
    np.testing.assert_array_equal(clf.predict(Xc), base.predict(X1))
    _, k = ESTIMATORS[name]
    # the power of c the scores scale with
    power = 0 if k is None or not ("linear" in name or "kernel" not in name) else k + 1
    if abs(power * np.log10(c)) < 280:
        factor = c**power
        got, want = clf.decision_function(Xc), base.decision_function(X1)
        np.testing.assert_allclose(got / factor, want, rtol=1e-6, atol=1e-9 * np.abs(want).max())
    if hasattr(base, "coef_") and k is not None and abs(k * np.log10(c)) < 280:
        np.testing.assert_allclose(clf.coef_ / c**k, base.coef_, rtol=1e-6, atol=1e-12)
    if hasattr(base, "margin_") and ("kernel" not in name or "linear" in name):
        np.testing.assert_allclose(clf.margin_ / c, base.margin_, rtol=1e-6)


@pytest.mark.parametrize(
    "cls, c",
    [
        (KernelPerceptronClassifier, 1e-40),
        (KernelROMMAClassifier, 1e40),
        (KernelROMMAClassifier, 1e-60),
        (KernelPUMMAClassifier, 1e-60),
    ],
)
def test_support_vectors_and_dual_coefficients_in_the_units_of_the_data(cls, c):
    """The kernel estimators keep their rows in units of their own; what they publish
    is in those of the data: the rows given, and coefficients whose sums over them are
    the model's scores (computed here where the data's products still hold)."""
    X, y = noisy(n=80, d=4)
    Xc = X * c
    params = {"max_iter": 2}
    if cls is KernelPUMMAClassifier:
        params.update(lam=0.5 * c * c, tol=None)
    else:
        params.update(fit_intercept=False)  # dual_coef_ are then on K itself
    clf = cls(kernel="linear", **{"shuffle": False, **params}).fit(Xc, y)
    assert clf._exponent != 0
    sv = clf.support_vectors_
    if cls is KernelPUMMAClassifier:  # the positive and the negative of each pair
        assert np.all(np.isin(sv, Xc))
        intercept = clf.intercept_
    else:
        np.testing.assert_array_equal(sv, Xc[clf.support_])
        intercept = 0.0
    want = (clf.dual_coef_ @ (sv @ Xc.T)).ravel() + intercept
    np.testing.assert_allclose(
        clf.decision_function(Xc), want, rtol=1e-6, atol=1e-9 * abs(want).max()
    )


def _lam_error(cls, **params):
    X, y = noisy(n=40, d=3)
    with pytest.raises(ValueError, match=r"lam=1.0 is too large for the scale of the features"):
        cls(lam=1.0, **{"shuffle": False, **params}).fit(X * 1e-150, y)
    with pytest.raises(ValueError, match=r"features: more than 1e308 times the largest"):
        cls(lam=1.0, **{"shuffle": False, **params}).fit(X * 1e-160, y)
    # scaled with the square of the features, it is the model at scale 1
    cls(lam=1e-300, **{"shuffle": False, **params}).fit(X * 1e-150, y)


def test_lam_too_large_for_the_scale():
    _lam_error(PUMMAClassifier, tol=None)
    _lam_error(KernelPUMMAClassifier, kernel="linear", tol=None)


@pytest.mark.parametrize("c, which", [(1e200, "large"), (1e-200, "small")])
def test_gamma_leaves_float64_at_the_scale(c, which):
    X, y = noisy(n=40, d=3)
    with pytest.raises(ValueError, match=rf"gamma=1 is too {which} for the scale of the features"):
        KernelALMAClassifier(shuffle=False, kernel="rbf", gamma=1.0).fit(X * c, y)
    # gamma="scale" follows the features
    KernelALMAClassifier(shuffle=False, kernel="rbf", gamma="scale").fit(X * c, y)


@pytest.mark.parametrize("cls", [PerceptronClassifier, ROMMAClassifier, PUMMAClassifier])
def test_later_batches_of_another_scale_are_refused(cls):
    """partial_fit fixes the model's units at its first batch: a later batch whose
    squared norms there leave float64 is refused, before it changes the model."""
    X, y = noisy(n=60, d=4)
    clf = cls(shuffle=False, lam=0.0) if cls is PUMMAClassifier else cls(shuffle=False)
    clf.partial_fit(X[:30], y[:30], classes=np.unique(y))
    before = clf.n_corrections_
    for c, which in [(1e200, "large"), (1e-200, "small")]:
        with pytest.raises(ValueError, match=rf"The features are too {which} for {cls.__name__}"):
            clf.partial_fit(X[30:] * c, y[30:])
    assert clf.n_corrections_ == before
    # scores of tiny rows need no squared norm: the bias's, as those of zero rows
    np.testing.assert_array_equal(clf.predict(X * 1e-200), clf.predict(np.zeros_like(X)))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("cls", [KernelPerceptronClassifier, KernelPUMMAClassifier])
def test_later_kernel_batches_far_smaller_are_refused(cls, kernel):
    X, y = noisy(n=60, d=4)
    params = {"lam": 0.0, "tol": None} if cls is KernelPUMMAClassifier else {}
    clf = cls(kernel=kernel, **{"shuffle": False, **params})
    clf.partial_fit(X[:30], y[:30], classes=np.unique(y))
    before = clf.n_corrections_
    with pytest.raises(ValueError, match=rf"The features are too small for {cls.__name__}"):
        clf.partial_fit(X[30:] * 1e-200, y[30:])
    assert clf.n_corrections_ == before


@pytest.mark.parametrize("cls", [PerceptronClassifier, KernelPerceptronClassifier])
def test_features_beyond_float64_norms(cls):
    X, y = noisy(n=20, d=4)
    big = np.full_like(X, 1.5e308) * np.sign(X)
    with pytest.raises(ValueError, match="the norm of an instance overflows float64"):
        cls(shuffle=False).fit(big, y)
    with pytest.raises(ValueError, match="a subnormal number"):
        cls(shuffle=False).fit(X * 1e-315, y)
