import os
import re
from pathlib import Path

import numpy as np
import pytest

# scikit-learn's array API dispatch (test_array_api.py) requires scipy's flag, which scipy
# reads when first imported: set here, before any test module imports it
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# the fixtures' generators (tests/data/*/generate.py) are scripts of the version that
# wrote the files, not tests
collect_ignore_glob = ["data/*"]

#: The real data sets: $MARGINKIT_DATA when set, else ../shared/data beside the checkout
SHARED_DATA = Path(
    os.environ.get("MARGINKIT_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


@pytest.fixture
def shared_data():
    """The real data sets ($MARGINKIT_DATA, else ../shared/data) when present; the test is
    skipped with the reason otherwise."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA} (set MARGINKIT_DATA)")
    return SHARED_DATA


def one_error_line(err):
    """The one line a command-line mistake prints (``marginkit: error: ...``), checked
    to be alone and without a traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("marginkit: error: ")
    assert "Traceback" not in err
    return lines[0]


def make_blobs_pm(n=200, d=12, n_classes=2, seed=0, sparse_density=None):
    """Small overlapping Gaussian classes; optionally sparsified (CSR)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(n_classes, d))
    y = rng.integers(0, n_classes, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    if sparse_density is not None:
        mask = rng.uniform(size=X.shape) < sparse_density
        X = sp.csr_matrix(X * mask)
    return X, y


@pytest.fixture
def threads():
    """dask's threaded scheduler, whether or not a client of the module is running."""
    dask = pytest.importorskip("dask", reason="the Dask runs need the 'dask' extra")
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture(scope="module")
def dask_client():
    """A client of a real dask.distributed LocalCluster: 2 worker processes, one thread
    each, on loopback, with no dashboard; closed after the module's tests."""
    distributed = pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster, timeout="60s") as client,
    ):
        client.wait_for_workers(2, timeout=60)  # every one registered
        yield client


def checkpoint_file(make, X, y, path, stop_after=2, every=8):
    """The checkpoint ``make().fit(X, y, checkpoint=path)`` leaves when its run is killed
    right after its ``stop_after``-th write (every ``every`` trials)."""
    import marginkit

    real_save, calls = marginkit.persistence.save, []

    def save_then_stop(est, p):
        real_save(est, p)
        calls.append(1)
        if len(calls) == stop_after:
            raise KeyboardInterrupt

    marginkit.persistence.save = save_then_stop
    try:
        make().fit(X, y, checkpoint=path, checkpoint_every=every)
    except KeyboardInterrupt:
        pass
    finally:
        marginkit.persistence.save = real_save
    return path


def outputs_of(est):
    """The outputs a fitted estimator gives: a linear one fitted without its correction
    log (``keep_corrections=False`` and ``output`` not ``"voted"``) has no vote."""
    states = getattr(est, "_states", [])
    if all(s.keeps_log for s in states):
        return ["last", "avg", "voted"]
    return ["last", "avg"]


def _cuda_usable():
    """Whether torch is installed and sees a CUDA device (scikit-learn's array API
    checks ask only whether torch was built with CUDA)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    # scikit-learn's array API checks name the device "device_name=cuda" or
    # "device='cuda'"
    cuda = [item for item in items if re.search(r"device(_name)?='?cuda", item.nodeid)]
    if cuda and not _cuda_usable():
        skip = pytest.mark.skip(reason="no CUDA device")
        for item in cuda:
            item.add_marker(pytest.mark.gpu)
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, config):
    """With ``-m exactness``, the BLAS kernels this run loaded, as threadpoolctl reports
    them (tools/exactness_on_every_blas.py reads this line)."""
    if "exactness" not in (config.getoption("markexpr", "") or ""):
        return
    from threadpoolctl import threadpool_info

    blas = sorted(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} "
        f"({Path(i.get('filepath') or '?').parent.name})"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    terminalreporter.write_line("BLAS kernels of this run: " + (", ".join(blas) or "none found"))


def fit_overlapped(monkeypatch, overlap, make, X, y, fold_below=None):
    """``make().fit(X, y)`` with the kernel engines' products made ahead during the walk
    (``overlap``) or not, and optionally a scale fold whenever the scale drops below
    ``fold_below`` (to run the fold path often)."""
    from marginkit import _kernel_base
    from marginkit._core import kernel

    monkeypatch.setattr(kernel, "OVERLAP", overlap)
    if fold_below is not None:
        original = _kernel_base.KernelOnlineClassifier._initialise

        def often(self, data):
            original(self, data)
            self._fold_below = fold_below

        monkeypatch.setattr(_kernel_base.KernelOnlineClassifier, "_initialise", often)
    return make().fit(X, y)
