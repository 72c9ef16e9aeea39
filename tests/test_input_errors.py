"""Bad input gets scikit-learn's exception and message from every estimator."""

import numpy as np
import pytest

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

ESTIMATORS = [
    ALMAClassifier,
    KernelALMAClassifier,
    PerceptronClassifier,
    KernelPerceptronClassifier,
    ROMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
    KernelPUMMAClassifier,
]

CASES = {
    "empty": (np.zeros((0, 3)), np.zeros(0), "Found array with 0 sample"),
    "strings": (
        np.array([["a", "b"], ["c", "d"]], dtype=object),
        np.array([0, 1]),
        "could not convert string to float",
    ),
    "mixed labels": (
        np.arange(6.0).reshape(3, 2),
        np.array([1, "a", 2], dtype=object),
        "Unknown label type",
    ),
    "one sample": (np.array([[1.0, 2.0]]), np.array([1]), "number of classes has to be greater"),
    "three dimensions": (np.zeros((2, 2, 2)), np.array([0, 1]), "Found array with dim 3"),
    "2-d targets": (np.zeros((3, 2)), np.zeros((3, 2)), "y should be a 1d array"),
    "lengths": (np.zeros((3, 2)), np.array([0, 1]), "inconsistent numbers of samples"),
    "complex": (np.array([[1 + 1j, 2.0]] * 2), np.array([0, 1]), "Complex data not supported"),
    "infinity": (np.array([[np.inf, 1.0], [0.0, 1.0]]), np.array([0, 1]), "contains infinity"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_bad_input(cls, case):
    X, y, message = CASES[case]
    with pytest.raises(ValueError, match=message):
        cls().fit(X, y)
