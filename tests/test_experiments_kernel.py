"""The kernel tables of Gentile (JMLR 2001): MNIST (Table 3), USPS (Table 1), Letter (Table 5)."""

import copy
import json
import math
import shutil

import numpy as np
import pytest

from marginkit import KernelALMAClassifier
from marginkit.datasets import load_usps
from marginkit.experiments import (
    MissingDataError,
    available_experiments,
    get_experiment,
    reproduce,
)
from marginkit.experiments import gentile_kernel as gk
from marginkit.experiments.runner import Cell, LastValueCache, run

TIMING_KEYS = ("seconds", "data_seconds", "train_seconds", "predict_seconds")
NAMES = ("gentile-mnist", "gentile-usps", "gentile-letter")


@pytest.fixture(scope="module")
def _quick_runs():
    return {}


@pytest.fixture
def quick(shared_data, tmp_path_factory, _quick_runs):
    """The quick run of an experiment on the real data, computed once per module."""

    def get(name):
        if name not in _quick_runs:
            prefix = tmp_path_factory.mktemp(name) / "quick"
            _quick_runs[name] = reproduce(
                name, prefix, quick=True, seed=0, quiet=True, data_dir=shared_data
            )
        return _quick_runs[name]

    return get


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _table_rows(markdown):
    """Rows of the first markdown table, as dicts of stripped cells."""
    lines = markdown.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| algorithm"))
    block = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        block.append([c.strip() for c in ln.strip("|").split("|")])
    header = block[0]
    return header, [dict(zip(header, cells, strict=True)) for cells in block[2:]]


# -- specs --------------------------------------------------------------------------------


def test_registry_holds_the_three_tables():
    assert set(NAMES) <= set(available_experiments())
    assert get_experiment("gentile-mnist") is gk.MNIST
    assert get_experiment("gentile-usps") is gk.USPS
    assert get_experiment("gentile-letter") is gk.LETTER
    assert gk.USPS.OPTIONS == ("permutations", "epochs", "alphas")
    assert gk.MNIST.OPTIONS == gk.LETTER.OPTIONS == gk.ALL_OPTIONS


@pytest.mark.parametrize(
    ("experiment", "n_cells", "n_epochs", "kernel"),
    [
        (gk.MNIST, 10 * 3, 3, ("poly", 1 / 255, 1.0, [4])),
        (gk.USPS, 10 * 2, 1, ("rbf", 1 / (2 * 3.5**2), 1.0, None)),
        (gk.LETTER, 10 * 2, 3, ("poly_rbf", 1 / 18, 1.0, [5])),
    ],
)
def test_full_spec(experiment, n_cells, n_epochs, kernel):
    spec = experiment.build_spec()
    config = spec.config
    assert len(spec.cells) == n_cells
    assert config["n_epochs"] == n_epochs and config["permutations"] == 10
    assert config["n_train"] is None and config["n_test"] is None
    k = config["kernel"]
    assert (k["kernel"], k["coef0"], config["degrees"]) == (kernel[0], kernel[2], kernel[3])
    assert k["gamma"] == pytest.approx(kernel[1])
    # permutation-major order: consecutive cells share the permuted training set
    perms = [c.params["permutation"] for c in spec.cells]
    assert perms == sorted(perms)
    for cell in spec.cells:
        q = cell.params
        assert q["permutation_seed"] == gk.permutation_seed(0, q["permutation"])
        assert q["B"] == pytest.approx(gk.B_SETTINGS[q["B_setting"]] / q["alpha"])
        assert q["C"] == pytest.approx(math.sqrt(2))
        assert cell.key == gk.cell_key(
            q["dataset"], q["permutation"], q["degree"], q["alpha"], q["B_setting"]
        )


def test_alpha_one_is_run_once_and_below_one_under_both_b():
    spec = gk.MNIST.build_spec()
    settings = {(c.params["alpha"], c.params["B_setting"]) for c in spec.cells}
    assert settings == {(1.0, "1/alpha"), (0.9, "1/alpha"), (0.9, "sqrt8/alpha")}


def test_cell_keys_and_seeds_are_stable():
    assert gk.cell_key("mnist", 3, 4, 0.9, "sqrt8/alpha") == (
        "mnist/perm=3/d=4/alpha=0.90/B=sqrt8/alpha"
    )
    assert gk.cell_key("usps", 0, None, 0.9, "1/alpha") == "usps/perm=0/rbf/alpha=0.90/B=1/alpha"
    assert [gk.permutation_seed(0, i) for i in range(2)] == [2968811710, 3964924996]
    assert gk.permutation_seed(1, 0) != gk.permutation_seed(0, 0)
    with pytest.raises(ValueError, match="must be >= 0"):
        gk.permutation_seed(-1, 0)


def test_options_override_the_grid():
    spec = gk.MNIST.build_spec(permutations=2, epochs=1, degrees=[4, 6], alphas=[0.8])
    config = spec.config
    assert (config["permutations"], config["n_epochs"]) == (2, 1)
    assert (config["degrees"], config["alphas"]) == ([4, 6], [0.8])
    assert len(spec.cells) == 2 * 2 * 1 * 2
    quick = gk.LETTER.build_spec(quick=True, permutations=1)
    assert quick.config["permutations"] == 1 and quick.config["n_epochs"] == 2
    assert (quick.config["n_train"], quick.config["n_test"]) == (3000, 2000)
    assert gk.USPS.build_spec(quick=True).config["n_epochs"] == 1  # never more than the table's
    assert gk.MNIST.command(spec.config) == (
        "marginkit reproduce gentile-mnist --permutations 2 --epochs 1 --degrees 4,6 "
        "--alphas 0.8 --seed 0"
    )


@pytest.mark.parametrize(
    ("experiment", "options", "message"),
    [
        (gk.USPS, {"degrees": [3]}, "degrees do not apply"),
        (gk.MNIST, {"alphas": [1.5]}, r"alphas must lie in \(0, 1\]"),
        (gk.MNIST, {"alphas": []}, "alphas must lie"),
        (gk.MNIST, {"degrees": [0]}, "degrees must be whole numbers"),
        (gk.MNIST, {"permutations": 0}, "permutations must be a whole number >= 1"),
        (gk.LETTER, {"epochs": 1.5}, "epochs must be a whole number"),
        (gk.MNIST, {"seed": -1}, "must be >= 0"),
    ],
)
def test_bad_options(experiment, options, message):
    with pytest.raises(ValueError, match=message):
        experiment.build_spec(**options)


def test_reproduce_rejects_options_that_do_not_apply(tmp_path):
    with pytest.raises(ValueError, match="does not take the option"):
        reproduce("gentile-usps", tmp_path / "u", degrees=[3])
    with pytest.raises(ValueError, match="does not take the option"):
        reproduce("gentile-table6", tmp_path / "t", permutations=2)
    with pytest.raises(ValueError, match="data_dir does not apply"):
        reproduce("gentile-table6", tmp_path / "t", data_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", NAMES)
def test_missing_data_fails_before_writing_anything(name, tmp_path):
    with pytest.raises(MissingDataError, match="not found") as info:
        reproduce(name, tmp_path / "out" / "run", quick=True, quiet=True, data_dir=tmp_path)
    assert isinstance(info.value, FileNotFoundError)
    assert str(tmp_path) in str(info.value)
    assert not (tmp_path / "out").exists()


# -- one cell -----------------------------------------------------------------------------


def test_epoch_records_equal_separate_fits(shared_data):
    """Each epoch's record (from the callback of one fit) is what a fit of that many epochs
    on the same permuted order gives, for every output."""
    spec = gk.USPS.build_spec(epochs=2, permutations=1)
    params = dict(spec.cells[0].params, n_train=400, n_test=300)
    cell = Cell("usps-small", params)
    data = load_usps(shared_data)
    result = gk.USPS.run_cell(cell, LastValueCache(), data=data)
    assert (result["n_train"], result["n_test"]) == (400, 300)
    assert [e["epoch"] for e in result["epochs"]] == [1, 2]

    X, y = gk.permuted(data[0], data[1], params["permutation_seed"], 400)
    X_test, y_test = data[2][:300], data[3][:300]
    for record in result["epochs"]:
        clf = KernelALMAClassifier(
            alpha=0.9,
            B=params["B"],
            kernel="rbf",
            gamma=params["gamma"],
            max_iter=record["epoch"],
            output="last",
        ).fit(X, y)
        assert record["corrections"] == clf.n_corrections_
        assert record["corrections_per_class"] == clf.n_corrections_per_class_.tolist()
        assert record["trials"] == clf.n_trials_ == 400 * record["epoch"]
        for output in gk.OUTPUTS:
            clf.set_params(output=output)
            mistakes = int(np.count_nonzero(clf.predict(X_test) != y_test))
            assert record["mistakes"][output] == mistakes
            assert record["err_pct"][output] == pytest.approx(100 * mistakes / 300)
    assert result["epochs"][1]["corrections"] >= result["epochs"][0]["corrections"]


def test_permuted_is_a_seeded_permutation():
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10)
    Xp, yp = gk.permuted(X, y, 7)
    assert sorted(yp.tolist()) == list(range(10)) and yp.tolist() != list(range(10))
    np.testing.assert_array_equal(Xp[:, 0], 2 * yp)
    np.testing.assert_array_equal(gk.permuted(X, y, 7, 4)[1], yp[:4])
    assert gk.data_fingerprint(X, y) == gk.data_fingerprint(X.copy(), y.copy())
    assert gk.data_fingerprint(X, y) != gk.data_fingerprint(X, y[::-1])


# -- quick runs on the real data -----------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_quick_run(name, quick):
    run = quick(name)
    doc = json.loads(run.json_path.read_text())
    assert doc == run.report.document
    assert run.markdown_path.read_text() == run.markdown
    config = doc["spec"]["config"]
    assert config["quick"] and config["permutations"] == 2
    assert set(doc["results"]) == {c["key"] for c in doc["spec"]["cells"]}
    assert run.report.computed == [c["key"] for c in doc["spec"]["cells"]]
    fingerprints = {r["data_sha256"] for r in doc["results"].values()}
    assert len(fingerprints) == 1
    for cell in doc["spec"]["cells"]:
        r = doc["results"][cell["key"]]
        assert (r["n_train"], r["n_test"]) == (3000, 2000)
        assert r["B"] == pytest.approx(cell["params"]["B"])
        assert len(r["epochs"]) == config["n_epochs"]
        previous = 0
        for e in r["epochs"]:
            assert e["corrections"] >= previous
            previous = e["corrections"]
            assert sum(e["corrections_per_class"]) == e["corrections"]
            assert e["trials"] == 3000 * e["epoch"]
            for output in gk.OUTPUTS:
                assert 0.0 <= e["err_pct"][output] < 50.0  # ten or 26 classes: far from chance
                assert e["predict_seconds"][output] >= 0
    assert run.markdown.startswith(f"# {get_experiment(name).TITLE}")
    assert "Quick run" in run.markdown and "Partial run" not in run.markdown


def test_quick_mnist_alpha_one_rows_and_b_settings(quick):
    header, rows = _table_rows(quick("gentile-mnist").markdown)
    assert header[:5] == ["algorithm", "B", "deg", "epoch", "output"]
    runs = {(r["algorithm"], r["B"]) for r in rows}
    assert runs == {
        ("ALMA2(1.0)", "any"),
        ("ALMA2(0.9)", "1/alpha"),
        ("ALMA2(0.9)", "sqrt8/alpha"),
    }
    assert len(rows) == 3 * 2 * 3  # runs x epochs x outputs
    assert all(r["runs"] == "2" for r in rows)


def _shown_published(markdown):
    shown = {}
    for r in _table_rows(markdown)[1]:
        for col in ("paper err %", "paper corr"):
            if r[col] != gk.NOT_STORED:
                shown[(r["algorithm"], r["B"], r["epoch"], r["output"], col)] = r[col]
    return shown


def test_published_values_appear_only_where_stored(quick):
    shown = _shown_published(quick("gentile-usps").markdown)
    expected = {}
    for b in ("1/alpha", "sqrt8/alpha"):
        expected[("ALMA2(0.9)", b, "1", "avg", "paper err %")] = "5.06"
        for output in gk.OUTPUTS:
            expected[("ALMA2(0.9)", b, "1", output, "paper corr")] = "2251"
    assert shown == expected

    shown = _shown_published(quick("gentile-letter").markdown)
    # epoch 3 (2.80%) is outside the quick run's two epochs; no correction count is stored
    assert shown == {
        ("ALMA2(0.8)", b, "1", "avg", "paper err %"): "3.60" for b in ("1/alpha", "sqrt8/alpha")
    }

    shown = _shown_published(quick("gentile-mnist").markdown)
    errors = {k: v for k, v in shown.items() if k[-1] == "paper err %"}
    assert errors == {
        ("ALMA2(1.0)", "any", "1", "last", "paper err %"): "2.52",
        ("ALMA2(1.0)", "any", "2", "last", "paper err %"): "2.01",
        ("ALMA2(1.0)", "any", "1", "avg", "paper err %"): "1.77",
        ("ALMA2(1.0)", "any", "2", "avg", "paper err %"): "1.52",
        **{("ALMA2(0.9)", b, "1", "last", "paper err %"): "2.10" for b in gk.B_SETTINGS},
        **{("ALMA2(0.9)", b, "2", "last", "paper err %"): "1.74" for b in gk.B_SETTINGS},
        **{("ALMA2(0.9)", b, "1", "avg", "paper err %"): "1.69" for b in gk.B_SETTINGS},
        **{("ALMA2(0.9)", b, "2", "avg", "paper err %"): "1.49" for b in gk.B_SETTINGS},
    }
    corrections = {(k[0], k[2]): v for k, v in shown.items() if k[-1] == "paper corr"}
    assert corrections == {
        ("ALMA2(1.0)", "1"): "7454",
        ("ALMA2(1.0)", "2"): "9658",
        ("ALMA2(0.9)", "1"): "9911",
        ("ALMA2(0.9)", "2"): "12711",
    }


# -- resumption ---------------------------------------------------------------------------


def test_complete_json_computes_nothing(quick, shared_data, tmp_path):
    first = quick("gentile-usps")
    shutil.copy(first.json_path, tmp_path / "again.json")
    before = (tmp_path / "again.json").read_bytes()
    again = reproduce(
        "gentile-usps", tmp_path / "again", quick=True, quiet=True, data_dir=shared_data
    )
    assert again.report.computed == [] and again.report.resumed
    assert (tmp_path / "again.json").read_bytes() == before
    assert again.markdown == first.markdown


def test_deleted_cell_is_the_only_one_recomputed(quick, shared_data, tmp_path):
    first = quick("gentile-usps")
    doc = json.loads(first.json_path.read_text())
    key = gk.cell_key("usps", 1, None, 0.9, "sqrt8/alpha")
    removed = doc["results"].pop(key)
    (tmp_path / "partial.json").write_text(json.dumps(doc))
    partial_md = gk.USPS.render(doc)
    assert "Partial run: 3 of 4 cells" in partial_md
    assert (
        next(
            r
            for r in _table_rows(partial_md)[1]
            if r["B"] == "sqrt8/alpha" and r["output"] == "avg"
        )["runs"]
        == "1"
    )

    again = reproduce(
        "gentile-usps", tmp_path / "partial", quick=True, quiet=True, data_dir=shared_data
    )
    assert again.report.computed == [key]
    assert _without_timings(again.report.document["results"][key]) == _without_timings(removed)
    assert _without_timings(again.report.document["results"]) == _without_timings(
        first.report.document["results"]
    )


def test_other_options_start_over(quick, tmp_path, caplog):
    shutil.copy(quick("gentile-usps").json_path, tmp_path / "run.json")
    spec = gk.USPS.build_spec(quick=True, permutations=1)
    with caplog.at_level("WARNING", logger="marginkit.experiments"):
        report = run(spec, lambda cell, cache: {"fake": 1}, tmp_path / "run.json", quiet=True)
    assert "spec" in caplog.text and "starting over" in caplog.text
    assert report.computed == [c.key for c in spec.cells] and not report.resumed
    assert (tmp_path / "run.json.bak").exists()


# -- published values and the comparison ---------------------------------------------------


def test_published_data_holds_exactly_the_listed_values():
    published = gk.load_published()
    lookup = gk.published_lookup(published)
    errors = {
        ("mnist", 1.0, 4, "last"): (2.52, 2.01, 1.86),
        ("mnist", 1.0, 4, "avg"): (1.77, 1.52, 1.47),
        ("mnist", 0.9, 4, "last"): (2.10, 1.74, 1.64),
        ("mnist", 0.9, 4, "avg"): (1.69, 1.49, 1.40),
        ("mnist", 0.9, 6, "avg"): (1.48, 1.32, 1.27),
        ("mnist", 0.8, 4, "avg"): (1.68, 1.44, 1.35),
    }
    corrections = {
        ("mnist", 1.0, 4): (7454, 9658, 10934),
        ("mnist", 0.9, 4): (9911, 12711, 14244),
        ("mnist", 0.9, 6): (11652, 13712, 14598),
        ("mnist", 0.8, 4): (12810, 16464, 18528),
    }
    expected = {}
    for (ds, alpha, d, output), values in errors.items():
        for epoch, v in enumerate(values, 1):
            expected[(ds, alpha, d, epoch, output, "test_error_pct")] = v
    for (ds, alpha, d), values in corrections.items():
        for epoch, v in enumerate(values, 1):
            expected[(ds, alpha, d, epoch, None, "corrections")] = v
    expected[("usps", 0.9, None, 1, "avg", "test_error_pct")] = 5.06
    expected[("usps", 0.9, None, 1, None, "corrections")] = 2251
    expected[("letter", 0.8, 5, 1, "avg", "test_error_pct")] = 3.60
    expected[("letter", 0.8, 5, 3, "avg", "test_error_pct")] = 2.80
    assert {k: c["value"] for k, c in lookup.items()} == expected
    tables = {"mnist": "Table 3", "usps": "Table 1", "letter": "Table 5"}
    for c in published["cells"]:
        assert c["table"] == tables[c["dataset"]]
        assert c["note"].startswith(c["table"] + ",")


def _fake_document(experiment, value):
    """A complete full-grid document whose every record is ``value(cell params, epoch)``."""
    spec = experiment.build_spec()
    results = {}
    for cell in spec.cells:
        epochs = []
        for epoch in range(1, spec.config["n_epochs"] + 1):
            err, corr = value(cell.params, epoch)
            epochs.append(
                {
                    "epoch": epoch,
                    "corrections": corr,
                    "n_support": corr,
                    "err_pct": err,
                    "train_seconds": 1.0,
                    "predict_seconds": dict.fromkeys(gk.OUTPUTS, 0.5),
                }
            )
        results[cell.key] = {"epochs": epochs, "data_sha256": "ab" * 32}
    return {
        "spec": spec.to_json(),
        "results": results,
        "versions": {"marginkit": "test"},
        "created": "then",
        "updated": "now",
    }


def test_comparison_is_computed_from_the_data():
    """1/alpha reproduces the published numbers exactly and 'voted' equals the published
    'avg' rows; sqrt(8)/alpha is far off: the sentences must say so."""
    pub = gk.published_lookup()

    def value(q, epoch):
        def published(output, metric):
            key = ("mnist", round(q["alpha"], 4), q["degree"], epoch, output, metric)
            return pub[key]["value"]

        off = q["B_setting"] == "sqrt8/alpha"
        last = published("last", "test_error_pct") + (1.0 if off else 0.0)
        avg_pub = published("avg", "test_error_pct") + (1.0 if off else 0.0)
        corr = published(None, "corrections") * (1.5 if off else 1.0)
        return {"last": last, "avg": avg_pub + 0.3, "voted": avg_pub}, corr

    doc = _fake_document(gk.MNIST, value)
    text = "\n".join(gk.compare(doc))
    assert "at alpha = 1 (B has no effect) 6 of 9 are within tolerance" in text  # not 'avg'
    assert "with B = 1/alpha, 6 of 9; with B = sqrt8/alpha, 0 of 9" in text
    assert "B = 1/alpha is closer to the published value for all 9 that differ." in text
    assert "our 'voted' output matches the published 'avg' rows better" in text
    assert "mean |difference| 0.63 points for 'avg', 0.33 for 'voted'" in text
    assert "'avg' closer in 0, 'voted' in 9" in text
    line = "ALMA2(0.9) d=4, epoch 1, corrections: published 9911; B = 1/alpha: 9911.0 (+0.0%, "
    assert (
        line + "within tolerance); B = sqrt8/alpha: 14866.5 (+50.0%); closer: B = 1/alpha." in text
    )
    # the full report renders and shows every stored value of the grid
    markdown = gk.MNIST.render(doc)
    assert "Partial run" not in markdown and "Quick run" not in markdown
    shown = _shown_published(markdown)
    assert len([k for k in shown if k[-1] == "paper err %"]) == 2 * 3 + 2 * 2 * 3
    assert "Regenerate: `marginkit reproduce gentile-mnist --seed 0`" in markdown


def test_unrun_published_values_are_reported_as_not_run():
    doc = _fake_document(gk.LETTER, lambda q, e: (dict.fromkeys(gk.OUTPUTS, 3.0), 100))
    doc = copy.deepcopy(doc)
    doc["results"] = {}
    text = "\n".join(gk.compare(doc))
    assert "not run yet" in text and "No published value in this grid has been run yet" in text
    markdown = gk.LETTER.render(doc)
    assert "Partial run: 0 of 20 cells" in markdown
    assert all(r["err %"] == gk.NOT_RUN for r in _table_rows(markdown)[1])


# -- full size ------------------------------------------------------------------------------


@pytest.mark.slow
def test_full_usps(shared_data, tmp_path):
    """Table 1 protocol, 10 permutations (about a minute)."""
    result = reproduce("gentile-usps", tmp_path / "usps", quiet=True, data_dir=shared_data)
    doc = result.report.document
    assert len(doc["results"]) == 20
    for r in doc["results"].values():
        assert (r["n_train"], r["n_test"]) == (7291, 2007)
        assert r["epochs"][0]["trials"] == 7291
    stats = gk.summarise(doc)[(0.9, "1/alpha", None, 1)]
    assert abs(stats["err"]["avg"][0] - 5.06) <= 0.15  # measured 4.95
    # the published 2251 corrections are not reproduced (13396 measured; see docs)
    assert stats["corr"][0] > 5 * 2251


@pytest.mark.slow
def test_full_letter(shared_data, tmp_path):
    """Table 5 protocol, 10 permutations, 3 epochs (several minutes)."""
    result = reproduce("gentile-letter", tmp_path / "letter", quiet=True, data_dir=shared_data)
    doc = result.report.document
    assert len(doc["results"]) == 20
    for r in doc["results"].values():
        assert (r["n_train"], r["n_test"]) == (16000, 4000)
        assert [e["trials"] for e in r["epochs"]] == [16000, 32000, 48000]
    stats = gk.summarise(doc)
    assert abs(stats[(0.8, "1/alpha", 5, 3)]["err"]["avg"][0] - 2.80) <= 0.3  # measured 2.94
    assert abs(stats[(0.8, "1/alpha", 5, 1)]["err"]["avg"][0] - 3.60) <= 0.6  # measured 3.99


@pytest.mark.slow
def test_full_mnist_one_permutation(shared_data, tmp_path):
    """Table 3 protocol on one permutation: ALMA2(1.0) and ALMA2(0.9), d = 4, 3 epochs."""
    result = reproduce(
        "gentile-mnist", tmp_path / "mnist", quiet=True, data_dir=shared_data, permutations=1
    )
    results = result.report.document["results"]
    assert len(results) == 3
    for r in results.values():
        assert (r["n_train"], r["n_test"]) == (60000, 10000)
    # with B = 1/alpha the published correction counts come out within 3% at every epoch;
    # B = sqrt(8)/alpha makes over 30% more
    published = {1.0: (7454, 9658, 10934), 0.9: (9911, 12711, 14244)}
    for alpha, counts in published.items():
        r = results[gk.cell_key("mnist", 0, 4, alpha, "1/alpha")]
        for e, count in zip(r["epochs"], counts, strict=True):
            assert abs(e["corrections"] - count) / count < 0.03
    r8 = results[gk.cell_key("mnist", 0, 4, 0.9, "sqrt8/alpha")]["epochs"][0]["corrections"]
    assert r8 > 1.3 * 9911
