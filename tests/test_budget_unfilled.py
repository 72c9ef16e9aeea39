"""A support-vector budget that the store never fills costs nothing (marginkit._core.budget).

Until the store is first full only its rows (the distinct examples corrected) count
against the budget, so that a budget above the rows a run stores leaves it the exact
run: the same store, coefficients, decisions, kernel evaluations and passes, bit for
bit, though its entries (an example corrected in several passes is one row and several
entries) outgrow the budget. From the first maintenance step on the entries count, as
they always did: a store that fills makes the model it made before."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import slow_case
from sklearn.exceptions import ConvergenceWarning
from test_kernel_budget import noisy as kernel_budget_noisy

import marginkit
from marginkit import KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier
from marginkit._core.budget import RULES
from marginkit._core.kernel.state import KernelState

ESTIMATORS = {
    "alma": (KernelALMAClassifier, {"fit_intercept": False}),
    "perceptron": (KernelPerceptronClassifier, {"fit_intercept": False}),
    "romma": (KernelROMMAClassifier, {"aggressive": False, "lam": 0.0, "fit_intercept": False}),
    # the soft margin: each row's coordinate kept across the passes, as without a budget
    "romma-soft": (
        KernelROMMAClassifier,
        {"aggressive": False, "lam": 0.02, "fit_intercept": False},
    ),
    "aggressive": (
        KernelROMMAClassifier,
        {"aggressive": True, "delta": 0.5, "lam": 0.0, "fit_intercept": False},
    ),
}


def noisy(n=300, n_classes=3, seed=1, d=5):
    """test_kernel_budget's noisy classes, 300 rows by default."""
    return kernel_budget_noisy(n=n, n_classes=n_classes, seed=seed, d=d)


def fit(name, X, y, **kw):
    cls, params = ESTIMATORS[name]
    params = {"kernel": "rbf", "gamma": 0.3, "random_state": 0, **params, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cls(**params).fit(X, y)


def dense(X):
    return X.toarray() if sp.issparse(X) else X


def assert_same_model(got, exact, X):
    """The same store and counts, and every output the budget offers, bit for bit."""
    assert got._kstate.store.n_rows == exact._kstate.store.n_rows
    assert got._kstate.m == exact._kstate.m
    np.testing.assert_array_equal(got.support_, exact.support_)
    np.testing.assert_array_equal(dense(got.support_vectors_), dense(exact.support_vectors_))
    np.testing.assert_array_equal(got.n_support_, exact.n_support_)
    np.testing.assert_array_equal(got.n_corrections_per_class_, exact.n_corrections_per_class_)
    assert got.n_trials_ == exact.n_trials_
    assert got.n_kernel_evaluations_ == exact.n_kernel_evaluations_
    for output in ["last", "avg"]:
        for est in (got, exact):
            est.set_params(output=output)
        np.testing.assert_array_equal(got.dual_coef_, exact.dual_coef_)
        np.testing.assert_array_equal(got.decision_function(X), exact.decision_function(X))
        np.testing.assert_array_equal(got.predict(X), exact.predict(X))
    assert not got._kstate.filled


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_budget_above_the_rows_stored_is_the_exact_fit(name, rule, n_classes):
    """A budget just above the rows the exact fit stores, well below its entries: the
    exact fit, passes, kernel evaluations and all (the entries counted, maintenance
    steps summed them, dropped the sums kept across passes and projected rows away)."""
    X, y = noisy(n_classes=n_classes)
    kw = {"max_iter": 5, "tol": None, "block_size": 32}
    exact = fit(name, X, y, **kw)
    rows, entries = exact._kstate.store.n_rows, exact._kstate.m
    budget = rows + 1
    assert entries > budget + 20  # the entries would have filled it
    got = fit(name, X, y, budget=budget, budget_rule=rule, **kw)
    assert got.n_iter_ == exact.n_iter_
    assert_same_model(got, exact, X)


@pytest.mark.parametrize("rule", RULES)
def test_the_default_passes_and_sparse_rows(rule):
    """At the defaults (shuffled passes, ``tol`` ending them) and on sparse rows alike."""
    X, y = noisy(n=400, n_classes=3, seed=4)
    exact = fit("alma", X, y)
    budget = exact._kstate.store.n_rows + 2
    assert exact._kstate.m > budget
    assert_same_model(fit("alma", X, y, budget=budget, budget_rule=rule), exact, X)
    S = sp.csr_matrix(X)
    exact = fit("perceptron", S, y, max_iter=4, tol=None)
    budget = exact._kstate.store.n_rows + 1
    assert exact._kstate.m > budget
    got = fit("perceptron", S, y, max_iter=4, tol=None, budget=budget, budget_rule=rule)
    assert_same_model(got, exact, S)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["alma", "romma"])
def test_partial_fit_under_a_budget_it_never_fills(name, rule):
    """A fit whose entries outgrow the budget, then partial_fit calls on new rows: the
    exact model after every call, three classes."""
    X, y = noisy(n=600, n_classes=3, seed=2)
    kw = {"max_iter": 4, "tol": None, "block_size": 32}
    exact = fit(name, X[:200], y[:200], **kw)
    # the rows the whole stream stores without a budget
    probe = fit(name, X[:200], y[:200], **kw)
    for lo in range(200, 600, 100):
        probe.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
    budget = probe._kstate.store.n_rows + 1
    assert exact._kstate.m > exact._kstate.store.n_rows  # entries repeat rows
    got = fit(name, X[:200], y[:200], budget=budget, budget_rule=rule, **kw)
    assert_same_model(got, exact, X)
    for lo in range(200, 600, 100):
        for est in (exact, got):
            est.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
        assert_same_model(got, exact, X)


@pytest.mark.parametrize("fmt", ["skops", "pickle"])
def test_an_unfilled_store_with_more_entries_than_its_budget_saves_and_loads(tmp_path, fmt):
    """A model whose entries outgrow its budget, its rows under it, passes the checks of
    a loaded model and trains on as the model not saved, within its budget once full."""
    X, y = noisy(n=500, n_classes=2, seed=3)
    kw = {"max_iter": 4, "tol": None}
    rows = fit("alma", X[:200], y[:200], **kw)._kstate.store.n_rows
    est = fit("alma", X[:200], y[:200], budget=rows + 1, **kw)
    assert est._kstate.m > rows + 1 and not est._kstate.filled
    path = tmp_path / f"model.{fmt}"
    marginkit.save(est, path)
    back = marginkit.load(path)
    assert not back._kstate.filled
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    for lo in range(200, 500, 100):
        for model in (est, back):
            model.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
        np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    assert est._kstate.filled  # the stream filled it
    assert est._kstate.store.n_rows <= rows + 1 and est._kstate.m <= rows + 1


def _entries_from_the_start(monkeypatch):
    """The rule before this one: the entries counted against the budget from the start
    (a state that has been full)."""
    init = KernelState.__init__

    def init_filled(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.filled = True

    monkeypatch.setattr(KernelState, "__init__", init_filled)


def _filling_cases():
    """Every estimator and rule; the merge (a few seconds each) in ``make test-all``
    (``make test`` fills a merging store in the tests below)."""
    for name in sorted(ESTIMATORS):
        for rule in RULES:
            yield slow_case(name, rule, slow=rule == "merge")


@pytest.mark.parametrize("name,rule", list(_filling_cases()))
def test_a_store_that_fills_makes_the_model_it_made_before(name, rule, monkeypatch):
    """A store that fills in the first pass (no example has come back yet, so its rows
    are its entries) and makes many steps over the passes after, where entries count:
    bit for bit the model of the rule that counted entries from the start, in a fit of
    several passes and over partial_fit calls."""
    X, y = noisy(n=300, n_classes=3, seed=5)
    kw = {"max_iter": 2, "tol": None, "block_size": 16, "budget": 60, "budget_rule": rule}

    def run():
        est = fit(name, X, y, **kw)
        stream = fit(name, X[:100], y[:100], **{**kw, "max_iter": 1})
        for lo in range(100, 300, 100):
            stream.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
        return est, stream

    now = run()
    _entries_from_the_start(monkeypatch)
    before = run()
    for got, made in zip(now, before, strict=True):
        assert got._kstate.filled and got.n_corrections_ > 3 * 60
        assert got.support_vectors_.shape[0] <= 60
        np.testing.assert_array_equal(got.support_vectors_, made.support_vectors_)
        assert got.n_kernel_evaluations_ == made.n_kernel_evaluations_
        for output in ["last", "avg"]:
            for est in (got, made):
                est.set_params(output=output)
            np.testing.assert_array_equal(got.dual_coef_, made.dual_coef_)
            np.testing.assert_array_equal(got.decision_function(X), made.decision_function(X))


def test_entries_counted_from_the_start_made_steps_the_rows_did_not_need(monkeypatch):
    """What the rule before did with a budget above the rows stored: steps that summed
    entries, dropped the sums kept across passes and projected rows away."""
    X, y = noisy()
    kw = {"max_iter": 5, "tol": None, "block_size": 32}
    exact = fit("alma", X, y, **kw)
    rows = exact._kstate.store.n_rows
    budget = rows + 1
    _entries_from_the_start(monkeypatch)
    before = fit("alma", X, y, budget=budget, **kw)
    assert before.n_kernel_evaluations_ > exact.n_kernel_evaluations_
    assert before.support_vectors_.shape[0] < rows  # vectors projected away
    assert not np.array_equal(before.decision_function(X), exact.decision_function(X))


@pytest.mark.parametrize("rule", RULES)
def test_a_store_first_full_in_a_later_pass_keeps_its_budget(rule):
    """The rows reach the budget in a later pass, after entries outgrew it: the store is
    full then, and from that step on its entries stay under the budget."""
    X, y = noisy(n=400, n_classes=3, seed=6)
    kw = {"max_iter": 6, "tol": None, "block_size": 32}
    exact = fit("alma", X, y, **kw)
    first = fit("alma", X, y, **{**kw, "max_iter": 1})._kstate.store.n_rows
    budget = (first + exact._kstate.store.n_rows) // 2
    assert first < budget < exact._kstate.store.n_rows
    got = fit("alma", X, y, budget=budget, budget_rule=rule, **kw)
    state = got._kstate
    assert state.filled
    assert state.store.n_rows <= state.m <= budget
    assert got.support_vectors_.shape[0] <= budget
    # (the removals drop what their vectors carried: 0.59 for three classes here)
    assert got.score(X, y) > (0.5 if rule.startswith("remove") else 0.7)
