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
  sent one after the other) on the interactive pool, on an idle service and while a long job
  runs on a jobs pool of ``--latency-workers`` processes (1 by default: with the interactive
  worker's one process the two pools fill the 2 cores of the machine this was written on): p50
  and p95 of each and their ratio (goal: p95 within 20%).

The stack: gunicorn (2 x 8 threads), an interactive worker of one process (``-Q
default,convert,convert_test``: conversions and the pre-flight of a job's upload), the jobs
worker, and beat (the jobs sweeper), on a scratch database and Redis DB (``--database-url``,
``--redis-url``; dropped and flushed). Times are wall-clock on a machine that may be doing other
work: the load average at the start and the end is written with them. The simulation of
workers in separate network namespaces is not done (see the results file).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.parts import BOOK, _long_document
from bench.paths import CACHE_DIR, CORPUS_DIR, MAIN_PYTHON, REPO_DIR, RESULTS_DIR
from bench.stack import Stack

SECTIONS = ("scaling", "latency")
GOAL_SPEEDUP_1_TO_2 = 1.6
GOAL_LATENCY_RATIO = 1.2
JOBS_CACHE = CACHE_DIR / "jobs"
PART_PAGES = 25  # the service's default SVCX_JOB_PART_PAGES
LATENCY_FIRST_PAGE = 2  # pages of pdfjs__freeculture.pdf (page 1 is blank)


def _log(msg: str) -> None:
    print(f"[jobs {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Pure helpers (tests/bench/test_jobs.py)


def percentile(values: list[float], q: float) -> float | None:
    """Percentile q (0-100) by linear interpolation between closest ranks; None when empty."""
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def speedups(seconds: dict[int, float]) -> dict[int, float]:
    """Speed-up of each setting over the smallest one (its seconds / each one's)."""
    if not seconds:
        return {}
    base = seconds[min(seconds)]
    return {n: base / s for n, s in sorted(seconds.items()) if s > 0}


def ledger_verdict(entries: list[tuple[str, int]], *, status: str, pages: int) -> tuple[bool, str]:
    """Whether a job's ledger entries (kind, credits) are exactly one hold of its pages and then
    one capture of them (a succeeded job) or one release (a failed or canceled one)."""
    kinds = sorted(kind for kind, _ in entries)
    detail = ", ".join(f"{kind} {credits}" for kind, credits in sorted(entries)) or "none"
    holds = [credits for kind, credits in entries if kind == "hold"]
    if status == "succeeded":
        captures = [credits for kind, credits in entries if kind == "capture"]
        ok = kinds == ["capture", "hold"] and abs(holds[0]) == pages and abs(captures[0]) == pages
    elif status in ("failed", "canceled"):
        ok = kinds == ["hold", "release"] and abs(holds[0]) == pages
    else:
        ok = False
    return ok, detail


def latency_verdict(idle_p95_ms: float | None, busy_p95_ms: float | None) -> tuple[bool, float | None]:
    """Whether the p95 with a job running is within GOAL_LATENCY_RATIO of the idle one, and the ratio."""
    if not idle_p95_ms or busy_p95_ms is None:
        return False, None
    ratio = busy_p95_ms / idle_p95_ms
    return ratio <= GOAL_LATENCY_RATIO, ratio


def engine_fingerprint(root: Path) -> str:
    """SHA-256 over the engine's source files: the key under which its reference output is kept."""
    digest = hashlib.sha256()
    for path in sorted((root / "conversion" / "engine").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------------------------
# The v2 API over http.client (also used by the fault suite)


@dataclass
class JobEnd:
    job: dict[str, Any]
    seconds: float  # from the POST to the poll that saw the job ended
    polls: int
    errors: list[str]


def _request(
    port: int, key: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request(method, path, body=body, headers={"Authorization": f"Bearer {key}", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def job_create(port: int, key: str, pdf: bytes, query: str = "") -> dict[str, Any]:
    """POST /v2/jobs with a raw PDF body; the 202's job. Raises RuntimeError on another answer."""
    status, data = _request(
        port, key, "POST", "/v2/jobs" + (f"?{query}" if query else ""), pdf, {"Content-Type": "application/pdf"}
    )
    if status != 202:
        raise RuntimeError(f"POST /v2/jobs: HTTP {status}: {data[:400]!r}")
    return dict(json.loads(data))


def job_wait(port: int, key: str, job_id: str, *, since: float, timeout: float, poll: float = 0.5) -> JobEnd:
    """Poll GET /v2/jobs/{id} until the job has ended (errors and 5xx, as while a backend
    restarts, are noted and polled through). Raises RuntimeError after `timeout` seconds."""
    polls = 0
    errors: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        polls += 1
        try:
            status, data = _request(port, key, "GET", f"/v2/jobs/{job_id}")
            if status == 200:
                job = json.loads(data)
                if job["status"] not in ("queued", "running"):
                    return JobEnd(job, time.time() - since, polls, errors)
            else:
                errors.append(f"HTTP {status}")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            errors.append(type(exc).__name__)
        time.sleep(poll)
    raise RuntimeError(f"job {job_id} not ended after {timeout:.0f} s")


def job_markdown_sha256(port: int, key: str, job_id: str) -> tuple[str, int]:
    """SHA-256 of the `markdown` of a succeeded job's JSON result, and its number of pages."""
    status, data = _request(port, key, "GET", f"/v2/jobs/{job_id}/result", headers={"Accept": "application/json"})
    if status != 200:
        raise RuntimeError(f"GET /v2/jobs/{job_id}/result: HTTP {status}: {data[:400]!r}")
    result = json.loads(data)
    return hashlib.sha256(result["markdown"].encode()).hexdigest(), len(result["pages"])


def job_row(stack: Stack, job_id: str) -> dict[str, Any]:
    """The job row's times (epoch seconds) and counters, read from the database."""
    cols = (
        "status, pages_total, pages_parsed, pages_completed, lead_attempts, credits_billed, "
        "extract(epoch FROM created_at), extract(epoch FROM started_at), extract(epoch FROM finished_at)"
    )
    row = stack.psql(f"SELECT {cols} FROM conversion_job WHERE id = '{job_id}'")[0]
    names = ["status", "pages_total", "pages_parsed", "pages_completed", "lead_attempts", "credits_billed"]
    out: dict[str, Any] = {n: (row[i] if n == "status" else int(row[i])) for i, n in enumerate(names)}
    created, started, finished = (float(x) if x else None for x in row[6:9])
    out["created_at"] = created
    out["queued_s"] = started - created if started and created else None
    out["seconds"] = finished - created if finished and created else None
    return out


def job_ledger(stack: Stack, job_id: str) -> list[tuple[str, int]]:
    return [
        (k, int(c))
        for k, c in stack.psql(f"SELECT kind, credits FROM billing_ledgerentry WHERE request_id = '{job_id}'")
    ]


def reference_sha256(path: Path) -> dict[str, Any]:
    """The engine's `convert(path)` of the whole document: SHA-256 of its Markdown, pages and
    seconds (kept in bench/.cache/jobs/ under the PDF's and the engine sources' hashes)."""
    pdf_sha = hashlib.sha256(path.read_bytes()).hexdigest()
    cached = JOBS_CACHE / f"reference-{pdf_sha[:16]}-{engine_fingerprint(REPO_DIR)[:16]}.json"
    if cached.exists():
        return dict(json.loads(cached.read_text())) | {"cached": True}
    proc = subprocess.run(
        [str(MAIN_PYTHON), "-m", "bench.jobs", "--child", "reference", str(path)],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        raise RuntimeError(f"reference conversion failed: {proc.stderr[-2000:]}")
    ref = dict(json.loads(proc.stdout.splitlines()[-1]))
    JOBS_CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(ref) + "\n")
    return ref | {"cached": False}


def _child_reference(path: str) -> None:
    from conversion.engine import convert

    started = time.monotonic()
    result = convert(path, result_budget_bytes=1 << 40)
    print(
        json.dumps(
            {
                "sha256": hashlib.sha256(result.markdown.encode()).hexdigest(),
                "pages": len(result.pages),
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )


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

    tags = [f"jobs-idle-{workdir.name}", f"jobs-busy-{workdir.name}", f"jobs-warm-{workdir.name}"]
    files = _make_pages(LATENCY_FIRST_PAGE, LATENCY_FIRST_PAGE + requests - 1, tags, workdir / "children.log")
    _one_page_series(stack, files[tags[2]][:3])  # warm the interactive worker
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
    ok, ratio = latency_verdict(percentile([s * 1000 for s in idle], 95), percentile([s * 1000 for s in busy], 95))
    _log(f"latency with a job running: p95 {percentile([s * 1000 for s in busy], 95):.0f} ms, ratio {ratio}")
    return {
        "jobs_pool_processes": n_workers,
        "interactive_pool_processes": 1,
        "source": f"pdfjs__freeculture.pdf pages {LATENCY_FIRST_PAGE}-{LATENCY_FIRST_PAGE + requests - 1}, one a file, "
        "tagged so none is cached; sent one after the other, 0.1 s apart",
        "idle": _summary(idle),
        "busy": _summary(busy),
        "job_running_throughout": during["status"] == "running",
        "job_pages_completed_after_last_request": during["pages_completed"],
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
    path = _long_document(opts.pages)
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
            f"{ref['seconds']} s. Pool CPU seconds: user and system time of the jobs worker's processes during "
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
            "4 processes on 2 cores cannot beat 2; the row says what the extra processes cost.",
            "",
        ]
    la = record["sections"].get("latency")
    if la:
        lines += [
            "## Interactive latency while a job runs",
            "",
            f"{la['source']}: `POST /v1/convert` on the interactive pool ({la['interactive_pool_processes']} "
            f"process), on an idle service and while a {record['pages']}-page job runs on a jobs pool of "
            f"{la['jobs_pool_processes']} process(es) (started once the job had parsed its first part). The two "
            "pools share the machine's 2 cores here; deployed, they are separate containers.",
            "",
            "| | requests | p50 ms | p95 ms | max ms |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for name in ("idle", "busy"):
            s = la[name]
            label = "idle service" if name == "idle" else "a job running"
            lines.append(f"| {label} | {s['n']} | {_f(s['p50_ms'], 0)} | {_f(s['p95_ms'], 0)} | {_f(s['max_ms'], 0)} |")
        lines += [
            "",
            f"p95 with the job / idle: {_f(la['p95_ratio'], 2)} (goal <= {la['goal_ratio']}): "
            f"**{'met' if la['goal_met'] else 'not met'}**. The job was running throughout: "
            f"{'yes' if la['job_running_throughout'] else 'NO'} ({la['job_pages_completed_after_last_request']} pages "
            f"rendered after the last request); it then {la['job']['status']} in {_f(la['job']['seconds'])} s.",
            "",
        ]
    lines += [
        "Not done: workers in separate network namespaces (`unshare -n` would cut a worker off from the",
        "loopback PostgreSQL and Redis it needs; joining them would take veth pairs and routing, more set-up",
        "than this bench should carry). Every process here talks over 127.0.0.1.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["--child", "reference"]:
        _child_reference(argv[2])
        return 0
    from bench.__main__ import main as bench_main

    return bench_main(["jobs", *argv])


if __name__ == "__main__":
    sys.exit(main())
