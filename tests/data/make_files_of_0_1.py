"""Write the model files of marginkit 0.1 that tests/test_files_of_0_1.py loads.

Run with marginkit 0.1 on the path (the files name its classes where 0.1 had them):

    PYTHONPATH=<marginkit 0.1>/src python tests/data/make_files_of_0_1.py
"""

import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np

import marginkit

HERE = Path(__file__).resolve().parent


def data():
    """The training data of every file: 40 rows of 4 features, two classes."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 4))
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 1.5]) > 0, 1, -1)
    return X, y


def alma():
    return marginkit.ALMAClassifier(p=3, shuffle=True, random_state=0, max_iter=3, tol=None)


def models():
    return {
        "kernel_alma": marginkit.KernelALMAClassifier(kernel="rbf", gamma=0.5, max_iter=2),
        "pumma": marginkit.PUMMAClassifier(p=3, max_iter=5),
        "kernel_romma": marginkit.KernelROMMAClassifier(aggressive=True, gamma=0.5, max_iter=2),
    }


def main():
    X, y = data()
    expected = {}
    for name, est in models().items():
        est.fit(X, y)
        marginkit.save(est, HERE / f"{name}_0.1.skops")
        expected[name] = est.decision_function(X)
    # a checkpoint: the file a fit with checkpoint leaves, its progress included (the
    # orders of its epochs, marginkit._base.EpochOrders in 0.1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.skops"
        est = alma().fit(X, y, checkpoint=path)
        shutil.copy(path, HERE / "alma_checkpoint_0.1.skops")
        expected["alma_checkpoint"] = est.decision_function(X)
        with open(HERE / "alma_checkpoint_0.1.pkl", "wb") as f:
            pickle.dump(marginkit.load(path), f)
    np.savez(HERE / "decisions_0.1.npz", **expected)


if __name__ == "__main__":
    main()
