"""The exact kernel engine with its support vectors sharded over dask actors
(marginkit.distributed.ShardedKernelClassifier, marginkit._core.shards): the one-process
model, the same bits for the same shards, a worker killed mid-fit, and every refusal."""

import os
import signal
import subprocess
import sys

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
da = pytest.importorskip("dask.array")

from test_mixing import local_cluster  # noqa: E402

import marginkit._core.kernel as engine  # noqa: E402
from marginkit.distributed import ShardedKernelClassifier  # noqa: E402


@pytest.fixture
def client(dask_client):
    with dask_client.as_current():
        yield dask_client


def data(n_classes=2, sparse=False, n=360, seed=3):
    X, y = make_blobs_pm(n=n, d=8, n_classes=n_classes, seed=seed)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0))
    return X, y


# several epochs (examples corrected again), every output, both kernels of the products
CASES = {
    "alma-rbf-avg": (
        lambda: KernelALMAClassifier(kernel="rbf", gamma=0.2, max_iter=3, tol=None),
        2,
    ),
    "alma-poly-voted-3": (
        lambda: KernelALMAClassifier(
            kernel="poly", degree=3, coef0=1.0, gamma=0.1, output="voted", max_iter=3, tol=None
        ),
        3,
    ),
    "alma-last-nocache": (
        lambda: KernelALMAClassifier(
            kernel="rbf", gamma=0.5, output="last", max_iter=3, tol=None, cache_size=0
        ),
        3,
    ),
    "perceptron": (lambda: KernelPerceptronClassifier(kernel="rbf", max_iter=2, tol=None), 2),
    "romma-voted": (
        lambda: KernelROMMAClassifier(kernel="rbf", output="voted", max_iter=2, tol=None),
        3,
    ),
    # aggressive ROMMA puts each example it corrects on its margin: one epoch, no tie
    "aggressive-romma": (
        lambda: KernelROMMAClassifier(kernel="rbf", aggressive=True, max_iter=1),
        2,
    ),
}


def assert_same_model(sharded, one):
    """The one-process model: the same corrections and support vectors, the
    coefficients and scores to rounding."""
    assert sharded.n_corrections_ == one.n_corrections_
    assert sharded.n_kernel_evaluations_ == one.n_kernel_evaluations_
    np.testing.assert_array_equal(sharded.support_, one.support_)
    np.testing.assert_array_equal(sharded.n_support_, one.n_support_)
    a, b = sharded._kstate, one._kstate
    assert a.m == b.m
    np.testing.assert_array_equal(a.index[: a.m], b.index[: b.m])
    np.testing.assert_allclose(a.A[: a.m] * a.s, b.A[: b.m] * b.s, rtol=1e-10, atol=1e-13)
    X, _ = data(3, n=60, seed=11)
    np.testing.assert_allclose(
        sharded.decision_function(X), one.decision_function(X), rtol=1e-9, atol=1e-12
    )


@pytest.mark.exactness
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(CASES))
def test_the_one_process_model(client, name, sparse):
    make, n_classes = CASES[name]
    X, y = data(n_classes, sparse)
    one = make().set_params(block_size=64).fit(X, y)
    for n_shards in (1, 3):
        clf = ShardedKernelClassifier(make().set_params(block_size=64), n_shards=n_shards)
        clf.fit(X, y)
        assert type(clf.estimator_) is type(one)
        assert_same_model(clf.estimator_, one)
        assert clf.n_shards_ == n_shards
        # every vector but the last block's, which no block's sums needed
        state = clf.estimator_._kstate
        assert sum(clf.shard_sizes_) == state.m - state.n_last
        np.testing.assert_array_equal(clf.predict(X), one.predict(X))
        np.testing.assert_array_equal(clf.classes_, one.classes_)


def test_examples_that_come_back_and_balanced_shards(client):
    """Over several epochs an example corrected again is one row with several entries,
    on the shard that holds it; the shards hold about as many entries each."""
    X, y = data(3, n=400, seed=5)
    make = lambda: KernelALMAClassifier(  # noqa: E731
        kernel="rbf", gamma=0.5, max_iter=4, tol=None, block_size=50
    )
    clf = ShardedKernelClassifier(make(), n_shards=2).fit(X, y)
    state = clf.estimator_._kstate
    assert state.store.n_rows < state.m  # examples came back
    assert min(clf.shard_sizes_) > 0.4 * state.m
    assert_same_model(clf.estimator_, make().fit(X, y))
    assert clf.bytes_sent_ > 0 and clf.bytes_received_ > 0 and clf.n_remade_ == 0


def test_same_bits_for_the_same_shards(client):
    X, y = data(2)
    make = lambda: KernelALMAClassifier(kernel="rbf", max_iter=3, tol=None, block_size=40)  # noqa: E731
    a = ShardedKernelClassifier(make(), n_shards=3).fit(X, y).estimator_
    b = ShardedKernelClassifier(make(), n_shards=3).fit(X, y).estimator_
    assert a.dual_coef_.tobytes() == b.dual_coef_.tobytes()
    assert a.decision_function(X).tobytes() == b.decision_function(X).tobytes()


def test_products_made_ahead_in_a_thread(client, monkeypatch):
    """On more than two cores the next block's products are made in a thread while the
    walk goes (two calls per block and shard): the same model."""
    monkeypatch.setattr(engine, "OVERLAP", True)
    X, y = data(3, n=300)
    make = lambda: KernelALMAClassifier(kernel="rbf", max_iter=2, tol=None, block_size=32)  # noqa: E731
    clf = ShardedKernelClassifier(make(), n_shards=2).fit(X, y)
    assert_same_model(clf.estimator_, make().fit(X, y))


def test_dask_inputs_and_partial_fit(client):
    X, y = data(2)
    make = lambda: KernelPerceptronClassifier(kernel="rbf", block_size=32)  # noqa: E731
    one = make().set_params(max_iter=2, tol=None).fit(X, y)
    dX, dy = da.from_array(X, chunks=(100, 8)), da.from_array(y, chunks=100)
    clf = ShardedKernelClassifier(make().set_params(max_iter=2, tol=None)).fit(dX, dy)
    assert_same_model(clf.estimator_, one)
    # partial_fit: one pass per call, on the shards each time
    serial = make().partial_fit(X[:180], y[:180], classes=[0, 1]).partial_fit(X[180:], y[180:])
    sharded = ShardedKernelClassifier(make(), n_shards=2)
    sharded.partial_fit(X[:180], y[:180], classes=[0, 1]).partial_fit(X[180:], y[180:])
    assert_same_model(sharded.estimator_, serial)


def test_the_fitted_estimator_is_a_plain_one(client, tmp_path):
    X, y = data(3)
    clf = ShardedKernelClassifier(KernelALMAClassifier(max_iter=2, block_size=50)).fit(X, y)
    est = clf.estimator_
    assert "_shards" not in est.__dict__ and "remote" not in est._kstate.__dict__
    path = tmp_path / "sharded.skops"
    marginkit.save(est, path)
    back = marginkit.load(path)
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))


def test_a_worker_killed_mid_fit_changes_nothing():
    """A shard whose worker is killed (SIGKILL; the nanny restarts it) is made anew
    from the driver's rows: the model is bit for bit the undisturbed one."""
    X, y = data(2, n=400)
    make = lambda: KernelALMAClassifier(kernel="rbf", max_iter=3, tol=None, block_size=50)  # noqa: E731
    with local_cluster(2) as client:
        calm = ShardedKernelClassifier(make(), n_shards=2).fit(X, y)
        pids = sorted(client.run(os.getpid).values())

        def kill(model, epoch):
            if epoch == 0:
                os.kill(pids[0], signal.SIGKILL)

        hit = ShardedKernelClassifier(make(), n_shards=2).fit(X, y, callback=kill)
    assert hit.n_remade_ >= 1 and calm.n_remade_ == 0
    assert hit.estimator_.dual_coef_.tobytes() == calm.estimator_.dual_coef_.tobytes()
    np.testing.assert_array_equal(hit.estimator_.support_, calm.estimator_.support_)


def fails_on_workers(A, B):
    """A linear kernel that raises in a dask worker (where the shards' products are)."""
    try:
        distributed.get_worker()
    except ValueError:
        return np.asarray(A @ B.T)
    raise ZeroDivisionError("the kernel failed on a worker")


def test_an_error_on_the_shards_is_raised_not_retried(client):
    """An exception of the shards' own computation reaches the caller as it is (only a
    lost worker makes a shard anew), and the estimator is left as it was."""
    X, y = data(2, n=200)
    clf = ShardedKernelClassifier(KernelALMAClassifier(kernel=fails_on_workers, block_size=40))
    with pytest.raises(ZeroDivisionError, match="failed on a worker"):
        clf.fit(X, y)
    assert not hasattr(clf, "estimator_")


def test_refusals(client):
    X, y = data(2, n=100)
    with pytest.raises(TypeError, match="cannot shard KernelPUMMAClassifier"):
        ShardedKernelClassifier(KernelPUMMAClassifier()).fit(X, y)
    with pytest.raises(TypeError, match="MixingClassifier trains linear ones"):
        ShardedKernelClassifier(ALMAClassifier()).fit(X, y)
    with pytest.raises(ValueError, match="does not support a budget"):
        ShardedKernelClassifier(KernelALMAClassifier(budget=50)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="n_shards"):
        ShardedKernelClassifier(KernelALMAClassifier(), n_shards=0).fit(X, y)
    xps = pytest.importorskip("array_api_strict")
    with (
        sklearn.config_context(array_api_dispatch=True),
        pytest.raises(ValueError, match="workers' CPUs"),
    ):
        ShardedKernelClassifier(KernelALMAClassifier()).fit(xps.asarray(X), xps.asarray(y))


def test_no_client_is_a_clear_error():
    """Without a dask.distributed client (in a process of its own, where no test's
    cluster is)."""
    code = (
        "import numpy as np\n"
        "from marginkit import KernelALMAClassifier\n"
        "from marginkit.distributed import ShardedKernelClassifier\n"
        "X = np.random.default_rng(0).normal(size=(50, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "try:\n"
        "    ShardedKernelClassifier(KernelALMAClassifier()).fit(X, y)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "found no client" in out.stdout
