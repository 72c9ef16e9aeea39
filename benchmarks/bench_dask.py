"""A sweep of experiment cells, serially and on a local Dask cluster, in one run.

Runs the first ``--cells`` cells of an experiment's full spec (default ``gentile-usps``:
kernel Perceptron and ALMA_2 fits of three epochs on USPS, a few seconds each;
``gentile-table6`` cells take a tenth of a second) serially and on ``--workers`` local
worker processes, checks that the results are the same, and prints the wall times, the
speed-up and the overhead per cell of the cluster (its wall time less the ideal
``serial / workers``, per cell; cluster start-up and each worker's loading of the data
included).

    python benchmarks/bench_dask.py [--experiment gentile-usps] [--cells 20] [--workers 2]
        [--data-dir DIR]
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

from _machine import machine_line  # benchmarks/_machine.py, beside this file

from marginkit.experiments import BLAS_ONE_THREAD, get_experiment
from marginkit.experiments.runner import Spec, run

#: the real data sets: $MARGINKIT_DATA when set, else ../shared/data
SHARED = Path(
    os.environ.get("MARGINKIT_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


def strip_timings(value):
    if isinstance(value, dict):
        return {k: strip_timings(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [strip_timings(v) for v in value]
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--experiment", default="gentile-usps")
    parser.add_argument("--data-dir", default=str(SHARED) if SHARED.is_dir() else None)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    experiment = get_experiment(args.experiment)
    uses_data = getattr(experiment, "USES_DATA", False)
    data_dir = args.data_dir if uses_data else None
    full = experiment.build_spec()
    spec = Spec(full.experiment, full.config, full.cells[: args.cells])
    out = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    run_cell = experiment.cell_runner(data_dir) if uses_data else experiment.run_cell
    serial = run(spec, run_cell, out / "serial.json", quiet=True)
    t_serial = time.perf_counter() - start
    start = time.perf_counter()
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # one BLAS thread per worker: the workers share the cores among themselves
            env=BLAS_ONE_THREAD,
        ) as cluster,
        Client(cluster) as client,
    ):
        t_up = time.perf_counter() - start
        dask = run(spec, None, out / "dask.json", quiet=True, client=client, data_dir=data_dir)
    t_dask = time.perf_counter() - start
    same = strip_timings(serial.document["results"]) == strip_timings(dask.document["results"])
    n = len(spec.cells)
    print(machine_line(), flush=True)
    print(f"{n} cells of {args.experiment} (full size), {os.cpu_count()} cores")
    print(f"serial (data loading included) {t_serial:8.2f} s")
    print(f"{args.workers} local workers (with start-up {t_up:.2f} s) {t_dask:8.2f} s")
    print(f"speed-up                    {t_serial / t_dask:8.2f}x")
    print(f"overhead per cell           {(t_dask - t_serial / args.workers) / n:8.3f} s")
    print(f"results identical           {same}")


if __name__ == "__main__":
    main()
