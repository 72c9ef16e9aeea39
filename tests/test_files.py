"""marginkit._files.atomic_write: the one writer of models, checkpoints, results, figures."""

import os
import stat

import pytest
from conftest import make_blobs_pm

import marginkit
from marginkit import _files
from marginkit._files import atomic_write
from marginkit.experiments.runner import write_json_atomic, write_text_atomic


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("data", [b"bytes\n", "text \u00e9\n", lambda f: f.write(b"call\n")])
def test_writes_bytes_text_or_through_a_function(tmp_path, data):
    path = tmp_path / "out.txt"
    path.write_text("old")
    assert atomic_write(path, data) == path
    expected = {bytes: b"bytes\n", str: "text \u00e9\n".encode()}.get(type(data), b"call\n")
    assert path.read_bytes() == expected
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_the_temporary_file_is_made_exclusively_beside_the_target(tmp_path):
    seen = []

    def write(f):
        (tmp,) = [p for p in tmp_path.iterdir() if p.name != "out.txt"]
        seen.append(tmp)
        assert tmp.name.startswith(".out.txt.") and tmp.name.endswith(".tmp")
        assert not tmp.is_symlink() and mode(tmp) in (0o600, 0o666 & ~_files._umask())
        f.write(b"new")

    atomic_write(tmp_path / "out.txt", write)
    assert (tmp_path / "out.txt").read_bytes() == b"new" and not seen[0].exists()


def test_a_planted_symlink_is_neither_followed_nor_written_through(tmp_path):
    """The former writer opened ``.{name}.{pid}.tmp`` with open(): a link planted there
    sent the results into another file of the user's."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.symlink(victim, shared / f".results.json.{os.getpid()}.tmp")
    write_text_atomic(shared / "results.json", "{}")
    assert victim.read_text() == "precious"
    os.symlink(victim, shared / "link.json")  # a link at the target itself is replaced
    write_json_atomic(shared / "link.json", {"a": 1})
    assert victim.read_text() == "precious"
    assert not (shared / "link.json").is_symlink()


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def fail(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(path, fail)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_permissions(tmp_path, monkeypatch):
    umask = _files._umask()
    atomic_write(tmp_path / "public", b"")
    assert mode(tmp_path / "public") == 0o666 & ~umask
    atomic_write(tmp_path / "private", b"", private=True)
    assert mode(tmp_path / "private") == 0o600
    X, y = make_blobs_pm(n=20, d=3, seed=0)
    marginkit.save(
        marginkit.ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(X, y),
        tmp_path / "m.skops",
    )
    assert mode(tmp_path / "m.skops") == 0o600  # a model may hold training rows
    # where the system does not tell the umask, it is read by setting it and back
    monkeypatch.setattr(
        _files, "open", lambda *a, **k: (_ for _ in ()).throw(OSError), raising=False
    )
    assert _files._umask() == umask and _files._umask() == umask
