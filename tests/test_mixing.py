"""Iterative parameter mixing on dask (marginkit.distributed.MixingClassifier): the one-
chunk identity with the serial fit, determinism over workers and failures, the mix's
arithmetic, McDonald, Hall and Mann's mistake bound, and every refusal."""

import contextlib
import os
import signal
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, slow_case
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)

distributed = pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")
dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from marginkit.distributed import MixingClassifier  # noqa: E402

STATE_ARRAYS = ("v", "g", "acc", "u", "fs", "ist")


@contextlib.contextmanager
def local_cluster(n_workers, current=True):
    """A client of a LocalCluster of ``n_workers`` processes (one thread each), current
    within the block; ``current=False``: neither the default client nor current."""
    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster, timeout="60s", set_as_default=current) as client,
        client.as_current() if current else contextlib.nullcontext(),
        dask.config.set(scheduler="dask.distributed") if current else contextlib.nullcontext(),
    ):
        client.wait_for_workers(n_workers, timeout=60)  # every one registered
        yield client


def same_bits(a, b):
    """Whether two fitted linear estimators hold the same learned numbers, bit for bit."""
    if len(a._states) != len(b._states):
        return False
    for sa, sb in zip(a._states, b._states, strict=True):
        for name in STATE_ARRAYS:
            x, y = getattr(sa, name), getattr(sb, name)
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
    return a.n_iter_ == b.n_iter_ and a.R_ == b.R_ and a.p_ == b.p_


def chunked(X, rows):
    """X as a dask array of row chunks of ``rows`` (CSR chunks for a sparse X)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return da.from_array(X, chunks=(rows, X.shape[1]), asarray=False)
    return da.from_array(X, chunks=(rows, X.shape[1]))


def separable_with_margin(n=600, d=8, gamma=0.4, seed=0):
    """Rows x with |u . x| >= gamma for a unit u (labels sign(u . x)): separable through
    the origin with margin at least gamma; returns X, y, gamma, R."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(4 * n, d))
    keep = np.abs(X @ u) >= gamma
    X = X[keep][:n]
    y = np.where(X @ u > 0, 1, -1)
    margin = float(np.min(np.abs(X @ u)))
    R = float(np.max(np.linalg.norm(X, axis=1)))
    return X, y, margin, R


ONE_CHUNK = [
    ("alma2", lambda: ALMAClassifier(shuffle=False, alpha=0.9), False, 3),
    ("alma-log-sparse", lambda: ALMAClassifier(shuffle=False, p="log", alpha=0.8), True, 2),
    (
        "alma3",
        lambda: ALMAClassifier(shuffle=False, p=3.0, output="last", fit_intercept=False),
        False,
        2,
    ),
    ("perceptron-sparse", lambda: PerceptronClassifier(shuffle=False), True, 3),
]


@pytest.mark.parametrize("name, make, sparse, n_classes", ONE_CHUNK, ids=[c[0] for c in ONE_CHUNK])
def test_one_chunk_equals_the_serial_fit(threads, name, make, sparse, n_classes):
    X, y = make_blobs_pm(n=300, d=10, n_classes=n_classes, seed=4, sparse_density=0.6)
    if not sparse:
        X = X.toarray()
    for max_iter, tol in [(4, None), (50, 1e-3)]:
        serial = make().set_params(max_iter=max_iter, tol=tol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            serial.fit(X, y)
            mixed = MixingClassifier(make(), max_iter=max_iter, tol=tol).fit(chunked(X, 300), y)
        assert mixed.n_shards_ == 1
        assert same_bits(mixed.estimator_, serial), (name, max_iter, tol)
        assert mixed.n_corrections_ == serial.n_corrections_
        np.testing.assert_array_equal(mixed.predict(X), serial.predict(X))


@pytest.mark.parametrize("rows", [100, 40])
def test_one_mixed_epoch_is_the_mean_of_the_shards(threads, rows):
    """One epoch from w = 0: every shard's pass is a partial_fit of its rows, the mix the
    mean of their weights, and the running sum the sum of their sums of hypotheses:
    with 4 shards one node of the tree adds them, with 10 a tree of three nodes and a
    root."""
    X, y = make_blobs_pm(n=400, d=6, seed=2)
    for make in [
        lambda: PerceptronClassifier(shuffle=False, fit_intercept=False),
        lambda: ALMAClassifier(shuffle=False, p=3.0, fit_intercept=False),
    ]:
        clf = MixingClassifier(make(), max_iter=1).fit(chunked(X, rows), y)
        shards = [
            make().partial_fit(X[i : i + rows], y[i : i + rows], classes=[0, 1])
            for i in range(0, 400, rows)
        ]
        mixed, states = clf.estimator_._states[0], [s._states[0] for s in shards]
        np.testing.assert_allclose(
            mixed.last_weights(), np.mean([s.last_weights() for s in states], axis=0), rtol=1e-12
        )
        np.testing.assert_allclose(
            mixed.sum_weights(), np.sum([s.sum_weights() for s in states], axis=0), rtol=1e-12
        )
        assert mixed.n_trials == 400
        assert mixed.n_corrections == sum(s.n_corrections for s in states) == clf.n_corrections_
        # k restarts from the rounded mean of the shards' k, not their total
        ks = [s.k for s in states]
        assert mixed.k == int(np.floor(np.mean(ks) + 0.5)) < sum(ks)


@pytest.mark.parametrize("rows", [100, 30])
def test_corrections_mixing_weighs_the_shards_by_their_corrections(threads, rows):
    X, y = make_blobs_pm(n=300, d=5, seed=7)
    make = lambda: PerceptronClassifier(shuffle=False, fit_intercept=False, output="last")  # noqa: E731
    clf = MixingClassifier(make(), max_iter=1, mixing="corrections").fit(chunked(X, rows), y)
    shards = [
        make().partial_fit(X[i : i + rows], y[i : i + rows], classes=[0, 1])
        for i in range(0, 300, rows)
    ]
    counts = np.array([s.n_corrections_ for s in shards], dtype=float)
    expected = sum(c * s._states[0].last_weights() for c, s in zip(counts, shards, strict=True))
    np.testing.assert_allclose(
        clf.estimator_._states[0].last_weights(), expected / counts.sum(), rtol=1e-12
    )
    np.testing.assert_array_equal(clf.n_corrections_per_epoch_, [counts.astype(np.int64)])


@pytest.mark.parametrize(
    "n_shards,mixing",
    # mixing by corrections on 4 and 8 shards (1 to 2 s each on 2 cores) in make test-all
    [
        slow_case(n_shards, mixing, slow=mixing == "corrections" and n_shards > 2)
        for mixing in ("uniform", "corrections")
        for n_shards in (2, 4, 8)
    ],
)
def test_mixed_perceptron_keeps_mcdonalds_mistake_bound(threads, mixing, n_shards):
    """Theorem 3 of McDonald, Hall and Mann (2010): on data separable with margin gamma,
    sum over epochs n and shards i of mu_(i,n) k_(i,n) <= R^2 / gamma^2 (k_(i,n) the
    mistakes of shard i in epoch n, mu its mixing weight), and an epoch without
    mistakes comes."""
    # a margin of 0.05 in 20 dimensions: 26 to 70 epochs before one without mistakes
    X, y, gamma, R = separable_with_margin(n=2000, d=20, gamma=0.05, seed=n_shards)
    clf = MixingClassifier(
        PerceptronClassifier(shuffle=False, fit_intercept=False, output="last"),
        max_iter=2000,
        tol=None,
        mixing=mixing,
    ).fit(chunked(X, 2000 // n_shards), y)
    k = clf.n_corrections_per_epoch_.astype(float)  # (epochs, shards)
    assert k.shape == (clf.n_iter_, n_shards)
    if mixing == "uniform":
        weighted = k.sum() / n_shards
    else:
        totals = k.sum(axis=1, keepdims=True)
        weighted = np.sum(np.divide(k * k, totals, out=np.zeros_like(k), where=totals > 0))
    assert weighted <= R**2 / gamma**2
    assert k[-1].sum() == 0 and 10 < clf.n_iter_ < 2000  # an epoch without mistakes
    assert k.sum() == clf.n_corrections_
    assert clf.score(X, y) == 1.0


def test_accuracy_close_to_the_serial_fit_on_noisy_data(threads):
    X, y = make_classification(
        n_samples=6000, n_features=20, n_informative=8, flip_y=0.05, random_state=0
    )
    X_train, y_train, X_test, y_test = X[:4000], y[:4000], X[4000:], y[4000:]
    serial = ALMAClassifier(shuffle=False, alpha=0.9, max_iter=5, tol=None).fit(X_train, y_train)
    for mixing in ["uniform", "corrections"]:
        clf = MixingClassifier(
            ALMAClassifier(shuffle=False, alpha=0.9), max_iter=5, tol=None, mixing=mixing
        )
        clf.fit(chunked(X_train, 1000), da.from_array(y_train, chunks=1000))
        assert clf.n_iter_ == 5
        assert abs(clf.score(X_test, y_test) - serial.score(X_test, y_test)) < 0.02


def test_sparse_and_multiclass_chunks_and_dask_predictions(threads):
    X, y = make_blobs_pm(n=600, d=30, n_classes=3, seed=1, sparse_density=0.3)
    dX = chunked(X, 150)
    for est in [
        ALMAClassifier(shuffle=False, p="log"),
        PerceptronClassifier(shuffle=False, fit_intercept=True),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            a = MixingClassifier(est, max_iter=6).fit(dX, y)
            b = MixingClassifier(est, max_iter=6).fit(dX, y)
        assert same_bits(a.estimator_, b.estimator_)
        assert a.n_shards_ == 4
        assert a.n_corrections_per_epoch_.shape == (a.n_iter_, 4)
        np.testing.assert_array_equal(a.predict(dX).compute(), a.predict(X))
        np.testing.assert_allclose(a.decision_function(dX).compute(), a.decision_function(X))
        assert a.score(dX, y) == pytest.approx(a.score(X, y))
        assert a.score(X, y) > 0.8
    # labels in chunks of their own are rechunked to the rows' chunks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        c = MixingClassifier(est, max_iter=6).fit(dX, da.from_array(y, chunks=70))
    assert same_bits(c.estimator_, a.estimator_)


def test_a_dask_dataframe_is_sharded_by_its_partitions(threads):
    """A dask DataFrame (and a Series of labels) trains as the dask array whose row
    chunks are its partitions, bit for bit, on a cluster of processes too; its
    predictions and score come from the workers."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = make_blobs_pm(n=600, d=6, n_classes=3, seed=4)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)]).assign(label=y)
    df = dd.from_pandas(frame, npartitions=4)
    sizes = [int(n) for n in df.map_partitions(len).compute()]
    rows = np.cumsum([0, *sizes])
    dX = da.concatenate([da.from_array(X[a:b]) for a, b in zip(rows[:-1], rows[1:], strict=True)])
    make = lambda: MixingClassifier(ALMAClassifier(shuffle=False), max_iter=4, tol=None)  # noqa: E731
    expected = make().fit(dX, y)
    got = make().fit(df.drop(columns="label"), df["label"])
    assert got.n_shards_ == 4 and same_bits(got.estimator_, expected.estimator_)
    features = df.drop(columns="label")
    np.testing.assert_array_equal(got.predict(features).compute(), expected.predict(X))
    np.testing.assert_allclose(
        got.decision_function(features).compute(), expected.decision_function(X)
    )
    assert got.score(features, df["label"]) == pytest.approx(expected.score(X, y))
    with local_cluster(2):
        on_cluster = make().fit(df.drop(columns="label"), df["label"])
    assert same_bits(on_cluster.estimator_, expected.estimator_)


def test_fitted_estimator_saves_loads_and_goes_on(threads, tmp_path):
    X, y = make_blobs_pm(n=400, d=8, n_classes=3, seed=5)
    clf = MixingClassifier(ALMAClassifier(shuffle=False, p=3.0), max_iter=3, tol=None).fit(
        chunked(X, 100), y
    )
    est = clf.estimator_
    assert type(est) is ALMAClassifier and est.n_iter_ == 3
    # k restarted from the shards' mean: below the corrections counted on every shard
    assert all(s.k < s.n_corrections + 1 for s in est._states)
    path = tmp_path / "mixed.skops"
    marginkit.save(est, path)
    loaded = marginkit.load(path)
    assert same_bits(loaded, est)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    loaded.partial_fit(X[:50], y[:50])
    assert loaded.n_trials_ == est.n_trials_ + 50
    assert clone(clf).get_params()["estimator"].get_params() == est.get_params()
    assert clone(clf).set_params(estimator__p=4.0, mixing="corrections").estimator.p == 4.0


def test_tol_ends_the_epochs_and_warns_when_they_run_out(threads):
    X, y = make_classification(n_samples=1000, n_features=10, flip_y=0.1, random_state=1)
    dX = chunked(X, 250)
    clf = MixingClassifier(PerceptronClassifier(shuffle=False), max_iter=100, tol=1e-2).fit(dX, y)
    assert 1 < clf.n_iter_ < 100
    assert clf.n_iter_ == clf.estimator_.n_iter_ == len(clf.n_corrections_per_epoch_)
    with pytest.warns(ConvergenceWarning, match="max_iter=2 epochs"):
        MixingClassifier(ALMAClassifier(shuffle=False), max_iter=2, tol=0.0).fit(dX, y)


def test_refusals(threads):
    X, y = make_blobs_pm(n=100, d=4, seed=0)
    dX = chunked(X, 50)
    for est, what in [
        (ROMMAClassifier(shuffle=False), "a mean of shards' hypotheses is not such a vector"),
        (PUMMAClassifier(shuffle=False), "PUMMA's hypothesis is a bias"),
        (MarginPerceptronClassifier(shuffle=False), "halves its margin guess"),
        (KernelALMAClassifier(shuffle=False), "no weight vector to average"),
        (LogisticRegression(), "not one of marginkit's linear"),
    ]:
        with pytest.raises(TypeError, match=f"cannot mix {type(est).__name__}: .*{what}"):
            MixingClassifier(est).fit(dX, y)
    with pytest.raises(ValueError, match="does not support output='voted'"):
        MixingClassifier(PerceptronClassifier(shuffle=False, output="voted")).fit(dX, y)
    with pytest.raises(ValueError, match="does not support keep_corrections=True"):
        MixingClassifier(ALMAClassifier(shuffle=False, keep_corrections=True)).fit(dX, y)
    with pytest.raises(ValueError, match="does not support a horizon \\(got horizon=50\\)"):
        MixingClassifier(ALMAClassifier(shuffle=False, horizon=50)).fit(dX, y)
    with pytest.raises(ValueError, match="does not support class_weight \\(got 'balanced'\\)"):
        MixingClassifier(PerceptronClassifier(class_weight="balanced")).fit(dX, y)
    # the estimator's shuffle is not the shards': each learns its rows in their order
    shuffled = MixingClassifier(ALMAClassifier(shuffle=True), max_iter=2, tol=None).fit(dX, y)
    ordered = MixingClassifier(ALMAClassifier(shuffle=False), max_iter=2, tol=None).fit(dX, y)
    assert same_bits(shuffled.estimator_, ordered.estimator_)
    with pytest.raises(InvalidParameterError, match="alpha"):
        MixingClassifier(ALMAClassifier(shuffle=False, alpha=2.0)).fit(dX, y)
    with pytest.raises(InvalidParameterError, match="mixing"):
        MixingClassifier(ALMAClassifier(shuffle=False), mixing="median").fit(dX, y)
    with pytest.raises(TypeError, match="expected a dask array"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(X, y)
    with pytest.raises(ValueError, match="expected a 2-d dask array"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(da.zeros(5), y[:5])
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[100, 99\]"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(dX, y[:99])
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[100, 99\]"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(dX, da.zeros(99, chunks=50))
    for labels in [np.zeros((100, 2)), da.zeros((100, 2), chunks=50)]:
        with pytest.raises(ValueError, match="y should be a 1d array"):
            MixingClassifier(ALMAClassifier(shuffle=False)).fit(dX, labels)
    with pytest.raises(ValueError, match="has to be greater than one"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(dX, np.zeros(100))
    with pytest.raises(ValueError, match="not in classes"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(dX, y, classes=[0, 2])
    with pytest.raises(ValueError, match="Found array with 0 sample"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(
            da.zeros((0, 3), chunks=(1, 3)), np.zeros(0)
        )
    with pytest.raises(ValueError, match="Unknown label type"):
        MixingClassifier(ALMAClassifier(shuffle=False)).fit(
            dX, np.linspace(0, 1, 100), classes=[0.0, 1.0]
        )
    with pytest.raises(NotFittedError):
        MixingClassifier(ALMAClassifier(shuffle=False)).predict(X)


def test_same_model_on_one_and_two_workers_and_the_threaded_scheduler(dask_client):
    X, y = make_blobs_pm(n=900, d=12, n_classes=3, seed=9, sparse_density=0.5)
    dX, y = chunked(X, 150), da.from_array(y, chunks=150)  # six shards
    make = lambda: MixingClassifier(ALMAClassifier(shuffle=False, p="log"), max_iter=4, tol=None)  # noqa: E731
    with dask_client.as_current():
        two = make().fit(dX, y)
    with local_cluster(1):
        one = make().fit(dX, y)
    with dask.config.set(scheduler="threads"):
        local = make().fit(dX, y)
    assert two.n_corrections_ > 0
    assert same_bits(one.estimator_, two.estimator_)
    assert same_bits(local.estimator_, two.estimator_)
    np.testing.assert_array_equal(one.n_corrections_per_epoch_, two.n_corrections_per_epoch_)


def fit_within(seconds, fit):
    """``fit()`` in a thread, given ``seconds`` to end: (its result, the exception it
    raised); a fit still running then fails the test, which a hang would otherwise
    make wait for ever."""
    out = {}

    def run():
        try:
            out["model"] = fit()
        except Exception as exc:  # noqa: BLE001 - the caller checks it
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the fit did not end within {seconds} s"
    return out.get("model"), out.get("error")


@pytest.mark.parametrize("killed", ["one", "every"])
def test_workers_killed_mid_fit_change_nothing(killed):
    """SIGKILL one worker's process, or both, after the first epoch: the nannies restart
    them, the lost chunks are computed again from the graph, and the model is the
    undisturbed one, within a bounded time."""
    X, y = make_blobs_pm(n=800, d=10, n_classes=2, seed=11)
    dX = chunked(X, 100)
    make = lambda: MixingClassifier(PerceptronClassifier(shuffle=False), max_iter=5, tol=None)  # noqa: E731
    with local_cluster(2) as client:
        undisturbed = make().fit(dX, y)
        before = client.run(os.getpid)
        victims = [before[sorted(before)[0]]] if killed == "one" else list(before.values())

        def kill_after_first(clf, epoch):
            if epoch == 0:
                for pid in victims:
                    os.kill(pid, signal.SIGKILL)

        disturbed, error = fit_within(120, lambda: make().fit(dX, y, callback=kill_after_first))
        client.wait_for_workers(2, timeout=60)
        after = client.run(os.getpid)
    assert error is None
    assert not set(victims) & set(after.values())  # they were killed, and replaced
    assert disturbed.n_iter_ == undisturbed.n_iter_ >= 2  # (the third separates the rows)
    assert same_bits(disturbed.estimator_, undisturbed.estimator_)


def test_rows_selected_by_a_mask_train_as_the_rows_themselves(threads):
    """``X[mask]`` and ``y[mask]`` of dask arrays have row chunks of unknown length: the
    fit computes them (rather than compare unknown numbers of rows) and trains on the
    rows kept, as on the same rows given with their lengths."""
    X, y = make_blobs_pm(n=600, d=20, n_classes=2, seed=3)
    keep = np.arange(600) % 3 != 0
    dX, dy = chunked(X, 150), da.from_array(y, chunks=150)
    dkeep = da.from_array(keep, chunks=150)
    masked_X, masked_y = dX[dkeep], dy[dkeep]
    assert np.isnan(masked_X.chunks[0][0]) and np.isnan(masked_y.chunks[0][0])
    est = ALMAClassifier(shuffle=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        masked = MixingClassifier(est, max_iter=4).fit(masked_X, masked_y)
        known = MixingClassifier(est, max_iter=4).fit(chunked(X[keep], 100), y[keep])
    assert masked.n_shards_ == known.n_shards_ == 4
    assert same_bits(masked.estimator_, known.estimator_)


def test_a_value_that_is_not_finite_is_named_by_shard_and_row(threads):
    """scikit-learn's message, with the shard and the first row of the data (counted
    over the whole array) that holds the value."""
    X, y = make_blobs_pm(n=400, d=6, n_classes=2, seed=4)
    X[257, 3] = np.nan
    with pytest.raises(ValueError, match=r"Input contains NaN\. \(shard 2, row 257\)"):
        MixingClassifier(ALMAClassifier(), max_iter=2).fit(chunked(X, 100), y)
    X[257, 3], X[130, 0] = 0.0, np.inf
    with pytest.raises(ValueError, match=r"Input contains infinity.*\(shard 1, row 130\)"):
        MixingClassifier(ALMAClassifier(), max_iter=2).fit(chunked(sp.csr_matrix(X), 100), y)
