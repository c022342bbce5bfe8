"""``python -m bench.webdocs``: a development set of the web families made from real documents,
the Node.js API documentation Debian ships (``/usr/share/doc/nodejs/api/*.md``), printed as the
authored corpus prints its web pages. Stdlib only here; each step runs with the interpreter it
needs.

    python -m bench.webdocs build   # pandoc: normalised AST -> reference (GFM) + HTML page per part
    python -m bench.webdocs print   # Chromium, A4, in the families' CSS -> bench/.cache/webdocs/pdf/
    python -m bench.webdocs check   # the corpus's checks (1-30 pages, word sets >= 80% both ways)
    python -m bench.webdocs score   # the engine and pymupdf4llm, scored by bench/real/score.py,
                                    # -> bench/results/webdocs.md (and webdocs.json)
    python -m bench.webdocs render  # the report again from bench/results/webdocs.json
    python -m bench.webdocs all     # build, print, check and score in turn

See ``bench/webdocs/README.md``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.chromium import print_to_pdf
from bench.paths import BENCH_PYTHON, REPO_DIR, RESULTS_DIR
from bench.quality.run import convert_in_child
from bench.real.run import GOALS, OVERVIEW, SHORT, service_time_limit
from bench.real.score import summarise
from bench.tables_web.cases import LAYOUTS, STYLES, page, styled
from bench.webdocs.check import running_header
from bench.webdocs.normalise import blocks, pandoc_json, pandoc_write, plain_text, split

SOURCE_DIR = Path(os.environ.get("SVCX_NODEJS_DOCS", "/usr/share/doc/nodejs/api"))
LICENCE = "MIT (Node.js contributors; /usr/share/doc/nodejs/copyright)"
CACHE = REPO_DIR / "bench" / ".cache" / "webdocs"
RESULT = RESULTS_DIR / "webdocs.md"
FAMILIES = ("web", "web2col", "webreport")
SYSTEMS = ("engine", "pymupdf4llm")
# A page longer than this (characters of its normalised pandoc JSON AST, about 9,000 to a
# printed page of `web`) is cut into parts at its sections (normalise.split): 25 to 30 pages
# of `web` at the most, fewer in the denser families.
MAX_PART_AST_CHARS = 200_000
# `webreport`: the corpus's report style (read from its tune fold's PDFs: Liberation Sans
# 10.5 pt, headings in dark blue, an 8.5 pt grey running header and "Page N of M" footer).
REPORT_CSS = (
    "@page { size: A4; margin: 25mm 24mm 22mm 24mm;\n"
    "  @top-center { content: HEADER; font: 8.5pt 'Liberation Sans', sans-serif; color: #555; }\n"
    "  @bottom-right { content: 'Page ' counter(page) ' of ' counter(pages);"
    " font: 8.5pt 'Liberation Sans', sans-serif; color: #555; } }\n"
    "html { font-family: 'Liberation Sans', sans-serif; font-size: 10.5pt; line-height: 1.4; color: #000; }\n"
    "body { margin: 0; }\n"
    "h1, h2, h3, h4, h5, h6 { color: #17365d; }\n"
    "h1 { font-size: 1.5em; } h2 { font-size: 1.17em; } h3 { font-size: 1.05em; }\n"
    "code { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.88em; }\n"
    "pre { background: #f4f4f4; padding: 0.6em; font-size: 0.81em; }\n"
)


def family_css(family: str, title: str) -> str:
    """The page CSS of ``family`` (with the corpus's table style, every cell ruled)."""
    if family == "webreport":
        quoted = '"' + running_header(title).replace("\\", "\\\\").replace('"', '\\"') + '"'
        return REPORT_CSS.replace("HEADER", quoted) + STYLES["grid"]
    return LAYOUTS[family] + STYLES["grid"]


def _count(node: object, kind: str) -> int:
    if isinstance(node, dict):
        return (node.get("t") == kind) + sum(_count(v, kind) for v in node.values())
    if isinstance(node, list):
        return sum(_count(v, kind) for v in node)
    return 0


def build() -> None:
    """Each source page normalised, cut into parts, written as reference and HTML page; the
    manifest says which families print each part: a part with tables in all three, the others
    in turn (as the corpus spreads a source's documents)."""
    for sub in ("ref", "html"):
        (CACHE / sub).mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict[str, object]] = {}
    turn = 0
    for src in sorted(SOURCE_DIR.glob("*.md")):
        ast = pandoc_json(src.read_text(encoding="utf-8"), "gfm")
        parts = split(blocks(ast["blocks"]), MAX_PART_AST_CHARS)
        for i, part in enumerate(parts):
            name = f"nodejs-{src.stem}" + (f"-{i + 1}" if len(parts) > 1 else "")
            doc = {**ast, "blocks": part}
            heads = [b for b in part if b["t"] == "Header"]
            title = plain_text(heads[0]["c"][2]) if heads else src.stem
            (CACHE / "ref" / f"{name}.md").write_text(pandoc_write(doc, ["-t", "gfm", "--wrap=none"]))
            (CACHE / "html" / f"{name}.html").write_text(page(title, pandoc_write(doc, ["-t", "html5"])))
            tables = _count(part, "Table")
            if tables:
                families = list(FAMILIES)
            else:
                families = [FAMILIES[turn % len(FAMILIES)]]
                turn += 1
            manifest[name] = {
                "source": f"nodejs/api/{src.name}",
                "part": [i + 1, len(parts)],
                "title": title,
                "tables": tables,
                "families": families,
                "licence": LICENCE,
            }
        print(f"{src.name}: {len(parts)} part(s)", file=sys.stderr)
    (CACHE / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))


def print_pdfs(names: list[str]) -> None:
    manifest = json.loads((CACHE / "manifest.json").read_text())
    for family in FAMILIES:
        (CACHE / "pdf" / family).mkdir(parents=True, exist_ok=True)
    (CACHE / "styled").mkdir(exist_ok=True)
    for name, record in manifest.items():
        if names and name not in names:
            continue
        source = (CACHE / "html" / f"{name}.html").read_text()
        for family in record["families"]:
            styled_page = CACHE / "styled" / f"{name}.{family}.html"
            styled_page.write_text(styled(source, family_css(family, record["title"])))
            print_to_pdf(styled_page, CACHE / "pdf" / family / f"{name}.pdf")
        print(f"printed {name} ({', '.join(record['families'])})", file=sys.stderr)


def check() -> None:
    subprocess.run([str(BENCH_PYTHON), "-m", "bench.webdocs.check", str(CACHE)], cwd=REPO_DIR, check=True)


def _kept() -> list[dict[str, object]]:
    checked = json.loads((CACHE / "checked.json").read_text())
    return [d for d in checked if d["kept"]]


def score(argv: list[str], reuse: bool, anchor_budget_s: float | None) -> int:
    """Every kept PDF converted by each system in its own child process (killed at the service's
    time limit), scored by ``bench.real.score`` and summarised per family in
    ``bench/results/webdocs.md``. The engine converts every part again unless ``reuse``; an
    anchor's outputs are kept from an earlier run, and it converts the parts with tables first,
    for at most ``anchor_budget_s`` seconds (it is slow: about a second a page here)."""
    docs = _kept()
    limit = service_time_limit()
    out_dir = CACHE / "out"
    for s in SYSTEMS:
        (out_dir / s).mkdir(parents=True, exist_ok=True)
    tables = {name: int(r["tables"]) for name, r in json.loads((CACHE / "manifest.json").read_text()).items()}
    for s in SYSTEMS:  # the engine over the whole set first: its outputs can be read meanwhile
        started = time.monotonic()
        for d in sorted(docs, key=lambda d: s == "engine" or not tables[str(d["name"])]):
            doc_id = f"{d['family']}__{d['name']}"
            if (s != "engine" or reuse) and (out_dir / s / f"{doc_id}.json").exists():
                continue
            if s != "engine" and anchor_budget_s is not None and time.monotonic() - started > anchor_budget_s:
                break
            res = convert_in_child(s, Path(str(d["pdf"])), out_dir / s / f"{doc_id}.md", limit)
            status = "ok" if res.get("ok") else f"FAILED {str(res.get('error'))[:120]}"
            print(f"  {s:12s} {doc_id:50s} {res.get('process_s', 0):6.1f}s {status}", file=sys.stderr)
    plan = {
        "output_dir": str(out_dir),
        "systems": list(SYSTEMS),
        "documents": [
            {
                "id": f"{d['family']}__{d['name']}",
                "set": f"webdocs-{d['family']}",
                "name": d["name"],
                "fold": "tune",
                "reference": d["reference"],
                "running": d["running"],
                "pages": d["pages"],
            }
            for d in docs
        ],
    }
    plan_path = CACHE / "plan.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    json_path = RESULTS_DIR / "webdocs.json"
    subprocess.run(
        [str(BENCH_PYTHON), "-m", "bench.real.score", str(plan_path), "--out", str(json_path)], cwd=REPO_DIR, check=True
    )
    data = json.loads(json_path.read_text())
    data["command"] = "python -m bench.webdocs " + " ".join(shlex.quote(a) for a in argv)
    data["generated_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    data["checked"] = json.loads((CACHE / "checked.json").read_text())
    json_path.write_text(json.dumps(data, ensure_ascii=False, indent=1))
    return write_result(data)


def write_result(data: dict[str, object]) -> int:
    """``bench/results/webdocs.md`` from a scored run, the hand-written diagnosis kept."""
    previous = RESULT.read_text() if RESULT.exists() else ""
    tail = DIAGNOSIS + previous.split(DIAGNOSIS, 1)[1] if DIAGNOSIS in previous else ""
    RESULT.write_text(render(data) + tail)
    print(render(data))
    return 0


# What follows this heading in webdocs.md is written by hand and kept when `score` runs again.
DIAGNOSIS = "\n## Diagnosis"


def _fmt(v: object) -> str:
    return "-" if v is None else f"{float(v):.2f}"  # type: ignore[arg-type]


def _version(system: str) -> str:
    """The version a system's run records report (the first that says)."""
    for log in sorted((CACHE / "out" / system).glob("*.json")):
        version = json.loads(log.read_text()).get("version")
        if version:
            return str(version)
    return "?"


def _cells(means: list[dict[str, float | None]], goals: dict[str, float]) -> str:
    out = []
    for m in OVERVIEW:
        g = goals.get(m)
        out.append(" / ".join(_fmt(x[m]) for x in means) + ("" if g is None else f" ({g:.2f})"))
    return " | ".join(out) + " |"


def render(data: dict[str, object]) -> str:
    docs: dict[str, dict[str, object]] = data["documents"]  # type: ignore[assignment]
    checked: list[dict[str, object]] = data["checked"]  # type: ignore[assignment]
    manifest = json.loads((CACHE / "manifest.json").read_text())
    head = " | ".join(SHORT[m] for m in OVERVIEW) + " |"
    rule = " | ".join("---" for _ in OVERVIEW) + " |"
    lines = [
        "# Node.js API documentation printed as the web families (a real tune set)",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']}; how the set is made: "
        "`bench/webdocs/README.md`. Scores by `bench/real/score.py`, as `bench/results/real.md`: "
        "means over the documents where a metric is defined; table cells in the right row and "
        "column; in brackets the engine's goal on the authored corpus's family.",
        "",
        "Systems: "
        + ", ".join(f"`{s}` ({_version(s)})" for s in SYSTEMS)
        + "; each document converted in its own child process, killed at the service's time limit.",
        "",
        "## The engine on the whole set",
        "",
        "| family | docs | pages | tables | " + head,
        "| --- | ---: | ---: | ---: | " + rule,
    ]
    pairs = []
    for family in FAMILIES:
        rows = [d for d in docs.values() if d["set"] == f"webdocs-{family}"]
        if not rows:
            continue
        in_set = [d for d in checked if d["kept"] and d["family"] == family]
        pages = sum(int(d["pages"]) for d in in_set)  # type: ignore[call-overload]
        tables = sum(int(manifest[str(d["name"])]["tables"]) for d in in_set)
        goals = GOALS[f"authored-{family}"]
        engine = summarise([d["engine"] for d in rows])  # type: ignore[misc]
        lines.append(f"| {family} | {len(rows)} | {pages} | {tables} | " + _cells([engine["mean"]], goals))  # type: ignore[list-item]
        both = [d for d in rows if d["pymupdf4llm"]["ok"]]  # type: ignore[index]
        if both:
            means = [summarise([d[s] for d in both])["mean"] for s in SYSTEMS]  # type: ignore[misc]
            n_tables = sum(int(manifest[str(d["name"])]["tables"]) for d in both)
            pairs.append(f"| {family} | {len(both)} | {n_tables} | " + _cells(means, goals))  # type: ignore[arg-type]
    lines += [
        "",
        "## The engine / pymupdf4llm, on the documents pymupdf4llm converted",
        "",
        "pymupdf4llm takes about a second a page here; `score` gives it the parts with tables first and",
        "a time budget (`--anchor-seconds`), so it may not have converted every part.",
        "",
        "| family | docs | tables | " + head,
        "| --- | ---: | ---: | " + rule,
        *pairs,
    ]
    dropped = [d for d in checked if not d["kept"]]
    if dropped:
        lines += [
            "",
            "Left out by the checks: " + "; ".join(f"{d['family']}/{d['name']} ({d['reason']})" for d in dropped) + ".",
        ]
    lines += ["", "Per document (engine): table cells, lists, exact heading level, reading order, text.", ""]
    lines += [
        "| document | family | pages | cells | lists | level | order | text |",
        "| --- | --- | ---: | --- | --- | --- | --- | --- |",
    ]
    for d in docs.values():
        e: dict[str, object] = d["engine"]  # type: ignore[assignment]
        counts: dict[str, list[int]] = e["counts"]  # type: ignore[assignment]
        row = [
            "-" if not counts[m][1] else f"{counts[m][0]}/{counts[m][1]}"
            for m in ("table_cells", "list_recall", "heading_level", "reading_order")
        ]
        family = str(d["set"]).removeprefix("webdocs-")
        text = f"{float(e['text_fidelity']):.2f}"  # type: ignore[arg-type]
        lines.append(f"| {d['name']} | {family} | {d.get('pages') or ''} | " + " | ".join(row) + f" | {text} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    step = argv[0] if argv else "all"
    names = argv[1:]
    if step in ("build", "all"):
        build()
    if step in ("print", "all"):
        print_pdfs([n for n in names if not n.startswith("-")])
    if step in ("check", "all"):
        check()
    if step == "render":  # the report again from bench/results/webdocs.json, converting nothing
        return write_result(json.loads((RESULTS_DIR / "webdocs.json").read_text()))
    if step in ("score", "all"):
        budget = next((float(a.split("=", 1)[1]) for a in names if a.startswith("--anchor-seconds=")), None)
        return score(argv, reuse="--reuse" in names, anchor_budget_s=budget)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
