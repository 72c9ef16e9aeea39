"""The PUMMA reproductions (Ishibashi, Hatano and Takeda, COLT 2008): Figures 3-4 and Table 1."""

import copy
import json
import math
import shutil
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from marginkit import PUMMAClassifier
from marginkit.cli import main
from marginkit.datasets import make_r_of_k
from marginkit.experiments import (
    MissingDataError,
    available_experiments,
    get_experiment,
    reproduce,
)
from marginkit.experiments import pumma_artificial as pa
from marginkit.experiments import pumma_real as pr
from marginkit.experiments.runner import LastValueCache

TIMING_KEYS = ("seconds", "data_seconds", "train_seconds", "solver_seconds")


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _table(markdown, first_header):
    """Rows of the markdown table whose first header is ``first_header``, as dicts."""
    lines = markdown.splitlines()
    start = next(
        i
        for i, ln in enumerate(lines)
        if ln.startswith("|") and ln.strip("|").split("|")[0].strip() == first_header
    )
    block = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        block.append([c.strip() for c in ln.strip("|").split("|")])
    header = block[0]
    return header, [dict(zip(header, cells, strict=True)) for cells in block[2:]]


def _have(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


needs_cvxpy = pytest.mark.skipif(not _have("cvxpy"), reason="cvxpy is not installed")


# -- registry and specs ---------------------------------------------------------------------


def test_registry_holds_both_experiments():
    assert {"pumma-artificial", "pumma-real"} <= set(available_experiments())
    assert get_experiment("pumma-artificial") is pa
    assert get_experiment("pumma-real") is pr
    assert pa.OPTIONS == ("max_epochs", "repeats")
    assert pr.OPTIONS == ("max_epochs", "datasets")
    assert pr.USES_DATA and not getattr(pa, "USES_DATA", False)


def test_artificial_full_spec():
    spec = pa.build_spec()
    config = spec.config
    assert (config["n_samples"], config["n_features"], config["k"]) == (1000, 100, 16)
    assert config["r"] == [1, 4, 8] and config["repeats"] == 5
    assert config["bias"] == {"1": 15, "4": 9, "8": 1}
    assert config["p"]["2"] == 2.0
    assert config["p"]["2ln(n)"] == pytest.approx(2 * math.log(100))
    assert config["delta"] == config["alpha"] == 0.1
    # per data set: exact + 4 algorithms at p = 2, exact + PUMMA + ALMA at p = 2 ln n
    assert len(spec.cells) == 3 * 5 * (5 + 3)
    romma = [c for c in spec.cells if c.params["algorithm"] in ("romma", "aromma")]
    assert romma and all(c.params["p"] == 2.0 for c in romma)
    # the cells of one data set are consecutive: each data set is generated once
    order = [pa.dataset_key(c.params["r"], c.params["repeat"]) for c in spec.cells]
    assert len([k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]) == 15
    for cell in spec.cells:
        q = cell.params
        assert q["data_seed"] == pa.data_seed(0, q["r"], q["repeat"])
        assert cell.key == pa.cell_key(q["r"], q["repeat"], q["p_label"], q["algorithm"])
    assert pa.cell_key(1, 0, "2ln(n)", "pumma") == "r=1/data=0/p=2ln(n)/pumma"


def test_artificial_options_and_errors():
    spec = pa.build_spec(quick=True, max_epochs=7, repeats=2)
    assert spec.config["max_epochs"] == 7 and spec.config["repeats"] == 2
    assert all(c.params["max_epochs"] == 7 for c in spec.cells)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="must be a whole number >= 1"):
            pa.build_spec(max_epochs=bad)
    with pytest.raises(ValueError, match="must be >= 0"):
        pa.build_spec(seed=-1)
    with pytest.raises(ValueError, match="2-norm algorithm"):
        pa.make_estimator("romma", 9.2)
    with pytest.raises(ValueError, match="unknown p setting"):
        pa.p_value("3", 100)
    assert pa.data_seed(1, 1, 0) != pa.data_seed(0, 1, 0)


def test_real_specs():
    full = pr.build_spec()
    assert full.config["datasets"] == list(pr.DATASETS)
    assert full.config["adult_rows"]["adult-full"] is None
    assert full.config["adult_rows"]["adult-1k"] == 1000
    assert (full.config["lam"], full.config["delta"]) == (1.0, 0.01)
    assert len(full.cells) == 8 * len(pr.METHODS) + len(pr.CODINGS)
    caps = {c.params["method"]: c.params["max_epochs"] for c in full.cells if "method" in c.params}
    assert caps["pumma"] == caps["aromma"] == 100000 and caps["alma"] == caps["romma"] == 1000
    quick = pr.build_spec(quick=True)
    assert quick.config["datasets"] == ["ionosphere", "house-votes", "adult-1k"]
    # a subset keeps the table's order; no house-votes, no coding cells
    sub = pr.build_spec(datasets=["adult-2k", "ionosphere"], max_epochs=3)
    assert sub.config["datasets"] == ["ionosphere", "adult-2k"]
    assert not [c for c in sub.cells if "coding" in c.params]
    capped = {c.params["max_epochs"] for c in sub.cells if c.params["method"] not in pr.CONVERGING}
    assert capped == {3}
    with pytest.raises(ValueError, match="unknown data set"):
        pr.build_spec(datasets=["adult-3k"])
    with pytest.raises(ValueError, match="at least one"):
        pr.build_spec(datasets=[])


# -- pieces ---------------------------------------------------------------------------------


def test_learning_curve_equals_fit_epoch_by_epoch():
    """partial_fit epoch by epoch (lam = 0) gives fit's updates, epochs and hyperplane."""
    X, y = make_r_of_k(200, r=1, random_state=3)
    curve = pa.learning_curve(
        PUMMAClassifier(shuffle=False, delta=0.1, lam=0.0, output="last"), X, y, 2.0, 500
    )
    clf = PUMMAClassifier(
        shuffle=False, delta=0.1, max_iter=500, tol=None, lam=0.0, output="last"
    ).fit(X, y)
    assert curve["converged"] and clf.converged_
    assert curve["epochs"] == np.max(clf.n_epochs_)
    assert curve["updates"] == clf.n_updates_
    assert curve["margin"] == pytest.approx(clf.margin_[0], rel=1e-6)
    c = curve["curve"]
    assert len(c["updates"]) == len(c["margin"]) == len(c["train_seconds"]) == curve["epochs"]
    assert c["updates"][-1] == c["updates"][-2]  # the last epoch made no update
    assert np.all(np.diff(c["updates"]) >= 0) and np.all(np.diff(c["train_seconds"]) >= 0)


def test_learning_curve_stops_at_the_cap():
    X, y = make_r_of_k(200, r=8, random_state=0)
    curve = pa.learning_curve(pa.make_estimator("aromma", 2.0), X, y, 2.0, 3)
    assert curve["epochs"] == 3 and not curve["converged"]
    assert curve["updates"] > 0


def test_exact_margin_reports_a_missing_solver(monkeypatch):
    def missing(*args, **kwargs):
        raise ImportError('max_margin needs cvxpy and clarabel: pip install "marginkit[margins]"')

    monkeypatch.setattr(pa, "max_margin", missing)
    X, y = make_r_of_k(50, r=1, random_state=0)
    result = pa.exact_margin(X, y, 2.0)
    assert result["available"] is False and set(result) == {"available", "reason"}
    assert "pip install" in result["reason"]
    monkeypatch.setattr(pr, "max_margin", missing)
    assert not pr.run_exact(X, y)["available"]


@needs_cvxpy
def test_exact_margin_retries_an_inaccurate_solve(monkeypatch):
    real = pa.max_margin
    calls = []

    def flaky(X, y, **kwargs):
        calls.append(kwargs.get("solver_options"))
        if len(calls) == 2:  # the first call is the warm-up
            raise RuntimeError("The solver CLARABEL stopped with status 'optimal_inaccurate'.")
        return real(X, y, **kwargs)

    monkeypatch.setattr(pa, "max_margin", flaky)
    X, y = make_r_of_k(60, r=4, random_state=1)
    result = pa.exact_margin(X, y, 2.0)
    assert calls[-1] == pa.LOOSE_TOLERANCES
    assert "optimal_inaccurate" in result["solver_note"]
    assert result["check_margin"] == pytest.approx(result["max_margin"], rel=1e-5)


def _brute_soft_margin(w, b, X, y, lam):
    m = y * (X @ w + b)
    s = np.linspace(0.0, math.sqrt(len(y) / lam / (w @ w)), 200001)
    phi = s**2 * (w @ w) + (np.maximum(0.0, 1.0 - np.outer(s, m)) ** 2).sum(axis=1) / lam
    return 1.0 / math.sqrt(phi.min())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_soft_margin_is_the_best_scale(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 3))
    w0 = rng.normal(size=3)
    y = np.where(X @ w0 + 0.3 + 0.5 * rng.normal(size=40) > 0, 1, -1)
    w, b = w0 + 0.2 * rng.normal(size=3), 0.3
    expected = _brute_soft_margin(w, b, X, y, 0.7)
    assert pr.soft_margin(w, b, X, y, 0.7) == pytest.approx(expected, rel=1e-6)
    assert pr.soft_margin(w, b, sp.csr_matrix(X), y, 0.7) == pytest.approx(expected, rel=1e-6)
    # a worse direction has a smaller margin
    assert pr.soft_margin(-w, b, X, y, 0.7) < expected
    assert pr.soft_margin(np.zeros(3), b, X, y, 0.7) is None


def test_soft_margin_when_every_example_is_on_the_wrong_side():
    X = np.array([[1.0], [2.0]])
    y = np.array([-1, -1])
    # phi increases from s = 0: the margin is that of w = 0 with unit slacks
    assert pr.soft_margin(np.array([1.0]), 0.0, X, y, 1.0) == pytest.approx(1 / math.sqrt(2))


@needs_cvxpy
def test_soft_margin_of_the_optimum_is_the_maximum_margin():
    X, y = make_r_of_k(80, r=4, random_state=0, noise=0.1)
    gamma, w, b = pr.max_margin(X, y, lam=1.0, return_coef=True)
    assert pr.soft_margin(w, b, X, y, 1.0) == pytest.approx(gamma, rel=1e-5)


def test_augment_adds_one_coordinate_per_example():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]]))
    A = pr.augment(X, 4.0)
    assert sp.issparse(A) and A.format == "csr" and A.shape == (3, 5)
    expected = np.array([[1, 0, 2, 0, 0], [0, 2, 0, 2, 0], [3, 0, 0, 0, 2]], dtype=float)
    assert np.array_equal(A.toarray(), expected)
    # inner products become x_i . x_j + lam [i = j]
    assert np.allclose((A @ A.T).toarray(), (X @ X.T).toarray() + 4.0 * np.eye(3))


def test_codings_of_the_votes():
    X = np.array([[1.0, -1.0, 0.0], [1.0, 1.0, -1.0]])
    y = np.array([1, -1])
    assert np.array_equal(pr.CODINGS["half"][1](X, y)[0], [[1, 0, 0.5], [1, 1, 0]])
    assert np.array_equal(pr.CODINGS["yes"][1](X, y)[0], [[1, 0, 0], [1, 1, 0]])
    assert np.array_equal(pr.CODINGS["pm4"][1](X, y)[0], 4 * X)
    assert np.array_equal(pr.CODINGS["missing-y"][1](X, y)[0], [[1, -1, 1], [1, 1, -1]])
    assert np.array_equal(pr.CODINGS["missing-n"][1](X, y)[0], [[1, -1, -1], [1, 1, -1]])
    assert pr.CODINGS["one-hot"][1](X, y)[0].shape == (2, 9)
    Xc, yc = pr.CODINGS["complete"][1](X, y)
    assert Xc.shape == (1, 3) and yc.tolist() == [-1]


def test_published_values_are_every_cell_of_table1():
    published = pr.load_published()
    values = {k: c["value"] for k, c in pr.published_lookup(published).items()}
    assert len(values) == 8 * 4 * 2  # data sets x methods x (margin, seconds)
    assert {k[0] for k in values} == set(pr.DATASETS)
    # the values typed by hand before the generated file, unchanged
    assert {
        k: values[k]
        for k in values
        if k[0] in ("ionosphere", "house-votes", "adult-1k")
        and k[1] in ("PUMMA", "SVMlight")
        and k[2] == "margin_x100"
    } == {
        ("ionosphere", "PUMMA", "margin_x100"): 10.49,
        ("ionosphere", "SVMlight", "margin_x100"): 10.55,
        ("house-votes", "PUMMA", "margin_x100"): 17.31,
        ("house-votes", "SVMlight", "margin_x100"): 17.42,
        ("adult-1k", "PUMMA", "margin_x100"): 4.50,
        ("adult-1k", "SVMlight", "margin_x100"): 4.95,
    }
    assert all(c["note"].startswith("Table 1") for c in published["cells"])


def test_scores_say_why_a_cell_is_not_compared():
    scores = pr.score(None)
    assert len(scores) == 64
    notes = {(s.cell["algorithm"], s.cell["metric"]): (s.status, s.note) for s in scores}
    assert notes[("MICRA", "margin_x100")][0] == "not compared"
    assert notes[("PUMMA", "seconds")] == ("not compared", "times measured on the paper's machine")
    assert notes[("PUMMA", "margin_x100")][0] == "not run"


# -- the quick artificial run ----------------------------------------------------------------


@pytest.fixture(scope="module")
def artificial(tmp_path_factory):
    """One quick pumma-artificial run, shared by the tests that only read it."""
    prefix = tmp_path_factory.mktemp("pumma-artificial") / "quick"
    return reproduce("pumma-artificial", prefix, quick=True, seed=0, quiet=True)


def test_artificial_quick_writes_json_and_markdown(artificial):
    doc = json.loads(artificial.json_path.read_text())
    assert doc == artificial.report.document
    assert doc["experiment"] == "pumma-artificial"
    assert artificial.markdown_path.read_text() == artificial.markdown
    assert set(doc["results"]) == {c["key"] for c in doc["spec"]["cells"]}
    assert len(doc["results"]) == 3 * 1 * 8
    md = artificial.markdown
    for heading in ("## Maximum margins", "## The paper's claim", "## Figures", "## Run"):
        assert heading in md
    header, rows = _table(md, "r/k")
    assert header[:4] == ["r/k", "bias", "p", "algorithm"]
    assert len(rows) == 3 * 6
    assert {r["algorithm"] for r in rows if r["p"] == "2ln(n)"} == {"PUMMA", "ALMA"}
    assert pa.NOT_RUN not in {r["conv"] for r in rows}
    assert "marginkit reproduce pumma-artificial --quick --seed 0" in md


def test_artificial_margins_never_exceed_the_maximum(artificial):
    """No hyperplane has a larger margin than the optimum; the solver's optimum checks out."""
    results = artificial.report.document["results"]
    for cell in artificial.report.document["spec"]["cells"]:
        q = cell["params"]
        if q["algorithm"] == "exact":
            r = results[cell["key"]]
            assert r["available"]
            assert r["check_margin"] == pytest.approx(r["max_margin"], rel=1e-5)
            continue
        gamma = results[pa.cell_key(q["r"], q["repeat"], q["p_label"], "exact")]["max_margin"]
        curve = results[cell["key"]]["curve"]
        margins = [m for m in curve["margin"] if m is not None]
        assert margins and max(margins) <= gamma * (1 + 1e-5)
        assert np.all(np.diff(curve["updates"]) >= 0)
        assert len(curve["updates"]) == results[cell["key"]]["epochs"] <= q["max_epochs"]


def test_artificial_converged_pumma_keeps_its_guarantee(artificial):
    """An epoch without update leaves PUMMA with margin >= (1 - delta) times the optimum."""
    summary = pa.summarise(artificial.report.document)
    converged = 0
    for (r, p_label, algorithm), s in summary.items():
        if algorithm != "pumma":
            continue
        if s["converged"] == s["runs"]:
            converged += 1
            assert s["fraction"] >= 1 - pa.DELTA - 1e-9, (r, p_label)
    assert converged >= 2  # r = 1 at both p in the quick run


def test_artificial_claim_at_r_1(artificial):
    """r = 1 (bias 15): PUMMA converges with far fewer updates than ALMA, and with fewer
    than aggressive ROMMA(delta), which converges too, to its own (1 - delta) guarantee.

    Plain (mistake-driven) ROMMA stops after fewer updates, but at a small margin: it
    looks for any separating hyperplane, not a large-margin one.
    """
    summary = pa.summarise(artificial.report.document)
    for p_label in pa.P_LABELS:
        pumma = summary[(1, p_label, "pumma")]
        assert pumma["converged"] == pumma["runs"] == 1
        assert pumma["updates"] * 5 < summary[(1, p_label, "alma")]["updates"]
    aromma = summary[(1, "2", "aromma")]
    assert summary[(1, "2", "pumma")]["updates"] < aromma["updates"]
    assert aromma["converged"] == aromma["runs"] == 1
    assert aromma["fraction"] >= 1 - pa.DELTA - 1e-9
    romma = summary[(1, "2", "romma")]
    assert romma["converged"] == 1 and romma["fraction"] < summary[(1, "2", "pumma")]["fraction"]
    text = "\n".join(pa.claim_sentences(artificial.report.document))
    assert "r = 1 (bias 15), p = 2: PUMMA" in text
    assert "fewer than ALMA" in text and "fewer than aggressive ROMMA" in text


def test_artificial_complete_json_computes_nothing(artificial, tmp_path):
    shutil.copy(artificial.json_path, tmp_path / "again.json")
    again = reproduce("pumma-artificial", tmp_path / "again", quick=True, quiet=True)
    assert again.report.computed == [] and again.report.resumed
    assert again.markdown == artificial.markdown


def test_artificial_deleted_cell_is_the_only_one_recomputed(artificial, tmp_path):
    doc = json.loads(artificial.json_path.read_text())
    key = pa.cell_key(8, 0, "2", "pumma")
    removed = doc["results"].pop(key)
    (tmp_path / "partial.json").write_text(json.dumps(doc))
    again = reproduce("pumma-artificial", tmp_path / "partial", quick=True, quiet=True)
    assert again.report.computed == [key]
    assert _without_timings(again.report.document["results"][key]) == _without_timings(removed)


def test_artificial_partial_document_renders(artificial):
    doc = copy.deepcopy(artificial.report.document)
    del doc["results"][pa.cell_key(4, 0, "2", "alma")]
    del doc["results"][pa.cell_key(8, 0, "2ln(n)", "exact")]
    text = pa.render(doc)
    assert "Partial run: 22 of 24 cells" in text
    rows = _table(text, "r/k")[1]
    alma = next(r for r in rows if r["r/k"] == "4/16" and r["algorithm"] == "ALMA")
    assert alma["updates"] == pa.NOT_RUN
    pumma = next(r for r in rows if r["r/k"] == "8/16" and r["p"] == "2ln(n)")
    assert pumma["margin/max"] == pa.NOT_RUN and pumma["updates"] != pa.NOT_RUN
    assert "ALMA not run yet" in text


def test_artificial_figures(artificial, tmp_path):
    pytest.importorskip("matplotlib")
    paths = pa.write_figures(artificial.report.document, tmp_path / "sub" / "fig.json")
    assert [p.name for p in paths] == ["fig-updates.png", "fig-margin.png"]
    for p in paths:
        data = p.read_bytes()
        assert data.startswith(b"\x89PNG") and 20_000 < len(data) < 400_000
    ax = pa.plot_updates(artificial.report.document, 1, "2")
    assert ax.get_legend_handles_labels()[1][:4] == ["PUMMA", "ALMA", "ROMMA", "aggressive ROMMA"]
    assert ax.get_xscale() == "log" and ax.get_title() == "r = 1 (bias 15), p = 2"
    labels = pa.plot_margin(artificial.report.document, 8, "2ln(n)").get_legend_handles_labels()[1]
    assert labels[:2] == ["PUMMA", "ALMA"]


def test_missing_matplotlib_is_said_clearly(artificial, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "marginkit\[plot\]"'):
        pa.write_figures(artificial.report.document, tmp_path / "fig")
    argv = ["reproduce", "pumma-artificial", "--quick", "--max-epochs", "2"]
    assert main([*argv, "--quiet", "--out", str(tmp_path / "run")]) == 0
    assert "warning: no figures drawn: the figures need matplotlib" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.png"))
    monkeypatch.setattr(pa.importlib.util, "find_spec", lambda name: None)
    assert "matplotlib is not installed: no figure can be drawn" in pa.render(
        artificial.report.document
    )


def test_mean_curve_pads_a_finished_run(artificial):
    doc = copy.deepcopy(artificial.report.document)
    doc["spec"]["config"]["repeats"] = 2
    first = doc["results"][pa.cell_key(1, 0, "2", "pumma")]
    short = copy.deepcopy(first)
    short["curve"] = {k: v[:3] for k, v in first["curve"].items()}
    short["epochs"] = 3
    doc["results"][pa.cell_key(1, 1, "2", "pumma")] = short
    epochs, mean, stops = pa.mean_curve(doc, 1, "2", "pumma", "updates")
    assert epochs[-1] == first["epochs"] and stops == [(first["epochs"], True), (3, True)]
    expected = (first["curve"]["updates"][-1] + first["curve"]["updates"][2]) / 2
    assert mean[-1] == pytest.approx(expected)


# -- the command line -----------------------------------------------------------------------


def test_cli_artificial_with_options_draws_the_figures(tmp_path, capsys):
    prefix = tmp_path / "out" / "art"
    argv = ["reproduce", "pumma-artificial", "--quick", "--max-epochs", "5", "--repeats", "1"]
    assert main([*argv, "--out", str(prefix)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("# Ishibashi, Hatano and Takeda (COLT 2008), Figures 3")
    assert "--max-epochs 5" in captured.out
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert doc["spec"]["config"]["max_epochs"] == 5
    if _have("matplotlib"):
        assert (tmp_path / "out" / "art-updates.png").exists()
        assert (tmp_path / "out" / "art-margin.png").exists()
        assert "art-updates.png" in captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["reproduce", "pumma-artificial", "--datasets", "ionosphere"], "--datasets does not"),
        (["reproduce", "pumma-real", "--repeats", "2"], "--repeats does not apply"),
        (["reproduce", "pumma-real", "--datasets", "adult-3k"], "unknown data set(s) adult-3k"),
        (["reproduce", "pumma-real", "--max-epochs", "0"], "must be >= 1"),
        (["reproduce", "pumma-artificial", "--data-dir", "."], "--data-dir does not apply"),
    ],
)
def test_cli_option_errors(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert message in captured.err


def test_cli_missing_data_is_one_line_and_exit_2(tmp_path, capsys):
    argv = ["reproduce", "pumma-real", "--quick", "--data-dir", str(tmp_path / "nowhere")]
    assert main([*argv, "--out", str(tmp_path / "out" / "run")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("marginkit: error: ") and "not found" in captured.err
    assert not (tmp_path / "out").exists()


def test_real_missing_data_fails_before_writing_anything(tmp_path):
    with pytest.raises(MissingDataError, match="not found"):
        reproduce("pumma-real", tmp_path / "out" / "run", quick=True, data_dir=tmp_path)
    assert not (tmp_path / "out").exists()


# -- the quick real run ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def _real_runs():
    return {}


@pytest.fixture
def real(shared_data, tmp_path_factory, _real_runs):
    """The quick pumma-real run on the real data, computed once per module."""
    if "quick" not in _real_runs:
        prefix = tmp_path_factory.mktemp("pumma-real") / "quick"
        _real_runs["quick"] = reproduce(
            "pumma-real", prefix, quick=True, quiet=True, data_dir=shared_data
        )
    return _real_runs["quick"]


@pytest.mark.slow  # the real-data reproduction's quick run: about 35 s
def test_real_quick_writes_json_and_markdown(real):
    doc = json.loads(real.json_path.read_text())
    assert doc == real.report.document
    assert set(doc["results"]) == {c["key"] for c in doc["spec"]["cells"]}
    assert len(doc["results"]) == 3 * len(pr.METHODS) + len(pr.CODINGS)
    md = real.markdown
    header, rows = _table(md, "data set")
    assert header[-2:] == ["paper PUMMA", "paper SVMlight"]
    published = {r["data set"]: (r["paper PUMMA"], r["paper SVMlight"]) for r in rows}
    assert published == {
        "ionosphere": ("10.49", "10.55"),
        "house-votes": ("17.31", "17.42"),
        "adult-1k": ("4.50", "4.95"),
    }
    assert "**PASS**: PUMMA's margin at least 0.99 times the exact optimum" in md
    assert "adult-full PUMMA under 60 s: not run." in md
    # 4.50 / 4.95 published: below what a converged PUMMA guarantees
    assert "The published pair itself has PUMMA / SVMlight = 0.909" in md
    assert md.count("The published pair itself") == 1
    _, codings = _table(md, "coding")
    assert len(codings) == len(pr.CODINGS)
    sizes = {r["data set"]: r["n"] for r in _table(md.split("## Data\n")[1], "data set")[1]}
    assert sizes == {"ionosphere": "351", "house-votes": "435", "adult-1k": "1000"}


@pytest.mark.slow  # the real-data quick run (fixture real)
def test_real_invariants(real):
    """Every margin is at most the optimum; PUMMA keeps its guarantee; LinearSVC hits it."""
    results = real.report.document["results"]
    for dataset in ("ionosphere", "house-votes", "adult-1k"):
        exact = results[pr.cell_key(dataset, "exact")]
        gamma = exact["margin"]
        assert exact["check_margin"] == pytest.approx(gamma, rel=1e-5)
        for method in pr.METHODS:
            if method == "exact":
                continue
            r = results[pr.cell_key(dataset, method)]
            assert r["wb_margin"] <= gamma * (1 + 1e-6), (dataset, method)
            if r["margin"] is not None:
                assert r["margin"] <= gamma * (1 + 1e-6), (dataset, method)
        pumma = results[pr.cell_key(dataset, "pumma")]
        assert pumma["converged"] and pumma["conflicts"] == 0
        assert pumma["margin"] >= (1 - pr.DELTA) * gamma
        # its own slack is no better than the best slack for its (w, b)
        assert pumma["margin"] <= pumma["wb_margin"] * (1 + 1e-9)
        svc = results[pr.cell_key(dataset, "linearsvc")]
        assert svc["converged"] and svc["margin"] == pytest.approx(gamma, rel=1e-3)
        romma = results[pr.cell_key(dataset, "romma")]
        assert romma["converged"] and romma["margin"] > 0  # separates the augmented data


@pytest.mark.slow  # the real-data quick run (fixture real)
def test_real_votes_coded_4_times_larger_give_the_published_margins(real):
    """Scaled by 4, the +-1 coding gives both published house-votes margins to 2 decimals."""
    r = real.report.document["results"][pr.coding_key("pm4")]
    assert r["pumma"]["converged"]
    assert f"{100 * r['exact']['margin']:.2f}" == "17.42"
    assert f"{100 * r['pumma']['margin']:.2f}" == "17.31"
    loader = real.report.document["results"][pr.coding_key("pm1")]
    assert loader["exact"]["margin"] == pytest.approx(
        real.report.document["results"][pr.cell_key("house-votes", "exact")]["margin"]
    )


@pytest.mark.slow  # the real-data quick run (fixture real)
def test_real_checks_are_computed_from_the_results(real):
    doc = copy.deepcopy(real.report.document)
    assert pr.checks(doc)["within_ok"] is True
    doc["results"][pr.cell_key("adult-1k", "pumma")]["margin"] *= 0.98
    doc["results"][pr.cell_key("adult-full", "pumma")] = {"train_seconds": 75.0}
    c = pr.checks(doc)
    assert c["within_ok"] is False and c["time_ok"] is False
    text = "\n".join(pr._check_lines(c))
    assert "**FAIL**: PUMMA's margin" in text and "(lowest: adult-1k" in text
    assert "**FAIL**: adult-full PUMMA trained in 75.0 s" in text


@pytest.mark.slow  # the real-data quick run (fixture real)
def test_real_complete_json_computes_nothing(real, shared_data, tmp_path):
    shutil.copy(real.json_path, tmp_path / "again.json")
    again = reproduce(
        "pumma-real", tmp_path / "again", quick=True, quiet=True, data_dir=shared_data
    )
    assert again.report.computed == [] and again.markdown == real.markdown


@pytest.mark.slow  # the real-data quick run (fixture real)
def test_real_baseline_cell_is_deterministic(real, shared_data):
    """Recomputing one cell gives the same results (no randomness anywhere)."""
    data = pr.load_data(shared_data)
    for key in (pr.cell_key("house-votes", "aromma"), pr.coding_key("half")):
        cell = next(c for c in pr.build_spec(quick=True).cells if c.key == key)
        again = pr.run_cell(cell, LastValueCache(), data=data)
        stored = real.report.document["results"][key]
        assert _without_timings(json.loads(json.dumps(again))) == _without_timings(
            {k: v for k, v in stored.items() if k != "seconds"}
        )


def test_real_adult_has_32_bit_indices(shared_data):
    data = pr.load_data(shared_data)
    X, y = pr.dataset_arrays(data, "adult-full")
    assert X.shape == (32561, 123) and X.indices.dtype == np.int32
    X1, y1 = pr.dataset_arrays(data, "adult-1k")
    assert X1.shape == (1000, 123) and np.array_equal(y1, y[:1000])


# -- full size ------------------------------------------------------------------------------


@pytest.mark.slow
def test_full_artificial(tmp_path):
    """The full run (a few minutes): PUMMA's guarantee and the claim at r = 1."""
    result = reproduce("pumma-artificial", tmp_path / "full", quiet=True)
    summary = pa.summarise(result.report.document)
    for p_label in pa.P_LABELS:
        pumma = summary[(1, p_label, "pumma")]
        assert pumma["converged"] == pumma["runs"] == 5
        assert pumma["fraction"] >= 1 - pa.DELTA
        assert pumma["updates"] < summary[(1, p_label, "alma")]["updates"]
    assert summary[(1, "2", "pumma")]["updates"] < summary[(1, "2", "aromma")]["updates"]


@pytest.mark.slow
def test_full_real(shared_data, tmp_path):
    """The full Table 1 run (several minutes): both checks of the report pass."""
    result = reproduce("pumma-real", tmp_path / "full", quiet=True, data_dir=shared_data)
    c = pr.checks(result.report.document)
    assert c["within_ok"] is True and all(conv for _, conv in c["within"].values())
    assert c["time_ok"] is True
    assert len(result.report.document["results"]) == len(pr.build_spec().cells)
