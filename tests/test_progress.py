"""verbose=1: a progress bar that moves with the work and stays, full, at the end."""

import re
import warnings

import numpy as np
from conftest import make_blobs_pm

from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
)


def _counts(err, name):
    """The (done, total) of every state of the bar of ``name`` printed on stderr."""
    frames = err.replace("\r", "\n").splitlines()
    return [
        tuple(map(int, m.groups()))
        for f in frames
        if (m := re.search(rf"{name}:.*\| (\d+)/(\d+) ", f))
    ]


def test_one_epoch_on_ten_classes_counts_each_class(capsys):
    X, y = make_blobs_pm(n=300, d=6, n_classes=10, seed=1)
    ALMAClassifier(shuffle=False, verbose=1, max_iter=1).fit(X, y)
    counts = _counts(capsys.readouterr().err, "ALMAClassifier")
    assert counts[0] == (0, 10) and counts[-1] == (10, 10)


def test_loops_that_end_early_end_full(capsys):
    X, y = make_blobs_pm(n=200, d=4, n_classes=3, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pumma = PUMMAClassifier(shuffle=False, verbose=1, max_iter=500).fit(X, y)
        mp = MarginPerceptronClassifier(shuffle=False, verbose=1, max_iter=400).fit(X, y)
    err = capsys.readouterr().err
    done, total = _counts(err, "PUMMAClassifier")[-1]
    assert done == total == pumma.n_epochs_ < 500
    done, total = _counts(err, "MarginPerceptronClassifier")[-1]
    assert done == total == int(np.sum(mp.n_iter_))


def test_kernel_bar_counts_examples(capsys):
    X, y = make_blobs_pm(n=120, d=4, n_classes=3, seed=3)
    KernelALMAClassifier(shuffle=False, verbose=1, max_iter=2, block_size=16).fit(X, y)
    assert _counts(capsys.readouterr().err, "KernelALMAClassifier")[-1] == (240, 240)
