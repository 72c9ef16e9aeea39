"""Every estimator under dask_ml.wrappers.Incremental, on a real LocalCluster.

Incremental calls partial_fit on the blocks of a dask array, one after another (on
the workers, the model passed from task to task); with ``shuffle_blocks=False`` that
is the model of partial_fit over the same blocks in order, here, which the tests
compare exactly.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm
from sklearn.exceptions import ConvergenceWarning

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

pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")
wrappers = pytest.importorskip("dask_ml.wrappers", reason="Incremental needs the 'dask' extra")
da = pytest.importorskip("dask.array")

ESTIMATORS = [
    ALMAClassifier(shuffle=False, p=4, alpha=0.8, fit_intercept=True, output="last", max_iter=1),
    PerceptronClassifier(shuffle=False, output="avg", max_iter=1, fit_intercept=False),
    ROMMAClassifier(shuffle=False, aggressive=True, fit_intercept=True, output="last", max_iter=1),
    MarginPerceptronClassifier(
        shuffle=False, gamma_guess=0.5, output="voted", fit_intercept=False
    ),
    PUMMAClassifier(shuffle=False, lam=0.5, delta=0.1, output="last"),
    KernelALMAClassifier(
        shuffle=False, gamma=0.3, output="voted", block_size=32, alpha=1.0, max_iter=1
    ),
    KernelPerceptronClassifier(
        shuffle=False, kernel="poly", degree=2, gamma=0.2, output="last", max_iter=1
    ),
    KernelROMMAClassifier(shuffle=False, gamma="scale", output="avg", max_iter=1),
    KernelPUMMAClassifier(shuffle=False, gamma=0.3, lam=0.5, output="last"),
]


def _serial(est, X, y, blocks, classes):
    from sklearn.base import clone

    model = clone(est)
    for lo, hi in blocks:
        model.partial_fit(X[lo:hi], y[lo:hi], classes=classes)
    return model


#: The estimators fitted on sparse blocks in make test (each estimator on dense blocks
#: there, but for these two, which tests/conftest.py's HEAVY moves to make test-all);
#: the others' sparse fits are in make test-all.
SPARSE_IN_MAKE_TEST = {"ALMAClassifier", "PerceptronClassifier"}


@pytest.mark.exactness
@pytest.mark.parametrize(
    "kind,est",
    [
        pytest.param(
            kind,
            est,
            id=f"{kind}-{type(est).__name__}",
            marks=[pytest.mark.slow]
            if kind == "sparse" and type(est).__name__ not in SPARSE_IN_MAKE_TEST
            else [],
        )
        for kind in ("dense", "sparse")
        for est in ESTIMATORS
    ],
)
def test_incremental_equals_partial_fit_over_the_blocks(dask_client, est, kind):
    X, y = make_blobs_pm(n=360, d=6, n_classes=3, seed=4)
    classes = np.unique(y)
    dX = da.from_array(X, chunks=(100, 6))  # blocks of 100, 100, 100 and 60 rows
    dy = da.from_array(y, chunks=100)
    if kind == "sparse":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
        dX = da.from_array(X.toarray(), chunks=(100, 6)).map_blocks(sp.csr_matrix)
    blocks = [(0, 100), (100, 200), (200, 300), (300, 360)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        inc = wrappers.Incremental(est, shuffle_blocks=False, scoring="accuracy")
        inc.fit(dX, dy, classes=classes)
        serial = _serial(est, X, y, blocks, classes)
    model = inc.estimator_
    # the decisions exactly; the numbers to rounding: a dense row's margin is BLAS's
    # ddot, whose rounding under some CPU kernels (OpenBLAS's Prescott) follows the
    # row's alignment in memory, which differs between the workers' blocks and the
    # slices here (seen once in a few runs, in the last bits of PUMMA's coefficients)
    assert model.n_corrections_ == serial.n_corrections_
    np.testing.assert_array_equal(model.n_corrections_per_class_, serial.n_corrections_per_class_)
    assert model.n_trials_ == serial.n_trials_ == 360
    np.testing.assert_array_equal(model.predict(X), serial.predict(X))
    np.testing.assert_allclose(
        model.decision_function(X), serial.decision_function(X), rtol=1e-12, atol=1e-12
    )
    # prediction and scoring through the wrapper run block by block on the cluster
    np.testing.assert_array_equal(inc.predict(dX).compute(), serial.predict(X))
    assert inc.score(dX, dy) == pytest.approx(serial.score(X, y))


def test_incremental_runs_more_epochs_by_refitting(dask_client):
    # a second fit of the wrapper carries on from the first: two epochs
    X, y = make_blobs_pm(n=300, d=5, seed=2)
    dX, dy = da.from_array(X, chunks=(75, 5)), da.from_array(y, chunks=75)
    inc = wrappers.Incremental(
        ALMAClassifier(shuffle=False, alpha=0.9, output="last", max_iter=1, fit_intercept=False),
        shuffle_blocks=False,
    )
    inc.fit(dX, dy, classes=[0, 1])
    inc.partial_fit(dX, dy, classes=[0, 1])
    two = ALMAClassifier(
        shuffle=False, alpha=0.9, max_iter=2, output="last", fit_intercept=False
    ).fit(X, y)
    np.testing.assert_array_equal(inc.estimator_.coef_, two.coef_)


def test_incremental_reports_partial_fit_errors(dask_client):
    X, y = make_blobs_pm(n=200, d=4, seed=1)
    dX, dy = da.from_array(X, chunks=(50, 4)), da.from_array(y, chunks=50)
    inc = wrappers.Incremental(
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False),
        shuffle_blocks=False,
    )
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        inc.fit(dX, dy)
    with pytest.raises(ValueError, match=r"y contains labels \[1\] that are not in classes"):
        inc.fit(dX, dy, classes=[0, 2])
