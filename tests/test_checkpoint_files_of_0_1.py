"""A checkpoint written by marginkit 0.1 (tests/data/checkpoints, made by its
generate.py) loads and resumes, as skops and as a pickle, though the class of its
epochs' orders has moved since (``marginkit._base.EpochOrders`` then,
``marginkit._checkpoints.EpochOrders`` now). The models of 0.1 are tests/test_compat.py's.
"""

import importlib.util
import pickle
import shutil
from pathlib import Path

import numpy as np

import marginkit
from marginkit._checkpoints import EpochOrders

DATA = Path(__file__).resolve().parent / "data" / "checkpoints"
_spec = importlib.util.spec_from_file_location("generate_checkpoints", DATA / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)
EXPECTED = np.load(DATA / "alma_0.1_decisions.npy")


def test_a_checkpoint_of_0_1_loads_and_resumes(tmp_path):
    """It loads, predicts as 0.1's model did, and a fit resumes from it to the model of
    0.1's uninterrupted fit, bit for bit: its epochs go on permuting the positions of
    the rows, where a fit begun today shuffles them sorted by content (another model)."""
    X, y = generate.data()
    saved = marginkit.load(DATA / "alma_0.1.skops")
    assert type(saved._resume["orders"]) is EpochOrders
    assert not saved._resume["orders"].by_content
    assert_as_written(saved.decision_function(X))
    path = tmp_path / "ckpt.skops"
    shutil.copy(DATA / "alma_0.1.skops", path)
    resumed = alma_of_0_1().fit(X, y, checkpoint=path)
    assert_as_written(resumed.decision_function(X))


def test_a_pickled_checkpoint_of_0_1_loads():
    """Pickles name classes by module path too: ``marginkit._base.EpochOrders`` still
    finds the class, and its orders are the permutations of the positions that 0.1's
    fit made."""
    X, _ = generate.data()
    with open(DATA / "alma_0.1.pkl", "rb") as f:
        est = pickle.load(f)
    orders = est._resume["orders"]
    assert type(orders) is EpochOrders
    again = EpochOrders(X.shape[0], 3, True, 0)
    for epoch in range(3):
        np.testing.assert_array_equal(orders[epoch], again[epoch])
    assert_as_written(est.decision_function(X))


def alma_of_0_1():
    """0.1's estimator in today's parameters: its bias coordinate was the largest norm,
    and its passes had no ``n_iter_no_change`` (what a model of 0.1 loads with)."""
    return generate.alma().set_params(intercept_scaling="max", n_iter_no_change=1)


def assert_as_written(values):
    """The decision values the file's writer saw, to the rounding of another CPU's BLAS
    kernel (the dense rows' products go through BLAS)."""
    np.testing.assert_allclose(values, EXPECTED, rtol=1e-9, atol=1e-15)
