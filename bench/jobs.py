"""``python -m bench jobs``: version 2 jobs on the running service (issue 26's goals).

Two measurements, each alone with ``--only NAME``:

- ``scaling``: a long document (the corpus's ``pdfcpu__WaldenFull.pdf``, 249 pages, repeated to
  ``--pages`` pages, 1,000 by default, as ``bench/parts.py`` makes it) sent to ``POST /v2/jobs``
  and polled to its end, on a jobs pool of 1, 2 and 4 processes (``--workers``): one
  ``celery worker -Q jobs,jobs_test --concurrency N`` per setting, restarted between settings
  and warmed by a short job. Reported: the job's time from its creation to its end (the job
  row's ``created_at`` and ``finished_at``, and the client's view), the speed-up from 1 process,
  whether the Markdown is the same in every setting and the engine's ``convert(path)`` of the
  whole document (SHA-256 of the result's ``markdown``), and the job's ledger: one hold and one
  capture of one credit per page.
- ``latency``: one-page v1 conversions (``POST /v1/convert``, distinct PDFs so nothing is cached,
  sent one after the other) on the interactive pool, on an idle service (before the job and
  after it, the machine's own load drifting meanwhile) and while a long job runs on a jobs pool
  of ``--latency-workers`` processes (1 by default: with the interactive worker's one process
  the two pools fill the 2 cores of the machine this was written on): p50 and p95 of each and
  the ratio of the p95 with the job to the idle one (goal: within 20%).

The stack: gunicorn (2 x 8 threads), an interactive worker of one process (``-Q
default,convert,convert_test``: conversions and the pre-flight of a job's upload), the jobs
worker, and beat (the jobs sweeper), on a scratch database and Redis DB (``--database-url``,
``--redis-url``; dropped and flushed). Times are wall-clock on a machine that may be doing other
work: the load average at the start and the end is written with them. The simulation of
workers in separate network namespaces is not done (see the results file).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.job_checks import (
    GOAL_LATENCY_RATIO,
    GOAL_SPEEDUP_1_TO_2,
    latency_verdict,
    ledger_verdict,
    percentile,
    speedups,
)
from bench.job_client import (
    JOBS_CACHE,
    job_create,
    job_ledger,
    job_markdown_sha256,
    job_row,
    job_wait,
    reference_sha256,
)
from bench.long_document import BOOK, long_document
from bench.paths import CORPUS_DIR, REPO_DIR, RESULTS_DIR
from bench.stack import Stack

SECTIONS = ("scaling", "latency")
PART_PAGES = 25  # the service's default SVCX_JOB_PART_PAGES
LATENCY_FIRST_PAGE = 2  # pages of pdfjs__freeculture.pdf (page 1 is blank)


def _log(msg: str) -> None:
    print(f"[jobs {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# The measurements


def _run_job(stack: Stack, pdf: bytes, *, query: str = "", timeout: float = 3600) -> dict[str, Any]:
    t0 = time.time()
    created = job_create(stack.port, stack.key, pdf, query)
    posted = time.time() - t0
    end = job_wait(stack.port, stack.key, created["id"], since=t0, timeout=timeout)
    row = job_row(stack, created["id"])
    return {"id": created["id"], "post_s": round(posted, 2), "client_s": round(end.seconds, 1), **row}


def _pool_cpu(stack: Stack) -> float:
    """CPU seconds used so far by the processes of the jobs worker's session (parent and pool)."""
    from bench.service import _proc_table

    sid = stack.jobs_worker.pid if stack.jobs_worker is not None else -1
    return sum(cpu for _pid, s, cpu, _cmd in _proc_table() if s == sid)


def _jobs_pool(stack: Stack, n: int, pdf: bytes) -> float:
    """A jobs pool of n processes, warmed by a job of n parts; the warm-up's seconds."""
    stack.stop_jobs_worker()
    stack.start_jobs_worker(n)
    warm = _run_job(stack, pdf, query=f"pages=1-{n * PART_PAGES}", timeout=600)
    if warm["status"] != "succeeded":
        raise RuntimeError(f"warm-up job {warm['id']} {warm['status']}")
    return float(warm["client_s"])


def measure_scaling(stack: Stack, pdf_path: Path, workers: list[int], reference: dict[str, Any]) -> dict[str, Any]:
    pdf = pdf_path.read_bytes()
    runs = []
    for n in workers:
        warm = _jobs_pool(stack, n, pdf)
        load = [round(x, 2) for x in os.getloadavg()]
        _log(f"jobs pool of {n}: warm in {warm:.1f} s; the job (load {load})")
        cpu0 = _pool_cpu(stack)
        run = _run_job(stack, pdf)
        run["pool_cpu_s"] = round(_pool_cpu(stack) - cpu0, 1)
        run["processes"] = n
        run["load_at_start"] = load
        if run["status"] == "succeeded":
            run["markdown_sha256"], run["result_pages"] = job_markdown_sha256(stack.port, stack.key, run["id"])
        run["ledger_ok"], run["ledger"] = ledger_verdict(
            job_ledger(stack, run["id"]), status=run["status"], pages=run["pages_total"]
        )
        run["same_as_engine"] = run.get("markdown_sha256") == reference["sha256"]
        _log(
            f"  {run['status']} in {run['seconds']:.1f} s (client {run['client_s']} s), same Markdown as the "
            f"engine: {run['same_as_engine']}, ledger {run['ledger']}"
        )
        runs.append(run)
    ok = [r for r in runs if r["status"] == "succeeded"]
    ups = speedups({r["processes"]: r["seconds"] for r in ok})
    for r in runs:
        r["speedup"] = ups.get(r["processes"])
    return {
        "document": f"{BOOK} repeated to {reference['pages']} pages",
        "pool": "one `celery worker -Q jobs,jobs_test --concurrency N` (prefork, N processes) per setting",
        "runs": runs,
        "same_markdown_everywhere": bool(runs) and all(r["same_as_engine"] for r in runs),
        "goal_speedup_1_to_2": GOAL_SPEEDUP_1_TO_2,
        "goal_met": ups.get(2) is not None and 1 in ups and ups[2] >= GOAL_SPEEDUP_1_TO_2,
    }


def _one_page_series(stack: Stack, files: list[Path]) -> list[float]:
    from bench.service import Client, _ok

    seconds = []
    with contextlib.closing(Client(stack.port, stack.key)) as client:
        for f in files:
            reply = client.convert(f.read_bytes(), "pages=1")
            _ok(reply, f"one-page conversion {f.name}", cached=False)
            seconds.append(reply.seconds)
            time.sleep(0.1)
    return seconds


def _summary(seconds: list[float]) -> dict[str, Any]:
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "max_ms": max(ms, default=None)}


def measure_latency(stack: Stack, pdf_path: Path, n_workers: int, requests: int, workdir: Path) -> dict[str, Any]:
    from bench.service import _make_pages

    tags = [f"jobs-{name}-{workdir.name}" for name in ("idle", "busy", "after", "warm")]
    files = _make_pages(LATENCY_FIRST_PAGE, LATENCY_FIRST_PAGE + requests - 1, tags, workdir / "children.log")
    _one_page_series(stack, files[tags[3]][:3])  # warm the interactive worker
    _jobs_pool(stack, n_workers, pdf_path.read_bytes())
    idle = _one_page_series(stack, files[tags[0]])
    _log(f"latency idle: p95 {percentile([s * 1000 for s in idle], 95):.0f} ms")
    t0 = time.time()
    job = job_create(stack.port, stack.key, pdf_path.read_bytes())
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        row = job_row(stack, job["id"])
        if row["status"] == "running" and row["pages_parsed"] >= PART_PAGES:
            break
        time.sleep(0.2)
    busy = _one_page_series(stack, files[tags[1]])
    during = job_row(stack, job["id"])
    end = job_wait(stack.port, stack.key, job["id"], since=t0, timeout=3600)
    row = job_row(stack, job["id"])
    # Idle again once the job has ended: the machine's own load drifts meanwhile.
    after = _one_page_series(stack, files[tags[2]])
    ms = {name: [s * 1000 for s in series] for name, series in (("idle", idle + after), ("busy", busy))}
    ok, ratio = latency_verdict(percentile(ms["idle"], 95), percentile(ms["busy"], 95))
    _log(f"latency with a job running: p95 {percentile(ms['busy'], 95):.0f} ms, ratio {ratio}")
    return {
        "jobs_pool_processes": n_workers,
        "interactive_pool_processes": 1,
        "source": f"pdfjs__freeculture.pdf pages {LATENCY_FIRST_PAGE}-{LATENCY_FIRST_PAGE + requests - 1}, one a file, "
        "tagged so none is cached; sent one after the other, 0.1 s apart",
        "idle_before": _summary(idle),
        "idle_after": _summary(after),
        "idle": _summary(idle + after),
        "busy": _summary(busy),
        "job_running_throughout": during["status"] == "running",
        "job_pages_completed_at_last_request": during["pages_completed"],
        "job": {"id": job["id"], "status": row["status"], "seconds": row["seconds"], "client_s": round(end.seconds, 1)},
        "p95_ratio": ratio,
        "goal_ratio": GOAL_LATENCY_RATIO,
        "goal_met": ok,
    }


# --------------------------------------------------------------------------------------------
# Orchestration


def run(opts: Any, argv: list[str]) -> int:
    if not (CORPUS_DIR / "files" / BOOK).exists():
        print(f"jobs: {CORPUS_DIR / 'files' / BOOK} is absent; this bench needs the real corpus", file=sys.stderr)
        return 2
    only = list(opts.only or SECTIONS)
    started = time.monotonic()
    workdir = JOBS_CACHE / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
    workdir.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {
        "command": "python -m bench " + shlex.join(argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "code": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR, capture_output=True, text=True
        ).stdout.strip(),
        "pages": opts.pages,
        "part_pages": PART_PAGES,
        "sections": {},
    }
    path = long_document(opts.pages)
    _log(f"document {path} ({path.stat().st_size / 1e6:.1f} MB); logs in {workdir}")
    stack = Stack(
        workdir=workdir,
        database_url=opts.database_url,
        redis_url=opts.redis_url,
        db_prefixes=("svcx_bench",),
        label="benchjobs",
        web_concurrency=2,
        web_threads=8,
        extra_env={"SVCX_JOB_PART_PAGES": str(PART_PAGES)},
    )
    error = None
    try:
        if "scaling" in only:
            t0 = time.monotonic()
            reference = reference_sha256(path)
            record["reference"] = reference
            _log(
                f"engine reference: {reference['pages']} pages, {reference['seconds']} s (cached: {reference['cached']})"
            )
            _log(f"  took {time.monotonic() - t0:.0f} s")
        stack.setup(org_name="Bench jobs", credits=10_000_000, limits=None)
        stack.start_web()
        stack.start_worker(1)
        stack.start_beat()
        _log(f"service healthy in {stack.wait_healthy():.1f} s on port {stack.port}")
        if "scaling" in only:
            record["sections"]["scaling"] = measure_scaling(stack, path, opts.workers, record["reference"])
        if "latency" in only:
            record["sections"]["latency"] = measure_latency(
                stack, path, opts.latency_workers, opts.latency_requests, workdir
            )
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        _log(f"FAILED: {error}")
    finally:
        stack.close(keep=opts.keep)
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    record["seconds"] = round(time.monotonic() - started)
    record["error"] = error
    name = "jobs" if not opts.only and not error else "jobs-partial"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    (RESULTS_DIR / f"{name}.md").write_text(render(record))
    _log(f"results in {RESULTS_DIR}/{name}.md")
    return 1 if error else 0


def _f(v: Any, nd: int = 1, unit: str = "") -> str:
    return "n/a" if v is None else f"{v:.{nd}f}{unit}"


def render(record: dict[str, Any]) -> str:
    lines = [
        "# Version 2 jobs on the running service",
        "",
        f"Produced by `{record['command']}` on {record['date']} (commit {record['code']}; {record['machine']}; "
        f"load average at the start {record['load_average_at_start']}, at the end "
        f"{record.get('load_average_at_end')}; {record.get('seconds')} s in all). See `bench/jobs.py`.",
        "",
        "**Caveat.** Wall-clock times on a shared 2-core machine where other work was running (the load",
        "averages above; each run's own is in its row): the figures move by tens of percent between runs and",
        "are to be rerun on a quiet machine before they are quoted.",
        "",
    ]
    if record.get("error"):
        lines += [f"**The run failed:** `{record['error']}`", ""]
    sc = record["sections"].get("scaling")
    if sc:
        ref = record["reference"]
        lines += [
            "## A 1,000-page job over 1, 2 and 4 worker processes"
            if record["pages"] == 1000
            else f"## A {record['pages']}-page job over pools of worker processes",
            "",
            f"{sc['document']}, parts of {record['part_pages']} pages, sent to `POST /v2/jobs` (raw PDF) and "
            f"polled every 0.5 s. Pool: {sc['pool']}, warmed by a job of N parts. Seconds from the job's "
            "creation to its end (its row's `created_at` and `finished_at`); the client's figure adds the "
            f"upload, the pre-flight and the polling. The engine alone, `convert(path)` in one process: "
            f"{ref['seconds']} s"
            + (" (when it was computed, by an earlier run: the reference is kept)" if ref.get("cached") else "")
            + ". Pool CPU seconds: user and system time of the jobs worker's processes during "
            "the job; cores busy = pool CPU seconds / job seconds, what the pool got of the machine (2 would be "
            "both cores; less means other work or waiting took the rest).",
            "",
            "| processes | job seconds | client seconds | speed-up from 1 | pool CPU seconds | cores busy | "
            "load at start | Markdown = engine's | ledger (hold, capture) | pages completed |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: |",
        ]
        for r in sc["runs"]:
            lines.append(
                f"| {r['processes']} | {_f(r['seconds'])} | {r['client_s']} | {_f(r.get('speedup'), 2, 'x')} | "
                f"{r['pool_cpu_s']} | {_f(r['pool_cpu_s'] / r['seconds'] if r['seconds'] else None, 2)} | "
                f"{r['load_at_start']} | {'yes' if r['same_as_engine'] else 'NO'} | "
                f"{'ok' if r['ledger_ok'] else 'WRONG'}: {r['ledger']} | {r['pages_completed']} / {r['pages_total']} |"
            )
        lines += [
            "",
            f"Goal: at least {sc['goal_speedup_1_to_2']}x from 1 to 2 processes on 2 cores: "
            f"**{'met' if sc['goal_met'] else 'not met'}**. Markdown identical across settings and equal to the "
            f"engine's (SHA-256 {ref['sha256'][:16]}...): **{'yes' if sc['same_markdown_everywhere'] else 'NO'}**. "
            "On 2 cores, 4 processes can do no more than keep both cores busy while the lead renders; "
            "the pool CPU seconds say what the parts cost beyond one conversion.",
            "",
        ]
    la = record["sections"].get("latency")
    if la:
        lines += [
            "## Interactive latency while a job runs",
            "",
            f"{la['source']}: `POST /v1/convert` on the interactive pool ({la['interactive_pool_processes']} "
            f"process), on an idle service (before the job and after it) and while a {record['pages']}-page job "
            "runs on a jobs pool of "
            f"{la['jobs_pool_processes']} process(es) (started once the job had parsed its first part). The two "
            "pools share the machine's 2 cores here; deployed, they are separate containers.",
            "",
            "| | requests | p50 ms | p95 ms | max ms |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        labels = {
            "idle_before": "idle, before the job",
            "idle_after": "idle, after the job",
            "idle": "idle (both)",
            "busy": "a job running",
        }
        for name, label in labels.items():
            if name not in la:
                continue
            s = la[name]
            lines.append(f"| {label} | {s['n']} | {_f(s['p50_ms'], 0)} | {_f(s['p95_ms'], 0)} | {_f(s['max_ms'], 0)} |")
        lines += [
            "",
            f"p95 with the job / idle: {_f(la['p95_ratio'], 2)} (goal <= {la['goal_ratio']}): "
            f"**{'met' if la['goal_met'] else 'not met'}**. The job was running throughout: "
            f"{'yes' if la['job_running_throughout'] else 'NO'} ({la['job_pages_completed_at_last_request']} of "
            f"{record['pages']} pages rendered when the last request ended); it then {la['job']['status']} in "
            f"{_f(la['job']['seconds'])} s.",
            "",
        ]
    if record.get("notes"):
        lines += ["## Notes", "", *(f"- {note}" for note in record["notes"]), ""]
    lines += [
        "Not done: workers in separate network namespaces (`unshare -n` would cut a worker off from the",
        "loopback PostgreSQL and Redis it needs; joining them would take veth pairs and routing, more set-up",
        "than this bench should carry). Every process here talks over 127.0.0.1.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import main as bench_main

    return bench_main(["jobs", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
