"""make_r_of_k: the r-of-k threshold data of Ishibashi, Hatano and Takeda (COLT 2008)."""

import numpy as np
import pytest
from scipy.stats import binom, chisquare

from marginkit.datasets import make_r_of_k

K = 16


def _relevant_ones(X, k=K):
    return (X[:, :k] == 1).sum(axis=1)


@pytest.mark.parametrize("balanced", [True, False])
@pytest.mark.parametrize("r", [1, 4, 8, 12, 16])
def test_labels_follow_the_rule(r, balanced):
    X, y = make_r_of_k(600, r=r, balanced=balanced, random_state=r)
    assert X.shape == (600, 100) and X.dtype == np.float64 and y.dtype == np.int64
    assert set(np.unique(X)) <= {-1.0, 1.0}
    np.testing.assert_array_equal(y, np.where(_relevant_ones(X) >= r, 1, -1))


@pytest.mark.parametrize("n_samples", [1, 2, 7, 1000])
@pytest.mark.parametrize("r", [1, 9, 16])
def test_exact_balance(n_samples, r):
    _, y = make_r_of_k(n_samples, r=r, random_state=0)
    assert (y == -1).sum() == n_samples // 2
    assert (y == 1).sum() == n_samples - n_samples // 2


def test_classes_are_interleaved():
    _, y = make_r_of_k(1000, random_state=0)
    # random order, not all positives first
    assert 0.3 < (y[:500] == 1).mean() < 0.7


def test_reproducible_with_random_state():
    a = make_r_of_k(300, r=5, random_state=3)
    b = make_r_of_k(300, r=5, random_state=3)
    c = make_r_of_k(300, r=5, random_state=4)
    d = make_r_of_k(300, r=5, random_state=np.random.RandomState(3))
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    for u, v in zip(a, d, strict=True):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("r", range(1, K + 1))
def test_target_separates_with_margin_one(r):
    X, y, w, b = make_r_of_k(400, r=r, random_state=r, return_coef=True)
    np.testing.assert_array_equal(w, np.r_[np.ones(K), np.zeros(100 - K)])
    assert b == K + 1 - 2 * r
    assert np.all(y * (X @ w + b) >= 1)
    # the hyperplane lies halfway between the two closest levels of w . x
    at_r = np.r_[np.ones(r), -np.ones(K - r), np.ones(100 - K)]
    below = at_r.copy()
    below[r - 1] = -1.0
    assert at_r @ w + b == 1 and below @ w + b == -1


def test_bias_is_largest_at_the_ends():
    biases = [make_r_of_k(2, r=r, random_state=0, return_coef=True)[3] for r in range(1, K + 1)]
    assert biases[0] == K - 1 and biases[-1] == -(K - 1)
    assert min(abs(b) for b in biases) == 1


def test_r_equals_k_positives_are_the_all_plus_pattern():
    X, y = make_r_of_k(2000, r=K, random_state=0)
    assert np.all(X[y == 1, :K] == 1)
    # negatives: anything but the all +1 pattern; every relevant feature varies
    assert np.all(_relevant_ones(X[y == -1]) < K)
    assert np.all(np.ptp(X[y == -1, :K], axis=0) == 2)


def test_r_one_negatives_are_the_all_minus_pattern():
    X, y = make_r_of_k(2000, r=1, random_state=0)
    assert np.all(X[y == -1, :K] == -1)
    assert np.all(_relevant_ones(X[y == 1]) >= 1)


@pytest.mark.parametrize("r", [1, 8, 16])
def test_irrelevant_features_are_fair_coins_in_each_class(r):
    n = 8000
    X, y = make_r_of_k(n, r=r, random_state=1)
    for label in (1, -1):
        means = X[y == label, K:].mean(axis=0)
        # each mean has standard deviation 1 / sqrt(n / 2)
        assert np.abs(means).max() < 5 / np.sqrt(n / 2)


def _conditional_binomial(levels, k=K):
    p = binom.pmf(levels, k, 0.5)
    return p / p.sum()


def _chisquare_pvalue(observed, expected):
    """Chi-square p-value after merging neighbouring cells until each expects >= 5."""
    obs, exp, o, e = [], [], 0.0, 0.0
    for oi, ei in zip(observed, expected, strict=True):
        o, e = o + oi, e + ei
        if e >= 5:
            obs.append(o)
            exp.append(e)
            o, e = 0.0, 0.0
    obs[-1] += o
    exp[-1] += e
    if len(obs) < 2:
        return 1.0
    return chisquare(obs, exp).pvalue


@pytest.mark.parametrize("r", [1, 5, 8, 12])
def test_count_of_relevant_ones_follows_the_conditional_binomial(r):
    n = 20000
    X, y = make_r_of_k(n, r=r, random_state=7)
    s = _relevant_ones(X)
    for label, levels in ((1, np.arange(r, K + 1)), (-1, np.arange(0, r))):
        observed = np.bincount(s[y == label] - levels[0], minlength=levels.size)
        assert observed.size == levels.size
        expected = (y == label).sum() * _conditional_binomial(levels)
        assert _chisquare_pvalue(observed, expected) > 1e-3


@pytest.mark.parametrize("r", [5, 12])
def test_relevant_ones_fall_on_random_positions(r):
    # given the count, the +1s are a uniform subset: every relevant feature has
    # the same class-conditional mean 2 E[s | class] / k - 1
    n = 20000
    X, y = make_r_of_k(n, r=r, random_state=11)
    for label, levels in ((1, np.arange(r, K + 1)), (-1, np.arange(0, r))):
        rows = X[y == label, :K]
        mean_s = levels @ _conditional_binomial(levels)
        sd = 1 / np.sqrt(rows.shape[0])
        np.testing.assert_allclose(rows.mean(axis=0), 2 * mean_s / K - 1, atol=5 * sd)


def test_unbalanced_draw_is_uniform_on_the_cube():
    n = 20000
    X, y = make_r_of_k(n, r=10, balanced=False, random_state=2)
    p_pos = binom.sf(9, K, 0.5)
    assert abs((y == 1).mean() - p_pos) < 5 * np.sqrt(p_pos * (1 - p_pos) / n)
    assert np.abs(X.mean(axis=0)).max() < 5 / np.sqrt(n)
    observed = np.bincount(_relevant_ones(X), minlength=K + 1)
    assert _chisquare_pvalue(observed, n * binom.pmf(np.arange(K + 1), K, 0.5)) > 1e-3


def test_r_one_is_fast_and_balanced():
    # under the uniform distribution only 2^-16 of the cube is negative
    X, y = make_r_of_k(20000, r=1, random_state=0)
    assert (y == -1).sum() == 10000


def test_other_sizes():
    X, y, w, b = make_r_of_k(50, n_features=5, k=5, r=3, random_state=0, return_coef=True)
    assert X.shape == (50, 5) and w.sum() == 5 and b == 0
    assert np.all(y * (X @ w + b) >= 1)
    X, y = make_r_of_k(20, n_features=40, k=1, r=1, random_state=0)
    np.testing.assert_array_equal(y, X[:, 0].astype(int))


def test_noise_flips_labels_and_keeps_instances():
    X0, y0 = make_r_of_k(5000, r=4, random_state=5)
    X1, y1 = make_r_of_k(5000, r=4, noise=0.2, random_state=5)
    np.testing.assert_array_equal(X0, X1)
    flipped = (y0 != y1).mean()
    assert abs(flipped - 0.2) < 5 * np.sqrt(0.2 * 0.8 / 5000)
    _, y_all = make_r_of_k(100, r=4, noise=1.0, random_state=5)
    np.testing.assert_array_equal(y_all, -make_r_of_k(100, r=4, random_state=5)[1])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_samples": 0}, "The 'n_samples' parameter of make_r_of_k must be an int in the range"),
        ({"n_samples": 2.5}, "The 'n_samples' parameter of make_r_of_k must be an int"),
        ({"n_features": 0}, "The 'n_features' parameter of make_r_of_k must be an int"),
        ({"k": 0}, "The 'k' parameter of make_r_of_k must be an int in the range"),
        ({"r": 0}, "The 'r' parameter of make_r_of_k must be an int in the range"),
        ({"r": -1}, "The 'r' parameter of make_r_of_k must be an int in the range"),
        ({"k": 101}, r"The 'k' parameter of make_r_of_k must be <= n_features=100\. Got 101"),
        ({"n_features": 10}, r"'k' parameter of make_r_of_k must be <= n_features=10\. Got 16"),
        ({"r": 17}, r"The 'r' parameter of make_r_of_k must be <= k=16\. Got 17 instead"),
        ({"k": 4, "r": 5}, r"The 'r' parameter of make_r_of_k must be <= k=4\. Got 5 instead"),
        ({"noise": -0.1}, "The 'noise' parameter of make_r_of_k must be a float in the range"),
        ({"noise": 1.5}, "The 'noise' parameter of make_r_of_k must be a float in the range"),
        ({"balanced": "yes"}, "The 'balanced' parameter of make_r_of_k must be an instance of"),
        ({"random_state": "seed"}, "The 'random_state' parameter of make_r_of_k must be"),
        ({"return_coef": None}, "The 'return_coef' parameter of make_r_of_k must be"),
    ],
)
def test_invalid_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_r_of_k(**kwargs)
