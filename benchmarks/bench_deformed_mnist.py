"""Deformed MNIST digits a second from ``marginkit.datasets.iter_deformed_mnist``.

Reads ``--chunks`` chunks of ``--chunk-size`` rows at the default deformations, after a
first chunk that loads the training files and the compiled kernel, and prints the
digits a second (best and median of ``--repeat`` runs). The target is 20000 a second
on one core: run it with one thread everywhere,

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
        python benchmarks/bench_deformed_mnist.py [--chunk-size 10000] [--chunks 10]
        [--repeat 3] [--data-dir DIR]
"""

import argparse
import statistics
import time

from _machine import machine_line  # benchmarks/_machine.py, beside this file

from marginkit.datasets import iter_deformed_mnist

TARGET = 20000


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-size", type=int, default=10000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    print(machine_line())
    stream = iter_deformed_mnist(args.chunk_size, random_state=0, data_dir=args.data_dir)
    next(stream)  # the files and the compiled kernel
    rates = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        n = sum(len(y) for _, y in (next(stream) for _ in range(args.chunks)))
        rates.append(n / (time.perf_counter() - start))
    best, median = max(rates), statistics.median(rates)
    print(f"{args.chunks} chunks of {args.chunk_size} digits, {args.repeat} runs:")
    print(f"  {best:,.0f} digits/s best, {median:,.0f} median")
    print(f"  target {TARGET:,} digits/s on one core: {'PASS' if median >= TARGET else 'MISS'}")


if __name__ == "__main__":
    main()
