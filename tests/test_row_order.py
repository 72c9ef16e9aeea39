"""Rows in any order: fit shuffles its passes by default, a stream is learned in its
order and warns once when it comes in long runs of one label (:mod:`marginkit._order`),
and ROMMA's passes end at a usable model where its weights would overflow."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import marginkit as mk
from marginkit import StreamOrderWarning, _order
from marginkit.persistence import UntrustedFileError, load, save
from marginkit.streaming import fit_file

ESTIMATORS = [
    mk.ALMAClassifier,
    mk.PerceptronClassifier,
    mk.ROMMAClassifier,
    mk.MarginPerceptronClassifier,
    mk.PUMMAClassifier,
    mk.KernelALMAClassifier,
    mk.KernelPerceptronClassifier,
    mk.KernelROMMAClassifier,
    mk.KernelPUMMAClassifier,
]


def sorted_split(load):
    """A data set's rows sorted by class, split, and the training part sorted again."""
    X, y = load(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    k = np.argsort(y, kind="stable")
    return X[k], y[k], X_test, y_test


@pytest.fixture(scope="module")
def digits_sorted():
    return sorted_split(load_digits)


@pytest.fixture(scope="module")
def cancer_sorted():
    return sorted_split(load_breast_cancer)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_the_defaults_do_not_depend_on_the_order_of_the_rows(cancer_sorted, cls):
    """A file sorted by class, fitted at the defaults, makes the model the same rows make
    in any other order: the passes shuffle the rows sorted by content, so that only the
    rounding of gamma="scale" and of the BLAS products can tell the two fits apart (in
    the order given, shuffle=False, ALMA ended at 34% error on these rows)."""
    X, y, X_test, y_test = cancer_sorted
    assert cls().shuffle
    fits = []
    for order in (np.arange(len(y)), np.random.default_rng(0).permutation(len(y))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(cls(random_state=0).fit(X[order], y[order]))
    assert np.mean(fits[0].predict(X_test) != y_test) < 0.08
    np.testing.assert_array_equal(fits[0].predict(X_test), fits[1].predict(X_test))
    scores = [f.decision_function(X_test) for f in fits]
    np.testing.assert_allclose(
        scores[0], scores[1], rtol=1e-9, atol=1e-9 * np.abs(scores[0]).max()
    )


@pytest.mark.parametrize(
    "cls", [mk.ALMAClassifier, mk.PUMMAClassifier, mk.KernelPerceptronClassifier]
)
def test_weighted_sparse_rows_in_any_order_make_one_model(digits_sorted, cls):
    """Sparse rows with weights, sorted by class or not: the same passes, so the same
    model (a numeric gamma: no variance to round)."""
    X, y, X_test, _ = digits_sorted
    X, y, X_test = sp.csr_matrix(X[:400]), y[:400], sp.csr_matrix(X_test)
    w = 1.0 + (np.arange(400) % 3)
    params = {"gamma": 0.02} if "gamma" in cls().get_params() else {}
    order = np.random.default_rng(1).permutation(400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = cls(random_state=3, **params).fit(X, y, sample_weight=w)
        b = cls(random_state=3, **params).fit(X[order], y[order], sample_weight=w[order])
    np.testing.assert_array_equal(a.predict(X_test), b.predict(X_test))
    np.testing.assert_allclose(
        a.decision_function(X_test), b.decision_function(X_test), rtol=1e-9, atol=1e-9
    )


def test_early_stopping_holds_out_the_same_rows_in_any_order(digits_sorted):
    """The rows held out by early_stopping are drawn from the rows sorted by content:
    the same rows in another order hold out the same rows and end at the same pass."""
    X, y, X_test, _ = digits_sorted
    order = np.random.default_rng(2).permutation(len(y))
    params = {"early_stopping": True, "gamma": 0.02, "random_state": 0}
    a = mk.KernelPerceptronClassifier(**params).fit(X, y)
    b = mk.KernelPerceptronClassifier(**params).fit(X[order], y[order])
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(
        np.sort(X[a.support_], axis=0), np.sort(X[order][b.support_], axis=0)
    )
    np.testing.assert_allclose(
        a.decision_function(X_test), b.decision_function(X_test), rtol=1e-9, atol=1e-9
    )


def test_rows_are_sorted_by_content_then_label_then_weight():
    """Rows sort by their projection on a fixed direction, which sets apart rows whose
    floats end in zero bits (k / 16), and moves only by rounding where the rows do
    (a sparse row's, a row scaled by statistics summed in another order): any order of
    the rows gives the same sorted rows; rows the same in content are ordered by label,
    then weight."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 17, size=(300, 8)) / 16.0
    X[100:110] = X[0]  # ten copies of row 0, with other labels and weights
    y = rng.integers(0, 3, 300)
    w = rng.integers(1, 4, 300).astype(float)
    assert np.unique(_order._row_keys(X)).size == np.unique(X, axis=0).shape[0]
    np.testing.assert_allclose(_order._row_keys(X), _order._row_keys(sp.csr_matrix(X)))
    rows = _order.rows_by_content(X, y, w)
    scaled = StandardScaler().fit_transform(X)
    for seed in range(3):
        p = np.random.default_rng(seed).permutation(300)
        other = p[_order.rows_by_content(X[p], y[p], w[p])]
        for a in (X, y, w):
            np.testing.assert_array_equal(a[rows], a[other])
        rescaled = StandardScaler().fit_transform(X[p])  # its mean summed in p's order
        np.testing.assert_array_equal(
            X[_order.rows_by_content(scaled, y, w)],
            X[p][_order.rows_by_content(rescaled, y[p], w[p])],
        )
    same = np.flatnonzero((X[rows] == X[0]).all(axis=1))
    keys = list(zip(y[rows][same], w[rows][same], strict=True))
    assert keys == sorted(keys)


def test_a_checkpoint_of_an_earlier_version_resumes_on_positions():
    """The orders of a checkpoint written before the rows were sorted by content (no
    by_content in its state) go on permuting the positions, as that fit began to."""
    from marginkit._checkpoints import EpochOrders

    X = np.random.default_rng(0).standard_normal((50, 3))
    y = np.arange(50) % 2
    new = EpochOrders(50, 3, True, 7).over(X, y)
    old = EpochOrders(50, 3, True, 7)
    state = old.__getstate__()
    del state["by_content"]
    old = EpochOrders.__new__(EpochOrders)
    old.__setstate__(state)
    old.over(X, y)
    assert not old.by_content
    np.testing.assert_array_equal(old[0], np.random.RandomState(7).permutation(50))
    np.testing.assert_array_equal(new[0], _order.rows_by_content(X, y)[old[0]])


def test_shuffle_false_is_the_order_given(cancer_sorted):
    X, y, _, _ = cancer_sorted
    a = mk.PerceptronClassifier(shuffle=False, max_iter=3, tol=None).fit(X, y)
    b = mk.PerceptronClassifier(shuffle=False, max_iter=3, tol=None, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = mk.PerceptronClassifier(max_iter=3, tol=None, random_state=5).fit(X, y)
    d = mk.PerceptronClassifier(max_iter=3, tol=None, random_state=5).fit(X, y)
    np.testing.assert_array_equal(c.coef_, d.coef_)  # a seed gives one model
    assert not np.array_equal(a.coef_, c.coef_)


# -- the record of a stream's labels ----------------------------------------------------
def observe_all(labels, n_classes, chunk):
    record = _order.new_record(n_classes)
    said = []
    for lo in range(0, len(labels), chunk):
        if _order.observe(record, labels[lo : lo + chunk]):
            said.append(lo)
            record[2] = 1  # warned
    return record, said


@pytest.mark.parametrize("chunk", [1, 7, 100, 10_000])
def test_a_stream_sorted_by_class_is_told_from_a_shuffled_one(chunk):
    rng = np.random.default_rng(0)
    sorted_labels = np.repeat([0, 1, 2], 400)
    _, said = observe_all(sorted_labels, 3, chunk)
    assert len(said) == 1 and said[0] <= 800  # as soon as the second label's run shows
    _, said = observe_all(rng.permutation(sorted_labels), 3, chunk)
    assert said == []


def test_an_imbalanced_stream_in_random_order_does_not_warn():
    """1% positives in 200 000 random rows: runs of about 1000 negatives happen."""
    labels = (np.random.default_rng(1).random(200_000) < 0.01).astype(np.int64)
    record, said = observe_all(labels, 2, 5000)
    assert said == [] and record[3 + 2] > 500  # the longest run of negatives


def test_short_runs_never_warn():
    labels = np.repeat([0, 1], _order.MIN_RUN - 1)
    assert observe_all(labels, 2, 10)[1] == []


def test_the_record_counts_runs_across_calls():
    record = _order.new_record(2)
    _order.observe(record, np.array([0, 0, 1]))
    _order.observe(record, np.array([1, 1, 0]))
    # label, run, warned, counts (3, 3), longest runs (2, 3)
    np.testing.assert_array_equal(record, [0, 1, 0, 3, 3, 2, 3])


def test_partial_fit_on_a_sorted_stream_warns_once(digits_sorted):
    X, y, _, _ = digits_sorted
    clf = mk.ALMAClassifier()
    with pytest.warns(StreamOrderWarning, match=r"long runs of one label \(1\d\d rows of label"):
        for lo in range(0, len(y), 50):
            clf.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=np.arange(10))
    with warnings.catch_warnings():
        warnings.simplefilter("error", StreamOrderWarning)
        clf.partial_fit(X[:100], y[:100])  # once per model
        order = np.random.default_rng(0).permutation(len(y))
        mk.ALMAClassifier().partial_fit(X[order], y[order], classes=np.arange(10))
    # a fit starts anew, without the stream's record
    assert "_label_runs" in vars(clf)
    assert "_label_runs" not in vars(clf.fit(X, y))


def test_fit_file_learns_a_file_in_its_order_and_warns_when_it_is_sorted(tmp_path):
    X, y, X_test, y_test = sorted_split(load_breast_cancer)
    path = tmp_path / "sorted.svm"
    dump_svmlight_file(X, y, str(path))
    clf = mk.PerceptronClassifier(max_iter=2, tol=None)  # shuffle=True: not for a stream
    with pytest.warns(StreamOrderWarning, match="Shuffle the rows beforehand"):
        fit_file(clf, path, chunk_size=64)
    ordered = mk.PerceptronClassifier(max_iter=2, tol=None, shuffle=False).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ordered.coef_, rtol=1e-12)
    shuffled = tmp_path / "shuffled.svm"
    order = np.random.default_rng(0).permutation(len(y))
    dump_svmlight_file(X[order], y[order], str(shuffled))
    with warnings.catch_warnings():
        warnings.simplefilter("error", StreamOrderWarning)
        fit_file(mk.PerceptronClassifier(max_iter=2, tol=None), shuffled, chunk_size=64)


def test_a_streamed_model_saves_and_loads_with_its_record(tmp_path, digits_sorted):
    X, y, _, _ = digits_sorted
    order = np.random.default_rng(0).permutation(len(y))
    clf = mk.PerceptronClassifier().partial_fit(X[order], y[order], classes=np.arange(10))
    path = tmp_path / "m.skops"
    save(clf, path)
    back = load(path)
    np.testing.assert_array_equal(back._label_runs, clf._label_runs)
    clf._label_runs[1] = -3
    save(clf, path)
    with pytest.raises(UntrustedFileError, match="_label_runs"):
        load(path)
    clf._label_runs = clf._label_runs[:4].copy()
    save(clf, path)
    with pytest.raises(UntrustedFileError, match=r"_label_runs must have shape \(23\)"):
        load(path)


# -- ROMMA where its weights would overflow -----------------------------------------------
def xor(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.where(X[:, 0] * X[:, 1] > 0, 1, -1)


#: Li and Long's ROMMA, the hard margin with the papers' bias coordinate (the soft
#: margin, on by default, keeps the hypothesis bounded)
HARD = {"aggressive": False, "lam": 0.0, "intercept_scaling": "max"}


def test_romma_hard_margin_ends_where_its_weights_would_overflow():
    """Data no plane separates: ROMMA's hypothesis grows without bound, and the passes
    end at the model after the last pass that kept it finite, with a warning."""
    X, y = xor(3000)
    with pytest.warns(ConvergenceWarning, match=r"would overflow in pass (\d+).*after pass"):
        clf = mk.ROMMAClassifier(tol=None, random_state=0, **HARD).fit(X, y)
    assert np.all(np.isfinite(clf.decision_function(X)))
    last_good = clf.n_iter_
    same = mk.ROMMAClassifier(tol=None, max_iter=last_good, random_state=0, **HARD).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, same.coef_)
    np.testing.assert_array_equal(clf.intercept_, same.intercept_)
    assert clf.n_trials_ == same.n_trials_ == last_good * len(y)


def test_romma_ends_within_its_first_pass_at_the_last_sixteenth_that_kept_it_finite():
    X, y = xor(20_000)
    with pytest.warns(ConvergenceWarning, match=r"after the first 12500 of the 20000 rows"):
        clf = mk.ROMMAClassifier(max_iter=1, tol=None, random_state=0, **HARD).fit(X, y)
    assert clf.n_iter_ == 1 and clf.n_trials_ == 12_500
    assert np.all(np.isfinite(clf.coef_))


def test_romma_partial_fit_and_a_checkpointed_fit_still_refuse_overflowed_weights(tmp_path):
    X, y = xor(20_000)
    with pytest.raises(ValueError, match="weights overflowed"):
        mk.ROMMAClassifier(**HARD).partial_fit(X, y, classes=[-1, 1])
    clf = mk.ROMMAClassifier(max_iter=1, tol=None, random_state=0, **HARD)
    with pytest.raises(ValueError, match="weights overflowed"):
        clf.fit(X, y, checkpoint=tmp_path / "ck.skops")
    assert not hasattr(clf, "coef_") or "_states" not in vars(clf)
