"""scikit-learn's estimator contract (sklearn.utils.estimator_checks)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

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

DEFAULTS = [
    ALMAClassifier(),
    KernelALMAClassifier(),
    PerceptronClassifier(),
    KernelPerceptronClassifier(),
    ROMMAClassifier(),
    KernelROMMAClassifier(),
    MarginPerceptronClassifier(),
    PUMMAClassifier(),
    KernelPUMMAClassifier(),
]

# other settings: the published algorithms and the other outputs and norms
ESTIMATORS = [
    ALMAClassifier(p=6.0, alpha=0.5, output="avg", max_iter=3, fit_intercept=True),
    ALMAClassifier(p="log", alpha=0.9, output="voted", max_iter=2, fit_intercept=False),
    KernelALMAClassifier(kernel="poly", degree=2, alpha=0.8, output="avg", max_iter=2),
    KernelALMAClassifier(kernel="poly_rbf", degree=3, output="voted", block_size=7),
    KernelALMAClassifier(alpha=1.0, max_iter=1, output="last"),
    PerceptronClassifier(fit_intercept=True, max_iter=5, output="avg"),
    PerceptronClassifier(output="voted", max_iter=2, fit_intercept=False),
    ROMMAClassifier(fit_intercept=True, max_iter=5, output="last"),
    ROMMAClassifier(aggressive=True, output="voted", max_iter=3, shuffle=True, random_state=0),
    MarginPerceptronClassifier(fit_intercept=True, max_iter=20, output="last"),
    KernelPerceptronClassifier(kernel="poly", degree=2, output="voted", max_iter=3),
    KernelROMMAClassifier(aggressive=True, output="avg", max_iter=3, block_size=5),
    KernelROMMAClassifier(normalize=True, kernel="poly_rbf", degree=2, max_iter=2),
    KernelPUMMAClassifier(lam=1.0, max_iter=10, block_size=9, output="last"),
    KernelPUMMAClassifier(kernel="poly", degree=2, output="voted", max_iter=5),
    PUMMAClassifier(lam=1.0, max_iter=20, output="last"),
    PUMMAClassifier(p=3.0, delta=0.3, output="voted", max_iter=5),
    PUMMAClassifier(p="log", lam=0.5, output="avg", max_iter=5, shuffle=True, random_state=0),
]

# the checks' small random data sets are not separable: PUMMA and the margin Perceptron
# say so, as they should, within their few epochs
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@parametrize_with_checks(DEFAULTS)
def test_sklearn_compatible_at_defaults(estimator, check):
    """Every estimator at its defaults, with no check expected to fail."""
    check(estimator)


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
