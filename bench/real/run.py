"""``python -m bench real``: convert the real-document sets with every system, score them,
and write ``bench/results/real.md`` and ``real.json``. Stdlib only: conversions run in child
processes of the interpreter each system needs (``bench.quality.run.convert_in_child``), each
killed at the service's conversion time limit; scoring runs in the bench venv."""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from bench.paths import BENCH_PYTHON, MAIN_PYTHON, REAL_CACHE, REPO_DIR, RESULTS_DIR
from bench.quality.run import ANCHORS, PYTHON_FOR, convert_in_child, versions
from bench.real.score import METRICS
from bench.real.sets import FOLDS, HELD_OUT, load

SYSTEMS = ("engine", *ANCHORS)
# The engine's goals per set (issue 24): metric -> minimum.
_WEB = {"text_fidelity": 0.97, "list_recall": 0.85, "table_cells": 0.80, "heading_level": 0.90}
GOALS = {
    "docx": {
        "text_fidelity": 0.95,
        "heading_recall": 0.95,
        "heading_precision": 0.90,
        "heading_level": 0.80,
        "heading_hierarchy": 0.95,
        "list_recall": 0.90,
        "table_cells": 0.85,
    },
    "docling": {
        "text_fidelity": 0.85,
        "reading_order": 0.80,
        "heading_recall": 0.85,
        "heading_precision": 0.85,
        "list_recall": 0.60,
        "table_cells": 0.40,
    },
    "authored-word": {
        "text_fidelity": 0.93,
        "heading_precision": 0.90,
        "heading_level": 0.80,
        "heading_hierarchy": 0.95,
        "list_recall": 0.90,
        "table_cells": 0.85,
    },
    "authored-web": _WEB,
    "authored-web2col": {**_WEB, "text_fidelity": 0.95},
    "authored-webreport": _WEB,
    "authored-rtl": {"text_fidelity": 0.93, "list_recall": 0.85, "table_cells": 0.80},
}
# Metrics of the per-family, per-fold overview (the ones every family's goals name).
OVERVIEW = (
    "text_fidelity",
    "reading_order",
    "heading_precision",
    "heading_level",
    "list_recall",
    "table_cells",
    "furniture_leaked",
)
SET_TITLES = {
    "docx": "Word documents rendered by LibreOffice, the author's structure as reference (`../shared/corpus/docx/`)",
    "docling": "real corpus, docling's Markdown as reference (`../shared/corpus/real/groundtruth/docling__*`)",
    "authored-word": "Word and ODF documents rendered by LibreOffice, pandoc's reading as reference",
    "authored-web": "web documentation printed by Chromium, one serif column",
    "authored-web2col": "web documentation printed by Chromium in two columns",
    "authored-webreport": "web documentation printed by Chromium, report style with running header and footer",
    "authored-rtl": "right-to-left documentation (Arabic, Persian, Hebrew) printed by Chromium",
}
NOTES = {
    "docx": "The reference gives Word's styles their own levels: Title `#`, Heading 1 `##`, Heading 2 `###`.",
    "docling": "Docling writes every section heading as `##` (a title `#`), so exact level and hierarchy "
    "say little here and have no goal.",
}
SHORT = {
    "text_fidelity": "text",
    "reading_order": "order",
    "heading_recall": "H rec",
    "heading_precision": "H prec",
    "heading_level": "level",
    "heading_hierarchy": "hier",
    "list_recall": "lists",
    "list_depth_correct": "nest",
    "table_cells": "cells",
    "table_cells_any_position": "cells any",
    "furniture_leaked": "leaked",
}


def service_time_limit() -> float:
    """``SVCX_CONVERSION_TIME_LIMIT`` as the service reads it (settings, environment included)."""
    code = "import svcx.settings as s; print(s.SVCX_CONVERSION_TIME_LIMIT)"
    out = subprocess.run([str(MAIN_PYTHON), "-c", code], cwd=REPO_DIR, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def installed(system: str) -> bool:
    """Whether ``system`` can run: its interpreter exists and can import it."""
    python = PYTHON_FOR[system]
    if not python.exists():
        return False
    module = "conversion.engine" if system.startswith("engine") else system
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([str(python), "-c", probe], cwd=REPO_DIR, capture_output=True).returncode == 0


def run(
    systems: list[str],
    sets: list[str],
    names: list[str],
    jobs: int,
    timeout: float | None,
    argv: list[str],
    fold: str = "all",
    convert: list[str] | None = None,
) -> int:
    if not BENCH_PYTHON.exists():
        print("the scorer needs the bench venv: run `python -m bench setup` first", file=sys.stderr)
        return 2
    not_installed = [s for s in systems if not installed(s)]
    for s in not_installed:
        print(f"{s} is not installed (python -m bench setup): left out of this run", file=sys.stderr)
    systems = [s for s in systems if s not in not_installed]
    limit = timeout if timeout is not None else service_time_limit()
    docs, left_out = load(sets, fold)
    if names:
        docs = [d for d in docs if d.name in names or d.id in names]
    # Only a run of everything is the record (real.md); a part of it is written beside it.
    stem = "real" if not names and fold == "all" and set(sets) >= {"docx", "docling", "authored"} else "real-partial"
    if not docs:
        print("no documents selected", file=sys.stderr)
        return 2

    out_dir = REAL_CACHE / "out"
    for s in systems:
        (out_dir / s).mkdir(parents=True, exist_ok=True)
    # Systems not in ``convert`` are scored on their outputs of an earlier run (an anchor's
    # outputs do not change when the engine does); a document it has no record of is converted.
    again = systems if convert is None else [s for s in systems if s in convert]
    work = [(s, d) for d in docs for s in systems if s in again or not (out_dir / s / f"{d.id}.json").exists()]

    def one(item: tuple[str, object]) -> dict[str, object]:
        s, d = item
        return convert_in_child(s, d.pdf, out_dir / s / f"{d.id}.md", limit, d.password)  # type: ignore[attr-defined]

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for (s, d), res in zip(work, pool.map(one, work), strict=True):
            status = "ok" if res.get("ok") else f"FAILED {str(res.get('error'))[:120]}"
            print(f"  {s:12s} {d.id:45s} {res.get('process_s', 0):6.1f}s {status}", file=sys.stderr)

    plan = {
        "output_dir": str(out_dir),
        "systems": systems,
        "documents": [
            {
                "id": d.id,
                "set": d.set,
                "name": d.name,
                "fold": d.fold,
                "reference": str(d.reference),
                "running": dict(d.running),
                "pages": d.pages,
            }
            for d in docs
        ],
    }
    plan_path = REAL_CACHE / "plan.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS_DIR / f"{stem}.json"
    previous = json.loads(json_path.read_text()) if json_path.exists() else {}
    subprocess.run(
        [str(BENCH_PYTHON), "-m", "bench.real.score", str(plan_path), "--out", str(json_path)], cwd=REPO_DIR, check=True
    )
    data = json.loads(json_path.read_text())
    data = {
        "command": "python -m bench " + " ".join(shlex.quote(a) for a in argv),
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "time_limit_s": limit,
        "systems": systems,
        "not_installed": not_installed,
        "versions": versions(systems, [d.id for d in docs], out_dir),
        "left_out": left_out,
        "goals": GOALS,
        **data,
    }
    data["history"] = history(previous, data)
    json_path.write_text(json.dumps(data, ensure_ascii=False, indent=1))
    (RESULTS_DIR / f"{stem}.md").write_text(render(data))
    print((RESULTS_DIR / f"{stem}.md").read_text())
    return 0


def _engine_figures(data: dict[str, object]) -> dict[str, dict[str, dict[str, float | None]]]:
    """The engine's overview figures of a run: set -> fold (and ``all``) -> metric -> mean."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    sets: dict[str, dict[str, object]] = data.get("sets", {})  # type: ignore[assignment]
    folds: dict[str, dict[str, dict[str, object]]] = data.get("folds", {})  # type: ignore[assignment]
    for set_name, per_system in sets.items():
        if "engine" not in per_system:
            continue
        by_fold = {"all": per_system["engine"], **{f: v["engine"] for f, v in folds.get(set_name, {}).items()}}
        out[set_name] = {f: {m: summary["mean"].get(m) for m in OVERVIEW} for f, summary in by_fold.items()}  # type: ignore[index, union-attr]
    return out


def history(previous: dict[str, object], data: dict[str, object]) -> list[dict[str, object]]:
    """The engine's figures by engine version: the previous runs' list, this run's entry
    replacing one of the same engine version."""
    version = data["versions"].get("engine") if "engine" in data["systems"] else None  # type: ignore[attr-defined, operator]
    past: list[dict[str, object]] = list(previous.get("history") or [])  # type: ignore[call-overload]
    if version is None:
        return past
    entry = {"engine": version, "generated_at": data["generated_at"], "figures": _engine_figures(data)}
    return [h for h in past if h["engine"] != version] + [entry]


def _fmt(v: object) -> str:
    return "-" if v is None else f"{float(v):.2f}"  # type: ignore[arg-type]


def render(data: dict[str, object]) -> str:
    systems: list[str] = data["systems"]  # type: ignore[assignment]
    versions: dict[str, str] = data["versions"]  # type: ignore[assignment]
    sets: dict[str, dict[str, dict[str, object]]] = data["sets"]  # type: ignore[assignment]
    docs: dict[str, dict[str, object]] = data["documents"]  # type: ignore[assignment]
    lines = [
        "# Real-document quality benchmark",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} "
        f"({platform.machine()}, Python {platform.python_version()}).",
        "",
        "Systems: " + ", ".join(f"`{s}` ({versions.get(s, '?')})" for s in systems) + ". "
        f"Each document is converted in its own child process, killed after {float(data['time_limit_s']):.0f} s "  # type: ignore[arg-type]
        "(the service's conversion time limit); a failed conversion scores as empty output.",
    ]
    if data["not_installed"]:
        lines.append(
            f"Not installed, so not scored: {', '.join(data['not_installed'])} (`python -m bench setup`)."  # type: ignore[arg-type]
        )
    lines += [
        "",
        "Scores (`bench/real/score.py`, the same code for every system; matching ignores whitespace,",
        "punctuation and case; docling's `<!-- image -->` and `$...$` math are removed from the",
        "reference as noise). Each figure is the mean over the documents where it is defined",
        "(n = how many); text fidelity over all of them. Exact level counts every reference",
        "heading (one not found is not at the right level); hierarchy compares, for consecutive",
        "headings found in both, whether each step goes deeper, stays or goes shallower; reading",
        "order is the longest run of reference blocks in the reference's order over all reference",
        "blocks; table cells count in the right row and column. Furniture leaked (lower is better):",
        "of the running headers and footers the PDF prints (known where the corpus says what they",
        "are: `authored-webreport`), the share the output keeps where the reference has no such text.",
    ]
    goals: dict[str, dict[str, float]] = data["goals"]  # type: ignore[assignment]
    lines += _overview(data, goals)
    for set_name, per_system in sets.items():
        n = sum(1 for d in docs.values() if d["set"] == set_name)
        lines += [
            "",
            f"## {set_name}: {SET_TITLES.get(set_name, set_name)}",
            "",
            f"{n} documents. {NOTES.get(set_name, '')}",
            "",
        ]
        lines += [
            "| metric | goal (engine) | " + " | ".join(systems) + " |",
            "| --- | --- | " + " | ".join("---" for _ in systems) + " |",
        ]
        for metric, label in METRICS.items():
            goal = goals.get(set_name, {}).get(metric)
            cells = []
            for s in systems:
                summary = per_system[s]
                v = summary["mean"][metric]  # type: ignore[index]
                cells.append(f"{_fmt(v)} (n={summary['documents_scored'][metric]})")  # type: ignore[index]
            lines.append(f"| {label} | {'' if goal is None else f'>= {goal:.2f}'} | " + " | ".join(cells) + " |")
        failed = [sum(1 for d in docs.values() if d["set"] == set_name and not d[s]["ok"]) for s in systems]  # type: ignore[index]
        lines.append("| failed conversions | 0 | " + " | ".join(str(f) for f in failed) + " |")
        if "engine" in systems:
            lines += ["", _verdict(per_system, goals.get(set_name, {}), systems)]
        left = data["left_out"].get(set_name)  # type: ignore[union-attr]
        if left:
            lines += ["", "Left out: " + "; ".join(left) + "."]
        for s in systems:
            lines += ["", f"### {set_name}, per document: {s}", ""]
            lines += [
                "| document | pages | " + " | ".join(SHORT[m] for m in METRICS) + " |",
                "| --- | ---: | " + " | ".join("---:" for _ in METRICS) + " |",
            ]
            for d in docs.values():
                if d["set"] != set_name:
                    continue
                r: dict[str, object] = d[s]  # type: ignore[assignment]
                counts: dict[str, list[int]] = r["counts"]  # type: ignore[assignment]
                row = [f"{float(r['text_fidelity']):.2f}"]  # type: ignore[arg-type]
                row += ["-" if not t else f"{h}/{t}" for h, t in (counts[m] for m in METRICS if m != "text_fidelity")]
                name = str(d["name"]) + ("" if r["ok"] else " (FAILED: " + str(r["error"])[:50].replace("|", "/") + ")")
                lines.append(f"| {name} | {d.get('pages') or ''} | " + " | ".join(row) + " |")
        if "engine" in systems:
            lines += ["", f"### {set_name}: what the engine missed (examples)", ""]
            for d in docs.values():
                if d["set"] != set_name:
                    continue
                miss: dict[str, list[str]] = d["engine"]["missed"]  # type: ignore[index]
                parts = [f"{k}: " + "; ".join(v) for k, v in miss.items() if v]
                if parts:
                    lines.append(f"- **{d['name']}**: " + " / ".join(parts).replace("|", "/").replace("\n", " "))
    return "\n".join(lines) + "\n"


def _overview(data: dict[str, object], goals: dict[str, dict[str, float]]) -> list[str]:
    """Per set and fold, the engine beside the best anchor; then the engine by version."""
    held = ", ".join(sorted(HELD_OUT))
    lines = [
        "",
        "## Overview: per family and fold",
        "",
        f"Held out of tuning, by source: {held}. A change to the engine is kept only when the `held` "
        "rows improve and no family gets worse. Each cell: engine / pymupdf4llm (goal).",
        "",
        "| set | fold | docs | " + " | ".join(SHORT[m] for m in OVERVIEW) + " |",
        "| --- | --- | ---: | " + " | ".join("---" for _ in OVERVIEW) + " |",
    ]
    sets: dict[str, dict[str, object]] = data["sets"]  # type: ignore[assignment]
    folds: dict[str, dict[str, dict[str, object]]] = data.get("folds", {})  # type: ignore[assignment]
    docs: dict[str, dict[str, object]] = data["documents"]  # type: ignore[assignment]
    for set_name, per_system in sets.items():
        if "engine" not in per_system:
            continue
        for fold in ("all", *FOLDS):
            summary = per_system if fold == "all" else folds.get(set_name, {}).get(fold)
            if not summary:
                continue
            n = sum(1 for d in docs.values() if d["set"] == set_name and fold in ("all", d.get("fold")))
            cells = []
            for m in OVERVIEW:
                e = summary["engine"]["mean"][m]  # type: ignore[index]
                a = summary["pymupdf4llm"]["mean"][m] if "pymupdf4llm" in summary else None  # type: ignore[index]
                g = goals.get(set_name, {}).get(m)
                cell = _fmt(e) + ("" if a is None else f" / {_fmt(a)}") + ("" if g is None else f" ({g:.2f})")
                cells.append(cell)
            lines.append(f"| {set_name} | {fold} | {n} | " + " | ".join(cells) + " |")
    past: list[dict[str, object]] = data.get("history") or []  # type: ignore[assignment]
    if past:
        lines += [
            "",
            "### The engine by version (held-out fold, then all)",
            "",
            "| engine | run | set | " + " | ".join(SHORT[m] for m in OVERVIEW) + " |",
            "| --- | --- | --- | " + " | ".join("---" for _ in OVERVIEW) + " |",
        ]
        for h in past:
            figures: dict[str, dict[str, dict[str, float | None]]] = h["figures"]  # type: ignore[assignment]
            for set_name, by_fold in figures.items():
                row = []
                for m in OVERVIEW:
                    held_v, all_v = by_fold.get("held", {}).get(m), by_fold["all"].get(m)
                    row.append((f"{_fmt(held_v)} / " if "held" in by_fold else "") + _fmt(all_v))
                lines.append(f"| {h['engine']} | {h['generated_at']} | {set_name} | " + " | ".join(row) + " |")
    return lines


def _verdict(per_system: dict[str, dict[str, object]], goals: dict[str, float], systems: list[str]) -> str:
    engine = per_system["engine"]["mean"]
    met = [m for m, g in goals.items() if engine.get(m) is not None and engine[m] >= g]  # type: ignore[union-attr, operator, index]
    missed = [SHORT[m] for m in goals if m not in met]
    text = f"Engine goals met: {len(met)}/{len(goals)}" + (f" (not met: {', '.join(missed)})" if missed else "") + "."
    for anchor in (a for a in ANCHORS if a in systems):
        other = per_system[anchor]["mean"]
        ties = [m for m in goals if other.get(m) is not None and engine.get(m) == other[m]]  # type: ignore[union-attr, index]
        worse = [
            m
            for m in goals
            if m not in ties and other.get(m) is not None and (engine.get(m) is None or engine[m] < other[m])  # type: ignore[union-attr, operator, index]
        ]
        text += f" Against {anchor}: " + (
            "better on every goal metric"
            if not worse and not ties
            else f"not better on {', '.join(SHORT[m] for m in worse + ties)}"
        )
        text += f" (tied: {', '.join(SHORT[m] for m in ties)})." if ties else "."
    return text


def rerender(stem: str = "real") -> int:
    data = json.loads((RESULTS_DIR / f"{stem}.json").read_text())
    (RESULTS_DIR / f"{stem}.md").write_text(render(data))
    return 0
