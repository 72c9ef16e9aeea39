"""Peak memory of a linear learner against the length of its stream, with and without
the correction log.

``ALMAClassifier(alpha=0.9).partial_fit`` over rows of 50 dense Gaussian features with
20% of the labels flipped (corrections never stop), generated in chunks of 100000 and
dropped, as a new user streams data. Each stream length runs in a fresh process, which
reports its peak resident memory (VmHWM). ``keep_corrections=True`` keeps the log the
voted output replays; the default keeps only the weights. The growth per correction of
the two is printed: the ratio this benchmark watches.

Run ``python benchmarks/bench_memory.py`` (about two minutes) or ``--quick``. The exit
code is 0 whatever the numbers.
"""

import argparse
import datetime
import json
import platform
import subprocess
import sys

from _machine import machine_line  # benchmarks/_machine.py, beside this file

CHILD = """
import json, re, sys
from pathlib import Path
import numpy as np
from marginkit import ALMAClassifier

n_rows, keep, chunk = int(sys.argv[1]), sys.argv[2] == "1", 100_000
clf = ALMAClassifier(alpha=0.9, keep_corrections=keep, fit_intercept=False, output="last")
rng = np.random.default_rng(0)
u = rng.normal(size=50)
for lo in range(0, n_rows, chunk):
    X = rng.normal(size=(min(chunk, n_rows - lo), 50))
    y = np.where(X @ u > 0, 1, -1)
    flip = rng.uniform(size=y.shape[0]) < 0.2
    y[flip] = -y[flip]
    clf.partial_fit(X, y, classes=[-1, 1])
text = Path("/proc/self/status").read_text()
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", text).group(1)) * 1024
print(json.dumps({"peak": peak, "corrections": clf.n_corrections_}))
"""


def run(n_rows, keep):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n_rows), "1" if keep else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="streams of 0.25M to 1M rows")
    args = parser.parse_args()
    lengths = [250_000 * i for i in range(1, 5)]
    if not args.quick:
        lengths = [10 * n for n in lengths]
    print(f"# {machine_line()}", flush=True)
    print(f"# bench_memory: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"# {platform.platform()}, Python {platform.python_version()}")
    print("| rows | corrections | peak RSS, log kept | peak RSS, weights only |")
    print("| ---: | ---: | ---: | ---: |")
    results = []
    for n in lengths:
        logged, plain = run(n, True), run(n, False)
        assert logged["corrections"] == plain["corrections"]
        results.append((n, logged, plain))
        print(
            f"| {n / 1e6:g}M | {plain['corrections'] / 1e6:.2f}M | "
            f"{logged['peak'] / 2**20:.0f} MB | {plain['peak'] / 2**20:.0f} MB |"
        )
    (n0, l0, p0), (n1, l1, p1) = results[0], results[-1]
    k = l1["corrections"] - l0["corrections"]
    print(
        f"growth per correction from {n0 / 1e6:g}M to {n1 / 1e6:g}M rows: "
        f"log kept {(l1['peak'] - l0['peak']) / k:.0f} bytes, "
        f"weights only {(p1['peak'] - p0['peak']) / k:.2f} bytes"
    )


if __name__ == "__main__":
    main()
