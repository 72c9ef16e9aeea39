"""Loaders of MNIST, USPS and Letter: real files when present, damaged copies always."""

import gzip

import numpy as np
import pytest

from marginkit.datasets import data_home, load_letter, load_mnist, load_usps


def test_mnist(shared_data):
    X, y, Xt, yt = load_mnist(shared_data)
    assert X.shape == (60000, 784) and Xt.shape == (10000, 784)
    assert X.dtype == np.float64 and X.min() == 0 and X.max() == 255
    # label counts from ../shared/data/MANIFEST.md
    np.testing.assert_array_equal(
        np.bincount(y), [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    )
    np.testing.assert_array_equal(
        np.bincount(yt), [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    )


def test_usps(shared_data):
    X, y, Xt, yt = load_usps(shared_data)
    assert X.shape == (7291, 256) and Xt.shape == (2007, 256)
    assert X.min() >= -1 and X.max() <= 1
    np.testing.assert_array_equal(
        np.bincount(y), [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
    )
    np.testing.assert_array_equal(
        np.bincount(yt), [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
    )


def test_letter(shared_data):
    X, y, Xt, yt = load_letter(shared_data)
    assert X.shape == (16000, 16) and Xt.shape == (4000, 16)
    assert set(np.unique(np.r_[y, yt])) == set("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    assert X.min() == 0 and X.max() == 15


def test_environment_variable_and_default(monkeypatch, tmp_path):
    monkeypatch.setenv("MARGINKIT_DATA", str(tmp_path))
    assert data_home() == tmp_path
    assert data_home("elsewhere").name == "elsewhere"
    monkeypatch.delenv("MARGINKIT_DATA")
    assert data_home().name == "marginkit_data"


def test_missing_file_names_it_and_its_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.gz not found.*MNIST"):
        load_mnist(tmp_path)
    with pytest.raises(FileNotFoundError, match="zip.train.gz not found.*Elements of Statistical"):
        load_usps(tmp_path)
    with pytest.raises(FileNotFoundError, match="letter-recognition.data.gz not found.*UCI"):
        load_letter(tmp_path)


def _idx(path, dims, payload=None, magic=0x08):
    header = bytes([0, 0, magic, len(dims)]) + b"".join(d.to_bytes(4, "big") for d in dims)
    body = bytes(int(np.prod(dims))) if payload is None else payload
    with gzip.open(path, "wb") as f:
        f.write(header + body)


def _fake_mnist(folder, n=5, train_images=None):
    folder.mkdir(parents=True, exist_ok=True)
    _idx(folder / "train-images-idx3-ubyte.gz", [n, 28, 28], train_images)
    _idx(folder / "train-labels-idx1-ubyte.gz", [n])
    _idx(folder / "t10k-images-idx3-ubyte.gz", [2, 28, 28])
    _idx(folder / "t10k-labels-idx1-ubyte.gz", [2])


def test_small_mnist_in_subfolder(tmp_path):
    _fake_mnist(tmp_path / "mnist")
    X, y, Xt, yt = load_mnist(tmp_path)
    assert X.shape == (5, 784) and Xt.shape == (2, 784)


def test_truncated_mnist_is_named(tmp_path):
    _fake_mnist(tmp_path, train_images=bytes(100))
    with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz.*truncated or damaged"):
        load_mnist(tmp_path)


def test_wrong_magic_is_named(tmp_path):
    _fake_mnist(tmp_path)
    _idx(tmp_path / "train-labels-idx1-ubyte.gz", [5], magic=0x0D)
    with pytest.raises(ValueError, match="train-labels-idx1-ubyte.gz: not an IDX file"):
        load_mnist(tmp_path)


def test_not_gzip_is_named(tmp_path):
    _fake_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="t10k-labels-idx1-ubyte.gz: cannot be read"):
        load_mnist(tmp_path)


def test_malformed_usps_and_letter(tmp_path):
    (tmp_path / "zip.train").write_text("1 " + " ".join(["0.5"] * 255) + "\n")
    (tmp_path / "zip.test").write_text("1 " + " ".join(["0.5"] * 256) + "\n")
    with pytest.raises(ValueError, match="zip.train: rows of \\[256\\] fields, expected 257"):
        load_usps(tmp_path)
    (tmp_path / "letter-recognition.data").write_text("A," + ",".join(["1"] * 16) + "\n")
    with pytest.raises(ValueError, match="1 rows, expected 20000"):
        load_letter(tmp_path)
