"""The bias coordinate of ``fit_intercept`` (``intercept_scaling``) and the passes'
``n_iter_no_change``: what each value gives, the summaries of the norms it is read
from, the Perceptron's bound with any coordinate, and the errors."""

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from reference import bias_coordinate, pnorm
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import (
    ALMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    ROMMAClassifier,
)
from marginkit._rows import DataSummary, Norms, row_norms_p

LINEAR = [ALMAClassifier, PerceptronClassifier, ROMMAClassifier, MarginPerceptronClassifier]


def blobs(n=200, d=5, seed=0, shift=3.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, d)) + shift * y[:, None]
    return X, y


@pytest.mark.parametrize("cls", LINEAR)
@pytest.mark.parametrize("scaling", ["rms", "2rms", "max", 0.75])
def test_the_bias_coordinate_is_the_one_asked(cls, scaling):
    X, y = blobs()
    est = cls(intercept_scaling=scaling, max_iter=2, tol=None, random_state=0).fit(X, y)
    p = getattr(est, "p_", 2.0)
    assert math.isclose(est.R_, bias_coordinate(X, p, scaling), rel_tol=1e-12)


def test_rms_is_the_root_mean_square_p_norm():
    X, y = blobs(d=8)
    for p in (2.0, 3.0, 6.0):
        est = ALMAClassifier(p=p, max_iter=1, random_state=0).fit(X, y)
        norms = [pnorm(x, p) for x in X]
        assert math.isclose(est.R_, math.sqrt(np.mean(np.square(norms))), rel_tol=1e-12)


def test_one_outlying_row_moves_rms_by_at_most_its_norm_over_root_n():
    """The issue's case: one row of outlying norm sets the papers' R for every row; the
    root mean square moves by at most its norm / sqrt(n)."""
    X, y = blobs(n=400)
    far = np.vstack([X, 300.0 * np.ones((1, X.shape[1]))])
    yy = np.append(y, 1)
    before = PerceptronClassifier(max_iter=1).fit(X, y).R_
    after = PerceptronClassifier(max_iter=1).fit(far, yy).R_
    assert after - before <= np.linalg.norm(far[-1]) / math.sqrt(far.shape[0]) + 1e-9
    papers = PerceptronClassifier(intercept_scaling="max", max_iter=1).fit(far, yy).R_
    assert papers == pytest.approx(np.linalg.norm(far[-1]))
    assert after < papers / 10


def test_zero_rows_give_a_coordinate_of_one():
    X = np.zeros((6, 3))
    y = np.array([0, 1] * 3)
    for scaling in ("rms", "2rms", "max"):
        assert PerceptronClassifier(intercept_scaling=scaling, max_iter=1).fit(X, y).R_ == 1.0


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1.0, 1e150, 1e300])
def test_norms_of_any_scale_sum_without_overflow(scale):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 4)) * scale
    norms = row_norms_p(X, 2.0)
    whole = Norms.of(norms)
    parts = Norms.of(norms[:7]) + Norms.of(norms[7:30]) + Norms() + Norms.of(norms[30:])
    assert whole.n == parts.n == 50
    assert whole.top == parts.top == norms.max()
    # the chunks change no bit
    assert whole.rms == parts.rms == DataSummary.of(X).norms(2.0).rms
    want = math.sqrt(np.mean(np.square(norms / scale))) * scale
    assert math.isclose(whole.rms, want, rel_tol=1e-14)
    assert Norms().rms == 0.0 and Norms.of([0.0, 0.0]).rms == 0.0


def test_norms_of_rows_of_many_scales_in_any_chunks_give_the_same_bits():
    rng = np.random.default_rng(3)
    norms = np.exp(rng.uniform(-300, 300, 2000))  # 260 binades
    rng.shuffle(norms)
    whole = Norms.of(norms)
    for cuts in ([5, 700, 701, 1999], [1000], list(range(0, 2000, 37))):
        parts = sum((Norms.of(c) for c in np.split(norms, cuts)), Norms())
        assert parts.rms == whole.rms and parts.top == whole.top
    big = norms.max()
    assert math.isclose(whole.rms, big * math.sqrt(np.mean((norms / big) ** 2)), rel_tol=1e-9)


def test_the_bias_is_the_same_dense_and_sparse_and_at_any_feature_scale():
    X, y = blobs()
    dense = PerceptronClassifier(max_iter=3, random_state=0).fit(X, y)
    sparse = PerceptronClassifier(max_iter=3, random_state=0).fit(sp.csr_matrix(X), y)
    assert dense.R_ == pytest.approx(sparse.R_, rel=1e-14)
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(X))
    big = PerceptronClassifier(max_iter=3, random_state=0).fit(X * 2.0**600, y)
    assert big.R_ == pytest.approx(dense.R_ * 2.0**600, rel=1e-14)
    np.testing.assert_array_equal(big.predict(X * 2.0**600), dense.predict(X))


def test_a_streamed_fit_takes_the_coordinate_of_the_whole_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from marginkit.streaming import fit_file

    X, y = blobs(n=90)
    path = tmp_path / "rows.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    whole = PerceptronClassifier(max_iter=2, shuffle=False).fit(X, y)
    streamed = fit_file(PerceptronClassifier(max_iter=2), path, chunk_size=17, n_features=5)
    assert streamed.R_ == pytest.approx(whole.R_, rel=1e-12)
    np.testing.assert_allclose(
        streamed.decision_function(X), whole.decision_function(X), rtol=1e-9
    )


@pytest.mark.parametrize("scaling", ["rms", "2rms", "max", 0.3, 5.0])
def test_the_perceptron_bound_holds_with_any_bias_coordinate(scaling):
    """Novikoff's bound on the augmented rows (x, -c): with (u, b), ||u|| = 1, of margin
    gamma = min y (u . x + b), the augmented separator (u, -b / c) has margin
    gamma / sqrt(1 + b^2 / c^2) on rows of radius sqrt(R^2 + c^2), so the corrections
    of all passes together are at most (R^2 + c^2)(1 + b^2 / c^2) / gamma^2."""
    rng = np.random.default_rng(5)
    u = np.array([0.6, -0.8, 0.0])
    b = -2.0
    X = rng.uniform(-3, 3, (600, 3)) + np.array([2.0, -1.0, 0.5])
    s = X @ u + b
    keep = np.abs(s) > 0.3
    X, y = X[keep], (s[keep] > 0).astype(int)
    gamma = np.min(np.abs(X @ u + b))
    est = PerceptronClassifier(
        intercept_scaling=scaling, max_iter=50, tol=None, output="last", shuffle=False
    ).fit(X, y)
    c, R = est.R_, np.max(np.linalg.norm(X, axis=1))
    bound = (R**2 + c**2) * (1 + b**2 / c**2) / gamma**2
    assert est.score(X, y) == 1.0
    assert 0 < est.n_corrections_ <= bound


@pytest.mark.parametrize("cls", LINEAR)
def test_a_bias_coordinate_out_of_float64_is_refused(cls):
    """... before anything changes: a fitted model keeps its model, a fresh one stays
    unfitted."""
    X, y = blobs()
    fresh = cls(intercept_scaling=1e160, max_iter=1)
    with pytest.raises(ValueError, match=r"intercept_scaling=1e\+160 is .* times the largest"):
        fresh.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(fresh, "classes_") and not hasattr(fresh, "R_")
    fitted = cls(max_iter=1, random_state=0).fit(X, y)
    before = fitted.decision_function(X)
    fitted.set_params(intercept_scaling=1e-160)
    with pytest.raises(ValueError, match=r"intercept_scaling=1e-160 is .* times the largest"):
        fitted.fit(X[:50], 1 - y[:50])
    np.testing.assert_array_equal(fitted.decision_function(X), before)


@pytest.mark.parametrize("cls", LINEAR)
@pytest.mark.parametrize("value", ["median", 0.0, -1.0, None, "1.0"])
def test_an_unknown_intercept_scaling_is_refused(cls, value):
    X, y = blobs(n=20)
    with pytest.raises(InvalidParameterError, match="intercept_scaling"):
        cls(intercept_scaling=value).fit(X, y)


def corrections_per_pass(cls, X, y, **params):
    made = []

    def record(est, epoch):
        made.append(int(est.n_corrections_) - sum(made))

    est = cls(random_state=0, **params).fit(X, y, callback=record)
    return est, made


def passes_by_the_rule(made, n, tol, patience):
    """The passes ``tol`` and ``n_iter_no_change`` make, from the corrections of each
    pass (one problem): they end after ``patience`` passes in a row that do not fall
    below the fewest before by more than tol * n, or after a pass without any."""
    fewest, since = math.inf, 0
    for k, m in enumerate(made, 1):
        improving = m < fewest - tol * n
        fewest = min(fewest, m)
        since = 0 if improving else since + 1
        if m == 0 or since >= patience:
            return k
    return len(made)


@pytest.mark.parametrize("cls", [ALMAClassifier, PerceptronClassifier, ROMMAClassifier])
@pytest.mark.parametrize("patience", [1, 2, 5])
def test_n_iter_no_change_passes_in_a_row_end_the_passes(cls, patience):
    """On data no hyperplane separates (labels at random), the passes' corrections stop
    falling; the passes end where the rule applied to the curve of a 40-pass fit says."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((150, 4))
    y = rng.integers(0, 2, 150)
    # ROMMA's soft margin ends its passes on its hypothesis's growth
    # (tests/test_romma_soft_margin.py); the corrections decide with the hard margin
    hard = {"lam": 0.0} if cls is ROMMAClassifier else {}
    _, curve = corrections_per_pass(cls, X, y, max_iter=40, tol=None, **hard)
    est, made = corrections_per_pass(cls, X, y, max_iter=40, n_iter_no_change=patience, **hard)
    assert made == curve[: len(made)]
    assert est.n_iter_ == len(made) == passes_by_the_rule(curve, 150, 1e-3, patience)
    assert est.n_iter_ < 40


def test_a_pass_without_correction_ends_the_passes_at_once():
    X, y = blobs(shift=8.0)
    est, made = corrections_per_pass(PerceptronClassifier, X, y, n_iter_no_change=5)
    assert made[-1] == 0 and all(m > 0 for m in made[:-1])


def test_a_model_saved_before_keeps_the_papers_bias_and_its_passes():
    """A pickle without the two parameters (marginkit 0.1's) loads with the values that
    do what it did: the largest norm, and passes that end at the first that does not
    improve."""
    est = PerceptronClassifier(max_iter=3).fit(*blobs())
    state = dict(est.__getstate__())
    del state["intercept_scaling"], state["n_iter_no_change"]
    old = PerceptronClassifier.__new__(PerceptronClassifier)
    old.__setstate__(state)
    assert old.intercept_scaling == "max" and old.n_iter_no_change == 1
    again = pickle.loads(pickle.dumps(old))
    np.testing.assert_array_equal(again.predict(blobs()[0]), est.predict(blobs()[0]))
