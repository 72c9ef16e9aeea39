"""``marginkit train | predict | evaluate`` on svmlight and CSV files, and marginkit.tasks."""

import json

import numpy as np
import pytest
from conftest import one_error_line
from sklearn.datasets import dump_svmlight_file

import marginkit
from marginkit.cli import main
from marginkit.tasks import ESTIMATORS, evaluate, make_estimator, parse_param, read_data


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    X[:, 4] = 0.0  # the last feature never appears in the svmlight files
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.0] + 0.3 > 0, 1, -1)
    paths = {
        "train": tmp_path / "train.svm",
        "test": tmp_path / "test.svm",
        "csv": tmp_path / "train.csv",
        "model": tmp_path / "model.skops",
    }
    dump_svmlight_file(X[:200], y[:200], str(paths["train"]))
    dump_svmlight_file(X[200:], y[200:], str(paths["test"]))
    np.savetxt(
        paths["csv"], np.c_[y[:200], X[:200]], delimiter=",", header="y,a,b,c,d,e", comments=""
    )
    return paths, X, y


def test_train_evaluate_predict_svmlight(files, capsys):
    paths, X, y = files
    train = ["train", str(paths["train"]), "--estimator", "pumma", "--model", str(paths["model"])]
    assert main([*train, "--param", "lam=0.5", "--param", "delta=0.05"]) == 0
    err = capsys.readouterr().err
    assert "trained pumma on 200 examples" in err and "saved" in err
    model = marginkit.load(paths["model"])
    assert model.lam == 0.5 and model.delta == 0.05
    assert main(["evaluate", str(paths["model"]), str(paths["test"])]) == 0
    out = capsys.readouterr().out
    assert "test error" in out and "geometric margin (p = 2)" in out
    assert "smallest margin y f(x)" in out and "median margin y f(x)" in out
    assert main(["evaluate", str(paths["model"]), str(paths["test"]), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    Xt, yt = read_data(paths["test"], n_features=model.n_features_in_)
    assert result["error"] == pytest.approx(np.mean(model.predict(Xt) != yt))
    assert result["n_samples"] == 100 and result["n_corrections"] == model.n_corrections_
    out_file = paths["model"].with_name("labels.txt")
    assert main(["predict", str(paths["model"]), str(paths["test"]), "--out", str(out_file)]) == 0
    labels = np.loadtxt(out_file, dtype=int)
    np.testing.assert_array_equal(labels, model.predict(Xt))
    assert main(["predict", str(paths["model"]), str(paths["test"])]) == 0
    assert capsys.readouterr().out.split() == [str(v) for v in labels]


def test_train_on_csv_with_header_and_label_first(files, capsys):
    paths, X, y = files
    args = ["train", str(paths["csv"]), "--estimator", "alma", "--model", str(paths["model"])]
    args += ["--param", "random_state=0"]
    assert main([*args, "--skip-header", "--label-column", "0", "--param", "p=3"]) == 0
    capsys.readouterr()
    model = marginkit.load(paths["model"])
    assert model.p == 3 and model.n_features_in_ == 5
    np.testing.assert_array_equal(model.classes_, [-1, 1])
    # the header is not numbers: without --skip-header it is taken as a header all the same
    assert main([*args, "--label-column", "0", "--param", "p=3"]) == 0
    capsys.readouterr()
    again = marginkit.load(paths["model"])
    np.testing.assert_array_equal(again.coef_, model.coef_)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_every_estimator_trains(files, name, capsys):
    paths, _, _ = files
    args = ["train", str(paths["train"]), "--estimator", name, "--model", str(paths["model"])]
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert type(marginkit.load(paths["model"])) is ESTIMATORS[name]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "{train}", "--estimator", "nope", "--model", "{model}"], "invalid choice"),
        (["train", "{train}", "--estimator", "alma"], "--model"),
        (
            ["train", "{train}", "--estimator", "alma", "--model", "{model}", "--param", "p"],
            "a parameter is NAME=VALUE",
        ),
        (
            ["train", "{train}", "--estimator", "alma", "--model", "{model}", "--param", "q=1"],
            "alma has no parameter q",
        ),
        (
            ["train", "{train}", "--estimator", "alma", "--model", "{model}", "--param", "p=1"],
            "The 'p' parameter of ALMAClassifier must be",
        ),
        (["train", "{missing}", "--estimator", "alma", "--model", "{model}"], "no data file"),
        (["evaluate", "{missing}", "{test}"], "no model file"),
        (["predict", "{train}", "{test}"], "is not a marginkit model file"),
        (["evaluate", "{model}", "{missing}"], "no data file"),
        (["train", "{bad}", "--estimator", "alma", "--model", "{model}"], "svmlight"),
        ([], "a command is required"),
        (["evaluate", "{model}", "{test}", "--window", "5"], "--window applies only with"),
        (
            ["evaluate", "{model}", "{test}", "--param", "p=2", "--chunk-size", "9"],
            "--param, --chunk-size apply only with --prequential",
        ),
        (["evaluate", "--prequential", "nope", "{test}"], "unknown estimator 'nope'"),
        (
            ["evaluate", "--prequential", "alma", "{test}", "--param", "p=1"],
            "The 'p' parameter of ALMAClassifier must be",
        ),
        (["evaluate", "--prequential", "alma", "{missing}"], "no data file"),
    ],
)
def test_user_errors_are_one_line_with_status_2(files, argv, message, capsys):
    paths, _, _ = files
    marginkit.save(
        marginkit.ALMAClassifier(
            shuffle=False, alpha=1.0, output="last", max_iter=1, fit_intercept=False
        ).fit(*read_data(paths["train"])),
        paths["model"],
    )
    bad = paths["train"].with_name("bad.svm")
    bad.write_text("this is not svmlight\n")
    names = {**{k: str(v) for k, v in paths.items()}, "missing": "nope.svm", "bad": str(bad)}
    assert main([a.format(**names) for a in argv]) == 2
    assert message in one_error_line(capsys.readouterr().err)


def test_parse_param():
    assert parse_param("p=6") == ("p", 6)
    assert parse_param("alpha = 0.5") == ("alpha", 0.5)
    assert parse_param("fit_intercept=true") == ("fit_intercept", True)
    assert parse_param("B=None") == ("B", None)
    assert parse_param("kernel=poly") == ("kernel", "poly")
    assert parse_param("gamma=1/255") == ("gamma", "1/255")  # not evaluated: refused by fit
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_param("=3")


def test_make_estimator_and_read_data_errors(tmp_path):
    assert make_estimator("kernel-alma", {"degree": 4}).degree == 4
    with pytest.raises(ValueError, match="unknown estimator"):
        make_estimator("svm")
    one = tmp_path / "one.csv"
    one.write_text("1\n2\n")
    with pytest.raises(ValueError, match="needs a label column and at least one feature"):
        read_data(one)
    with pytest.raises(ValueError, match="unknown data format"):
        read_data(one, "json")


def test_evaluate_reports_unknown_labels(files):
    paths, X, y = files
    model = marginkit.PerceptronClassifier(
        shuffle=False, output="last", max_iter=1, fit_intercept=False
    ).fit(*read_data(paths["train"]))
    marginkit.save(model, paths["model"])
    odd = paths["train"].with_name("odd.svm")
    dump_svmlight_file(X[:10], np.full(10, 7), str(odd))
    result = evaluate(paths["model"], odd)
    assert result["unknown_labels"] == 10 and result["error"] == 1.0
    assert result["geometric_margin"] is None and result["smallest_margin"] is None


def test_train_with_a_checkpoint_resumes(files, capsys):
    paths, _, _ = files
    ckpt = paths["model"].with_name("ckpt.skops")
    args = ["train", str(paths["train"]), "--estimator", "alma", "--model", str(paths["model"])]
    extra = ["--param", "max_iter=3", "--checkpoint", str(ckpt), "--checkpoint-every", "50"]
    assert main([*args, *extra]) == 0
    first = marginkit.load(paths["model"])
    assert ckpt.exists()
    assert main([*args, *extra]) == 0  # resumes from the finished checkpoint
    again = marginkit.load(paths["model"])
    X, _ = read_data(paths["test"], n_features=first.n_features_in_)
    np.testing.assert_array_equal(again.decision_function(X), first.decision_function(X))
    capsys.readouterr()
    assert main([*args, "--checkpoint-every", "5"]) == 2
    assert "checkpoint_every needs a checkpoint path" in one_error_line(capsys.readouterr().err)


def _wrong_width(schema, members):
    from archives import set_array

    set_array(schema, members, ("estimator", "_states", 0, "v"), np.zeros(2))


def _unknown_loader(schema, members):
    from archives import node_at

    node_at(schema, "estimator")["__loader__"] = "NoSuchNode"


@pytest.mark.parametrize("change", [_wrong_width, _unknown_loader, "deep"])
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_crafted_model_is_one_line_and_exit_2(files, tmp_path, capsys, change, command):
    from archives import edit, read_archive, write_archive

    paths, _, _ = files
    train = ["train", str(paths["train"]), "--estimator", "alma", "--model", str(paths["model"])]
    assert main([*train, "--quiet"]) == 0
    crafted = tmp_path / "crafted.skops"
    if change == "deep":  # a schema nested 100000 deep
        schema, members = read_archive(paths["model"])
        write_archive(crafted, schema, members, raw_schema="[" * 100_000 + "]" * 100_000)
    else:
        edit(paths["model"], crafted, change, prune=False)
    capsys.readouterr()
    assert main([command, str(crafted), str(paths["test"])]) == 2
    one_error_line(capsys.readouterr().err)


def test_evaluate_prequential_is_prequential_score(files, capsys, tmp_path):
    """``evaluate --prequential`` streams the file through the estimator, each chunk
    predicted then learnt: the numbers of :func:`~marginkit.prequential.prequential_score`
    on the same rows, printed, as JSON, and drawn."""
    from marginkit.prequential import prequential_score

    paths, _, _ = files
    X, y = read_data(paths["train"])
    want = prequential_score(
        make_estimator("kernel-alma", {"budget": 20}), X, y, chunk_size=30, window=50
    )
    argv = ["evaluate", "--prequential", "kernel-alma", str(paths["train"]), "--param"]
    argv += ["budget=20", "--chunk-size", "30", "--window", "50"]
    assert main([*argv, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["n_samples"], got["n_scored"]) == (want.n_rows, want.n_scored) == (200, 170)
    assert got["accuracy"] == want.accuracy
    assert got["window_accuracy"] == want.windowed[-1]
    assert got["model_bytes"] == want.model_bytes and got["chunk_size"] == 30
    pytest.importorskip("matplotlib", reason="the plot needs the 'plot' extra")
    png = tmp_path / "preq.png"
    assert main([*argv, "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert f"{100 * want.accuracy:.2f}%" in out and "over the last 50" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
