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
    ALL,
    MissingDataError,
    available_experiments,
    get_experiment,
    published,
    reproduce,
    reproduce_all,
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
    assert "degrees" not in gk.USPS.OPTIONS
    assert gk.MNIST.OPTIONS == gk.LETTER.OPTIONS == gk.ALL_OPTIONS


def _names(rows):
    return [(r.name, r.degree, r.sigma) for r in rows]


def test_rows_are_those_the_tables_print():
    assert _names(gk.MNIST.published_rows()) == [
        ("Perceptron", 4, None),
        ("ROMMA", 4, None),
        ("agg-ROMMA", 4, None),
        ("ALMA2(1.0)", 4, None),
        ("ALMA2(1.0)", 5, None),
        ("ALMA2(1.0)", 6, None),
        ("ALMA2(0.9)", 4, None),
        ("ALMA2(0.9)", 5, None),
        ("ALMA2(0.9)", 6, None),
        ("ALMA2(0.8)", 4, None),
    ]
    assert _names(gk.USPS.published_rows()) == [
        ("Perceptron", None, 3.5),
        ("ALMA2(1.0)", None, 3.5),
        ("ALMA2(0.95)", None, 3.5),
        ("ALMA2(0.9)", None, 3.5),
    ]
    # the Perceptron's best sigma differs from ALMA_2's (section 4.3)
    assert _names(gk.LETTER.published_rows()) == [
        ("Perceptron", 5, 4.0),
        ("ALMA2(1.0)", 5, 3.0),
        ("ALMA2(0.9)", 5, 3.0),
        ("ALMA2(0.8)", 5, 3.0),
    ]
    assert {r.B_setting for r in gk.MNIST.published_rows() if r.algorithm == "ALMA2"} == {
        "1/alpha"
    }


@pytest.mark.parametrize(
    ("experiment", "n_rows", "kernel"),
    [
        (gk.MNIST, 10, ("poly", 1 / 255)),
        (gk.USPS, 4, ("rbf", 1 / (2 * 3.5**2))),
        (gk.LETTER, 4, ("poly_rbf", 1 / 18)),
    ],
)
def test_full_spec(experiment, n_rows, kernel):
    spec = experiment.build_spec()
    config = spec.config
    assert len(spec.cells) == 10 * n_rows
    assert config["n_epochs"] == 3 and config["permutations"] == 10
    assert config["n_train"] is None and config["n_test"] is None
    assert config["kernel"]["kernel"] == kernel[0]
    # permutation-major order: consecutive cells share the permuted training set
    perms = [c.params["permutation"] for c in spec.cells]
    assert perms == sorted(perms)
    for cell in spec.cells:
        q = cell.params
        assert q["permutation_seed"] == gk.permutation_seed(0, q["permutation"])
        if q["sigma"] is None:
            assert q["gamma"] == pytest.approx(kernel[1])
        else:
            assert q["gamma"] == pytest.approx(1 / (2 * q["sigma"] ** 2))
        if q["algorithm"] == "ALMA2":
            assert q["B"] == pytest.approx(1 / q["alpha"])
            assert q["C"] == pytest.approx(math.sqrt(2))
        else:
            assert q["alpha"] is q["B"] is q["C"] is None
        row = gk.Row(q["algorithm"], q["alpha"], q["B_setting"], q["degree"], q["sigma"])
        assert cell.key == gk.cell_key(q["dataset"], q["permutation"], row)
        assert type(gk.make_estimator(q)).__name__.startswith("Kernel")


def test_b_settings_double_only_alpha_below_one():
    spec = gk.MNIST.build_spec(b_settings=["1/alpha", "sqrt8/alpha"], degrees=[4])
    settings = {
        (c.params["alpha"], c.params["B_setting"])
        for c in spec.cells
        if c.params["algorithm"] == "ALMA2"
    }
    assert settings == {
        (1.0, "1/alpha"),
        (0.9, "1/alpha"),
        (0.9, "sqrt8/alpha"),
        (0.8, "1/alpha"),
        (0.8, "sqrt8/alpha"),
    }


def test_cell_keys_and_seeds_are_stable():
    row = gk.Row("ALMA2", 0.9, "sqrt8/alpha", 4, None)
    assert gk.cell_key("mnist", 3, row) == "mnist/perm=3/d=4/alpha=0.90/B=sqrt8/alpha"
    row = gk.Row("Perceptron", None, None, 5, 4.0)
    assert gk.cell_key("letter", 0, row) == "letter/perm=0/d=5/sigma=4/Perceptron"
    assert gk.cell_key("usps", 1, gk.Row("agg-ROMMA", sigma=3.5)) == (
        "usps/perm=1/rbf/sigma=3.5/agg-ROMMA"
    )
    assert [gk.permutation_seed(0, i) for i in range(2)] == [2968811710, 3964924996]
    assert gk.permutation_seed(1, 0) != gk.permutation_seed(0, 0)
    with pytest.raises(ValueError, match="must be >= 0"):
        gk.permutation_seed(-1, 0)


def test_options_override_the_grid():
    spec = gk.MNIST.build_spec(
        permutations=2, epochs=1, degrees=[4, 6], alphas=[0.8], algorithms=["ALMA2", "ROMMA"]
    )
    config = spec.config
    assert (config["permutations"], config["n_epochs"]) == (2, 1)
    assert _names(gk.config_rows(config)) == [
        ("ROMMA", 4, None),
        ("ROMMA", 6, None),
        ("ALMA2(0.8)", 4, None),
        ("ALMA2(0.8)", 6, None),
    ]
    assert len(spec.cells) == 2 * 4
    assert gk.MNIST.command(spec.config) == (
        "marginkit reproduce gentile-mnist --permutations 2 --epochs 1 --algorithms ROMMA,ALMA2 "
        "--degrees 4,6 --alphas 0.8 --seed 0"
    )
    quick = gk.LETTER.build_spec(quick=True, permutations=1)
    assert quick.config["permutations"] == 1 and quick.config["n_epochs"] == 2
    assert (quick.config["n_train"], quick.config["n_test"]) == (3000, 2000)
    # the quick MNIST grid: every algorithm, the smallest degree
    quick = gk.MNIST.build_spec(quick=True)
    assert {r.degree for r in gk.config_rows(quick.config)} == {4}
    assert gk.MNIST.command(quick.config) == "marginkit reproduce gentile-mnist --quick --seed 0"


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
        (gk.MNIST, {"algorithms": ["SVM"]}, "algorithms must be some of"),
        (gk.MNIST, {"algorithms": []}, "algorithms must be some of"),
        (gk.USPS, {"b_settings": ["2/alpha"]}, "B settings must be some of"),
    ],
)
def test_bad_options(experiment, options, message):
    with pytest.raises(ValueError, match=message):
        experiment.build_spec(**options)


def test_an_unknown_algorithm_has_no_estimator():
    with pytest.raises(ValueError, match="unknown algorithm 'SVM'"):
        gk.make_estimator(
            {
                "algorithm": "SVM",
                "n_epochs": 1,
                "kernel": "rbf",
                "gamma": 1.0,
                "degree": None,
                "coef0": 1.0,
            }
        )


def test_reproduce_rejects_options_that_do_not_apply(tmp_path):
    with pytest.raises(ValueError, match="does not take the option"):
        reproduce("gentile-usps", tmp_path / "u", degrees=[3])
    with pytest.raises(ValueError, match="does not take the option"):
        reproduce("gentile-table6", tmp_path / "t", degrees=[2])
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
    spec = gk.USPS.build_spec(epochs=2, permutations=1, algorithms=["ALMA2"], alphas=[0.9])
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
            shuffle=False,
            fit_intercept=False,  # the paper's, as the experiment's
            alpha=0.9,
            B=params["B"],
            kernel="rbf",
            gamma=params["gamma"],
            max_iter=record["epoch"],
            tol=None,
            output="last",
        ).fit(X, y)
        assert record["corrections"] == clf.n_corrections_
        assert record["corrections_per_class"] == clf.n_corrections_per_class_.tolist()
        assert record["support_per_class"] == clf.n_support_.tolist()
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


@pytest.mark.slow  # 10 to 40 s each on 2 cores
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
        assert len(r["epochs"]) == config["n_epochs"]
        previous = 0
        for e in r["epochs"]:
            assert e["corrections"] >= previous
            previous = e["corrections"]
            assert sum(e["corrections_per_class"]) == e["corrections"]
            # an example counts once per problem however often it is corrected
            assert all(
                s <= c
                for s, c in zip(e["support_per_class"], e["corrections_per_class"], strict=True)
            )
            assert e["trials"] == 3000 * e["epoch"]
            for output in gk.OUTPUTS:
                assert 0.0 <= e["err_pct"][output] < 50.0  # ten or 26 classes: far from chance
                assert e["predict_seconds"][output] >= 0
        first = r["epochs"][0]
        assert first["support_per_class"] == first["corrections_per_class"]  # one epoch
    assert run.markdown.startswith(f"# {get_experiment(name).TITLE}")
    assert "Quick run" in run.markdown and "Partial run" not in run.markdown
    assert "## Every published cell" in run.markdown


def test_quick_mnist_runs_every_algorithm(quick):
    header, rows = _table_rows(quick("gentile-mnist").markdown)
    assert header[:6] == ["algorithm", "B", "deg", "sigma", "epoch", "output"]
    assert [r["algorithm"] for r in rows[::6]] == [
        "Perceptron", "ROMMA", "agg-ROMMA", "ALMA2(1.0)", "ALMA2(0.9)", "ALMA2(0.8)"
    ]  # fmt: skip
    assert len(rows) == 6 * 2 * 3  # rows x epochs x outputs
    assert all(r["runs"] == "2" for r in rows)


def test_published_values_are_shown_as_printed(quick):
    """The 'paper' columns hold the printed value of the main table's cell, 'n/p' where
    it prints none (the voted output of ALMA_2, ROMMA's averaged rows)."""
    _, rows = _table_rows(quick("gentile-mnist").markdown)
    shown = {
        (r["algorithm"], r["epoch"], r["output"]): (r["paper err %"], r["paper corr"])
        for r in rows
    }
    assert shown[("ALMA2(1.0)", "1", "last")] == ("2.52", "7454")
    assert shown[("ALMA2(1.0)", "2", "avg")] == ("1.52", "9658")
    assert shown[("ALMA2(1.0)", "1", "voted")] == (gk.NOT_PUBLISHED, "7454")
    assert shown[("Perceptron", "1", "voted")] == ("2.23", "7901")
    assert shown[("ROMMA", "1", "avg")][0] == gk.NOT_PUBLISHED
    _, rows = _table_rows(quick("gentile-letter").markdown)
    perceptron = next(r for r in rows if r["algorithm"] == "Perceptron")
    assert perceptron["sigma"] == "4"


def test_scores_cover_every_published_cell(quick):
    doc = quick("gentile-usps").report.document
    scores = gk.USPS.score(doc)
    assert len(scores) == 48 + 190
    by_status = {}
    for s in scores:
        by_status.setdefault(s.status, []).append(s)
    # the quick run has two epochs: the third epoch's cells are not run
    assert {s.note for s in by_status["not run"]} == {"epoch 3 not run"}
    assert len(by_status["not compared"]) == 10  # the SVM's support vectors, quoted
    for s in by_status.get("within", []) + by_status.get("outside", []):
        assert s.runs == 2 and s.cell["epochs"] <= 2
        assert (abs(s.mean - s.cell["value"]) <= s.tolerance + 1e-9) == (s.status == "within")
    assert gk.USPS.score(None)[0].status == "not run"


# -- resumption ---------------------------------------------------------------------------


# the quick USPS run (10 s on 2 cores) is for make test-all: make test resumes the
# runner's documents in tests/test_experiments.py (Table 6) and runs the kernel cells
# in test_epoch_records_equal_separate_fits
@pytest.mark.slow
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


@pytest.mark.slow  # the quick USPS run, as above
def test_deleted_cell_is_the_only_one_recomputed(quick, shared_data, tmp_path):
    first = quick("gentile-usps")
    doc = json.loads(first.json_path.read_text())
    key = gk.cell_key("usps", 1, gk.Row("ALMA2", 0.9, "1/alpha", None, 3.5))
    removed = doc["results"].pop(key)
    (tmp_path / "partial.json").write_text(json.dumps(doc))
    partial_md = gk.USPS.render(doc)
    assert "Partial run: 7 of 8 cells" in partial_md
    assert (
        next(
            r
            for r in _table_rows(partial_md)[1]
            if r["algorithm"] == "ALMA2(0.9)" and r["output"] == "avg"
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


def test_other_options_start_over(tmp_path, caplog):
    """The quick run's document (its cells' values faked, not computed), run again with
    another option: started over."""
    quick = gk.USPS.build_spec(quick=True)
    run(quick, lambda cell, cache: {"fake": 0}, tmp_path / "run.json", quiet=True)
    spec = gk.USPS.build_spec(quick=True, permutations=1)
    with caplog.at_level("WARNING", logger="marginkit.experiments"):
        report = run(spec, lambda cell, cache: {"fake": 1}, tmp_path / "run.json", quiet=True)
    assert "spec" in caplog.text and "starting over" in caplog.text
    assert report.computed == [c.key for c in spec.cells] and not report.resumed
    assert (tmp_path / "run.json.bak").exists()


# -- the comparison --------------------------------------------------------------------------


def _fake_document(experiment, value, **options):
    """A complete document whose every record is ``value(cell params, epoch)``."""
    spec = experiment.build_spec(**options)
    results = {}
    for cell in spec.cells:
        epochs = []
        for epoch in range(1, spec.config["n_epochs"] + 1):
            err, corr = value(cell.params, epoch)
            epochs.append(
                {
                    "epoch": epoch,
                    "corrections": corr,
                    "corrections_per_class": [corr / 10] * 10,
                    "support_per_class": [corr / 10] * 10,
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


def _paper(q, epoch, output, metric):
    cells = [
        c
        for c in published.cells(paper="gentile2001_jmlr", table="Table 3", metric=metric)
        if c["algorithm"] == q["algorithm"]
        and c.get("alpha") == q["alpha"]
        and c["d"] == q["degree"]
        and c["epochs"] == epoch
        and (output is None or c["output"] == output)
    ]
    return cells[0]["value"] if cells else 3.0


def test_comparison_is_computed_from_the_data():
    """B = 1/alpha reproduces the published Table 3 exactly and 'voted' equals the
    published averaged rows; sqrt(8)/alpha is far off: the report must say so."""

    def value(q, epoch):
        off = q["B_setting"] == "sqrt8/alpha"
        last = _paper(q, epoch, "last", "test_error_percent") + (1.0 if off else 0.0)
        second = _paper(q, epoch, "avg", "test_error_percent")
        if q["algorithm"] == "Perceptron":
            second = _paper(q, epoch, "voted", "test_error_percent")
        second += 1.0 if off else 0.0
        corr = _paper(q, epoch, None, "corrections") * (1.5 if off else 1.0)
        return {"last": last, "avg": second + 0.3, "voted": second}, corr

    doc = _fake_document(gk.MNIST, value, b_settings=["1/alpha", "sqrt8/alpha"])
    scores = gk.MNIST.score(doc)
    table3 = [s for s in scores if s.cell["table"] == "Table 3"]
    # every cell but the ALMA_2 'avg' errors (ours 0.3 above: no sd, 0.09 spread) is within
    outside = [s for s in table3 if s.status == "outside"]
    assert {(s.cell["algorithm"], s.cell["output"], s.cell["metric"]) for s in outside} == {
        ("ALMA2", "avg", "test_error_percent")
    }
    assert len(outside) == 7 * 3
    assert sum(s.status == "within" for s in table3) == 108 - 21
    markdown = gk.MNIST.render(doc)
    assert "Partial run" not in markdown and "Quick run" not in markdown
    assert (
        "B = 1/alpha is closer for" in markdown and "B = sqrt8/alpha is closer for 0" in markdown
    )
    assert "mean |difference| 0.30 points for our 'avg' and 0.00 for our 'voted'" in markdown
    assert "Regenerate: `marginkit reproduce gentile-mnist --b-settings" not in markdown
    assert "--b-settings 1/alpha,sqrt8/alpha --seed 0`" in markdown


def test_unrun_cells_are_reported_as_not_run():
    doc = _fake_document(gk.LETTER, lambda q, e: (dict.fromkeys(gk.OUTPUTS, 3.0), 100))
    doc = copy.deepcopy(doc)
    doc["results"] = {}
    markdown = gk.LETTER.render(doc)
    assert "Partial run: 0 of 40 cells" in markdown
    assert all(r["err %"] == gk.NOT_RUN for r in _table_rows(markdown)[1])
    assert "cells within tolerance: 0 of 48 (48 not run)" in markdown


@pytest.mark.slow  # every experiment's quick run: about 1.5 minutes on 2 cores
def test_reproduce_all_scores_every_published_cell(shared_data, tmp_path):
    board = reproduce_all(tmp_path, quick=True, quiet=True, data_dir=shared_data)
    assert len(board.scores) == 816  # the 810 table cells and six counts of the text
    assert set(board.reproductions) == set(ALL) and not board.missing
    assert board.markdown_path == tmp_path / "scoreboard-quick.md"
    text = board.markdown_path.read_text()
    assert text == board.markdown and "Quick run" in text
    assert "All tables: cells within tolerance:" in text
    for title in ("Gentile (JMLR 2001), Table 4", "Gentile (NIPS 2000), Table 1"):
        assert f"## {title}: cells within tolerance:" in text
    # resumed: nothing is computed again, the scores are the same
    again = reproduce_all(tmp_path, quick=True, quiet=True, data_dir=shared_data)
    assert all(not r.report.computed for r in again.reproductions.values())
    assert [s.status for s in again.scores] == [s.status for s in board.scores]


@pytest.mark.slow  # every reproduction's quick run on the data present
def test_reproduce_all_marks_the_cells_of_missing_data(tmp_path):
    board = reproduce_all(tmp_path / "out", quick=True, quiet=True, data_dir=tmp_path)
    assert set(board.missing) == {"pumma-real", *NAMES}
    usps = [s for s in board.scores if s.cell["dataset"] == "USPS"]
    assert all(s.status in ("not run", "not compared") for s in usps)
    assert any(s.note.startswith("data missing:") and "zip.train.gz" in s.note for s in usps)
    assert "gentile-usps: not run, data missing" in board.markdown


# -- full size ------------------------------------------------------------------------------


@pytest.mark.slow
def test_full_usps_alma(shared_data, tmp_path):
    """Table 1 protocol, ALMA2(0.9), 10 permutations, one epoch (about a minute)."""
    result = reproduce(
        "gentile-usps", tmp_path / "usps", quiet=True, data_dir=shared_data,
        algorithms=["ALMA2"], alphas=[0.9], epochs=1,
    )  # fmt: skip
    doc = result.report.document
    assert len(doc["results"]) == 10
    for r in doc["results"].values():
        assert (r["n_train"], r["n_test"]) == (7291, 2007)
        assert r["epochs"][0]["trials"] == 7291
    stats = gk.summarise(doc)[(gk.Row("ALMA2", 0.9, "1/alpha", None, 3.5), 1)]
    assert abs(stats["err"]["avg"][0] - 5.06) <= 0.15  # measured 4.95
    # the published 2251 corrections are not reproduced (13396 measured; see docs)
    assert stats["corr"][0] > 5 * 2251


@pytest.mark.slow
def test_full_letter_alma(shared_data, tmp_path):
    """Table 5 protocol, ALMA2(0.8), 10 permutations, 3 epochs (several minutes)."""
    result = reproduce(
        "gentile-letter", tmp_path / "letter", quiet=True, data_dir=shared_data,
        algorithms=["ALMA2"], alphas=[0.8],
    )  # fmt: skip
    doc = result.report.document
    assert len(doc["results"]) == 10
    for r in doc["results"].values():
        assert (r["n_train"], r["n_test"]) == (16000, 4000)
        assert [e["trials"] for e in r["epochs"]] == [16000, 32000, 48000]
    stats = gk.summarise(doc)
    row = gk.Row("ALMA2", 0.8, "1/alpha", 5, 3.0)
    assert abs(stats[(row, 3)]["err"]["avg"][0] - 2.80) <= 0.3  # measured 2.94
    assert abs(stats[(row, 1)]["err"]["avg"][0] - 3.60) <= 0.6  # measured 3.99


@pytest.mark.slow
def test_full_mnist_one_permutation(shared_data, tmp_path):
    """Table 3 protocol on one permutation: ALMA2(1.0) and ALMA2(0.9), d = 4, 3 epochs."""
    result = reproduce(
        "gentile-mnist", tmp_path / "mnist", quiet=True, data_dir=shared_data, permutations=1,
        algorithms=["ALMA2"], alphas=[1.0, 0.9], degrees=[4],
        b_settings=["1/alpha", "sqrt8/alpha"],
    )  # fmt: skip
    results = result.report.document["results"]
    assert len(results) == 3
    for r in results.values():
        assert (r["n_train"], r["n_test"]) == (60000, 10000)
    # with B = 1/alpha the published correction counts come out within 3% at every epoch;
    # B = sqrt(8)/alpha makes over 30% more
    published = {1.0: (7454, 9658, 10934), 0.9: (9911, 12711, 14244)}
    for alpha, counts in published.items():
        r = results[gk.cell_key("mnist", 0, gk.Row("ALMA2", alpha, "1/alpha", 4))]
        for e, count in zip(r["epochs"], counts, strict=True):
            assert abs(e["corrections"] - count) / count < 0.03
    row = gk.Row("ALMA2", 0.9, "sqrt8/alpha", 4)
    r8 = results[gk.cell_key("mnist", 0, row)]["epochs"][0]["corrections"]
    assert r8 > 1.3 * 9911
