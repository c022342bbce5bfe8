"""``python -m bench service``: the whole service (gunicorn + Celery + PostgreSQL + Redis) under load.

Four measurements, each reproducible alone with ``--only NAME``:

- ``cache-hit``: one conversion warms the result cache, then N sequential identical requests
  over one keep-alive connection (``http.client``): p50/p99 latency of a cache hit. Also the same
  with 8 concurrent clients, and a cache hit of the 20-page selection of a 3.5 MB PDF (the upload
  and its SHA-256 are part of every request, cached or not).
- ``throughput``: distinct one-page PDFs (pages of a corpus book, each made unique so nothing is
  cached) sent by M concurrent clients, with one Celery worker process and with two
  (``--concurrency 1`` / ``2``); pages/second. The engine alone on the same files, sequentially
  in one process, is the reference.
- ``latency-200``: a 200-page conversion (not cached), wall time, against the engine alone.
- ``overhead-20``: a 20-page selection, several repetitions alternating service and engine;
  overhead = median(service) / median(engine) - 1.

"Engine alone" = ``conversion.engine.convert(path, pages=...)`` in a warm child process of the
service venv (imports excluded), wall time. Service times are wall times measured by the client,
from the first byte sent to the last byte of the response read.

Everything runs on loopback in a scratch database and Redis DB that are dropped and flushed at
the start and the end; every process started here is stopped on exit, errors included.
The orchestration is stdlib only; the children (manage.py, gunicorn, celery, PDF generation,
engine timing) run with the service venv (``SVCX_PYTHON``).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.paths import CACHE_DIR, CORPUS_DIR, MAIN_PYTHON, REPO_DIR, RESULTS_DIR
from bench.stack import Stack, stop_process_group

SECTIONS = ("cache-hit", "throughput", "latency-200", "overhead-20")
GOAL_CACHE_HIT_P50_MS = 20.0
GOAL_OVERHEAD_20 = 0.10
SERVICE_CACHE = CACHE_DIR / "service"

# Corpus files (../shared/corpus/real/files).
BOOK = "pdfjs__freeculture.pdf"  # 352 pages; page 1 is blank, the others have text
WALDEN = "pdfcpu__WaldenFull.pdf"  # 249 pages, 3.5 MB
THROUGHPUT_FIRST_PAGE = 2


# --------------------------------------------------------------------------------------------
# Small helpers


def _log(msg: str) -> None:
    print(f"[service {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _pct(values: list[float], q: float) -> float | None:
    """Percentile q (0-100) by linear interpolation between closest ranks."""
    if not values:
        return None
    s = sorted(values)
    if len(s) == 1:
        return s[0]
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _latency_summary(seconds: list[float]) -> dict[str, Any]:
    ms = [x * 1000 for x in seconds]
    return {
        "n": len(ms),
        "p50_ms": _pct(ms, 50),
        "p90_ms": _pct(ms, 90),
        "p99_ms": _pct(ms, 99),
        "min_ms": min(ms) if ms else None,
        "max_ms": max(ms) if ms else None,
        "mean_ms": statistics.fmean(ms) if ms else None,
    }


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _mem_total_mib() -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    return None


def _other_load(seconds: float = 1.0) -> list[str]:
    """The busiest processes over `seconds` (the machine is shared): CPU share and command."""
    before = {pid: (cpu, cmd) for pid, _sid, cpu, cmd in _proc_table()}
    time.sleep(seconds)
    rows = []
    for pid, _sid, cpu, cmd in _proc_table():
        if pid in before and pid != os.getpid():
            share = (cpu - before[pid][0]) / seconds
            if share >= 0.05:
                rows.append((share, " ".join(cmd.split()[:4])[:70]))
    rows.sort(reverse=True)
    return [f"{share:.0%} {cmd}" for share, cmd in rows[:5]]


def _fmt(v: Any, nd: int = 1) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


# --------------------------------------------------------------------------------------------
# CPU accounting (Linux /proc): who used the 2 shared cores during a measurement

_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot."""
    with contextlib.suppress(OSError, ValueError):
        parts = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        v = [int(x) for x in parts[:8]] + [0] * max(0, 8 - len(parts))
        user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
        busy = user + nice + system + irq + softirq + steal
        return busy, busy + idle + iowait
    return 0, 0


def _proc_table() -> list[tuple[int, int, float, str]]:
    """(pid, session id, CPU seconds, command line) of every process we can read."""
    rows = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            cmd = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        # fields[0] is field 3 (state): session = field 6, utime = 14, stime = 15
        rows.append((int(entry.name), int(fields[3]), (int(fields[11]) + int(fields[12])) / _TCK, cmd))
    return rows


@dataclass
class CpuMeter:
    """CPU seconds by component between `start` and `stop`: the web tier (gunicorn), the Celery
    worker (parent and children), the PostgreSQL backends of the scratch database, the engine
    child, this process (the HTTP clients), and the rest of the machine (other work, Redis)."""

    groups: dict[str, int]  # name -> session id
    db_name: str
    _t0: float = 0.0
    _m0: tuple[int, int] = (0, 0)
    _c0: dict[int, float] = field(default_factory=dict)
    _self0: float = 0.0

    def _sample(self) -> dict[int, tuple[str, float]]:
        """pid -> (component, CPU seconds) of the processes that belong to a component."""
        by_sid = {sid: name for name, sid in self.groups.items()}
        needle = f" {self.db_name} "
        out: dict[int, tuple[str, float]] = {}
        for pid, sid, cpu, cmd in _proc_table():
            if sid in by_sid:
                out[pid] = (by_sid[sid], cpu)
            elif cmd.startswith("postgres:") and needle in cmd:
                out[pid] = ("postgres", cpu)
        return out

    def start(self) -> None:
        self._t0 = time.perf_counter()
        self._m0 = _machine_ticks()
        self._self0 = time.process_time()
        self._c0 = {pid: cpu for pid, (_name, cpu) in self._sample().items()}

    def stop(self) -> dict[str, float]:
        c1 = self._sample()
        self_cpu = time.process_time() - self._self0
        m1 = _machine_ticks()
        wall = time.perf_counter() - self._t0
        # Per process: one that started meanwhile counts from zero (a new database connection);
        # one that exited meanwhile is lost (rare: connections live 60 s, workers stay up).
        out = dict.fromkeys([*self.groups, "postgres"], 0.0)
        for pid, (name, cpu) in c1.items():
            out[name] += max(0.0, cpu - self._c0.get(pid, 0.0))
        out["bench_client"] = self_cpu
        busy = (m1[0] - self._m0[0]) / _TCK
        ours = sum(out.values())
        out["rest_of_machine"] = max(0.0, busy - ours)
        out["wall"] = wall
        out["machine_busy_cores"] = busy / wall if wall > 0 else 0.0
        out["other_cores"] = out["rest_of_machine"] / wall if wall > 0 else 0.0
        return out


# --------------------------------------------------------------------------------------------
# Children with the service venv: PDF generation and the engine alone


def _child_make_pages(src: str, out_dir: str, first: int, last: int, tags: list[str]) -> None:
    """One-page PDFs `TAG-PPPP.pdf` for pages first..last of src, each tagged in /Info so that
    every file (and so every cache key) is distinct while the work is the same across tags."""
    import pikepdf

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with pikepdf.open(src) as book:
        last = min(last, len(book.pages))
        for tag in tags:
            for number in range(first, last + 1):
                target = out / f"{tag}-{number:04d}.pdf"
                if target.exists():
                    continue
                with pikepdf.new() as pdf:
                    pdf.pages.append(book.pages[number - 1])
                    pdf.docinfo["/Title"] = f"svcx bench {tag} page {number}"
                    pdf.save(target)
    print(json.dumps({"ok": True}))


def _child_engine_server() -> None:
    """Read {"path", "first", "last"} lines on stdin; answer one JSON line each with the wall and
    CPU seconds of `convert` in this (warm) process."""
    from conversion.engine import EngineError, convert

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        pages = range(req["first"], req["last"] + 1) if req.get("first") else None
        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            res = convert(req["path"], pages=pages)
        except EngineError as exc:
            print(json.dumps({"ok": False, "error": exc.code}), flush=True)
            continue
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        print(
            json.dumps(
                {
                    "ok": True,
                    "wall_s": wall,
                    "cpu_s": cpu,
                    "pages": len(res.pages),
                    "chars": sum(len(p.markdown) for p in res.pages),
                    "timings": dict(res.timings),
                }
            ),
            flush=True,
        )


class Engine:
    """The engine alone, in one warm child process of the service venv."""

    def __init__(self, log: Path) -> None:
        self._err = log.open("ab")
        self.proc = subprocess.Popen(
            [str(MAIN_PYTHON), "-m", "bench.service", "--child", "engine-server"],
            cwd=REPO_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            start_new_session=True,
        )
        ready = self._read()
        if not ready.get("ready"):
            raise RuntimeError(f"engine child did not start: {ready}")

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"engine child exited ({self.proc.poll()}); see the log")
        return dict(json.loads(line))

    def convert(self, path: Path, first: int | None = None, last: int | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"path": str(path), "first": first, "last": last}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        stop_process_group(self.proc, 5)
        self._err.close()


# --------------------------------------------------------------------------------------------
# The service stack


@dataclass
class MeteredStack(Stack):
    """The service stack, and the engine-alone child once it runs, measured by CpuMeter."""

    engine_pid: int | None = None

    def meter(self) -> CpuMeter:
        groups = {"web": self.web.pid if self.web else -1, "worker": self.worker.pid if self.worker else -1}
        if self.engine_pid:
            groups["engine_child"] = self.engine_pid
        return CpuMeter(groups=groups, db_name=self.db.name)


# --------------------------------------------------------------------------------------------
# The HTTP client


@dataclass
class Reply:
    status: int
    seconds: float
    started: float  # time.time() when the request started (for comparison with database times)
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body))


class Client:
    """One keep-alive connection, like a client library would hold."""

    def __init__(self, port: int, key: str) -> None:
        self.port = port
        self.key = key
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def convert(self, body: bytes, query: str) -> Reply:
        headers = {
            "Authorization": f"Bearer {self.key}",
            "Content-Type": "application/pdf",
            "Accept": "application/json",
        }
        for attempt in (1, 2):
            started = time.time()
            t0 = time.perf_counter()
            try:
                self.conn.request("POST", f"/v1/convert?{query}", body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
            except (http.client.HTTPException, ConnectionError):
                # The server closed the idle keep-alive connection: reconnect once (untimed).
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
                if attempt == 2:
                    raise
                continue
            seconds = time.perf_counter() - t0
            if resp.getheader("Connection", "").lower() == "close":
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            return Reply(resp.status, seconds, started, {k.lower(): v for k, v in resp.getheaders()}, data)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def _per(cpu: dict[str, float], n: int) -> dict[str, float]:
    """CPU milliseconds per request (or page) by component."""
    keys = ("web", "worker", "postgres", "engine_child", "bench_client", "rest_of_machine")  # not the ratios
    return {k: cpu[k] * 1000 / n for k in keys if k in cpu} if n else {}


def _ok(reply: Reply, what: str, cached: bool | None = None) -> dict[str, Any]:
    if reply.status != 200:
        raise RuntimeError(f"{what}: HTTP {reply.status}: {reply.body[:400]!r}")
    data = reply.json()
    if cached is not None and data.get("cached") is not cached:
        raise RuntimeError(f"{what}: expected cached={cached}, got {data.get('cached')}")
    return data


# --------------------------------------------------------------------------------------------
# The measurements


def _with_suffix(src: Path, dest: Path, tag: str) -> Path:
    """A byte copy of src with a PDF comment appended after %%EOF: a distinct SHA-256 (so no
    cache hit) and the same work for the engine."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    with dest.open("ab") as fh:
        fh.write(f"\n% svcx bench {tag}\n".encode())
    return dest


def measure_cache_hit(stack: MeteredStack, files: dict[str, Path], n: int, clients: int) -> dict[str, Any]:
    small = files["one_page"].read_bytes()
    query = "pages=1"
    with contextlib.closing(Client(stack.port, stack.key)) as c:
        _ok(c.convert(small, query), "cache warm-up (miss)")
        for _ in range(20):
            _ok(c.convert(small, query), "cache warm-up (hit)", cached=True)
        seq = []
        meter = stack.meter()
        meter.start()
        for _ in range(n):
            r = c.convert(small, query)
            _ok(r, "cache hit", cached=True)
            seq.append(r.seconds)
        cpu = meter.stop()
    sequential = _latency_summary(seq)
    sequential["requests_per_s"] = n / sum(seq)
    sequential["cpu_ms_per_request"] = _per(cpu, n)
    sequential["other_cores"] = cpu["other_cores"]

    per_client = max(1, n // clients)
    lats: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []
    barrier = threading.Barrier(clients + 1)

    def worker(i: int) -> None:
        with contextlib.closing(Client(stack.port, stack.key)) as c:
            try:
                _ok(c.convert(small, query), "cache hit", cached=True)  # connect, untimed
                barrier.wait()
                for _ in range(per_client):
                    r = c.convert(small, query)
                    _ok(r, "cache hit", cached=True)
                    lats[i].append(r.seconds)
            except Exception as exc:  # reported below
                errors.append(repr(exc))
                with contextlib.suppress(threading.BrokenBarrierError):
                    barrier.abort()

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    meter = stack.meter()
    with contextlib.suppress(threading.BrokenBarrierError):
        barrier.wait()
    meter.start()
    t0 = time.perf_counter()
    for t in threads:
        t.join(timeout=300)
    wall = time.perf_counter() - t0
    cpu = meter.stop()
    if errors:
        raise RuntimeError(f"concurrent cache hits failed: {errors[:3]}")
    flat = [x for lat in lats for x in lat]
    concurrent = _latency_summary(flat)
    concurrent["clients"] = clients
    concurrent["requests_per_s"] = len(flat) / wall
    concurrent["cpu_ms_per_request"] = _per(cpu, len(flat))
    concurrent["machine_busy_cores"] = cpu["machine_busy_cores"]

    return {
        "file": files["one_page"].name,
        "file_bytes": len(small),
        "query": query,
        "sequential": sequential,
        "concurrent": concurrent,
        "goal_p50_ms": GOAL_CACHE_HIT_P50_MS,
        "goal_met": sequential["p50_ms"] is not None and sequential["p50_ms"] < GOAL_CACHE_HIT_P50_MS,
    }


def measure_cache_hit_large(stack: Stack, path: Path, query: str, n: int) -> dict[str, Any]:
    """Cache hits of a large upload (a 20-page selection of a 3.5 MB PDF)."""
    body = path.read_bytes()
    with contextlib.closing(Client(stack.port, stack.key)) as c:
        _ok(c.convert(body, query), "large cache warm-up")
        lat = []
        for _ in range(n):
            r = c.convert(body, query)
            _ok(r, "large cache hit", cached=True)
            lat.append(r.seconds)
    out = _latency_summary(lat)
    out.update({"file": WALDEN, "file_bytes": len(body), "query": query})
    return out


def _job_rows(stack: Stack, request_ids: list[str]) -> dict[str, dict[str, float]]:
    """created/started/finished of the jobs, as epoch seconds."""
    if not request_ids:
        return {}
    ids = ",".join("'" + r.replace("'", "") + "'" for r in request_ids)
    rows = stack.psql(
        "select request_id, extract(epoch from created_at), extract(epoch from started_at), "
        f"extract(epoch from finished_at) from conversion_conversionjob where request_id in ({ids})"
    )
    return {r[0]: {"created": float(r[1]), "started": float(r[2]), "finished": float(r[3])} for r in rows if r[3]}


def _breakdown(reply: Reply, data: dict[str, Any], job: dict[str, float] | None) -> dict[str, float | None]:
    """Where the service's time goes, from the client's clock, the job row and the worker's
    engine timings (same host, same wall clock)."""
    end = reply.started + reply.seconds
    timings = (data.get("debug") or {}).get("timings") or {}
    engine_s = timings.get("total")
    if not job:
        return {"total_s": reply.seconds, "worker_engine_s": engine_s}
    return {
        "total_s": reply.seconds,
        # upload, spool + SHA-256, auth, cache lookup, job row insert
        "web_before_job_s": job["created"] - reply.started,
        # Celery dispatch and the worker claiming the job
        "queue_s": job["started"] - job["created"],
        # preflight, hold, engine, per-page progress updates, result cache write, capture
        "worker_s": job["finished"] - job["started"],
        "worker_engine_s": engine_s,
        "worker_other_s": (job["finished"] - job["started"] - engine_s) if engine_s is not None else None,
        # BLPOP wake-up, job and result reads, JSON rendering, request log, transfer
        "web_after_job_s": end - job["finished"],
    }


def measure_selection(
    stack: MeteredStack, engine: Engine, src: Path, first: int, last: int, reps: int, workdir: Path, name: str
) -> dict[str, Any]:
    """Service vs engine alone on pages first..last of src, alternating, `reps` times each."""
    query = f"pages={first}-{last}&debug=true"
    svc: list[float] = []
    eng: list[float] = []
    replies: list[tuple[Reply, dict[str, Any]]] = []
    eng_runs = []
    cpus: list[dict[str, float]] = []
    with contextlib.closing(Client(stack.port, stack.key)) as c:
        for i in range(reps):
            distinct = _with_suffix(src, workdir / "selections" / f"{name}-{i}.pdf", f"{name} {i} {time.time()}")
            e = engine.convert(distinct, first, last)
            if not e.get("ok"):
                raise RuntimeError(f"engine failed on {src.name}: {e}")
            eng.append(e["wall_s"])
            eng_runs.append(e)
            body = distinct.read_bytes()
            meter = stack.meter()
            meter.start()
            r = c.convert(body, query)
            cpus.append(meter.stop())
            data = _ok(r, f"{name} conversion", cached=False)
            if len(data["pages"]) != e["pages"]:
                raise RuntimeError(f"{name}: service delivered {len(data['pages'])} pages, engine {e['pages']}")
            svc.append(r.seconds)
            replies.append((r, data))
            _log(f"  {name} rep {i + 1}/{reps}: engine {e['wall_s']:.3f} s, service {r.seconds:.3f} s")
    jobs = _job_rows(stack, [r.headers.get("x-request-id", "") for r, _ in replies])
    parts = [_breakdown(r, d, jobs.get(r.headers.get("x-request-id", ""))) for r, d in replies]
    keys = [k for k in parts[0] if all(p.get(k) is not None for p in parts)] if parts else []
    median_parts = {k: statistics.median(float(p[k]) for p in parts) for k in keys}  # type: ignore[arg-type]
    m_svc, m_eng = statistics.median(svc), statistics.median(eng)
    m_eng_cpu = statistics.median(x["cpu_s"] for x in eng_runs)
    cpu_median = {k: statistics.median(c[k] for c in cpus) for k in cpus[0]} if cpus else {}
    service_cpu = [sum(c[k] for k in ("web", "worker", "postgres")) for c in cpus]
    outside = [
        float(p["total_s"] or 0) - float(p["worker_engine_s"] or 0)
        for p in parts
        if p.get("worker_engine_s") is not None
    ]
    return {
        "file": src.name,
        "pages": f"{first}-{last}",
        "query": query,
        "file_bytes": src.stat().st_size,
        "repetitions": reps,
        "service_s": svc,
        "engine_s": eng,
        "engine_cpu_s": [x["cpu_s"] for x in eng_runs],
        "service_median_s": m_svc,
        "engine_median_s": m_eng,
        # Headline: the median over repetitions of service / engine - 1, each pair run back to back
        # (so under the same load from other work); the ratio of the medians is kept as well.
        "overhead": statistics.median(a / b - 1 for a, b in zip(svc, eng, strict=True)),
        "overhead_of_medians": m_svc / m_eng - 1,
        "overhead_added_s": statistics.median(a - b for a, b in zip(svc, eng, strict=True)),
        # Paired, per repetition: the service's time outside the worker's engine call, over the
        # engine alone; insensitive to how fast the engine happened to run in each process.
        "outside_engine_median_s": statistics.median(outside) if outside else None,
        "outside_engine_share": statistics.median(outside) / m_eng if outside else None,
        "breakdown_median_s": median_parts,
        "engine_cpu_median_s": m_eng_cpu,
        "service_cpu_median_s": statistics.median(service_cpu) if service_cpu else None,
        "cpu_overhead": statistics.median(service_cpu) / m_eng_cpu - 1 if service_cpu and m_eng_cpu else None,
        "cpu_median_s": cpu_median,
        "other_cores_median": statistics.median(c["other_cores"] for c in cpus) if cpus else None,
    }


def measure_throughput(stack: MeteredStack, files: list[Path], clients: int, time_cap: float) -> dict[str, Any]:
    """`clients` threads send the distinct one-page files, each file once; pages/second."""
    queue = list(files)
    lock = threading.Lock()
    lat: list[float] = []
    statuses: dict[str, int] = {}
    pages = 0
    errors: list[str] = []
    barrier = threading.Barrier(clients + 1)
    deadline = [0.0]
    last_done = [0.0]

    def worker() -> None:
        nonlocal pages
        with contextlib.closing(Client(stack.port, stack.key)) as c:
            barrier.wait()
            while True:
                with lock:
                    if not queue or time.perf_counter() > deadline[0]:
                        return
                    path = queue.pop(0)
                try:
                    r = c.convert(path.read_bytes(), "pages=1")
                except Exception as exc:  # counted below
                    with lock:
                        errors.append(repr(exc))
                    continue
                with lock:
                    statuses[str(r.status)] = statuses.get(str(r.status), 0) + 1
                    if r.status == 200:
                        data = r.json()
                        if data.get("cached"):
                            errors.append(f"unexpected cache hit for {path.name}")
                        pages += int(data.get("pages_billed") or 0)
                        lat.append(r.seconds)
                        last_done[0] = time.perf_counter()
                    else:
                        errors.append(f"HTTP {r.status} for {path.name}: {r.body[:200]!r}")

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    meter = stack.meter()
    meter.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + time_cap
    barrier.wait()
    for t in threads:
        t.join(timeout=time_cap + 200)
    elapsed = (last_done[0] or time.perf_counter()) - t0
    cpu = meter.stop()
    out = _latency_summary(lat)
    out.update(
        {
            "clients": clients,
            "worker_processes": stack.worker_concurrency,
            "requests_sent": sum(statuses.values()) + len([e for e in errors if not e.startswith("HTTP")]),
            "statuses": statuses,
            "pages": pages,
            "elapsed_s": elapsed,
            "pages_per_s": pages / elapsed if elapsed > 0 else None,
            "time_capped": bool(queue),
            "errors": errors[:10],
            "cpu_ms_per_page": _per(cpu, pages),
            "machine_busy_cores": cpu["machine_busy_cores"],
            "other_cores": cpu["other_cores"],
        }
    )
    return out


def measure_engine_pages(engine: Engine, files: list[Path]) -> dict[str, Any]:
    """The engine alone on the same one-page files, one after another in one process."""
    wall = cpu = 0.0
    pages = 0
    for path in files:
        e = engine.convert(path, 1, 1)
        if e.get("ok"):
            wall += e["wall_s"]
            cpu += e["cpu_s"]
            pages += e["pages"]
    return {
        "files": len(files),
        "pages": pages,
        "wall_s": wall,
        "cpu_s": cpu,
        "pages_per_s": pages / wall if wall else None,
        "ms_per_page": wall / pages * 1000 if pages else None,
    }


# --------------------------------------------------------------------------------------------
# Orchestration


def _corpus(name: str) -> Path:
    path = CORPUS_DIR / "files" / name
    if not path.exists():
        raise SystemExit(f"corpus file missing: {path} (set SVCX_CORPUS)")
    return path


def _make_pages(first: int, last: int, tags: list[str], log: Path) -> dict[str, list[Path]]:
    out = SERVICE_CACHE / "pages"
    cmd = [
        str(MAIN_PYTHON),
        "-m",
        "bench.service",
        "--child",
        "make-pages",
        str(_corpus(BOOK)),
        str(out),
        str(first),
        str(last),
        ",".join(tags),
    ]
    with log.open("ab") as err:
        subprocess.run(cmd, cwd=REPO_DIR, check=True, stdout=subprocess.DEVNULL, stderr=err, timeout=300)
    return {tag: [out / f"{tag}-{n:04d}.pdf" for n in range(first, last + 1)] for tag in tags}


def run(opts: Any, argv: list[str]) -> int:
    started = time.monotonic()
    only = list(opts.only or SECTIONS)
    run_id = f"{int(time.time())}"
    workdir = SERVICE_CACHE / f"run-{run_id}"
    for old in sorted(SERVICE_CACHE.glob("run-*"))[:-2]:  # keep the logs of the last two runs
        shutil.rmtree(old, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    command = "python -m bench " + " ".join(shlex.quote(a) for a in argv)
    machine = {
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_mib": _mem_total_mib(),
        "python": platform.python_version(),
        "loadavg_start": _loadavg(),
        "busy_processes_start": _other_load(),
    }
    config = {
        "database": opts.database_url.rsplit("@", 1)[-1],
        "redis": opts.redis_url,
        "web_concurrency": opts.web_concurrency,
        "web_threads": opts.web_threads,
        "log_level": "INFO (access log on, written to a file)",
    }
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench"],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
    )
    config["code"] = git.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")
    _log(f"scratch dir {workdir}")

    stack = MeteredStack(
        workdir=workdir,
        database_url=opts.database_url,
        redis_url=opts.redis_url,
        db_prefixes=("svcx_bench", "bench"),
        label="bench",
        web_concurrency=opts.web_concurrency,
        web_threads=opts.web_threads,
        log_level="INFO",
    )
    engine: Engine | None = None
    sections: dict[str, Any] = {}
    error: str | None = None

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        n_pages = opts.throughput_requests
        last_page = THROUGHPUT_FIRST_PAGE + n_pages - 1
        tags = ["w1", "w2", "cache"] if "throughput" in only else ["cache"]
        t0 = time.monotonic()
        page_files = _make_pages(THROUGHPUT_FIRST_PAGE, last_page, tags, workdir / "children.log")
        _log(f"one-page PDFs ready in {time.monotonic() - t0:.1f} s")
        t0 = time.monotonic()
        config["limits_lifted"] = stack.setup(org_name="Bench", credits=10_000_000, limits=None)
        _log(f"database ready in {time.monotonic() - t0:.1f} s (org {stack.org})")
        stack.start_web()
        stack.start_worker(1)
        _log(f"service healthy in {stack.wait_healthy():.1f} s on port {stack.port}")
        engine = Engine(workdir / "children.log")
        stack.engine_pid = engine.proc.pid
        # Warm both: the first conversion in a process pays lazy imports and caches.
        warm = page_files["cache"][1]
        engine.convert(warm, 1, 1)
        with contextlib.closing(Client(stack.port, stack.key)) as c:
            _ok(c.convert(warm.read_bytes(), "pages=1"), "worker warm-up")

        if "cache-hit" in only:
            _log(f"cache hit: {opts.cache_requests} sequential, then {opts.cache_clients} clients")
            hit = measure_cache_hit(
                stack, {"one_page": page_files["cache"][0]}, opts.cache_requests, opts.cache_clients
            )
            _log(
                f"  p50 {hit['sequential']['p50_ms']:.2f} ms, p99 {hit['sequential']['p99_ms']:.2f} ms; "
                f"{opts.cache_clients} clients p50 {hit['concurrent']['p50_ms']:.2f} ms, "
                f"{hit['concurrent']['requests_per_s']:.0f} req/s"
            )
            large_src = _with_suffix(_corpus(WALDEN), workdir / "selections" / "walden-hit.pdf", run_id)
            hit["large_upload"] = measure_cache_hit_large(stack, large_src, "pages=1-20", opts.cache_large_requests)
            _log(f"  3.5 MB upload, 20 pages: p50 {hit['large_upload']['p50_ms']:.2f} ms")
            sections["cache-hit"] = hit

        if "overhead-20" in only:
            _log(f"20-page overhead: {opts.reps_20} repetitions")
            sec = measure_selection(stack, engine, _corpus(WALDEN), 1, 20, opts.reps_20, workdir, "walden20")
            sec["goal_overhead"] = GOAL_OVERHEAD_20
            sec["goal_met"] = sec["overhead"] < GOAL_OVERHEAD_20
            _log(f"  overhead {sec['overhead'] * 100:.1f}% (+{sec['overhead_added_s'] * 1000:.0f} ms)")
            sections["overhead-20"] = sec

        if "latency-200" in only:
            _log(f"200-page latency: {opts.reps_200} repetition(s)")
            sec = measure_selection(stack, engine, _corpus(BOOK), 1, 200, opts.reps_200, workdir, "book200")
            _log(f"  service {sec['service_median_s']:.2f} s, engine {sec['engine_median_s']:.2f} s")
            sections["latency-200"] = sec

        if "throughput" in only:
            tp: dict[str, Any] = {
                "source": f"{BOOK} pages {THROUGHPUT_FIRST_PAGE}-{last_page}, one per file, each file tagged "
                "to be distinct (no cache hit)",
                "clients": opts.throughput_clients,
            }
            tp["engine_alone"] = measure_engine_pages(engine, page_files["w1"])
            _log(f"throughput: engine alone {tp['engine_alone']['pages_per_s']:.1f} pages/s (one process)")
            for workers, tag in ((1, "w1"), (2, "w2")):
                if stack.worker_concurrency != workers:
                    stack.stop_worker()
                    stack.start_worker(workers)
                    stack.wait_healthy()
                    with contextlib.closing(Client(stack.port, stack.key)) as c:
                        _ok(c.convert(page_files["cache"][2].read_bytes(), "pages=1"), "worker warm-up")
                        _ok(c.convert(page_files["cache"][3].read_bytes(), "pages=1"), "worker warm-up")
                res = measure_throughput(stack, page_files[tag], opts.throughput_clients, opts.throughput_cap)
                tp[f"workers_{workers}"] = res
                _log(
                    f"  {workers} worker(s): {res['pages_per_s']:.1f} pages/s, p50 {res['p50_ms']:.0f} ms, "
                    f"statuses {res['statuses']}"
                )
            sections["throughput"] = tp
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        _log(f"FAILED: {error}")
    finally:
        machine["loadavg_end"] = _loadavg()
        if engine is not None:
            engine.close()
        t0 = time.monotonic()
        stack.stop_worker()
        t1 = time.monotonic()
        stack.stop_web()
        _log(f"worker stopped in {t1 - t0:.1f} s, web in {time.monotonic() - t1:.1f} s")
        stack.close(keep=opts.keep)
        signal.signal(signal.SIGTERM, previous)
        _log(f"stopped everything; logs in {workdir}")

    duration = time.monotonic() - started
    data = _merge(
        {
            "command": command,
            "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "duration_s": round(duration, 1),
            "machine": machine,
            "config": config,
            "error": error,
            "sections": {
                k: {**v, "command": f"python -m bench service --only {k}", "generated_at": _now()}
                for k, v in sections.items()
            },
        },
        partial=bool(opts.only),
    )
    data["goals"] = _goals(data["sections"])
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "service.json").write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS_DIR / "service.md").write_text(render(data))
    print((RESULTS_DIR / "service.md").read_text())
    return 1 if error else 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _merge(new: dict[str, Any], partial: bool) -> dict[str, Any]:
    """With --only, keep the sections of the previous results that were not run again."""
    path = RESULTS_DIR / "service.json"
    if partial and path.exists():
        with contextlib.suppress(ValueError, OSError):
            old = json.loads(path.read_text())
            merged = dict(old.get("sections") or {})
            merged.update(new["sections"])
            new["sections"] = merged
    return new


def _goals(s: dict[str, Any]) -> dict[str, Any]:
    goals: dict[str, Any] = {}
    hit = s.get("cache-hit")
    if hit:
        goals["cache_hit_p50"] = {
            "goal": f"< {GOAL_CACHE_HIT_P50_MS:.0f} ms",
            "value_ms": hit["sequential"]["p50_ms"],
            "met": hit["goal_met"],
            "other_cores": hit["sequential"].get("other_cores"),
        }
    ov = s.get("overhead-20")
    if ov:
        goals["overhead_20_pages"] = {
            "goal": f"< {GOAL_OVERHEAD_20 * 100:.0f}%",
            "value": ov["overhead"],
            "met": ov["goal_met"],
            "cpu_overhead": ov.get("cpu_overhead"),
            "other_cores": ov.get("other_cores_median"),
        }
    return goals


CPU_PARTS = (
    ("web", "web (gunicorn)"),
    ("worker", "worker (Celery)"),
    ("postgres", "PostgreSQL backends"),
    ("engine_child", "engine-alone child"),
    ("bench_client", "benchmark client"),
    ("rest_of_machine", "rest of the machine (other work, Redis)"),
)


def _cpu_table(columns: list[tuple[str, dict[str, float] | None]], unit: str) -> list[str]:
    """A table of CPU per component, one column per run; components all zero are left out."""
    cols = [(name, c or {}) for name, c in columns]
    rows = [
        (label, [c.get(key) for _, c in cols])
        for key, label in CPU_PARTS
        if any((c.get(key) or 0) >= 0.05 for _, c in cols)
    ]
    out = [
        f"| CPU {unit} | " + " | ".join(name for name, _ in cols) + " |",
        "| --- | " + " | ".join("---:" for _ in cols) + " |",
    ]
    out += [f"| {label} | " + " | ".join(_fmt(v) for v in vals) + " |" for label, vals in rows]
    return out


def render(data: dict[str, Any]) -> str:
    m = data["machine"]
    s = data["sections"]
    lines = [
        "# Service benchmark",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} in {data['duration_s']} s.",
        "",
        f"Machine: {m['platform']}, {m['cpu']}, {m['cpus']} CPUs, {m['memory_mib']} MiB, Python {m['python']}. "
        f"Load average at start {m['loadavg_start']}, at end {m.get('loadavg_end')}. **The machine is shared**: "
        "the 2 cores also serve other work (test suites may run at the same time), and the client, gunicorn, the "
        "Celery worker, PostgreSQL and Redis all run on them, so treat the numbers as indicative and compare "
        "runs made under similar load."
        + (
            f" Busiest processes in the second before the start (share of one core): "
            f"{'; '.join(m['busy_processes_start'])}."
            if m.get("busy_processes_start")
            else ""
        ),
        "",
        f"Service: gunicorn gthread {data['config']['web_concurrency']} processes x {data['config']['web_threads']} "
        f"threads, Celery prefork worker, PostgreSQL ({data['config']['database']}), Redis "
        f"({data['config']['redis']}), log level {data['config']['log_level']}; all on loopback. Client: "
        "`http.client` with one keep-alive connection per client thread; times are client wall times. "
        f"Code: {data['config'].get('code', 'n/a')}. The scratch organization's limits are lifted "
        f"({', '.join(data['config'].get('limits_lifted') or []) or 'none'}) so that rate limits never answer.",
        "",
    ]
    if data.get("error"):
        lines += [f"**The run failed**: `{data['error']}`; the sections below are those that completed.", ""]
    goals = data.get("goals") or {}
    if goals:
        lines += [
            "## Goals",
            "",
            "| goal | value | met | cores used by other work meanwhile |",
            "| --- | ---: | --- | ---: |",
        ]
        if "cache_hit_p50" in goals:
            g = goals["cache_hit_p50"]
            lines.append(
                f"| cache hit p50 {g['goal']} | {_fmt(g['value_ms'], 2)} ms | {'yes' if g['met'] else '**no**'} "
                f"| {_fmt(g.get('other_cores'), 2)} |"
            )
        if "overhead_20_pages" in goals:
            g = goals["overhead_20_pages"]
            cpu = g.get("cpu_overhead")
            lines.append(
                f"| service overhead on a 20-page document {g['goal']} | {g['value'] * 100:.1f}% | "
                f"{'yes' if g['met'] else '**no**'} | {_fmt(g.get('other_cores'), 2)} |"
            )
            if cpu is not None:
                lines += [
                    "",
                    f"In CPU seconds rather than wall time, the 20-page overhead is {cpu * 100:.1f}% (less "
                    "sensitive to the other work, not immune: contention inflates CPU time too).",
                ]
        lines += [
            "",
            "Out of 2 cores, the last column is what the rest of the machine used during the measurement: "
            "above about 0.5 the wall-time numbers are inflated by contention; compare runs made under similar load.",
            "",
        ]

    hit = s.get("cache-hit")
    if hit:
        q, c, big = hit["sequential"], hit["concurrent"], hit.get("large_upload")
        lines += [
            "## Cache hit",
            "",
            f"`{hit['command']}` ({hit['generated_at']}). `POST /v1/convert?{hit['query']}` with the same "
            f"{hit['file_bytes'] // 1024} KiB one-page PDF (`{hit['file']}`), `Accept: application/json`, after one "
            "conversion and 20 warm-up hits. Every response checked: 200 and `cached: true`.",
            "",
            "| run | requests | p50 ms | p90 ms | p99 ms | max ms | requests/s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            f"| sequential, 1 keep-alive connection | {q['n']} | {_fmt(q['p50_ms'], 2)} | {_fmt(q['p90_ms'], 2)} | "
            f"{_fmt(q['p99_ms'], 2)} | {_fmt(q['max_ms'], 2)} | {_fmt(q['requests_per_s'])} |",
            f"| {c['clients']} concurrent clients | {c['n']} | {_fmt(c['p50_ms'], 2)} | {_fmt(c['p90_ms'], 2)} | "
            f"{_fmt(c['p99_ms'], 2)} | {_fmt(c['max_ms'], 2)} | {_fmt(c['requests_per_s'])} |",
        ]
        if big:
            lines.append(
                f"| sequential, {big['file_bytes'] / 1e6:.1f} MB upload, `{big['query']}` | {big['n']} | "
                f"{_fmt(big['p50_ms'], 2)} | {_fmt(big['p90_ms'], 2)} | {_fmt(big['p99_ms'], 2)} | "
                f"{_fmt(big['max_ms'], 2)} | {_fmt(1000 / big['mean_ms'] if big['mean_ms'] else None)} |"
            )
        lines += [
            "",
            f"Goal p50 < {GOAL_CACHE_HIT_P50_MS:.0f} ms (sequential, small file): "
            f"{'met' if hit['goal_met'] else '**not met**'}.",
            "",
        ]
        if q.get("cpu_ms_per_request"):
            lines += [
                "CPU per cache hit, by component (from /proc; the machine was "
                f"{_fmt(c.get('machine_busy_cores'), 2)} cores busy during the concurrent run):",
                "",
                *_cpu_table(
                    [("sequential", q["cpu_ms_per_request"]), ("concurrent", c.get("cpu_ms_per_request"))],
                    "ms per request",
                ),
                "",
            ]

    tp = s.get("throughput")
    if tp:
        e = tp["engine_alone"]
        lines += [
            "## Throughput of one-page conversions",
            "",
            f"`{tp['command']}` ({tp['generated_at']}). Source: {tp['source']}. {tp['clients']} concurrent clients, "
            "each file sent once (`pages=1`); pages/s = pages delivered / time to the last response.",
            "",
            "| system | pages | time s | pages/s | p50 ms | p99 ms | statuses |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
            f"| engine alone, one process, sequential | {e['pages']} | {_fmt(e['wall_s'], 2)} | "
            f"{_fmt(e['pages_per_s'])} | {_fmt(e['ms_per_page'])} (mean) | | |",
        ]
        for w in (1, 2):
            r = tp.get(f"workers_{w}")
            if r:
                lines.append(
                    f"| service, {w} worker process{'es' if w > 1 else ''} | {r['pages']} | {_fmt(r['elapsed_s'], 2)} | "
                    f"{_fmt(r['pages_per_s'])} | {_fmt(r['p50_ms'], 0)} | {_fmt(r['p99_ms'], 0)} | "
                    f"{', '.join(f'{k}: {v}' for k, v in r['statuses'].items())}"
                    f"{' (time cap hit)' if r['time_capped'] else ''} |"
                )
        errs = [x for w in (1, 2) for x in (tp.get(f"workers_{w}") or {}).get("errors", [])]
        if errs:
            lines += ["", "Errors: " + "; ".join(f"`{x[:120]}`" for x in errs[:5])]
        runs = [(f"{w} worker(s)", tp.get(f"workers_{w}")) for w in (1, 2) if tp.get(f"workers_{w}")]
        if runs and all(r.get("cpu_ms_per_page") for _, r in runs):
            busy = ", ".join(f"{_fmt(r.get('machine_busy_cores'), 2)} ({n})" for n, r in runs)
            lines += [
                "",
                f"CPU per page, by component (from /proc). Cores busy during the runs (all processes): {busy}; "
                f"the engine alone needs {_fmt(e.get('cpu_s', 0) * 1000 / max(1, e['pages']))} ms of CPU per page.",
                "",
                *_cpu_table([(n, r.get("cpu_ms_per_page")) for n, r in runs], "ms per page"),
            ]
        lines.append("")

    for key, title in (
        ("overhead-20", "Service overhead on a 20-page document"),
        ("latency-200", "200-page conversion latency"),
    ):
        sec = s.get(key)
        if not sec:
            continue
        b = sec.get("breakdown_median_s") or {}
        lines += [
            f"## {title}",
            "",
            f"`{sec['command']}` ({sec['generated_at']}). `{sec['file']}` ({sec['file_bytes'] / 1e6:.1f} MB), pages "
            f"{sec['pages']}, {sec['repetitions']} repetition(s); each repetition uses a byte copy with a distinct "
            "trailing comment, so it is never a cache hit and the engine's work is identical. Service and engine "
            "alone alternate, back to back; the service request carries `debug=true` to report the worker's engine time.",
            "",
            "| | median s | runs s |",
            "| --- | ---: | --- |",
            f"| service (client wall) | {sec['service_median_s']:.3f} | {', '.join(f'{x:.3f}' for x in sec['service_s'])} |",
            f"| engine alone (in-process wall) | {sec['engine_median_s']:.3f} | {', '.join(f'{x:.3f}' for x in sec['engine_s'])} |",
            "",
            f"Overhead: median over the repetitions of service / engine - 1 = **{sec['overhead'] * 100:.1f}%** "
            f"(median {sec['overhead_added_s'] * 1000:.0f} ms added)"
            + (
                f"; goal < {sec['goal_overhead'] * 100:.0f}%: {'met' if sec['goal_met'] else '**not met**'}."
                if "goal_met" in sec
                else "."
            ),
            "",
        ]
        if sec.get("outside_engine_median_s") is not None:
            lines += [
                "Other views of the same runs: median(service) / median(engine) - 1 = "
                f"{sec['overhead_of_medians'] * 100:.1f}%; the service's time outside the worker's engine call, "
                f"median {sec['outside_engine_median_s'] * 1000:.0f} ms = "
                f"{sec['outside_engine_share'] * 100:.1f}% of the engine alone; CPU of web + worker + PostgreSQL "
                f"{_fmt(sec.get('service_cpu_median_s'), 3)} s against the engine's "
                f"{_fmt(sec.get('engine_cpu_median_s'), 3)} s = "
                f"{_fmt((sec.get('cpu_overhead') or 0) * 100)}% overhead.",
                "",
            ]
        if b:
            labels = {
                "total_s": "total (client wall)",
                "web_before_job_s": "web before the job: upload, spool + SHA-256, auth, cache miss, job row",
                "queue_s": "queue: Celery dispatch until the worker claims the job",
                "worker_s": "worker: claim to success",
                "worker_engine_s": "of which the engine call (incl. per-page progress writes)",
                "worker_other_s": "of which the rest: claim, preflight, credit hold",
                "web_after_job_s": "after `finished_at`: the rest of the worker's success transaction (result "
                "cache write, credit capture), wake-up, result read, JSON, request log, transfer",
            }
            lines += [
                "Where the service's time goes (medians; from the client's clock, the job row and the worker's "
                "engine timings, all on one host clock):",
                "",
                "| part | s |",
                "| --- | ---: |",
                *[f"| {labels.get(k, k)} | {v:.3f} |" for k, v in b.items()],
                "",
            ]
        if sec.get("cpu_median_s"):
            cm = {k: v * 1000 for k, v in sec["cpu_median_s"].items()}
            lines += [
                *_cpu_table([("service request", cm)], "ms (median)"),
                f"| engine alone | {sec['engine_cpu_median_s'] * 1000:.1f} |",
                "",
            ]
    lines += [
        "## Reproduce",
        "",
        "```sh",
        "python -m bench service                        # everything (about 3-5 minutes)",
        *[f"python -m bench service --only {k}" for k in SECTIONS],
        "```",
        "",
        "Needs PostgreSQL and Redis on 127.0.0.1 (database `svcx_bench` is dropped and recreated, Redis DB 12 "
        "flushed; `--database-url`, `--redis-url` to change). See bench/README.md.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Child entry point: python -m bench.service --child ...


def _child_main(argv: list[str]) -> int:
    if argv[:2] == ["--child", "make-pages"]:
        src, out, first, last, tags = argv[2:7]
        _child_make_pages(src, out, int(first), int(last), tags.split(","))
        return 0
    if argv[:2] == ["--child", "engine-server"]:
        _child_engine_server()
        return 0
    print("usage: python -m bench.service --child make-pages|engine-server ...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_child_main(sys.argv[1:]))
