"""``marginkit train`` and ``marginkit evaluate`` say how many passes were made over the
data and why they stopped, in memory and streamed, plain and as JSON."""

import json
import warnings

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.exceptions import ConvergenceWarning

from marginkit import (
    ALMAClassifier,
    KernelALMAClassifier,
    MarginPerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from marginkit.cli import main
from marginkit.tasks import describe_passes, passes_made


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A noisy file (the corrections never stop) and a separable one."""
    folder = tmp_path_factory.mktemp("passes")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 8))
    y = np.where(X[:, :3].sum(axis=1) + 0.4 * rng.normal(size=600) > 0, 1, -1)
    dump_svmlight_file(X, y, str(folder / "noisy.svm"))
    ys = np.where(X[:, 0] > 0, 1, -1)
    Xs = X.copy()
    Xs[:, 0] += 0.5 * ys
    dump_svmlight_file(Xs, ys, str(folder / "separable.svm"))
    return folder


def train(capsys, files, data, *args):
    model = str(files / "model.skops")
    argv = ["train", str(files / data), "--model", model, "--json", *args]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out), model


STREAMED = [[], ["--chunk-size", "128"]]


@pytest.mark.parametrize("stream", STREAMED)
def test_corrections_stopped_falling(files, capsys, stream):
    summary, _ = train(capsys, files, "noisy.svm", "--estimator", "alma", *stream)
    assert 1 < summary["n_passes"] < 1000
    assert summary["stopped"] == "corrections stopped falling (tol=0.001, n_iter_no_change=5)"


@pytest.mark.parametrize("stream", STREAMED)
def test_max_iter_reached(files, capsys, stream):
    args = ["--estimator", "perceptron", "--max-iter", "3", "--param", "tol=None", *stream]
    summary, _ = train(capsys, files, "noisy.svm", *args)
    assert summary["n_passes"] == 3 and summary["stopped"] == "max_iter reached"


@pytest.mark.parametrize("stream", STREAMED)
def test_a_pass_without_update(files, capsys, stream):
    summary, _ = train(capsys, files, "separable.svm", "--estimator", "perceptron", *stream)
    assert summary["stopped"] == "a pass without update"
    assert 1 < summary["n_passes"] < 1000


@pytest.mark.parametrize("stream", STREAMED)
def test_one_pass_asked(files, capsys, stream):
    args = ["--estimator", "alma", "--max-iter", "1", *stream]
    summary, _ = train(capsys, files, "noisy.svm", *args)
    assert summary["n_passes"] == 1 and summary["stopped"] == "one pass asked (max_iter=1)"
    # --param max_iter=1 is the same
    summary, _ = train(capsys, files, "noisy.svm", "--estimator", "alma", "--param", "max_iter=1")
    assert summary["n_passes"] == 1 and summary["stopped"] == "one pass asked (max_iter=1)"


def test_pumma_converges_streamed(files, capsys):
    args = ["--estimator", "pumma", "--param", "lam=0", "--param", "tol=None"]
    summary, _ = train(capsys, files, "separable.svm", *args, "--chunk-size", "100")
    assert summary["stopped"] == "a pass without update"


def test_plain_output_of_train_and_evaluate(files, capsys):
    model = str(files / "plain.skops")
    data = str(files / "noisy.svm")
    argv = ["train", data, "--estimator", "perceptron", "--model", model, "--max-iter", "4"]
    assert main([*argv, "--param", "tol=None", "--chunk-size", "200"]) == 0
    err = capsys.readouterr().err
    assert "(" in err and "corrections; 4 passes; stopped: max_iter reached); saved" in err
    assert main(["evaluate", model, data]) == 0
    out = capsys.readouterr().out
    assert "training passes" in out and "4 passes; stopped: max_iter reached" in out
    assert main(["evaluate", model, data, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n_passes"] == 4 and result["stopped"] == "max_iter reached"


def test_evaluate_of_a_model_that_tol_stopped(files, capsys):
    """The model records its passes and which rule ended them."""
    _, model = train(capsys, files, "noisy.svm", "--estimator", "alma")
    assert main(["evaluate", model, str(files / "noisy.svm"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stopped"] == "corrections stopped falling (tol=0.001, n_iter_no_change=5)"


def test_a_model_saved_before_it_recorded_why_says_what_it_can(files, capsys):
    """Without the record (a model saved before it), tol's reasons are both named."""
    _, model = train(capsys, files, "noisy.svm", "--estimator", "alma")
    import marginkit

    est = marginkit.load(model)
    del est._stopped_by
    assert passes_made(est)["stopped"].startswith("tol ended them (tol=0.001)")


def test_the_rule_that_ended_the_passes_is_named():
    """The soft margin's passes end on the growth of the hypothesis; the kernel
    estimators' on noisy data by the noise rule, which ``max_iter`` does not change
    and which therefore does not warn to increase it."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=300) > 0, 1, -1)
    clf = PUMMAClassifier(random_state=0).fit(X, y)
    assert passes_made(clf)["stopped"] == "the hypothesis stopped growing (tol=0.001)"
    clf = ROMMAClassifier(random_state=0).fit(X, y)
    assert passes_made(clf)["stopped"] == (
        "the hypothesis stopped growing (tol=0.001, n_iter_no_change=5)"
    )
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    y = np.where(rng.uniform(size=300) < 0.2, -y, y)  # a fifth of the labels flipped
    noisy = KernelALMAClassifier(random_state=0).fit(X, y)
    assert noisy.n_iter_ == 2
    assert passes_made(noisy)["stopped"].startswith("noisy data: a pass made at least 0.85")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        capped = KernelALMAClassifier(random_state=0, max_iter=2).fit(X, y)
    assert passes_made(capped)["stopped"].startswith("noisy data")
    np.testing.assert_array_equal(capped.decision_function(X), noisy.decision_function(X))


def test_max_iter_and_param_disagree(files, capsys):
    argv = ["train", str(files / "noisy.svm"), "--estimator", "alma", "--model"]
    argv += [str(files / "m.skops"), "--max-iter", "2", "--param", "max_iter=3"]
    assert main(argv) == 2
    assert "--max-iter 2 and --param max_iter=3 disagree" in capsys.readouterr().err


def test_help_says_a_stream_reads_its_file_once_per_pass(capsys):
    assert main(["train", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Each pass over the data reads the file again" in out
    assert "--max-iter 1 for one" in out


def test_passes_made_of_estimators():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 0.5 * y
    clf = PUMMAClassifier(shuffle=False, tol=None).fit(X, y)
    assert passes_made(clf)["stopped"] == "a pass without update"
    clf = ALMAClassifier(shuffle=False, max_iter=2, tol=None).fit(
        X * 0 + rng.normal(size=X.shape), y
    )
    assert passes_made(clf) == {"n_passes": 2, "stopped": "max_iter reached"}
    y3 = np.argmax(X[:, :3], axis=1)
    clf = MarginPerceptronClassifier(shuffle=False, max_iter=2).fit(X, y3)
    made = passes_made(clf)
    assert made["n_passes"] == sum(made["passes_per_problem"])
    assert describe_passes(made).startswith(f"{made['n_passes']} passes (")
    assert describe_passes({"n_passes": 1, "stopped": "x"}) == "1 pass; stopped: x"
    noisy = np.where(rng.uniform(size=200) < 0.3, -y, y)
    clf = KernelALMAClassifier(shuffle=False, early_stopping=True, random_state=0).fit(X, noisy)
    assert clf.n_iter_ < 1000
    assert passes_made(clf)["stopped"].startswith("the rows held out stopped improving")


def test_a_model_that_did_not_record_its_passes():
    class Old:
        def get_params(self):
            return {"max_iter": 5, "tol": None}

    made = passes_made(Old())
    assert made == {"n_passes": None, "stopped": "not recorded (a model of marginkit 0.1)"}
    assert describe_passes(made) == "passes not recorded (a model of marginkit 0.1)"
