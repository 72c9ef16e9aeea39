"""Generate the package's published values from the papers' tables transcribed as CSV.

Reads a folder of tidy CSV files, one printed number a row (the results tables of
Gentile, JMLR 2001 and NIPS 2000, and of Ishibashi, Hatano and Takeda, COLT 2008, and the
numbers their texts state), and writes ``src/marginkit/experiments/data/published.json``:
every table cell and every prose number, with the paper, the table, the printed label and
the value as printed. Nothing in that file is typed by hand; run this script again when
the transcriptions change::

    python tools/generate_published.py [SOURCE_DIR] [--check]

``SOURCE_DIR`` defaults to ``$MARGINKIT_PUBLISHED`` or ``../shared/published`` beside the
repository. ``--check`` writes nothing and exits with status 1 when the stored file is not
what the source gives. The standard library's ``csv`` reads the files: they are small and
quoted in RFC 4180 style, which it parses exactly.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "marginkit" / "experiments" / "data" / "published.json"
FORMAT = 1

#: Columns read as numbers (int when the printed text is a whole number without a point).
NUMERIC = ("alpha", "p", "d", "sigma", "eps", "s", "epochs", "digit", "delta", "lambda")
#: The files of table cells; the prose file is read separately.
PROSE = "prose_numbers.csv"


def default_source() -> Path:
    """``$MARGINKIT_PUBLISHED``, else ``../shared/published`` beside the repository."""
    env = os.environ.get("MARGINKIT_PUBLISHED")
    return Path(env) if env else ROOT.parent / "shared" / "published"


def _number(text: str):
    text = text.strip()
    if not text:
        return None
    try:
        return int(text) if text.lstrip("-").isdigit() else float(text)
    except ValueError:
        return text  # a setup value such as "sqrt(2)" stays text


def _rows(path: Path):
    with path.open(newline="", encoding="utf-8") as fh:
        yield from enumerate(csv.DictReader(fh), start=2)  # line 1 is the header


def read(path: Path, numeric=NUMERIC, *, number_values: bool = True) -> list[dict]:
    """The rows of one file: every column kept, ``numeric`` columns parsed, empty cells
    left out; ``printed`` is the value as printed and ``value`` it as a float (every
    value must be a number when ``number_values``, else only those that are)."""
    out = []
    for line, row in _rows(path):
        item = {"file": path.name, "line": line}
        for column, text in row.items():
            if column == "value":
                item["printed"] = text
                number = float(text) if number_values else _number(text)
                if isinstance(number, (int, float)):
                    item["value"] = float(number)
            elif column in numeric:
                value = _number(text)
                if value is not None:
                    item[column] = value
            elif text != "":
                item[column] = text
        out.append(item)
    return out


def build(source: Path) -> dict:
    """The document stored in ``published.json``, from the CSV files in ``source``."""
    files = sorted(p for p in source.glob("*.csv"))
    if not files or not (source / PROSE).exists():
        raise FileNotFoundError(f"no published tables in {source} (expected *.csv and {PROSE})")
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    cells = [c for p in files if p.name != PROSE for c in read(p)]
    return {
        "format": FORMAT,
        "generated_by": "tools/generate_published.py",
        "conventions": (
            "One printed number a cell, as transcribed from the papers' tables; 'printed' is "
            "the text as printed (percent signs dropped), 'value' the same as a number. "
            "Metrics: test_error_percent, corrections (summed over the one-vs-rest "
            "problems), support_vectors, seconds, margin_x100 (100 times the margin). "
            "'output' is the hypothesis as the table labels it (last, avg, voted). A key "
            "that is absent was empty in the source (not applicable, or not stated)."
        ),
        "sources": digests,
        "cells": cells,
        # the texts' numbers: setup values such as "sqrt(2)" stay text
        "prose": read(source / PROSE, ("alpha", "p"), number_values=False),
    }


def dumps(document: dict) -> str:
    """The JSON text: one cell a line, so that a change shows as a change of lines."""
    head = {k: v for k, v in document.items() if k not in ("cells", "prose")}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2] + ",\n"
    for name in ("cells", "prose"):
        items = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in document[name])
        text += f' "{name}": [\n{items}\n ]' + (",\n" if name == "cells" else "\n")
    return text + "}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", type=Path, default=None)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    source = default_source() if args.source is None else args.source
    text = dumps(build(source))
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is not what {source} gives; run {parser.prog}", file=sys.stderr)
            return 1
        print(f"{TARGET.name} is up to date with {source}")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    doc = json.loads(text)
    print(f"wrote {TARGET}: {len(doc['cells'])} table cells, {len(doc['prose'])} prose numbers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
