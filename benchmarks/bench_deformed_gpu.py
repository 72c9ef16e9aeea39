"""Exact kernel ALMA_2 on millions of deformed MNIST digits, on a GPU.

The products of the blocked engine run on the device (torch, scikit-learn's array API
dispatch); the digits are made by worker processes, chunk k by
``iter_deformed_mnist(chunk, n_samples=chunk, random_state=1000 + k, dtype=np.uint8)``,
and learnt by ``partial_fit``, ten classes, with Gentile's MNIST kernel
(1 + x . y / 255)^4 on the raw pixels. Every million rows: the support vectors, the
corrections, the training seconds (the device synchronised around each call), the
averaged output's error on the 10000 MNIST test digits and the device's peak memory.
``--budget`` runs the same stream with a support-vector budget, by ``--budget-rule``
(``project_new``, the estimators' default, or ``project``).

Target (issue 32): the 8.1 million digits of Loosli, Canu and Bottou's stream exact on
one H100 in at most 10 minutes. docs/budget.md has the figures of one H200.

A benchmark reports; it does not fail. Usage, with the MNIST files in
``$MARGINKIT_DATA`` (or ``--data``)::

    python benchmarks/bench_deformed_gpu.py [--rows 8100000] [--workers 15]
        [--budget B] [--budget-rule project_new|project]
"""

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before scipy loads: array API dispatch

import numpy as np
from _machine import machine_line  # benchmarks/_machine.py, beside this file

CHUNK = 100_000


def make(task):
    """Chunk k of the stream: (X as uint8, y)."""
    k, data = task
    from marginkit.datasets import iter_deformed_mnist

    chunks = iter_deformed_mnist(
        CHUNK, n_samples=CHUNK, random_state=1000 + k, data_dir=data, dtype=np.uint8
    )
    return next(chunks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8_100_000)
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--budget-rule", choices=["project_new", "project"], default="project_new")
    parser.add_argument("--data", default=None, help="the MNIST files' folder")
    args = parser.parse_args()

    import sklearn
    import torch

    from marginkit import KernelALMAClassifier
    from marginkit.datasets import load_mnist

    print(machine_line())
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)
    start = time.perf_counter()
    _, _, X_test, y_test = load_mnist(args.data)
    X_test = torch.asarray(X_test, device="cuda")
    clf = KernelALMAClassifier(
        kernel="poly",
        degree=4,
        gamma=1 / 255,
        coef0=1.0,
        budget=args.budget,
        budget_rule=args.budget_rule,
        fit_intercept=False,
    )
    fit_s = 0.0
    tasks = [(k, args.data) for k in range(-(-args.rows // CHUNK))]
    with (
        ProcessPoolExecutor(args.workers) as pool,
        sklearn.config_context(array_api_dispatch=True),
    ):
        for i, (X, y) in enumerate(pool.map(make, tasks)):
            X = torch.asarray(X, device="cuda").to(torch.float64)
            y = torch.asarray(y.astype(np.int64), device="cuda")
            torch.cuda.synchronize()
            t = time.perf_counter()
            clf.partial_fit(X, y, classes=np.arange(10) if i == 0 else None)
            torch.cuda.synchronize()
            fit_s += time.perf_counter() - t
            rows = (i + 1) * CHUNK
            if rows % 1_000_000 == 0 or rows >= args.rows:
                error = float((clf.predict(X_test).cpu().numpy() != y_test).mean())
                print(
                    f"rows={rows} SV={clf.support_vectors_.shape[0]} "
                    f"corrections={clf.n_corrections_} fit={fit_s:.1f}s "
                    f"wall={time.perf_counter() - start:.0f}s test_error_avg={100 * error:.2f}% "
                    f"gpu_mem={torch.cuda.max_memory_allocated() / 2**30:.1f}GB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
