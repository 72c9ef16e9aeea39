"""The command line never loses work: every output path is checked (its folder made)
before any training, prediction or cell runs; a resumed run says so; ``evaluate`` names
what it reports and refuses data without features."""

import json

import numpy as np
import pytest
from conftest import one_error_line
from sklearn.datasets import dump_svmlight_file

import marginkit
from marginkit._files import atomic_write, prepare_output
from marginkit.cli import main
from marginkit.plotting import output_margins
from marginkit.tasks import read_data


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(240, 4))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.2] > 0, 1, -1)
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:160], y[:160], str(train))
    dump_svmlight_file(X[160:], y[160:], str(test))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    return tmp_path, train, test, blocker


def _train(train, model, *extra):
    return main(["train", str(train), "--estimator", "alma", "--model", str(model), *extra])


def test_train_makes_the_models_folder(data, capsys):
    tmp, train, _, _ = data
    model = tmp / "new" / "deeper" / "m.skops"
    assert _train(train, model, "--quiet") == 0
    assert marginkit.load(model).n_features_in_ == 4


@pytest.mark.parametrize("where", ["under-a-file", "a-folder"])
def test_train_refuses_an_unwritable_model_path_before_training(data, where, capsys):
    tmp, train, _, blocker = data
    model = blocker / "m.skops" if where == "under-a-file" else tmp
    assert _train(train, model) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "cannot write the model to" in line and str(model) in line
    assert ".tmp" not in line and "trained" not in line


def test_train_refuses_an_unwritable_checkpoint_before_training(data, capsys):
    tmp, train, _, blocker = data
    assert _train(train, tmp / "m.skops", "--checkpoint", str(blocker / "c.skops")) == 2
    assert "cannot write the checkpoint" in one_error_line(capsys.readouterr().err)
    assert not (tmp / "m.skops").exists()


def test_a_resumed_run_says_so(data, capsys):
    tmp, train, _, _ = data
    ckpt = tmp / "c.skops"
    assert _train(train, tmp / "m.skops", "--checkpoint", str(ckpt), "--param", "max_iter=2") == 0
    assert "resumed from" not in capsys.readouterr().err
    assert _train(train, tmp / "m.skops", "--checkpoint", str(ckpt), "--param", "max_iter=2") == 0
    assert f"resumed from the checkpoint {ckpt}" in capsys.readouterr().err


def test_predict_checks_its_output_first(data, capsys):
    tmp, train, test, blocker = data
    model = tmp / "m.skops"
    assert _train(train, model, "--quiet") == 0
    out = tmp / "labels" / "test.txt"
    assert main(["predict", str(model), str(test), "--out", str(out)]) == 0
    assert len(out.read_text().split()) == 80
    # the output is refused before the model is even read
    argv = ["predict", str(tmp / "missing.skops"), str(test), "--out", str(blocker / "x")]
    assert main(argv) == 2
    assert "cannot write the labels" in one_error_line(capsys.readouterr().err)


def test_evaluate_checks_its_plot_first(data, capsys):
    tmp, train, test, blocker = data
    model = tmp / "m.skops"
    assert _train(train, model, "--quiet") == 0
    assert main(["evaluate", str(model), str(test), "--plot", str(blocker / "p.png")]) == 2
    assert "cannot write the plot" in one_error_line(capsys.readouterr().err)


def test_reproduce_checks_its_figures_first(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = tmp_path / "res" / "artificial"
    argv = ["reproduce", "pumma-artificial", "--quick", "--quiet", "--out", str(out)]
    assert main([*argv, "--plot", str(blocker / "fig")]) == 2
    assert "cannot write the figures" in one_error_line(capsys.readouterr().err)
    assert not out.with_suffix(".json").exists()  # no cell ran


def test_evaluate_refuses_a_file_of_labels_only(data, capsys):
    tmp, train, test, _ = data
    model = tmp / "m.skops"
    assert _train(train, model, "--quiet") == 0
    labels = tmp / "labels.txt"
    assert main(["predict", str(model), str(test), "--out", str(labels)]) == 0
    assert main(["evaluate", str(model), str(labels)]) == 2
    assert "no example has a feature" in one_error_line(capsys.readouterr().err)


def test_evaluate_reports_margins_on_the_scale_of_its_plot(data, capsys):
    tmp, train, test, _ = data
    model = tmp / "m.skops"
    assert _train(train, model, "--quiet", "--param", "fit_intercept=True") == 0
    assert main(["evaluate", str(model), str(test), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    est = marginkit.load(model)
    X, y = read_data(test, n_features=4)
    margins = output_margins(est, X, y)
    assert result["smallest_margin"] == pytest.approx(margins.min())
    assert result["median_margin"] == pytest.approx(np.median(margins))
    assert result["p"] == 2.0 and result["geometric_margin"] is not None
    assert main(["evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "smallest / median margin" in text and "geometric margin" in text


def test_a_csv_header_is_recognised(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n1,2,0\n3,4,1\n")
    X, y = read_data(path)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    path.write_text("a,b,label\n1,x,0\n")
    with pytest.raises(ValueError, match="its first line taken as a header"):
        read_data(path)


def test_a_failed_write_names_the_file_asked_for(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "model.skops"
    with pytest.raises(OSError, match=r"a-file/model\.skops"):
        atomic_write(target, b"x")
    with pytest.raises(ValueError, match="it is a folder"):
        prepare_output(tmp_path, "the model")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        prepare_output(target, "the model")
    # missing folders are made when the file is written, not when it is checked
    deep = tmp_path / "x" / "y" / "m.bin"
    prepare_output(deep)
    assert not (tmp_path / "x").exists()
    atomic_write(deep, b"x")
    assert deep.read_bytes() == b"x"


def test_evaluate_json_is_strict_json(tmp_path, capsys):
    """A margin that is not finite (features near 1e308) is null: JSON has no Infinity."""
    data = tmp_path / "big.svm"
    data.write_text("1 1:1e308 2:1e308\n-1 1:-1e308 2:0\n")
    model = str(tmp_path / "m.skops")
    assert (
        main(["train", str(data), "--estimator", "perceptron", "--model", model, "--quiet"]) == 0
    )
    capsys.readouterr()
    assert main(["evaluate", model, str(data), "--json"]) == 0
    text = capsys.readouterr().out

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    result = json.loads(text, parse_constant=refuse)
    assert result["error"] == 0.0


def test_a_value_that_is_not_finite_names_the_file_and_example(tmp_path, capsys):
    data = tmp_path / "nan.svm"
    data.write_text("1 1:1 2:1\n-1 1:nan 2:0\n")
    code = main(["train", str(data), "--estimator", "alma", "--model", str(tmp_path / "m")])
    assert code == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"marginkit: error: {data}: example 2 holds a value that is not finite (nan or inf)"
    )
