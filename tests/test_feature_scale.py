"""Features at any scale a float64 holds: an algorithm that normalises its instances
(ALMA) makes, on the data times c, the corrections and predictions it makes on the data
(the instances scaled by a power of two into [0.5, 1) before the compiled pass sees
them), from 1e-300 to 1e300."""

import numpy as np
import pytest
import scipy.sparse as sp

from marginkit import ALMAClassifier
from marginkit._base import UNIT_RANGE, unit_scaled

#: 1e-300 to 1e300 in steps of 1e50, and powers of two at the ends of the range
SCALES = [10.0**k for k in range(-300, 301, 50)] + [2.0**-1000, 2.0**1000, 3e-250, 7e250]


def noisy(n=300, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, :3].sum(axis=1) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("p", [2.0, 50.0])
def test_alma_is_the_same_at_any_feature_scale(p, fit_intercept, sparse):
    X, y = noisy()
    wrap = sp.csr_matrix if sparse else np.asarray
    params = {"alpha": 0.5, "p": p, "fit_intercept": fit_intercept, "max_iter": 3}
    params.update(tol=None, keep_corrections=True, output="last")
    base = ALMAClassifier(**params).fit(wrap(X), y)
    want = {out: base.set_params(output=out).decision_function(wrap(X)) for out in OUTPUTS}
    for c in SCALES:
        Xc = wrap(X * c)
        clf = ALMAClassifier(**params).fit(Xc, y)
        assert clf.n_corrections_ == base.n_corrections_, c
        for out in OUTPUTS:
            got = clf.set_params(output=out).decision_function(Xc)
            np.testing.assert_allclose(got, want[out], rtol=1e-6, atol=1e-12, err_msg=f"{c}")
            np.testing.assert_array_equal(clf.predict(Xc), base.set_params(output=out).predict(X))


OUTPUTS = ("last", "avg", "voted")


def test_partial_fit_batches_of_other_scales():
    """Each batch is scaled on its own: batches of scales 1e-300 and 1e300 teach what
    the same batches at scale 1 do."""
    X, y = noisy(n=400)
    params = {"alpha": 0.5, "p": 20.0, "fit_intercept": False, "output": "last"}
    ref = ALMAClassifier(**params)
    mixed = ALMAClassifier(**params)
    classes = np.unique(y)
    for k, scale in enumerate([1e-300, 1e300, 1.0, 1e-150]):
        rows = slice(100 * k, 100 * (k + 1))
        ref.partial_fit(X[rows], y[rows], classes=classes)
        mixed.partial_fit(X[rows] * scale, y[rows], classes=classes)
    assert mixed.n_corrections_ == ref.n_corrections_
    np.testing.assert_array_equal(mixed.predict(X * 1e200), ref.predict(X))


def test_unit_scaled_is_exact_and_leaves_ordinary_data_alone():
    X, _ = noisy(n=20, d=4)
    same, aug = unit_scaled(X, -3.0)
    assert same is X and aug == -3.0
    for c in [2.0**-500, 2.0 ** (UNIT_RANGE + 1), 2.0**900]:
        scaled, aug = unit_scaled(X * c, -3.0 * c)
        peak = max(np.abs(scaled).max(), abs(aug))
        assert 0.5 <= peak < 1.0
        ratio = scaled / X  # one power of two, exactly
        assert np.all(ratio == ratio.flat[0]) and aug / -3.0 == ratio.flat[0]
        sparse, aug_s = unit_scaled(sp.csr_matrix(X * c), -3.0 * c)
        np.testing.assert_array_equal(sparse.toarray(), scaled)
        assert aug_s == aug
