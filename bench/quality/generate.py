"""Render the ground-truth cases to PDF with WeasyPrint (a real layout engine).

Runs in the bench venv: ``bench/.venv/bin/python -m bench.quality.generate``.
Writes ``bench/.cache/quality/pdf/<case>.pdf`` and ``<case>.json`` (page count and the
running header/footer strings of each page). Skips a case whose PDF is newer than its
source unless ``--force``.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys

import markdown  # type: ignore[import-untyped]  # bench venv only
from weasyprint import HTML  # type: ignore[import-untyped]  # bench venv only

from bench.paths import CASES_DIR, PDF_DIR
from bench.quality.casefile import Case, load_cases
from bench.quality.mdparse import parse

BASE_CSS = """
@page {
  size: A4;
  margin: 24mm 20mm 22mm 20mm;
  @top-center { content: var(--header); font: 9pt "DejaVu Sans"; color: #444; }
  @bottom-center { content: var(--footer); font: 9pt "DejaVu Sans"; color: #444; }
}
body { font: 10.5pt/1.4 "DejaVu Serif", "WenQuanYi Micro Hei", serif; }
h1, h2, h3 { font-family: "DejaVu Sans", "WenQuanYi Micro Hei", sans-serif; font-weight: bold;
             margin: 0.9em 0 0.4em; break-after: avoid; }
h1 { font-size: 22pt; }
h2 { font-size: 16pt; }
h3 { font-size: 12.5pt; }
p { margin: 0 0 0.6em; text-align: left; }
ul, ol { margin: 0 0 0.6em; padding-left: 1.6em; }
li { margin: 0.1em 0; }
table { border-collapse: collapse; margin: 0.4em 0 0.9em; font-size: 9.5pt; }
th, td { padding: 3pt 6pt; text-align: left; vertical-align: top; }
table.ruled th, table.ruled td { border: 0.6pt solid #333; }
table.unruled th { border-bottom: 0.8pt solid #333; }
th { font-weight: bold; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 9.5pt; }
.columns { column-count: 2; column-gap: 8mm; }
"""
# WeasyPrint turns headings into PDF bookmarks by default. Most cases have none, so that
# heading scores measure what a converter reads from the page; cases with `outline: yes`
# keep them, as many real PDFs (LaTeX, Word exports) do.
NO_OUTLINE_CSS = "h1, h2, h3, h4, h5, h6 { bookmark-level: none; }"


def _css_string(value: str) -> str:
    """A CSS content value for a running string with {page}/{pages} counters."""
    parts: list[str] = []
    rest = value
    while rest:
        idx = [i for i in (rest.find("{page}"), rest.find("{pages}")) if i >= 0]
        if not idx:
            parts.append(_quote(rest))
            break
        i = min(idx)
        if i:
            parts.append(_quote(rest[:i]))
        if rest.startswith("{pages}", i):
            parts.append("counter(pages)")
            rest = rest[i + len("{pages}") :]
        else:
            parts.append("counter(page)")
            rest = rest[i + len("{page}") :]
    return " ".join(parts) or '""'


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def case_html(case: Case) -> str:
    body = markdown.markdown(case.body, extensions=["tables", "sane_lists", "fenced_code"])
    table_class = "unruled" if case.meta.get("table_style") == "unruled" else "ruled"
    body = body.replace("<table>", f'<table class="{table_class}">')
    if case.meta.get("columns") == "2":
        # The first h1 spans the page, the rest flows in two columns.
        head, sep, tail = body.partition("</h1>")
        body = (
            (head + sep + '<div class="columns">' + tail + "</div>")
            if sep
            else ('<div class="columns">' + body + "</div>")
        )
    css = BASE_CSS
    page_rules = []
    if "header" in case.meta:
        page_rules.append(f"@page {{ @top-center {{ content: {_css_string(case.meta['header'])}; }} }}")
    if "footer" in case.meta:
        page_rules.append(f"@page {{ @bottom-center {{ content: {_css_string(case.meta['footer'])}; }} }}")
    if "header_left" in case.meta:
        page_rules.append(
            f"@page :left {{ @top-left {{ content: {_css_string(case.meta['header_left'])};"
            ' font: 9pt "DejaVu Sans"; color: #444; } }'
        )
    if "header_right" in case.meta:
        page_rules.append(
            f"@page :right {{ @top-right {{ content: {_css_string(case.meta['header_right'])};"
            ' font: 9pt "DejaVu Sans"; color: #444; } }'
        )
    css = css.replace("content: var(--header);", "").replace("content: var(--footer);", "")
    if case.meta.get("outline") != "yes":
        page_rules.append(NO_OUTLINE_CSS)
    css += "\n".join(page_rules)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(case.name)}</title><style>{css}</style></head>"
        f"<body>{body}</body></html>"
    )


def check_ground_truth(case: Case) -> None:
    """The scorer's reading of a case must agree with what WeasyPrint is given to print:
    same headings, list items and table cells. Raises SystemExit on a mismatch (a case
    typo, such as a heading glued to a table, would otherwise score every system wrong)."""
    page = markdown.markdown(case.body, extensions=["tables", "sane_lists", "fenced_code"])
    parsed = parse(case.body)
    rendered = {
        "headings": len(re.findall(r"<h[1-6][ >]", page)),
        "list items": len(re.findall(r"<li[ >]", page)),
        "table cells": len(re.findall(r"<t[dh][ >]", page)),
    }
    scored = {
        "headings": len(parsed.headings),
        "list items": len(parsed.items),
        "table cells": sum(len(row) for t in parsed.tables for row in t),
    }
    if rendered != scored:
        raise SystemExit(
            f"{case.name}: ground truth read differently by the scorer {scored} and the renderer {rendered}"
        )


def generate(case: Case, force: bool = False) -> dict[str, object]:
    check_ground_truth(case)
    PDF_DIR.mkdir(parents=True, exist_ok=True)
    pdf_path = PDF_DIR / f"{case.name}.pdf"
    meta_path = PDF_DIR / f"{case.name}.json"
    src = CASES_DIR / f"{case.name}.md"
    if (
        not force
        and pdf_path.exists()
        and meta_path.exists()
        and pdf_path.stat().st_mtime >= max(src.stat().st_mtime, _code_mtime())
    ):
        return json.loads(meta_path.read_text())
    document = HTML(string=case_html(case)).render()
    pages = len(document.pages)
    document.write_pdf(pdf_path)
    meta = {"case": case.name, "pages": pages, "running": case.running_strings(pages)}
    meta_path.write_text(json.dumps(meta, ensure_ascii=False, indent=1))
    return meta


def _code_mtime() -> float:
    return max(p.stat().st_mtime for p in (CASES_DIR.parent / "generate.py", CASES_DIR.parent / "casefile.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    for case in load_cases(CASES_DIR, args.cases or None):
        meta = generate(case, force=args.force)
        print(f"{case.name}: {meta['pages']} page(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
