"""The kernel estimators' bias: a constant coordinate c appended to every phi(x), so
that the kernel is K + c^2 (``fit_intercept``, ``intercept_scaling``)."""

import pickle

import numpy as np
import pytest
from conftest import make_blobs_pm, rel_err
from reference import (
    kernel_family_binary,
    kernel_family_scores,
    kernel_matrix,
    ovr_targets,
    tie_free,
)

from marginkit import (
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelROMMAClassifier,
    PerceptronClassifier,
)

KERNEL_ESTIMATORS = [KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier]


def offset(est):
    return est._kstate.kernel.offset


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS)
def test_the_default_is_a_bias_coordinate_of_one_half(cls):
    X, y = make_blobs_pm(n=60, d=3, n_classes=2, seed=1)
    est = cls(random_state=0).fit(X, y)
    assert est.fit_intercept is True and est.intercept_scaling == 0.5
    assert offset(est) == 0.25  # K(x, x) = 1: c = 0.5
    lin = cls(kernel="linear", random_state=0).fit(X, y)
    assert offset(lin) == pytest.approx(0.25 * np.mean(np.einsum("ij,ij->i", X, X)))
    assert offset(cls(fit_intercept=False, random_state=0).fit(X, y)) == 0.0


def test_rms_and_max_read_the_norms_of_the_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)) * [1.0, 2.0, 0.5, 3.0]
    y = (X[:, 0] > 0).astype(int)
    sq = np.einsum("ij,ij->i", X, X)
    kw = dict(max_iter=1, shuffle=False)
    rbf = KernelALMAClassifier(intercept_scaling="rms", **kw).fit(X, y)
    assert offset(rbf) == 1.0  # K(x, x) = 1 for every row
    lin = KernelPerceptronClassifier(kernel="linear", intercept_scaling="rms", **kw).fit(X, y)
    assert offset(lin) == pytest.approx(sq.mean(), rel=1e-12)
    top = KernelPerceptronClassifier(kernel="linear", intercept_scaling="max", **kw).fit(X, y)
    assert offset(top) == pytest.approx(sq.max(), rel=1e-12)
    poly = dict(kernel="poly", degree=2, gamma=0.1, coef0=1.0)
    est = KernelROMMAClassifier(intercept_scaling="rms", **poly, **kw).fit(X, y)
    assert offset(est) == pytest.approx((0.1 * sq.mean() + 1.0) ** 2, rel=1e-12)
    # a callable: the mean of its K(x, x) over the rows of the fit
    cubic = lambda A, B: (0.1 * A @ B.T + 1.0) ** 3  # noqa: E731
    est = KernelALMAClassifier(kernel=cubic, intercept_scaling="rms", **kw).fit(X, y)
    assert offset(est) == pytest.approx(np.mean((0.1 * sq + 1.0) ** 3), rel=1e-12)
    est = KernelALMAClassifier(kernel=cubic, intercept_scaling="max", **kw).fit(X, y)
    assert offset(est) == pytest.approx(np.max((0.1 * sq + 1.0) ** 3), rel=1e-12)
    est = KernelALMAClassifier(kernel=cubic, intercept_scaling=2.0, **kw).fit(X, y)
    assert offset(est) == pytest.approx(4.0 * np.mean((0.1 * sq + 1.0) ** 3), rel=1e-12)


@pytest.mark.parametrize("scaling", [0.5, 3.0])
def test_the_linear_kernel_with_a_bias_is_the_linear_perceptron_with_one(scaling):
    """(x, c) . (z, c) = x . z + c^2: the kernel Perceptron on the linear kernel makes
    the mistakes and decisions of PerceptronClassifier with the bias coordinate c,
    ``intercept_scaling`` times the root mean square norm of the rows."""
    X, y = make_blobs_pm(n=200, d=5, n_classes=3, seed=4)
    X = X + 2.0  # a bias is needed
    kw = dict(shuffle=False, max_iter=3, tol=None, output="avg")
    rms = np.sqrt(np.mean(np.einsum("ij,ij->i", X, X)))
    lin = PerceptronClassifier(intercept_scaling=scaling * rms, **kw).fit(X, y)
    ker = KernelPerceptronClassifier(kernel="linear", intercept_scaling=scaling, **kw).fit(X, y)
    np.testing.assert_array_equal(ker.n_corrections_per_class_, lin.n_corrections_per_class_)
    assert rel_err(ker.decision_function(X), lin.decision_function(X)) < 1e-9


@pytest.mark.parametrize(
    "cls,rule,lam",
    [
        (KernelPerceptronClassifier, "perceptron", 0.0),
        (KernelROMMAClassifier, "romma", 0.0),
        (KernelROMMAClassifier, "aggressive", 0.0),
        (KernelROMMAClassifier, "aggressive", 0.7),
    ],
)
def test_the_family_with_a_bias_equals_the_reference(cls, rule, lam):
    X, y = make_blobs_pm(n=70, d=4, n_classes=3, seed=5)
    X_test, _ = make_blobs_pm(n=25, d=4, n_classes=3, seed=6)
    kw = dict(kernel="rbf", gamma=0.4)
    K = kernel_matrix("rbf", X, X, gamma=0.4, offset=0.25)
    K_test = kernel_matrix("rbf", X_test, X, gamma=0.4, offset=0.25)
    with tie_free():
        runs = [
            kernel_family_binary(K, t, rule, max_iter=2, delta=0.1, lam=lam)
            for t in ovr_targets(y, [0, 1, 2])
        ]
        want = {o: kernel_family_scores(runs, K_test, o) for o in ["last", "avg", "voted"]}
    extra = (
        {}
        if cls is KernelPerceptronClassifier
        else {"aggressive": rule == "aggressive", "delta": 0.1, "lam": lam}
    )
    est = cls(shuffle=False, max_iter=2, tol=None, block_size=16, **kw, **extra).fit(X, y)
    assert list(est.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        est.set_params(output=output)
        assert rel_err(est.decision_function(X_test), want[output]) < 1e-9, output


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS)
def test_a_bias_separates_what_the_origin_cannot(cls):
    """Rows on a ray from the origin, labelled by their distance: no hyperplane
    through the origin of the linear kernel's space separates them, one with a bias
    does, and the passes find it (Novikoff's bound holds in the augmented space)."""
    rng = np.random.default_rng(3)
    t = np.concatenate([rng.uniform(0.5, 1.0, 50), rng.uniform(2.0, 2.5, 50)])
    X = np.column_stack([t, 2.0 * t])
    y = (t > 1.5).astype(int)
    kw = dict(kernel="linear", output="last", max_iter=1000, random_state=0)
    without = cls(fit_intercept=False, **kw).fit(X, y)
    assert without.score(X, y) < 1.0
    with_bias = cls(intercept_scaling="rms", **kw).fit(X, y)
    assert with_bias.score(X, y) == 1.0


def test_the_merge_rule_needs_no_bias():
    X, y = make_blobs_pm(n=80, d=3, n_classes=2, seed=7)
    with pytest.raises(ValueError, match="budget_rule='merge' needs fit_intercept=False"):
        KernelALMAClassifier(budget=20, budget_rule="merge").fit(X, y)
    est = KernelALMAClassifier(budget=20, shuffle=False, max_iter=1).fit(X[:40], y[:40])
    before = est.decision_function(X)
    with pytest.raises(ValueError, match="budget_rule='merge' needs fit_intercept=False"):
        est.set_params(budget_rule="merge").partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(est.decision_function(X), before)
    KernelALMAClassifier(budget=20, budget_rule="merge", fit_intercept=False).fit(X, y)


def test_partial_fit_refuses_a_bias_changed_since_the_fit():
    X, y = make_blobs_pm(n=80, d=3, n_classes=2, seed=8)
    est = KernelPerceptronClassifier(shuffle=False, max_iter=1).fit(X, y)
    est.set_params(fit_intercept=False)
    with pytest.raises(ValueError, match="was fit with fit_intercept=True"):
        est.partial_fit(X, y)
    # the model keeps its own bias to predict
    assert offset(est) == 0.25


def test_a_scaling_that_leaves_float64_is_refused():
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=9)
    est = KernelALMAClassifier(intercept_scaling=1e200)
    with pytest.raises(ValueError, match="intercept_scaling=1e[+]?200 leaves float64"):
        est.fit(X, y)
    assert not hasattr(est, "classes_")


def test_a_model_saved_before_the_bias_loads_without_one():
    X, y = make_blobs_pm(n=80, d=3, n_classes=3, seed=10)
    est = KernelALMAClassifier(fit_intercept=False, shuffle=False, max_iter=2).fit(X, y)
    want = est.decision_function(X)
    state = est.__getstate__()
    del state["fit_intercept"], state["intercept_scaling"]
    del vars(state["_kstate"].kernel)["offset"]  # a kernel pickled without one
    old = pickle.loads(pickle.dumps(state))
    loaded = KernelALMAClassifier.__new__(KernelALMAClassifier)
    loaded.__setstate__(old)
    assert loaded.fit_intercept is False and loaded.intercept_scaling == "rms"
    assert offset(loaded) == 0.0
    np.testing.assert_array_equal(loaded.decision_function(X), want)


@pytest.mark.parametrize("kernel", ["linear", "poly"])
@pytest.mark.parametrize("scale", [2.0**-300, 2.0**-60, 2.0**70, 2.0**300])
def test_the_bias_does_not_depend_on_the_scale_of_the_features(kernel, scale):
    """c is relative to the norms of the rows: the same model at any scale (the linear
    kernel's decisions scale as the features; poly's gamma="scale" takes it back)."""
    X, y = make_blobs_pm(n=100, d=4, n_classes=2, seed=11)
    kw = dict(kernel=kernel, shuffle=False, max_iter=2, tol=None, output="last")
    one = KernelPerceptronClassifier(**kw).fit(X, y)
    far = KernelPerceptronClassifier(**kw).fit(X * scale, y)
    np.testing.assert_array_equal(far.n_corrections_per_class_, one.n_corrections_per_class_)
    np.testing.assert_array_equal(
        np.sign(far.decision_function(X * scale)), np.sign(one.decision_function(X))
    )
