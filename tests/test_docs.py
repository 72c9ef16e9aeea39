"""The code of docs/quickstart.md runs, block after block, in one namespace."""

import re
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parents[1] / "docs" / "quickstart.md"


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_quickstart_runs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="the quickstart plots (the 'plot' extra)")
    blocks = python_blocks(QUICKSTART.read_text())
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, str(QUICKSTART), "exec"), namespace)
    assert namespace["pumma"].converged_
    assert namespace["again"].score(namespace["X"], namespace["y"]) > 0.9


def test_algorithm_pages_are_in_the_site():
    docs = QUICKSTART.parent
    config = (docs.parent / "mkdocs.yml").read_text()
    for page in sorted((docs / "algorithms").glob("*.md")):
        assert f"algorithms/{page.name}" in config, page.name
    pages = ["index.md", "quickstart.md", "reproductions.md", "benchmarks.md", "scale-out.md"]
    for page in [*pages, "trust.md", "gpu.md", "defaults.md", "scoreboard.md"]:
        assert (docs / page).is_file() and page in config


@pytest.mark.parametrize(
    "page", sorted((QUICKSTART.parent / "algorithms").glob("*.md")), ids=lambda p: p.stem
)
def test_algorithm_pages_have_an_example_that_runs(page, capsys):
    """Every algorithm page shows its estimators at work, and the code runs."""
    import warnings

    blocks = python_blocks(page.read_text())
    assert blocks, f"{page.name} has no example"
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example that warns is a bad example
        for block in blocks:
            exec(compile(block, str(page), "exec"), namespace)
    assert capsys.readouterr().out.strip()
