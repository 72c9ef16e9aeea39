"""Loaders of Ionosphere, Congressional Voting and Adult (a9a): real files, damaged copies."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from marginkit.datasets import load_adult, load_house_votes, load_ionosphere

# counts from ../shared/data/MANIFEST.md


def test_ionosphere(shared_data):
    X, y = load_ionosphere(shared_data)
    assert X.shape == (351, 34) and X.dtype == np.float64 and y.dtype == np.int64
    assert (y == 1).sum() == 225 and (y == -1).sum() == 126
    assert X.min() == -1 and X.max() == 1
    assert np.all(X[:, 1] == 0)


def test_house_votes(shared_data):
    X, y = load_house_votes(shared_data)
    assert X.shape == (435, 16) and X.dtype == np.float64 and y.dtype == np.int64
    assert (y == 1).sum() == 267 and (y == -1).sum() == 168
    assert [(X == v).sum() for v in (1, -1, 0)] == [3421, 3147, 392]


def test_adult(shared_data):
    X, y, Xt, yt = load_adult(shared_data)
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
    assert sp.issparse(Xt) and Xt.format == "csr" and Xt.dtype == np.float64
    assert X.shape == (32561, 123) and Xt.shape == (16281, 123)
    assert y.dtype == np.int64 and yt.dtype == np.int64
    assert (y == -1).sum() == 24720 and (y == 1).sum() == 7841
    assert (yt == -1).sum() == 12435 and (yt == 1).sum() == 3846
    assert np.all(X.data == 1) and np.all(Xt.data == 1)
    assert X[:, 122].nnz > 0 and Xt[:, 122].nnz == 0


@pytest.mark.parametrize("n_train", [1, 1000, 32561])
def test_adult_first_rows(shared_data, n_train):
    X, y, Xt, yt = load_adult(shared_data)
    Xn, yn, Xtn, ytn = load_adult(shared_data, n_train=n_train)
    assert Xn.shape == (n_train, 123) and Xn.format == "csr"
    assert (Xn != X[:n_train]).nnz == 0
    np.testing.assert_array_equal(yn, y[:n_train])
    assert (Xtn != Xt).nnz == 0 and np.array_equal(ytn, yt)


@pytest.mark.parametrize("n_train", [0, -5, 32562, 2.5, "1k"])
def test_adult_bad_n_train(tmp_path, n_train):
    with pytest.raises(ValueError, match="The 'n_train' parameter of load_adult must be"):
        load_adult(tmp_path, n_train=n_train)


def test_missing_files_name_them_and_their_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="ionosphere.data not found.*UCI.*Ionosphere"):
        load_ionosphere(tmp_path)
    with pytest.raises(
        FileNotFoundError, match="house-votes-84.data not found.*UCI.*Congressional Voting"
    ):
        load_house_votes(tmp_path)
    with pytest.raises(FileNotFoundError, match="a9a.gz not found.*LIBSVM.*Adult"):
        load_adult(tmp_path)
    _write_adult(tmp_path, test=False)
    with pytest.raises(FileNotFoundError, match="a9a.t.gz not found.*LIBSVM"):
        load_adult(tmp_path)


# --- small copies written in tmp_path ---------------------------------------------------


def _ionosphere_rows(n=351, label=lambda i: "g" if i % 3 else "b"):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        values = np.round(rng.uniform(-1, 1, size=34), 5)
        values[1] = 0
        rows.append(",".join(f"{v:g}" for v in values) + "," + label(i))
    return rows


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")


def test_ionosphere_copy_in_subfolder_via_environment(tmp_path, monkeypatch):
    rows = _ionosphere_rows()
    _write(tmp_path / "ionosphere" / "ionosphere.data", rows)
    monkeypatch.setenv("MARGINKIT_DATA", str(tmp_path))
    X, y = load_ionosphere()
    assert X.shape == (351, 34)
    np.testing.assert_array_equal(y, [-1 if i % 3 == 0 else 1 for i in range(351)])
    np.testing.assert_allclose(X[5], [float(v) for v in rows[5].split(",")[:-1]])


def test_malformed_ionosphere(tmp_path):
    path = tmp_path / "ionosphere.data"
    _write(path, _ionosphere_rows(350))
    with pytest.raises(ValueError, match="ionosphere.data: 350 rows, expected 351"):
        load_ionosphere(tmp_path)
    _write(path, _ionosphere_rows(label=lambda i: "x" if i == 7 else "g"))
    with pytest.raises(ValueError, match="ionosphere.data: class 'x' on row 8, expected 'g'"):
        load_ionosphere(tmp_path)
    rows = _ionosphere_rows()
    rows[3] = rows[3].replace(",", ",abc,", 1).rsplit(",", 2)[0] + ",g"
    _write(path, rows)
    with pytest.raises(ValueError, match="ionosphere.data: an attribute is not a number"):
        load_ionosphere(tmp_path)
    rows = _ionosphere_rows()
    rows[0] = "0.5," + rows[0]
    _write(path, rows)
    with pytest.raises(ValueError, match=r"ionosphere.data: rows of \[35, 36\] fields"):
        load_ionosphere(tmp_path)


def _votes_rows(n=435):
    votes = "y,n,?,y,y,n,n,y,?,n,y,y,n,n,y,y"
    return [("democrat," if i % 2 else "republican,") + votes for i in range(n)]


def test_house_votes_copy_and_coding(tmp_path):
    _write(tmp_path / "house-votes" / "house-votes-84.data", _votes_rows())
    X, y = load_house_votes(tmp_path)
    np.testing.assert_array_equal(X[0], [1, -1, 0, 1, 1, -1, -1, 1, 0, -1, 1, 1, -1, -1, 1, 1])
    np.testing.assert_array_equal(y[:4], [-1, 1, -1, 1])


def test_malformed_house_votes(tmp_path):
    path = tmp_path / "house-votes-84.data"
    _write(path, _votes_rows(434))
    with pytest.raises(ValueError, match="house-votes-84.data: 434 rows, expected 435"):
        load_house_votes(tmp_path)
    rows = _votes_rows()
    rows[9] = "independent" + rows[9][rows[9].index(",") :]
    _write(path, rows)
    with pytest.raises(ValueError, match="house-votes-84.data: class 'independent' on row 10"):
        load_house_votes(tmp_path)
    rows = _votes_rows()
    rows[2] = rows[2][:-1] + "maybe"
    _write(path, rows)
    with pytest.raises(ValueError, match="house-votes-84.data: vote 'maybe' on row 3"):
        load_house_votes(tmp_path)


def _write_adult(folder, train=True, test=True, train_rows=None, gz=True):
    folder.mkdir(parents=True, exist_ok=True)
    for stem, n, want in (("a9a", 32561, train), ("a9a.t", 16281, test)):
        if not want:
            continue
        rows = [f"{'+1' if i % 4 == 0 else '-1'} 3:1 {i % 100 + 10}:1" for i in range(n)]
        if stem == "a9a" and train_rows is not None:
            rows = train_rows(rows)
        text = ("\n".join(rows) + "\n").encode()
        if gz:
            with gzip.open(folder / (stem + ".gz"), "wb") as f:
                f.write(text)
        else:
            (folder / stem).write_bytes(text)


def test_adult_uncompressed_copy_in_subfolder(tmp_path):
    _write_adult(tmp_path / "adult", gz=False)
    X, y, Xt, yt = load_adult(tmp_path, n_train=10)
    assert X.shape == (10, 123) and Xt.shape == (16281, 123)
    np.testing.assert_array_equal(y, [1, -1, -1, -1, 1, -1, -1, -1, 1, -1])
    np.testing.assert_array_equal(X[7].indices, [2, 16])


def test_malformed_adult(tmp_path):
    (tmp_path / "a9a.gz").write_bytes(b"not gzip at all")
    _write_adult(tmp_path, train=False)
    with pytest.raises(ValueError, match="a9a.gz: cannot be read as a LIBSVM file"):
        load_adult(tmp_path)

    def wide(rows):
        rows[5] += " 124:1"
        return rows

    _write_adult(tmp_path, train_rows=wide)
    with pytest.raises(ValueError, match="a9a.gz: cannot be read as a LIBSVM file with 123"):
        load_adult(tmp_path)
    _write_adult(tmp_path, train_rows=lambda rows: rows[:-1])
    with pytest.raises(ValueError, match="a9a.gz: 32560 rows, expected 32561"):
        load_adult(tmp_path)

    def label_two(rows):
        rows[4] = "2" + rows[4][2:]
        return rows

    _write_adult(tmp_path, train_rows=label_two)
    with pytest.raises(ValueError, match="a9a.gz: label 2 on row 5, expected -1 or \\+1"):
        load_adult(tmp_path)


def test_adult_fits_liblinear(shared_data):
    """32-bit indices: scikit-learn's liblinear takes the whole matrix."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    X, y, _, _ = load_adult(shared_data)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    with pytest.warns(ConvergenceWarning):
        LinearSVC(max_iter=2, dual=True).fit(X, y)
    assert X.has_canonical_format
