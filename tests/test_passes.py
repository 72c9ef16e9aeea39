"""When fit's passes end: ``tol``, scikit-learn's rule for its Perceptron on the
corrections of each pass, a pass without a correction, or ``max_iter`` with a
ConvergenceWarning."""

import warnings

import numpy as np
import pytest
from conftest import checkpoint_file, make_blobs_pm
from sklearn.datasets import dump_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

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
from marginkit._passes import check_passes
from marginkit.persistence import UntrustedFileError
from marginkit.streaming import fit_file

ESTIMATORS = [
    ALMAClassifier,
    PerceptronClassifier,
    ROMMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelROMMAClassifier,
]
ids = [cls.__name__ for cls in ESTIMATORS]
#: the estimators whose epochs go on until one makes no update (or tol ends them)
QUIET = [PUMMAClassifier, KernelPUMMAClassifier, MarginPerceptronClassifier]
quiet_ids = [cls.__name__ for cls in QUIET]
ALL, all_ids = ESTIMATORS + QUIET, ids + quiet_ids


def make(cls, **params):
    if cls.__name__.startswith("Kernel"):
        params = {"kernel": "rbf", "gamma": 0.05, "block_size": 16, **params}
    if cls is KernelROMMAClassifier:
        # the corrections' rules; the soft margin's, on its growth: test_romma_soft_margin
        params = {"lam": 0.0, "aggressive": False, **params}
    return cls(**{"shuffle": False, **params})


def fit_recording(est, X, y):
    """Fit ``est``; the corrections of each problem after each pass, and the warnings."""
    counts = []

    def record(model, epoch):
        assert epoch == len(counts)
        counts.append(np.array(model.n_corrections_per_class_, dtype=np.int64))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, callback=record)
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    return np.array(counts), convergence


def expected(counts, n, tol, max_iter, noise=None, patience=1):
    """The passes the documentation of tol promises, and whether it warns; ``noise``:
    the kernel estimators' share of the first pass's corrections that ends them;
    ``patience``: ``n_iter_no_change``, the passes in a row without improvement that
    end them (a pass without correction ends them at once)."""
    fewest = np.full(counts.shape[1], np.inf)
    before = np.zeros(counts.shape[1], dtype=np.int64)
    first, since = None, 0
    for epoch, after in enumerate(counts):
        made, before = after - before, after
        improving = bool(np.any(made < fewest - (tol or 0.0) * n)) and bool(made.any())
        fewest = np.minimum(fewest, made)
        since = 0 if improving else since + 1
        if tol is not None and (since >= patience or not made.any()):
            return epoch + 1, False
        if first is None:
            first = made
        elif tol is not None and noise is not None and first.any():
            if np.all(made >= noise * first):
                return epoch + 1, False
    return len(counts), tol is not None and max_iter > 1 and improving


def noise_of(cls):
    return 0.85 if cls.__name__.startswith("Kernel") else None


def patience_of(est):
    """``n_iter_no_change`` (1 for an estimator without it)."""
    return est.get_params().get("n_iter_no_change", 1)


@pytest.mark.parametrize("tol", [0.0, 1e-3, 0.03, None])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_passes_end_as_tol_says(cls, tol):
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=5)
    # the corrections decide; ROMMA's soft margin ends on growth (test_romma_soft_margin)
    hard = {"lam": 0.0} if cls is ROMMAClassifier else {}
    est = make(cls, tol=tol, max_iter=12, **hard)
    counts, convergence = fit_recording(est, X, y)
    passes, warns = expected(counts, X.shape[0], tol, 12, noise_of(cls), patience_of(est))
    assert est.n_iter_ == passes == len(counts)
    assert bool(convergence) == warns
    if tol is None:
        assert est.n_iter_ == 12


@pytest.mark.parametrize("tol", [1e-3, None])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_noisy_data_end_the_kernel_passes_after_the_second(cls, tol, tmp_path):
    """Labels flipped at random: the second pass makes about as many corrections as the
    first. The kernel estimators' ``tol`` ends their passes there (more passes would
    memorise the noise: docs/defaults.md), streamed from a file too; the linear ones, and
    ``tol=None``, go on."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    y = np.where(rng.uniform(size=400) < 0.5, 1, -1)  # labels without a pattern
    est = make(cls, tol=tol, max_iter=6)
    counts, _ = fit_recording(est, X, y)
    made = np.diff(np.vstack([np.zeros_like(counts[:1]), counts]), axis=0)
    assert np.all(made[1] >= 0.85 * made[0])  # the data say noise
    if tol is not None and noise_of(cls):
        assert est.n_iter_ == 2
        path = tmp_path / "noise.svm"
        dump_svmlight_file(X, y, str(path))
        assert fit_file(make(cls, tol=tol, max_iter=6), path, chunk_size=150).n_iter_ == 2
    assert est.n_iter_ == expected(counts, 400, tol, 6, noise_of(cls), patience_of(est))[0]
    if tol is None:
        assert est.n_iter_ == 6


@pytest.mark.parametrize("cls", [KernelALMAClassifier, KernelROMMAClassifier])
def test_a_checkpointed_fit_stops_on_noise_where_the_plain_fit_does(cls, tmp_path):
    """The first pass's corrections travel in the checkpoints (``_resume['first']``):
    a fit resumed in its second pass stops where the plain one does, and a record that
    is not counts of corrections is refused."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 4))
    y = rng.integers(0, 3, size=200)
    plain = make(cls, max_iter=5).fit(X, y)
    path = tmp_path / "c.skops"
    # killed after its 6th write, in the second pass (writes every 48 rows, and at the
    # end of each pass: 48, 96, 144, 192, 200, then 248)
    checkpoint_file(lambda: make(cls, max_iter=5), X, y, path, stop_after=6, every=48)
    ckpt = make(cls, max_iter=5).fit(X, y, checkpoint=path, checkpoint_every=48)
    assert plain.n_iter_ == ckpt.n_iter_ == 2
    np.testing.assert_array_equal(ckpt.decision_function(X), plain.decision_function(X))
    r = {**plain._schedule().fresh(), "first": np.array([5, -1, 2])}
    with pytest.raises(UntrustedFileError, match=r"_resume\['first'\] holds -1, outside"):
        check_passes(r, 3)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_a_pass_without_a_correction_ends_fit(cls):
    """On separable data the passes end with the first that corrects nothing: the model
    is that of a fit making exactly those passes."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    X[:, 0] += 3.0 * y  # a wide margin
    mistakes_only = {"alpha": 1.0} if "ALMA" in cls.__name__ else {}
    if cls is ROMMAClassifier:
        mistakes_only = {"aggressive": False}  # aggressive ROMMA(delta=0) is never quiet
    est = make(cls, tol=0.0, max_iter=200, **mistakes_only)
    counts, convergence = fit_recording(est, X, y)
    assert est.n_iter_ < 200 and not convergence
    assert counts[-1].sum() == counts[-2].sum()  # the last pass corrected nothing
    fixed = make(cls, **{**est.get_params(), "tol": None, "max_iter": est.n_iter_}).fit(X, y)
    np.testing.assert_array_equal(fixed.decision_function(X), est.decision_function(X))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_the_warning_says_what_to_change_and_points_at_the_call(cls):
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=5)
    est = make(cls, tol=0.0, max_iter=2)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2 passes .* tol=None") as caught:
        est.fit(X, y)
    assert caught[0].filename == __file__
    assert est.n_iter_ == 2


@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_one_pass_and_partial_fit_do_not_warn(cls):
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert make(cls, max_iter=1).fit(X, y).n_iter_ == 1
        est = make(cls).partial_fit(X, y, classes=np.unique(y))
        est.partial_fit(X, y)
    assert est.n_iter_ == 1


@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_a_checkpointed_fit_stops_where_the_plain_fit_does(cls, tmp_path):
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=5)
    params = {"tol": 0.03, "max_iter": 30, "shuffle": True, "random_state": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = make(cls, **params).fit(X, y)
        ckpt = make(cls, **params).fit(X, y, checkpoint=tmp_path / "c.skops", checkpoint_every=32)
    assert 1 < plain.n_iter_ < 30
    assert ckpt.n_iter_ == plain.n_iter_
    np.testing.assert_array_equal(ckpt.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=ids)
def test_a_stream_stops_where_fit_does(cls, tmp_path):
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=5)
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # the soft margin gives a stream's trials coordinates of their own, and fit's
        # rows one for all passes: the same model with the hard margin
        hard = {"lam": 0.0} if cls is ROMMAClassifier else {}
        fitted = make(cls, tol=0.03, max_iter=30, **hard).fit(X, y)
        streamed = fit_file(make(cls, tol=0.03, max_iter=30, **hard), path, chunk_size=40)
    assert streamed.n_iter_ == fitted.n_iter_ < 30
    np.testing.assert_allclose(
        streamed.decision_function(X), fitted.decision_function(X), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("cls", ALL, ids=all_ids)
def test_a_model_saved_before_tol_made_every_pass(cls):
    """Such a model makes every pass it is given (PUMMA and the margin Perceptron: runs
    until an epoch makes no update), as it did."""
    X, y = make_blobs_pm(n=60, d=4, seed=1)
    state = make(cls, max_iter=2, tol=None).fit(X, y).__getstate__()
    del state["tol"]
    old = cls.__new__(cls)
    old.__setstate__(state)
    assert old.get_params()["tol"] is None


@pytest.mark.parametrize("tol", [-1e-3, "0.1", np.inf * 1j])
@pytest.mark.parametrize("cls", ALL, ids=all_ids)
def test_a_bad_tol_is_refused(cls, tol):
    X, y = make_blobs_pm(n=60, d=4, seed=1)
    with pytest.raises(InvalidParameterError, match=r"The 'tol' parameter of " + cls.__name__):
        make(cls, tol=tol).fit(X, y)


def test_shuffle_without_a_seed_shuffles_each_fit_anew():
    X, y = make_blobs_pm(n=200, d=6, seed=4)
    a, b = (ALMAClassifier(shuffle=True, max_iter=1, output="last").fit(X, y) for _ in "ab")
    assert not np.array_equal(a.coef_, b.coef_)
    seeded = [ALMAClassifier(shuffle=True, random_state=3, max_iter=2).fit(X, y) for _ in "ab"]
    np.testing.assert_array_equal(seeded[0].coef_, seeded[1].coef_)


def test_the_most_passes_cost_no_memory_until_made():
    """max_iter=1000 is a bound: the orders of the passes are made one at a time."""
    import tracemalloc

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    for shuffle in (False, True):
        est = ALMAClassifier(max_iter=1000, shuffle=shuffle, random_state=0)
        tracemalloc.start()
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert est.n_iter_ < 1000
        assert peak < 20 * 2**20  # the 1000 orders alone would take 160 MB


# -- the estimators whose epochs go on until one makes no update --------------------------


def make_quiet(cls, **params):
    if cls is KernelPUMMAClassifier:
        params = {"kernel": "linear", "block_size": 16, **params}
    return cls(**{"shuffle": False, **params})


def overlapping():
    X, y = make_blobs_pm(n=150, d=6, n_classes=3, seed=5)
    return X + np.random.default_rng(1).normal(scale=1.5, size=X.shape), y


def updates_of(est):
    """The updates of each one-vs-rest problem so far, restarts of the margin
    Perceptron's guess excluded (the rule counts the epochs of the current guess)."""
    counts = np.array(est.n_corrections_per_class_, dtype=np.int64)
    return counts - getattr(est, "_updates_before", 0)


@pytest.mark.parametrize("cls", QUIET, ids=quiet_ids)
def test_tol_ends_the_epochs_of_the_estimators_that_run_until_quiet(cls):
    """PUMMA's epochs end by the rule of the other estimators (counted on every
    problem at once, from the callback after each epoch); the margin Perceptron's
    problems, which run one after the other, each by it: every problem stops before
    an epoch without update, and the model is that of the same epochs without tol."""
    X, y = overlapping()
    if cls is MarginPerceptronClassifier:
        est = make_quiet(cls, tol=1e-3, gamma_guess=0.5, output="last")
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            est.fit(X, y)
        assert np.all((est.n_iter_ > 1) & (est.n_iter_ < 1000)) and not est.converged_
        for j, epochs in enumerate(est.n_iter_):
            # the problem alone, epoch by epoch: the rule ends it at the same epoch
            yj = np.where(y == est.classes_[j], 1, -1)
            made = []
            for k in range(1, epochs + 1):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    one = make_quiet(cls, tol=None, max_iter=k, gamma_guess=0.5, output="last")
                    one.fit(X, yj)
                made.append(int(one.n_corrections_))
            per_epoch = np.diff([0, *made])
            fewest = np.minimum.accumulate(per_epoch)
            assert per_epoch[-1] >= fewest[-2] - 1e-3 * X.shape[0]
            assert np.all(per_epoch[1:-1] < fewest[:-2] - 1e-3 * X.shape[0])
            np.testing.assert_allclose(
                one.decision_function(X), est.decision_function(X)[:, j], rtol=1e-12
            )
        return
    # PUMMA's hard margin: the soft margin's epochs end on the growth of its norm
    # (tests/test_pumma.py)
    counts = []
    est = make_quiet(cls, tol=1e-3, output="avg", lam=0.0)
    est.fit(X, y, callback=lambda model, epoch: counts.append(updates_of(model)))
    passes, warns = expected(np.array(counts), X.shape[0], 1e-3, 1000)
    assert est.n_epochs_ == est.n_iter_ == passes == len(counts) > 1 and not warns
    assert not est.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        same = make_quiet(cls, tol=None, max_iter=passes, output="avg", lam=0.0).fit(X, y)
    np.testing.assert_array_equal(same.decision_function(X), est.decision_function(X))


@pytest.mark.parametrize("cls", QUIET, ids=quiet_ids)
def test_epochs_that_run_out_still_improving_warn(cls):
    X, y = overlapping()
    params = {"gamma_guess": 0.5} if cls is MarginPerceptronClassifier else {}
    with pytest.warns(ConvergenceWarning, match="still fell|still grew|did not separate"):
        make_quiet(cls, tol=0.0, max_iter=2, **params).fit(X, y)


@pytest.mark.parametrize("cls", QUIET, ids=quiet_ids)
def test_a_checkpointed_fit_with_tol_stops_where_the_plain_fit_does(cls, tmp_path):
    X, y = overlapping()
    params = {"tol": 1e-3, "shuffle": True, "random_state": 2, "output": "last"}
    if cls is MarginPerceptronClassifier:
        params["gamma_guess"] = 0.5
    else:
        params["tol"] = 0.03  # PUMMA's norm: 10 epochs here, not 51
    plain = make_quiet(cls, **params).fit(X, y)
    assert 1 < np.max(plain.n_iter_) < 1000
    path = tmp_path / "c.skops"
    ckpt = make_quiet(cls, **params).fit(X, y, checkpoint=path, checkpoint_every=32)
    np.testing.assert_array_equal(ckpt.n_iter_, plain.n_iter_)
    np.testing.assert_array_equal(ckpt.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("cls", QUIET, ids=quiet_ids)
def test_a_checkpoint_written_before_tol_resumes(cls, tmp_path, monkeypatch):
    """A checkpoint's progress without the record of tol (as written before it) goes on
    as tol=None did: the model of an uninterrupted run."""
    import marginkit.persistence as persistence
    from marginkit import load, save

    X, y = overlapping()
    params = {"tol": None, "max_iter": 6, "output": "last"}
    if cls is MarginPerceptronClassifier:
        params["gamma_guess"] = 0.5
    path = tmp_path / "c.skops"

    def save_then_stop(model, where, *args, **kwargs):
        save(model, where, *args, **kwargs)
        raise KeyboardInterrupt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = make_quiet(cls, **params).fit(X, y)
        monkeypatch.setattr(persistence, "save", save_then_stop)
        with pytest.raises(KeyboardInterrupt):
            make_quiet(cls, **params).fit(X, y, checkpoint=path, checkpoint_every=50)
        monkeypatch.undo()
        old = load(path)
        assert 0 < old._resume["pos"]
        keys = [key for key in ("at_start", "fewest", "improving", "ended") if key in old._resume]
        assert keys
        for key in keys:
            del old._resume[key]
        save(old, path)
        resumed = make_quiet(cls, **params).fit(X, y, checkpoint=path)
    np.testing.assert_array_equal(resumed.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize(
    "make",
    [
        lambda: PUMMAClassifier(shuffle=False, p=3.0, lam=0.0, max_iter=1000, tol=None),
        lambda: KernelPUMMAClassifier(
            shuffle=False, kernel="rbf", gamma=0.5, lam=0.0, max_iter=1000, tol=None
        ),
        lambda: MarginPerceptronClassifier(shuffle=False, max_iter=1000),
    ],
    ids=["pumma", "kernel-pumma", "margin-perceptron"],
)
def test_converged_after_partial_fit_says_whether_the_call_updated(make):
    """``converged_``: the last epoch made no update; a call of partial_fit is an epoch.
    PUMMA's ``margin_`` is that of fit's training set, not kept past a partial_fit."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, 3))
    X = X[np.abs(X[:, 0] + 0.5) > 0.4][:80]  # separable with a margin
    y = (X[:, 0] + 0.5 > 0).astype(int)
    clf = make().fit(X, y)
    assert clf.converged_
    made = clf.n_corrections_
    clf.partial_fit(X, y)  # separated: no update
    assert clf.n_corrections_ == made and clf.converged_
    clf.partial_fit(X[:3], 1 - y[:3])  # the other labels: updates
    assert clf.n_corrections_ > made and not clf.converged_
    if not isinstance(clf, MarginPerceptronClassifier):
        with pytest.raises(AttributeError, match="margin_"):
            clf.margin_  # noqa: B018


def test_the_margin_perceptrons_callback_sees_each_epoch_of_a_binary_problem():
    X, y = make_blobs_pm(n=80, d=3, n_classes=2, seed=12)
    y = np.where(np.random.default_rng(1).uniform(size=y.size) < 0.1, 1 - y, y)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MarginPerceptronClassifier(shuffle=False, max_iter=6).fit(
            X, y, callback=lambda est, epoch: seen.append((epoch, est.n_corrections_))
        )
    assert [e for e, _ in seen] == list(range(int(clf.n_iter_[0])))
    assert seen[-1][1] == clf.n_corrections_
