"""Reading speed of svmlight and CSV files, and streamed training against Vowpal Wabbit.

Writes ``--rows`` sparse rows of ``--nnz`` non-zeros among ``--n-features`` features
(default 420000 x 200 of 1000: an svmlight file of about 1.04 GB, values written with 6
significant digits; ``--quick``: 20000 rows, 49 MB),
labelled by a hidden hyperplane, once as svmlight, once as dense CSV and once in Vowpal
Wabbit's format. Then, in this one process, after a warm-up on a small file (so that no
compilation is timed), it times:

- ``marginkit.formats.read_svmlight`` (the whole file) and ``iter_chunks`` (chunks of
  ``--chunk-size`` examples);
- scikit-learn's ``load_svmlight_file`` on the same file;
- the same rows as CSV: ``marginkit.formats.read_csv`` (pyarrow's reader, after comments
  are taken out) and ``pyarrow.csv.read_csv`` alone;
- ``ALMAClassifier(p=2, alpha=0.9)``'s one epoch through ``marginkit.streaming.fit_file``
  (classes, width and index base given: no first pass), against reading alone and
  against ``fit`` on the matrix in memory (learning alone);
- Vowpal Wabbit's one pass of hinge loss over the same rows (its own parser and
  learner; the ``vowpalwabbit`` package of the ``bench`` extra), when it is installed.

It prints a table of seconds, MB/s and rows/s, and the ratios of the targets: the
compiled reader at least 5x ``load_svmlight_file``'s MB/s, whole and in chunks, and
streamed training at most 2x Vowpal Wabbit's time. The exit code is 0 whether the
targets are met or not. Files are read from the page cache (just written), so the
speeds are of parsing, not of the disk.

    python benchmarks/bench_parse.py [--quick] [--rows N] [--nnz K] [--n-features D]
        [--chunk-size N] [--no-vw] [--dir DIR] [--keep]
"""

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from _machine import machine_line  # benchmarks/_machine.py, beside this file
from numba import njit

VALUES = 4096  # distinct values, each written as %.6g


@njit(cache=False)
def _write_rows(kind, idx, vid, labels, text, lens, d, out):
    """The rows as bytes: kind 0 svmlight, 1 Vowpal Wabbit, 2 dense CSV (label last)."""
    n = 0
    digits = np.empty(20, dtype=np.uint8)
    for r in range(idx.shape[0]):
        if kind != 2:
            if labels[r] > 0:
                if kind == 0:
                    out[n] = 43  # +
                    n += 1
                out[n] = 49
                n += 1
            else:
                out[n] = 45
                out[n + 1] = 49
                n += 2
            if kind == 1:
                for c in (32, 124, 102):  # " |f"
                    out[n] = c
                    n += 1
            for k in range(idx.shape[1]):
                out[n] = 32
                n += 1
                value = idx[r, k] + 1  # one-based, as LIBSVM writes
                m = 0
                while True:
                    digits[m] = 48 + value % 10
                    value //= 10
                    m += 1
                    if value == 0:
                        break
                for j in range(m - 1, -1, -1):
                    out[n] = digits[j]
                    n += 1
                out[n] = 58
                n += 1
                v = vid[r, k]
                for j in range(lens[v]):
                    out[n] = text[v, j]
                    n += 1
        else:
            k = 0
            for col in range(d):
                if k < idx.shape[1] and idx[r, k] == col:
                    v = vid[r, k]
                    for j in range(lens[v]):
                        out[n] = text[v, j]
                        n += 1
                    k += 1
                else:
                    out[n] = 48
                    n += 1
                out[n] = 44
                n += 1
            if labels[r] < 0:
                out[n] = 45
                n += 1
            out[n] = 49
            n += 1
        out[n] = 10
        n += 1
    return n


def make_files(folder, rows, nnz, d, seed=0):
    """svmlight, Vowpal Wabbit and CSV files of the same rows; their paths."""
    rng = np.random.default_rng(seed)
    values = rng.random(VALUES) * 2.0
    strings = [f"{v:.6g}".encode() for v in values]
    values = np.array([float(s) for s in strings])
    width = max(len(s) for s in strings)
    text = np.zeros((VALUES, width), dtype=np.uint8)
    lens = np.array([len(s) for s in strings], dtype=np.int64)
    for k, s in enumerate(strings):
        text[k, : len(s)] = np.frombuffer(s, dtype=np.uint8)
    w = rng.normal(size=d)
    paths = {kind: folder / f"data.{kind}" for kind in ("svm", "vw", "csv")}
    files = {kind: open(path, "wb") for kind, path in paths.items()}  # noqa: SIM115
    try:
        for start in range(0, rows, 5000):
            n = min(5000, rows - start)
            idx = np.sort(rng.random((n, d)).argpartition(nnz, axis=1)[:, :nnz], axis=1)
            vid = rng.integers(0, VALUES, size=(n, nnz))
            labels = np.where((w[idx] * values[vid]).sum(axis=1) > 0, 1, -1)
            for code, kind in enumerate(("svm", "vw", "csv")):
                bound = n * (nnz * (width + 12) + 2 * d + 16)
                out = np.empty(bound, dtype=np.uint8)
                size = _write_rows(code, idx, vid, labels, text, lens, d, out)
                files[kind].write(out[:size].tobytes())
    finally:
        for f in files.values():
            f.close()
    return paths


def one_epoch():
    """ALMA_2(0.9), one epoch in the order given (a stream's, and so ``fit``'s here),
    no bias, the last hypothesis: the model that both fit_file and fit train."""
    from marginkit import ALMAClassifier

    return ALMAClassifier(
        p=2, alpha=0.9, output="last", max_iter=1, fit_intercept=False, shuffle=False
    )


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20000 rows (about 49 MB)")
    parser.add_argument("--rows", type=int, default=None, help="default 420000")
    parser.add_argument("--nnz", type=int, default=200, help="non-zeros per row")
    parser.add_argument("--n-features", type=int, default=1000)
    parser.add_argument("--chunk-size", type=int, default=10000)
    parser.add_argument("--no-vw", action="store_true", help="skip Vowpal Wabbit")
    parser.add_argument("--dir", default=None, help="where the files go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the files")
    args = parser.parse_args(argv)
    rows = args.rows or (20000 if args.quick else 420000)
    d, nnz, chunk = args.n_features, args.nnz, args.chunk_size

    import pyarrow
    import pyarrow.csv as pacsv
    import sklearn
    from sklearn.datasets import load_svmlight_file

    from marginkit.formats import iter_chunks, read_csv, read_svmlight
    from marginkit.streaming import fit_file

    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench_parse"))
    folder.mkdir(parents=True, exist_ok=True)
    seconds, paths = timed(lambda: make_files(folder, rows, nnz, d))
    size = {kind: path.stat().st_size / 1e6 for kind, path in paths.items()}
    print(machine_line(), flush=True)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{rows} rows x {nnz} non-zeros of {d} features; svmlight {size['svm']:.0f} MB, "
        f"CSV {size['csv']:.0f} MB, Vowpal Wabbit {size['vw']:.0f} MB (written in "
        f"{seconds:.1f} s); sklearn {sklearn.__version__}, pyarrow {pyarrow.__version__}"
    )

    # warm-up: compiled readers and passes, not timed
    small = folder / "small.svm"
    small.write_bytes(b"".join(paths["svm"].open("rb").readlines()[:200]))
    small_csv = folder / "small.csv"
    small_csv.write_bytes(b"".join(paths["csv"].open("rb").readlines()[:200]))
    read_svmlight(small)
    list(iter_chunks(small, 50, zero_based=False, n_features=d))
    read_csv(small_csv)
    given = {"classes": [-1, 1], "n_features": d, "zero_based": False}
    fit_file(
        one_epoch(),
        small,
        50,
        **given,
    )

    results = []  # (what, seconds, MB read)

    def record(what, seconds, mb):
        results.append((what, seconds, mb))
        print(f"  {what}: {seconds:.2f} s", flush=True)

    t, matrix = timed(lambda: read_svmlight(paths["svm"]))
    X, y = matrix
    record("marginkit read_svmlight, whole file", t, size["svm"])

    def chunks():
        n = 0
        for c in iter_chunks(paths["svm"], chunk, zero_based=False, n_features=d):
            n += c.X.shape[0]
        return n

    t, n = timed(chunks)
    assert n == rows
    record(f"marginkit iter_chunks, {chunk} rows a chunk", t, size["svm"])
    t_read_chunks = t

    t, (Xs, ys) = timed(lambda: load_svmlight_file(str(paths["svm"])))
    record("scikit-learn load_svmlight_file", t, size["svm"])
    same = (
        X.shape == Xs.shape
        and np.array_equal(X.indptr, Xs.indptr)
        and np.array_equal(X.indices, Xs.indices)
        and np.array_equal(X.data, Xs.data)
        and np.array_equal(y, ys)
    )
    del Xs, ys

    t, (Xc, yc) = timed(lambda: read_csv(paths["csv"]))
    record("marginkit read_csv (pyarrow), whole file", t, size["csv"])
    csv_same = np.array_equal(yc, y) and np.array_equal(Xc[:100], X[:100].toarray())
    del Xc, yc
    t, _ = timed(
        lambda: pacsv.read_csv(
            paths["csv"], read_options=pacsv.ReadOptions(autogenerate_column_names=True)
        )
    )
    record("pyarrow.csv.read_csv alone", t, size["csv"])

    t, est = timed(
        lambda: fit_file(
            one_epoch(),
            paths["svm"],
            chunk,
            **given,
        )
    )
    record("streamed ALMA_2(0.9), one epoch (fit_file)", t, size["svm"])
    t_stream = t
    t, whole = timed(lambda: one_epoch().fit(*matrix))
    record("ALMA_2(0.9).fit on the matrix in memory (learning alone)", t, size["svm"])
    t_learn = t
    streamed_same = np.array_equal(est.coef_, whole.coef_)
    X = y = matrix = None  # the memory back before Vowpal Wabbit

    t_vw = None
    if args.no_vw:
        vw_note = "skipped (--no-vw)"
    else:
        try:
            import vowpalwabbit
        except ImportError:
            vw_note = "not installed (pip install vowpalwabbit, or the bench extra)"
        else:
            options = f"--loss_function hinge -d {paths['vw']} --quiet"

            def vw_pass():
                vw = vowpalwabbit.Workspace(options)
                seen = vw.get_weighted_examples()
                vw.finish()
                return seen

            t_vw, seen = timed(vw_pass)
            assert seen == rows, seen
            record("Vowpal Wabbit, one pass of hinge loss", t_vw, size["vw"])
            vw_note = f"vowpalwabbit {vowpalwabbit.__version__}, {options.split(' -d')[0]}"

    print()
    print(f"{'':<58}{'seconds':>9}{'MB/s':>9}{'rows/s':>11}")
    for what, seconds, mb in results:
        print(f"{what:<58}{seconds:>9.2f}{mb / seconds:>9.1f}{rows / seconds:>11.0f}")
    print()
    mbs = {what: mb / seconds for what, seconds, mb in results}
    sk = mbs["scikit-learn load_svmlight_file"]
    for what in (results[0][0], results[1][0]):
        ratio = mbs[what] / sk
        verdict = "PASS" if ratio >= 5 else "MISS"
        print(f"{what} / load_svmlight_file MB/s: {ratio:.1f}x (target >= 5x: {verdict})")
    print(f"streamed training / reading alone (chunks): {t_stream / t_read_chunks:.2f}x")
    print(
        f"streamed training / max(reading, learning): "
        f"{t_stream / max(t_read_chunks, t_learn):.2f}x (1.00x: reading and learning overlap "
        "fully)"
    )
    if t_vw is not None:
        ratio = t_stream / t_vw
        print(
            f"streamed training / Vowpal Wabbit: {ratio:.2f}x (target <= 2x: "
            f"{'PASS' if ratio <= 2 else 'MISS'}); {vw_note}"
        )
    else:
        print(f"Vowpal Wabbit: {vw_note}")
    print(f"read_svmlight equals load_svmlight_file: {'yes' if same else 'NO'}")
    print(f"read_csv equals the svmlight rows: {'yes' if csv_same else 'NO'}")
    print(f"streamed model equals fit in memory: {'yes' if streamed_same else 'NO'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.keep and not args.dir:
        shutil.rmtree(folder)
    elif not args.keep:
        for path in [*paths.values(), small, small_csv]:
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
