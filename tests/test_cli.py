"""The ``marginkit`` command: in-process through main(argv), and once as a subprocess."""

import json
import subprocess
import sys

import pytest
from conftest import one_error_line

from marginkit import __version__
from marginkit.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"marginkit {__version__}"


def test_help(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "reproduce" in out and "demo" in out


def test_demo(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ALMA_p learns a linear classifier")
    for needle in ("last err %", "avg err %", "corrections", "ALMA_2(1.0)", "ALMA_6(0.5)"):
        assert needle in out
    assert "ALMA_log(0.5)" in out and "11.4" in out  # p = 2 ln 300
    assert "sparse (s = 3)" in out and "dense (s = 300)" in out
    assert "Best on the sparse (s = 3) target" in out


def test_reproduce_quick_then_resume(tmp_path, capsys):
    prefix = tmp_path / "deep" / "dir" / "t6"
    assert main(["reproduce", "gentile-table6", "--quick", "--out", str(prefix)]) == 0
    captured = capsys.readouterr()
    assert "| algorithm " in captured.out and "## Which B matches" in captured.out
    assert "32 cells computed, 0 reused" in captured.err
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert len(doc["results"]) == 32
    assert prefix.with_suffix(".md").read_text() in captured.out

    # a trailing .json is taken as the same prefix; nothing is recomputed
    out_json = str(prefix) + ".json"
    assert main(["reproduce", "gentile-table6", "--quick", "--out", out_json]) == 0
    assert "0 cells computed, 32 reused" in capsys.readouterr().err

    # another seed does not match the stored spec: one warning line, then a fresh run
    argv = ["reproduce", "gentile-table6", "--quick", "--out", str(prefix), "--seed", "1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.startswith("marginkit: warning: ") and "starting over" in err


def test_reproduce_quiet_prints_only_the_table(tmp_path, capsys):
    args = ["reproduce", "gentile-table6", "--quick", "--quiet", "--out", str(tmp_path / "q")]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith("# Gentile (JMLR 2001), Table 6")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["reproduce", "gentile-table7"], "unknown experiment 'gentile-table7'"),
        (["reproduce"], "required"),
        ([], "a command is required"),
        (["frobnicate"], "invalid choice"),
        (["reproduce", "gentile-table6", "--seed", "-1"], "must be >= 0"),
        (["reproduce", "gentile-table6", "--seed", "x"], "not an integer"),
        (["demo", "--bogus"], "unrecognized arguments"),
    ],
)
def test_user_errors_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in one_error_line(captured.err)


def test_unwritable_output_is_one_line_and_exit_2_before_any_cell(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = ["reproduce", "gentile-table6", "--quick", "--quiet", "--out", str(blocker / "x")]
    assert main(argv) == 2
    assert "cannot write the results" in one_error_line(capsys.readouterr().err)


def test_subprocess_unknown_experiment_and_version():
    cmd = [sys.executable, "-m", "marginkit.cli"]
    bad = subprocess.run(
        [*cmd, "reproduce", "nope"], capture_output=True, text=True, timeout=120, check=False
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert "unknown experiment 'nope'" in one_error_line(bad.stderr)
    ok = subprocess.run(
        [*cmd, "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert ok.returncode == 0 and ok.stdout.strip() == f"marginkit {__version__}"


# -- the kernel experiments ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        ("gentile-mnist", "train-images-idx3-ubyte.gz not found"),
        ("gentile-usps", "zip.train.gz not found"),
        ("gentile-letter", "letter-recognition.data.gz not found"),
    ],
)
def test_missing_data_dir_is_one_line_and_exit_2(name, missing, tmp_path, capsys):
    out = tmp_path / "out" / "run"
    argv = [
        "reproduce",
        name,
        "--quick",
        "--data-dir",
        str(tmp_path / "nowhere"),
        "--out",
        str(out),
    ]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    line = one_error_line(captured.err)
    assert missing in line and str(tmp_path / "nowhere") in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["reproduce", "gentile-usps", "--degrees", "4"],
            "--degrees does not apply to gentile-usps",
        ),
        (["reproduce", "gentile-table6", "--degrees", "2"], "--degrees does not apply"),
        (["reproduce", "gentile-table6", "--data-dir", "."], "--data-dir does not apply"),
        (["reproduce", "gentile-mnist", "--alphas", "1.5"], "alphas must lie in (0, 1]"),
        (["reproduce", "gentile-mnist", "--alphas", "x"], "not a comma-separated list"),
        (["reproduce", "gentile-mnist", "--degrees", "4,x"], "not a comma-separated list"),
        (["reproduce", "gentile-mnist", "--degrees", "0"], "degrees must be >= 1"),
        (["reproduce", "gentile-letter", "--epochs", "0"], "must be >= 1"),
        (["reproduce", "gentile-letter", "--permutations", "two"], "not an integer"),
        (["reproduce", "gentile-mnist", "--algorithms", "SVM"], "unknown algorithm(s) SVM"),
        (["reproduce", "gentile-mnist", "--b-settings", "2/alpha"], "unknown B setting(s)"),
        (["reproduce", "gentile-table6", "--algorithms", "ROMMA"], "--algorithms does not apply"),
        (["reproduce", "all", "--alphas", "0.9"], "--alphas do(es) not apply to 'all'"),
        (["reproduce", "all", "--plot", "x"], "--plot do(es) not apply to 'all'"),
        (["reproduce", "all", "--workers", "2", "--scheduler", "x"], "exclude each other"),
    ],
)
def test_kernel_option_errors_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in one_error_line(captured.err)


def test_reproduce_usps_with_options(shared_data, tmp_path, capsys):
    prefix = tmp_path / "usps"
    argv = ["reproduce", "gentile-usps", "--quick", "--permutations", "1", "--alphas", "0.9"]
    argv += ["--data-dir", str(shared_data), "--out", str(prefix)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(
        "# Gentile (JMLR 2001), Table 1 and Table 2: kernel classifiers"
    )
    assert "2 cells computed, 0 reused" in captured.err
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert doc["spec"]["config"]["permutations"] == 1
    rows = {c["algorithm"] for c in doc["spec"]["config"]["rows"]}
    assert rows == {"Perceptron", "ALMA2"}
    assert (
        "marginkit reproduce gentile-usps --quick --permutations 1 --alphas 0.9 --seed 0"
        in captured.out
    )


def test_reproduce_plot_path(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="figures need the 'plot' extra")
    png = tmp_path / "figs" / "art.png"
    png.parent.mkdir()
    out = tmp_path / "run"
    args = ["reproduce", "pumma-artificial", "--quick", "--out", str(out), "--plot", str(png)]
    assert main([*args, "--max-epochs", "20", "--quiet"]) == 0
    drawn = sorted(p.name for p in png.parent.iterdir())
    assert drawn == ["art-margin.png", "art-updates.png"]
    capsys.readouterr()
    assert main(["reproduce", "gentile-table6", "--quick", "--plot", str(png)]) == 2
    assert "--plot does not apply to gentile-table6" in one_error_line(capsys.readouterr().err)


@pytest.mark.slow  # a kernel reproduction on USPS
def test_kernel_experiment_draws_its_curves(shared_data, tmp_path):
    pytest.importorskip("matplotlib", reason="figures need the 'plot' extra")
    from marginkit.experiments import reproduce

    result = reproduce(
        "gentile-usps", tmp_path / "usps", quick=True, quiet=True, data_dir=shared_data
    )
    assert [p.name for p in result.figures] == ["usps-curves.png"]
    assert result.figures[0].read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # every reproduction's quick run
def test_reproduce_all_prints_the_scoreboard(tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["reproduce", "all", "--quick", "--data-dir", str(tmp_path), "--out", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out == (out / "scoreboard-quick.md").read_text()
    assert "All tables: cells within tolerance:" in captured.out
    assert "gentile-mnist: skipped, data missing" in captured.err
    assert (out / "gentile-table6-quick.json").exists()
    assert not (out / "gentile-mnist-quick.json").exists()


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["train", "data.svm", "--estimator", "alma", "--model", "m.skops"],
            "interrupted: nothing was saved, and training starts over when run again; "
            "pass --checkpoint PATH to make it resumable",
        ),
        (
            [
                "train",
                "data.svm",
                "--estimator",
                "alma",
                "--model",
                "m.skops",
                "--checkpoint",
                "run.ckpt",
            ],
            "interrupted: the same command resumes from the last checkpoint written to run.ckpt",
        ),
        (
            ["reproduce", "gentile-usps"],
            "interrupted (a reproduction resumes where it stopped when run again)",
        ),
    ],
)
def test_ctrl_c_says_what_can_resume(monkeypatch, capsys, argv, said):
    """A Ctrl-C says what the interrupted command left and how to go on: a training run
    without --checkpoint cannot resume, so it says how to make one that can."""
    import marginkit.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, f"_{argv[0]}", interrupted)
    assert main(argv) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(said)
