"""mkdocs hooks.

- The changelog page is the repository's CHANGELOG.md, its links to docs/PAGE.md made
  links within the site.
- In the API reference, the Sphinx roles of the numpydoc docstrings
  (``:func:`name```, ``:class:`~marginkit.X```), which mkdocstrings leaves as text,
  become plain code: ``name``, ``X`` (a ``~`` keeps the last part of the name).
"""

import re
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"
ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj|ref):<code>(~?)([^<]*)</code>")


def on_page_markdown(markdown, page, **kwargs):
    if page.file.src_uri != "changelog.md":
        return markdown
    return re.sub(r"\]\(docs/", "](", CHANGELOG.read_text(encoding="utf-8"))


def _code(match):
    tilde, name = match.groups()
    return f"<code>{name.rsplit('.', 1)[-1] if tilde else name}</code>"


def on_page_content(html, page, **kwargs):
    if not page.file.src_uri.startswith("reference/"):
        return html
    return ROLE.sub(_code, html)
