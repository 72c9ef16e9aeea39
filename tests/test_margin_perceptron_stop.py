"""The margin Perceptron's default end of the epochs on data it does not separate
(``tol=1e-3`` with the incremental guess; ``MarginPerceptronClassifier``'s docstring):
the rule, what it leaves alone (separable data, fixed guesses, checkpoints, streams),
and the warning when ``max_iter`` comes first."""

import warnings

import numpy as np
import pytest
from conftest import make_blobs_pm
from sklearn.datasets import make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

import marginkit
import marginkit.margin_perceptron as mp
from marginkit import MarginPerceptronClassifier
from marginkit.datasets import make_r_of_k


def overlapping(n=150, n_classes=2, seed=5):
    """Gaussian classes that overlap: no plane separates them."""
    return make_blobs_pm(n=n, d=4, n_classes=n_classes, seed=seed)


def same_model(a, b, X):
    assert a.converged_ == b.converged_
    for name in ("n_iter_", "n_restarts_", "gamma_guess_", "n_corrections_per_class_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for output in ("last", "avg"):
        a.set_params(output=output)
        b.set_params(output=output)
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_the_defaults():
    clf = MarginPerceptronClassifier()
    assert (clf.tol, clf.max_iter, clf.gamma_guess) == (1e-3, 1000, None)
    assert clf.intercept_scaling == "2rms"
    assert (mp.TOL_FROM_EPOCH, mp.TOL_BUDGET_SHARE) == (100, 0.5)


@pytest.mark.parametrize("n_classes, seed", [(2, 5), (3, 4), (3, 0)])
def test_a_default_fit_of_data_no_plane_separates_ends_without_warning(n_classes, seed):
    X, y = overlapping(n=300 if seed == 0 else 150, n_classes=n_classes, seed=seed)
    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = MarginPerceptronClassifier(random_state=0).fit(X, y)
    assert not clf.converged_
    assert np.all(clf.n_iter_ < clf.max_iter)
    assert np.all(clf.n_iter_ >= mp.TOL_FROM_EPOCH)
    # every problem ended at a guess whose budget has room for an update on every row
    assert np.all(12 * clf.radius_**2 / clf.gamma_guess_**2 >= n)
    assert clf.score(X, y) > 0.8


def epochs_of(clf, X, y):
    """Each epoch of a binary fit, from its callback: (guess, updates of the epoch or
    None where it overran and restarted, updates of the guess so far)."""
    seen = []

    def record(est, epoch):
        seen.append(
            (
                float(est.gamma_guess_[0]),
                int(est.n_restarts_[0]),
                int(est.n_corrections_),
                int(est.n_corrections_ - est._updates_before[0]),
            )
        )

    clf.fit(X, y, callback=record)
    out, total, restarts = [], 0, 0
    for guess, r, corrections, of_guess in seen:
        out.append((guess, None if r != restarts else corrections - total, of_guess))
        total, restarts = corrections, r
    return out


def where_the_rule_ends(epochs, n, R, tol):
    """The epoch (1-based) at which the documented rule ends a binary problem, or None."""
    fewest, count = np.inf, 0
    for e, (guess, made, of_guess) in enumerate(epochs, start=1):
        if made is None:  # overran: the halved guess starts afresh
            fewest, count = np.inf, 0
            continue
        count += 1
        budget = np.floor(12.0 * np.square(np.float64(R) / guess))
        if (
            made > 0
            and made >= fewest - tol * n
            and budget >= n
            and count >= mp.TOL_FROM_EPOCH
            and of_guess <= mp.TOL_BUDGET_SHARE * budget
        ):
            return e
        fewest = min(fewest, made)
    return None


@pytest.mark.parametrize("seed", [5, 1, 7])
def test_the_rule_ends_the_epochs_where_the_docstring_says(seed):
    """Epoch by epoch on a binary problem: the default fit ends at the first epoch that
    meets the documented conditions, with the model of the same epochs without tol."""
    X, y = overlapping(n=200, seed=seed)
    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        free = MarginPerceptronClassifier(tol=None, random_state=3, output="last")
        epochs = epochs_of(free, X, y)
    stop = where_the_rule_ends(epochs, n, free.radius_, 1e-3)
    assert stop is not None and stop < 1000
    ruled = MarginPerceptronClassifier(random_state=3, output="last")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert epochs_of(ruled, X, y) == epochs[:stop]
    assert ruled.n_iter_[0] == stop and not ruled.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        same = MarginPerceptronClassifier(tol=None, max_iter=stop, random_state=3).fit(X, y)
    same_model(ruled, same.set_params(output="last"), X)


def separable_sets():
    """(On make_classification-2 and biased-0.1 a rule without its last condition,
    half the budget, would end the fit before its epoch without update: a guess above
    the margin makes 100 epochs that stop falling before it overruns.)"""
    for seed in (0, 2):
        X, y = make_classification(
            500, 10, n_informative=5, class_sep=3.0, flip_y=0.0, random_state=seed
        )
        yield f"make_classification-{seed}", X, y
    for seed in (0, 1):
        X, y = make_blobs(400, 5, centers=3, cluster_std=1.0, random_state=seed)
        yield f"blobs-{seed}", X, y
    X, y = make_r_of_k(400, r=3, random_state=1)
    yield "r-of-k", X, y
    for seed, margin in [(2, 0.3), (0, 0.1)]:
        rng = np.random.default_rng(seed)
        w = rng.normal(size=6)
        w /= np.linalg.norm(w)
        X = rng.normal(size=(2000, 6))
        f = X @ w + 0.5
        keep = np.abs(f) >= margin
        yield f"biased-{margin}", X[keep][:300], np.where(f[keep][:300] > 0, 1, -1)


@pytest.mark.parametrize("X, y", [pytest.param(X, y, id=name) for name, X, y in separable_sets()])
def test_separable_data_give_the_model_of_tol_none(X, y):
    """LinearSVC separates these; the default fit is the algorithm's (tol=None): an
    epoch without update, converged_, no warning, the same model."""
    assert LinearSVC(C=1e4, max_iter=100_000).fit(X, y).score(X, y) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        default = MarginPerceptronClassifier(random_state=0).fit(X, y)
        paper = MarginPerceptronClassifier(tol=None, random_state=0).fit(X, y)
    assert default.converged_
    same_model(default, paper, X)


def test_a_fixed_guess_keeps_the_rule_of_the_other_estimators():
    """No halving to wait for: tol counts from the second epoch, as before."""
    X, y = overlapping(n=200, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = MarginPerceptronClassifier(gamma_guess=0.5, random_state=0).fit(X, y)
    assert 1 < clf.n_iter_[0] < mp.TOL_FROM_EPOCH


def test_max_iter_before_the_rule_warns_and_says_so():
    X, y = overlapping(n=150, seed=5)
    expected = (
        "MarginPerceptronClassifier did not separate the training data with margin "
        "gamma_guess_ / 2 within max_iter=50 epochs, nor did tol=0.001 end them; the data "
        "may not be linearly separable. Increase max_iter or check the data."
    )
    with pytest.warns(ConvergenceWarning) as record:
        clf = MarginPerceptronClassifier(max_iter=50, random_state=0).fit(X, y)
    assert [str(w.message) for w in record if w.category is ConvergenceWarning] == [expected]
    assert clf.n_iter_[0] == 50 and not clf.converged_
    with pytest.warns(ConvergenceWarning) as record:
        MarginPerceptronClassifier(tol=None, max_iter=50, fit_intercept=False, random_state=0).fit(
            X, y
        )
    assert [str(w.message) for w in record] == [
        "MarginPerceptronClassifier did not separate the training data with margin "
        "gamma_guess_ / 2 within max_iter=50 epochs; the data may not be linearly "
        "separable through the origin (see fit_intercept). Increase max_iter or check "
        "the data."
    ]


@pytest.mark.parametrize("n_classes, seed", [(2, 5), (3, 4)])
@pytest.mark.parametrize("where", [0.1, 0.5, 0.97, 1.0])
def test_a_checkpoint_resumes_to_the_model_the_rule_ends(
    n_classes, seed, where, tmp_path, monkeypatch
):
    """The fit dies after a checkpoint (``where``: its share of the checkpoints of the
    whole fit, so late ones fall in the last guess's epochs; every 40 rows, so some
    mid-epoch); the resumed fit stops where the plain one does, with its model."""
    X, y = overlapping(n=150 if n_classes == 2 else 120, n_classes=n_classes, seed=seed)
    make = lambda: MarginPerceptronClassifier(random_state=4)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        plain = make().fit(X, y)
    assert np.all(plain.n_iter_ < 1000) and not plain.converged_
    path = tmp_path / "ckpt.skops"
    real_save = marginkit.persistence.save
    calls = []
    # how many checkpoints the whole fit writes (none written: they are counted)
    monkeypatch.setattr(marginkit.persistence, "save", lambda est, p: calls.append(1))
    make().fit(X, y, checkpoint=path, checkpoint_every=40)
    target = max(1, int(where * len(calls)))
    calls.clear()

    def save_then_die(est, p):
        calls.append(1)
        if len(calls) == target:  # only the checkpoint the run dies after is written
            real_save(est, p)
            raise KeyboardInterrupt

    monkeypatch.setattr(marginkit.persistence, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        make().fit(X, y, checkpoint=path, checkpoint_every=40)
    monkeypatch.setattr(marginkit.persistence, "save", real_save)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # (its own checkpoints as often as they cost little: every 40 rows would only
        # take longer)
        resumed = make().fit(X, y, checkpoint=path)
    same_model(resumed, plain, X)
    assert not hasattr(resumed, "_resume")


def test_a_stream_ends_where_the_fit_of_its_rows_does(tmp_path):
    """fit_file's epochs over a file's chunks stop by the same rule as fit on its rows
    in the file's order (shuffle=False)."""
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    from marginkit.streaming import fit_file

    X, y = overlapping(n=150, seed=5)
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path))
    X, y = load_svmlight_file(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        whole = MarginPerceptronClassifier(shuffle=False).fit(X, y)
        streamed = fit_file(MarginPerceptronClassifier(shuffle=False), path, chunk_size=37)
    assert whole.n_iter_[0] < 1000 and not whole.converged_
    same_model(streamed, whole, X)
