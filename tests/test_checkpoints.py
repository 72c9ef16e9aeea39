"""fit(..., checkpoint=, checkpoint_every=): exact resumption, also after SIGKILL."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_blobs_pm, outputs_of, slow_case

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)

FACTORIES = [
    lambda: ALMAClassifier(
        p=3.0,
        alpha=0.7,
        max_iter=3,
        shuffle=True,
        random_state=0,
        output="last",
        fit_intercept=False,
    ),
    lambda: PerceptronClassifier(
        shuffle=False, max_iter=2, fit_intercept=True, keep_corrections=True, output="last"
    ),
    lambda: ROMMAClassifier(
        aggressive=True,
        max_iter=2,
        shuffle=True,
        random_state=1,
        output="last",
        fit_intercept=False,
    ),
    lambda: KernelALMAClassifier(
        shuffle=False, kernel="poly", degree=2, max_iter=3, block_size=7, alpha=1.0, output="last"
    ),
    lambda: PUMMAClassifier(
        p=3.0, lam=0.5, max_iter=6, shuffle=True, random_state=0, output="last"
    ),
    lambda: PUMMAClassifier(shuffle=False, delta=0.2, max_iter=5, output="voted", lam=0.0),
    lambda: MarginPerceptronClassifier(
        fit_intercept=True, max_iter=30, shuffle=True, random_state=4, output="last"
    ),
    lambda: KernelPUMMAClassifier(
        lam=0.5, max_iter=4, block_size=16, shuffle=True, random_state=3, output="last"
    ),
    lambda: KernelROMMAClassifier(
        aggressive=True, max_iter=2, shuffle=True, random_state=2, block_size=16, output="last"
    ),
]


def same_model(a, b, X):
    if hasattr(a, "converged_"):
        assert a.converged_ == b.converged_
        for name in ["n_epochs_", "n_iter_", "margin_", "gamma_guess_"]:
            if hasattr(a, name):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for output in outputs_of(a):
        a.set_params(output=output)
        b.set_params(output=output)
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert a.n_corrections_ == b.n_corrections_ and a.n_trials_ == b.n_trials_
    if hasattr(a, "support_"):
        np.testing.assert_array_equal(a.support_, b.support_)


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


#: The cases of make test-all only, as ``(value, factory index)``: the margin
#: Perceptron's 30 epochs (index 6) write about a hundred checkpoints (10 s on 2 cores),
#: and make test checks its checkpoints in test_resume_after_an_interruption[1-<lambda>6]
#: (and in tests/test_margin_perceptron_stop.py); PUMMA's and kernel PUMMA's CSR fits
#: (indices 4 and 7, 1 s each) are checkpointed there on dense rows.
SLOW_CHECKPOINTED = {(False, 6), (True, 6), (True, 4), (True, 7)}
SLOW_RESUMED = {(4, 6)}


def _cases(values, slow):
    """``(make, value)`` for every factory and value, with the ids pytest gives
    (``{value}-<lambda>{i}``), marked slow where ``(value, i)`` is in ``slow``."""
    for value in values:
        for i, make in enumerate(FACTORIES):
            yield slow_case(make, value, slow=(value, i) in slow, id=f"{value}-<lambda>{i}")


@pytest.mark.parametrize("make,sparse", list(_cases([False, True], SLOW_CHECKPOINTED)))
def test_checkpointed_fit_is_the_plain_fit(make, sparse, tmp_path):
    X, y = make_blobs_pm(n=120, d=5, n_classes=3, seed=4, sparse_density=0.7 if sparse else None)
    plain = make().fit(X, y)
    path = tmp_path / "ckpt.skops"
    checked = make().fit(X, y, checkpoint=path, checkpoint_every=37)
    same_model(checked, plain, X)
    assert not hasattr(checked, "_resume")
    # a finished checkpoint resumes to the finished model at once
    again = make().fit(X, y, checkpoint=path)
    same_model(again, plain, X)


@pytest.mark.parametrize("make,stop_after", list(_cases([1, 4], SLOW_RESUMED)))
def test_resume_after_an_interruption(make, stop_after, tmp_path, monkeypatch):
    """The run dies right after its stop_after-th checkpoint (mid-epoch or at its end)."""
    X, y = make_blobs_pm(n=150, d=4, n_classes=2, seed=5)
    plain = make().fit(X, y)
    path = tmp_path / "ckpt.skops"
    real_save = marginkit.persistence.save
    calls = []

    def save_then_die(est, p):
        real_save(est, p)
        calls.append(1)
        if len(calls) == stop_after:
            raise KeyboardInterrupt

    monkeypatch.setattr(marginkit.persistence, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        make().fit(X, y, checkpoint=path, checkpoint_every=40)
    monkeypatch.setattr(marginkit.persistence, "save", real_save)
    resumed = make().fit(X, y, checkpoint=path, checkpoint_every=40)
    same_model(resumed, plain, X)


KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from marginkit import ALMAClassifier

    n, every = int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 40))
    y = np.where(X[:, :5].sum(axis=1) + rng.normal(scale=0.5, size=n) > 0, 1, 0)
    ALMAClassifier(
        alpha=0.8, max_iter=4, shuffle=True, random_state=0, output="last",
        fit_intercept=False
    ).fit(
        X, y, checkpoint=sys.argv[1], checkpoint_every=every
    )
    """
)


def _kill_and_resume(tmp_path, n, every, wait_for_saves):
    """Kill the training process after ``wait_for_saves`` checkpoints; resume; compare."""
    script = tmp_path / "train.py"
    script.write_text(KILL_SCRIPT)
    path = tmp_path / "ckpt.skops"
    proc = subprocess.Popen([sys.executable, str(script), str(path), str(n), str(every)])
    try:
        deadline = time.monotonic() + 600
        seen, last = 0, None
        while seen < wait_for_saves and time.monotonic() < deadline and proc.poll() is None:
            stamp = path.stat().st_mtime_ns if path.exists() else None
            if stamp is not None and stamp != last:
                seen, last = seen + 1, stamp
            time.sleep(0.002)
        assert path.exists(), "no checkpoint was written"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    saved = marginkit.load(path)
    progress = (saved._resume["epoch"], saved._resume["pos"])
    assert progress < (4, 0), "the run finished before it was killed"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 40))
    y = np.where(X[:, :5].sum(axis=1) + rng.normal(scale=0.5, size=n) > 0, 1, 0)

    def make():
        return ALMAClassifier(
            alpha=0.8, max_iter=4, shuffle=True, random_state=0, output="last", fit_intercept=False
        )

    resumed = make().fit(X, y, checkpoint=path, checkpoint_every=every)
    same_model(resumed, make().fit(X, y), X[:2000])
    return progress


def test_resume_after_sigkill_mid_epoch(tmp_path):
    _kill_and_resume(tmp_path, 60_000, 1500, wait_for_saves=1)


@pytest.mark.slow
def test_resume_after_sigkill_mid_epoch_full_size(tmp_path):
    """A million examples, four epochs; killed in the second epoch or later."""
    epoch, _ = _kill_and_resume(tmp_path, 1_000_000, 50_000, wait_for_saves=25)
    assert epoch >= 1


def test_checkpoint_errors(tmp_path):
    X, y = make_blobs_pm(n=60, d=3, seed=0)
    path = tmp_path / "c.skops"
    ALMAClassifier(shuffle=False, max_iter=2, alpha=1.0, output="last", fit_intercept=False).fit(
        X, y, checkpoint=path
    )
    with pytest.raises(ValueError, match="is a checkpoint of ALMAClassifier"):
        ALMAClassifier(
            shuffle=False, max_iter=2, alpha=0.5, output="last", fit_intercept=False
        ).fit(X, y, checkpoint=path)
    with pytest.raises(ValueError, match="is a checkpoint of PerceptronClassifier|not of"):
        PerceptronClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False).fit(
            X, y, checkpoint=path
        )
    with pytest.raises(ValueError, match="a checkpoint of training on other data"):
        ALMAClassifier(
            shuffle=False, max_iter=2, alpha=1.0, output="last", fit_intercept=False
        ).fit(X + 1.0, y, checkpoint=path)
    with pytest.raises(ValueError, match="checkpoint_every must be an integer >= 1"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, y, checkpoint=tmp_path / "d.skops", checkpoint_every=0)
    with pytest.raises(ValueError, match="checkpoint_every needs a checkpoint path"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, y, checkpoint_every=10)
    X2 = sp.csr_matrix(X)
    ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False).fit(
        X2, y, checkpoint=tmp_path / "s.skops"
    )


def test_resume_whatever_the_estimator_learned_before(tmp_path):
    """A checkpoint resumes on an estimator fitted before on other data; its feature
    names must be the data's."""
    import pandas as pd

    X, y = make_blobs_pm(n=60, d=3, seed=0)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    path = tmp_path / "c.skops"

    def make():
        return PerceptronClassifier(shuffle=False, max_iter=3, tol=None, random_state=0)

    plain = make().fit(frame, y)
    make().fit(frame, y, checkpoint=path)
    other = make().fit(np.ones((5, 7)), [0, 1, 0, 1, 0])  # fitted before, on 7 features
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning about feature names
        resumed = other.fit(frame, y, checkpoint=path)
    np.testing.assert_array_equal(resumed.decision_function(frame), plain.decision_function(frame))
    assert list(resumed.feature_names_in_) == ["a", "b", "c"]
    renamed = frame.set_axis(["x", "y", "z"], axis=1)
    with pytest.raises(ValueError, match=r"training on data with features \['a', 'b', 'c'\], not"):
        make().fit(renamed, y, checkpoint=path)
    with pytest.raises(ValueError, match="with features .*, not on these data's unnamed"):
        make().fit(X, y, checkpoint=path)


def test_checkpoint_errors_said_before_training(tmp_path):
    X, y = make_blobs_pm(n=60, d=3, seed=0)
    with pytest.raises(ValueError, match="checkpoints needs random_state to be an int"):
        ALMAClassifier(shuffle=False, random_state=np.random.RandomState(0)).fit(
            X, y, checkpoint=tmp_path / "g"
        )
    assert not (tmp_path / "g").exists()
    marginkit.save(ALMAClassifier(shuffle=False, max_iter=1).fit(X, y), tmp_path / "m.skops")
    with pytest.raises(ValueError, match="holds a model, not a checkpoint"):
        ALMAClassifier(shuffle=False, max_iter=1).fit(X, y, checkpoint=tmp_path / "m.skops")
    with pytest.raises(TypeError, match="a fit with a callable kernel cannot write checkp"):
        KernelALMAClassifier(shuffle=False, kernel=lambda A, B: A @ B.T).fit(
            X, y, checkpoint=tmp_path / "k"
        )
    assert not (tmp_path / "k").exists()
    path = tmp_path / "d.skops"
    KernelALMAClassifier(shuffle=False, max_iter=2, tol=None).fit(X, y, checkpoint=path)
    with pytest.raises(ValueError, match="checkpoint of training on dense data, not on these sp"):
        KernelALMAClassifier(shuffle=False, max_iter=2, tol=None).fit(
            sp.csr_matrix(X), y, checkpoint=path
        )


def test_a_checkpoint_holds_the_model_not_the_epochs_orders(tmp_path):
    """The orders of a shuffled fit are made from the generator's state, not stored."""
    X, y = make_blobs_pm(n=5000, d=4, seed=3)
    path = tmp_path / "c.skops"

    def make():
        return PerceptronClassifier(
            max_iter=50, shuffle=True, random_state=7, output="last", fit_intercept=False
        )

    make().fit(X, y, checkpoint=path, checkpoint_every=2500)
    # 50 orders of 5000 rows would be 2 MB; the model is 4 weights
    assert path.stat().st_size < 20_000
    same_model(make().fit(X, y, checkpoint=path), make().fit(X, y), X)


def test_default_checkpoints_cost_a_small_share_of_training(tmp_path, monkeypatch):
    """Epochs far shorter than a write: few writes, and the last is the finished state."""
    X, y = make_blobs_pm(n=200, d=4, seed=3)
    real_save = marginkit.persistence.save
    calls = []

    def slow_save(est, p):
        time.sleep(0.05)
        real_save(est, p)
        calls.append(1)

    monkeypatch.setattr(marginkit.persistence, "save", slow_save)
    path = tmp_path / "c.skops"

    def make():
        return ALMAClassifier(
            shuffle=False, alpha=0.9, max_iter=40, tol=None, output="last", fit_intercept=False
        )

    make().fit(X, y, checkpoint=path)
    assert 1 <= len(calls) <= 5
    monkeypatch.setattr(marginkit.persistence, "save", real_save)
    finished = marginkit.load(path)
    assert finished._resume["epoch"] == 40
    same_model(make().fit(X, y, checkpoint=path), make().fit(X, y), X)


def test_the_first_write_does_not_hold_back_the_next():
    """The throttle keeps writing to about 5% of the time, judged by the writes after
    the first, whose cost is a one-time warm-up: a slow first write is followed at the
    next call by another, and that one's cost spaces the rest."""
    from marginkit._checkpoints import Throttled

    costs = iter([0.2, 0.02, 0.02, 0.02])
    written = []

    def write():
        time.sleep(next(costs))
        written.append(time.perf_counter())

    throttled = Throttled(write)
    throttled()  # the warm-up
    throttled()  # written at once: the warm-up's 0.2 s would have held it 4 s
    assert len(written) == 2 and not throttled.pending
    throttled()  # within 20 x 0.02 s of the last: held
    assert len(written) == 2 and throttled.pending
    time.sleep(0.45)
    throttled()
    assert len(written) == 3 and not throttled.pending
