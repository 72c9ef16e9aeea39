"""Experiment cells on a real dask.distributed LocalCluster, against the serial run, and
rows as dask delivers them."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from marginkit import ALMAClassifier, KernelALMAClassifier
from marginkit.cli import main
from marginkit.experiments import reproduce

pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")


def strip_timings(value):
    if isinstance(value, dict):
        return {k: strip_timings(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [strip_timings(v) for v in value]
    return value


@pytest.mark.slow  # a cluster of two processes running real cells: about 40 s
def test_cells_on_two_local_workers_equal_the_serial_run(tmp_path, shared_data):
    serial = reproduce("gentile-table6", tmp_path / "serial", quick=True, quiet=True)
    dask = reproduce("gentile-table6", tmp_path / "dask", quick=True, quiet=True, workers=2)
    a, b = serial.report.document["results"], dask.report.document["results"]
    assert list(a) == list(b) and strip_timings(a) == strip_timings(b)
    # a real-data experiment: each worker loads the files itself
    kw = {"quick": True, "quiet": True, "data_dir": shared_data}
    one = reproduce("gentile-usps", tmp_path / "u1", **kw)
    two = reproduce("gentile-usps", tmp_path / "u2", workers=2, **kw)
    assert strip_timings(one.report.document["results"]) == strip_timings(
        two.report.document["results"]
    )
    # resuming a run made on the cluster computes nothing more
    again = reproduce("gentile-table6", tmp_path / "dask", quick=True, quiet=True, workers=2)
    assert again.report.computed == [] and len(again.report.skipped) == len(a)


def test_cluster_options_are_checked(tmp_path, capsys):
    with pytest.raises(ValueError, match="not both"):
        reproduce("gentile-table6", tmp_path / "x", quick=True, workers=2, scheduler="tcp://x:1")
    with pytest.raises(ValueError, match="workers must be >= 1"):
        reproduce("gentile-table6", tmp_path / "x", quick=True, workers=0)
    args = ["reproduce", "gentile-table6", "--quick", "--out", str(tmp_path / "y")]
    assert main([*args, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "exclude each other" in capsys.readouterr().err


def test_prediction_over_dask_arrays_on_a_cluster(dask_client):
    import dask.array as da
    import numpy as np
    from conftest import make_blobs_pm

    from marginkit import KernelALMAClassifier, PUMMAClassifier
    from marginkit import distributed as md

    X, y = make_blobs_pm(n=600, d=5, n_classes=3, seed=3)
    models = [
        PUMMAClassifier(shuffle=False, lam=1.0, max_iter=20, output="avg"),
        KernelALMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.5, max_iter=2, output="voted", alpha=1.0
        ),
    ]
    for model in models:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        dX = da.from_array(X, chunks=(150, 2))  # column blocks are joined first
        np.testing.assert_array_equal(md.predict(model, dX).compute(), model.predict(X))
        np.testing.assert_allclose(
            md.decision_function(model, dX).compute(), model.decision_function(X)
        )
        result = md.evaluate(model, dX, y)
        assert result["n_samples"] == 600
        assert result["error"] == pytest.approx(np.mean(model.predict(X) != y))
    with pytest.raises(TypeError, match="expected a dask array"):
        md.predict(models[0], X)
    with pytest.raises(ValueError, match="expected a 2-d dask array"):
        md.predict(models[0], da.zeros(5))


def odd_start(a):
    """A copy of ``a`` whose data start one byte past an aligned address, as an array
    that dask deserialises from a message may."""
    buf = np.empty(a.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(buf.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


@pytest.mark.exactness
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(
    "est",
    [
        ALMAClassifier(shuffle=False, alpha=0.9, max_iter=2),
        ALMAClassifier(shuffle=False, p="log", max_iter=2),
        KernelALMAClassifier(shuffle=False, max_iter=2, block_size=40),
    ],
    ids=["alma2", "almalog", "kernel"],
)
def test_rows_that_start_at_any_byte(est, sparse):
    """Rows as a dask worker or client may receive them, starting at an odd byte, give
    the model of aligned ones (they are copied: OpenBLAS's SSE kernels, under
    OPENBLAS_CORETYPE=Prescott, crashed on them in the compiled passes)."""
    X, y = make_blobs_pm(n=150, d=6, seed=4)
    if sparse:
        A = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
        Xo = sp.csr_matrix(
            (odd_start(A.data), odd_start(A.indices), odd_start(A.indptr)), shape=A.shape
        )
    else:
        A, Xo = X, odd_start(X)
    a, b = clone(est).fit(A, y), clone(est).fit(Xo, y)
    assert a.n_corrections_ == b.n_corrections_
    assert a.decision_function(A).tobytes() == b.decision_function(Xo).tobytes()
