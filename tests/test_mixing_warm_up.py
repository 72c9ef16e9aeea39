"""The first epoch's first rows of every shard learnt in sequence before the shards
learn in parallel (MixingClassifier's ``warm_up``): the sequence as one learner's pass,
the parallel rest worked out by hand, McDonald et al.'s bound with it, the sequence on a
cluster, and its refusals."""

import copy

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.utils._param_validation import InvalidParameterError

from marginkit import ALMAClassifier, PerceptronClassifier

distributed = pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")
dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from test_mixing import chunked, same_bits, separable_with_margin  # noqa: E402

from marginkit.distributed import MixingClassifier  # noqa: E402


@pytest.mark.parametrize(
    "make",
    [
        lambda: ALMAClassifier(shuffle=False, p=3.0, fit_intercept=True),
        lambda: PerceptronClassifier(shuffle=False),
    ],
    ids=["alma3-intercept", "perceptron"],
)
def test_a_warm_up_past_every_shard_is_the_serial_epoch(threads, make):
    """``warm_up`` at least every shard's rows: the first epoch is one learner's pass over
    the shards' rows in shard order, bit for bit; no mix is made."""
    X, y = make_blobs_pm(n=330, d=7, n_classes=3, seed=4, sparse_density=0.6)
    dX = da.concatenate([chunked(X[:200], 100), chunked(X[200:], 130)])  # 100, 100, 130
    serial = make().set_params(max_iter=1, tol=None).fit(X, y)
    for warm_up in [130, 10_000]:
        clf = MixingClassifier(make(), max_iter=1, tol=None, warm_up=warm_up, momentum="auto")
        clf.fit(dX, y)
        assert same_bits(clf.estimator_, serial)
        assert clf.n_mixes_ == 0
        np.testing.assert_array_equal(clf.n_corrections_per_epoch_.sum(), serial.n_corrections_)


@pytest.mark.parametrize("mixing", ["uniform", "corrections"])
def test_the_sequence_then_the_parallel_rest_by_hand(threads, mixing):
    """Two shards of 100 rows, ``warm_up=30``, one mix an epoch: shard 0's first 30 rows,
    then shard 1's first 30 from there (one learner); each shard's other 70 rows from
    that state; their mix. The second epoch has no sequence: both shards' 100 rows in
    parallel from the mix."""
    X, y = make_blobs_pm(n=200, d=5, seed=9)
    est = ALMAClassifier(shuffle=False, alpha=0.8, fit_intercept=False)
    clf = MixingClassifier(est, max_iter=2, tol=None, warm_up=30, mixing=mixing)
    clf.fit(chunked(X, 100), y)
    assert clf.n_mixes_ == 2
    one = MixingClassifier(est, max_iter=1, tol=None, warm_up=30, mixing=mixing)
    one.fit(chunked(X, 100), y)
    # the sequence
    chain = copy.deepcopy(est).partial_fit(X[0:30], y[0:30], classes=[0, 1])
    made_0 = chain.n_corrections_
    chain.partial_fit(X[100:130], y[100:130])
    made_1 = chain.n_corrections_ - made_0
    # the parallel rest, from the sequence's state
    shards = [copy.deepcopy(chain).partial_fit(X[a:b], y[a:b]) for a, b in [(30, 100), (130, 200)]]
    rest = [s.n_corrections_ - chain.n_corrections_ for s in shards]
    weights = [1, 1] if mixing == "uniform" else rest
    w = sum(c * s._states[0].last_weights() for c, s in zip(weights, shards, strict=True))
    mixed = one.estimator_._states[0]
    np.testing.assert_allclose(mixed.last_weights(), w / sum(weights), rtol=1e-12)
    assert mixed.n_trials == 200
    np.testing.assert_array_equal(
        one.n_corrections_per_epoch_, [[made_0 + rest[0], made_1 + rest[1]]]
    )
    # the second epoch starts from the first one's mix, both shards at once
    assert clf.n_corrections_per_epoch_[0].tolist() == one.n_corrections_per_epoch_[0].tolist()
    assert clf.estimator_.n_trials_ == 400


def test_the_mixes_of_the_first_epoch_start_after_the_sequence(threads):
    """Four shards of 100 rows, a mix every 25 from row 50: two mixes in the first epoch,
    four in each later one."""
    X, y = make_blobs_pm(n=400, d=6, n_classes=3, seed=1)
    clf = MixingClassifier(
        PerceptronClassifier(shuffle=False),
        max_iter=3,
        tol=None,
        mix_every=25,
        momentum="auto",
        warm_up=50,
    ).fit(chunked(X, 100), y)
    assert clf.n_mixes_ == 2 + 4 + 4
    assert clf.n_corrections_per_epoch_.sum() == clf.n_corrections_
    assert clf.estimator_.n_trials_ == 3 * 400


@pytest.mark.parametrize("mixing", ["uniform", "corrections"])
def test_mcdonalds_bound_holds_with_a_warm_up(threads, mixing):
    """The Perceptron on data separable with margin gamma, 4 shards, the first 100 rows
    of each in sequence: the sequence's mistakes (one Perceptron's, counted in full) plus
    the mixes' weighted ones stay at most R^2 / gamma^2, and an epoch without mistakes
    comes."""
    X, y, gamma, R = separable_with_margin(n=2000, d=20, gamma=0.05, seed=7)
    est = PerceptronClassifier(shuffle=False, fit_intercept=False, output="last")
    clf = MixingClassifier(est, max_iter=2000, tol=None, mixing=mixing, warm_up=100)
    clf.fit(chunked(X, 500), y)
    k = clf.n_corrections_per_epoch_.astype(float)
    # the sequence's mistakes per shard, from one Perceptron over the four prefixes
    chain = copy.deepcopy(est)
    in_sequence = []
    for lo in range(0, 2000, 500):
        before = chain.n_corrections_ if lo else 0
        chain.partial_fit(X[lo : lo + 100], y[lo : lo + 100], classes=[-1, 1])
        in_sequence.append(chain.n_corrections_ - before)
    k[0] -= in_sequence
    assert (k >= 0).all() and sum(in_sequence) > 0
    if mixing == "uniform":
        weighted = k.sum() / 4
    else:
        totals = k.sum(axis=1, keepdims=True)
        weighted = np.sum(np.divide(k * k, totals, out=np.zeros_like(k), where=totals > 0))
    assert sum(in_sequence) + weighted <= R**2 / gamma**2
    assert k[-1].sum() == 0 and clf.n_iter_ < 2000
    assert clf.score(X, y) == 1.0


def test_the_sequence_on_a_cluster_is_the_threaded_one(dask_client):
    """The state passed from worker to worker: the same bits as on threads."""
    X, y = make_blobs_pm(n=600, d=10, n_classes=3, seed=6, sparse_density=0.5)
    dX, y = chunked(X, 150), da.from_array(y, chunks=150)
    make = lambda: MixingClassifier(  # noqa: E731
        ALMAClassifier(shuffle=False, p="log"),
        max_iter=2,
        tol=None,
        mix_every=40,
        momentum="auto",
        warm_up=60,
    )
    with dask_client.as_current():
        remote = make().fit(dX, y)
    with dask.config.set(scheduler="threads"):
        local = make().fit(dX, y)
    assert remote.n_mixes_ == 3 + 4
    assert same_bits(remote.estimator_, local.estimator_)
    np.testing.assert_array_equal(remote.n_corrections_per_epoch_, local.n_corrections_per_epoch_)


def test_warm_up_refusals(threads):
    X, y = make_blobs_pm(n=100, d=4, seed=0)
    for bad in [-1, 2.5, "all"]:
        clf = MixingClassifier(ALMAClassifier(shuffle=False), warm_up=bad)
        with pytest.raises(InvalidParameterError, match="warm_up"):
            clf.fit(chunked(X, 50), y)
        assert not hasattr(clf, "estimator_")
