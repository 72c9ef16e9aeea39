"""Experiments as data: the Table 6 spec of Gentile (JMLR 2001), the resumable runner."""

import copy
import json
import logging
import math
import shutil

import numpy as np
import pytest

from marginkit import ALMAClassifier
from marginkit.datasets import make_sparse_target
from marginkit.experiments import (
    UnknownExperimentError,
    available_experiments,
    get_experiment,
    reproduce,
)
from marginkit.experiments import gentile_table6 as t6
from marginkit.experiments.gentile_kernel import permuted
from marginkit.experiments.runner import Cell, LastValueCache, Spec, load, run

VERSION_KEYS = {"python", "marginkit", "numpy", "scipy", "sklearn", "numba"}
TIMING_KEYS = ("seconds", "data_seconds", "fit_seconds")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One quick Table 6 run, shared by the tests that only read it."""
    prefix = tmp_path_factory.mktemp("table6") / "quick"
    return reproduce("gentile-table6", prefix, quick=True, seed=0, quiet=True)


def _without_timings(results):
    return {k: {f: v for f, v in r.items() if f not in TIMING_KEYS} for k, r in results.items()}


def _table_rows(markdown):
    """The rows of the main markdown table, as lists of stripped cells."""
    lines = [ln for ln in markdown.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != len(header):
            break  # the next table (data seeds)
        rows.append(dict(zip(header, cells, strict=True)))
    return header, rows


# -- the quick run, end to end ------------------------------------------------------------


def test_quick_run_writes_json_and_markdown(quick):
    assert quick.json_path.name == "quick.json"
    assert quick.markdown_path.read_text() == quick.markdown
    doc = json.loads(quick.json_path.read_text())
    assert doc == quick.report.document
    assert doc["experiment"] == "gentile-table6"
    assert set(doc["versions"]) == VERSION_KEYS
    assert all(isinstance(v, str) for v in doc["versions"].values())
    assert doc["compute_seconds"] > 0
    assert not quick.report.resumed and not quick.report.skipped


def test_quick_run_has_every_cell_with_sane_values(quick):
    doc = quick.report.document
    config = doc["spec"]["config"]
    expected = {
        t6.run_key(s, eps, 0, p, alpha, b)
        for s in (3, 100)
        for eps in (0.0, 0.1)
        for p in (2, 6)
        for alpha in (1.0, 0.5)
        for b in ("1/alpha", "sqrt8/alpha")
    }
    assert {c["key"] for c in doc["spec"]["cells"]} == expected
    assert set(doc["results"]) == expected
    assert quick.report.computed == [c["key"] for c in doc["spec"]["cells"]]
    for cell in doc["spec"]["cells"]:
        r = doc["results"][cell["key"]]
        for field in ("err_last_pct", "err_avg_pct"):
            assert 0.0 <= r[field] <= 100.0
        assert r["corrections"] > 0
        assert r["trials"] == config["n_train"] == 1000
        assert r["B"] == pytest.approx(cell["params"]["B"])
        assert math.isclose(
            r["B"] * cell["params"]["alpha"], config["B"][cell["params"]["B_setting"]]
        )
        assert all(r[k] >= 0 for k in TIMING_KEYS) and r["seconds"] > 0


def test_seeds_are_recorded_and_derived_from_the_base_seed(quick):
    config = quick.report.document["spec"]["config"]
    assert config["seed"] == 0
    seeds = config["data_seeds"]
    assert seeds == {
        t6.dataset_key(s, eps): t6.data_seed(0, s, eps) for s in (3, 100) for eps in (0.0, 0.1)
    }
    assert len(set(seeds.values())) == len(seeds)
    for cell in quick.report.document["spec"]["cells"]:
        q = cell["params"]
        assert q["data_seed"] == seeds[t6.dataset_key(q["s"], q["eps"])]
    assert t6.data_seed(0, 3, 0.05) == t6.data_seed(0, 3, 0.05)
    assert t6.data_seed(1, 3, 0.05) != t6.data_seed(0, 3, 0.05)
    with pytest.raises(ValueError, match="must be >= 0"):
        t6.data_seed(-1, 3, 0.0)


def test_b_has_no_effect_at_alpha_one(quick):
    """The threshold (1 - alpha) gamma_k vanishes at alpha = 1 (Figure 1 of the paper)."""
    results = quick.report.document["results"]
    for s in (3, 100):
        for eps in (0.0, 0.1):
            for p in (2, 6):
                runs = [
                    {
                        k: v
                        for k, v in results[t6.run_key(s, eps, 0, p, 1.0, b)].items()
                        if k not in (*TIMING_KEYS, "B")
                    }
                    for b in ("1/alpha", "sqrt8/alpha")
                ]
                assert runs[0] == runs[1]


def test_last_and_avg_come_from_one_fit():
    """run_cell scores 'avg' after set_params on the fitted model: same as fitting for avg."""
    spec = t6.build_spec(quick=True, seed=0)
    cell = next(c for c in spec.cells if c.params["p"] == 6 and c.params["alpha"] == 0.5)
    result = t6.run_cell(cell, LastValueCache())
    q = cell.params
    X, y, X_test, y_test = make_sparse_target(
        n_train=q["n_train"],
        n_test=q["n_test"],
        n_relevant=q["s"],
        noise=q["eps"],
        random_state=q["data_seed"],
    )
    X, y = permuted(X, y, q["permutation_seed"])  # the cell's order of the training set
    for output in ("last", "avg"):
        clf = ALMAClassifier(
            shuffle=False, p=6, alpha=0.5, B=q["B"], output=output, max_iter=1, fit_intercept=False
        ).fit(X, y)
        mistakes = int(np.count_nonzero(clf.predict(X_test) != y_test))
        assert result[f"mistakes_{output}"] == mistakes
        assert result["corrections"] == clf.n_corrections_


# -- resumption ---------------------------------------------------------------------------


def test_complete_json_computes_nothing(quick, tmp_path):
    shutil.copy(quick.json_path, tmp_path / "again.json")
    before = (tmp_path / "again.json").read_bytes()
    again = reproduce("gentile-table6", tmp_path / "again", quick=True, seed=0, quiet=True)
    assert again.report.computed == []
    assert again.report.resumed
    assert len(again.report.skipped) == len(quick.report.document["results"])
    assert (tmp_path / "again.json").read_bytes() == before
    assert again.markdown == quick.markdown


def test_deleted_cell_is_the_only_one_recomputed(quick, tmp_path):
    doc = json.loads(quick.json_path.read_text())
    key = t6.run_key(100, 0.1, 0, 6, 0.5, "sqrt8/alpha")
    removed = doc["results"].pop(key)
    (tmp_path / "partial.json").write_text(json.dumps(doc))
    again = reproduce("gentile-table6", tmp_path / "partial", quick=True, seed=0, quiet=True)
    assert again.report.computed == [key]
    new = again.report.document["results"]
    assert _without_timings({key: new[key]}) == _without_timings({key: removed})
    assert _without_timings(new) == _without_timings(quick.report.document["results"])
    assert json.loads((tmp_path / "partial.json").read_text()) == again.report.document


def test_other_spec_starts_over_with_a_warning(quick, tmp_path, caplog):
    shutil.copy(quick.json_path, tmp_path / "run.json")
    spec = t6.build_spec(quick=True, seed=5)
    calls = []

    def fake_cell(cell, cache):
        calls.append(cell.key)
        return {"value": 1}

    with caplog.at_level(logging.WARNING, logger="marginkit.experiments"):
        report = run(spec, fake_cell, tmp_path / "run.json", quiet=True)
    assert "spec" in caplog.text and "starting over" in caplog.text
    assert calls == [c.key for c in spec.cells]
    assert not report.resumed
    assert load(tmp_path / "run.json.bak") == quick.report.document


def test_unreadable_json_starts_over(tmp_path, caplog):
    (tmp_path / "bad.json").write_text("{ not json")
    spec = Spec("toy", {"n": 2}, (Cell("a", {"i": 0}), Cell("b", {"i": 1})))
    with caplog.at_level(logging.WARNING, logger="marginkit.experiments"):
        report = run(spec, lambda cell, cache: {"i": cell.params["i"]}, tmp_path / "bad.json")
    assert "not a readable results file" in caplog.text
    assert report.computed == ["a", "b"]
    assert (tmp_path / "bad.json.bak").read_text() == "{ not json"


def test_interrupted_run_keeps_finished_cells_and_resumes(tmp_path):
    spec = Spec("toy", {"n": 4}, tuple(Cell(f"c{i}", {"i": i}) for i in range(4)))
    path = tmp_path / "sub" / "toy.json"

    def failing(cell, cache):
        if cell.params["i"] == 2:
            raise KeyboardInterrupt
        return {"square": np.int64(cell.params["i"]) ** 2}

    with pytest.raises(KeyboardInterrupt):
        run(spec, failing, path, quiet=True)
    saved = load(path)
    assert set(saved["results"]) == {"c0", "c1"}
    assert saved["results"]["c1"]["square"] == 1
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]

    report = run(spec, lambda cell, cache: {"square": cell.params["i"] ** 2}, path, quiet=True)
    assert report.computed == ["c2", "c3"] and report.skipped == ["c0", "c1"]
    assert [load(path)["results"][f"c{i}"]["square"] for i in range(4)] == [0, 1, 4, 9]


def test_last_value_cache_builds_once_per_key():
    cache, built = LastValueCache(), []

    def factory(k):
        return lambda: built.append(k) or k

    assert [cache.get(k, factory(k)) for k in "aabba"] == list("aabba")
    assert built == ["a", "b", "a"]


def test_spec_rejects_duplicate_keys():
    with pytest.raises(ValueError, match="not unique"):
        Spec("toy", {}, (Cell("a", {}), Cell("a", {})))


# -- published values ---------------------------------------------------------------------


def test_published_data_holds_every_cell_of_table6_and_the_texts_counts():
    published = t6.load_published()
    lookup = t6.published_lookup(published)
    errors = [c for c in published["cells"] if c["metric"] == "test_error_pct"]
    assert len(errors) == 6 * 3 * 3 * 2  # data sets x p x alpha x outputs
    assert {(c["s"], c["eps"]) for c in errors} == {
        (s, eps) for s in (3, 300) for eps in (0.0, 0.1, 0.15)
    }
    counts = {k[:4]: c["value"] for k, c in lookup.items() if k[5] == "corrections"}
    assert counts == {
        (3, 0.0, 2.0, 1.0): 142,
        (3, 0.0, 2.0, 0.5): 2720,
        (3, 0.0, 10.0, 1.0): 14,
        (3, 0.0, 10.0, 0.5): 1050,
        (3, 0.15, 10.0, 1.0): 2656,
        (3, 0.15, 10.0, 0.5): 3594,
    }
    # the values typed by hand before the generated file, unchanged
    for key, value in {
        (3, 0.0, 2.0, 1.0, "avg", "test_error_pct"): 10.9,
        (3, 0.0, 6.0, 0.5, "avg", "test_error_pct"): 0.3,
        (3, 0.0, 10.0, 0.8, "avg", "test_error_pct"): 0.9,
    }.items():
        assert lookup[key]["value"] == value
    assert all(c["note"].startswith(("Table 6", "section 4.4")) for c in published["cells"])


def test_published_values_appear_where_the_paper_prints_them(quick):
    header, rows = _table_rows(quick.markdown)
    assert header[:3] == ["s", "eps", "algorithm"]
    assert len(rows) == 2 * 2 * 2 * 2
    lookup = t6.published_lookup()
    for row in rows:
        p, alpha = (float(v) for v in row["algorithm"][4:-1].split("("))
        s, eps = int(row["s"]), float(row["eps"])
        for col, output, metric in (
            ("paper last %", "last", "test_error_pct"),
            ("paper avg %", "avg", "test_error_pct"),
            ("paper corr", None, "corrections"),
        ):
            c = lookup.get((s, eps, p, alpha, output, metric))
            assert row[col] == (t6.NOT_STORED if c is None else c["printed"])
    assert {r["s"] for r in rows if r["paper avg %"] != t6.NOT_STORED} == {"3"}
    assert t6.NOT_RUN not in {v for row in rows for v in row.values()}
    assert "## Every published cell" in quick.markdown


def test_partial_document_is_rendered_with_placeholders(quick):
    doc = copy.deepcopy(quick.report.document)
    key = t6.run_key(3, 0.0, 0, 2, 0.5, "sqrt8/alpha")
    del doc["results"][key]
    text = t6.render(doc)
    assert "Partial run: 31 of 32 cells" in text
    row = next(r for r in _table_rows(text)[1] if r["algorithm"] == "ALMA2(0.5)")
    assert row["sqrt8/alpha corr"] == t6.NOT_RUN
    assert "not run yet" in text


def _fake_document(corrections):
    """A full-grid document where only the cells of the stored published values are set."""
    spec = t6.build_spec(quick=False, seed=0)
    results = {}
    for cell in spec.cells:
        q = cell.params
        results[cell.key] = {
            "err_last_pct": 5.0,
            "err_avg_pct": 5.0,
            "corrections": corrections.get((q["p"], q["alpha"], q["B_setting"]), 100),
        }
    return {"spec": spec.to_json(), "results": results}


@pytest.mark.parametrize("winner", ["1/alpha", "sqrt8/alpha"])
def test_which_b_matches_is_computed_from_the_data(winner):
    loser = "sqrt8/alpha" if winner == "1/alpha" else "1/alpha"
    corrections = {
        (2, 0.5, winner): 2720,
        (10, 0.5, winner): 1040,
        (2, 0.5, loser): 700,
        (10, 0.5, loser): 150,
    }
    lines = t6.which_b_matches(_fake_document(corrections))
    text = "\n".join(lines)
    # three of the six published counts are at alpha = 1, where B has no effect
    assert f"B = {winner} is closer for 3 of 6 (3 ties)" in text
    assert "ALMA10(0.5), s = 3, eps = 0.00: published 1050" in text
    assert f"B = {winner}: 1040.0 (-1.0%)" in text
    assert "tie (B has no effect at alpha = 1)" in text  # ALMA2(1.0), equal by construction
    assert "both B settings give the same values" in text  # every test error here is 5%


def test_which_b_matches_reports_when_neither_setting_matches():
    corrections = {
        (2, 0.5, "1/alpha"): 700,
        (10, 0.5, "1/alpha"): 3000,
        (2, 0.5, "sqrt8/alpha"): 9000,
        (10, 0.5, "sqrt8/alpha"): 150,
    }
    text = "\n".join(t6.which_b_matches(_fake_document(corrections)))
    assert "neither B setting is consistently closer" in text
    assert "For 6 of them neither setting is within 10%" in text


# -- registry -----------------------------------------------------------------------------


def test_registry():
    assert available_experiments() == [
        "gentile-letter",
        "gentile-mnist",
        "gentile-table6",
        "gentile-usps",
        "pumma-artificial",
        "pumma-real",
    ]
    assert get_experiment("gentile-table6") is t6
    with pytest.raises(UnknownExperimentError, match="unknown experiment 'nope'"):
        get_experiment("nope")
    with pytest.raises(UnknownExperimentError):
        reproduce("nope")


def test_full_spec_shape():
    spec = t6.build_spec()
    config = spec.config
    assert (config["n_train"], config["n_test"], config["n_features"]) == (10000, 10000, 300)
    assert len(spec.cells) == 4 * 4 * 10 * 3 * 4 * 2
    assert config["permutations"] == 10 and len(set(config["permutation_seeds"])) == 10
    assert t6.build_spec(permutations=3).config["permutations"] == 3
    with pytest.raises(ValueError, match="permutations must be a whole number"):
        t6.build_spec(permutations=0)
    assert config["C"] == pytest.approx(math.sqrt(2))
    # the cells of one data set are consecutive, so each data set is generated once
    order = [t6.dataset_key(c.params["s"], c.params["eps"]) for c in spec.cells]
    assert len([k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]) == 16


@pytest.mark.slow
def test_full_table6(tmp_path):
    """The full Table 6 run (a few minutes): structure and the stored published cells."""
    result = reproduce("gentile-table6", tmp_path / "full", quiet=True)
    doc = result.report.document
    assert len(doc["results"]) == 3840
    results = t6.summarise(doc)
    # Theorem 3's B = sqrt(8)/alpha reproduces the published correction counts
    for p, published in ((2, 2720), (10, 1050)):
        measured = results[t6.cell_key(3, 0.0, p, 0.5, "sqrt8/alpha")]["corrections"]
        assert abs(measured - published) / published < 0.10
    # section 4.4: a large p is far better than p = 2 on the sparse target
    best_p6 = results[t6.cell_key(3, 0.0, 6, 0.5, "1/alpha")]["err_avg_pct"]
    alma2 = results[t6.cell_key(3, 0.0, 2, 1.0, "1/alpha")]["err_avg_pct"]
    assert best_p6 < alma2 / 5
