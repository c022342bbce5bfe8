"""``python -m bench quality``: generate the PDFs, convert them with every system, score,
and write ``bench/results/quality.md`` and ``quality.json``. Stdlib only: every step runs
in a child process with the interpreter that step needs."""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from bench.paths import (
    BENCH_PYTHON,
    CASES_DIR,
    MAIN_PYTHON,
    OUTPUT_DIR,
    PDF_DIR,
    REPO_DIR,
    RESULTS_DIR,
)

ANCHORS = ("markitdown", "pymupdf4llm")
PYTHON_FOR = {
    "engine": MAIN_PYTHON,
    "engine-pdfium": MAIN_PYTHON,  # the engine with svcx-layout-pdfium (issue 29)
    "pdfminer": MAIN_PYTHON,
    "markitdown": BENCH_PYTHON,
    "pymupdf4llm": BENCH_PYTHON,
}
GOALS = {  # metric: (threshold, higher_is_better)
    "text_fidelity": (0.97, True),
    "heading_recall": (0.90, True),
    "list_recall": (0.90, True),
    "table_cell_recall": (0.85, True),
    "header_footer_leakage": (0.05, False),
}
STRUCTURE = ("heading_recall", "list_recall", "table_cell_recall", "header_footer_leakage")
LABELS = {
    "text_fidelity": "text fidelity (mean)",
    "text_fidelity_min": "text fidelity (worst document)",
    "heading_recall": "heading recall, right level",
    "heading_recall_any_level": "heading recall, any level",
    "heading_precision": "heading precision",
    "list_recall": "list item recall",
    "list_depth_correct": "list nesting right (of found items)",
    "table_cell_recall": "table cell recall",
    "table_cell_position": "table cells at right row/column",
    "header_footer_leakage": "header/footer leakage",
}


def _convert_one(system: str, case: str, timeout: float) -> dict[str, object]:
    return convert_in_child(system, PDF_DIR / f"{case}.pdf", OUTPUT_DIR / system / f"{case}.md", timeout)


def convert_in_child(
    system: str, pdf: Path, md: Path, timeout: float, password: str | None = None
) -> dict[str, object]:
    """Convert ``pdf`` to ``md`` with ``system`` in a child process killed after ``timeout``
    seconds; the run's record (``bench.runners``) is written beside it as ``.json``."""
    log = md.with_suffix(".json")
    md.unlink(missing_ok=True)
    cmd = [str(PYTHON_FOR[system]), "-m", "bench.runners", "convert", system, str(pdf), str(md)]
    if password is not None:
        cmd += ["--password", password]
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO_DIR, capture_output=True, text=True, timeout=timeout)
        lines = proc.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if lines else {"ok": False, "error": proc.stderr[-800:]}
        if proc.returncode:
            result = {"ok": False, "error": f"exit {proc.returncode}: {proc.stderr[-800:]}"}
    except subprocess.TimeoutExpired:
        result = {"ok": False, "error": f"timeout after {timeout:.0f} s"}
    result["process_s"] = time.perf_counter() - started
    log.write_text(json.dumps(result, default=str))
    return result


def run(systems: list[str], cases: list[str], jobs: int, timeout: float, argv: list[str]) -> int:
    missing = [s for s in systems if not PYTHON_FOR[s].exists()]
    if missing:
        print(f"no interpreter for {missing}: run `python -m bench setup` first", file=sys.stderr)
        return 2
    names = cases or sorted(p.stem for p in CASES_DIR.glob("*.md"))

    print("generating PDFs ...", file=sys.stderr)
    subprocess.run([str(BENCH_PYTHON), "-m", "bench.quality.generate", *names], cwd=REPO_DIR, check=True)

    for system in systems:
        (OUTPUT_DIR / system).mkdir(parents=True, exist_ok=True)
    work = [(s, c) for c in names for s in systems]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for (system, case), res in zip(work, pool.map(lambda w: _convert_one(*w, timeout), work), strict=True):
            status = "ok" if res.get("ok") else f"FAILED {str(res.get('error'))[:120]}"
            print(f"  {system:12s} {case:28s} {res.get('process_s', 0):6.1f}s {status}", file=sys.stderr)

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS_DIR / "quality.json"
    subprocess.run(
        [str(BENCH_PYTHON), "-m", "bench.quality.score", "--systems", *systems, "--out", str(json_path), *names],
        cwd=REPO_DIR,
        check=True,
    )
    data = json.loads(json_path.read_text())
    data["command"] = "python -m bench " + " ".join(shlex.quote(a) for a in argv)
    data["generated_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    data["versions"] = versions(systems, names)
    data["goals"] = {k: {"threshold": t, "higher_is_better": h} for k, (t, h) in GOALS.items()}
    data["verdict"] = _verdict(data["overall"], systems)
    json_path.write_text(json.dumps(data, ensure_ascii=False, indent=1))
    (RESULTS_DIR / "quality.md").write_text(render(data, systems))
    print((RESULTS_DIR / "quality.md").read_text())
    return 0


def versions(systems: list[str], names: list[str], out_dir: Path = OUTPUT_DIR) -> dict[str, str]:
    """Each system's version, from the first run record of it under ``out_dir``."""
    out = {}
    for s in systems:
        for case in names:
            log = out_dir / s / f"{case}.json"
            v = json.loads(log.read_text()).get("version") if log.exists() else None
            if v:
                out[s] = v
                break
    return out


def _verdict(overall: dict[str, dict[str, object]], systems: list[str]) -> dict[str, object]:
    if "engine" not in overall:
        return {}
    eng = overall["engine"]
    goals = {}
    for metric, (threshold, higher) in GOALS.items():
        v = eng.get(metric)
        goals[metric] = v is not None and (v >= threshold if higher else v <= threshold)
    beats = {}
    for metric in STRUCTURE:
        higher = GOALS[metric][1]
        v = eng.get(metric)
        for anchor in (a for a in ANCHORS if a in overall):
            w = overall[anchor].get(metric)
            if v is None:
                beats[f"{metric} vs {anchor}"] = "no"
            elif w is None or (v > w if higher else v < w):
                beats[f"{metric} vs {anchor}"] = "yes"
            else:
                beats[f"{metric} vs {anchor}"] = "tie" if abs(v - w) < 1e-9 else "no"
    # A tie only happens against a perfect anchor (100% recall, 0% leakage), which cannot
    # be beaten; it is shown as such and does not fail the verdict.
    return {
        "goals_met": goals,
        "beats_anchors": beats,
        "all_passed": all(goals.values()) and "no" not in beats.values(),
    }


def _fmt(v: object, pct: bool = False) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v * 100:.1f}%" if pct else f"{v:.3f}"
    return str(v)


def _frac(counts: list[int]) -> str:
    hit, total = counts
    return "-" if not total else f"{hit}/{total}"


def render(data: dict[str, object], systems: list[str]) -> str:
    overall: dict[str, dict[str, object]] = data["overall"]  # type: ignore[assignment]
    docs: dict[str, dict[str, object]] = data["documents"]  # type: ignore[assignment]
    versions: dict[str, str] = data["versions"]  # type: ignore[assignment]
    lines = [
        "# Conversion quality benchmark",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} "
        f"({platform.machine()}, Python {platform.python_version()}). "
        f"{len(docs)} documents, {sum(int(d['pages']) for d in docs.values())} pages, "
        "rendered by WeasyPrint from the Markdown in `bench/quality/cases/`.",
        "",
        "Systems: " + ", ".join(f"`{s}` ({versions.get(s, '?')})" for s in systems) + ".",
        "pymupdf4llm runs with `header=False, footer=False`; markitdown with its defaults.",
        "Every system's Markdown is scored by the same code (`bench/quality/score.py`).",
        "",
        "## Overall",
        "",
        "| metric | goal | " + " | ".join(systems) + " |",
        "| --- | --- | " + " | ".join("---" for _ in systems) + " |",
    ]
    for metric, label in LABELS.items():
        goal = ""
        if metric in GOALS:
            t, higher = GOALS[metric]
            goal = (">= " if higher else "<= ") + (f"{t:.2f}" if metric == "text_fidelity" else f"{t * 100:.0f}%")
        cells = []
        for s in systems:
            v = overall[s].get(metric)
            counts = overall[s]["counts"].get(metric)  # type: ignore[union-attr]
            txt = _fmt(v, pct=metric != "text_fidelity" and metric != "text_fidelity_min")
            if counts:
                txt += f" ({counts[0]}/{counts[1]})"
            cells.append(txt)
        lines.append(f"| {label} | {goal} | " + " | ".join(cells) + " |")
    lines.append(
        "| failed documents | 0 | " + " | ".join(str(len(overall[s]["failed_documents"])) for s in systems) + " |"
    )  # type: ignore[arg-type]
    lines.append(
        "| conversion time, all documents (s, in-process wall) | | "
        + " | ".join(f"{float(overall[s].get('seconds') or 0):.1f}" for s in systems)
        + " |"
    )  # type: ignore[arg-type]
    verdict = data.get("verdict") or {}
    if verdict:
        lines += ["", "## Engine verdict", ""]
        for metric, ok in verdict["goals_met"].items():  # type: ignore[union-attr]
            lines.append(f"- goal {LABELS[metric]}: {'met' if ok else '**NOT met**'}")
        for what, ok in verdict["beats_anchors"].items():  # type: ignore[union-attr]
            shown = {"yes": "yes", "tie": "tie (the anchor is perfect here)", "no": "**no**"}[ok]
            lines.append(f"- better than anchor on {what}: {shown}")
        lines.append(f"- all passed: {'yes' if verdict['all_passed'] else '**no**'}")
    lines += [
        "",
        "## Per document",
        "",
        "fid = text fidelity; H = headings at right level; L = list items; T = table cells; "
        "leak = header/footer strings leaked (found/printed). `-` = the document has none.",
        "",
    ]
    head = "| document | pages | " + " | ".join(f"{s} fid / H / L / T / leak" for s in systems) + " |"
    lines += [head, "| --- | ---: | " + " | ".join("---" for _ in systems) + " |"]
    for name, d in docs.items():
        cells = []
        for s in systems:
            r = d[s]  # type: ignore[index]
            fracs = [
                _frac(r["counts"][k])
                for k in ("heading_recall", "list_recall", "table_cell_recall", "header_footer_leakage")
            ]
            cell = f"{r['text_fidelity']:.3f} / " + " / ".join(fracs)
            if not r["ok"]:
                cell = "FAILED: " + str(r["error"])[:60].replace("|", "/").replace("\n", " ")
            cells.append(cell)
        lines.append(f"| {name} | {d['pages']} | " + " | ".join(cells) + " |")
    if "engine" in systems:
        lines += ["", "## What the engine missed (examples)", ""]
        for name, d in docs.items():
            miss = d["engine"]["missed"]  # type: ignore[index]
            parts = []
            for k in ("headings", "list_items", "spurious_headings", "tables", "leaked", "text"):
                if miss.get(k):
                    shown = "; ".join(miss[k][:4]) + (f"; ... ({len(miss[k])} in all)" if len(miss[k]) > 4 else "")
                    parts.append(f"{k.replace('_', ' ')}: {shown}".replace("|", "/"))
            if parts:
                lines.append(f"- **{name}**: " + " | ".join(parts))
    return "\n".join(lines) + "\n"


def rerender() -> int:
    data = json.loads((RESULTS_DIR / "quality.json").read_text())
    systems = list(data["overall"])
    data["verdict"] = _verdict(data["overall"], systems)
    (RESULTS_DIR / "quality.json").write_text(json.dumps(data, ensure_ascii=False, indent=1))
    (RESULTS_DIR / "quality.md").write_text(render(data, systems))
    return 0


__all__ = ["convert_in_child", "render", "rerender", "run", "versions"]
