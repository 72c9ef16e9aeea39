"""mkdocs hooks: the changelog page is the repository's CHANGELOG.md, its links to
docs/PAGE.md made links within the site."""

import re
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


def on_page_markdown(markdown, page, **kwargs):
    if page.file.src_uri != "changelog.md":
        return markdown
    return re.sub(r"\]\(docs/", "](", CHANGELOG.read_text(encoding="utf-8"))
