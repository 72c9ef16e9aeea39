"""The published values: generated from the papers' transcriptions, and scored."""

import importlib.util
import math
from pathlib import Path

import pytest

from marginkit.experiments import published as pub

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location(
        "generate", ROOT / "tools" / "generate_published.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_file_is_what_the_transcriptions_give():
    generate = _generator()
    source = generate.default_source()
    if not (source / "prose_numbers.csv").exists():
        pytest.skip(f"the transcribed tables are not at {source} (set MARGINKIT_PUBLISHED)")
    assert generate.dumps(generate.build(source)) == generate.TARGET.read_text(encoding="utf-8")
    assert generate.main([str(source), "--check"]) == 0


def test_generator_refuses_a_folder_without_tables(tmp_path, capsys):
    generate = _generator()
    with pytest.raises(FileNotFoundError, match="no published tables"):
        generate.build(tmp_path)


def test_every_table_cell_is_stored():
    doc = pub.document()
    assert len(doc["cells"]) == 810
    tables = {}
    for c in doc["cells"]:
        key = (c["paper"], c["table"])
        tables[key] = tables.get(key, 0) + 1
        assert float(c["printed"]) == c["value"]
        assert c["metric"] in pub.METRIC_NAMES
    assert tables == {
        ("gentile2001_jmlr", "Table 1"): 48,
        ("gentile2001_jmlr", "Table 2"): 190,
        ("gentile2001_jmlr", "Table 3"): 108,
        ("gentile2001_jmlr", "Table 4"): 190,
        ("gentile2001_jmlr", "Table 5"): 48,
        ("gentile2001_jmlr", "Table 6"): 108,
        ("gentile2000_nips", "Table 1"): 54,
        ("ishibashi2008_colt", "Table 1"): 64,
    }
    assert len(doc["prose"]) == 182
    # trailing zeros are kept as printed
    (cell,) = pub.cells(
        table="Table 5", algorithm="ALMA2", alpha=0.8, output="avg", epochs=3,
        metric="test_error_percent",
    )  # fmt: skip
    assert cell["printed"] == "2.80"


def test_the_papers_spread_sets_the_tolerance_of_an_error():
    (usps,) = pub.cells(
        table="Table 1", dataset="USPS", algorithm="ALMA2", alpha=0.9, output="avg", epochs=1,
        metric="test_error_percent",
    )  # fmt: skip
    assert pub.spread(usps) == 0.12
    assert pub.tolerance(usps, None) == 0.12 == pub.tolerance(usps, 0.05)
    assert pub.tolerance(usps, 0.2) == pytest.approx(0.4)
    assert pub.tolerance(usps, math.nan) == 0.12
    letter = pub.cells(dataset="UCI Letter", metric="test_error_percent")[0]
    assert pub.spread(letter) == 0.0  # the paper states none
    mnist = pub.cells(dataset="MNIST", metric="test_error_percent")[0]
    assert pub.spread(mnist) == 0.09
    artificial = pub.cells(table="Table 6")[0]
    assert pub.spread(artificial) == 1.0
    corr = pub.cells(table="Table 1", dataset="USPS", metric="corrections")[0]
    assert pub.tolerance(corr, 100.0) == pytest.approx(0.03 * corr["value"])
    margin = pub.cells(paper="ishibashi2008_colt", metric="margin_x100")[0]
    assert pub.tolerance(margin) == pytest.approx(0.01 * margin["value"])
    assert pub.tolerance(pub.cells(metric="seconds")[0]) is None


def test_scores_and_scoreboard():
    (cell,) = pub.cells(
        table="Table 3", algorithm="ALMA2", alpha=1.0, d=4, output="last", epochs=1,
        metric="test_error_percent",
    )  # fmt: skip
    assert cell["value"] == 2.52
    inside = pub.measured(cell, 2.60, 0.02, 10)
    assert inside.status == pub.WITHIN and inside.tolerance == 0.09
    outside = pub.measured(cell, 2.80, 0.1, 10, "a note")
    assert outside.status == pub.OUTSIDE and outside.tolerance == pytest.approx(0.2)
    seconds = pub.measured(pub.cells(metric="seconds")[0], 1.0, None, 1)
    assert seconds.status == pub.NOT_COMPARED
    scores = [inside, outside, seconds, pub.not_run(cell, "why"), pub.not_compared(cell, "why")]
    counts = pub.counts(scores)
    assert counts["Gentile (JMLR 2001), Table 3"] == {
        "within": 1, "outside": 1, "not run": 1, "not compared": 1
    }  # fmt: skip
    assert pub.headline(counts["Gentile (JMLR 2001), Table 3"]) == (
        "cells within tolerance: 1 of 4 (1 outside, 1 not run, 1 not compared)"
    )
    text = "\n".join(pub.scoreboard(scores))
    assert "All tables: cells within tolerance: 1 of 5." in text
    row = next(line for line in text.splitlines() if "ALMA2(1.0) d=4, last, epoch 1" in line)
    assert [c.strip() for c in row.strip("|").split("|")][1:] == [
        "2.52", "2.80", "0.10", "0.20", "+0.28 points", "a note"
    ]  # fmt: skip
    assert "- 1 not run: why" in text and "- 1 not compared: why" in text
    assert pub.label(pub.cells(paper="ishibashi2008_colt")[0]).startswith("ionosphere, SVMlight")
