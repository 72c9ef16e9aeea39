"""ShardedKernelClassifier (marginkit.distributed): the exact kernel estimators trained
with their support vectors' margin products on dask actors. The one-process model for
every output, kernel, rule, input format and cache setting; the same bits for the same
shards; a plain fitted estimator; partial_fit; a worker killed mid-fit; dask inputs;
and every refusal."""

import os
import signal
import time

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from conftest import make_blobs_pm
from sklearn.utils._param_validation import InvalidParameterError

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
)

distributed = pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")
dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from test_mixing import fit_within, local_cluster  # noqa: E402

from marginkit._core import shards as shards_engine  # noqa: E402
from marginkit._core.kernel import blocks as kernel_blocks  # noqa: E402
from marginkit.distributed import ShardedKernelClassifier  # noqa: E402

# several epochs without a tolerance: kernel ROMMA warns that no pass was without update
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def cluster_client():
    """The module's cluster: 2 worker processes. Its client is not the default one, so
    that a test outside the ``client`` fixture runs with no client at all."""
    with local_cluster(2, current=False) as client:
        yield client


@pytest.fixture
def client(cluster_client):
    """The module's client, current for the test."""
    with cluster_client.as_current():
        yield cluster_client


def data(n_classes=2, sparse=False, n=300, d=8, seed=3):
    """Overlapping blobs, more so with more noise (no margin within rounding of a
    threshold); ``sparse``: CSR with about half of the values zero."""
    X, y = make_blobs_pm(n=n, d=d, n_classes=n_classes, seed=seed)
    X = X + np.random.default_rng(seed + 1000).normal(scale=1.0, size=X.shape)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    return X, y


def rel_err(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def assert_same_model(sharded, one, X_test, same_work=True):
    """The one-process model: the same corrections and support vectors, coefficients
    and scores to rounding (1e-12 relative), and (``same_work``) the kernel entries
    counted, those of the host's blocked engine (under array API dispatch one process
    makes a block's rows against the block before in one product, and counts more)."""
    assert type(sharded) is type(one)
    np.testing.assert_array_equal(sharded.classes_, one.classes_)
    assert sharded.n_corrections_ == one.n_corrections_
    if same_work:
        assert sharded.n_kernel_evaluations_ == one.n_kernel_evaluations_
    np.testing.assert_array_equal(sharded.n_corrections_per_class_, one.n_corrections_per_class_)
    np.testing.assert_array_equal(sharded.support_, one.support_)
    np.testing.assert_array_equal(sharded.n_support_, one.n_support_)
    assert sharded._kstate.m == one._kstate.m
    assert sharded._kstate.store.n_rows == one._kstate.store.n_rows
    if sharded.output != "voted":
        assert sharded.dual_coef_.shape == one.dual_coef_.shape
        assert rel_err(sharded.dual_coef_, one.dual_coef_) < 1e-12
    assert rel_err(sharded.decision_function(X_test), one.decision_function(X_test)) < 1e-12
    np.testing.assert_array_equal(sharded.predict(X_test), one.predict(X_test))


# name: (parameters, estimator, classes, cache_size); several epochs without a
# tolerance, so that examples corrected in an epoch come back in a later one
CASES = {
    "alma-rbf-avg-2": (dict(kernel="rbf", gamma=0.3, output="avg"), KernelALMAClassifier, 2, 200),
    # an average with a horizon: its weights grow and are rescaled on the driver
    "alma-rbf-horizon-3": (
        dict(kernel="rbf", gamma=0.3, output="avg", horizon=1.5),
        KernelALMAClassifier,
        3,
        200,
    ),
    "alma-rbf-voted-3": (
        dict(kernel="rbf", gamma=0.3, output="voted"),
        KernelALMAClassifier,
        3,
        0,
    ),
    "alma-rbf-last-3": (
        dict(kernel="rbf", gamma=0.5, output="last"),
        KernelALMAClassifier,
        3,
        200,
    ),
    "alma-rbf-last-2-nocache": (
        dict(kernel="rbf", gamma=0.5, output="last"),
        KernelALMAClassifier,
        2,
        0,
    ),
    "alma-poly-avg-3": (
        dict(kernel="poly", degree=3, gamma=0.1, coef0=1.0, output="avg"),
        KernelALMAClassifier,
        3,
        0,
    ),
    "alma-poly-voted-2": (
        dict(kernel="poly", degree=2, gamma=0.2, coef0=1.0, output="voted"),
        KernelALMAClassifier,
        2,
        200,
    ),
    "alma-poly-last-2": (
        dict(kernel="poly", degree=3, gamma=0.1, coef0=1.0, output="last"),
        KernelALMAClassifier,
        2,
        0,
    ),
    "perceptron-rbf-3": (dict(kernel="rbf", gamma=0.3), KernelPerceptronClassifier, 3, 200),
    "perceptron-poly-voted-2": (
        dict(kernel="poly", degree=2, gamma=0.2, output="voted"),
        KernelPerceptronClassifier,
        2,
        0,
    ),
    # on mistakes, with the soft margin (the rows' coordinates kept by the driver)
    "romma-rbf-2": (
        dict(kernel="rbf", gamma=0.3, aggressive=False, lam=0.5),
        KernelROMMAClassifier,
        2,
        200,
    ),
    "romma-rbf-last-3-nocache": (
        dict(kernel="rbf", gamma=0.3, output="last", aggressive=False, lam=0.0),
        KernelROMMAClassifier,
        3,
        0,
    ),
    # aggressive ROMMA puts each example it corrects on its margin of 1: with delta > 0
    # an example that comes back is not at its threshold, 1 - delta, to rounding
    "aggressive-romma-rbf-2": (
        dict(kernel="rbf", gamma=0.3, aggressive=True, delta=0.2),
        KernelROMMAClassifier,
        2,
        200,
    ),
    "aggressive-romma-poly-voted-3-nocache": (
        dict(kernel="poly", degree=2, gamma=0.2, aggressive=True, delta=0.2, output="voted"),
        KernelROMMAClassifier,
        3,
        0,
    ),
}


def make_case(name):
    params, cls, n_classes, cache_size = CASES[name]
    params = dict(params, max_iter=3, tol=None, block_size=48, cache_size=cache_size)
    return cls(**{"shuffle": False, **params}), n_classes


#: The input formats of each case that run only in ``make test-all`` (about 2 s a fit
#: on 2 cores): ``make test`` fits each rule (ALMA, the Perceptron, ROMMA with and
#: without its soft margin, aggressive ROMMA), output, kernel and cache setting on one
#: format or the other; tests/conftest.py's HEAVY moves more.
SLOW_FORMATS = {
    "alma-rbf-horizon-3": {"csr"},
    "alma-rbf-voted-3": {"csr"},
    "alma-rbf-last-3": {"dense", "csr"},
    "alma-rbf-last-2-nocache": {"dense", "csr"},
    "alma-poly-avg-3": {"dense"},
    "alma-poly-voted-2": {"dense", "csr"},
    "alma-poly-last-2": {"dense", "csr"},
    "perceptron-poly-voted-2": {"dense"},
    "romma-rbf-last-3-nocache": {"dense"},
}


def _one_process_cases():
    for sparse, fmt in [(False, "dense"), (True, "csr")]:
        for name in CASES:
            marks = [pytest.mark.slow] if fmt in SLOW_FORMATS.get(name, ()) else []
            yield pytest.param(name, sparse, id=f"{name}-{fmt}", marks=marks)


@pytest.mark.exactness
@pytest.mark.parametrize("name,sparse", list(_one_process_cases()))
def test_the_one_process_model(client, name, sparse):
    est, n_classes = make_case(name)
    X, y = data(n_classes, sparse, seed=list(CASES).index(name))
    X_test, _ = data(n_classes, sparse, n=80, seed=99)
    one = sklearn.clone(est).fit(X, y)
    for n_shards in (1, 3):
        clf = ShardedKernelClassifier(est, n_shards=n_shards).fit(X, y)
        assert clf.estimator_ is not est
        assert_same_model(clf.estimator_, one, X_test)
        np.testing.assert_array_equal(clf.classes_, one.classes_)
        assert clf.n_features_in_ == X.shape[1]
        assert clf.n_shards_ == n_shards and len(clf.shard_sizes_) == n_shards
        state = clf.estimator_._kstate
        assert sum(clf.shard_sizes_) == state.m - state.n_last
        assert clf.n_remade_ == 0
        assert clf.bytes_sent_ > 0 and clf.bytes_received_ > 0
        np.testing.assert_array_equal(clf.predict(X_test), one.predict(X_test))
        np.testing.assert_array_equal(
            clf.decision_function(X_test), clf.estimator_.decision_function(X_test)
        )
    # the estimator given is left unfitted
    assert not hasattr(est, "_kstate")


def test_examples_come_back_and_the_cache_changes_nothing(client):
    """Examples corrected again in later epochs (one stored row, several entries) are
    exercised, with and without the epochs' cache: the one-process model each time, and
    the sharded fits with and without the cache agree with each other."""
    X, y = data(3, n=400, seed=5)
    X_test, _ = data(3, n=80, seed=99)
    models = {}
    for cache_size in (200, 0):
        est = KernelALMAClassifier(
            shuffle=False,
            kernel="rbf",
            gamma=0.5,
            max_iter=3,
            tol=None,
            block_size=50,
            cache_size=cache_size,
        )
        one = sklearn.clone(est).fit(X, y)
        clf = ShardedKernelClassifier(est, n_shards=2).fit(X, y)
        state = clf.estimator_._kstate
        assert state.store.n_rows < state.m  # examples came back
        assert_same_model(clf.estimator_, one, X_test)
        models[cache_size] = clf.estimator_
    np.testing.assert_array_equal(models[200].support_, models[0].support_)
    assert rel_err(models[200].dual_coef_, models[0].dual_coef_) < 1e-12


SAME_BITS = {
    "perceptron": lambda: KernelPerceptronClassifier(shuffle=False, kernel="rbf", gamma=1.0),
    "alma": lambda: KernelALMAClassifier(shuffle=False, kernel="rbf", gamma=0.5),
}


@pytest.mark.parametrize("rule", list(SAME_BITS))
def test_same_bits_for_the_same_shards_and_balanced_shards(client, monkeypatch, rule):
    """The same fit twice: the same bits, the same shards, the same messages; with the
    next block's products made in a thread during the walk (``OVERLAP``, the default on
    more than two cores: two calls per block and shard, not one), the same bits too."""
    X, y = data(3, n=400, seed=2)
    est = SAME_BITS[rule]().set_params(max_iter=3, tol=None, block_size=40)
    monkeypatch.setattr(kernel_blocks, "OVERLAP", False)
    a = ShardedKernelClassifier(est, n_shards=3).fit(X, y)
    b = ShardedKernelClassifier(est, n_shards=3).fit(X, y)
    monkeypatch.setattr(kernel_blocks, "OVERLAP", True)
    ahead = ShardedKernelClassifier(est, n_shards=3).fit(X, y)
    for other in (b, ahead):
        assert a.estimator_.dual_coef_.tobytes() == other.estimator_.dual_coef_.tobytes()
        assert (
            a.estimator_.decision_function(X).tobytes()
            == other.estimator_.decision_function(X).tobytes()
        )
        assert a.shard_sizes_ == other.shard_sizes_
    assert a.bytes_sent_ == b.bytes_sent_ and a.bytes_received_ == b.bytes_received_
    state = a.estimator_._kstate
    assert state.m > 100 and state.store.n_rows < state.m
    # every entry but those the last block stored (no block's sums needed them)
    assert sum(a.shard_sizes_) == state.m - state.n_last
    assert state.n_last < 40
    assert all(size > 0 for size in a.shard_sizes_)
    # a new vector goes to the least loaded shard; one that comes back stays where its
    # row is, so the loads stay near each other
    assert max(a.shard_sizes_) - min(a.shard_sizes_) < 0.25 * state.m


def test_products_made_ahead_in_a_thread(client, monkeypatch):
    """On more than two cores the next block's products are made in a thread while the
    walk goes (two calls per block and shard): the one-process model."""
    monkeypatch.setattr(kernel_blocks, "OVERLAP", True)
    X, y = data(3, n=300, seed=6)
    est = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, max_iter=2, tol=None, block_size=32
    )
    clf = ShardedKernelClassifier(est, n_shards=2).fit(X, y)
    assert_same_model(clf.estimator_, sklearn.clone(est).fit(X, y), X[:80])


def test_n_shards_none_is_one_per_worker(client):
    X, y = data(2, n=200)
    clf = ShardedKernelClassifier(
        KernelALMAClassifier(shuffle=False, max_iter=2, block_size=32)
    ).fit(X, y)
    # (the scheduler's records, once both workers are registered: under load a
    # heartbeat can come late and leave the list empty for a moment)
    client.wait_for_workers(2, timeout=60)
    assert clf.n_shards_ == len(client.scheduler_info()["workers"]) == 2
    assert clf.get_params()["n_shards"] is None


def test_the_fitted_estimator_is_a_plain_one(client, tmp_path):
    X, y = data(3, n=300, seed=8)
    X_test, y_test = data(3, n=80, seed=99)
    est = KernelROMMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, max_iter=2, tol=None, block_size=50
    )
    clf = ShardedKernelClassifier(est, n_shards=2).fit(X, y)
    fitted = clf.estimator_
    assert type(fitted) is KernelROMMAClassifier
    assert not hasattr(fitted, "_shards")
    assert fitted._kstate.remote is None and "remote" not in vars(fitted._kstate)
    # the workers let the shards go at the end of the call
    deadline = time.monotonic() + 10
    while any(client.run(lambda dask_worker: len(dask_worker.state.actors)).values()):
        assert time.monotonic() < deadline, "the shards' actors outlived the fit"
        time.sleep(0.05)
    path = tmp_path / "sharded.skops"
    marginkit.save(fitted, path)
    back = marginkit.load(path)
    assert type(back) is KernelROMMAClassifier
    np.testing.assert_array_equal(back.predict(X_test), clf.predict(X_test))
    np.testing.assert_array_equal(back.decision_function(X_test), fitted.decision_function(X_test))
    np.testing.assert_array_equal(back.support_, fitted.support_)
    # it goes on training on one machine, as any fitted model
    back.partial_fit(X_test, y_test)
    assert back._kstate.m >= fitted._kstate.m


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_partial_fit_is_the_one_process_partial_fit(client, sparse):
    X, y = data(3, sparse, n=300, seed=9)
    X_test, _ = data(3, sparse, n=80, seed=99)
    est = KernelALMAClassifier(shuffle=False, kernel="rbf", gamma=0.3, block_size=40)
    one = sklearn.clone(est)
    one.partial_fit(X[:150], y[:150], classes=[0, 1, 2]).partial_fit(X[150:], y[150:])
    clf = ShardedKernelClassifier(est, n_shards=2)
    clf.partial_fit(X[:150], y[:150], classes=[0, 1, 2])
    first = clf.estimator_
    m_first = first._kstate.m
    clf.partial_fit(X[150:], y[150:])
    assert clf.estimator_ is first  # the second call goes on with the same model
    assert clf.estimator_._kstate.m > m_first
    assert not hasattr(clf.estimator_, "_shards")
    assert_same_model(clf.estimator_, one, X_test)
    # and the halves again: the same rows corrected again
    one.partial_fit(X[:150], y[:150])
    clf.partial_fit(X[:150], y[:150])
    assert_same_model(clf.estimator_, one, X_test)


def test_fit_params_reach_the_estimator(client):
    X, y = data(2, n=200)
    seen = []
    est = KernelALMAClassifier(shuffle=False, max_iter=3, tol=None, block_size=32)
    ShardedKernelClassifier(est, n_shards=2).fit(
        X, y, callback=lambda e, epoch: seen.append(epoch)
    )
    assert seen == [0, 1, 2]


def test_a_checkpoint_during_a_sharded_fit(client, tmp_path):
    """``checkpoint`` is one of the fit_params the docstring names: the checkpoints are
    the one-process fit's, and the model the one-process model."""
    X, y = data(3, n=300, seed=4)
    est = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, max_iter=3, tol=None, block_size=40
    )
    path = tmp_path / "sharded.skops"
    clf = ShardedKernelClassifier(est, n_shards=2).fit(X, y, checkpoint=path, checkpoint_every=64)
    one = sklearn.clone(est).fit(X, y)
    assert_same_model(clf.estimator_, one, X[:80])
    saved = marginkit.load(path)
    assert "_shards" not in saved.__dict__
    np.testing.assert_array_equal(saved.predict(X), one.predict(X))


def test_dask_inputs_give_the_numpy_model(client):
    X, y = data(3, n=300, seed=10)
    X_test, _ = data(3, n=80, seed=99)
    est = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, max_iter=2, tol=None, block_size=40
    )
    numpy_fit = ShardedKernelClassifier(est, n_shards=2).fit(X, y)
    dX, dy = da.from_array(X, chunks=(70, 8)), da.from_array(y, chunks=70)
    dask_fit = ShardedKernelClassifier(est, n_shards=2).fit(dX, dy)
    assert dask_fit.estimator_.dual_coef_.tobytes() == numpy_fit.estimator_.dual_coef_.tobytes()
    np.testing.assert_array_equal(dask_fit.estimator_.support_, numpy_fit.estimator_.support_)
    assert_same_model(dask_fit.estimator_, sklearn.clone(est).fit(X, y), X_test)
    # y alone as a dask array, and sparse chunks of X
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    dXs = da.from_array(Xs, chunks=(100, 8), asarray=False)
    sparse_fit = ShardedKernelClassifier(est, n_shards=2).fit(dXs, dy)
    assert_same_model(sparse_fit.estimator_, sklearn.clone(est).fit(Xs, y), Xs[:80])


def killable():
    """The rows and estimator of the tests that kill workers mid-fit: three epochs of
    eight blocks, so that a kill after the first leaves shards to make anew."""
    X, y = data(2, n=400, seed=11)
    est = KernelALMAClassifier(
        shuffle=False, kernel="rbf", gamma=0.3, max_iter=3, tol=None, block_size=50
    )
    return X, y, est


@pytest.mark.parametrize("killed", ["one", "every"])
def test_workers_killed_mid_fit_change_nothing(killed):
    """SIGKILL one worker, or both, after the first epoch; their nannies restart them
    under new addresses. Each lost shard is made anew from the driver's rows on the
    workers there are then (a task restricted to a worker address that is gone would
    wait in the scheduler for ever) and its call repeated; the model is the undisturbed
    one, bit for bit, within a bounded time."""
    X, y, est = killable()
    with local_cluster(2) as client:
        calm = ShardedKernelClassifier(est, n_shards=2).fit(X, y)
        before = client.run(os.getpid)
        victims = [before[sorted(before)[0]]] if killed == "one" else list(before.values())
        epochs = []

        def kill_after_first(model, epoch):
            if epoch == 0:
                for pid in victims:
                    os.kill(pid, signal.SIGKILL)
                epochs.append(epoch)

        hit, error = fit_within(
            120,
            lambda: ShardedKernelClassifier(est, n_shards=2).fit(X, y, callback=kill_after_first),
        )
        client.wait_for_workers(2, timeout=60)
        after = client.run(os.getpid)
    assert error is None and epochs == [0]
    assert not set(victims) & set(after.values())  # they were killed, and replaced
    assert calm.n_remade_ == 0 and hit.n_remade_ >= len(victims)
    assert hit.estimator_.dual_coef_.tobytes() == calm.estimator_.dual_coef_.tobytes()
    np.testing.assert_array_equal(hit.estimator_.support_, calm.estimator_.support_)
    assert hit.estimator_.n_corrections_ == calm.estimator_.n_corrections_
    assert hit.shard_sizes_ == calm.shard_sizes_


def test_workers_gone_for_good_mid_fit_are_a_clear_error():
    """Every worker retired after the first epoch, none coming back: the fit ends
    within a bounded time with an error that says so, not a wait for ever."""
    X, y, est = killable()
    with local_cluster(2) as client, dask.config.set({"distributed.comm.timeouts.connect": "2s"}):

        def retire_all_after_first(model, epoch):
            if epoch == 0:
                client.cluster.scale(0)  # the cluster's spec: no worker, none restarted
                deadline = time.monotonic() + 60
                while client.scheduler_info()["workers"] and time.monotonic() < deadline:
                    time.sleep(0.05)

        model, error = fit_within(
            120,
            lambda: ShardedKernelClassifier(est, n_shards=2).fit(
                X, y, callback=retire_all_after_first
            ),
        )
    assert model is None
    assert isinstance(error, ValueError)
    assert "found no worker in the dask cluster while it made a shard" in str(error)
    assert "waited 2s" in str(error)


class FailsOnWorkers:
    """A linear kernel (a picklable callable) that raises ZeroDivisionError in a dask
    worker after its first ``after`` calls there; on the driver it never fails."""

    def __init__(self, after):
        self.after = after
        self.calls = 0

    def __call__(self, A, B):
        try:
            distributed.get_worker()
        except ValueError:
            return np.asarray(A @ B.T)
        self.calls += 1
        if self.calls > self.after:
            raise ZeroDivisionError("the kernel failed on a worker")
        return np.asarray(A @ B.T)


def test_an_error_on_the_shards_is_raised_not_retried(client, monkeypatch):
    """The exception of the shards' own computation reaches the caller as it is; no
    shard is made anew for it (only a lost worker is), and nothing is fitted."""
    remade = []
    real_remake = shards_engine.Sharded._remake

    def remake(self, part):
        remade.append(part)
        real_remake(self, part)

    monkeypatch.setattr(shards_engine.Sharded, "_remake", remake)
    X, y = data(2, n=300)
    # the kernel works when the driver fits alone
    KernelALMAClassifier(shuffle=False, kernel=FailsOnWorkers(2), max_iter=2, block_size=32).fit(
        X, y
    )
    clf = ShardedKernelClassifier(
        KernelALMAClassifier(
            shuffle=False, kernel=FailsOnWorkers(2), max_iter=2, tol=None, block_size=32
        ),
        n_shards=2,
    )
    with pytest.raises(ZeroDivisionError, match="failed on a worker"):
        clf.fit(X, y)
    assert remade == []
    assert not hasattr(clf, "estimator_") and not hasattr(clf, "n_remade_")
    # the workers are still there and the next fit works
    clf.set_params(estimator=KernelALMAClassifier(shuffle=False, max_iter=1, block_size=32)).fit(
        X, y
    )
    assert clf.n_remade_ == 0


def test_refusals(client):
    X, y = data(2, n=100)
    with pytest.raises(TypeError, match="cannot shard KernelPUMMAClassifier"):
        ShardedKernelClassifier(KernelPUMMAClassifier(shuffle=False)).fit(X, y)
    with pytest.raises(TypeError, match="cannot shard ALMAClassifier.*not a kernel estimator"):
        ShardedKernelClassifier(ALMAClassifier(shuffle=False)).fit(X, y)
    with pytest.raises(TypeError, match="cannot shard KernelPUMMAClassifier"):
        ShardedKernelClassifier(KernelPUMMAClassifier(shuffle=False)).partial_fit(
            X, y, classes=[0, 1]
        )
    with pytest.raises(ValueError, match=r"does not support a budget \(got budget=50\)"):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False, budget=50)).fit(X, y)
    with pytest.raises(ValueError, match="does not support a budget"):
        ShardedKernelClassifier(KernelPerceptronClassifier(shuffle=False, budget=20)).partial_fit(
            X, y, classes=[0, 1]
        )
    with pytest.raises(InvalidParameterError, match="n_shards"):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False), n_shards=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="n_shards"):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False), n_shards=0).partial_fit(
            X, y, classes=[0, 1]
        )
    # the estimator's own parameters are validated before any shard is made
    with pytest.raises(InvalidParameterError, match="cache_size"):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False, cache_size=-1)).fit(X, y)


def test_no_client_is_a_clear_error():
    """Outside the ``client`` fixture: the module's client is not the default, and no
    other is left (distributed.default_client raises)."""
    with pytest.raises(ValueError, match="No clients found"):
        distributed.default_client()
    X, y = data(2, n=100)
    with pytest.raises(ValueError, match="found no client"):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False)).fit(X, y)
    with pytest.raises(ValueError, match="found no client"):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False)).partial_fit(
            X, y, classes=[0, 1]
        )


def test_a_cluster_without_workers_is_a_clear_error():
    """No worker comes within dask's connection timeout (1 s here): a ValueError that
    says so, not a fit that waits for ever."""
    X, y = data(2, n=100)
    with (
        distributed.LocalCluster(
            n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as empty,
        empty.as_current(),
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
    ):
        with pytest.raises(ValueError, match=r"found no worker .*waited 1s for one"):
            ShardedKernelClassifier(KernelALMAClassifier(shuffle=False)).fit(X, y)


@pytest.mark.parametrize("device", ["CPU_DEVICE", "device1"])
def test_array_api_arrays_are_refused(client, device):
    """Under scikit-learn's array API dispatch, Array API arrays (here array_api_strict's,
    on the default and another device) are refused with a clear error before anything is
    sent: the shards compute on numpy or scipy.sparse rows."""
    xps = pytest.importorskip("array_api_strict")
    X, y = data(2, n=100)
    dev = xps.Device(device)
    Xd, yd = xps.asarray(X, device=dev), xps.asarray(y, device=dev)
    with (
        sklearn.config_context(array_api_dispatch=True),
        pytest.raises(ValueError, match="workers' CPUs.*array_api_strict"),
    ):
        ShardedKernelClassifier(KernelALMAClassifier(shuffle=False, max_iter=1)).fit(Xd, yd)
    # numpy data under dispatch: the one-process model
    est = KernelALMAClassifier(shuffle=False, max_iter=2, tol=None, block_size=32)
    with sklearn.config_context(array_api_dispatch=True):
        clf = ShardedKernelClassifier(est, n_shards=2).fit(X, y)
        one = sklearn.clone(est).fit(X, y)
    assert_same_model(clf.estimator_, one, X, same_work=False)
