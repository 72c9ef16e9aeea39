"""Streaming a file several times larger than the memory the process may use.

A child process takes its data-segment size after start-up (imports, compiled loops)
plus a small headroom as a hard limit (RLIMIT_DATA: the heap and every private
writable mapping, so every numpy array), makes a file of at least three times that
limit, and trains ALMA on it with ``marginkit.streaming``. (Its model is O(n_features):
no correction log is kept without the voted output; tests/test_constant_memory.py checks
that for noisy streams.) The file is many copies of
one prefix, so one streamed pass over it is ``n_epochs = copies`` passes over the
prefix, which the test fits in memory and compares exactly.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from marginkit import ALMAClassifier
from marginkit.tasks import read_data

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_DATA and /proc/self/status: Linux"
)

HEADROOM = 16 * 2**20  # bytes the child may allocate beyond its start-up size
CHUNK = 2000  # lines per chunk: about 0.4 MB of text

CHILD = textwrap.dedent(
    """
    import json, math, re, resource, sys
    from pathlib import Path
    import numpy as np
    from marginkit import ALMAClassifier
    from marginkit.streaming import fit_file

    prefix, big, coef_out = map(Path, sys.argv[1:4])
    headroom, chunk = int(sys.argv[4]), int(sys.argv[5])

    def status(key):
        text = Path("/proc/self/status").read_text()
        return int(re.search(rf"{key}:\\s+(\\d+) kB", text).group(1)) * 1024

    # the same work once on the prefix first: nothing compiles or loads under the cap
    fit_file(ALMAClassifier(shuffle=False, alpha=0.9), prefix, chunk_size=chunk)
    cap = status("VmData") + headroom
    data = prefix.read_bytes()
    copies = math.ceil(3 * cap / len(data))
    with open(big, "wb") as f:
        for _ in range(copies):
            f.write(data)
    del data
    size = big.stat().st_size
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    try:
        np.empty(size, dtype=np.uint8)
        held_whole = True
    except MemoryError:
        held_whole = False
    rss_before = status("VmRSS")
    est = ALMAClassifier(shuffle=False, alpha=0.9, max_iter=1, output="last", fit_intercept=False)
    est = fit_file(est, big, chunk_size=chunk)
    np.save(coef_out, est.coef_)
    print(json.dumps({
        "cap": cap, "file_size": size, "copies": copies, "held_whole": held_whole,
        "n_trials": est.n_trials_, "n_corrections": est.n_corrections_,
        "rss_before": rss_before, "rss_peak": status("VmHWM"),
    }))
    """
)


@pytest.mark.slow  # writes and streams a file of several hundred MB
def test_stream_a_file_three_times_the_memory_cap(tmp_path):
    rng = np.random.RandomState(0)
    X = np.round(rng.rand(30000, 50), 3)
    X[X < 0.6] = 0.0
    # separable with a margin: ALMA's corrections, and so its log, stop growing; what
    # grows with the stream is then only what streaming itself would hold
    s = X[:, :5].sum(axis=1) - X[:, 5:10].sum(axis=1)
    keep = np.abs(s) > 0.4
    X, y = X[keep][:20000], np.where(s[keep][:20000] > 0, 1, -1)
    prefix, big, coef = tmp_path / "prefix.svm", tmp_path / "big.svm", tmp_path / "coef.npy"
    dump_svmlight_file(X, y, str(prefix))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    args = [str(prefix), str(big), str(coef), str(HEADROOM), str(CHUNK)]
    run = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    print(json.dumps(report))  # shown by pytest -s: the cap, the file, the peak RSS
    assert report["file_size"] >= 3 * report["cap"]
    assert not report["held_whole"], "the cap does not bind: the file's bytes fit under it"
    # the examples the stream held were parsed chunk by chunk, under the cap
    assert report["n_trials"] == report["copies"] * X.shape[0]

    # one streamed pass over the copies = n_epochs = copies passes over the prefix
    Xp, yp = read_data(prefix)
    whole = ALMAClassifier(
        shuffle=False,
        alpha=0.9,
        max_iter=report["copies"],
        tol=None,
        output="last",
        fit_intercept=False,
    ).fit(Xp, yp)
    assert report["n_corrections"] == whole.n_corrections_
    np.testing.assert_array_equal(np.load(coef), whole.coef_)
    big.unlink()
