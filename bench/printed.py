"""Development documents printed to PDF here (`bench.tables_web`, `bench.lists_web`): each
printed variant converted by the engine (the service's venv) and scored against its case's
reference by `bench/real/score.py` (the bench venv)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bench.chromium import print_to_pdf
from bench.paths import BENCH_PYTHON, MAIN_PYTHON, REPO_DIR
from bench.tables_web.cases import styled

_CONVERT = """
import sys
from pathlib import Path
from conversion.engine import ConvertOptions, convert
options = ConvertOptions(engine=sys.argv[2]) if sys.argv[2] else ConvertOptions()
for pdf in sys.argv[3:]:
    out = Path(sys.argv[1]) / (Path(pdf).stem + ".md")
    out.write_text(convert(pdf, options=options).markdown)
"""

_SCORE = """
import json, sys
from pathlib import Path
from bench.quality.mdparse import parse
from bench.real.score import structure, text_fidelity
rows = []
for md in sorted(Path(sys.argv[1]).glob("*.md")):
    name, variant = md.stem.split(".", 1)
    ref = (Path(sys.argv[2]) / f"{name}.md").read_text()
    counts = structure(ref, md.read_text())
    rows.append({"name": name, "variant": variant,
                 "text_fidelity": [text_fidelity(parse(ref), parse(md.read_text())), 1],
                 **{k: [c.hit, c.total] for k, c in counts.items()}})
print(json.dumps(rows))
"""


def print_variants(cases: Path, cache: Path, variants: dict[str, str]) -> None:
    """Every page `cases/NAME.html` with the CSS of each variant put in its head, printed by
    Chromium: `cache/pdf/NAME.VARIANT.pdf` (the styled page beside it, in `cache/html`)."""
    for sub in ("html", "pdf"):
        (cache / sub).mkdir(parents=True, exist_ok=True)
    for source in sorted(cases.glob("*.html")):
        for variant, css in variants.items():
            page = cache / "html" / f"{source.stem}.{variant}.html"
            page.write_text(styled(source.read_text(), css))
            print_to_pdf(page, cache / "pdf" / f"{source.stem}.{variant}.pdf")


def convert_and_score(pdf_dir: Path, out_dir: Path, cases: Path, engine: str = "") -> list[dict[str, object]]:
    """Every `pdf_dir/NAME.VARIANT.pdf` converted to `out_dir/NAME.VARIANT.md` (by the engine
    `engine`, the service's default where empty) and scored against `cases/NAME.md`: one row
    per PDF, its name, variant and every figure of the real bench as [hit, total] (text
    fidelity as [score, 1])."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pdfs = sorted(str(p) for p in pdf_dir.glob("*.pdf"))
    subprocess.run([str(MAIN_PYTHON), "-c", _CONVERT, str(out_dir), engine, *pdfs], cwd=REPO_DIR, check=True)
    res = subprocess.run(
        [str(BENCH_PYTHON), "-c", _SCORE, str(out_dir), str(cases)],
        cwd=REPO_DIR,
        check=True,
        capture_output=True,
        text=True,
    )
    rows: list[dict[str, object]] = json.loads(res.stdout)
    return rows


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


def print_scores(rows: list[dict[str, object]], variants: list[str]) -> int:
    """The means of `convert_and_score`'s rows per variant (and over all) as a Markdown table
    on stdout; each document's figures on stderr."""
    groups: dict[str, list[dict[str, list[float]]]] = {}
    for r in rows:
        groups.setdefault(str(r["variant"]), []).append(r)  # type: ignore[arg-type]
        groups.setdefault("all", []).append(r)  # type: ignore[arg-type]

    def mean(rs: list[dict[str, list[float]]], k: str) -> str:
        vals = [r[k][0] / r[k][1] for r in rs if r.get(k) and r[k][1]]
        return f"{sum(vals) / len(vals):.3f}" if vals else "-"

    print("| style | docs | " + " | ".join(label for label, _ in _FIGURES) + " |")
    print("| --- | ---: |" + " --- |" * len(_FIGURES))
    for variant in [*variants, "all"]:
        rs = groups.get(variant, [])
        print(f"| {variant} | {len(rs)} | " + " | ".join(mean(rs, k) for _, k in _FIGURES) + " |")
    for r in rows:
        figures = ", ".join(
            f"{label} {r[k][0]:.3f}" if k == "text_fidelity" else f"{label} {r[k][0]:g}/{r[k][1]:g}"  # type: ignore[index]
            for label, k in _FIGURES
            if r.get(k)
        )
        print(f"{r['name']}.{r['variant']}: {figures}", file=sys.stderr)
    return 0


def run_steps(
    argv: list[str], build: Callable[[], None], print_pdfs: Callable[[], None], score: Callable[[], int]
) -> int:
    """The command line of such a set: `build`, `print`, `score`, or all three (no argument)."""
    step = argv[0] if argv else "all"
    if step in ("build", "all"):
        build()
    if step in ("print", "all"):
        print_pdfs()
    if step in ("score", "all"):
        return score()
    return 0


def run_styled_set(argv: list[str], build: Callable[[], None], cases: Path, cache: Path, styles: dict[str, str]) -> int:
    """The command line of a set of pages printed in several styles (`bench.styles_web`,
    `bench.styles_rtl`): `build` writes `cases`, each page is printed in every style of
    `styles` under `cache`, and scored per style (`score --engine ID`: by that engine, its
    outputs in `cache/out-ID`)."""
    engine = argv[argv.index("--engine") + 1] if "--engine" in argv[:-1] else ""
    out = cache / (f"out-{engine}" if engine else "out")
    return run_steps(
        [a for a in argv if a not in ("--engine", engine)],
        build,
        lambda: print_variants(cases, cache, styles),
        lambda: print_scores(convert_and_score(cache / "pdf", out, cases, engine), list(styles)),
    )
