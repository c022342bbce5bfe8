"""``python -m bench.styles_web``: headings, paragraphs and columns in page styles the corpus
does not print (issue 24's development set, made here and never taken from the corpus). See
README.md."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.paths import REPO_DIR
from bench.printed import convert_and_score, print_variants, run_steps
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


def print_pdfs() -> None:
    """Every document in every style: NAME.STYLE.pdf."""
    print_variants(CASES, CACHE, STYLES)


_FIGURES = (
    ("text", "text_fidelity"),
    ("order", "reading_order"),
    ("H recall", "heading_recall"),
    ("H prec", "heading_precision"),
    ("level", "heading_level"),
    ("hierarchy", "heading_hierarchy"),
    ("lists", "list_recall"),
    ("cells", "table_cells"),
)


def score() -> int:
    rows = convert_and_score(CACHE / "pdf", CACHE / "out", CASES)
    groups: dict[str, list[dict[str, list[float]]]] = {}
    for r in rows:
        groups.setdefault(str(r["variant"]), []).append(r)
        groups.setdefault("all", []).append(r)

    def mean(rs: list[dict[str, list[float]]], k: str) -> str:
        vals = [r[k][0] / r[k][1] for r in rs if r.get(k) and r[k][1]]
        return f"{sum(vals) / len(vals):.3f}" if vals else "-"

    print("| style | docs | " + " | ".join(label for label, _ in _FIGURES) + " |")
    print("| --- | ---: |" + " --- |" * len(_FIGURES))
    for style in [*STYLES, "all"]:
        rs = groups.get(style, [])
        print(f"| {style} | {len(rs)} | " + " | ".join(mean(rs, k) for _, k in _FIGURES) + " |")
    for r in rows:
        figures = ", ".join(
            f"{label} {r[k][0]:.3f}" if k == "text_fidelity" else f"{label} {r[k][0]:g}/{r[k][1]:g}"
            for label, k in _FIGURES
            if r.get(k)
        )
        print(f"{r['name']}.{r['variant']}: {figures}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    return run_steps(argv, build, print_pdfs, score)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
