"""Write docs/reference/cli.md: the help of ``marginkit`` and of each of its commands.

Run ``python tools/cli_reference.py`` after changing the command line;
tests/test_docs_build.py fails while the page differs from what this writes.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
WIDTH = 88


def commands(parser):
    """``(name, parser)`` of each command of ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def reference() -> str:
    """The page: ``marginkit --help``, then ``marginkit COMMAND --help`` of each."""
    from marginkit.cli import build_parser

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # argparse wraps to the terminal's width
    try:
        parser = build_parser()
        parts = [
            "# Command line\n",
            "The help of the `marginkit` command and of each of its commands, as "
            "`marginkit --help` and `marginkit COMMAND --help` print it (this page is "
            "written by `tools/cli_reference.py`).\n",
            f"```text\n$ marginkit --help\n{parser.format_help()}```\n",
        ]
        for name, sub in commands(parser):
            parts.append(f"## marginkit {name}\n")
            parts.append(f"```text\n$ marginkit {name} --help\n{sub.format_help()}```\n")
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return "\n".join(parts)


if __name__ == "__main__":
    PAGE.write_text(reference())
    print(f"wrote {PAGE}")
