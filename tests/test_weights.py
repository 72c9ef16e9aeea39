"""Sample and class weights (docs/algorithms/*.md, "Weights"): the weighted rules against
tests/reference.py, a zero weight as the row left out, what an integer weight equals,
class weights as scikit-learn computes them, and the errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import hard_romma_cases, make_blobs_pm, rel_err
from reference import (
    alma_fit,
    alma_scores,
    bias_offset,
    kernel_alma_fit,
    kernel_family_binary,
    kernel_family_scores,
    kernel_matrix,
    kernel_pumma_binary,
    kernel_pumma_scores,
    linear_fit,
    linear_scores,
    margin_perceptron_binary,
    ovr_targets,
    ovr_until_quiet,
    perceptron_binary,
    pumma_binary,
    pumma_scores,
    romma_binary,
    tie_free,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import balanced_accuracy_score
from sklearn.utils.class_weight import compute_class_weight

import marginkit
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

WEIGHTED = [
    ALMAClassifier,
    KernelALMAClassifier,
    PerceptronClassifier,
    KernelPerceptronClassifier,
    ROMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
    KernelPUMMAClassifier,
]
ids = [c.__name__ for c in WEIGHTED]


def quick(cls, **params):
    """An estimator of ``cls`` at a few passes (the margin Perceptron's warning of a
    schedule cut short is not what these tests look at)."""
    return cls(**{"max_iter": 4, "random_state": 0, **params})


def weights_of(n, seed, zeros=True):
    """Weights 0.25 to 4 (and some zeros)."""
    rng = np.random.default_rng(seed)
    w = np.exp(rng.uniform(np.log(0.25), np.log(4.0), size=n))
    if zeros:
        w[rng.uniform(size=n) < 0.2] = 0.0
    return w


def values(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.decision_function(X)


def fitted(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(*args, **kwargs)


# -- against the reference -----------------------------------------------------------

LINEAR = {
    "perceptron": (PerceptronClassifier, {}, perceptron_binary, {}),
    **hard_romma_cases(),
    # the soft margin at its defaults: a row of weight c holds sqrt(lam / c)
    "soft-aggressive": (ROMMAClassifier, {}, romma_binary, {"aggressive": True, "lam": 1.0}),
    "margin-perceptron": (
        MarginPerceptronClassifier,
        {"gamma_guess": 0.5},
        lambda A, t, max_iter, weights: margin_perceptron_binary(
            A, t, 0.5, max_iter=max_iter, weights=weights
        )[:2],
        {},
    ),
}


@pytest.mark.exactness
@pytest.mark.parametrize("name", sorted(LINEAR))
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_weighted_linear_rules_equal_the_reference(name, sparse, n_classes):
    cls, params, binary, ref_params = LINEAR[name]
    X, y = make_blobs_pm(n=120, d=8, n_classes=n_classes, seed=10 + n_classes)
    X = X + 2.0
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(1).uniform(size=X.shape) < 0.6))
    w = weights_of(120, seed=n_classes, zeros=False)
    clf = cls(shuffle=False, max_iter=3, tol=None, keep_corrections=True, **params)
    bias = {"fit_intercept": True, "intercept_scaling": clf.intercept_scaling}  # its default
    with tie_free():
        runs, R = linear_fit(binary, X, y, max_iter=3, weights=w, **bias, **ref_params)
        linear_scores(runs, X, "voted", R=R)
    fitted(clf, X, y, sample_weight=w)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), linear_scores(runs, X, output, R=R)) < 1e-9


@pytest.mark.exactness
@pytest.mark.parametrize("p", [2.0, 6.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_weighted_alma_equals_the_reference(p, sparse):
    X, y = make_blobs_pm(
        n=150, d=10, n_classes=3, seed=int(p), sparse_density=0.6 if sparse else None
    )
    w = weights_of(150, seed=int(p), zeros=False)
    with tie_free():
        runs, _ = alma_fit(X, y, p, 0.8, 1 / 0.8, np.sqrt(2), max_iter=2, weights=w)
        alma_scores(runs, X, p, "voted")
    clf = ALMAClassifier(
        shuffle=False,
        keep_corrections=True,
        p=p,
        alpha=0.8,
        max_iter=2,
        tol=None,
        fit_intercept=False,
    ).fit(X, y, sample_weight=w)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), alma_scores(runs, X, p, output)) < 1e-9


@pytest.mark.exactness
@pytest.mark.parametrize(
    "rule", ["perceptron", "romma", "aggressive", "romma-soft", "aggressive-soft"]
)
@pytest.mark.parametrize("block_size", [1, 7, 256])
def test_weighted_kernel_rules_equal_the_reference(rule, block_size):
    """The weights of the kernel rules as tests/reference.py writes them; ROMMA's soft
    margin weighs a row twice, in its coordinate (lam / c) and in its update."""
    cls = KernelPerceptronClassifier if rule == "perceptron" else KernelROMMAClassifier
    rule, soft = rule.split("-")[0], rule.endswith("soft")
    lam = 0.6 if soft else 0.0
    params = {}
    if cls is KernelROMMAClassifier:
        params = {"lam": lam, "aggressive": rule == "aggressive"}
    X, y = make_blobs_pm(n=60, d=4, n_classes=3, seed=7)
    X_test, _ = make_blobs_pm(n=20, d=4, n_classes=3, seed=99)
    w = weights_of(60, seed=3, zeros=False)
    kw = {"gamma": 0.3}
    K = kernel_matrix("rbf", X, X, offset=0.25, **kw)  # the default bias coordinate 0.5
    K_test = kernel_matrix("rbf", X_test, X, offset=0.25, **kw)
    with tie_free():
        runs = [
            kernel_family_binary(K, t, rule, max_iter=3, weights=w, lam=lam)
            for t in ovr_targets(y, np.unique(y))
        ]
        want = {o: kernel_family_scores(runs, K_test, o) for o in ["last", "avg", "voted"]}
    clf = cls(
        shuffle=False, kernel="rbf", max_iter=3, tol=None, block_size=block_size, **params, **kw
    )
    clf.fit(X, y, sample_weight=w)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X_test), want[output]) < 1e-9


@pytest.mark.exactness
@pytest.mark.parametrize("block_size", [1, 7, 256])
def test_weighted_kernel_alma_equals_the_reference(block_size):
    X, y = make_blobs_pm(n=60, d=4, n_classes=3, seed=8)
    X_test, _ = make_blobs_pm(n=20, d=4, n_classes=3, seed=98)
    w = weights_of(60, seed=4, zeros=False)
    with tie_free():
        runs, scores = kernel_alma_fit(
            X,
            y,
            "poly",
            0.8,
            1 / 0.8,
            np.sqrt(2),
            max_iter=2,
            gamma=0.2,
            weights=w,
            offset=bias_offset("poly", X, gamma=0.2),
        )
        want = {o: scores(X_test, o) for o in ["last", "avg", "voted"]}
    clf = KernelALMAClassifier(
        shuffle=False,
        kernel="poly",
        gamma=0.2,
        degree=3,
        coef0=1.0,
        alpha=0.8,
        max_iter=2,
        tol=None,
        block_size=block_size,
    ).fit(X, y, sample_weight=w)
    assert list(clf.n_corrections_per_class_) == [len(h) - 1 for h, _ in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X_test), want[output]) < 1e-9


@pytest.mark.exactness
@pytest.mark.parametrize("p", [2.0, 3.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_weighted_pumma_equals_the_reference(p, sparse):
    X, y = make_blobs_pm(n=60, d=5, n_classes=3, seed=20 + int(p))
    X = X + 3.0
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(3).uniform(size=X.shape) < 0.7))
    w = weights_of(60, seed=int(p), zeros=False)
    with tie_free(rtol=1e-7):
        runs, epochs, converged = ovr_until_quiet(
            lambda t, **kw: pumma_binary(X, t, p=p, delta=0.2, lam=1.0, weights=w, **kw),
            ovr_targets(y, np.unique(y)),
            4,
        )
        pumma_scores(runs, X, "voted")
    clf = PUMMAClassifier(
        shuffle=False, tol=None, keep_corrections=True, p=p, delta=0.2, lam=1.0, max_iter=4
    )
    fitted(clf, X, y, sample_weight=w)
    assert clf.converged_ == converged
    assert list(clf.n_corrections_per_class_) == [len(r[0]) - 1 for r in runs]
    assert clf.n_epochs_ == epochs
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X), pumma_scores(runs, X, output)) < 1e-7


@pytest.mark.exactness
@pytest.mark.parametrize("block_size", [1, 7, 256])
def test_weighted_kernel_pumma_equals_the_reference(block_size):
    X, y = make_blobs_pm(n=50, d=4, n_classes=3, seed=21)
    X_test, _ = make_blobs_pm(n=20, d=4, n_classes=3, seed=97)
    w = weights_of(50, seed=21, zeros=False)
    K = kernel_matrix("rbf", X, X, gamma=0.3)
    K_test = kernel_matrix("rbf", X_test, X, gamma=0.3)
    with tie_free():
        runs, _, _ = ovr_until_quiet(
            lambda t, **kw: kernel_pumma_binary(K, t, delta=0.2, lam=1.0, weights=w, **kw),
            ovr_targets(y, np.unique(y)),
            4,
        )
        want = {o: kernel_pumma_scores(runs, K_test, o) for o in ["last", "avg", "voted"]}
    clf = KernelPUMMAClassifier(
        shuffle=False,
        kernel="rbf",
        gamma=0.3,
        delta=0.2,
        lam=1.0,
        max_iter=4,
        block_size=block_size,
    )
    fitted(clf, X, y, sample_weight=w)
    assert list(clf.n_corrections_per_class_) == [len(r[0]) - 1 for r in runs]
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        assert rel_err(clf.decision_function(X_test), want[output]) < 1e-9


def test_pumma_weights_live_in_the_soft_margin():
    """With the hard margin (lam=0) a weight changes nothing: PUMMA's weights are its
    soft margin's (docs/algorithms/pumma.md)."""
    X, y = make_blobs_pm(n=60, d=4, n_classes=2, seed=22)
    X = X + 3.0
    w = weights_of(60, seed=22, zeros=False)
    params = {"lam": 0.0, "max_iter": 3, "tol": None, "random_state": 0}
    a = fitted(PUMMAClassifier(**params), X, y, sample_weight=w)
    b = fitted(PUMMAClassifier(**params), X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


# -- what a weight equals -------------------------------------------------------------


@pytest.mark.parametrize("cls", WEIGHTED, ids=ids)
@pytest.mark.parametrize("sparse", [False, True])
def test_a_zero_weight_is_the_row_left_out(cls, sparse):
    """Bit for bit, at the defaults (shuffled passes, the radius, gamma="scale", the
    classes): the model of the rows that weigh something."""
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=2)
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(2).uniform(size=X.shape) < 0.7))
    w = weights_of(150, seed=5)
    keep = w > 0
    weighted = fitted(quick(cls), X, y, sample_weight=w)
    dropped = fitted(quick(cls), X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(values(weighted, X), values(dropped, X))
    assert weighted.n_trials_ == dropped.n_trials_
    if hasattr(dropped, "support_"):
        # the support vectors index the rows given, those of weight 0 among them
        np.testing.assert_array_equal(weighted.support_, np.flatnonzero(keep)[dropped.support_])


@pytest.mark.parametrize("cls", WEIGHTED, ids=ids)
def test_a_zero_weight_is_the_row_left_out_of_a_stream(cls):
    X, y = make_blobs_pm(n=120, d=5, n_classes=2, seed=3)
    w = weights_of(120, seed=6)
    w[40:80] = 0.0  # a whole call of weight 0: the call is the rows left out
    keep = w > 0
    weighted = quick(cls, max_iter=1)
    dropped = quick(cls, max_iter=1)
    for lo in range(0, 120, 40):
        part = slice(lo, lo + 40)
        weighted.partial_fit(X[part], y[part], classes=[0, 1], sample_weight=w[part])
        k = keep[part]
        if k.any():
            dropped.partial_fit(X[part][k], y[part][k], classes=[0, 1], sample_weight=w[part][k])
    np.testing.assert_array_equal(values(weighted, X), values(dropped, X))
    if hasattr(dropped, "support_"):
        np.testing.assert_array_equal(weighted.support_, np.flatnonzero(keep)[dropped.support_])


@pytest.mark.parametrize("cls", WEIGHTED, ids=ids)
def test_weights_of_one_are_no_weights(cls):
    X, y = make_blobs_pm(n=100, d=5, n_classes=3, seed=4)
    plain = fitted(quick(cls), X, y)
    ones = fitted(quick(cls), X, y, sample_weight=np.ones(100))
    scalar = fitted(quick(cls), X, y, sample_weight=1)
    even = fitted(quick(cls, class_weight={0: 1.0, 1: 1.0}), X, y)
    for other in (ones, scalar, even):
        np.testing.assert_array_equal(values(other, X), values(plain, X))


@pytest.mark.parametrize("sparse", [False, True])
def test_a_perceptron_weight_is_the_row_times_it(sparse):
    """The Perceptron's w += c y x on y w . x <= 0 is the Perceptron on the row c x (its
    test does not see a positive factor); at powers of two, bit for bit."""
    X, y = make_blobs_pm(n=120, d=6, n_classes=3, seed=5)
    c = 2.0 ** np.random.default_rng(5).integers(-2, 4, size=120)
    scaled = X * c[:, None]
    if sparse:
        X, scaled = sp.csr_matrix(X), sp.csr_matrix(scaled)
    for output in ["last", "avg"]:
        params = {"fit_intercept": False, "output": output, "max_iter": 3, "shuffle": False}
        a = PerceptronClassifier(**params).fit(X, y, sample_weight=c)
        b = PerceptronClassifier(**params).fit(scaled, y)
        np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls", [ALMAClassifier, ROMMAClassifier, MarginPerceptronClassifier])
def test_an_integer_weight_is_not_repeated_rows(cls):
    """An integer weight is one update scaled (docs/algorithms/*.md), not the row presented
    that many times: the statement tested against the reference above, and here that
    the two differ, so that no one reads it the other way."""
    X, y = make_blobs_pm(n=80, d=4, n_classes=2, seed=6)
    w = np.full(80, 3.0)
    scaled = fitted(cls(shuffle=False, max_iter=1, tol=None), X, y, sample_weight=w)
    repeated = fitted(
        cls(shuffle=False, max_iter=1, tol=None), np.repeat(X, 3, axis=0), np.repeat(y, 3)
    )
    assert not np.allclose(values(scaled, X), values(repeated, X))


# -- class weights ---------------------------------------------------------------------


@pytest.mark.parametrize("cls", WEIGHTED, ids=ids)
def test_balanced_class_weights_are_scikit_learns(cls):
    X, y = make_blobs_pm(n=150, d=5, n_classes=3, seed=7)
    y = np.where(np.arange(150) < 20, 0, y)  # unequal classes
    est = fitted(quick(cls, class_weight="balanced"), X, y)
    want = compute_class_weight("balanced", classes=np.unique(y), y=y)
    np.testing.assert_allclose(est.class_weight_, want, rtol=1e-15)
    by_hand = fitted(quick(cls), X, y, sample_weight=want[y])
    np.testing.assert_array_equal(values(est, X), values(by_hand, X))
    est = fitted(quick(cls, class_weight={1: 3.0}), X, y)
    np.testing.assert_array_equal(est.class_weight_, [1.0, 3.0, 1.0])


def test_balanced_with_integer_sample_weights_counts_them_as_rows():
    """With sample weights, "balanced" weighs each class by its total weight: integer
    weights then give the class weights of the rows repeated."""
    X, y = make_blobs_pm(n=90, d=4, n_classes=3, seed=8)
    w = np.random.default_rng(8).integers(1, 5, size=90).astype(float)
    est = PerceptronClassifier(class_weight="balanced", random_state=0).fit(X, y, sample_weight=w)
    repeated = np.repeat(y, w.astype(int))
    want = compute_class_weight("balanced", classes=np.unique(y), y=repeated)
    np.testing.assert_allclose(est.class_weight_, want, rtol=1e-13)


@pytest.mark.parametrize("cls", WEIGHTED, ids=ids)
def test_partial_fit_fixes_the_class_weights_at_its_first_call(cls):
    X, y = make_blobs_pm(n=120, d=5, n_classes=2, seed=9)
    est = quick(cls, class_weight="balanced", max_iter=1)
    est.partial_fit(X[:60], y[:60], classes=[0, 1])
    first = compute_class_weight("balanced", classes=np.array([0, 1]), y=y[:60])
    np.testing.assert_allclose(est.class_weight_, first, rtol=1e-15)
    est.partial_fit(X[60:], y[60:])
    np.testing.assert_allclose(est.class_weight_, first, rtol=1e-15)
    by_hand = quick(cls, max_iter=1)
    by_hand.partial_fit(X[:60], y[:60], classes=[0, 1], sample_weight=first[y[:60]])
    by_hand.partial_fit(X[60:], y[60:], sample_weight=first[y[60:]])
    np.testing.assert_array_equal(values(est, X), values(by_hand, X))


@pytest.mark.parametrize(
    "cls", [c for c in WEIGHTED if "ROMMA" not in c.__name__], ids=lambda c: c.__name__
)
def test_balanced_class_weights_lift_the_rare_class(cls):
    """On a set with 5% of one class, "balanced" raises the balanced accuracy on held-out
    rows (the point of class weights). Not ROMMA's: on noisy data a hard-margin rule
    answers weights erratically (docs/algorithms/romma.md, "Weights")."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        1200, 6, n_informative=4, weights=[0.95], flip_y=0.02, class_sep=0.8, random_state=1
    )
    Xtr, ytr, Xte, yte = X[:800], y[:800], X[800:], y[800:]
    plain = fitted(quick(cls, max_iter=10), Xtr, ytr)
    balanced = fitted(quick(cls, max_iter=10, class_weight="balanced"), Xtr, ytr)
    before = balanced_accuracy_score(yte, plain.predict(Xte))
    after = balanced_accuracy_score(yte, balanced.predict(Xte))
    assert after > before + 0.02, (before, after)


def test_a_class_of_weight_zero_is_left_out_of_a_fit():
    X, y = make_blobs_pm(n=90, d=4, n_classes=3, seed=10)
    est = PerceptronClassifier(class_weight={2: 0.0}, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    keep = y != 2
    dropped = PerceptronClassifier(random_state=0).fit(X[keep], y[keep])
    np.testing.assert_array_equal(est.decision_function(X), dropped.decision_function(X))


# -- saved, resumed ----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [PerceptronClassifier, KernelROMMAClassifier])
def test_class_weights_are_saved_with_the_model(cls, tmp_path):
    X, y = make_blobs_pm(n=80, d=4, n_classes=3, seed=11)
    est = quick(cls, class_weight="balanced", max_iter=1)
    est.partial_fit(X[:40], y[:40], classes=[0, 1, 2])
    marginkit.save(est, tmp_path / "m.skops")
    back = marginkit.load(tmp_path / "m.skops")
    np.testing.assert_array_equal(back.class_weight_, est.class_weight_)
    est.partial_fit(X[40:], y[40:])
    back.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_a_checkpointed_weighted_fit_is_the_plain_one_and_checks_its_weights(tmp_path):
    X, y = make_blobs_pm(n=100, d=4, n_classes=2, seed=12)
    w = weights_of(100, seed=12)
    plain = ALMAClassifier(max_iter=3, random_state=0).fit(X, y, sample_weight=w)
    path = tmp_path / "ckpt.skops"
    saved = ALMAClassifier(max_iter=3, random_state=0).fit(
        X, y, sample_weight=w, checkpoint=path, checkpoint_every=30
    )
    np.testing.assert_array_equal(saved.decision_function(X), plain.decision_function(X))
    with pytest.raises(ValueError, match="checkpoint of training on other data"):
        ALMAClassifier(max_iter=3, random_state=0).fit(X, y, sample_weight=w * 2, checkpoint=path)


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", WEIGHTED, ids=ids)
def test_bad_weights_are_refused_and_change_nothing(cls):
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=13)
    est = fitted(quick(cls, max_iter=1), X, y)
    before = values(est, X)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        est.fit(X, y, sample_weight=np.r_[-1.0, np.ones(39)])
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(39,\), expected \(40,\)"):
        est.fit(X, y, sample_weight=np.ones(39))
    with pytest.raises(ValueError, match="at least one non-zero number"):
        est.fit(X, y, sample_weight=np.zeros(40))
    np.testing.assert_array_equal(values(est, X), before)


def test_an_all_zero_later_call_of_partial_fit_is_no_call():
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=14)
    est = PerceptronClassifier().partial_fit(X, y, classes=[0, 1])
    before = est.decision_function(X)
    est.partial_fit(X, y, sample_weight=np.zeros(40))
    np.testing.assert_array_equal(est.decision_function(X), before)
    with pytest.raises(ValueError, match="at least one non-zero number"):
        PerceptronClassifier().partial_fit(X, y, classes=[0, 1], sample_weight=np.zeros(40))


@pytest.mark.parametrize(
    "class_weight, match",
    [
        ({0: -1.0}, r"class_weight must hold finite numbers >= 0; got \{0: -1.0\}"),
        ({0: np.inf}, r"class_weight must hold finite numbers >= 0; got \{0: inf\}"),
        ({7: 2.0}, r"The classes, \[0, 1\], are not in class_weight"),
        ({0: 0.0, 1: 0.0}, "at least one non-zero number"),
    ],
)
def test_bad_class_weights_are_refused(class_weight, match):
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=15)
    with pytest.raises(ValueError, match=match):
        PerceptronClassifier(class_weight=class_weight).fit(X, y)


def test_balanced_partial_fit_needs_every_class_in_its_first_call():
    X, y = make_blobs_pm(n=40, d=3, n_classes=2, seed=16)
    est = PerceptronClassifier(class_weight="balanced")
    with pytest.raises(ValueError, match=r"needs rows of weight > 0 of every class, and \[2\]"):
        est.partial_fit(X, y, classes=[0, 1, 2])
    assert not hasattr(est, "classes_")


# -- the command line and a file streamed ----------------------------------------------


def imbalanced_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file, make_classification

    X, y = make_classification(600, 5, n_informative=3, weights=[0.9], flip_y=0.0, random_state=2)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(path))
    return path, X, y


def test_the_command_line_takes_balanced_class_weights(tmp_path, capsys):
    from marginkit.cli import main

    path, X, y = imbalanced_file(tmp_path)
    model = tmp_path / "m.skops"
    argv = ["train", str(path), "--estimator", "perceptron", "--model", str(model)]
    assert main([*argv, "--class-weight", "balanced", "--param", "random_state=0"]) == 0
    est = marginkit.load(model)
    assert est.class_weight == "balanced"
    want = compute_class_weight("balanced", classes=np.array([0, 1]), y=y)
    np.testing.assert_allclose(est.class_weight_, want, rtol=1e-12)
    # streamed: the class weights of the first chunk (a file in random order: close)
    assert main([*argv, "--class-weight", "balanced", "--chunk-size", "200"]) == 0
    streamed = marginkit.load(model)
    first = compute_class_weight("balanced", classes=np.array([0, 1]), y=y[:200])
    np.testing.assert_allclose(streamed.class_weight_, first, rtol=1e-12)


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--estimator", "alma", "--class-weight", "balanced", "--param", "class_weight=None"],
            "--class-weight balanced and --param class_weight=None disagree",
        ),
    ],
)
def test_the_command_line_refuses_class_weights_it_cannot_use(tmp_path, capsys, extra, message):
    from conftest import one_error_line

    from marginkit.cli import main

    path, _, _ = imbalanced_file(tmp_path)
    argv = ["train", str(path), "--model", str(tmp_path / "m.skops"), *extra]
    assert main(argv) == 2
    assert message in one_error_line(capsys.readouterr().err)


def test_a_streamed_fit_weighs_each_chunk_by_the_first_chunks_class_weights(tmp_path):
    """fit_file with class weights: the fit in the file's order with the weights of the
    first chunk's classes."""
    from marginkit.streaming import fit_file
    from marginkit.tasks import read_data

    path, _, _ = imbalanced_file(tmp_path)
    X, y = read_data(path)
    streamed = fit_file(
        PerceptronClassifier(class_weight="balanced", max_iter=2, tol=None),
        str(path),
        chunk_size=150,
    )
    first = compute_class_weight("balanced", classes=np.array([0, 1]), y=y[:150])
    np.testing.assert_allclose(streamed.class_weight_, first, rtol=1e-15)
    whole = PerceptronClassifier(shuffle=False, max_iter=2, tol=None)
    whole.fit(X, y, sample_weight=streamed.class_weight_[y])
    np.testing.assert_array_equal(streamed.decision_function(X), whole.decision_function(X))


# -- the edges found by review ----------------------------------------------------------


def test_a_streamed_kernel_fit_with_a_class_of_weight_zero_is_the_stream_without_it(tmp_path):
    """In a stream, positions count the rows of weight > 0 (docs/defaults.md)."""
    from sklearn.datasets import dump_svmlight_file

    from marginkit.streaming import fit_file

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 4)), rng.integers(0, 3, 300)
    keep = y != 0
    dump_svmlight_file(X, y, str(tmp_path / "a.svm"))
    dump_svmlight_file(X[keep], y[keep], str(tmp_path / "b.svm"))
    kw = {"max_iter": 2, "tol": None, "gamma": 0.5, "random_state": 0}
    opts = {"chunk_size": 50, "n_features": 4, "classes": [0, 1, 2]}
    weighted = fit_file(
        KernelPerceptronClassifier(class_weight={0: 0.0}, **kw), str(tmp_path / "a.svm"), **opts
    )
    dropped = fit_file(KernelPerceptronClassifier(**kw), str(tmp_path / "b.svm"), **opts)
    np.testing.assert_array_equal(weighted.support_, dropped.support_)
    np.testing.assert_array_equal(weighted.decision_function(X), dropped.decision_function(X))


def test_kernel_romma_says_when_its_weights_overflow():
    from sklearn.datasets import make_classification

    from marginkit._base import WeightsOverflowError

    X, y = make_classification(
        600, 10, n_informative=4, weights=[0.97], flip_y=0.03, random_state=0
    )
    est = KernelROMMAClassifier(
        class_weight="balanced", lam=0.0, max_iter=40, tol=None, random_state=0
    )
    with pytest.raises(WeightsOverflowError, match="weights overflowed: .* weights above 1"):
        est.fit(X, y)
    assert not hasattr(est, "classes_")  # the fit left nothing


def test_balanced_class_weights_of_huge_sample_weights_do_not_overflow():
    from marginkit._weights import class_weights

    X, y = make_blobs_pm(n=90, d=4, n_classes=3, seed=23)
    big = np.where(y == 0, 1e307, 1.0)
    got = class_weights("balanced", np.array([0, 1, 2]), y, big)
    W, Wk = big / 1e307, np.bincount(y, big / 1e307)
    np.testing.assert_allclose(got, W.sum() / (3 * Wk), rtol=1e-14)
    big = np.where(y == 0, 1e300, 1e298)
    with pytest.raises(ValueError, match="sample_weight times class_weight overflows float64"):
        PerceptronClassifier(class_weight={0: 1e10}).fit(X, y, sample_weight=big)


def test_a_class_weight_key_for_a_class_of_zero_weight_rows_is_a_class():
    X, y = make_blobs_pm(n=90, d=4, n_classes=3, seed=24)
    labels = np.array(["a", "b", "c"])[y]
    w = (labels != "c") * 1.0
    est = PerceptronClassifier(class_weight={"c": 3.0}, random_state=0).fit(
        X, labels, sample_weight=w
    )
    np.testing.assert_array_equal(est.classes_, ["a", "b"])


def test_sample_weights_of_one_are_no_weights_to_a_checkpoint(tmp_path):
    X, y = make_blobs_pm(n=80, d=4, n_classes=2, seed=25)
    path = tmp_path / "ckpt.skops"
    plain = ALMAClassifier(max_iter=3, random_state=0).fit(X, y, checkpoint=path)
    again = ALMAClassifier(max_iter=3, random_state=0).fit(
        X, y, sample_weight=np.ones(80), checkpoint=path
    )
    np.testing.assert_array_equal(again.decision_function(X), plain.decision_function(X))
