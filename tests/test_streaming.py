"""Out-of-core training (marginkit.streaming): a file read in chunks gives fit's model."""

import bz2
import gzip
import os
import threading
import warnings

import numpy as np
import pytest
from conftest import slow_case
from sklearn.datasets import dump_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

import marginkit
from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from marginkit.cli import main
from marginkit.persistence import load
from marginkit.streaming import FileStream, fit_file, prefetched
from marginkit.tasks import read_data, train


def _data(n=240, d=7, seed=0, three=True):
    """Sparse non-negative rows; two classes separable by a plane, or three."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[X < 0.3] = 0.0
    X = np.round(X, 4)
    s = X[:, 0] - X[:, 1] + 0.5 * X[:, 2]
    y = np.where(s > 0.1, 1, -1)
    if three:
        y[(s > -0.3) & (s <= 0.1)] = 2
    return X, y


@pytest.fixture(scope="module")
def svm_file(tmp_path_factory):
    X, y = _data()
    path = tmp_path_factory.mktemp("stream") / "train.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)  # one-based, as LIBSVM writes
    return path


# every estimator, with the parameters that change what a fit takes from all the data
CASES = [
    (ALMAClassifier, {"alpha": 0.9}),
    (ALMAClassifier, {"p": 4, "fit_intercept": True, "max_iter": 3}),
    (ALMAClassifier, {"p": "log", "fit_intercept": True, "output": "voted"}),
    (PerceptronClassifier, {"fit_intercept": True, "max_iter": 2, "output": "avg"}),
    (ROMMAClassifier, {"aggressive": True, "lam": 0.0, "fit_intercept": True, "max_iter": 2}),
    (MarginPerceptronClassifier, {"max_iter": 30}),
    (MarginPerceptronClassifier, {"gamma_guess": 0.2, "fit_intercept": True, "max_iter": 30}),
    # a stream is learned with the hard margin (the soft one needs all the data)
    (PUMMAClassifier, {"max_iter": 30, "delta": 0.1, "lam": 0.0}),
    (PUMMAClassifier, {"p": 3, "max_iter": 5, "output": "avg", "lam": 0.0}),
    (KernelALMAClassifier, {"gamma": "scale", "max_iter": 2, "block_size": 16}),
    (KernelALMAClassifier, {"kernel": "poly", "degree": 2, "gamma": 0.5, "output": "voted"}),
    (KernelPerceptronClassifier, {"gamma": 0.7, "max_iter": 2, "output": "avg"}),
    (KernelROMMAClassifier, {"gamma": "scale", "max_iter": 2, "lam": 0.0}),
    (KernelPUMMAClassifier, {"gamma": 0.5, "max_iter": 8, "block_size": 16, "lam": 0.0}),
    # ROMMA's soft margin: fit's first pass is a stream's (later passes give a row one
    # slack coordinate for all of them, a stream a new one at each trial)
    (ROMMAClassifier, {"max_iter": 1}),
    (KernelROMMAClassifier, {"gamma": "scale", "max_iter": 1, "aggressive": True}),
]

ATTRIBUTES = (
    "classes_",
    "n_features_in_",
    "n_corrections_",
    "n_corrections_per_class_",
    "n_trials_",
    "R_",
    "gamma_",
    "radius_",
    "gamma_guess_",
    "n_restarts_",
    "n_iter_",
    "n_epochs_",
    "converged_",
    "n_conflicts_",
    "margin_",
    "support_",
)


def _assert_same_model(streamed, whole, X):
    for name in ATTRIBUTES:
        if hasattr(whole, name):
            a, b = getattr(streamed, name), getattr(whole, name)
            if np.asarray(b).dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13, err_msg=name)
            else:
                np.testing.assert_array_equal(a, b, err_msg=name)
    a, b = streamed.decision_function(X), whole.decision_function(X)
    if hasattr(whole, "_states"):  # the linear passes do the same arithmetic
        np.testing.assert_array_equal(a, b)
    else:  # the kernel engine's blocks follow the chunks: BLAS sums in another order
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(streamed.predict(X), whole.predict(X))


#: (chunk size, case) of the costlier streams (0.5 to 1.5 s on 2 cores) that run in make
#: test-all; make test streams each case in two chunk sizes or more (tests/conftest.py's
#: HEAVY moves more).
SLOW_STREAMS = {(3, 6), (3, 7), (3, 8), (3, 9), (3, 11), (3, 12), (37, 13)}


@pytest.mark.exactness  # a stream's model against fit's, on every BLAS kernel
@pytest.mark.parametrize(
    "chunk_size, Est, params",
    [
        slow_case(
            chunk_size,
            Est,
            params,
            slow=(chunk_size, i) in SLOW_STREAMS,
            id=f"{chunk_size}-{Est.__name__}-{i}",
        )
        for chunk_size in (3, 37, 10_000)
        for i, (Est, params) in enumerate(CASES)
    ],
)
def test_stream_gives_the_model_of_fit(svm_file, Est, params, chunk_size):
    X, y = read_data(svm_file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        whole = Est(**{"shuffle": False, **params}).fit(X, y)
        streamed = fit_file(Est(**params), svm_file, chunk_size=chunk_size)
    _assert_same_model(streamed, whole, X)


@pytest.mark.exactness  # a stream's model against fit's, on every BLAS kernel
@pytest.mark.parametrize("case", [2, 10])
def test_one_example_per_chunk(svm_file, case):
    Est, params = CASES[case]
    X, y = read_data(svm_file)
    _assert_same_model(
        fit_file(Est(**params), svm_file, 1), Est(**{"shuffle": False, **params}).fit(X, y), X
    )


def test_first_pass_finds_what_the_whole_file_holds(svm_file):
    X, y = read_data(svm_file)
    stream = FileStream(svm_file, 50)
    assert (stream.n_samples, stream.n_features) == X.shape
    np.testing.assert_array_equal(stream.classes, np.unique(y))
    assert stream.classes.dtype == np.int64
    var = X.multiply(X).mean() - X.mean() ** 2
    assert stream.summary.variance() == pytest.approx(var, rel=1e-12)
    for p in (2.0, 3.5):
        top = float(marginkit._rows.row_norms_p(X, p).max())
        assert stream.summary.max_norm(p) == top
    chunks = list(stream())
    assert [c[0].shape[0] for c in chunks] == [50] * 4 + [40]
    assert chunks[0][0].indices.dtype == np.int32  # as every scikit-learn estimator takes
    assert all(c[0].shape[1] == X.shape[1] for c in chunks)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y)


def test_index_base_is_decided_for_the_whole_file(tmp_path):
    # zero-based, but index 0 appears only in the last rows: the early chunks alone
    # would look one-based
    X, y = _data(n=120, three=False)
    X[:-5, 0] = 0.0
    X[-5:, 0] = 1.0
    path = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    Xf, _ = read_data(path)
    assert Xf.shape[1] == X.shape[1]
    streamed = fit_file(
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False),
        path,
        chunk_size=20,
    )
    assert streamed.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(
        streamed.coef_,
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
        .fit(Xf, y)
        .coef_,
    )


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2")])
def test_compressed_files(svm_file, tmp_path, opener, suffix):
    path = tmp_path / f"train.svm{suffix}"
    with opener(path, "wb") as f:
        f.write(svm_file.read_bytes())
    X, y = read_data(svm_file)
    streamed = fit_file(
        PerceptronClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False),
        path,
        chunk_size=33,
    )
    np.testing.assert_array_equal(
        streamed.coef_,
        PerceptronClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False)
        .fit(X, y)
        .coef_,
    )


@pytest.mark.exactness  # a stream's model against fit's, on every BLAS kernel
def test_comments_and_blank_lines(svm_file, tmp_path):
    lines = svm_file.read_text().splitlines()
    noisy = ["# a header comment", ""]
    for i, line in enumerate(lines):
        noisy.append(line + (" # a trailing comment" if i % 3 == 0 else ""))
        if i % 10 == 0:
            noisy.append("")
    path = tmp_path / "noisy.svm"
    path.write_text("\n".join(noisy) + "\n")
    X, y = read_data(svm_file)
    streamed = fit_file(
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False),
        path,
        chunk_size=7,
    )
    assert streamed.n_trials_ == X.shape[0]
    np.testing.assert_array_equal(
        streamed.coef_,
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
        .fit(X, y)
        .coef_,
    )


def test_csv_with_header_and_label_column(tmp_path):
    X, y = _data(n=150)
    path = tmp_path / "train.csv"
    table = np.column_stack([y, X])
    np.savetxt(path, table, delimiter=",", header="label," + ",".join("abcdefg"), comments="")
    Xf, yf = read_data(path, label_column=0, skip_header=True)
    whole = ROMMAClassifier(shuffle=False, fit_intercept=True, output="last", max_iter=1).fit(
        Xf, yf
    )
    streamed = fit_file(
        ROMMAClassifier(shuffle=False, fit_intercept=True, output="last", max_iter=1),
        path,
        16,
        label_column=0,
        skip_header=True,
    )
    _assert_same_model(streamed, whole, Xf)


def test_continuous_labels_are_refused_as_fit_refuses_them(tmp_path):
    X, _ = _data(n=60, three=False)
    y = np.where(X[:, 0] > X[:, 1], 0.5, 1.5)
    path = tmp_path / "float.svm"
    dump_svmlight_file(X, y, str(path))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(*read_data(path))
    est = ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        fit_file(est, path, chunk_size=8)
    assert not hasattr(est, "classes_")


def test_n_features_pads_the_model(svm_file):
    streamed = fit_file(
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False),
        svm_file,
        chunk_size=40,
        n_features=12,
    )
    X, y = read_data(svm_file, n_features=12)
    assert streamed.n_features_in_ == 12
    np.testing.assert_array_equal(
        streamed.coef_,
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
        .fit(X, y)
        .coef_,
    )


def test_callback_and_progress_see_every_epoch_and_example(svm_file):
    epochs, seen = [], []
    fit_file(
        ALMAClassifier(shuffle=False, max_iter=3, alpha=1.0, output="last", fit_intercept=False),
        svm_file,
        chunk_size=64,
        callback=lambda est, epoch: epochs.append((epoch, est.n_trials_)),
        progress=seen.append,
    )
    assert epochs == [(0, 240), (1, 480), (2, 720)]
    assert sum(seen) == 3 * 240 and max(seen) == 64


# -- errors: each before any work, the estimator untouched -------------------------------


@pytest.mark.exactness  # a stream's model against fit's, on every BLAS kernel
def test_estimators_that_cannot_stream_say_why_and_keep_their_model(svm_file):
    X, y = read_data(svm_file)
    est = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    coef = est.coef_.copy()
    # shuffle=True (the default) does not stop a stream: it is learned in its order
    streamed = fit_file(est.set_params(shuffle=True), svm_file, 10)
    np.testing.assert_array_equal(streamed.coef_, coef)
    for pumma in (
        PUMMAClassifier(shuffle=False, lam=0.5, output="last"),
        KernelPUMMAClassifier(shuffle=False, lam=0.5, output="last"),
    ):
        with pytest.raises(ValueError, match="lam=0.5: the soft margin"):
            fit_file(pumma, svm_file, 10)
        assert not hasattr(pumma, "classes_")
    with pytest.raises(InvalidParameterError, match="alpha"):
        fit_file(
            ALMAClassifier(
                shuffle=False, alpha=2.0, output="last", max_iter=1, fit_intercept=False
            ),
            svm_file,
            10,
        )


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_chunk_size_must_be_a_positive_integer(svm_file, bad):
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
        FileStream(svm_file, bad)


def test_missing_empty_and_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no data file at"):
        FileStream(tmp_path / "absent.svm", 10)
    empty = tmp_path / "empty.svm"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(ValueError, match="no examples"):
        FileStream(empty, 10)
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n" * 25 + "-1 3:oops\n")
    with pytest.raises(
        ValueError,
        match=r"cannot be read as an svmlight file \(line 26: the value 'oops' of "
        r"feature 3 is not a number\)",
    ):
        FileStream(bad, 10)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,0.5,0.2\n" * 12 + "-1,0.5\n")  # within a chunk
    with pytest.raises(
        ValueError, match=r"numeric CSV file \(line 13: 2 values, where the first row has 3"
    ):
        FileStream(ragged, 5, label_column=0)
    ragged.write_text("1,0.5,0.2\n" * 10 + "-1,0.5\n" * 3)  # from one chunk to the next
    with pytest.raises(ValueError, match="line 11: 2 values, where the first row has 3"):
        FileStream(ragged, 5, label_column=0)
    one = tmp_path / "one.csv"
    one.write_text("1\n2\n")
    with pytest.raises(ValueError, match="a label column and at least one feature"):
        FileStream(one, 5)


def test_a_bad_line_met_while_training_stops_it_with_its_line(svm_file, tmp_path):
    # no first pass: the reader's thread meets the line during the epoch
    bad = tmp_path / "late.svm"
    bad.write_text(svm_file.read_text() + "1 2:oops\n")
    est = ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
    with pytest.raises(
        ValueError,
        match=r"late.svm: cannot be read as an svmlight file \(line 241: the value 'oops'",
    ):
        fit_file(est, bad, 50, classes=[-1, 1, 2], n_features=7, zero_based=False)
    assert not hasattr(est, "classes_")


def test_a_stream_needs_its_labels(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("1,2,3\n")
    with pytest.raises(ValueError, match="label_column must be an integer .a stream is learned"):
        FileStream(path, 5, label_column=None)


def test_n_features_smaller_than_the_file(svm_file):
    with pytest.raises(ValueError, match="n_features was given as 3, but the file has 7"):
        FileStream(svm_file, 10, n_features=3)


def test_one_class_is_refused(tmp_path):
    path = tmp_path / "one.svm"
    path.write_text("1 1:0.5\n1 2:0.5\n")
    with pytest.raises(ValueError, match="greater than one; got 1 class"):
        fit_file(
            ALMAClassifier(
                shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
            ),
            path,
            1,
        )


# -- the train task and the command line ------------------------------------------------


def test_train_task_streams_to_the_same_model(svm_file, tmp_path):
    params = {"alpha": 0.8, "shuffle": False}  # in memory, the rows in the file's order
    a = train(svm_file, "alma", tmp_path / "a.skops", params=params, chunk_size=25)
    b = train(svm_file, "alma", tmp_path / "b.skops", params=params)
    assert (a["n_samples"], a["n_features"], a["classes"]) == (240, 7, [-1, 1, 2])
    assert a["n_corrections"] == b["n_corrections"]
    np.testing.assert_array_equal(
        load(tmp_path / "a.skops").coef_, load(tmp_path / "b.skops").coef_
    )
    with pytest.raises(ValueError, match="cannot be combined with chunk_size"):
        train(svm_file, "alma", tmp_path / "c.skops", chunk_size=25, checkpoint=tmp_path / "k")
    assert not (tmp_path / "c.skops").exists()


def test_cli_chunk_size(svm_file, tmp_path, capsys):
    model = tmp_path / "m.skops"
    argv = ["train", str(svm_file), "--estimator", "kernel-perceptron", "--model", str(model)]
    paper = ["--param", "max_iter=1", "--param", "output=last"]
    assert main([*argv, *paper, "--param", "gamma=0.5", "--chunk-size", "50"]) == 0
    out = capsys.readouterr().err
    assert "trained kernel-perceptron on 240 examples x 7 features" in out
    X, y = read_data(svm_file)
    whole = KernelPerceptronClassifier(shuffle=False, gamma=0.5, output="last", max_iter=1).fit(
        X, y
    )
    np.testing.assert_allclose(load(model).decision_function(X), whole.decision_function(X))
    assert main([*argv, "--chunk-size", "0"]) == 2
    assert "--chunk-size: must be >= 1" in capsys.readouterr().err
    assert main([*argv, "--chunk-size", "5", "--checkpoint", str(tmp_path / "k")]) == 2
    assert "cannot be combined with chunk_size" in capsys.readouterr().err
    # shuffle=True (the default) streams the file in its order
    assert main([*argv, *paper, "--param", "gamma=0.5", "--chunk-size", "5"]) == 0
    capsys.readouterr()
    np.testing.assert_allclose(load(model).decision_function(X), whole.decision_function(X))


# -- no first pass when the labels, the width and the index base are given ---------------


def test_given_classes_width_and_base_spare_the_first_pass(svm_file, monkeypatch):
    X, y = read_data(svm_file)

    def no_survey(self, raw):
        raise AssertionError("a pass over the whole file")

    with monkeypatch.context() as m:
        m.setattr(FileStream, "_survey", no_survey)
        stream = FileStream(svm_file, 50, classes=[2, -1, 1], n_features=7, zero_based=False)
        assert stream.n_samples is None and stream.n_features == 7
        np.testing.assert_array_equal(stream.classes, [-1, 1, 2])
        assert stream.classes.dtype == np.int64
        streamed = marginkit.streaming.fit_stream(
            ALMAClassifier(
                shuffle=False, max_iter=2, alpha=1.0, output="last", fit_intercept=False
            ),
            stream,
        )
    assert stream.n_samples == 240
    _assert_same_model(
        streamed,
        ALMAClassifier(
            shuffle=False, max_iter=2, alpha=1.0, output="last", fit_intercept=False
        ).fit(X, y),
        X,
    )
    # a variance (gamma="scale") costs one more pass, and is that of the whole file
    kernel = fit_file(
        KernelROMMAClassifier(shuffle=False, output="last", max_iter=1),
        svm_file,
        40,
        classes=[-1, 1, 2],
        n_features=7,
        zero_based=False,
    )
    _assert_same_model(
        kernel, KernelROMMAClassifier(shuffle=False, output="last", max_iter=1).fit(X, y), X
    )


def test_given_classes_on_a_csv_file(tmp_path):
    X, y = _data(n=90)
    path = tmp_path / "t.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    streamed = fit_file(
        PerceptronClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False),
        path,
        20,
        classes=[-1, 1, 2],
    )
    whole = PerceptronClassifier(
        shuffle=False, output="last", max_iter=1, fit_intercept=False
    ).fit(*read_data(path))
    _assert_same_model(streamed, whole, X)


def test_labels_outside_the_given_classes(svm_file):
    with pytest.raises(ValueError, match=r"labels \[2\] are not among the classes given"):
        FileStream(svm_file, 50, classes=[-1, 1])
    est = ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
    with pytest.raises(ValueError, match=r"y contains labels \[2\] that are not in classes"):
        fit_file(est, svm_file, 50, classes=[-1, 1], n_features=7, zero_based=False)
    # more classes than the file holds: a problem that never sees a positive example
    more = fit_file(
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False),
        svm_file,
        50,
        classes=[-1, 1, 2, 3],
    )
    np.testing.assert_array_equal(more.classes_, [-1, 1, 2, 3])
    with pytest.raises(ValueError, match="zero_based must be True, False or 'auto'"):
        FileStream(svm_file, 50, zero_based=1)


def test_train_and_cli_options_of_the_one_pass_stream(svm_file, tmp_path, capsys):
    with pytest.raises(ValueError, match="classes is an option of streaming: give chunk_size"):
        train(svm_file, "alma", tmp_path / "x.skops", classes=[-1, 1, 2])
    model = tmp_path / "m.skops"
    argv = ["train", str(svm_file), "--estimator", "alma", "--model", str(model)]
    argv += ["--param", "alpha=1.0", "--param", "max_iter=1", "--param", "output=last"]
    argv += ["--param", "fit_intercept=False"]
    one_pass = ["--chunk-size", "60", "--classes=-1,1,2", "--n-features", "7"]
    assert main([*argv, *one_pass, "--first-index", "1"]) == 0
    assert "trained alma on 240 examples x 7 features" in capsys.readouterr().err
    X, y = read_data(svm_file)
    np.testing.assert_array_equal(
        load(model).coef_,
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
        .fit(X, y)
        .coef_,
    )
    assert main([*argv, "--chunk-size", "60", "--classes", "1"]) == 2
    assert "at least two labels are needed" in capsys.readouterr().err
    assert main([*argv, "--chunk-size", "60", "--first-index", "2"]) == 2
    assert "invalid choice: 2" in capsys.readouterr().err


# -- found in review: each a fixed mistake ------------------------------------------------


def test_csv_chunks_of_blank_or_comment_lines(tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text("1,0,1\n0,1,-1\n\n\n# a note\n# another\n2,0,1\n0,2,-1\n\n")
    whole = PerceptronClassifier(
        shuffle=False, output="last", max_iter=1, fit_intercept=False
    ).fit(*read_data(path))
    for chunk_size in (1, 2, 3):
        streamed = fit_file(
            PerceptronClassifier(shuffle=False, output="last", max_iter=1, fit_intercept=False),
            path,
            chunk_size,
        )
        np.testing.assert_array_equal(streamed.coef_, whole.coef_)
        assert streamed.n_trials_ == 4


def test_margin_perceptron_refuses_labels_outside_classes(tmp_path):
    path = tmp_path / "odd.svm"
    path.write_text("1 1:1\n-1 1:-1\n5 1:2\n")
    with pytest.raises(ValueError, match=r"y contains labels \[5\] that are not in classes"):
        fit_file(
            MarginPerceptronClassifier(shuffle=False, output="last", fit_intercept=False),
            path,
            2,
            classes=[-1, 1],
            n_features=1,
            zero_based=False,
        )


def test_a_late_error_leaves_a_fitted_estimator_as_it_was(svm_file, tmp_path):
    X, y = read_data(svm_file)
    est = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    coef, n = est.coef_.copy(), est.n_corrections_
    bad = tmp_path / "late.svm"
    bad.write_text(svm_file.read_text() + "7 1:0.5\n")  # a label the classes lack, last
    with pytest.raises(ValueError, match=r"y contains labels \[7\]"):
        fit_file(est, bad, 50, classes=[-1, 1, 2], n_features=7, zero_based=False)
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.n_corrections_ == n and est.n_trials_ == X.shape[0]


def test_train_counts_the_examples_when_every_pass_stopped_early(tmp_path):
    rng = np.random.RandomState(1)
    X = rng.randn(40, 3)
    y = np.where(rng.rand(40) > 0.5, 1, -1)  # noise: the first guess overruns its budget
    path = tmp_path / "noise.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    given = {"classes": [-1, 1], "n_features": 3, "zero_based": False}
    stream = FileStream(path, 5, **given)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = marginkit.streaming.fit_stream(
            MarginPerceptronClassifier(
                shuffle=False, max_iter=1, output="last", fit_intercept=False
            ),
            stream,
        )
        # the one pass overran its budget and stopped (no epoch was left to restart in)
        assert not est.converged_ and est.n_restarts_[0] == 0
        assert stream.n_samples is None  # no pass finished
        assert stream.count() == 40
        summary = train(
            path,
            "margin-perceptron",
            tmp_path / "m.skops",
            params={"max_iter": 1},
            chunk_size=5,
            **given,
        )
    assert summary["n_samples"] == 40


@pytest.mark.exactness  # a stream's model against fit's, on every BLAS kernel
def test_xz_files(svm_file, tmp_path):
    import lzma

    path = tmp_path / "train.svm.xz"
    path.write_bytes(lzma.compress(svm_file.read_bytes()))
    X, y = read_data(svm_file)
    streamed = fit_file(
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False),
        path,
        chunk_size=33,
    )
    np.testing.assert_array_equal(
        streamed.coef_,
        ALMAClassifier(shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False)
        .fit(X, y)
        .coef_,
    )


# -- reading in a background thread --------------------------------------------------------------


def test_prefetched_keeps_the_order_and_stays_ahead_by_depth():
    made = []

    def items():
        for k in range(20):
            made.append(k)
            yield k

    out = []
    for k in prefetched(items(), depth=2):
        out.append(k)
        # made: what was taken, at most 2 waiting, 1 being made
        assert len(made) <= len(out) + 3
    assert out == list(range(20))


def test_prefetched_raises_the_readers_error_and_stops_when_closed():
    def failing():
        yield 1
        raise ValueError("line 7: the label 'x' is not a number")

    got = prefetched(failing())
    assert next(got) == 1
    with pytest.raises(ValueError, match="^line 7: the label 'x' is not a number$"):
        next(got)

    closed = threading.Event()

    def endless():
        try:
            k = 0
            while True:
                yield k
                k += 1
        finally:
            closed.set()

    got = prefetched(endless())
    assert [next(got) for _ in range(3)] == [0, 1, 2]
    got.close()
    assert closed.is_set()


def _readers():
    return sum(t.name == "marginkit-reader" for t in threading.enumerate())


def test_passes_reuse_one_reader_thread(svm_file):
    list(prefetched(range(3)))
    before = _readers()
    fit_file(
        ALMAClassifier(shuffle=False, max_iter=3, alpha=1.0, output="last", fit_intercept=False),
        svm_file,
        chunk_size=50,
    )
    assert _readers() == before
    # one prefetch inside another: a second reader
    outer = prefetched(range(2))
    next(outer)
    assert list(prefetched(range(5))) == list(range(5))
    assert list(outer) == [1]
    assert _readers() == max(before, 2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_starts_its_own_reader():
    list(prefetched(range(3)))  # an idle reader in this process
    pid = os.fork()
    if pid == 0:  # the child: the parent's reader thread is not here
        os._exit(0 if list(prefetched(range(4))) == [0, 1, 2, 3] else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_csv_header_is_found_when_streamed_as_when_read_whole(tmp_path):
    """A first line that is not numbers over lines that are: a header, in a stream as in
    a file read whole (``marginkit train --chunk-size``)."""
    from marginkit.tasks import train

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    rows = "".join(",".join(f"{v:.5f}" for v in x) + f",{t}\n" for x, t in zip(X, y, strict=True))
    path = tmp_path / "h.csv"
    path.write_text("f1,f2,f3,label\n" + rows)
    whole = train(path, "alma", tmp_path / "whole.skops", params={"shuffle": False})
    streamed = train(path, "alma", tmp_path / "streamed.skops", chunk_size=7)
    assert whole["n_samples"] == streamed["n_samples"] == 40
    a = marginkit.load(tmp_path / "whole.skops")
    b = marginkit.load(tmp_path / "streamed.skops")
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
