"""``marginkit train`` on a Dask cluster: files as the shards of iterative parameter
mixing (--workers, --scheduler, --mixing, --momentum, --mix-every, --warm-up), and its
refusals."""

import json
import sys

import numpy as np
import pytest
from conftest import one_error_line
from sklearn.datasets import dump_svmlight_file, make_classification

import marginkit
from marginkit.cli import main
from marginkit.streaming import fit_file
from marginkit.tasks import read_data, train

distributed = pytest.importorskip("distributed", reason="the Dask runs need the 'dask' extra")

from test_mixing import same_bits  # noqa: E402

from marginkit.distributed import MixingClassifier  # noqa: E402


@pytest.fixture
def shards(tmp_path):
    """Three svmlight files of 150 rows (index 0 never written: one-based) and a test
    file, of a three-class problem."""
    X, y = make_classification(
        n_samples=600, n_features=8, n_informative=5, n_classes=3, random_state=2
    )
    X[:, 0] = 0.0
    paths = []
    for i in range(4):
        path = tmp_path / f"part{i}.svm"
        dump_svmlight_file(X[150 * i : 150 * (i + 1)], y[150 * i : 150 * (i + 1)], str(path))
        paths.append(str(path))
    return paths[:3], paths[3], tmp_path / "model.skops"


def test_train_on_a_cluster_is_the_mixed_model(shards, dask_client, capsys):
    parts, test, model = shards
    argv = ["train", *parts, "--estimator", "perceptron", "--model", str(model)]
    argv += ["--scheduler", dask_client.scheduler.address, "--max-iter", "4"]
    argv += ["--momentum", "auto", "--warm-up", "30", "--chunk-size", "40", "--json"]
    argv += ["--mix-every", "25"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    saved = marginkit.load(model)
    with dask_client.as_current():
        expected = MixingClassifier(
            marginkit.PerceptronClassifier(shuffle=False),
            max_iter=4,
            momentum="auto",
            warm_up=30,
            mix_every=25,
        ).fit(parts, chunk_size=40)
    assert same_bits(saved, expected.estimator_)
    assert saved.input_format_ == {"format": "svmlight", "n_features": 7, "zero_based": False}
    assert summary["n_shards"] == 3 and summary["n_mixes"] == expected.n_mixes_ > 0
    assert summary["n_samples"] == 450 and summary["n_features"] == 7
    assert summary["n_corrections"] == expected.n_corrections_
    assert summary["n_passes"] == expected.n_iter_ and summary["classes"] == [0, 1, 2]
    # the saved model reads the test file as its training files were read
    assert main(["evaluate", str(model), test, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    Xt, yt = read_data(test, n_features=7, zero_based=False)
    assert result["error"] == pytest.approx(np.mean(saved.predict(Xt) != yt))


def test_one_file_on_a_local_cluster_is_fit_file(shards, capsys):
    parts, _, model = shards
    argv = ["train", parts[0], "--estimator", "alma", "--param", "p=3", "--model", str(model)]
    assert main([*argv, "--workers", "1", "--chunk-size", "50", "--max-iter", "3"]) == 0
    err = capsys.readouterr().err
    assert "in 1 shard on a Dask cluster" in err and "stopped: max_iter reached" in err
    serial = fit_file(
        marginkit.ALMAClassifier(shuffle=False, p=3.0, max_iter=3, tol=1e-3),
        parts[0],
        chunk_size=50,
    )
    assert same_bits(marginkit.load(model), serial)


def test_csv_shards_keep_their_label_column(tmp_path, dask_client):
    rng = np.random.default_rng(1)
    paths = []
    for i in range(2):
        X = rng.normal(size=(80, 3))
        y = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
        path = tmp_path / f"rows{i}.csv"
        np.savetxt(path, np.c_[y, X], delimiter=",")
        paths.append(str(path))
    summary = train(
        paths,
        "perceptron",
        tmp_path / "m.skops",
        scheduler=dask_client.scheduler.address,
        label_column=0,
        params={"max_iter": 3},
    )
    saved = marginkit.load(tmp_path / "m.skops")
    assert saved.input_format_ == {"format": "csv", "n_features": 3, "label_column": 0}
    assert summary["n_shards"] == 2 and summary["n_samples"] == 160


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "2 data files are trained as the shards of a Dask cluster: give workers"),
        (["--workers", "1", "--checkpoint", "{ckpt}"], "cannot be combined with training on"),
        (["--workers", "1", "--momentum", "1.5"], "'momentum' parameter of MixingClassifier"),
        (["--workers", "1", "--momentum", "fast"], "not a number or auto: 'fast'"),
        (["--workers", "1", "--scheduler", "tcp://x:1"], "not allowed with argument"),
        (["--workers", "0"], "argument --workers: must be >= 1"),
        (["--workers", "1", "--mixing", "median"], "argument --mixing: invalid choice"),
        (["--workers", "1", "--warm-up", "-5"], "argument --warm-up: must be >= 0"),
        (["--workers", "1", "--mix-every", "0"], "argument --mix-every: must be >= 1"),
    ],
)
def test_refusals_are_one_line(shards, extra, message, capsys):
    parts, _, model = shards
    argv = ["train", *parts[:2], "--estimator", "alma", "--model", str(model)]
    extra = [a.format(ckpt=model.with_name("c.skops")) for a in extra]
    assert main([*argv, *extra]) == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert not model.exists()


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--momentum", "auto"], "momentum"),
        (["--warm-up", "20", "--mixing", "corrections"], "mixing, warm_up"),
        (["--mix-every", "20"], "mix_every"),
    ],
)
def test_mixing_options_without_a_cluster_are_refused(shards, extra, named, capsys):
    parts, _, model = shards
    argv = ["train", parts[0], "--estimator", "alma", "--model", str(model), *extra]
    assert main(argv) == 2
    assert f"{named} only apply to training on a Dask cluster: give workers" in one_error_line(
        capsys.readouterr().err
    )
    assert not model.exists()


def test_the_mix_defaults_are_mixing_classifiers():
    params = MixingClassifier(marginkit.ALMAClassifier(shuffle=False)).get_params()
    assert {
        k: params[k] for k in marginkit.tasks._MIXED_DEFAULTS
    } == marginkit.tasks._MIXED_DEFAULTS


@pytest.mark.parametrize("name", ["pumma", "kernel-pumma", "kernel-alma", "margin-perceptron"])
def test_estimators_that_do_not_mix_are_refused_before_a_cluster(shards, name, capsys):
    parts, _, model = shards
    argv = ["train", *parts, "--estimator", name, "--model", str(model), "--workers", "1"]
    assert main(argv) == 2
    assert f"cannot mix {type(marginkit.tasks.make_estimator(name)).__name__}" in one_error_line(
        capsys.readouterr().err
    )


def test_without_the_dask_extra(shards, monkeypatch, capsys):
    parts, _, model = shards
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    argv = ["train", *parts, "--estimator", "alma", "--model", str(model), "--workers", "2"]
    assert main(argv) == 2
    assert "needs the dask extra" in one_error_line(capsys.readouterr().err)
