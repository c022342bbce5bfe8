"""``python -m bench.styles_web``: headings, paragraphs and columns in page styles the corpus
does not print (issue 24's development set, made here and never taken from the corpus). See
README.md."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.paths import REPO_DIR
from bench.printed import run_styled_set
from bench.styles_web.cases import STYLES, documents
from bench.tables_web.cases import doc_html, doc_md

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CACHE = REPO_DIR / "bench" / ".cache" / "styles_web"


def build() -> None:
    CASES.mkdir(exist_ok=True)
    for doc in documents():
        # The reference has the words whole; the page keeps their hyphenation points.
        (CASES / f"{doc.name}.md").write_text(doc_md(doc).replace("\u00ad", ""))
        (CASES / f"{doc.name}.html").write_text(doc_html(doc))


def main(argv: list[str]) -> int:
    """Every document in every style: NAME.STYLE.pdf, then their scores."""
    return run_styled_set(argv, build, CASES, CACHE, STYLES)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
