"""The machine a benchmark ran on: the CPU's model and the BLAS kernel that was loaded.

Every benchmark prints ``machine_line()`` before its figures: its ratios (one kernel epoch
against the matrix-product bound, a pass against scikit-learn's or Vowpal Wabbit's) move
with the CPU and with the OpenBLAS kernel numpy and scipy picked for it (or that
``OPENBLAS_CORETYPE`` forced), so a figure without them cannot be compared.
"""

import os
from pathlib import Path


def cpu_model():
    """The CPU's model name (/proc/cpuinfo), else what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "unknown CPU"


def _owner(path):
    """The package a BLAS library was loaded from: numpy's and scipy's wheels each carry
    their own OpenBLAS."""
    for package in ("numpy", "scipy", "torch"):
        if f"{os.sep}{package}.libs{os.sep}" in (path or "") or f"{os.sep}{package}{os.sep}" in (
            path or ""
        ):
            return package
    return os.path.basename(path or "?")


def blas_kernels():
    """What threadpoolctl reports of each loaded BLAS: '<api> <version> <kernel> (<owner>,
    <n> threads)'. numpy's and scipy's BLAS are loaded first, so both are listed."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401

    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["unknown (threadpoolctl is not installed)"]
    return [
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture') or '?'} "
        f"({_owner(i.get('filepath'))}, {i.get('num_threads')} threads)"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ] or ["none found"]


def machine_line():
    """'machine: <CPU model>, <n> cores (<m> usable); BLAS: <kernels>'. The BLAS kernel
    is OpenBLAS' name for the code it runs (on AMD Zen it names Haswell's)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    cores = f"{os.cpu_count()} cores" + (f" ({usable} usable)" if usable else "")
    forced = os.environ.get("OPENBLAS_CORETYPE")
    blas = "; ".join(blas_kernels()) + (f" (OPENBLAS_CORETYPE={forced})" if forced else "")
    return f"machine: {cpu_model()}, {cores}; BLAS: {blas}"
