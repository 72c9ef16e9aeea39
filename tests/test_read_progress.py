"""Progress over a streamed file: its bytes, with the file's size as the total from the
first (scan) pass on (FileStream's read_progress, marginkit train's bar)."""

import bz2
import gzip
import lzma
from collections import defaultdict

import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

from marginkit import PerceptronClassifier, tasks
from marginkit.formats import iter_chunks
from marginkit.streaming import FileStream, fit_file
from marginkit.tasks import train

COMPRESS = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


@pytest.fixture
def svm_bytes(tmp_path):
    X, y = make_classification(600, 8, random_state=0)
    path = tmp_path / "plain.svm"
    dump_svmlight_file(X, y, str(path))
    return path.read_bytes()


def write(tmp_path, data, suffix, name="rows"):
    path = tmp_path / f"{name}.svm{suffix}"
    path.write_bytes(COMPRESS[suffix](data))
    return path


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_every_pass_reads_the_file_on_disk_once(tmp_path, svm_bytes, suffix):
    """The scan, the pass for the Perceptron's units (the largest norm), then each pass
    of the fit: their reads add up to the size of the file on disk (compressed, where
    it is), in order, each under its own stage."""
    path = write(tmp_path, svm_bytes, suffix)
    seen = defaultdict(int)
    order = []

    def report(stage, n):
        assert n > 0
        if not order or order[-1] != stage:
            order.append(stage)
        seen[stage] += n

    est = PerceptronClassifier(max_iter=3, tol=None, fit_intercept=False)
    stream_size = path.stat().st_size
    fitted = fit_file(est, path, chunk_size=97, read_progress=report, prefetch=False)
    assert fitted.n_iter_ == 3
    assert order == ["scan", "norms", "pass 1", "pass 2", "pass 3"]
    assert all(total == stream_size for total in seen.values()), dict(seen)


def test_the_reads_are_reported_with_prefetching(tmp_path, svm_bytes):
    """A background thread reads ahead: its reads are reported all the same."""
    path = write(tmp_path, svm_bytes, ".gz")
    seen = defaultdict(int)
    stream = FileStream(
        path, 50, read_progress=lambda stage, n: seen.__setitem__(stage, seen[stage] + n)
    )
    assert stream.file_size == path.stat().st_size
    assert sum(X.shape[0] for X, _ in stream()) == 600
    assert dict(seen) == {"scan": stream.file_size, "pass 1": stream.file_size}


def test_iter_chunks_reports_the_bytes_it_reads(tmp_path, svm_bytes):
    path = write(tmp_path, svm_bytes, ".bz2")
    reads = []
    rows = sum(c.X.shape[0] for c in iter_chunks(path, 64, n_features=8, on_read=reads.append))
    assert rows == 600
    assert sum(reads) == path.stat().st_size


def test_train_draws_a_bar_with_the_file_size_from_the_scan(tmp_path, svm_bytes, capsys):
    """marginkit train --chunk-size with a progress bar (verbose): one bar in bytes,
    whose total is the file's size from the start, begun again for each pass."""
    path = write(tmp_path, svm_bytes * 40, "", name="big")  # 24 000 rows
    train(
        path,
        "perceptron",
        tmp_path / "m.skops",
        chunk_size=1000,
        params={"max_iter": 2, "tol": None, "verbose": 1},
    )
    err = capsys.readouterr().err
    size_kib = path.stat().st_size / 1024
    assert "PerceptronClassifier: scan" in err
    assert "PerceptronClassifier: pass 2" in err
    assert f"/{size_kib:.0f}k" in err or f"/{size_kib / 1024:.2f}M" in err, err[-400:]
    assert "example" not in err  # not a counter of examples without a total


def test_a_file_that_cannot_be_scanned_closes_its_bar(tmp_path, monkeypatch):
    """The bar is made before the scan; a scan that fails closes it (no bar left on
    the terminal), as the end of a fit does."""
    closed = []
    real_close = tasks._ReadBar.close

    def close(bar):
        closed.append(bar.stage)
        real_close(bar)

    monkeypatch.setattr(tasks._ReadBar, "close", close)
    path = tmp_path / "bad.svm"
    path.write_text("1 1:0.5\nnot a row\n")
    with pytest.raises(ValueError, match="bad.svm: cannot be read as an svmlight file"):
        train(path, "perceptron", tmp_path / "m.skops", chunk_size=10, params={"verbose": 1})
    assert closed == ["scan"]
    good = write(tmp_path, b"1 1:0.5\n-1 1:-0.5\n" * 50, "")
    train(good, "perceptron", tmp_path / "m.skops", chunk_size=10, params={"max_iter": 2})
    assert closed[1:] == ["pass 2"]
