"""An online learner in constant memory: a linear estimator's peak memory does not grow
with the length of its stream.

A child process streams noisy rows (50 dense features, 20% of the labels flipped, so
that corrections never stop) through ``partial_fit`` in chunks of 100000 rows, each
generated and dropped, and reports its peak resident memory. The same child at two
stream lengths must peak within a few megabytes of each other: a model that kept
anything per correction would grow by hundreds of megabytes between them (about 620
bytes a correction). The 10^8-row version runs under the ``slow`` marker.
"""

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="peak memory from /proc/self/status: Linux"
)

CHILD = textwrap.dedent(
    """
    import json, re, sys
    from pathlib import Path
    import numpy as np
    from marginkit import ALMAClassifier, PerceptronClassifier, PUMMAClassifier

    name, n_rows, chunk = sys.argv[1], int(sys.argv[2]), 100_000
    est = {
        "alma": lambda: ALMAClassifier(shuffle=False, alpha=0.9),
        "perceptron": lambda: PerceptronClassifier(shuffle=False, fit_intercept=True),
        "pumma": lambda: PUMMAClassifier(shuffle=False, lam=1.0),
    }[name]()
    rng = np.random.default_rng(0)
    u = rng.normal(size=50)

    def peak():
        text = Path("/proc/self/status").read_text()
        return int(re.search(r"VmHWM:\\s+(\\d+) kB", text).group(1)) * 1024

    for lo in range(0, n_rows, chunk):
        X = rng.normal(size=(min(chunk, n_rows - lo), 50))
        y = np.where(X @ u > 0, 1, -1)
        flip = rng.uniform(size=y.shape[0]) < 0.2
        y[flip] = -y[flip]
        est.partial_fit(X, y, classes=[-1, 1])
        if lo == 0:
            start = peak()  # after the first chunk: everything compiled and loaded
    print(json.dumps({"start": start, "peak": peak(), "corrections": est.n_corrections_,
                      "trials": est.n_trials_}))
    """
)


def peak_memory(name, n_rows):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, str(n_rows)],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_constant(name, short, long):
    a = peak_memory(name, short)
    b = peak_memory(name, long)
    assert b["trials"] == long
    assert b["corrections"] > 0.1 * long  # a correction on many trials
    # the log this replaces took ~620 bytes a correction: 10^6 corrections, 620 MB
    grown = b["peak"] - a["peak"]
    assert grown < 8 * 2**20, (a, b)
    # and the run's peak is the start-up's plus a few chunks' worth
    assert b["peak"] - b["start"] < 200 * 2**20, b


def test_a_tenfold_stream_in_constant_memory():
    check_constant("alma", 200_000, 2_000_000)


@pytest.mark.slow  # about 30 s on 2 cores
def test_ten_million_rows_in_constant_memory():
    check_constant("alma", 1_000_000, 10_000_000)


@pytest.mark.slow  # about 10 s each; ALMA's check above runs in make test
@pytest.mark.parametrize("name", ["perceptron", "pumma"])
def test_other_learners_in_constant_memory(name):
    check_constant(name, 300_000, 3_000_000)


@pytest.mark.slow
def test_a_hundred_million_rows_in_constant_memory():
    check_constant("alma", 10_000_000, 100_000_000)


@pytest.mark.parametrize(
    "make",
    [
        lambda: __import__("marginkit").KernelPerceptronClassifier(
            kernel="rbf", gamma=0.5, output="last", max_iter=1
        ),
        lambda: __import__("marginkit").KernelALMAClassifier(
            alpha=0.9, kernel="poly", degree=2, output="last", max_iter=1
        ),
        lambda: __import__("marginkit").KernelPUMMAClassifier(
            kernel="rbf", gamma=0.5, lam=0.0, output="last"
        ),
    ],
    ids=["perceptron", "alma", "pumma"],
)
def test_a_kernel_model_grows_only_with_its_support_vectors(make):
    """Nothing but the stored vectors (and the numbers each carries) grows with the
    stream: 180000 more trials add to the saved model no more than its new vectors."""
    import pickle

    import numpy as np

    rng = np.random.default_rng(0)

    def chunk(n):
        X = rng.uniform(-1, 1, size=(n, 2))
        keep = np.abs(X[:, 0] - X[:, 1] ** 2 + 0.3) > 0.2  # separable with a margin
        return X[keep], np.where(X[keep, 0] > X[keep, 1] ** 2 - 0.3, 1, -1)

    clf = make()
    sizes = []
    for i in range(40):
        clf.partial_fit(*chunk(5000), classes=[-1, 1])
        if i in (3, 39):
            sizes.append((clf.n_trials_, clf._kstate.m, len(pickle.dumps(clf))))
    (t_short, m_short, short), (t_long, m_long, long) = sizes
    assert t_long - t_short > 100_000
    # a vector: 2 features, and about a dozen numbers of the state (16 for a pair)
    assert long - short <= 300 * (m_long - m_short) + 4096, sizes
