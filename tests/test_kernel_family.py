"""The kernel Perceptron and kernel ROMMA on the blocked engine, against the references.

Every reference run is made inside ``tie_free``: no trial's margin lies within rounding of
its threshold, so the counts compared hold under every BLAS kernel (tests/reference.py).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, rel_err
from reference import (
    bias_offset,
    kernel_family_binary,
    kernel_family_scores,
    kernel_matrix,
    linear_fit,
    linear_scores,
    ovr_targets,
    passes_until_quiet,
    perceptron_binary,
    romma_binary,
    tie_free,
)

from marginkit import (
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    PerceptronClassifier,
    ROMMAClassifier,
)

pytestmark = pytest.mark.exactness


KERNELS = [
    ("linear", {}),
    ("poly", {"degree": 3, "gamma": 0.2, "coef0": 1.0}),
    ("rbf", {"gamma": 0.3}),
    # gamma 0.02, not larger: with exp(-gamma d^2) below rounding for the far rows of
    # varied_norms, K is the constant coef0^degree there, and a Perceptron whose
    # coefficients sum to 0 met a margin of exact 0 that the exact kernel puts 5e-47
    # above it, decided by the last bit of the kernel values (tie_free finds these)
    ("poly_rbf", {"degree": 5, "gamma": 0.02, "coef0": 1.0}),
]

RULES = {
    "perceptron": (KernelPerceptronClassifier, {}),
    "romma": (KernelROMMAClassifier, {"aggressive": False, "lam": 0.0}),
    "romma-soft": (KernelROMMAClassifier, {"aggressive": False, "lam": 0.4}),
    "aggressive": (KernelROMMAClassifier, {"aggressive": True, "lam": 0.0}),
    "aggressive-soft": (KernelROMMAClassifier, {"aggressive": True, "lam": 0.4}),
    "aggressive-delta": (KernelROMMAClassifier, {"aggressive": True, "delta": 0.3, "lam": 0.0}),
}


def varied_norms(n, d, n_classes, seed):
    """Blobs whose rows are rescaled by factors 0.2 to 5: ROMMA then forgets at times."""
    X, y = make_blobs_pm(n=n, d=d, n_classes=n_classes, seed=seed)
    scale = np.exp(np.random.default_rng(seed).uniform(np.log(0.2), np.log(5.0), size=n))
    return X * scale[:, None], y


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("kernel,kw", KERNELS, ids=lambda v: str(v))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("normalize", [False, True])
def test_matches_reference(rule, kernel, kw, n_classes, normalize):
    cls, params = RULES[rule]
    X, y = varied_norms(60, 4, n_classes, seed=n_classes)
    X_test, _ = make_blobs_pm(n=20, d=4, n_classes=n_classes, seed=99)
    kargs = {"gamma": kw.get("gamma", 1.0), "degree": kw.get("degree", 3), "coef0": 1.0}
    # the bias coordinate c = 0.5 of the defaults; not with the Gaussian kernel, whose
    # values vanish between the far rows of varied_norms: the Perceptron's +-c^2 then
    # cancel to margins of exactly 0, ties that the last bit decides
    bias = kernel != "rbf"
    kargs["offset"] = bias_offset(kernel, X, **kargs) if bias else 0.0
    K = kernel_matrix(kernel, X, X, normalize=normalize, **kargs)
    K_test = kernel_matrix(kernel, X_test, X, normalize=normalize, **kargs)
    ref = {"rule": rule.split("-")[0], "delta": params.get("delta", 0.0)}
    ref["lam"] = params.get("lam", 0.0)  # the soft margin: a coordinate per row
    targets = ovr_targets(y, np.unique(y))

    def runs_of(passes):
        return [kernel_family_binary(K, t, max_iter=passes, **ref) for t in targets]

    with tie_free():
        # with delta > 0 the passes end at the first without update
        runs = passes_until_quiet(runs_of, 3)[1] if ref["delta"] > 0 else runs_of(3)
        want = {o: kernel_family_scores(runs, K_test, o) for o in ["last", "avg", "voted"]}
    for block_size in [1, 7, 256]:
        clf = cls(
            shuffle=False,
            kernel=kernel,
            max_iter=3,
            tol=None,
            block_size=block_size,
            normalize=normalize,
            fit_intercept=bias,
            **params,
            **kw,
        ).fit(X, y)
        assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
        for output in ["last", "avg", "voted"]:
            clf.set_params(output=output)
            assert rel_err(clf.decision_function(X_test), want[output]) < 1e-9, (
                block_size,
                output,
            )


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_aggressive_romma_forgets_and_stays_exact(lam):
    """The linear kernel gives the linear form's corrections and outputs, with the soft
    margin too (a row's coordinate kept across the passes in both)."""
    X, y = varied_norms(80, 3, 2, seed=5)
    with tie_free():
        runs, _ = linear_fit(romma_binary, X, y, aggressive=True, max_iter=3, lam=lam)
        linear_scores(runs, X, "voted")
    clf = KernelROMMAClassifier(
        fit_intercept=False,
        shuffle=False,
        aggressive=True,
        lam=lam,
        kernel="linear",
        max_iter=3,
        tol=None,
        block_size=16,
        output="last",
    )
    clf.fit(X, y)
    if lam == 0:
        assert clf._kstate.reset[: clf._kstate.m].sum() > 1  # forgot more than at the start
    linear = ROMMAClassifier(
        shuffle=False,
        aggressive=True,
        lam=lam,
        max_iter=3,
        tol=None,
        keep_corrections=True,
        output="last",
        fit_intercept=False,
    ).fit(X, y)
    assert clf.n_corrections_ == linear.n_corrections_
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        linear.set_params(output=output)
        assert rel_err(clf.decision_function(X), linear.decision_function(X)) < 1e-9


@pytest.mark.parametrize("sparse", [False, True])
def test_linear_kernel_equals_linear_perceptron(sparse):
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=2, sparse_density=0.5 if sparse else None)
    with tie_free():
        linear_fit(perceptron_binary, X, y, max_iter=2)
    kern = KernelPerceptronClassifier(
        fit_intercept=False,
        shuffle=False,
        kernel="linear",
        max_iter=2,
        block_size=32,
        output="last",
    ).fit(X, y)
    lin = PerceptronClassifier(shuffle=False, max_iter=2, output="last", fit_intercept=False).fit(
        X, y
    )
    assert list(kern.n_corrections_per_class_) == list(lin.n_corrections_per_class_)
    np.testing.assert_allclose(kern.dual_coef_ @ kern.support_vectors_, lin.coef_, atol=1e-9)


@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_scale_folds_keep_kernel_romma_exact(lam):
    """Folding the scale into the coefficients (the soft margin's row sums with them)
    changes no correction and no output."""
    X, y = varied_norms(70, 4, 3, seed=8)
    K = kernel_matrix("rbf", X, X, gamma=0.3)
    with tie_free():
        runs = [
            kernel_family_binary(K, t, "romma", max_iter=2, lam=lam)
            for t in ovr_targets(y, [0, 1, 2])
        ]
        kernel_family_scores(runs, K, "voted")

    class Folding(KernelROMMAClassifier):
        def _initialise(self, data):
            super()._initialise(data)
            self._fold_below = 0.97

    kw = {"shuffle": False, "kernel": "rbf", "gamma": 0.3, "max_iter": 2, "lam": lam}
    plain = KernelROMMAClassifier(block_size=9, output="last", fit_intercept=False, **kw)
    plain.fit(X, y)
    folded = Folding(block_size=9, fit_intercept=False, **kw).fit(X, y)
    assert plain.n_corrections_ == folded.n_corrections_
    for output in ["last", "avg", "voted"]:
        plain.set_params(output=output)
        folded.set_params(output=output)
        assert rel_err(folded.decision_function(X), plain.decision_function(X)) < 1e-9


def test_cache_off_gives_the_same_model():
    X, y = varied_norms(90, 4, 3, seed=4)
    K = kernel_matrix("rbf", X, X, gamma=1 / (X.shape[1] * X.var()))  # gamma="scale"
    with tie_free():
        for t in ovr_targets(y, [0, 1, 2]):
            kernel_family_binary(K, t, "aggressive", max_iter=3, lam=1.0)
    kw = {"shuffle": False, "aggressive": True, "max_iter": 3, "fit_intercept": False}
    a = KernelROMMAClassifier(cache_size=0, block_size=10, output="last", **kw).fit(X, y)
    b = KernelROMMAClassifier(block_size=10, output="last", **kw).fit(X, y)
    assert a.n_corrections_ == b.n_corrections_
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-10)


def test_sparse_input():
    X, y = make_blobs_pm(n=80, d=6, n_classes=2, seed=1, sparse_density=0.5)
    K = kernel_matrix("poly", X, X, gamma=0.5, degree=2)
    with tie_free():
        kernel_family_binary(K, ovr_targets(y, [0, 1])[0], "romma", lam=1.0)
    dense = KernelROMMAClassifier(
        shuffle=False, kernel="poly", degree=2, gamma=0.5, output="last", max_iter=1
    ).fit(X.toarray(), y)
    sparse = KernelROMMAClassifier(
        shuffle=False, kernel="poly", degree=2, gamma=0.5, output="last", max_iter=1
    ).fit(sp.csr_matrix(X), y)
    assert dense.n_corrections_ == sparse.n_corrections_
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(X), rtol=1e-10)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    "cls, params",
    [
        (KernelROMMAClassifier, {"fit_intercept": False, "lam": 0.0}),
        (KernelROMMAClassifier, {"aggressive": True, "fit_intercept": False, "lam": 0.0}),
        (KernelPUMMAClassifier, {}),
    ],
)
@pytest.mark.parametrize("kernel", ["rbf", "poly_rbf"])
def test_gaussian_diagonal_is_exact_at_any_gamma(cls, params, kernel):
    """K(x, x) of a Gaussian kernel is a constant, which the walks read from the block's
    Gram matrix: a gamma of 1e18 turns the rounding of the distance ``||x||^2 + ||x||^2 -
    2 x . x`` into K(x, x) = 0 there (ROMMA divided by it). Every point is then its own
    support vector, and the training rows with no other close to them are learned."""
    X = np.random.RandomState(0).randn(30, 4)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = cls(kernel=kernel, gamma=1e18, degree=2, max_iter=2, **{"shuffle": False, **params}).fit(
        X, y
    )
    assert np.all(np.isfinite(clf.dual_coef_))
    assert clf.n_corrections_ >= X.shape[0] // 2


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_kernel_aggressive_romma_with_delta_ends_at_a_quiet_pass(lam):
    """With delta > 0 kernel ROMMA's fit ends at its first pass without an update, the
    pass of the linear form with the linear kernel (with the soft margin too)."""
    X, y = make_blobs_pm(n=120, d=4, n_classes=2, seed=3)
    params = {"aggressive": True, "delta": 0.1, "tol": None, "max_iter": 5000, "shuffle": False}
    params["lam"] = lam
    linear = ROMMAClassifier(fit_intercept=False, **params).fit(X, y)
    kernel = KernelROMMAClassifier(kernel="linear", fit_intercept=False, **params).fit(X, y)
    with tie_free():  # the passes both made, replayed
        linear_fit(
            romma_binary, X, y, aggressive=True, delta=0.1, max_iter=linear.n_iter_, lam=lam
        )
    assert 1 < kernel.n_iter_ == linear.n_iter_ < 5000
    assert kernel.n_corrections_ == linear.n_corrections_
    np.testing.assert_allclose(kernel.decision_function(X), linear.decision_function(X))


def test_tie_free_finds_the_tie_that_parted_blas_kernels():
    """At gamma=0.2 (before) the normalised poly_rbf kernel of the far rows is the
    constant 1/32 to the last bit: after updates on rows 0 (+1) and 1 (-1), trial 16's
    margin is exactly 0 in float64 (5e-47 above it in exact arithmetic), and OpenBLAS'
    Prescott kernel made 8 corrections where the reference makes 6. tie_free names it."""
    X, y = varied_norms(60, 4, 2, seed=2)
    K = kernel_matrix("poly_rbf", X, X, normalize=True, gamma=0.2, degree=5, coef0=1.0)
    with pytest.raises(AssertionError, match="kernel perceptron pass 0, trial 16: 0.0 vs 0.0"):
        with tie_free():
            kernel_family_binary(K, ovr_targets(y, [0, 1])[0], "perceptron")
