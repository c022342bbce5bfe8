"""``python -m bench.styles_rtl``: Persian, Arabic and Hebrew articles in page styles the
corpus does not print (issue 24's development set for right-to-left text, made here and never
taken from the corpus). See README.md."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.paths import REPO_DIR
from bench.printed import run_styled_set
from bench.styles_rtl.cases import STYLES, documents
from bench.tables_web.cases import doc_html, doc_md

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CACHE = REPO_DIR / "bench" / ".cache" / "styles_rtl"


def build() -> None:
    CASES.mkdir(exist_ok=True)
    for lang, doc in documents():
        (CASES / f"{doc.name}.md").write_text(doc_md(doc))
        page = doc_html(doc).replace('<html lang="en">', f'<html lang="{lang.code}" dir="rtl">', 1)
        (CASES / f"{doc.name}.html").write_text(page)


def main(argv: list[str]) -> int:
    """Every document in every style: NAME.STYLE.pdf, then their scores."""
    return run_styled_set(argv, build, CASES, CACHE, STYLES)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
