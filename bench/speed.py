"""``python -m bench speed``: the engine against raw pdfminer.six on the real corpus.

Files: those of ``shared/corpus/real`` whose manifest ``expected_outcome`` is ``convert``
or ``convert_after_repair``. Every file is converted in its own child process (service
venv), engine and pdfminer alternately so that load from other work on the machine hits
both alike; the child times the conversion in-process (imports excluded) and reports its
``ru_maxrss``. Single process, so CPU seconds = core-seconds.

- pages/s/core = pages / CPU seconds, summed over the files both systems converted.
- overhead ratio = engine CPU seconds / pdfminer CPU seconds over those files (goal <= 1.15);
  also the median of the per-file ratios, and the total without the one pathological file
  (the rotated NICS table), which alone is a third of pdfminer's time.
- peak memory = ru_maxrss of the child (includes the interpreter and imports: the
  ``rss before`` column is that baseline).
"""

from __future__ import annotations

import json
import platform
import shlex
import statistics
import subprocess
import sys
from datetime import UTC, datetime

from bench.paths import CORPUS_DIR, MAIN_PYTHON, REPO_DIR, RESULTS_DIR

OUTCOMES = ("convert", "convert_after_repair")
SYSTEMS = ("engine", "pdfminer")
GOAL_RATIO = 1.15
OUTLIER = "pdfplumber__nics-background-checks-2015-11-rotated.pdf"


def _one(system: str, path: str, password: str | None, timeout: float, engine: str | None = None) -> dict[str, object]:
    cmd = [str(MAIN_PYTHON), "-m", "bench.runners", "speed", system, path]
    if password:
        cmd += ["--password", password]
    if engine:
        cmd += ["--engine", engine]
    try:
        proc = subprocess.run(cmd, cwd=REPO_DIR, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timeout after {timeout:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        return {"ok": False, "error": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    return json.loads(lines[-1])


def run(repeat: int, timeout: float, only: list[str] | None, argv: list[str]) -> int:
    manifest = json.loads((CORPUS_DIR / "manifest.json").read_text())
    records = [r for r in manifest["files"] if r["expected_outcome"] in OUTCOMES]
    if only:
        records = [r for r in records if r["file"] in only]
    rows = []
    for rec in records:
        path = str(CORPUS_DIR / "files" / rec["file"])
        best: dict[str, dict[str, object]] = {}
        for _ in range(max(1, repeat)):
            for system in SYSTEMS:
                res = _one(system, path, rec.get("password"), timeout)
                prev = best.get(system)
                if prev is None or (res.get("ok") and (not prev.get("ok") or res["cpu_s"] < prev["cpu_s"])):  # type: ignore[operator]
                    best[system] = res
        row = {
            "file": rec["file"],
            "category": rec["category"],
            "manifest_pages": rec["pages"],
            **{
                s: {
                    k: best[s].get(k)
                    for k in (
                        "ok",
                        "pages",
                        "cpu_s",
                        "wall_s",
                        "maxrss_kib",
                        "rss_before_kib",
                        "error",
                        "error_code",
                        "chars",
                    )
                }
                for s in SYSTEMS
            },
        }
        rows.append(row)
        e, p = row["engine"], row["pdfminer"]
        print(f"  {rec['file'][:52]:52s} engine {_s(e)}  pdfminer {_s(p)}", file=sys.stderr)

    summary = summarise(rows)
    data = {
        "command": "python -m bench " + " ".join(shlex.quote(a) for a in argv),
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {_cpus()} CPUs, Python {platform.python_version()}",
        "repeat": repeat,
        "summary": summary,
        "files": rows,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "speed.json").write_text(json.dumps(data, indent=1))
    (RESULTS_DIR / "speed.md").write_text(render(data))
    print((RESULTS_DIR / "speed.md").read_text())
    return 0


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


def _s(r: dict[str, object]) -> str:
    if not r.get("ok"):
        return f"FAILED ({str(r.get('error'))[:60]})"
    return f"{r['pages']:>4}p {r['cpu_s']:7.3f}s {int(r['maxrss_kib']) // 1024:5d}MiB"  # type: ignore[call-overload]


def summarise(rows: list[dict[str, object]]) -> dict[str, object]:
    both = [r for r in rows if r["engine"]["ok"] and r["pdfminer"]["ok"]]  # type: ignore[index]

    def totals(sel: list[dict[str, object]]) -> dict[str, object]:
        e_cpu = sum(r["engine"]["cpu_s"] for r in sel)  # type: ignore[index]
        p_cpu = sum(r["pdfminer"]["cpu_s"] for r in sel)  # type: ignore[index]
        e_pages = sum(r["engine"]["pages"] for r in sel)  # type: ignore[index]
        p_pages = sum(r["pdfminer"]["pages"] for r in sel)  # type: ignore[index]
        return {
            "files": len(sel),
            "engine_pages": e_pages,
            "pdfminer_pages": p_pages,
            "engine_cpu_s": e_cpu,
            "pdfminer_cpu_s": p_cpu,
            "engine_pages_per_s_per_core": e_pages / e_cpu if e_cpu else None,
            "pdfminer_pages_per_s_per_core": p_pages / p_cpu if p_cpu else None,
            "overhead_ratio": e_cpu / p_cpu if p_cpu else None,
        }

    ratios = [r["engine"]["cpu_s"] / r["pdfminer"]["cpu_s"] for r in both if r["pdfminer"]["cpu_s"]]  # type: ignore[index]
    peak_e = max((r["engine"]["maxrss_kib"] or 0 for r in both), default=0)  # type: ignore[index]
    peak_p = max((r["pdfminer"]["maxrss_kib"] or 0 for r in both), default=0)  # type: ignore[index]
    categories = sorted({str(r["category"]) for r in both})
    return {
        "by_category": {c: totals([r for r in both if r["category"] == c]) for c in categories},
        "all": totals(both),
        "without_outlier": totals([r for r in both if r["file"] != OUTLIER]),
        "median_file_ratio": statistics.median(ratios) if ratios else None,
        "p90_file_ratio": statistics.quantiles(ratios, n=10)[-1] if len(ratios) >= 2 else None,
        "engine_peak_rss_mib": peak_e / 1024,
        "pdfminer_peak_rss_mib": peak_p / 1024,
        "engine_median_rss_mib": statistics.median(r["engine"]["maxrss_kib"] for r in both) / 1024 if both else None,  # type: ignore[index]
        "pdfminer_median_rss_mib": statistics.median(r["pdfminer"]["maxrss_kib"] for r in both) / 1024
        if both
        else None,  # type: ignore[index]
        "engine_failed": [r["file"] for r in rows if not r["engine"]["ok"]],  # type: ignore[index]
        "pdfminer_failed": [r["file"] for r in rows if not r["pdfminer"]["ok"]],  # type: ignore[index]
        "page_count_differs": [r["file"] for r in both if r["engine"]["pages"] != r["pdfminer"]["pages"]],  # type: ignore[index]
        "goal_ratio": GOAL_RATIO,
        "goal_met": bool(both) and totals(both)["overhead_ratio"] <= GOAL_RATIO,  # type: ignore[operator]
    }


def _f(v: object, nd: int = 2) -> str:
    return "n/a" if v is None else (f"{v:.{nd}f}" if isinstance(v, float) else str(v))


def render(data: dict[str, object]) -> str:
    s: dict[str, object] = data["summary"]  # type: ignore[assignment]
    a: dict[str, object] = s["all"]  # type: ignore[assignment]
    w: dict[str, object] = s["without_outlier"]  # type: ignore[assignment]
    lines = [
        "# Conversion speed benchmark",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} ({data['machine']}); "
        f"best of {data['repeat']} run(s) per file. Files: the real corpus entries whose "
        "`expected_outcome` is `convert` or `convert_after_repair`, one child process per "
        "conversion, engine and pdfminer alternating. Times are in-process CPU seconds "
        "(imports excluded); the machine is shared, so treat them as indicative.",
        "",
        "The baseline is `pdfminer.high_level.extract_text(path, laparams=LAParams())`.",
        "",
        "## Summary",
        "",
        "| | all files | without the rotated NICS page |",
        "| --- | ---: | ---: |",
        f"| files converted by both | {a['files']} | {w['files']} |",
        f"| pages (engine / pdfminer) | {a['engine_pages']} / {a['pdfminer_pages']} | {w['engine_pages']} / {w['pdfminer_pages']} |",
        f"| engine CPU s | {_f(a['engine_cpu_s'])} | {_f(w['engine_cpu_s'])} |",
        f"| pdfminer CPU s | {_f(a['pdfminer_cpu_s'])} | {_f(w['pdfminer_cpu_s'])} |",
        f"| engine pages/s/core | {_f(a['engine_pages_per_s_per_core'], 1)} | {_f(w['engine_pages_per_s_per_core'], 1)} |",
        f"| pdfminer pages/s/core | {_f(a['pdfminer_pages_per_s_per_core'], 1)} | {_f(w['pdfminer_pages_per_s_per_core'], 1)} |",
        f"| **overhead ratio** engine/pdfminer (goal <= {GOAL_RATIO}) | **{_f(a['overhead_ratio'])}** | {_f(w['overhead_ratio'])} |",
        "",
        f"- per-file ratio: median {_f(s['median_file_ratio'])}, p90 {_f(s['p90_file_ratio'])}",
        f"- peak memory per conversion (ru_maxrss, max over files): engine {_f(s['engine_peak_rss_mib'], 0)} MiB, "
        f"pdfminer {_f(s['pdfminer_peak_rss_mib'], 0)} MiB; median engine {_f(s['engine_median_rss_mib'], 0)} MiB, "
        f"pdfminer {_f(s['pdfminer_median_rss_mib'], 0)} MiB",
        f"- goal (overhead <= {GOAL_RATIO}x): {'met' if s['goal_met'] else '**NOT met**'}",
        f"- engine failed on: {', '.join(s['engine_failed']) or 'none'}",  # type: ignore[arg-type]
        f"- pdfminer failed on: {', '.join(s['pdfminer_failed']) or 'none'}",  # type: ignore[arg-type]
        f"- page counts differ on: {', '.join(s['page_count_differs']) or 'none'}",  # type: ignore[arg-type]
        "",
        "## By category",
        "",
        "| category | files | pages | engine CPU s | pdfminer CPU s | engine pages/s/core | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *[
            f"| {c} | {t['files']} | {t['engine_pages']} | {_f(t['engine_cpu_s'])} | {_f(t['pdfminer_cpu_s'])} "
            f"| {_f(t['engine_pages_per_s_per_core'], 1)} | {_f(t['overhead_ratio'])} |"
            for c, t in s["by_category"].items()  # type: ignore[attr-defined]
        ],
        "",
        "## Per file",
        "",
        "| file | category | pages | engine CPU s | pdfminer CPU s | ratio | engine MiB (before) | pdfminer MiB (before) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["files"]:  # type: ignore[attr-defined]
        e, p = r["engine"], r["pdfminer"]

        def cpu(x: dict[str, object]) -> str:
            return (
                _f(x["cpu_s"], 3)
                if x["ok"]
                else "FAILED: " + str(x.get("error_code") or x.get("error"))[:50].replace("|", "/")
            )

        def mem(x: dict[str, object]) -> str:
            if not x.get("maxrss_kib"):
                return "n/a"
            before = f" ({int(x['rss_before_kib']) // 1024})" if x.get("rss_before_kib") else ""  # type: ignore[call-overload]
            return f"{int(x['maxrss_kib']) // 1024}{before}"  # type: ignore[call-overload]

        ratio = _f(e["cpu_s"] / p["cpu_s"]) if e["ok"] and p["ok"] and p["cpu_s"] else "n/a"
        pages = e["pages"] if e["ok"] else (p["pages"] if p["ok"] else r["manifest_pages"])
        lines.append(
            f"| {r['file']} | {r['category']} | {pages} | {cpu(e)} | {cpu(p)} | {ratio} | {mem(e)} | {mem(p)} |"
        )
    return "\n".join(lines) + "\n"


# --- two engines (``--engines BASE OTHER``): issue 29's PDFium text source against the default ---

# Goals of the second engine (issue 29): pages/s/core of conversion CPU on the long documents,
# and its speed-up over the base engine in the same run.
ENGINES_GOAL_PAGES_PER_S = 100.0
ENGINES_GOAL_SPEEDUP = 5.0


def run_engines(
    engines: list[str], repeat: int, timeout: float, only: list[str] | None, category: str | None, argv: list[str]
) -> int:
    """Each file converted by each engine in its own child process, alternating; CPU seconds
    of the whole conversion (imports excluded) and the engine's own layout seconds (wall)."""
    manifest = json.loads((CORPUS_DIR / "manifest.json").read_text())
    records = [r for r in manifest["files"] if r["expected_outcome"] in OUTCOMES]
    if only:
        records = [r for r in records if r["file"] in only]
    if category:
        records = [r for r in records if r["category"] == category]
    load_before = _load()
    rows = []
    for rec in records:
        path = str(CORPUS_DIR / "files" / rec["file"])
        best: dict[str, dict[str, object]] = {}
        for _ in range(max(1, repeat)):
            for engine_id in engines:
                res = _one("engine", path, rec.get("password"), timeout, engine_id)
                prev = best.get(engine_id)
                if prev is None or (res.get("ok") and (not prev.get("ok") or res["cpu_s"] < prev["cpu_s"])):  # type: ignore[operator]
                    best[engine_id] = res
        row = {
            "file": rec["file"],
            "category": rec["category"],
            **{
                e: {
                    "ok": best[e].get("ok"),
                    "pages": best[e].get("pages"),
                    "cpu_s": best[e].get("cpu_s"),
                    "layout_s": (best[e].get("engine_timings") or {}).get("layout"),  # type: ignore[union-attr]
                    "error": best[e].get("error"),
                }
                for e in engines
            },
        }
        rows.append(row)
        print(f"  {rec['file'][:52]:52s} " + "  ".join(f"{e} {_s(best[e])}" for e in engines), file=sys.stderr)
    base, other = engines
    both = [r for r in rows if all(r[e]["ok"] for e in engines)]  # type: ignore[index]
    totals = {
        e: {
            "pages": sum(r[e]["pages"] for r in both),  # type: ignore[index]
            "cpu_s": sum(r[e]["cpu_s"] for r in both),  # type: ignore[index]
        }
        for e in engines
    }
    for t in totals.values():
        t["pages_per_s_per_core"] = t["pages"] / t["cpu_s"] if t["cpu_s"] else None
    speedup = totals[base]["cpu_s"] / totals[other]["cpu_s"] if totals[other]["cpu_s"] else None
    data = {
        "command": "python -m bench " + " ".join(shlex.quote(a) for a in argv),
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {_cpus()} CPUs, Python {platform.python_version()}",
        "load_average": {"before": load_before, "after": _load()},
        "repeat": repeat,
        "engines": engines,
        "totals": totals,
        "speedup": speedup,
        "goals": {"pages_per_s_per_core": ENGINES_GOAL_PAGES_PER_S, "speedup": ENGINES_GOAL_SPEEDUP},
        "failed": {e: [r["file"] for r in rows if not r[e]["ok"]] for e in engines},  # type: ignore[index]
        "files": rows,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "speed-engines.json").write_text(json.dumps(data, indent=1))
    (RESULTS_DIR / "speed-engines.md").write_text(render_engines(data))
    print((RESULTS_DIR / "speed-engines.md").read_text())
    return 0


def _load() -> str:
    import os

    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def render_engines(data: dict[str, object]) -> str:
    base, other = data["engines"]  # type: ignore[misc]
    totals: dict[str, dict[str, float]] = data["totals"]  # type: ignore[assignment]
    load: dict[str, str] = data["load_average"]  # type: ignore[assignment]
    lines = [
        "# Conversion speed of two engines",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} ({data['machine']}); best of "
        f"{data['repeat']} run(s) per file; load average before {load['before']}, after {load['after']}. "
        "Each conversion in its own child process, the engines alternating; CPU seconds of the whole "
        "conversion in-process (imports excluded), so pages/s/core counts the structure stages too.",
        "",
        f"| | `{base}` | `{other}` |",
        "| --- | ---: | ---: |",
        f"| pages | {totals[base]['pages']} | {totals[other]['pages']} |",
        f"| CPU s | {_f(totals[base]['cpu_s'])} | {_f(totals[other]['cpu_s'])} |",
        f"| pages/s/core (goal for `{other}` >= {ENGINES_GOAL_PAGES_PER_S:.0f}) | "
        f"{_f(totals[base]['pages_per_s_per_core'], 1)} | **{_f(totals[other]['pages_per_s_per_core'], 1)}** |",
        "",
        f"Speed-up `{other}` over `{base}` (CPU): **{_f(data['speedup'])}x** (goal >= {ENGINES_GOAL_SPEEDUP:.0f}x).",
        "",
        "| file | category | pages | "
        + f"{base} CPU s | {base} layout s | {other} CPU s | {other} layout s | speed-up |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["files"]:  # type: ignore[attr-defined]
        a, b = r[base], r[other]
        up = _f(a["cpu_s"] / b["cpu_s"]) if a["ok"] and b["ok"] and b["cpu_s"] else "n/a"
        lines.append(
            f"| {r['file']} | {r['category']} | {a['pages'] if a['ok'] else b['pages']} | "
            f"{_f(a['cpu_s'], 3) if a['ok'] else 'FAILED'} | {_f(a['layout_s'])} | "
            f"{_f(b['cpu_s'], 3) if b['ok'] else 'FAILED'} | {_f(b['layout_s'])} | {up} |"
        )
    return "\n".join(lines) + "\n"
