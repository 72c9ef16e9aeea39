"""Write the checkpoint of marginkit 0.1 that tests/test_checkpoint_files_of_0_1.py
resumes: the file a fit with ``checkpoint`` leaves, its progress included (the orders
of its epochs, ``marginkit._base.EpochOrders`` in 0.1), as skops and as a pickle, and
the decision values of its model.

Run with marginkit 0.1 on the path (the files name its classes where 0.1 had them):

    PYTHONPATH=<marginkit 0.1>/src python tests/data/checkpoints/generate.py
"""

import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np

import marginkit

HERE = Path(__file__).resolve().parent


def data():
    """The training data: 40 rows of 4 features, two classes."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 4))
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 1.5]) > 0, 1, -1)
    return X, y


def alma():
    """The estimator of the checkpoint: shuffled epochs, so that it holds their orders."""
    return marginkit.ALMAClassifier(p=3, shuffle=True, random_state=0, max_iter=3, tol=None)


def main():
    X, y = data()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.skops"
        est = alma().fit(X, y, checkpoint=path)
        shutil.copy(path, HERE / "alma_0.1.skops")
        with open(HERE / "alma_0.1.pkl", "wb") as f:
            pickle.dump(marginkit.load(path), f)
    np.save(HERE / "alma_0.1_decisions.npy", est.decision_function(X))


if __name__ == "__main__":
    main()
