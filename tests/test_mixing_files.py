"""Iterative parameter mixing over file shards (MixingClassifier.fit on a list of
paths): the files read on the workers by marginkit's readers, one file equal to
fit_file, several equal to the dask array of the same rows in the same chunks, the
first passes combined, and every refusal."""

import gzip
import shutil
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from test_mixing import local_cluster, same_bits

from marginkit import ALMAClassifier, PerceptronClassifier
from marginkit.formats import read_file
from marginkit.streaming import fit_file

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from marginkit.distributed import MixingClassifier  # noqa: E402


def sparse_rows(n, d, seed, n_classes=2):
    """Sparse rows (about a third of the entries) and labels of a noisy linear concept;
    column 0 holds no entry (the files' lowest index then decides their base)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.35, random_state=seed, format="csr")
    # multiples of 1/32: written and read back exactly (dump_svmlight_file writes 16
    # significant digits)
    X.data = rng.integers(1, 128, size=X.nnz) * rng.choice([-1.0, 1.0], size=X.nnz) / 32
    X = X.tolil()
    X[:, 0] = 0
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    scores = X @ rng.normal(size=(d, n_classes))
    y = np.argmax(scores, axis=1) if n_classes > 2 else np.where(scores[:, 0] > 0, 1, -1)
    flip = rng.random(n) < 0.05
    y = np.where(flip, y[::-1], y)
    return X, y


def write_svmlight(X, y, bounds, tmp_path, zero_based=False, name="part"):
    """The rows ``bounds[i]:bounds[i+1]`` of (X, y) as svmlight file i; the paths."""
    paths = []
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        path = str(tmp_path / f"{name}{i}.svm")
        dump_svmlight_file(X[lo:hi], y[lo:hi], path, zero_based=zero_based)
        paths.append(str(path))
    return paths


def as_dask(X, bounds):
    """X as a dask array whose row chunks are ``bounds``' slices (CSR chunks when sparse)."""
    chunks = (tuple(np.diff(bounds)), (X.shape[1],))
    return da.from_array(X, chunks=chunks, asarray=not sp.issparse(X))


ONE_FILE = [
    ("alma2", lambda: ALMAClassifier(shuffle=False, alpha=0.9), 2),
    (
        "alma-log-intercept",
        lambda: ALMAClassifier(shuffle=False, p="log", alpha=0.8, fit_intercept=True),
        3,
    ),
    ("perceptron", lambda: PerceptronClassifier(shuffle=False), 2),
    ("perceptron-intercept", lambda: PerceptronClassifier(shuffle=False, fit_intercept=True), 3),
]


@pytest.mark.parametrize("name, make, n_classes", ONE_FILE, ids=[c[0] for c in ONE_FILE])
def test_one_file_equals_fit_file(threads, tmp_path, name, make, n_classes):
    X, y = sparse_rows(500, 12, seed=3, n_classes=n_classes)
    (path,) = write_svmlight(X, y, [0, 500], tmp_path)
    for max_iter, tol in [(3, None), (40, 1e-3)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            serial = fit_file(make().set_params(max_iter=max_iter, tol=tol), path, chunk_size=64)
            mixed = MixingClassifier(make(), max_iter=max_iter, tol=tol).fit([path], chunk_size=64)
        assert mixed.n_shards_ == 1
        assert same_bits(mixed.estimator_, serial), (name, max_iter, tol)
        assert mixed.n_corrections_ == serial.n_corrections_ > 0
        np.testing.assert_array_equal(mixed.classes_, serial.classes_)
        assert mixed.n_features_in_ == serial.n_features_in_ == 12  # read one-based: no index 0


def check_several_files_equal_the_dask_array(tmp_path, n_classes, make):
    X, y = sparse_rows(700, 14, seed=5, n_classes=n_classes)
    bounds = [0, 150, 420, 700]
    # zero-based files; only the first writes an index 0: the three together are
    # zero-based (read one by one, the others would be taken as one-based)
    X = X.tolil()
    X[3, 0] = 1.5
    X = sp.csr_matrix(X)
    paths = write_svmlight(X, y, bounds, tmp_path, zero_based=True)
    for path, lo, hi in zip(paths, bounds[:-1], bounds[1:], strict=True):
        assert read_file(path, zero_based=True, n_features=14)[0].shape == (hi - lo, 14)
        # the shard's pass sees the file's rows in the file's order: those of the chunk
        Xf, yf = read_file(path, zero_based=True, n_features=14)[:2]
        assert (Xf != X[lo:hi]).nnz == 0
        np.testing.assert_array_equal(yf, y[lo:hi])
    files = make().fit(paths, chunk_size=50)
    arrays = make().fit(as_dask(X, bounds), y)
    assert files.n_shards_ == arrays.n_shards_ == 3
    assert files.n_features_in_ == 14
    assert files.n_corrections_ > 0
    assert same_bits(files.estimator_, arrays.estimator_)
    np.testing.assert_array_equal(files.n_corrections_per_epoch_, arrays.n_corrections_per_epoch_)
    np.testing.assert_array_equal(files.classes_, arrays.classes_)
    return files


MIXED = [
    (
        "alma-log-avg",
        3,
        lambda: MixingClassifier(ALMAClassifier(shuffle=False, p="log"), max_iter=3, tol=None),
    ),
    (
        "perceptron-intercept-corrections",
        2,
        lambda: MixingClassifier(
            PerceptronClassifier(shuffle=False, fit_intercept=True),
            max_iter=4,
            tol=None,
            mixing="corrections",
        ),
    ),
    ("alma-tol", 2, lambda: MixingClassifier(ALMAClassifier(shuffle=False), max_iter=30)),
    # the first epoch's first rows in sequence: 120 rows a file (a chunk cut at 20),
    # then 200 (the first file's 150 all in the sequence)
    (
        "alma-warm-up-corrections",
        3,
        lambda: MixingClassifier(
            ALMAClassifier(shuffle=False), max_iter=3, tol=None, warm_up=120, mixing="corrections"
        ),
    ),
    # several mixes an epoch: each file read once and held on its worker
    (
        "perceptron-mix-every-momentum",
        3,
        lambda: MixingClassifier(
            PerceptronClassifier(shuffle=False),
            max_iter=3,
            tol=None,
            mix_every=40,
            momentum="auto",
        ),
    ),
    (
        "alma-intercept-mix-every-warm-up-corrections",
        2,
        lambda: MixingClassifier(
            ALMAClassifier(shuffle=False, p="log", fit_intercept=True),
            max_iter=2,
            tol=None,
            mix_every=25,
            warm_up=60,
            mixing="corrections",
        ),
    ),
    (
        "perceptron-warm-up-past-a-file",
        2,
        lambda: MixingClassifier(
            PerceptronClassifier(shuffle=False), max_iter=2, tol=None, warm_up=200
        ),
    ),
]


@pytest.mark.parametrize("name, n_classes, make", MIXED, ids=[c[0] for c in MIXED])
def test_several_files_equal_the_dask_array(threads, tmp_path, name, n_classes, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_several_files_equal_the_dask_array(tmp_path, n_classes, make)


def test_files_on_a_cluster_equal_the_threaded_scheduler(dask_client, tmp_path):
    make = lambda: MixingClassifier(ALMAClassifier(shuffle=False, p="log"), max_iter=3, tol=None)  # noqa: E731
    with dask_client.as_current():
        on_workers = check_several_files_equal_the_dask_array(tmp_path, 3, make)
    paths = sorted(str(p) for p in tmp_path.glob("part*.svm"))
    with dask.config.set(scheduler="threads"):
        local = make().fit(paths, chunk_size=50)
    assert same_bits(on_workers.estimator_, local.estimator_)


def test_csv_and_compressed_files(threads, tmp_path):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 6))
    y = np.where(X @ rng.normal(size=6) > 0, 1, 0)
    bounds = [0, 120, 300]
    paths = []
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        path = tmp_path / f"part{i}.csv"
        np.savetxt(path, np.column_stack([X[lo:hi], y[lo:hi]]), delimiter=",", fmt="%.17g")
        paths.append(str(path))
    make = lambda: MixingClassifier(PerceptronClassifier(shuffle=False), max_iter=3, tol=None)  # noqa: E731
    files = make().fit(paths, chunk_size=32)
    arrays = make().fit(as_dask(X, bounds), y)
    assert files.n_corrections_ > 0
    assert same_bits(files.estimator_, arrays.estimator_)
    zipped = []
    for path in paths:
        with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        zipped.append(path + ".gz")
    assert same_bits(make().fit(zipped, chunk_size=32).estimator_, files.estimator_)


def test_everything_given_reads_no_first_pass_and_gives_the_same_model(threads, tmp_path):
    X, y = sparse_rows(400, 10, seed=8)
    paths = write_svmlight(X, y, [0, 200, 400], tmp_path)
    make = lambda: MixingClassifier(ALMAClassifier(shuffle=False), max_iter=2, tol=None)  # noqa: E731
    found = make().fit(paths, chunk_size=40)
    given = make().fit(paths, chunk_size=40, classes=[-1, 1], n_features=10, zero_based=False)
    assert same_bits(found.estimator_, given.estimator_)
    # each chunk parsed in the task's own thread: the same chunks, the same model
    inline = make().fit(paths, chunk_size=40, prefetch=False)
    assert same_bits(found.estimator_, inline.estimator_)
    alma = lambda: ALMAClassifier(shuffle=False, max_iter=2, tol=None)  # noqa: E731
    one = [fit_file(alma(), paths[0], 40, prefetch=f) for f in (True, False)]
    assert same_bits(*one)
    # a wider n_features than the files': the model is that wide
    wide = make().fit(paths, n_features=12)
    assert wide.n_features_in_ == 12


def test_refusals(threads, tmp_path):
    X, y = sparse_rows(100, 6, seed=1)
    paths = write_svmlight(X, y, [0, 50, 100], tmp_path)
    clf = MixingClassifier(PerceptronClassifier(shuffle=False), max_iter=2)
    missing = str(tmp_path / "nowhere.svm")
    with pytest.raises(FileNotFoundError, match="nowhere.svm"):
        clf.fit([paths[0], missing])
    csv = tmp_path / "other.csv"
    np.savetxt(csv, np.column_stack([X[:10].toarray(), y[:10]]), delimiter=",")
    with pytest.raises(ValueError, match=r"different formats: .*part0.svm \(svmlight\), .*other"):
        clf.fit([paths[0], str(csv)])
    narrow = tmp_path / "narrow.csv"
    np.savetxt(narrow, np.column_stack([X[:10, :3].toarray(), y[:10]]), delimiter=",")
    with pytest.raises(ValueError, match="CSV files have different numbers of features"):
        clf.fit([str(csv), str(narrow)])
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:1\n-1 3:2\n1 x:1\n")
    with pytest.raises(ValueError, match=r"bad.svm: cannot be read as an svmlight file .*line 3"):
        clf.fit([paths[0], str(bad)])
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.svm: no examples"):
        clf.fit([paths[0], str(empty)])
    with pytest.raises(ValueError, match=r"part\d.svm: n_features was given as 2, but the file"):
        clf.fit(paths, n_features=2)
    with pytest.raises(ValueError, match=r"labels \[1\] are not among the classes given"):
        clf.fit(paths, classes=[-1, 2])
    one_class = tmp_path / "one.svm"
    one_class.write_text("1 1:0.5\n1 2:1\n")
    with pytest.raises(ValueError, match="got 1 class"):
        clf.fit([str(one_class)])
    with pytest.raises(ValueError, match="y must be None when X is a list of files"):
        clf.fit(paths, y)
    with pytest.raises(ValueError, match="X is an empty list"):
        clf.fit([])
    with pytest.raises(TypeError, match="must hold the paths of the files .* got int, str"):
        clf.fit([paths[0], 3])
    dX = as_dask(X, [0, 50, 100])
    with pytest.raises(ValueError, match="chunk_size, zero_based only apply when X is a list"):
        clf.fit(dX, y, chunk_size=10, zero_based=False)
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        clf.fit(dX)
    assert not hasattr(clf, "estimator_")  # every refusal left it unfitted


@pytest.mark.slow
def test_files_on_one_and_two_workers(tmp_path):
    X, y = sparse_rows(900, 16, seed=12)
    paths = write_svmlight(X, y, [0, 300, 600, 900], tmp_path)
    make = lambda: MixingClassifier(PerceptronClassifier(shuffle=False), max_iter=4, tol=None)  # noqa: E731
    with local_cluster(1):
        one = make().fit(paths, chunk_size=70)
    with local_cluster(2):
        two = make().fit(paths, chunk_size=70)
    assert same_bits(one.estimator_, two.estimator_)
