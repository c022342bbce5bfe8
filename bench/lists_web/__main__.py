"""``python -m bench.lists_web``: lists on web pages printed by Chromium (issue 24's list
development set, made here and never taken from the corpus). See README.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.lists_web.cases import documents
from bench.paths import REPO_DIR
from bench.printed import convert_and_score, print_variants, run_steps
from bench.tables_web.cases import LAYOUTS as PAGE_LAYOUTS
from bench.tables_web.cases import page

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CACHE = REPO_DIR / "bench" / ".cache" / "lists_web"
FILTER = HERE / "normalise.lua"

# The corpus's two page layouts as they are (lists in Chromium's default styles), and one in a
# sans serif column whose lists are styled as documentation sites style them: squares and
# circles for bullets, markers drawn by `::before` in a colour, numbers with a leading zero,
# markers inside the text's box.
LAYOUTS = {
    **PAGE_LAYOUTS,
    "webstyled": (
        "@page { size: A4; margin: 18mm 20mm; }\n"
        "html { font-family: 'DejaVu Sans', sans-serif; font-size: 10pt; line-height: 1.6; color: #222; }\n"
        "body { margin: 0; }\n"
        "h1 { font-size: 1.9em; } h2 { font-size: 1.4em; } h3 { font-size: 1.15em; }\n"
        "code { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.9em; background: #eee; }\n"
        "pre { background: #f6f8fa; padding: 0.8em; }\n"
        "ul { list-style-type: square; padding-left: 1.4em; } ul ul { list-style-type: circle; }\n"
        "ul ul ul { list-style: none; } ul ul ul > li::before { content: '\\2013'; color: #c00;"
        " display: inline-block; width: 1em; margin-left: -1em; }\n"
        "ol { list-style-type: decimal-leading-zero; padding-left: 2.2em; }\n"
        "ol ol { list-style-type: lower-roman; }\n"
        "li::marker { color: #06c; }\n"
        "blockquote ul { list-style-position: inside; padding-left: 0; }\n"
    ),
}


def _pandoc(source: Path, to: str) -> str:
    args = ["pandoc", "-f", "rst", "-t", to, "--wrap=none", f"--lua-filter={FILTER}", str(source)]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def build() -> None:
    """cases/NAME.rst, and from it by pandoc the page (NAME.html) and the reference (NAME.md)."""
    CASES.mkdir(exist_ok=True)
    for name, rst in documents().items():
        source = CASES / f"{name}.rst"
        source.write_text(rst)
        (CASES / f"{name}.html").write_text(page(name, _pandoc(source, "html5")))
        (CASES / f"{name}.md").write_text(_pandoc(source, "gfm"))


def print_pdfs() -> None:
    """Every document in every layout: NAME.LAYOUT.pdf."""
    print_variants(CASES, CACHE, LAYOUTS)


_FIGURES = ("list_recall", "list_depth_correct", "text_fidelity", "reading_order", "heading_recall")


def score() -> int:
    rows = convert_and_score(CACHE / "pdf", CACHE / "out", CASES)
    for r in rows:
        r["layout"] = r["variant"]
    print("| layout | docs | list items | pooled | nesting | text | order | headings |")
    print("| --- | ---: | --- | --- | --- | --- | --- | --- |")
    groups: dict[str, list[dict[str, list[float]]]] = {}
    for r in rows:
        groups.setdefault(r["layout"], []).append(r)

    def mean(rs: list[dict[str, list[float]]], k: str) -> float:
        vals = [r[k][0] / r[k][1] for r in rs if r.get(k) and r[k][1]]
        return sum(vals) / len(vals) if vals else float("nan")

    for layout, rs in sorted(groups.items()):
        hit = sum(int(r["list_recall"][0]) for r in rs)
        total = sum(int(r["list_recall"][1]) for r in rs)
        print(
            f"| {layout} | {len(rs)} | {mean(rs, 'list_recall'):.3f} | {hit}/{total} |"
            f" {mean(rs, 'list_depth_correct'):.3f} | {mean(rs, 'text_fidelity'):.3f} |"
            f" {mean(rs, 'reading_order'):.3f} | {mean(rs, 'heading_recall'):.3f} |"
        )
    print()
    for r in rows:
        figures = ", ".join(
            f"{k} {r[k][0]:.3f}" if k == "text_fidelity" else f"{k} {r[k][0]}/{r[k][1]}" for k in _FIGURES if r.get(k)
        )
        print(f"{r['name']}.{r['layout']}: {figures}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    return run_steps(argv, build, print_pdfs, score)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
