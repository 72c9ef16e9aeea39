"""Training on an svmlight file in memory and streamed in chunks, in one run.

Writes a file of ``--size-mb`` megabytes (copies of one block of sparse rows separable
with a margin, or ``--data FILE``), then, each in a fresh process, trains an estimator
(default ALMA_2(0.9), one epoch) on it:

- in memory: ``read_data`` (scikit-learn's ``load_svmlight_file``) and ``fit``;
- streamed: ``marginkit.streaming.fit_file`` with ``--chunk-size`` lines per chunk,
  once as it comes (a first pass finds the labels and the width) and once with them
  given (``classes``, ``n_features``, ``zero_based``: no first pass);
- a peer, streamed: scikit-learn's ``SGDClassifier(loss="hinge")`` with ``partial_fit``
  over the same chunks (the usual out-of-core recipe), for scale.

It prints each run's wall time and peak resident memory above the process's size
after start-up (VmHWM less VmRSS before the data), their ratios, and checks that the
streamed model equals the in-memory one.

    python benchmarks/bench_stream.py [--size-mb 400] [--chunk-size 10000]
        [--estimator alma] [--param alpha=0.9 ...] [--data FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from _machine import machine_line  # benchmarks/_machine.py, beside this file
from sklearn.datasets import dump_svmlight_file

CHILD = textwrap.dedent(
    """
    import json, re, sys, time
    from pathlib import Path
    import numpy as np

    def status(key):
        text = Path("/proc/self/status").read_text()
        return int(re.search(rf"{key}:\\s+(\\d+) kB", text).group(1)) * 1024

    mode, path, chunk, name, params, out = sys.argv[1:7]
    chunk, params = int(chunk), json.loads(params)
    from marginkit.tasks import make_estimator, read_data
    from marginkit.streaming import FileStream, fit_file
    # warm up on the first chunk: imports and compiled loops are not the data's memory
    first = next(FileStream(path, min(chunk, 1000))())
    if mode == "sgd":
        from sklearn.linear_model import SGDClassifier
        est = SGDClassifier(loss="hinge", random_state=0)
        est.partial_fit(*first, classes=np.unique(first[1]))
        est = SGDClassifier(loss="hinge", random_state=0)
    else:
        make_estimator(name, params).fit(*first)
    del first
    base = status("VmRSS")
    start = time.perf_counter()
    if mode == "memory":
        X, y = read_data(path)
        est = make_estimator(name, params).fit(X, y)
        n = X.shape[0]
    elif mode == "stream":
        est = fit_file(make_estimator(name, params), path, chunk_size=chunk)
        n = est.n_trials_
    elif mode == "given":
        scan = FileStream(path, chunk)  # what a user would know already, not timed
        given = {
            "classes": scan.classes,
            "n_features": scan.n_features,
            "zero_based": scan.zero_based,
        }
        start = time.perf_counter()
        est = fit_file(make_estimator(name, params), path, chunk_size=chunk, **given)
        n = est.n_trials_
    else:
        stream = FileStream(path, chunk)
        n = 0
        for Xc, yc in stream():
            est.partial_fit(Xc, yc, classes=stream.classes)
            n += Xc.shape[0]
    seconds = time.perf_counter() - start
    np.save(out, est.coef_)
    print(json.dumps({"seconds": seconds, "peak": status("VmHWM") - base, "n": int(n),
                      "corrections": int(getattr(est, "n_corrections_", -1))}))
    """
)


def make_file(path, size_mb, seed=0):
    """Copies of one block of 20000 sparse rows, separable with a margin, to size_mb."""
    rng = np.random.RandomState(seed)
    X = np.round(rng.rand(30000, 100), 3)
    X[X < 0.8] = 0.0
    s = X[:, :10].sum(axis=1) - X[:, 10:20].sum(axis=1)
    keep = np.abs(s) > 0.3
    X, y = X[keep][:20000], np.where(s[keep][:20000] > 0, 1, -1)
    block = Path(str(path) + ".block")
    dump_svmlight_file(X, y, str(block))
    data = block.read_bytes()
    block.unlink()
    copies = max(1, int(size_mb * 2**20 / len(data)))
    with open(path, "wb") as f:
        for _ in range(copies):
            f.write(data)


def run(mode, path, chunk, name, params, out):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    args = [mode, str(path), str(chunk), name, json.dumps(params), str(out)]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(f"{mode} run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    from marginkit.tasks import parse_param

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=400)
    parser.add_argument("--chunk-size", type=int, default=10000)
    parser.add_argument("--estimator", default="alma")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--data", help="an svmlight file to use instead of a generated one")
    args = parser.parse_args(argv)
    params = dict(parse_param(p) for p in args.param) or {"alpha": 0.9, "max_iter": 1}
    tmp = Path(tempfile.mkdtemp())
    path = Path(args.data) if args.data else tmp / "data.svm"
    if not args.data:
        make_file(path, args.size_mb)
    size = path.stat().st_size / 2**20
    print(machine_line(), flush=True)
    print(f"file: {path} ({size:.0f} MB); {args.estimator} {params}; chunks of {args.chunk_size}")
    results = {}
    for mode in ("memory", "stream", "given", "sgd"):
        results[mode] = run(mode, path, args.chunk_size, args.estimator, params, tmp / mode)
    print(f"{'run':<34}{'seconds':>9}{'peak MB':>10}{'examples':>11}")
    labels = {
        "memory": "in memory (read whole, fit)",
        "stream": "streamed (marginkit.streaming)",
        "given": "streamed, classes and width given",
        "sgd": "streamed SGDClassifier partial_fit",
    }
    for mode, r in results.items():
        print(f"{labels[mode]:<34}{r['seconds']:>9.2f}{r['peak'] / 2**20:>10.1f}{r['n']:>11}")
    mem, st, sgd = results["memory"], results["stream"], results["sgd"]
    one = results["given"]
    coefs = [np.load(tmp / f"{mode}.npy") for mode in ("memory", "stream", "given")]
    same = all(np.array_equal(coefs[0], c) for c in coefs[1:])
    print(f"streamed / in-memory time: {st['seconds'] / mem['seconds']:.2f}x")
    ratio = one["seconds"] / mem["seconds"]
    print(f"streamed, classes and width given / in-memory time: {ratio:.2f}x")
    print(f"in-memory / streamed peak memory: {mem['peak'] / max(st['peak'], 1):.1f}x")
    print(
        f"streamed marginkit / streamed SGDClassifier time: {st['seconds'] / sgd['seconds']:.2f}x"
    )
    print(f"streamed models equal the in-memory model: {'yes' if same else 'NO'}")
    print(
        f"corrections: in memory {mem['corrections']}, streamed {st['corrections']}, "
        f"{one['corrections']}"
    )
    for f in tmp.iterdir():
        f.unlink()
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
