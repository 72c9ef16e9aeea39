"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a
missing page or a docstring that does not render fails it), its API reference covers
every public estimator and module, and its command-line page is the current help."""

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import marginkit

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"

#: the public modules, each with a page of the API reference
MODULES = [
    "persistence",
    "datasets",
    "streaming",
    "prequential",
    "formats",
    "tasks",
    "margins",
    "plotting",
    "distributed",
    "experiments",
    "river",
]


def test_every_public_estimator_and_module_has_its_reference():
    estimators = (REFERENCE / "estimators.md").read_text()
    for name in marginkit.__all__:
        if isinstance(getattr(marginkit, name), type):
            assert f"::: marginkit.{name}\n" in estimators, name
    for module in MODULES:
        assert f"::: marginkit.{module}\n" in (REFERENCE / f"{module}.md").read_text()
    # a public module added later gets a page, or a place in this list
    # (the estimators' modules are on the estimators' page, the command's on its own)
    others = {"alma", "perceptron", "romma", "pumma", "margin_perceptron", "cli"}
    found = {p.stem for p in (ROOT / "src" / "marginkit").iterdir() if p.stem[0] != "_"}
    assert found - others - {"py"} <= set(MODULES), found
    config = (ROOT / "mkdocs.yml").read_text()
    for page in sorted(REFERENCE.glob("*.md")):
        assert f"reference/{page.name}" in config, page.name


def _tool():
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "tools" / "cli_reference.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_command_line_page_is_the_current_help():
    tool = _tool()

    def words(text):  # argparse wraps lines by version and terminal: compare words
        return re.sub(r"\s+", " ", text).strip()

    assert words(tool.PAGE.read_text()) == words(tool.reference()), (
        "docs/reference/cli.md is out of date: run python tools/cli_reference.py"
    )


def test_mkdocs_build_strict(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        try:
            importlib.import_module(module)
        except ImportError:
            pytest.skip(f"{module} is not installed (the 'docs' extra: pip install -e '.[docs]')")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    estimators = (tmp_path / "site" / "reference" / "estimators" / "index.html").read_text()
    assert "{PASSES_DOC}" not in estimators
    for name in ("ALMAClassifier.fit", "KernelPUMMAClassifier.decision_function"):
        assert f'id="marginkit.{name}"' in estimators, name
    assert (
        "marginkit train" in (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    )
    # the docstrings' Sphinx roles render as code, not as ":func:" text
    for page in (tmp_path / "site" / "reference").glob("*/index.html"):
        assert not re.search(r":(func|class|meth|attr|data|mod):<code", page.read_text()), page
