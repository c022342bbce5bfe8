"""``python -m bench.tables_web``: the development tables of issue 24, built, printed, converted
and scored. Stdlib only here; each step runs with the interpreter it needs.

    python -m bench.tables_web build     # HTML + reference Markdown -> bench/tables_web/cases/
    python -m bench.tables_web print     # each page in each layout and table style, styled and
                                         # printed by Chromium -> bench/.cache/tables_web/ (A4)
    python -m bench.tables_web score     # the engine's Markdown, scored by bench/real/score.py
    python -m bench.tables_web all       # the three in turn

``score`` prints, per layout and table style, the table cells found in the right row and column
(the real bench's figure: mean over documents, and pooled), text fidelity and reading order.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.paths import REPO_DIR
from bench.printed import convert_and_score, print_variants, run_steps
from bench.tables_web.cases import LAYOUTS, STYLES, doc_html, doc_md, documents

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CACHE = REPO_DIR / "bench" / ".cache" / "tables_web"


def build() -> None:
    CASES.mkdir(exist_ok=True)
    for doc in documents():
        (CASES / f"{doc.name}.md").write_text(doc_md(doc))
        (CASES / f"{doc.name}.html").write_text(doc_html(doc))


def print_pdfs() -> None:
    """Every page in every layout and table style: NAME.LAYOUT.STYLE.pdf."""
    variants = {
        f"{layout}.{style}": page + table for layout, page in LAYOUTS.items() for style, table in STYLES.items()
    }
    print_variants(CASES, CACHE, variants)


def score() -> int:
    rows = convert_and_score(CACHE / "pdf", CACHE / "out", CASES)
    for r in rows:
        r["layout"], r["style"] = str(r["variant"]).split(".")
    print("| layout | style | docs | cells (mean) | cells (pooled) | any position | text | order |")
    print("| --- | --- | ---: | --- | --- | --- | --- | --- |")
    groups: dict[tuple[str, str], list[dict[str, list[int]]]] = {}
    for r in rows:
        groups.setdefault((r["layout"], r["style"]), []).append(r)
        groups.setdefault((r["layout"], "all"), []).append(r)

    def mean(rs: list[dict[str, list[int]]], k: str) -> float:
        vals = [r[k][0] / r[k][1] for r in rs if r.get(k) and r[k][1]]
        return sum(vals) / len(vals) if vals else float("nan")

    for (layout, style), rs in sorted(groups.items()):
        hit = sum(r["table_cells"][0] for r in rs)
        total = sum(r["table_cells"][1] for r in rs)
        print(
            f"| {layout} | {style} | {len(rs)} | {mean(rs, 'table_cells'):.2f} | {hit}/{total} |"
            f" {mean(rs, 'table_cells_any_position'):.2f} | {mean(rs, 'text_fidelity'):.3f} | {mean(rs, 'reading_order'):.2f} |"
        )
    print()
    for r in rows:
        print(
            f"{r['name']}.{r['layout']}.{r['style']}: cells {r['table_cells'][0]}/{r['table_cells'][1]}",
            file=sys.stderr,
        )
    return 0


def main(argv: list[str]) -> int:
    return run_steps(argv, build, print_pdfs, score)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
