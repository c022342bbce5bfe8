"""``python -m bench jobs``: version 2 jobs on the running service (issue 26's goals).

Sections, each alone with ``--only NAME``; a run replaces in ``bench/results/jobs.json`` and
``jobs.md`` the sections it measured and keeps the others, each with the command, commit, date
and load that made it:

- ``scaling``: a long document (the corpus's ``pdfcpu__WaldenFull.pdf``, 249 pages, repeated to
  ``--pages`` pages, 1,000 by default, as ``bench/parts.py`` makes it) sent to ``POST /v2/jobs``
  and polled to its end, on a jobs pool of 1, 2 and 4 processes (``--workers``): one
  ``celery worker -Q jobs,jobs_test --concurrency N`` per setting, restarted between settings
  and warmed by a short job. Reported: the job's time from its creation to its end (the job
  row's ``created_at`` and ``finished_at``, and the client's view), the speed-up from 1 process,
  whether the Markdown is the same in every setting and the engine's ``convert(path)`` of the
  whole document (SHA-256 of the result's ``markdown``), and the job's ledger: one hold and one
  capture of one credit per page. The pool runs at ``--scaling-nice`` (SVCX_JOB_WORKER_NICE, 0 by
  default: what the pool can do, not how it yields to others on a machine shared with other work).
- With ``--netns`` (root), the same in a simulation of workers on hosts of their own
  (section ``scaling_netns``, ``bench/netns.py``): a pool of N processes is N workers of one
  process, each in a network namespace of its own with its own SVCX_VAR_DIR, reaching PostgreSQL,
  Redis and moto's S3 server (all started by the bench on a private bridge, the store set to S3)
  over that network alone. Also reported: the bytes the workers' links carried during the job,
  what the bucket and each worker's directory hold afterwards.
- ``latency``: one-page v1 conversions (``POST /v1/convert``, distinct PDFs so nothing is cached,
  sent one after the other) on the interactive pool (one process), with no job (before a job and
  after it) and while a long job runs on a jobs pool of ``--latency-workers`` processes (2 by
  default: the two pools then want 3 cores of the 2); p50 and p95 of each and the ratio of the
  p95 with the job to the one without (goal: within 20%). Measured for each jobs-pool niceness
  of ``--latency-nice`` (SVCX_JOB_WORKER_NICE; 0 is the service before the setting) and each
  count of ``--latency-background`` CPU-bound processes of other tenants (busy loops, each in a
  session of its own, running through the whole measurement). The job is canceled once the
  series with it is done.

The stack: gunicorn (2 x 8 threads), an interactive worker of one process (``-Q
default,convert,convert_test``: conversions and the pre-flight of a job's upload), the jobs
worker(s), and beat (the jobs sweeper), on a scratch database and Redis DB (``--database-url``,
``--redis-url``; dropped and flushed; with ``--own-backends`` a PostgreSQL cluster and a
redis-server of the bench's own on 127.0.0.1, so that no test suite of another checkout, looking
for a free Redis database, can take the bench's tasks; with ``--netns`` its own servers on the
private network). Times are
wall-clock on a machine that may be doing other work: the load average at the start and the end
is written with them.
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
    sections_merged,
    speedups,
)
from bench.job_client import (
    JOBS_CACHE,
    job_cancel,
    job_create,
    job_ledger,
    job_markdown_sha256,
    job_row,
    job_wait,
    reference_sha256,
)
from bench.long_document import BOOK, long_document
from bench.netns import Backends, NetnsStack, Network, stale_remove, terminate_as_exit
from bench.paths import CORPUS_DIR, REPO_DIR, RESULTS_DIR
from bench.stack import Stack, stop_process_group

SECTIONS = ("scaling", "latency")
PART_PAGES = 25  # the service's default SVCX_JOB_PART_PAGES
LATENCY_FIRST_PAGE = 2  # pages of pdfjs__freeculture.pdf (page 1 is blank)
NICE = "SVCX_JOB_WORKER_NICE"


def _log(msg: str) -> None:
    print(f"[jobs {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --------------------------------------------------------------------------------------------
# The measurements


def _run_job(stack: Stack, pdf: bytes, *, query: str = "", timeout: float = 3600) -> dict[str, Any]:
    t0 = time.time()
    created = job_create(stack.port, stack.key, pdf, query)
    posted = time.time() - t0
    end = job_wait(stack.port, stack.key, created["id"], since=t0, timeout=timeout)
    row = job_row(stack, created["id"])
    return {"id": created["id"], "post_s": round(posted, 2), "client_s": round(end.seconds, 1), **row}


def _stat_fields(pid: int) -> list[str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2 :].split()  # fields[0] is proc(5)'s field 3 (state)


def _pool_processes(stack: Stack) -> list[tuple[int, float, int]]:
    """(pid, CPU seconds so far, nice) of every process of the jobs workers' sessions."""
    sessions = set(stack.jobs_sessions())
    tck = os.sysconf("SC_CLK_TCK")
    rows = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                f = _stat_fields(int(entry.name))
                if int(f[3]) in sessions:  # field 6: the session
                    rows.append((int(entry.name), (int(f[11]) + int(f[12])) / tck, int(f[16])))  # 14+15, 19
    return rows


def _pool_cpu(stack: Stack) -> float:
    """CPU seconds used so far by the processes of the jobs workers' sessions (parents and pools)."""
    return sum(cpu for _pid, cpu, _nice in _pool_processes(stack))


def _jobs_pool(stack: Stack, n: int, pdf: bytes, nice: int) -> float:
    """A jobs pool of n processes at SVCX_JOB_WORKER_NICE `nice`, warmed by a job of n parts; the
    warm-up's seconds."""
    stack.stop_jobs_worker()
    stack.extra_env[NICE] = str(nice)
    stack.start_jobs_worker(n)
    warm = _run_job(stack, pdf, query=f"pages=1-{n * PART_PAGES}", timeout=600)
    if warm["status"] != "succeeded":
        raise RuntimeError(f"warm-up job {warm['id']} {warm['status']}")
    return float(warm["client_s"])


def measure_scaling(
    stack: Stack, pdf_path: Path, workers: list[int], reference: dict[str, Any], nice: int
) -> dict[str, Any]:
    pdf = pdf_path.read_bytes()
    netns = stack if isinstance(stack, NetnsStack) else None
    runs = []
    for n in workers:
        warm = _jobs_pool(stack, n, pdf, nice)
        load = _load()
        _log(f"jobs pool of {n}: warm in {warm:.1f} s; the job (load {load})")
        cpu0 = _pool_cpu(stack)
        traffic0 = netns.network.traffic() if netns and netns.network else {}
        run = _run_job(stack, pdf)
        run["pool_cpu_s"] = round(_pool_cpu(stack) - cpu0, 1)
        run["processes"] = n
        run["load_at_start"] = load
        run["load_at_end"] = _load()
        if netns and netns.network and netns.backends:
            traffic = netns.network.traffic()
            run["network_mb"] = {k: round((traffic[k] - traffic0[k]) / 1e6, 1) for k in traffic}
            run["s3_after"] = netns.backends.s3_objects()
            run["worker_disks_after"] = netns.worker_disks()[:n]
        if run["status"] == "succeeded":
            run["markdown_sha256"], run["result_pages"] = job_markdown_sha256(stack.port, stack.key, run["id"])
        run["ledger_ok"], run["ledger"] = ledger_verdict(
            job_ledger(stack, run["id"]), status=run["status"], pages=run["pages_total"]
        )
        run["same_as_engine"] = run.get("markdown_sha256") == reference["sha256"]
        _log(
            f"  {run['status']} in {run['seconds']:.1f} s (client {run['client_s']} s), same Markdown as the "
            f"engine: {run['same_as_engine']}, ledger {run['ledger']}"
            + (f", network {run['network_mb']} MB" if "network_mb" in run else "")
        )
        runs.append(run)
    ok = [r for r in runs if r["status"] == "succeeded"]
    ups = speedups({r["processes"]: r["seconds"] for r in ok})
    for r in runs:
        r["speedup"] = ups.get(r["processes"])
    pool = (
        "N `celery worker -Q jobs,jobs_test --concurrency 1`, each in a network namespace of its own"
        if netns
        else "one `celery worker -Q jobs,jobs_test --concurrency N` (prefork, N processes) per setting"
    )
    return {
        "document": f"{BOOK} repeated to {reference['pages']} pages",
        "pages": reference["pages"],
        "part_pages": PART_PAGES,
        "reference": reference,
        "pool": pool,
        "nice": nice,
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


@contextlib.contextmanager
def _background(n: int, workdir: Path) -> Any:
    """n CPU-bound processes of other tenants: busy loops, each in a session of its own."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "while True: pass"],
            stdout=subprocess.DEVNULL,
            stderr=(workdir / "background.log").open("ab"),
            start_new_session=True,
        )
        for _ in range(n)
    ]
    try:
        yield
    finally:
        for proc in procs:
            stop_process_group(proc, 5)


def _latency_once(
    stack: Stack, pdf_path: Path, n_workers: int, nice: int, files: dict[str, list[Path]]
) -> dict[str, Any]:
    """Idle, busy and idle-again series around one long job on a fresh jobs pool at `nice`."""
    _jobs_pool(stack, n_workers, pdf_path.read_bytes(), nice)
    pool_nice = sorted({ni for _pid, _cpu, ni in _pool_processes(stack)})
    load = _load()
    idle = _one_page_series(stack, files["idle"])
    t0 = time.time()
    job = job_create(stack.port, stack.key, pdf_path.read_bytes())
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        row = job_row(stack, job["id"])
        if row["status"] == "running" and row["pages_parsed"] >= PART_PAGES:
            break
        time.sleep(0.2)
    busy = _one_page_series(stack, files["busy"])
    during = job_row(stack, job["id"])
    job_cancel(stack.port, stack.key, job["id"])
    end = job_wait(stack.port, stack.key, job["id"], since=t0, timeout=600)
    row = job_row(stack, job["id"])
    ledger_ok, ledger = ledger_verdict(job_ledger(stack, job["id"]), status=row["status"], pages=row["pages_total"])
    # Idle again once the job has ended: the machine's own load drifts meanwhile.
    after = _one_page_series(stack, files["after"])
    ms = {name: [s * 1000 for s in series] for name, series in (("idle", idle + after), ("busy", busy))}
    ok, ratio = latency_verdict(percentile(ms["idle"], 95), percentile(ms["busy"], 95))
    return {
        "nice": nice,
        "pool_nice_observed": pool_nice,
        "load_at_start": load,
        "load_at_end": _load(),
        "idle_before": _summary(idle),
        "idle_after": _summary(after),
        "idle": _summary(idle + after),
        "busy": _summary(busy),
        "job_running_throughout": during["status"] == "running",
        "job_pages_completed_at_last_request": during["pages_completed"],
        "job": {"id": job["id"], "status": row["status"], "client_s": round(end.seconds, 1)},
        "ledger_ok": ledger_ok,
        "ledger": ledger,
        "p95_ratio": ratio,
        "goal_met": ok,
    }


def measure_latency(
    stack: Stack, pdf_path: Path, n_workers: int, requests: int, nices: list[int], backgrounds: list[int], workdir: Path
) -> dict[str, Any]:
    from bench.service import _make_pages

    settings = [(bg, nice) for bg in backgrounds for nice in nices]
    tags = ["warm"] + [f"{kind}{i}" for i in range(len(settings)) for kind in ("idle", "busy", "after")]
    files = _make_pages(
        LATENCY_FIRST_PAGE,
        LATENCY_FIRST_PAGE + requests - 1,
        [f"jobs-{tag}-{workdir.name}" for tag in tags],
        workdir / "children.log",
    )
    by_tag = dict(zip(tags, files.values(), strict=True))
    _one_page_series(stack, by_tag["warm"][:3])  # warm the interactive worker
    runs = []
    for i, (bg, nice) in enumerate(settings):
        with _background(bg, workdir):
            _log(f"latency: jobs pool at nice {nice}, {bg} background process(es) (load {_load()})")
            run = _latency_once(
                stack, pdf_path, n_workers, nice, {kind: by_tag[f"{kind}{i}"] for kind in ("idle", "busy", "after")}
            )
        run["background_processes"] = bg
        _log(
            f"  p95 {run['idle']['p95_ms']:.0f} ms without the job, {run['busy']['p95_ms']:.0f} ms with it: "
            f"ratio {run['p95_ratio']:.2f} (pool nice {run['pool_nice_observed']}; job {run['job']['status']}, "
            f"{run['job_pages_completed_at_last_request']} pages done)"
        )
        runs.append(run)
    return {
        "jobs_pool_processes": n_workers,
        "interactive_pool_processes": 1,
        "source": f"pdfjs__freeculture.pdf pages {LATENCY_FIRST_PAGE}-{LATENCY_FIRST_PAGE + requests - 1}, one a file, "
        "tagged so none is cached; sent one after the other, 0.1 s apart",
        "pages": None,
        "runs": runs,
        "goal_ratio": GOAL_LATENCY_RATIO,
    }


# --------------------------------------------------------------------------------------------
# Orchestration


def _netns_stack(opts: Any, workdir: Path, backends: Backends, network: Network) -> NetnsStack:
    return NetnsStack(
        workdir=workdir,
        database_url=backends.database_url("svcx_bench_jobs"),
        redis_url=backends.redis_url(0),
        db_prefixes=("svcx_bench",),
        label="benchjobs",
        web_concurrency=2,
        web_threads=8,
        extra_env={"SVCX_JOB_PART_PAGES": str(PART_PAGES), **backends.s3_env()},
        network=network,
        backends=backends,
    )


def _netns_isolation(stack: NetnsStack, opts: Any) -> dict[str, Any]:
    """What worker 0's namespace reaches: the bench's servers on the bridge, not the machine's
    PostgreSQL and Redis on 127.0.0.1. Raises RuntimeError when it is otherwise."""
    assert stack.network is not None
    assert stack.backends is not None
    from bench.stack import Database

    net, b = stack.network, stack.backends
    checks = {
        "bridge postgres": net.reachable(0, net.host, b.ports["postgres"]),
        "bridge redis": net.reachable(0, net.host, b.ports["redis"]),
        "bridge s3": net.reachable(0, net.host, b.ports["s3"]),
        "machine postgres on 127.0.0.1": net.reachable(0, "127.0.0.1", int(Database.from_url(opts.database_url).port)),
        "machine redis on 127.0.0.1": net.reachable(0, "127.0.0.1", 6379),
    }
    if not all(v for k, v in checks.items() if k.startswith("bridge")) or any(
        v for k, v in checks.items() if k.startswith("machine")
    ):
        raise RuntimeError(f"namespace isolation is not as intended: {checks}")
    return checks


def _measure(opts: Any, only: list[str], stack: Stack, path: Path, workdir: Path) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    suffix = "_netns" if isinstance(stack, NetnsStack) else ""
    if "scaling" in only:
        reference = reference_sha256(path)
        _log(f"engine reference: {reference['pages']} pages, {reference['seconds']} s (cached: {reference['cached']})")
    stack.setup(org_name="Bench jobs", credits=10_000_000, limits=None)
    stack.start_web()
    stack.start_worker(1)
    stack.start_beat()
    _log(f"service healthy in {stack.wait_healthy():.1f} s on port {stack.port}")
    if "scaling" in only:
        sections["scaling" + suffix] = measure_scaling(stack, path, opts.workers, reference, opts.scaling_nice)
    if "latency" in only:
        sections["latency" + suffix] = measure_latency(
            stack,
            path,
            opts.latency_workers,
            opts.latency_requests,
            opts.latency_nice,
            opts.latency_background,
            workdir,
        )
        sections["latency" + suffix]["pages"] = opts.pages
    return sections


def run(opts: Any, argv: list[str]) -> int:
    if not (CORPUS_DIR / "files" / BOOK).exists():
        print(f"jobs: {CORPUS_DIR / 'files' / BOOK} is absent; this bench needs the real corpus", file=sys.stderr)
        return 2
    only = list(opts.only or SECTIONS)
    started = time.monotonic()
    workdir = JOBS_CACHE / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
    workdir.mkdir(parents=True, exist_ok=True)
    provenance: dict[str, Any] = {
        "command": "python -m bench " + shlex.join(argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_at_start": _load(),
        "code": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR, capture_output=True, text=True
        ).stdout.strip(),
    }
    path = long_document(opts.pages)
    _log(f"document {path} ({path.stat().st_size / 1e6:.1f} MB); logs in {workdir}")
    error = None
    sections: dict[str, Any] = {}
    network: Network | None = None
    backends: Backends | None = None
    stack: Stack | None = None
    with terminate_as_exit():
        try:
            if opts.netns:
                if stale := stale_remove():
                    _log(f"removed what an earlier run left: {stale}")
                pools = [
                    *(opts.workers if "scaling" in only else []),
                    *([opts.latency_workers] if "latency" in only else []),
                ]
                network = Network.create(max(pools), opts.netns_rate)
                backends = Backends(Path(f"/tmp/svcx-bench-netns-{os.getpid()}"), network.host)
                backends.start(s3=True)
                stack = _netns_stack(opts, workdir, backends, network)
                provenance["network"] = {
                    "subnet": f"{network.subnet}.0/24",
                    "namespaces": len(network.namespaces),
                    "rate": opts.netns_rate,
                    "isolation": _netns_isolation(stack, opts),
                }
                _log(
                    f"namespaces {network.namespaces} on {network.bridge} {network.host}/24; backends {backends.ports}"
                )
            else:
                if opts.own_backends:
                    backends = Backends(Path(f"/tmp/svcx-bench-jobs-{os.getpid()}"), "127.0.0.1")
                    backends.start(s3=False)
                    provenance["backends"] = "the bench's own PostgreSQL cluster and redis-server on 127.0.0.1"
                stack = Stack(
                    workdir=workdir,
                    database_url=backends.database_url("svcx_bench_jobs") if backends else opts.database_url,
                    redis_url=backends.redis_url(0) if backends else opts.redis_url,
                    db_prefixes=("svcx_bench",),
                    label="benchjobs",
                    web_concurrency=2,
                    web_threads=8,
                    extra_env={"SVCX_JOB_PART_PAGES": str(PART_PAGES)},
                )
            sections = _measure(opts, only, stack, path, workdir)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            _log(f"FAILED: {error}")
        finally:
            if stack is not None:
                stack.close(keep=opts.keep)
            if backends is not None:
                backends.stop()
            if network is not None:
                network.destroy()
    provenance["load_average_at_end"] = _load()
    provenance["seconds"] = round(time.monotonic() - started)
    provenance["error"] = error
    for section in sections.values():
        section["provenance"] = provenance
    name = "jobs-partial" if error else "jobs"
    earlier = RESULTS_DIR / f"{name}.json"
    record = sections_merged(json.loads(earlier.read_text()) if earlier.exists() else {}, sections)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    (RESULTS_DIR / f"{name}.md").write_text(render(record))
    _log(f"results in {RESULTS_DIR}/{name}.md")
    return 1 if error else 0


def _f(v: Any, nd: int = 1, unit: str = "") -> str:
    return "n/a" if v is None else f"{v:.{nd}f}{unit}"


def _provenance(p: dict[str, Any]) -> str:
    return (
        f"Produced by `{p['command']}` on {p['date']} (commit {p['code']}; {p['machine']}; load average at the "
        f"start {p['load_average_at_start']}, at the end {p.get('load_average_at_end')}; {p.get('seconds')} s in all)."
        + (f" Backends: {p['backends']}." if p.get("backends") else "")
        + (f" **The run failed:** `{p['error']}`" if p.get("error") else "")
    )


def _counts(ns: list[int]) -> str:
    words = [str(n) for n in ns]
    return " and ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " and " + words[-1]


def _scaling_lines(sc: dict[str, Any], netns: bool) -> list[str]:
    ref = sc["reference"]
    pages = sc["pages"]
    where = "on workers in separate network namespaces" if netns else "on this machine"
    lines = [
        f"## A {pages:,}-page job over {_counts([r['processes'] for r in sc['runs']])} worker processes, {where}",
        "",
        _provenance(sc["provenance"]),
        "",
        f"{sc['document']}, parts of {sc['part_pages']} pages, sent to `POST /v2/jobs` (raw PDF) and "
        f"polled every 0.5 s. Pool: {sc['pool']}, at nice {sc.get('nice', 0)} (SVCX_JOB_WORKER_NICE), warmed by a "
        "job of N parts. Seconds from the job's "
        "creation to its end (its row's `created_at` and `finished_at`); the client's figure adds the "
        f"upload, the pre-flight and the polling. The engine alone, `convert(path)` in one process: "
        f"{ref['seconds']} s"
        + (" (when it was computed, by an earlier run: the reference is kept)" if ref.get("cached") else "")
        + ". Pool CPU seconds: user and system time of the jobs workers' processes during "
        "the job; cores busy = pool CPU seconds / job seconds, what the pool got of the machine (2 would be "
        "both cores; less means other work or waiting took the rest).",
        "",
    ]
    if netns:
        net = sc["provenance"].get("network", {})
        lines += [
            "The simulation (`bench/netns.py`): one network namespace per worker process, joined by a veth pair "
            f"to a bridge on the host ({net.get('subnet')}); the bench's own PostgreSQL (a cluster made by "
            "`initdb` under /tmp), `redis-server` and moto's S3 server listen on the bridge's address only, "
            "and the web tier, the interactive worker and beat use the same addresses. Each worker has its own "
            "SVCX_VAR_DIR; the store is S3 (`SVCX_STORE=s3`), so the job's upload, layouts, pages and result "
            "pass through S3. Checked before the run, from a worker's namespace: "
            + ", ".join(f"{k} {'reachable' if v else 'unreachable'}" for k, v in net.get("isolation", {}).items())
            + ". "
            + (
                f"Each link capped at {net['rate']} in both directions (`tc qdisc ... tbf`). "
                if net.get("rate")
                else "No rate cap or added delay: the kernel here has no `netem` queueing discipline "
                '(`tc qdisc add ... netem` answers "Specified qdisc kind is unknown"), so every '
                "round trip is a veth and bridge hop on one machine (tens of microseconds). "
            )
            + "Network: megabytes the workers' links carried during the job (to the workers / from them).",
            "",
        ]
    head = (
        "| processes | job seconds | client seconds | speed-up from 1 | pool CPU seconds | cores busy | "
        "load at start, end | Markdown = engine's | ledger (hold, capture) | pages completed |"
    )
    rule = "| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: |"
    if netns:
        head += " network MB | worker dirs after |"
        rule += " ---: | --- |"
    lines += [head, rule]
    for r in sc["runs"]:
        row = (
            f"| {r['processes']} | {_f(r['seconds'])} | {r['client_s']} | {_f(r.get('speedup'), 2, 'x')} | "
            f"{r['pool_cpu_s']} | {_f(r['pool_cpu_s'] / r['seconds'] if r['seconds'] else None, 2)} | "
            f"{r['load_at_start']}, {r.get('load_at_end', '-')} | {'yes' if r['same_as_engine'] else 'NO'} | "
            f"{'ok' if r['ledger_ok'] else 'WRONG'}: {r['ledger']} | {r['pages_completed']} / {r['pages_total']} |"
        )
        if netns:
            mb = r.get("network_mb", {})
            disks = ", ".join(f"{d['files']} files {d['bytes'] / 1e3:.0f} kB" for d in r.get("worker_disks_after", []))
            row += f" {mb.get('to_workers')} / {mb.get('from_workers')} | {disks} |"
        lines.append(row)
    lines += [
        "",
        f"Goal: at least {sc['goal_speedup_1_to_2']}x from 1 to 2 processes on 2 cores: "
        f"**{'met' if sc['goal_met'] else 'not met'}**. Markdown identical across settings and equal to the "
        f"engine's (SHA-256 {ref['sha256'][:16]}...): **{'yes' if sc['same_markdown_everywhere'] else 'NO'}**. "
        "On 2 cores, 4 processes can do no more than keep both cores busy while the lead renders; "
        "the pool CPU seconds say what the parts cost beyond one conversion.",
        "",
    ]
    if netns and sc["runs"]:
        s3 = sc["runs"][-1].get("s3_after", {})
        lines += [
            "The bucket after the last job (the earlier jobs' objects included): "
            + ", ".join(f"`{k}/` {v['objects']} objects, {v['bytes'] / 1e6:.1f} MB" for k, v in sorted(s3.items()))
            + ". Worker dirs after: what each worker's own SVCX_VAR_DIR held as the job ended: nothing but, "
            "at times, a task's copy of the job's PDF (`spool/fetched-*.pdf`, 2.4 MB), fetched from S3 for "
            "the time of the task and deleted as it returns: no worker reads another's files.",
            "",
        ]
    return lines


_SERIES = {"idle": "without a job (before and after)", "busy": "with the job running"}


def _latency_lines(la: dict[str, Any]) -> list[str]:
    lines = [
        "## Interactive latency while a job runs",
        "",
        _provenance(la["provenance"]),
        "",
    ]
    if "runs" not in la:  # the earlier layout: one measurement, a jobs pool of its own size, nice 0
        la = {**la, "runs": [{**la, "nice": 0, "background_processes": 0}]}
    lines += [
        f"{la['source']}: `POST /v1/convert` on the interactive pool ({la['interactive_pool_processes']} "
        f"process), without a job (before one and after it) and while a {la['pages']:,}-page job runs on a "
        f"jobs pool of {la['jobs_pool_processes']} process(es) (from its first parsed part; canceled once the "
        "series ends). The two pools share the machine's 2 cores (and the machine is shared with other "
        "agents' work: the load averages); deployed, they may be separate containers or hosts. Nice: the jobs "
        "pool's SVCX_JOB_WORKER_NICE (0 is the service before the setting), and the niceness its processes "
        "were seen at; background: CPU-bound busy loops of other tenants, one session each, running through "
        "the three series.",
        "",
        "| nice (seen) | background | load at start, end | p50 / p95 ms without a job | p50 / p95 ms with the job "
        "| p95 ratio | pages done by the last request | job, ledger |",
        "| --- | ---: | --- | --- | --- | ---: | ---: | --- |",
    ]
    for r in la["runs"]:
        idle, busy = r["idle"], r["busy"]
        lines.append(
            f"| {r['nice']} ({', '.join(map(str, r.get('pool_nice_observed', []))) or '-'}) | "
            f"{r['background_processes']} | {r.get('load_at_start', '-')}, {r.get('load_at_end', '-')} | "
            f"{_f(idle['p50_ms'], 0)} / {_f(idle['p95_ms'], 0)} | {_f(busy['p50_ms'], 0)} / {_f(busy['p95_ms'], 0)} | "
            f"**{_f(r['p95_ratio'], 2)}** | {r['job_pages_completed_at_last_request']} | "
            f"{r['job']['status']}, {'ok' if r.get('ledger_ok', True) else 'WRONG'}: {r.get('ledger', '-')} |"
        )
    met = [r for r in la["runs"] if r["goal_met"]]
    lines += [
        "",
        f"Goal: p95 with the job within {la['goal_ratio']}x of the p95 without: met in {len(met)} of "
        f"{len(la['runs'])} settings (ratio in bold). Each setting's series: "
        + "; ".join(
            f"nice {r['nice']}, background {r['background_processes']}: "
            + ", ".join(f"{label} {r[k]['n']} requests max {_f(r[k]['max_ms'], 0)} ms" for k, label in _SERIES.items())
            for r in la["runs"]
        )
        + ".",
        "",
    ]
    return lines


def render(record: dict[str, Any]) -> str:
    lines = [
        "# Version 2 jobs on the running service",
        "",
        "Written by `python -m bench jobs` (`bench/jobs.py`); each section says the command, commit and load "
        "that made it (a run replaces the sections it measured).",
        "",
        "**Caveat.** Wall-clock times on a shared 2-core machine where other agents' work was running (the",
        "load averages; each run's own is in its row): the figures move by tens of percent between runs and",
        "are to be rerun on a quiet machine before they are quoted.",
        "",
    ]
    sections = record["sections"]
    for name in ("scaling", "scaling_netns"):
        if name in sections:
            lines += _scaling_lines(sections[name], netns=name.endswith("_netns"))
    for name in ("latency", "latency_netns"):
        if name in sections:
            lines += _latency_lines(sections[name])
    if record.get("notes"):
        lines += ["## Notes", "", *(f"- {note}" for note in record["notes"]), ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import main as bench_main

    return bench_main(["jobs", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
