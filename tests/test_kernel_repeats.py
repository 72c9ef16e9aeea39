"""An example corrected in several passes is one stored vector: its corrections are
entries (coefficients) on one row of the store (marginkit._core.kernel.rows.RowStore), so
that memory and prediction grow with the distinct support vectors, not with the
corrections, for the last, averaged and voted outputs alike."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

import marginkit
from marginkit import KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier

#: the paper's algorithms (no bias), which the reference makes
PAPER = {"shuffle": False, "fit_intercept": False}
ESTIMATORS = {
    "alma": lambda **kw: KernelALMAClassifier(alpha=0.9, **{**PAPER, **kw}),
    "perceptron": lambda **kw: KernelPerceptronClassifier(**{**PAPER, **kw}),
    "romma": lambda **kw: KernelROMMAClassifier(**{**PAPER, **kw}),  # forgets: resets
    "aggressive": lambda **kw: KernelROMMAClassifier(
        aggressive=True, delta=0.5, **{**PAPER, **kw}
    ),
}
GAMMA = 0.3


def noisy(n=240, n_classes=3, seed=2):
    return make_classification(
        n_samples=n,
        n_features=5,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        flip_y=0.15,
        random_state=seed,
    )


def fitted(name, X, y, **kw):
    params = {"kernel": "rbf", "gamma": GAMMA, "max_iter": 4, "tol": None, "block_size": 16}
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ESTIMATORS[name](**params).fit(X, y)


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_an_example_corrected_in_several_passes_is_one_row(name, sparse):
    X, y = noisy()
    X = sp.csr_matrix(X) if sparse else X
    clf = fitted(name, X, y)
    state = clf._kstate
    store = state.store
    support = clf.support_
    # more corrections than rows: some example was corrected in several passes
    assert state.m > store.n_rows
    assert support.size == np.unique(support).size == store.n_rows
    np.testing.assert_array_equal(_dense(clf.support_vectors_), _dense(X)[support])
    for output in ("last", "avg"):
        clf.set_params(output=output)
        # one coefficient per row, on the kernel of the rows (rbf: K(x, x) = 1, so the
        # normalised kernel is the kernel)
        K = rbf_kernel(_dense(X), _dense(clf.support_vectors_), gamma=GAMMA)
        want = K @ clf.dual_coef_.T
        got = clf.decision_function(X)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("output", ["last", "avg", "voted"])
def test_prediction_computes_one_kernel_row_per_distinct_vector(name, output):
    """A callable kernel sees the rows of the store once per prediction, however many
    times each was corrected (the vote replays the corrections on those columns)."""
    X, y = noisy()
    seen = []

    def kernel(A, B):
        if B is not A:  # not the diagonal K(x, x) of the points
            seen.append(B.shape[0])
        return rbf_kernel(A, B, gamma=GAMMA)

    clf = fitted(name, X, y, kernel=kernel, output=output)
    reference = fitted(name, X, y, output=output)
    seen.clear()
    got = clf.decision_function(X)
    rows = clf._kstate.store.n_rows
    assert seen and set(seen) == {rows}
    assert clf._kstate.m > rows
    np.testing.assert_allclose(got, reference.decision_function(X), rtol=1e-9, atol=1e-12)


def test_the_vote_replays_the_corrections_in_their_order():
    """The vote of the rows' model equals the vote over one column per correction
    (every entry's kernel column gathered from its row)."""
    X, y = noisy(n=200, n_classes=2, seed=5)
    clf = fitted("perceptron", X, y, output="voted")
    state = clf._kstate
    m = state.m
    rows = state.store.entry_rows()
    assert rows is not None and np.unique(rows).size < m
    K = rbf_kernel(X, _dense(clf.support_vectors_), gamma=GAMMA)[:, rows]
    prefix = np.cumsum(K * state.A[:m, 0][None, :], axis=1)
    want = np.sign(prefix) @ state.hcount[1 : m + 1, 0] / state.n_trials
    np.testing.assert_allclose(clf.decision_function(X), want, rtol=1e-12, atol=1e-12)


def test_the_model_saved_and_loaded_keeps_its_rows(tmp_path):
    X, y = noisy()
    clf = fitted("alma", X, y)
    path = tmp_path / "m.skops"
    marginkit.save(clf, path)
    back = marginkit.load(path)
    assert back._kstate.store.entry_rows() is not None
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(back.support_, clf.support_)
    # partial_fit sees new examples (positions after those fitted): the same calls on
    # the model and on the one loaded make the same model
    for est in (clf, back):
        est.partial_fit(X[:60], y[:60])
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(back.support_, clf.support_)
    assert clf.support_.max() >= X.shape[0]


def test_the_stores_memory_follows_the_distinct_vectors():
    """Over many passes of noisy data the rows held stay the distinct examples
    corrected, while the corrections (entries, a few numbers each) grow."""
    X, y = noisy(n=300, n_classes=2, seed=7)
    clf = fitted("perceptron", X, y, max_iter=10)
    state = clf._kstate
    assert state.m > 2 * state.store.n_rows
    assert state.store.n_rows <= X.shape[0]
    assert state.store.rows.shape[0] < state.m  # the room held is for rows, not entries


def test_a_budget_counts_corrections_and_keeps_one_row_per_example():
    """With a budget, the store's entries (rows, and later corrections of them) stay
    under it; a maintenance step first sums each example's entries."""
    X, y = noisy(n=300, n_classes=3, seed=3)
    clf = fitted("alma", X, y, budget=60, max_iter=3)
    state = clf._kstate
    assert state.m <= 60
    assert state.store.n_rows <= state.m
    assert clf.support_.size == np.unique(clf.support_[clf.support_ >= 0]).size


def test_rows_are_kept_only_once_every_entry_is_its_own_row():
    """A maintenance step keeps rows of a store whose entries it has summed first
    (KernelState.collapse); a store whose examples came back refuses to keep rows."""
    X, y = noisy(n=150, n_classes=2, seed=1)
    state = fitted("perceptron", X, y)._kstate
    assert state.store.entry_rows() is not None
    with pytest.raises(RuntimeError, match="collapse the store's entries"):
        state.store.keep(np.arange(3))
    rows = state.store.n_rows
    state.collapse()
    assert state.m == rows and state.store.entry_rows() is None
    state.store.keep(np.arange(3))
    assert state.store.n_rows == 3
