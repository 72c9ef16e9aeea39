"""Random shapes, dtypes and values through the public API (hypothesis).

Whatever comes in, an estimator either fits and then predicts finite scores, or raises
scikit-learn's exception types (ValueError, TypeError) with a message; it never hangs,
crashes the compiled code, or returns NaN.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
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

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz test needs hypothesis")
st = hypothesis.strategies

FACTORIES = [
    lambda: ALMAClassifier(
        shuffle=False, p=4.0, alpha=0.7, output="avg", fit_intercept=True, max_iter=1
    ),
    lambda: ALMAClassifier(
        shuffle=False, p="log", output="voted", max_iter=2, alpha=1.0, fit_intercept=False
    ),
    lambda: PerceptronClassifier(shuffle=False, max_iter=2, output="voted", fit_intercept=False),
    lambda: ROMMAClassifier(
        shuffle=False, aggressive=True, fit_intercept=True, output="last", max_iter=1
    ),
    lambda: MarginPerceptronClassifier(
        shuffle=False, max_iter=5, output="last", fit_intercept=False
    ),
    lambda: PUMMAClassifier(shuffle=False, lam=0.5, max_iter=3, output="last"),
    lambda: PUMMAClassifier(shuffle=False, p=3.0, max_iter=3, output="avg", lam=0.0),
    lambda: KernelALMAClassifier(
        shuffle=False, kernel="poly", degree=3, block_size=3, output="voted", alpha=1.0, max_iter=1
    ),
    lambda: KernelPerceptronClassifier(shuffle=False, kernel="rbf", max_iter=2, output="last"),
    lambda: KernelROMMAClassifier(
        shuffle=False, aggressive=True, kernel="linear", output="avg", max_iter=1
    ),
    lambda: KernelPUMMAClassifier(shuffle=False, lam=1.0, max_iter=3, block_size=4, output="last"),
]

VALUES = st.one_of(
    st.floats(-1e3, 1e3),
    st.sampled_from([0.0, 0.0, 1.0, -1.0, 1e-300, 1e150, -1e200, np.nan, np.inf, -np.inf]),
)


@st.composite
def problems(draw):
    n = draw(st.integers(1, 12))
    d = draw(st.integers(1, 5))
    X = np.array(draw(st.lists(VALUES, min_size=n * d, max_size=n * d))).reshape(n, d)
    labels = draw(st.sampled_from([[0, 1], [-1, 1], ["a", "b", "c"], [1.5, 2.5], [True, False]]))
    y = np.array(draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n)))
    kind = draw(st.sampled_from(["float64", "float32", "sparse", "int"]))
    if kind == "float32":
        X = X.astype(np.float32)
    elif kind == "int":
        X = np.nan_to_num(X, nan=0.0, posinf=9.0, neginf=-9.0).clip(-100, 100).astype(int)
    elif kind == "sparse":
        X = sp.csr_matrix(X)
    return X, y, draw(st.integers(0, len(FACTORIES) - 1))


@hypothesis.settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
    derandomize=True,
)
@hypothesis.given(problems())
def test_fit_and_predict_never_crash_or_return_nan(problem):
    X, y, which = problem
    est = FACTORIES[which]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            est.fit(X, y)
        except (ValueError, TypeError) as exc:
            assert str(exc)
            return
    scores = est.decision_function(X)
    assert np.all(np.isfinite(scores)), (type(est).__name__, scores)
    assert set(np.unique(est.predict(X))) <= set(np.unique(y))
