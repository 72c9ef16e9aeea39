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

ESTIMATORS = [
    ALMAClassifier(),
    ALMAClassifier(p=6.0, alpha=0.5, output="avg", n_epochs=3, fit_intercept=True),
    ALMAClassifier(p="log", alpha=0.9, output="voted", n_epochs=2),
    KernelALMAClassifier(),
    KernelALMAClassifier(kernel="poly", degree=2, alpha=0.8, output="avg", n_epochs=2),
    KernelALMAClassifier(kernel="poly_rbf", degree=3, output="voted", block_size=7),
    PerceptronClassifier(fit_intercept=True, n_epochs=5, output="avg"),
    PerceptronClassifier(output="voted", n_epochs=2),
    ROMMAClassifier(fit_intercept=True, n_epochs=5),
    ROMMAClassifier(aggressive=True, output="voted", n_epochs=3, shuffle=True, random_state=0),
    MarginPerceptronClassifier(fit_intercept=True, max_iter=20),
    KernelPerceptronClassifier(kernel="poly", degree=2, output="voted", n_epochs=3),
    KernelROMMAClassifier(aggressive=True, output="avg", n_epochs=3, block_size=5),
    KernelROMMAClassifier(normalize=True, kernel="poly_rbf", degree=2, n_epochs=2),
    KernelPUMMAClassifier(lam=1.0, max_epochs=10, block_size=9),
    KernelPUMMAClassifier(kernel="poly", degree=2, output="voted", max_epochs=5),
    PUMMAClassifier(lam=1.0, max_epochs=20),
    PUMMAClassifier(p=3.0, delta=0.3, output="voted", max_epochs=5),
    PUMMAClassifier(p="log", lam=0.5, output="avg", max_epochs=5, shuffle=True, random_state=0),
]

# the checks' small random data sets are not separable: PUMMA and the margin Perceptron
# say so, as they should, within their few epochs
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

NO_BIAS = (
    "ALMA_p as published has no bias term (fit_intercept=False by default): the check's "
    "three standardised blobs are not separable one-vs-rest by hyperplanes through the "
    "origin, so one pass reaches about 59% training accuracy (fit_intercept=True with a few "
    "epochs passes this check, see the second estimator here)"
)


def expected_failed_checks(estimator):
    if isinstance(estimator, ALMAClassifier) and not estimator.fit_intercept:
        if estimator.n_epochs == 1 and estimator.output == "last":
            return {"check_classifiers_train": NO_BIAS}
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
