"""Run the exactness tests under every OpenBLAS kernel this CPU can execute.

The tests marked ``exactness`` compare the engines' decisions (which trials update, how
many corrections, the signs a vote takes) with a reference's. numpy and scipy ship
OpenBLAS built for many CPUs and pick its kernel when they load; ``OPENBLAS_CORETYPE``
forces one. Each kernel sums in its own order, so a test that depended on a margin lying
on one side of its threshold by less than rounding would pass under one and fail under
another. This runs ``pytest -m exactness`` once per kernel the CPU supports (Prescott,
Sandybridge, Haswell, SkylakeX, and the one OpenBLAS picks by itself) and prints, for
each, the kernel threadpoolctl says was loaded and the result.

    python tools/exactness_on_every_blas.py [-- extra pytest arguments]

Exit status 0 when every kernel run passed. A kernel whose instructions this CPU lacks
(read from /proc/cpuinfo, else from a trial run that does not crash) is reported as
skipped.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The OpenBLAS core types run, with the CPU flags (as /proc/cpuinfo names them) each needs
KERNELS = {
    "Prescott": {"sse3"},
    "Sandybridge": {"avx"},
    "Haswell": {"avx2", "fma"},
    "SkylakeX": {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"},
}

#: Loads numpy's and scipy's BLAS, multiplies, and prints what threadpoolctl reports
PROBE = """
import json
import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_info
a = np.ones((64, 64))
a @ a
scipy.linalg.blas.dgemm(1.0, a, a)
print(json.dumps([
    {k: i.get(k) for k in ("internal_api", "version", "architecture", "filepath")}
    for i in threadpool_info() if i.get("user_api") == "blas"
]))
"""


def cpu_flags():
    """The CPU's flags from /proc/cpuinfo, or None where there is none (not Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            if "pni" in flags:  # Linux names SSE3 "pni"
                flags.add("sse3")
            return flags
    return None


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def environment(coretype):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else src
    return env


def probe(coretype):
    """(what threadpoolctl reports, None) or (None, why the trial run failed)."""
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=environment(coretype),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode != 0:
        return None, f"trial run exited {run.returncode}: {run.stderr.strip()[-200:]}"
    return json.loads(run.stdout.strip().splitlines()[-1]), None


def describe(libraries):
    """'openblas 0.3.31 Haswell (numpy), openblas 0.3.28 Haswell (scipy)'."""
    parts = []
    for lib in libraries:
        owner = next(
            (p for p in ("numpy", "scipy") if f"/{p}.libs/" in (lib["filepath"] or "")), "?"
        )
        parts.append(f"{lib['internal_api']} {lib['version']} {lib['architecture']} ({owner})")
    return ", ".join(parts) or "no BLAS found"


def run_tests(coretype, extra):
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "exactness", "-q", "-p", "no:cacheprovider"]
        + extra,
        cwd=ROOT,
        env=environment(coretype),
        capture_output=True,
        text=True,
    )
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else f"exit {run.returncode}"
    failed = [line for line in lines if line.startswith("FAILED")]
    # tests/conftest.py prints the kernels the test process itself loaded
    ran = [line.split(": ", 1)[1] for line in lines if line.startswith("BLAS kernels of this")]
    return run.returncode == 0, summary, failed, ran, time.monotonic() - start


def main(argv):
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    flags = cpu_flags()
    print(f"CPU: {cpu_model()}")
    rows, ok = [], True
    for coretype in [*KERNELS, None]:
        name = coretype or "default"
        if coretype is not None and flags is not None and not KERNELS[coretype] <= flags:
            missing = " ".join(sorted(KERNELS[coretype] - flags))
            rows.append((name, "-", f"skipped: the CPU lacks {missing}"))
            continue
        libraries, why = probe(coretype)
        if libraries is None:
            rows.append((name, "-", f"skipped: {why}"))
            continue
        print(f"running the exactness tests with OPENBLAS_CORETYPE={coretype or '(unset)'} ...")
        sys.stdout.flush()
        passed, summary, failed, ran, seconds = run_tests(coretype, extra)
        ok &= passed
        result = f"{'passed' if passed else 'FAILED'}: {summary} ({seconds:.0f} s)"
        rows.append((name, ran[0] if ran else describe(libraries), result))
        for line in failed:
            print("  " + line)
    header = ("OPENBLAS_CORETYPE", "threadpoolctl reports", "result")
    w0, w1 = (max(len(r[i]) for r in [header, *rows]) for i in range(2))
    print()
    for name, reported, result in [header, *rows]:
        print(f"{name:<{w0}}  {reported:<{w1}}  {result}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
