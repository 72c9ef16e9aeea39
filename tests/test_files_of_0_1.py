"""Model files written by marginkit 0.1 (tests/data, made by make_files_of_0_1.py) load
and predict as they did, bit for bit, wherever the classes they name have moved since."""

import pickle
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import marginkit

DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(DATA))
from make_files_of_0_1 import alma, data, models  # noqa: E402

EXPECTED = np.load(DATA / "decisions_0.1.npz")


@pytest.mark.parametrize("name", sorted(models()))
def test_models_of_0_1_load_and_predict_the_same(name):
    X, _ = data()
    est = marginkit.load(DATA / f"{name}_0.1.skops")
    np.testing.assert_array_equal(est.decision_function(X), EXPECTED[name])


def test_a_checkpoint_of_0_1_naming_epoch_orders_in_base_resumes(tmp_path):
    """A checkpoint of 0.1 names the orders of its epochs ``marginkit._base.EpochOrders``
    (now in ``marginkit._checkpoints``): it loads, and a fit resumes from it to the model
    of an uninterrupted fit, the one 0.1 made."""
    from marginkit._checkpoints import EpochOrders

    X, y = data()
    saved = marginkit.load(DATA / "alma_checkpoint_0.1.skops")
    assert type(saved._resume["orders"]) is EpochOrders
    np.testing.assert_array_equal(saved.decision_function(X), EXPECTED["alma_checkpoint"])
    path = tmp_path / "ckpt.skops"
    shutil.copy(DATA / "alma_checkpoint_0.1.skops", path)
    resumed = alma().fit(X, y, checkpoint=path)
    np.testing.assert_array_equal(resumed.decision_function(X), EXPECTED["alma_checkpoint"])
    np.testing.assert_array_equal(
        alma().fit(X, y).decision_function(X), EXPECTED["alma_checkpoint"]
    )


def test_a_pickle_of_0_1_naming_epoch_orders_in_base_loads():
    """Pickles name classes by module path too: ``marginkit._base.EpochOrders`` still
    finds the class."""
    from marginkit._checkpoints import EpochOrders

    X, _ = data()
    with open(DATA / "alma_checkpoint_0.1.pkl", "rb") as f:
        est = pickle.load(f)
    orders = est._resume["orders"]
    assert type(orders) is EpochOrders
    again = EpochOrders(X.shape[0], 3, True, 0)
    for epoch in range(3):
        np.testing.assert_array_equal(orders[epoch], again[epoch])
    np.testing.assert_array_equal(est.decision_function(X), EXPECTED["alma_checkpoint"])
