"""The compiled linear and PUMMA passes: their bundled arguments, and PUMMA's scratch,
which a model never holds (files of marginkit 0.1 that hold it still load)."""

import inspect
import io
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import marginkit
from marginkit import PUMMAClassifier
from marginkit._core import linear as L
from marginkit._core import pumma as K
from marginkit.pumma import _Work

DATA = Path(__file__).parent / "data"


def legacy_data():
    """The data the file of marginkit 0.1 was fitted on (PUMMA p=3, lam=0.5)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 5))
    return X, (X[:, 0] - X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("fn", [L.linear_pass, K.pumma_pass])
def test_compiled_passes_take_bundles(fn):
    params = inspect.signature(fn.py_func).parameters
    assert len(params) <= 9
    assert "is_sparse" not in params and "newton_at_2" not in params
    # every argument is documented
    for name in params:
        assert f"{name} : " in fn.__doc__, name


def test_every_compiled_entry_point_takes_bundles():
    """What Python calls of the compiled engines: rows, rules, states and scratch as
    bundles, at most 9 arguments, no format or test switch."""
    from marginkit._core import pairs, votes
    from marginkit._core.kernel import walk

    entry = [
        L.linear_pass,
        K.pumma_pass,
        votes.replay_columns,
        votes.cast_votes,
        votes.vote_rows,
        walk.kernel_walk,
        pairs.pumma_walk,
    ]
    for fn in entry:
        params = inspect.signature(fn.py_func).parameters
        assert len(params) <= 9, fn.__name__
        assert not {"is_sparse", "newton_at_2"} & set(params), fn.__name__


def test_model_of_0_1_with_scratch_loads_and_predicts_the_same():
    X, _ = legacy_data()
    expected = np.load(DATA / "pumma_with_work_0.1.npz")
    clf = marginkit.load(DATA / "pumma_with_work_0.1.skops")
    assert "_work" not in vars(clf)
    for output in ["last", "avg", "voted"]:
        clf.set_params(output=output)
        got = clf.decision_function(X)
        if output == "voted":  # votes are counts, each sign decided exactly
            np.testing.assert_array_equal(got, expected[output])
        else:  # to the rounding of another CPU's BLAS kernel
            np.testing.assert_allclose(got, expected[output], rtol=1e-9, atol=1e-15)


def test_model_of_0_1_with_scratch_trains_on(tmp_path):
    """A loaded 0.1 model goes on learning as one fitted now does (scratch made anew)."""
    X, y = legacy_data()
    old = marginkit.load(DATA / "pumma_with_work_0.1.skops")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the file's fit made 4 epochs, ended by tol's reading of the updates then
        fresh = PUMMAClassifier(
            shuffle=False, p=3.0, lam=0.5, keep_corrections=True, max_iter=4, tol=None
        ).fit(X, y)
    assert old.n_epochs_ == fresh.n_epochs_
    # (the file was trained on another BLAS kernel's rounding, perhaps)
    np.testing.assert_allclose(
        old.decision_function(X), fresh.decision_function(X), rtol=1e-9, atol=1e-15
    )
    old.partial_fit(X[::-1], y[::-1])
    fresh.partial_fit(X[::-1], y[::-1])
    np.testing.assert_allclose(
        old.decision_function(X), fresh.decision_function(X), rtol=1e-9, atol=1e-15
    )
    marginkit.save(old, tmp_path / "again.skops")
    assert "_work" not in vars(marginkit.load(tmp_path / "again.skops"))


def test_pickle_with_scratch_of_0_1_loads_without_it():
    X, y = legacy_data()
    clf = PUMMAClassifier(shuffle=False, p=3.0, lam=0.5, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    before = clf.decision_function(X)
    legacy = _Work()
    legacy.__dict__.update(K.new_work(clf.n_features_in_)._asdict())
    clf.__dict__["_work"] = legacy  # what a pickle of 0.1 holds
    again = pickle.loads(pickle.dumps(clf))
    assert "_work" not in vars(again)
    np.testing.assert_array_equal(again.decision_function(X), before)


@pytest.mark.parametrize("sparse", [False, True])
def test_saved_model_holds_no_scratch(tmp_path, sparse):
    X, y = legacy_data()
    X = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = PUMMAClassifier(shuffle=False, p=4.0, lam=0.5, max_iter=3).fit(X, y)
    assert not any(isinstance(v, (_Work, K.Work)) for v in vars(clf).values())
    assert b"_Work" not in pickle.dumps(clf)
    marginkit.save(clf, tmp_path / "m.skops")
    assert b"_Work" not in io.BytesIO((tmp_path / "m.skops").read_bytes()).getvalue()


def test_dense_and_csr_rows_read_alike():
    """The one row reader: a pass on dense rows and on the same rows as CSR (with
    explicit zeros dropped) makes the same corrections and weights."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 6))
    X[rng.random(X.shape) < 0.5] = 0.0
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    A = sp.csr_matrix(X)
    rows = [
        L.DenseRows(X, -1.5, np.full(30, -1.0)),
        L.CsrRows(
            A.indptr.astype(np.int64), A.indices.view(np.uint32), A.data, -1.5, np.full(30, -1.0)
        ),
    ]
    from marginkit._core.state import PNormState

    results = []
    for r in rows:
        state = PNormState(7, 4.0, keep_log=False)
        rule = L.Rule(L.RULE_ALMA, 0.5, 1.0, 1.0)
        order = np.arange(30, dtype=np.int64)
        L.linear_pass(r, y, order, 0, rule, L.Norm(4.0, 1e-50), state.weights(), state.log())
        results.append((state.n_corrections, state.v.copy(), r.xscale.copy()))
    assert results[0][0] == results[1][0] > 0
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][2], results[1][2])
