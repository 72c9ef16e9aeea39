"""Plain-text and markdown tables with aligned columns."""

from __future__ import annotations

from collections.abc import Sequence


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align: str | None = None,
    markdown: bool = True,
) -> str:
    """Format rows of strings as an aligned table.

    Parameters
    ----------
    headers : sequence of str
    rows : sequence of sequences of str
        Every row has ``len(headers)`` cells.
    align : str, optional
        One letter per column, ``"l"`` or ``"r"``; default left for all.
    markdown : bool, default=True
        A GitHub markdown table (pipes and an alignment rule) when True, else columns
        separated by two spaces with a dashed rule under the header.

    Returns
    -------
    text : str
        The table, without a trailing newline.
    """
    n = len(headers)
    align = align or "l" * n
    if len(align) != n or any(len(r) != n for r in rows):
        raise ValueError("every row and the alignment need one entry per header")
    widths = [max([len(h)] + [len(r[j]) for r in rows]) for j, h in enumerate(headers)]

    def pad(cells):
        return [
            c.rjust(w) if a == "r" else c.ljust(w)
            for c, w, a in zip(cells, widths, align, strict=True)
        ]

    if markdown:
        rule = [
            "-" * (w - 1) + ":" if a == "r" else "-" * w
            for w, a in zip(widths, align, strict=True)
        ]
        lines = [pad(headers), rule] + [pad(r) for r in rows]
        return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)
    lines = [pad(headers), ["-" * w for w in widths]] + [pad(r) for r in rows]
    return "\n".join("  ".join(cells).rstrip() for cells in lines)
