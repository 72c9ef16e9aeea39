"""The averaged output with a horizon (``horizon=H``): the hypothesis after trial t
weighs ``(1 - 1 / H)^(T - t)`` in the average over T trials.

Three layers: every engine (linear, PUMMA, kernel, kernel PUMMA, a budget) against
tests/reference.py, which weighs each hypothesis trial by trial from the definition;
the same model however the stream is cut, saved or resumed; and what a horizon is for
(the plain average at an infinite horizon, the last hypothesis at a horizon of one
trial, a concept left behind forgotten)."""

import io
import pickle
import warnings

import numpy as np
import pytest
from conftest import make_blobs_pm, rel_err
from reference import (
    alma_fit,
    alma_scores,
    budgeted_kernel_fit,
    kernel_alma_fit,
    kernel_family_binary,
    kernel_family_scores,
    kernel_matrix,
    kernel_pumma_binary,
    kernel_pumma_scores,
    linear_fit,
    linear_scores,
    ovr_targets,
    perceptron_binary,
    pumma_binary,
    pumma_scores,
    romma_binary,
    tie_free,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

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
from marginkit._core import linear as L
from marginkit._core.budget import default_step
from marginkit._registry import UntrustedFileError

#: 1.5: the trial weights grow by 3 a trial, past the rescaling limit every 127 trials,
#: so that each fit below rescales its sums many times; 20: a few hundred trials, none
HORIZONS = [1.5, 20.0]


def flipped(n, d=4, n_classes=2, seed=0):
    """Blobs whose labels turn half-way (each class becomes the next): a stream that
    changes, on which the weights of a horizon matter."""
    X, y = make_blobs_pm(n=n, d=d, n_classes=n_classes, seed=seed)
    classes = np.unique(y)
    half = n // 2
    y = y.copy()
    y[half:] = classes[(np.searchsorted(classes, y[half:]) + 1) % classes.size]
    return X, y


def fitted(cls, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cls(shuffle=False, tol=None, **params).fit(X, y)


# -- against the reference ---------------------------------------------------------------
@pytest.mark.exactness
@pytest.mark.parametrize("horizon", HORIZONS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("p", [2.0, 3.0])
def test_alma_equals_reference(p, n_classes, horizon):
    X, y = flipped(120, n_classes=n_classes, seed=n_classes)
    with tie_free():
        runs, _ = alma_fit(X, y, p, 0.8, 1 / 0.8, np.sqrt(2), max_iter=3)
    want = alma_scores(runs, X, p, "avg", horizon=horizon)
    clf = fitted(
        ALMAClassifier, X, y, p=p, alpha=0.8, max_iter=3, fit_intercept=False, horizon=horizon
    )
    assert rel_err(clf.decision_function(X), want) < 1e-9


LINEAR = {
    "perceptron": (PerceptronClassifier, {}, perceptron_binary, {}),
    "aggressive-romma": (
        ROMMAClassifier,
        {"aggressive": True, "delta": 0.2, "lam": 0.0},
        romma_binary,
        {"aggressive": True, "delta": 0.2},
    ),
    "romma-soft": (
        ROMMAClassifier,
        {"aggressive": False, "lam": 0.5},
        romma_binary,
        {"aggressive": False, "lam": 0.5},
    ),
}


@pytest.mark.exactness
@pytest.mark.parametrize("horizon", HORIZONS)
@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_family_equals_reference(name, horizon):
    cls, params, binary, ref = LINEAR[name]
    X, y = flipped(120, n_classes=3, seed=4)
    with tie_free():
        runs, _ = linear_fit(binary, X, y, max_iter=3, **ref)
    want = linear_scores(runs, X, "avg", horizon=horizon)
    clf = fitted(cls, X, y, max_iter=3, fit_intercept=False, horizon=horizon, **params)
    assert rel_err(clf.decision_function(X), want) < 1e-9


@pytest.mark.exactness
@pytest.mark.parametrize("horizon", HORIZONS)
@pytest.mark.parametrize("kernel", [False, True])
def test_pumma_equals_reference(kernel, horizon):
    """PUMMA's averaged hyperplane, its bias included, and kernel PUMMA's."""
    X, y = flipped(80, n_classes=2, seed=6)
    X = X + 3.0
    y_pm = ovr_targets(y, np.unique(y))[0]
    if kernel:
        K = kernel_matrix("linear", X, X)
        with tie_free(rtol=1e-7):
            run = kernel_pumma_binary(K, y_pm, 0.2, lam=1.0, max_iter=3, min_epochs=3)
        want = kernel_pumma_scores([run], K, "avg", horizon=horizon)
        cls, extra = KernelPUMMAClassifier, {"kernel": "linear", "block_size": 7}
    else:
        with tie_free(rtol=1e-7):
            run = pumma_binary(X, y_pm, 3.0, 0.2, lam=1.0, max_iter=3, min_epochs=3)
        want = pumma_scores([run], X, "avg", horizon=horizon)
        cls, extra = PUMMAClassifier, {"p": 3.0}
    assert run[2] == 3  # the three epochs, no quiet one before
    clf = fitted(cls, X, y, delta=0.2, lam=1.0, max_iter=3, horizon=horizon, **extra)
    assert clf.n_epochs_ == 3
    assert rel_err(clf.decision_function(X), want) < 1e-7


@pytest.mark.exactness
@pytest.mark.parametrize("horizon", HORIZONS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_alma_equals_reference(n_classes, horizon):
    X, y = flipped(90, n_classes=n_classes, seed=10 + n_classes)
    X_test, _ = make_blobs_pm(n=25, d=4, n_classes=n_classes, seed=99)
    with tie_free():
        _, scores = kernel_alma_fit(X, y, "rbf", 0.8, 1 / 0.8, np.sqrt(2), max_iter=3, gamma=0.3)
        want = scores(X_test, "avg", horizon)
    for block_size in [1, 7, 256]:
        clf = fitted(
            KernelALMAClassifier,
            X,
            y,
            kernel="rbf",
            gamma=0.3,
            alpha=0.8,
            max_iter=3,
            fit_intercept=False,
            block_size=block_size,
            horizon=horizon,
        )
        assert rel_err(clf.decision_function(X_test), want) < 1e-9, block_size


KERNEL_FAMILY = {
    "perceptron": (KernelPerceptronClassifier, {}),
    "romma-soft": (KernelROMMAClassifier, {"aggressive": False, "lam": 0.4}),
    "aggressive": (KernelROMMAClassifier, {"aggressive": True, "delta": 0.3, "lam": 0.0}),
}


@pytest.mark.exactness
@pytest.mark.parametrize("horizon", HORIZONS)
@pytest.mark.parametrize("rule", sorted(KERNEL_FAMILY))
def test_kernel_family_equals_reference(rule, horizon):
    cls, params = KERNEL_FAMILY[rule]
    X, y = flipped(60, n_classes=3, seed=3)
    X_test, _ = make_blobs_pm(n=20, d=4, n_classes=3, seed=99)
    K = kernel_matrix("poly", X, X, gamma=0.2)
    K_test = kernel_matrix("poly", X_test, X, gamma=0.2)
    ref = {"delta": params.get("delta", 0.0), "lam": params.get("lam", 0.0)}
    with tie_free():
        runs = [
            kernel_family_binary(K, t, rule.split("-")[0], max_iter=2, **ref)
            for t in ovr_targets(y, np.unique(y))
        ]
    want = kernel_family_scores(runs, K_test, "avg", horizon=horizon)
    for block_size in [1, 7, 256]:
        clf = fitted(
            cls,
            X,
            y,
            kernel="poly",
            gamma=0.2,
            max_iter=2,
            fit_intercept=False,
            block_size=block_size,
            horizon=horizon,
            **params,
        )
        assert rel_err(clf.decision_function(X_test), want) < 1e-9, block_size


@pytest.mark.exactness
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("rule", ["project", "project_new", "project_old", "merge"])
def test_budget_equals_reference(rule):
    """Through many maintenance steps of every rule, the merge's decay of the sums
    included, the horizon's average is the reference's."""
    X, y = flipped(160, n_classes=2, seed=1)
    budget, horizon = 20, 30.0
    est = fitted(
        KernelALMAClassifier,
        X,
        y,
        kernel="rbf",
        gamma=0.3,
        max_iter=2,
        budget=budget,
        budget_rule=rule,
        block_size=16,
        fit_intercept=False,
        horizon=horizon,
    )
    with tie_free(1e-6):
        scores, (_, _, _, trials, corrections) = budgeted_kernel_fit(
            X,
            y,
            "alma",
            budget,
            rule,
            default_step(budget),
            max_iter=2,
            gamma=0.3,
            horizon=horizon,
        )
    assert est.n_trials_ == trials
    np.testing.assert_array_equal(est.n_corrections_per_class_, corrections)
    assert corrections.sum() > 3 * budget
    rtol = 1e-5 if rule == "merge" else 1e-9
    np.testing.assert_allclose(
        est.decision_function(X), scores(X, "avg"), rtol=max(rtol, 1e-6), atol=100 * rtol
    )


# -- one model however the stream is cut, saved or resumed -------------------------------
MODELS = {
    "alma": (ALMAClassifier, {"p": 3.0}),
    "margin-perceptron": (MarginPerceptronClassifier, {}),
    "pumma": (PUMMAClassifier, {"lam": 1.0}),
    "kernel-alma": (KernelALMAClassifier, {"kernel": "rbf", "gamma": 0.3, "block_size": 16}),
    "kernel-pumma": (KernelPUMMAClassifier, {"kernel": "rbf", "gamma": 0.3, "block_size": 16}),
    "budget": (
        KernelALMAClassifier,
        {"kernel": "rbf", "gamma": 0.3, "budget": 30, "budget_rule": "project_old"},
    ),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_chunks_pickles_and_files_give_the_same_model(name, tmp_path):
    """Through many rescalings (horizon 1.5): a stream learnt in one go, and the same
    stream pickled or saved half-way and resumed, give the same averaged output bit for
    bit, and fit's one pass gives it too (to rounding: the kernel's blocks are cut
    where the chunks end)."""
    cls, params = MODELS[name]
    X, y = flipped(400, n_classes=3, seed=2)
    X = X + 3.0 if "pumma" in name else X
    classes = np.unique(y)
    params = {"horizon": 1.5, "shuffle": False, "tol": None, **params}
    if "fit_intercept" in cls().get_params():
        # no bias: partial_fit would take its radius from the first chunk, fit from all
        params["fit_intercept"] = False
    straight, parts = cls(**params), cls(**params)
    for est in (straight, parts):
        for lo in range(0, 200, 50):
            est.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=classes)
    resumed = pickle.loads(pickle.dumps(parts))
    path = tmp_path / "half.skops"
    marginkit.save(parts, path)
    loaded = marginkit.load(path)
    for est in (straight, resumed, loaded):
        for lo in range(200, 400, 70):
            est.partial_fit(X[lo : lo + 70], y[lo : lo + 70])
    want = straight.decision_function(X)
    for est in (resumed, loaded):
        np.testing.assert_array_equal(est.decision_function(X), want)
    if name != "margin-perceptron":  # (its fit halves a guess from all the data's radius)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            whole = cls(max_iter=1, **params).fit(X, y)
        np.testing.assert_allclose(whole.decision_function(X), want, rtol=1e-10, atol=1e-12)


# -- what a horizon is for ---------------------------------------------------------------
@pytest.mark.parametrize(
    "cls,params",
    [(ALMAClassifier, {}), (KernelALMAClassifier, {"kernel": "rbf", "gamma": 0.3})],
    ids=["linear", "kernel"],
)
def test_a_horizon_beyond_the_stream_is_the_plain_average(cls, params):
    X, y = flipped(300, seed=5)
    plain = fitted(cls, X, y, max_iter=2, **params)
    far = fitted(cls, X, y, max_iter=2, horizon=1e13, **params)
    assert rel_err(far.decision_function(X), plain.decision_function(X)) < 1e-9


@pytest.mark.parametrize(
    "cls,params",
    [(ALMAClassifier, {}), (KernelALMAClassifier, {"kernel": "rbf", "gamma": 0.3})],
    ids=["linear", "kernel"],
)
def test_a_horizon_of_one_trial_is_the_last_hypothesis(cls, params):
    X, y = flipped(300, seed=5)
    last = fitted(cls, X, y, max_iter=2, output="last", **params)
    near = fitted(cls, X, y, max_iter=2, horizon=1.0 + 1e-12, **params)
    assert rel_err(near.decision_function(X), last.decision_function(X)) < 1e-9


@pytest.mark.parametrize(
    "cls,params",
    [(ALMAClassifier, {}), (KernelALMAClassifier, {"kernel": "rbf", "gamma": 0.3})],
    ids=["linear", "kernel"],
)
def test_a_horizon_forgets_the_concept_the_stream_left(cls, params):
    """After the labels turn, the plain average still holds the first concept and
    scores near chance on the second; an average over the last 300 trials scores as
    the last hypothesis does, or better."""
    X, y = make_blobs_pm(n=8000, d=4, n_classes=2, seed=7)
    turned = np.where(y == y.max(), y.min(), y.max())
    X, y, X_test, y_test = X[:6000], np.r_[y[:3000], turned[3000:6000]], X[6000:], turned[6000:]
    scores = {}
    for label, extra in [
        ("plain", {}),
        ("last", {"output": "last"}),
        ("horizon", {"horizon": 300}),
    ]:
        clf = fitted(cls, X, y, max_iter=1, **params, **extra)
        scores[label] = clf.score(X_test, y_test)
    assert scores["plain"] < 0.75
    assert scores["horizon"] >= scores["last"] - 0.01
    assert scores["horizon"] > 0.9


# -- the parameter -----------------------------------------------------------------------
@pytest.mark.parametrize("cls", [ALMAClassifier, KernelPerceptronClassifier, PUMMAClassifier])
@pytest.mark.parametrize("horizon", [1, 0.5, -3.0, "10"])
def test_a_horizon_must_be_above_one(cls, horizon):
    X, y = make_blobs_pm(n=20, d=3, n_classes=2, seed=0)
    with pytest.raises(InvalidParameterError, match="'horizon' parameter"):
        cls(horizon=horizon).fit(X, y)


def test_set_after_a_fit_it_takes_effect_at_the_next():
    X, y = flipped(200, seed=1)
    classes = np.unique(y)
    for cls in (ALMAClassifier, KernelALMAClassifier):
        clf = cls(horizon=10.0).partial_fit(X[:100], y[:100], classes=classes)
        before = clf.decision_function(X)
        clf.set_params(horizon=50.0)
        np.testing.assert_array_equal(clf.decision_function(X), before)
        with pytest.raises(ValueError, match=r"fit with horizon=10\.0, and its parameters now"):
            clf.partial_fit(X[100:], y[100:])
        refit = clf.fit(X, y)
        assert refit.decision_function(X).shape == (200,)


def test_a_loaded_horizon_must_fit_its_weights(tmp_path):
    """A file whose averaging weights do not follow from its horizon is refused."""
    X, y = flipped(100, seed=1)
    for clf, spoil in [
        (
            ALMAClassifier(horizon=10.0).fit(X, y),
            lambda c: c._states[0].fs.__setitem__(L.F_STEP, 2.0),
        ),
        (
            KernelALMAClassifier(horizon=10.0).fit(X, y),
            lambda c: c._kstate.decay.__setitem__(1, 2.0),
        ),
    ]:
        spoil(clf)
        path = tmp_path / "spoiled.skops"
        marginkit.save(clf, path)
        with pytest.raises(UntrustedFileError, match="horizon"):
            marginkit.load(path)


def test_a_state_saved_before_horizons_loads_without_one():
    """A linear state pickled before the horizon (eight scalar states) reads as one
    whose every trial weighs 1: the same average."""
    X, y = flipped(100, seed=1)
    clf = ALMAClassifier().fit(X, y)
    want = clf.decision_function(X)
    for state in clf._states:
        state.fs = state.fs[: L.F_GROWTH].copy()
    buffer = io.BytesIO()
    pickle.dump(clf, buffer)
    old = pickle.loads(buffer.getvalue())
    assert old._states[0].horizon is None
    np.testing.assert_array_equal(old.decision_function(X), want)
    assert old._states[0].fs[L.F_MASS] == old.n_trials_


# -- project_new renews its kept vectors under a horizon ---------------------------------
def moved_blobs(n, seed):
    """Two concepts in two places: the second half of the rows far from the first."""
    X, y = make_blobs_pm(n=n, d=4, n_classes=2, seed=seed)
    X = X.copy()
    X[n // 2 :] += 8.0
    return X, y


@pytest.mark.exactness
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_project_new_renews_as_the_reference_does():
    """With a horizon, a step whose projection would lose most of what the newest
    vectors carry renews the kept vectors (the oldest projected onto the rest); the
    engine renews where the reference does, to its coefficients."""
    X, y = moved_blobs(300, seed=4)
    budget, horizon = 20, 50.0
    est = fitted(
        KernelALMAClassifier,
        X,
        y,
        kernel="rbf",
        gamma=0.3,
        max_iter=1,
        budget=budget,
        budget_rule="project_new",
        block_size=16,
        fit_intercept=False,
        horizon=horizon,
    )
    with tie_free(1e-6):
        scores, (rows, *_) = budgeted_kernel_fit(
            X, y, "alma", budget, "project_new", default_step(budget), gamma=0.3, horizon=horizon
        )
    np.testing.assert_allclose(est.support_vectors_, np.array(rows), rtol=1e-9, atol=1e-9)
    for output in ["last", "avg"]:
        est.set_params(output=output)
        np.testing.assert_allclose(est.decision_function(X), scores(X, output), rtol=1e-6)
    # the store renewed: it holds mostly vectors of the second concept (16 of 19 here)
    assert np.mean(est.support_ >= 150) > 0.8


def test_project_new_without_a_horizon_keeps_its_first_vectors():
    X, y = moved_blobs(300, seed=4)
    est = KernelALMAClassifier(
        kernel="rbf", gamma=0.3, budget=20, shuffle=False, fit_intercept=False
    ).fit(X, y)
    assert est.support_.min() < 150  # the first concept's vectors kept
