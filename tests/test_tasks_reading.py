"""How ``marginkit train | predict | evaluate`` read their files: a model keeps the index
base and width it was trained with, prediction needs no labels, and an absurd index is
a one-line error."""

import numpy as np
import pytest
from conftest import one_error_line
from sklearn.datasets import dump_svmlight_file

import marginkit
from marginkit import ALMAClassifier, tasks
from marginkit.cli import main
from marginkit.tasks import evaluate, predict, read_data, train


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(240, 5)), 3)
    y = np.where(X @ [1.0, -1.0, 0.5, 0.2, -0.3] > 0, 1, -1)
    return tmp_path, X, y


def test_a_zero_based_model_reads_a_file_without_index_0_in_place(data):
    folder, X, y = data
    dump_svmlight_file(X[:200], y[:200], str(folder / "train.svm"), zero_based=True)
    test = X[200:].copy()
    test[:, 0] = 0.0  # index 0 never written: "auto" would shift every feature
    dump_svmlight_file(test, y[200:], str(folder / "test.svm"), zero_based=True)
    for chunk_size in (None, 30):
        model = folder / f"m{chunk_size}.skops"
        train(folder / "train.svm", "alma", model, chunk_size=chunk_size)
        est = marginkit.load(model)
        assert est.input_format_ == {"format": "svmlight", "n_features": 5, "zero_based": True}
        np.testing.assert_array_equal(predict(model, folder / "test.svm"), est.predict(test))
        result = evaluate(model, folder / "test.svm")
        assert result["error"] == pytest.approx(np.mean(est.predict(test) != y[200:]))
    shifted, _ = read_data(folder / "test.svm")  # what "auto" alone would read
    assert shifted.shape[1] == 4


def test_a_one_based_model_keeps_its_base_and_width(data):
    folder, X, y = data
    dump_svmlight_file(X, y, str(folder / "train.svm"), zero_based=False)
    model = folder / "m.skops"
    summary = train(folder / "train.svm", "alma", model, zero_based=False, n_features=8)
    assert summary["n_features"] == 8
    est = marginkit.load(model)
    assert est.input_format_ == {"format": "svmlight", "n_features": 8, "zero_based": False}
    (folder / "zero.svm").write_text("1 0:1\n")  # index 0 in a one-based model's file
    with pytest.raises(ValueError, match=r"zero.svm: cannot be read .*line 1: Invalid index 0"):
        predict(model, folder / "zero.svm")


def test_prediction_needs_no_labels(data):
    folder, X, y = data
    dump_svmlight_file(X, y, str(folder / "train.svm"), zero_based=False)
    model = folder / "m.skops"
    train(folder / "train.svm", "alma", model)
    want = marginkit.load(model).predict(X)
    rows = [" ".join(f"{k + 1}:{v}" for k, v in enumerate(row) if v) for row in X]
    (folder / "unknown.svm").write_text("".join(f"? {r}\n" for r in rows))
    (folder / "bare.svm").write_text("".join(f"{r}\n" for r in rows))
    for name in ("unknown.svm", "bare.svm"):
        np.testing.assert_array_equal(predict(model, folder / name), want)
    with pytest.raises(ValueError, match=r"unknown.svm: cannot be read .*label '\?'"):
        evaluate(model, folder / "unknown.svm")

    np.savetxt(folder / "train.csv", np.column_stack([X, y]), delimiter=",")
    np.savetxt(folder / "features.csv", X, delimiter=",")
    csv_model = folder / "c.skops"
    train(folder / "train.csv", "alma", csv_model)
    assert marginkit.load(csv_model).input_format_ == {
        "format": "csv",
        "n_features": 5,
        "label_column": -1,
    }
    want = marginkit.load(csv_model).predict(X)
    np.testing.assert_array_equal(predict(csv_model, folder / "features.csv"), want)
    np.testing.assert_array_equal(predict(csv_model, folder / "train.csv"), want)
    np.testing.assert_array_equal(
        predict(csv_model, folder / "features.csv", label_column=None), want
    )
    assert main(["predict", str(csv_model), str(folder / "features.csv")]) == 0


def test_csv_files_that_do_not_fit_the_model(data, capsys):
    folder, X, y = data
    np.savetxt(folder / "train.csv", np.column_stack([X, y]), delimiter=",")
    model = folder / "c.skops"
    train(folder / "train.csv", "alma", model)
    np.savetxt(folder / "wide.csv", np.column_stack([X, X]), delimiter=",")
    with pytest.raises(
        ValueError, match=r"rows of 10 values, but the model takes 5 features \(6 values with"
    ):
        predict(model, folder / "wide.csv")
    with pytest.raises(ValueError, match="rows of 10 values, but the model takes 5 features and"):
        evaluate(model, folder / "wide.csv")
    np.savetxt(folder / "features.csv", X, delimiter=",")
    with pytest.raises(ValueError, match="model takes 5 features and a label column"):
        evaluate(model, folder / "features.csv")
    with pytest.raises(ValueError, match="label_column=7 is out of range for rows of 6 values"):
        evaluate(model, folder / "train.csv", label_column=7)
    assert main(["evaluate", str(model), str(folder / "wide.csv")]) == 2
    assert "rows of 10 values" in one_error_line(capsys.readouterr().err)


def test_an_absurd_index_is_one_line(data, capsys, monkeypatch):
    folder, X, y = data
    dump_svmlight_file(X, y, str(folder / "train.svm"), zero_based=False)
    model = folder / "m.skops"
    train(folder / "train.svm", "alma", model)
    (folder / "far.svm").write_text("1 1:1\n-1 2000000000:1\n")
    for command in ("predict", "evaluate"):
        assert main([command, str(model), str(folder / "far.svm")]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert "line 2: feature index 2000000000 is beyond n_features=5" in line
        assert "the model takes 5 features" in line
    # 2e9 features fit a machine with more memory than this one says it has
    monkeypatch.setattr(tasks, "_physical_memory", lambda: 2**30)
    with pytest.raises(ValueError, match="2000000000 features .*more than this machine's 1 GiB"):
        train(folder / "far.svm", "alma", model)


# An index past 2^31 - 1: the svmlight reader's 64-bit indices, a second compilation of
# it (about 30 s of CPU on a cold numba cache, in each pytest-xdist worker that reads
# such a file), for make test-all; tests/test_formats.py reads them there too.
@pytest.mark.slow
def test_an_absurd_width_is_one_line(data, capsys):
    folder, _, _ = data
    model = folder / "m.skops"
    (folder / "huge.svm").write_text("1 1:1\n-1 1000000000000:1\n")
    argv = ["train", str(folder / "huge.svm"), "--estimator", "alma", "--model", str(model)]
    assert main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "1000000000000 features (the largest index in the file)" in line
    assert main([*argv, "--chunk-size", "1"]) == 2
    assert "a model that wide needs about" in one_error_line(capsys.readouterr().err)


def test_running_out_of_memory_while_training_is_one_line(data, monkeypatch, capsys):
    folder, X, y = data
    dump_svmlight_file(X, y, str(folder / "train.svm"))

    def fit(self, X, y, **options):
        raise MemoryError

    monkeypatch.setattr(ALMAClassifier, "fit", fit)
    argv = ["train", str(folder / "train.svm"), "--estimator", "alma"]
    assert main([*argv, "--model", str(folder / "m.skops")]) == 2
    assert "out of memory training alma on 5 features" in one_error_line(capsys.readouterr().err)


def test_read_data_options_and_errors(data):
    folder, X, y = data
    dump_svmlight_file(X, y, str(folder / "t.svm"), zero_based=False)
    Xr, yr = read_data(folder / "t.svm", labels=False)
    assert yr is None and Xr.shape == (240, 5)
    Xr, _ = read_data(folder / "t.svm", zero_based=True)
    assert Xr.shape == (240, 6)
    (folder / "empty.csv").write_text("# nothing\n")
    with pytest.raises(ValueError, match="empty.csv: no examples"):
        read_data(folder / "empty.csv")
    (folder / "head.csv").write_text("a,b\n1,2\n")
    # a first line that is not numbers over lines that are: a header, taken as such
    assert read_data(folder / "head.csv")[1].tolist() == [2]
    assert read_data(folder / "head.csv", skip_header=True)[1].tolist() == [2]
    Xc, yc = read_data(folder / "head.csv", skip_header=True, label_column=None)
    assert yc is None and Xc.tolist() == [[1.0, 2.0]]


def test_models_saved_without_input_format_read_as_before(data):
    folder, X, y = data
    dump_svmlight_file(X, y, str(folder / "t.svm"), zero_based=False)
    est = ALMAClassifier(
        shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
    ).fit(X, y)
    marginkit.save(est, folder / "plain.skops")
    np.testing.assert_array_equal(
        predict(folder / "plain.skops", folder / "t.svm"), est.predict(X)
    )


def test_a_csv_model_reads_its_label_column_where_it_was_trained(tmp_path):
    """A model trained with the label in column 0 finds it there in predict and evaluate
    (they dropped the last column, a feature, and took the label for one)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = np.where(X @ rng.normal(size=5) > 0, 1, -1)
    np.savetxt(tmp_path / "first.csv", np.column_stack([y, X]), delimiter=",")
    model = tmp_path / "m.skops"
    train(tmp_path / "first.csv", "alma", model, label_column=0)
    assert marginkit.load(model).input_format_["label_column"] == 0
    want = marginkit.load(model).predict(X)
    np.testing.assert_array_equal(predict(model, tmp_path / "first.csv"), want)
    np.testing.assert_array_equal(predict(model, tmp_path / "first.csv", label_column=0), want)
    assert evaluate(model, tmp_path / "first.csv")["error"] == np.mean(want != y)
    assert main(["evaluate", str(model), str(tmp_path / "first.csv")]) == 0
    with pytest.raises(ValueError, match="label_column must be an integer, None or 'model'"):
        predict(model, tmp_path / "first.csv", label_column="first")
