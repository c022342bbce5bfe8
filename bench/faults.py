"""Fault suite: the parts of the service as separate processes, one fault at a time, and the money
checked after each.

    python -m bench faults            # -> bench/results/faults.md (+ faults.json)

Stdlib only. The suite runs a PostgreSQL cluster of its own (`initdb` / `pg_ctl` from
/usr/lib/postgresql/*/bin, in a temporary directory, as the `postgres` user when run as root),
a redis-server of its own (on a free port, keeping nothing on disk: the worst case, where a
restart loses every queued job), gunicorn (2 processes x 16 threads), one Celery worker (2
processes) and beat, all on loopback, each in its own session.

Each scenario uses a fresh organization and key, sends its conversions from client threads,
injects its fault while they run, and then checks:

1. every request ended with an envelope (a 200 result or the error envelope; a request held by a
   web process that was killed can only see its connection close, counted apart);
2. every 5xx is retryable;
3. no credit was taken without a 200: per request, captures minus refunds equal the credits the
   client was billed in a 200, and the sums agree;
4. no hold outlived its request by more than 60 s (settled_at - the client's end);
5. the ledger sums to the balance (grants, captures, refunds, adjustments) and nothing is held;
6. the service converts again within 60 s of the fault: a probe with a fresh organization and
   key sends a one-page conversion every second from the moment the fault ends.

Scenarios: the worker killed with SIGKILL mid-job (a fresh one 3 s later); Redis restarted;
PostgreSQL restarted; 40 concurrent 5-page conversions on a 100-credit balance; a web process
killed with SIGKILL mid-request; the process doing a capture killed during it (the web process
that answers captures: the bench holds the balance row locked until that process waits on it);
the worker killed during the commit of its result (the bench holds the job row locked).

Version 2 jobs (`job_*`, on a jobs pool of 2 processes started for them): a 300-page job (the
corpus's book repeated; the suite's own text pages without the corpus) with its jobs worker
killed with SIGKILL mid-job, Redis restarted mid-job, PostgreSQL restarted mid-job. Each job
must end succeeded with the Markdown of a clean run (the engine's `convert` of the whole
document, by SHA-256) or failed with its hold released; its ledger one hold and one capture or
release; its `pages_completed` the total; the balance the grant minus what it billed.

Webhooks (`job_webhook_receiver_down`, bench/webhook_outage.py): a receiver out of order for
`--webhook-outage` seconds (default 600) while jobs succeed, fail and are canceled; every event
delivered and signed, each job's end and money right, the endpoint still enabled, and the time
from the recovery to the last delivery.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import http.client
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import hostile, webhook_outage
from bench.job_checks import ledger_verdict
from bench.job_client import job_create, job_ledger, job_markdown_sha256, job_row, job_wait, reference_sha256
from bench.long_document import BOOK, long_document
from bench.paths import CACHE_DIR, CORPUS_DIR, RESULTS_DIR
from bench.stack import Stack, free_port

HOLD_SLACK = 60.0  # seconds a hold may outlive its request
PROBE_LIMIT = 60.0  # seconds within which the service must convert again
REQUEST_TIMEOUT = 240.0
CHILD_ENV = {
    # The service's defaults, written out so the report states them.
    "SVCX_QUEUE_WAIT_LIMIT": "30s",
    "SVCX_WORKER_LOST_AFTER": "20s",
    "SVCX_WORKER_HEARTBEAT_INTERVAL": "5s",
    "SVCX_HOLD_LEASE_SECONDS": "30",
    "SVCX_HOLD_SWEEP_INTERVAL": "10s",
    "SVCX_QUEUE_MAX_DEPTH": "1000",
    "SVCX_JOB_PART_PAGES": "25",
    "SVCX_JOB_LOST_AFTER": "30s",
    "SVCX_JOB_SWEEP_INTERVAL": "10s",
    "SVCX_JOB_RESEND_AFTER": "10s",
    "SVCX_WORKER_HEARTBEAT_TTL": "15s",
    "SVCX_WEBHOOKS_RETRY_FIRST": "30s",
    "SVCX_WEBHOOKS_RETRY_MAX": "2h",
    "SVCX_WEBHOOKS_RETRY_AGE_PERCENT": "25",
    "SVCX_WEBHOOKS_SWEEP_INTERVAL": "5s",
    # The webhook scenario's receiver listens on 127.0.0.1.
    "SVCX_WEBHOOKS_ALLOW_PRIVATE": "true",
}
JOB_TIMEOUT = 600.0  # seconds a version 2 job of a scenario may take to end, its fault included


def _log(msg: str) -> None:
    print(f"[faults {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# PDFs (stdlib): N pages of Helvetica text, distinct bytes per tag


def make_pdf(tag: str, pages: int) -> bytes:
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i in range(pages):
        lines = [f"BT /F1 18 Tf 72 720 Td (Fault suite {tag} page {i + 1}) Tj ET"]
        for j in range(30):
            y = 690 - j * 20
            lines.append(
                f"BT /F1 11 Tf 72 {y} Td (Line {j + 1} of page {i + 1} in document {tag}: some words to lay out.) Tj ET"
            )
        stream = zlib.compress("\n".join(lines).encode("latin-1"))
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode() + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# --------------------------------------------------------------------------------------------
# Backends of our own


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Cluster:
    """A throwaway PostgreSQL cluster in a temporary directory."""

    def __init__(self, root: Path) -> None:
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
        if not versions:
            raise SystemExit("no PostgreSQL binaries under /usr/lib/postgresql/*/bin")
        self.bin = Path(versions[-1])
        self.root = root
        self.data = root / "data"
        self.port = free_port()

    def _run(self, *cmd: str) -> None:
        # Output to a file, not a pipe: a postmaster started here keeps its inherited descriptors.
        with (self.root.parent / "pg_ctl.log").open("ab") as log:
            subprocess.run(_as_postgres(list(cmd)), check=True, stdout=log, stderr=subprocess.STDOUT, timeout=120)

    def init(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "pg.log"),
            "-o",
            options,
            "-w",
            "start",
        )

    def restart(self) -> None:
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "pg.log"),
            "-m",
            "fast",
            "-w",
            "restart",
        )

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/svcx_faults"


class RedisServer:
    """A redis-server on a free port that keeps nothing on disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=self.root,
            stdout=(self.root / "redis.log").open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


# --------------------------------------------------------------------------------------------
# Requests


@dataclass
class Outcome:
    index: int
    t_start: float
    t_end: float = 0.0
    status: int = 0  # 0: the connection failed or closed without an answer
    code: str = ""
    retryable: bool | None = None
    envelope: bool = False
    request_id: str = ""
    credits_billed: int = 0
    error: str = ""


def post_convert(port: int, key: str, pdf: bytes, index: int = 0) -> Outcome:
    out = Outcome(index=index, t_start=time.time())
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    try:
        conn.request(
            "POST",
            "/v1/convert",
            body=pdf,
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/pdf"},
        )
        resp = conn.getresponse()
        data = resp.read()
        out.status = resp.status
        out.request_id = resp.getheader("X-Request-Id") or ""
        body = json.loads(data)
        if resp.status == 200:
            out.envelope = body.get("object") == "conversion"
            out.credits_billed = int(body.get("credits_billed", 0))
        else:
            error = body.get("error") or {}
            out.envelope = bool(error.get("code")) and "retryable" in error
            out.code = str(error.get("code", ""))
            out.retryable = error.get("retryable")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        out.error = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()
        out.t_end = time.time()
    return out


class Load:
    """Client threads, one request each, started at once."""

    def __init__(self, port: int, key: str, pdfs: list[bytes]) -> None:
        self.outcomes: list[Outcome | None] = [None] * len(pdfs)
        self.threads = [
            threading.Thread(target=self._one, args=(port, key, pdf, i), daemon=True) for i, pdf in enumerate(pdfs)
        ]

    def _one(self, port: int, key: str, pdf: bytes, i: int) -> None:
        self.outcomes[i] = post_convert(port, key, pdf, i)

    def start(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def join(self) -> list[Outcome]:
        for t in self.threads:
            t.join(timeout=REQUEST_TIMEOUT + 30)
        return [
            o if o is not None else Outcome(index=i, t_start=0, error="client thread hung")
            for i, o in enumerate(self.outcomes)
        ]


class Probe(threading.Thread):
    """From the end of a fault, a one-page conversion every second with a fresh account until one
    answers 200; `seconds` is the time from the fault's end to that 200."""

    def __init__(self, port: int, key: str, tag: str) -> None:
        super().__init__(daemon=True)
        self.port, self.key, self.tag = port, key, tag
        self.seconds: float | None = None
        self.attempts: list[str] = []
        self.started = 0.0

    def run(self) -> None:
        self.started = time.time()
        n = 0
        while time.time() - self.started < PROBE_LIMIT + 30:
            n += 1
            out = post_convert(self.port, self.key, make_pdf(f"{self.tag}-probe-{n}", 1))
            self.attempts.append(
                str(out.status) + (f" {out.code}" if out.code else "") + (f" {out.error}" if out.error else "")
            )
            if out.status == 200:
                self.seconds = out.t_end - self.started
                return
            time.sleep(1)


# --------------------------------------------------------------------------------------------
# The suite


@dataclass
class Account:
    org: str
    key: str


@dataclass
class ScenarioResult:
    name: str
    description: str
    requests: int
    pages: int
    credits: int
    answers: dict[str, int] = field(default_factory=dict)
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    fault: dict[str, Any] = field(default_factory=dict)
    probe_seconds: float | None = None
    probe_attempts: list[str] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c["pass"] for c in self.checks.values())


@dataclass
class JobScenarioResult:
    """A version 2 job through a fault: how it ended and what the ledger says."""

    name: str
    description: str
    pages: int
    document: str
    job_id: str = ""
    status: str = ""
    seconds: float = 0.0  # from the POST to the poll that saw the job ended
    row: dict[str, Any] = field(default_factory=dict)
    error: Any = None
    poll_errors: list[str] = field(default_factory=list)
    fault: dict[str, Any] = field(default_factory=dict)
    # Each part: [index, attempts, seconds from the job's creation to its parse's end, worker].
    parts: list[list[Any]] = field(default_factory=list)
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c["pass"] for c in self.checks.values())


class Suite:
    def __init__(self, workdir: Path, tmp: Path) -> None:
        self.workdir = workdir
        self.cluster = Cluster(tmp / "pg")
        self.redis = RedisServer(workdir)
        self.stack: Stack | None = None
        self.accounts = 0
        self.documents: dict[int, tuple[Path, str, str]] = {}  # pages -> path, what it is, reference SHA-256

    # -- processes ---------------------------------------------------------------------------

    def up(self) -> None:
        _log(f"PostgreSQL cluster in {self.cluster.root} (port {self.cluster.port})")
        self.cluster.init()
        self.cluster.start()
        self.redis.start()
        _log(f"redis-server on port {self.redis.port}")
        self.stack = Stack(
            workdir=self.workdir,
            database_url=self.cluster.url,
            redis_url=self.redis.url,
            db_prefixes=("svcx_faults",),
            label="faults",
            web_concurrency=2,
            web_threads=16,
            log_level="WARNING",
            extra_env=dict(CHILD_ENV),
        )
        self.stack.setup(org_name="Faults", credits=10, limits=None)
        self.stack.start_web()
        self.stack.start_worker(2)
        self.stack.start_beat()
        self.stack.wait_healthy()
        _log(f"service healthy on port {self.stack.port}")

    def down(self) -> None:
        if self.stack is not None:
            self.stack.close(keep=True)
        self.redis.stop()
        self.cluster.stop()

    @property
    def s(self) -> Stack:
        assert self.stack is not None
        return self.stack

    def sql(self, query: str) -> list[list[str]]:
        return self.s.psql(query)

    def account(self, credits: int) -> Account:
        self.accounts += 1
        script = (
            "import io, json\n"
            "from django.core.management import call_command\n"
            "from billing.limits import LIMIT_NAMES\n"
            "def svcx(*a):\n"
            "    out = io.StringIO(); call_command('svcx', *a, stdout=out); return json.loads(out.getvalue())\n"
            f"org = svcx('org', 'create', '--name', 'Faults {self.accounts}', '--credits', '{credits}')['id']\n"
            "for name in sorted(LIMIT_NAMES):\n"
            "    svcx('org', 'set-limit', org, name, '1000000000')\n"
            "print(json.dumps({'org': org, 'key': svcx('key', 'create', '--org', org)['key']}))\n"
        )
        made = self.s.manage("shell", "-c", script)
        return Account(org=str(made["org"]), key=str(made["key"]))

    def jobs(self, org: str, where: str = "") -> list[list[str]]:
        return self.sql(
            "SELECT request_id, status, pages_completed FROM conversion_conversionjob "
            f"WHERE organization_id = '{org}' {where}"
        )

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.CalledProcessError):
                if predicate():
                    return
            time.sleep(0.1)
        raise RuntimeError(f"timed out waiting for {what}")

    def kill_worker(self, *, jobs: bool = False) -> None:
        """SIGKILL to the process group of the worker (of the jobs worker with `jobs`)."""
        worker = self.s.jobs_worker if jobs else self.s.worker
        assert worker is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        if jobs:
            self.s.jobs_worker = None
        else:
            self.s.worker = None

    def web_children(self) -> list[int]:
        web = self.s.web
        assert web is not None
        path = Path(f"/proc/{web.pid}/task/{web.pid}/children")
        return [int(p) for p in path.read_text().split()]

    # -- one scenario ------------------------------------------------------------------------

    def scenario(
        self,
        name: str,
        description: str,
        *,
        requests: int,
        pages: int,
        credits: int,
        fault: Callable[[Account], dict[str, Any]],
    ) -> ScenarioResult:
        _log(f"scenario {name}: {requests} x {pages}-page conversions on {credits} credits")
        acct = self.account(credits)
        probe_acct = self.account(10)
        pdfs = [make_pdf(f"{name}-{i}-{time.time_ns()}", pages) for i in range(requests)]
        load = Load(self.s.port, acct.key, pdfs).start()
        fault_info = fault(acct)
        probe = Probe(self.s.port, probe_acct.key, name)
        probe.start()
        outcomes = load.join()
        probe.join(timeout=PROBE_LIMIT + 60)
        result = ScenarioResult(name=name, description=description, requests=requests, pages=pages, credits=credits)
        result.fault = fault_info
        result.probe_seconds = probe.seconds
        result.probe_attempts = probe.attempts
        result.outcomes = [asdict(o) for o in outcomes]
        answers: dict[str, int] = {}
        for o in outcomes:
            label = f"{o.status} {o.code}".strip() if o.status else "connection closed"
            answers[label] = answers.get(label, 0) + 1
        result.answers = dict(sorted(answers.items()))
        self.settle(acct)
        result.checks = self.check(acct, outcomes, credits, probe, fault_info)
        verdict = "PASS" if result.passed else "FAIL " + ", ".join(k for k, c in result.checks.items() if not c["pass"])
        _log(f"scenario {name}: {result.answers} probe {probe.seconds}s -> {verdict}")
        return result

    def settle(self, acct: Account) -> None:
        """Wait (at most 120 s) until the organization holds nothing."""
        with contextlib.suppress(RuntimeError):
            self.wait_for(
                "holds to settle",
                lambda: (
                    not self.sql(
                        f"SELECT 1 FROM billing_credithold WHERE organization_id = '{acct.org}' AND status = 'held'"
                    )
                ),
                timeout=120,
            )

    def check(
        self, acct: Account, outcomes: list[Outcome], credits: int, probe: Probe, fault: dict[str, Any]
    ) -> dict[str, dict[str, Any]]:
        org = acct.org
        killed_web = bool(fault.get("web_killed"))
        closed = [o for o in outcomes if not o.status]
        no_envelope = [o for o in outcomes if o.status and not o.envelope]
        checks: dict[str, dict[str, Any]] = {}
        checks["every request ended with an envelope"] = {
            "pass": not no_envelope and (not closed or killed_web),
            "detail": f"{len(outcomes) - len(closed) - len(no_envelope)} envelopes or results"
            + (f", {len(closed)} connections closed by the killed web process" if closed else "")
            + (f", {len(no_envelope)} without an envelope" if no_envelope else ""),
        }
        fivexx = [o for o in outcomes if o.status >= 500]
        checks["every 5xx is retryable"] = {
            "pass": all(o.retryable is True for o in fivexx),
            "detail": f"{len(fivexx)} 5xx, {sum(o.retryable is True for o in fivexx)} retryable",
        }
        rows = self.sql(
            "SELECT request_id, kind, credits FROM billing_ledgerentry "
            f"WHERE organization_id = '{org}' AND environment = 'live' AND kind IN ('capture', 'refund')"
        )
        net: dict[str, int] = {}
        refunds = 0
        for rid, kind, amount in rows:
            net[rid] = net.get(rid, 0) - int(amount)  # a capture is negative, its refund positive
            refunds += kind == "refund"
        billed = {o.request_id: o.credits_billed for o in outcomes if o.status == 200}
        wrong = sorted(rid for rid, taken in net.items() if taken != billed.get(rid, 0))
        wrong += sorted(rid for rid, amount in billed.items() if amount and net.get(rid, 0) != amount)
        taken = sum(net.values())
        checks["no credit without a 200"] = {
            "pass": not wrong and taken == sum(billed.values()),
            "detail": f"captured - refunded = {taken}, billed in 200s = {sum(billed.values())}, refunds = {refunds}"
            + (f", mismatched requests {wrong[:5]}" if wrong else ""),
        }
        holds = self.sql(
            "SELECT request_id, status, extract(epoch FROM settled_at) FROM billing_credithold "
            f"WHERE organization_id = '{org}'"
        )
        ends = {o.request_id: o.t_end for o in outcomes if o.request_id}
        last_end = max((o.t_end for o in outcomes), default=time.time())
        now = time.time()
        worst = 0.0
        late: list[str] = []
        for rid, status, settled in holds:
            end = ends.get(rid, last_end)
            lived = (float(settled) if settled else now) - end
            worst = max(worst, lived)
            if lived > HOLD_SLACK or status == "held":
                late.append(f"{rid} {status} {lived:.0f}s")
        checks["no hold outlives its request by more than 60 s"] = {
            "pass": not late,
            "detail": f"{len(holds)} holds, longest after its request {max(worst, 0):.1f} s"
            + (f"; late: {late[:5]}" if late else ""),
        }
        sums = dict(
            (k, int(v))
            for k, v in self.sql(
                "SELECT kind, coalesce(sum(credits), 0) FROM billing_ledgerentry "
                f"WHERE organization_id = '{org}' AND environment = 'live' GROUP BY kind"
            )
        )
        balance, held = (
            int(x)
            for x in self.sql(
                f"SELECT balance, held FROM billing_creditbalance WHERE organization_id = '{org}' AND environment = 'live'"
            )[0]
        )
        ledger = sum(sums.get(k, 0) for k in ("grant", "capture", "refund", "adjustment"))
        checks["ledger sums to the balance"] = {
            "pass": ledger == balance and held == 0 and balance == credits - sum(billed.values()),
            "detail": f"ledger {ledger}, balance {balance}, held {held}, expected {credits - sum(billed.values())}",
        }
        checks["converts again within 60 s"] = {
            "pass": probe.seconds is not None and probe.seconds <= PROBE_LIMIT,
            "detail": f"first 200 after {probe.seconds:.1f} s ({len(probe.attempts)} attempts)"
            if probe.seconds is not None
            else f"no 200 ({probe.attempts[-3:]})",
        }
        return checks

    # -- a version 2 job through a fault --------------------------------------------------------

    def job_document(self, pages: int) -> tuple[Path, str, str]:
        """A `pages`-page PDF for the job scenarios, what it is, and the SHA-256 of the engine's
        Markdown of it (one `convert` of the whole, the Markdown a clean job gives): the corpus's
        book repeated, or the suite's own text pages when the corpus is absent."""
        if pages not in self.documents:
            if (CORPUS_DIR / "files" / BOOK).exists():
                path, what = long_document(pages), f"{BOOK} repeated to {pages} pages"
            else:
                path, what = self.workdir / f"job-{pages}.pdf", f"{pages} pages of Helvetica text (no corpus)"
                path.write_bytes(make_pdf("job", pages))
            ref = reference_sha256(path)
            _log(f"job document: {what}, engine reference in {ref['seconds']} s (cached: {ref['cached']})")
            self.documents[pages] = (path, what, str(ref["sha256"]))
        return self.documents[pages]

    def job_under_way(self, job_id: str, parsed: int) -> Callable[[], bool]:
        def check() -> bool:
            row = job_row(self.s, job_id)
            return bool(row["status"] == "running" and row["pages_parsed"] >= parsed)

        return check

    def job_scenario(
        self, name: str, description: str, *, pages: int, fault: Callable[[str], dict[str, Any]]
    ) -> JobScenarioResult:
        path, what, reference = self.job_document(pages)
        if self.s.jobs_worker is None or self.s.jobs_worker.poll() is not None:
            self.s.start_jobs_worker(2)
        _log(f"scenario {name}: a {pages}-page job")
        credits = pages + 100
        acct = self.account(credits)
        result = JobScenarioResult(name=name, description=description, pages=pages, document=what)
        t0 = time.time()
        job = job_create(self.s.port, acct.key, path.read_bytes())
        result.job_id = job["id"]
        result.fault = fault(job["id"])
        end = job_wait(self.s.port, acct.key, job["id"], since=t0, timeout=JOB_TIMEOUT)
        result.status, result.seconds, result.poll_errors = end.job["status"], round(end.seconds, 1), end.errors
        result.error = end.job.get("error")
        result.row = job_row(self.s, job["id"])
        result.parts = [
            [int(i), int(a), round(float(f), 1) if f else None, w]
            for i, a, f, w in self.sql(
                "SELECT p.index, p.attempts, extract(epoch FROM p.finished_at - j.created_at), p.worker "
                "FROM conversion_jobpart p "
                f"JOIN conversion_job j ON j.id = p.job_id WHERE p.job_id = '{job['id']}' ORDER BY p.index"
            )
        ]
        self.settle(acct)
        result.checks = self.job_checks(acct, result, credits, reference)
        verdict = "PASS" if result.passed else "FAIL " + ", ".join(k for k, c in result.checks.items() if not c["pass"])
        _log(f"scenario {name}: {result.status} after {result.seconds} s -> {verdict}")
        return result

    def job_checks(
        self, acct: Account, r: JobScenarioResult, credits: int, reference: str
    ) -> dict[str, dict[str, Any]]:
        checks: dict[str, dict[str, Any]] = {}
        row = r.row
        succeeded = r.status == "succeeded"
        checks["the job ended"] = {
            "pass": r.status in ("succeeded", "failed"),
            "detail": f"{r.status} {r.seconds} s after its creation, lead {row['lead_attempts']} time(s)"
            + (f", error {(r.error or {}).get('code')}" if r.status == "failed" else ""),
        }
        if succeeded:
            digest, result_pages = job_markdown_sha256(self.s.port, acct.key, r.job_id)
            checks["the Markdown of a clean run"] = {
                "pass": digest == reference and result_pages == r.pages,
                "detail": f"SHA-256 {'equal to' if digest == reference else 'NOT'} the engine's, {result_pages} pages",
            }
        ok, detail = ledger_verdict(job_ledger(self.s, r.job_id), status=r.status, pages=r.pages)
        checks["billed once"] = {"pass": ok, "detail": detail}
        checks["pages completed reach the total"] = {
            "pass": row["pages_completed"] == row["pages_total"] if succeeded else r.status == "failed",
            "detail": f"{row['pages_completed']} of {row['pages_total']}"
            + ("" if succeeded else " (failed: its credits released instead)"),
        }
        balance, held = (
            int(x)
            for x in self.sql(
                "SELECT balance, held FROM billing_creditbalance "
                f"WHERE organization_id = '{acct.org}' AND environment = 'live'"
            )[0]
        )
        expected = credits - (r.pages if succeeded else 0)
        checks["ledger sums to the balance"] = {
            "pass": balance == expected and held == 0,
            "detail": f"balance {balance}, held {held}, expected {expected}",
        }
        return checks

    def fault_job_worker_kill(self, job_id: str) -> dict[str, Any]:
        self.wait_for("the job under way", self.job_under_way(job_id, 50))
        at = job_row(self.s, job_id)
        self.kill_worker(jobs=True)
        t = time.time()
        time.sleep(3)
        self.s.start_jobs_worker(2)
        return {"killed_at": t, "pages_parsed_then": at["pages_parsed"], "pages_completed_then": at["pages_completed"]}

    def fault_job_redis_restart(self, job_id: str) -> dict[str, Any]:
        self.wait_for("the job under way", self.job_under_way(job_id, 50))
        at = job_row(self.s, job_id)
        t = time.time()
        self.redis.stop()
        time.sleep(2)
        self.redis.start()
        return {"redis_down_s": round(time.time() - t, 1), "pages_parsed_then": at["pages_parsed"]}

    def fault_job_pg_restart(self, job_id: str) -> dict[str, Any]:
        self.wait_for("the job under way", self.job_under_way(job_id, 50))
        at = job_row(self.s, job_id)
        t = time.time()
        self.cluster.restart()
        return {"postgres_restart_s": round(time.time() - t, 1), "pages_parsed_then": at["pages_parsed"]}

    # -- the faults --------------------------------------------------------------------------

    def running(self, acct: Account, at_least: int = 1) -> Callable[[], bool]:
        under_way = "AND status = 'running' AND started_at < now() - interval '0.5 seconds'"
        return lambda: len(self.jobs(acct.org, under_way)) >= at_least

    def fault_worker_kill(self, acct: Account) -> dict[str, Any]:
        self.wait_for("a job under way", self.running(acct))
        self.kill_worker()
        t = time.time()
        time.sleep(3)
        self.s.start_worker(2)
        return {"worker_killed_at": t, "fresh_worker_after_s": round(time.time() - t, 1)}

    def fault_redis_restart(self, acct: Account) -> dict[str, Any]:
        self.wait_for("a job under way", self.running(acct))
        t = time.time()
        self.redis.stop()
        time.sleep(2)
        self.redis.start()
        return {"redis_down_s": round(time.time() - t, 1)}

    def fault_pg_restart(self, acct: Account) -> dict[str, Any]:
        self.wait_for("a job under way", self.running(acct))
        t = time.time()
        self.cluster.restart()
        return {"postgres_restart_s": round(time.time() - t, 1)}

    def fault_none(self, acct: Account) -> dict[str, Any]:
        return {}

    def fault_web_kill(self, acct: Account) -> dict[str, Any]:
        # One of the organization's jobs runs (its share of a pool of two); the others wait for
        # their turn in the web processes, and are as much in flight when one is killed.
        self.wait_for("a job under way", self.running(acct))
        victim = self.web_children()[0]
        os.kill(victim, signal.SIGKILL)
        return {"web_killed": victim}

    def _lock_session(self, sql: str) -> subprocess.Popen[str]:
        d = self.s.db
        proc = subprocess.Popen(
            ["psql", "-h", d.host, "-p", d.port, "-U", d.user, "-d", d.name, "-q", "-v", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None
        proc.stdin.write(f"BEGIN;\n{sql};\n")
        proc.stdin.flush()
        return proc

    def _end_lock(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.write("ROLLBACK;\n\\q\n")
            proc.stdin.close()
        proc.wait(timeout=30)

    def _blocked_backend(self, table: str, needle: str) -> Callable[[], int | None]:
        """The client port of a backend waiting on a lock in a statement on `table` containing `needle`."""

        def find() -> int | None:
            rows = self.sql(
                "SELECT client_port, query FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                f"AND query LIKE '%{table}%'"
            )
            for port, query in rows:
                if needle in query:
                    return int(port)
            return None

        return find

    def fault_capture_kill(self, acct: Account) -> dict[str, Any]:
        """Kill the process doing the capture while it is inside the capture's transaction."""
        self.wait_for(
            "the hold",
            lambda: bool(self.sql(f"SELECT 1 FROM billing_credithold WHERE organization_id = '{acct.org}'")),
        )
        lock = self._lock_session(
            f"SELECT 1 FROM billing_creditbalance WHERE organization_id = '{acct.org}' AND environment = 'live' FOR UPDATE"
        )
        try:
            find = self._blocked_backend("billing_creditbalance", "FOR UPDATE")
            self.wait_for("the capture to wait on the balance row", lambda: find() is not None)
            pid = pid_of_local_port(find() or 0)
            capturing_web = pid in self.web_children()
            os.kill(pid, signal.SIGKILL)
            t = time.time()
        finally:
            self._end_lock(lock)
        return {"killed_pid": pid, "killed_is_web_process": capturing_web, "web_killed": True, "killed_at": t}

    def fault_success_kill(self, acct: Account) -> dict[str, Any]:
        """Kill the worker while it commits the job's result (the bench holds the job row)."""
        self.wait_for("the job to start", lambda: bool(self.jobs(acct.org, "AND status = 'running'")))
        rid = self.jobs(acct.org, "AND status = 'running'")[0][0]
        lock = self._lock_session(f"SELECT 1 FROM conversion_conversionjob WHERE request_id = '{rid}' FOR UPDATE")
        try:
            find = self._blocked_backend("conversion_conversionjob", '"result"')
            self.wait_for("the worker's result commit to wait on the job row", lambda: find() is not None)
            self.kill_worker()
            t = time.time()
        finally:
            self._end_lock(lock)
        time.sleep(3)
        self.s.start_worker(2)
        return {"job": rid, "worker_killed_at": t}


def pid_of_local_port(port: int) -> int:
    """The process holding the TCP socket bound locally to 127.0.0.1:`port` (via /proc)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                parts = line.split()
                if int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(parts[9])
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        return int(proc.name)
    raise RuntimeError(f"no process holds local port {port}")


SCENARIOS: list[tuple[str, str, int, int, int, str]] = [
    # name, description, requests, pages, credits, fault method
    ("worker_kill", "worker killed with SIGKILL mid-job, a fresh one 3 s later", 6, 60, 1000, "fault_worker_kill"),
    ("redis_restart", "Redis restarted mid-flight (keeps nothing on disk)", 6, 60, 1000, "fault_redis_restart"),
    ("postgres_restart", "PostgreSQL restarted mid-flight (pg_ctl restart -m fast)", 6, 60, 1000, "fault_pg_restart"),
    ("race", "40 concurrent 5-page conversions on a 100-credit balance", 40, 5, 100, "fault_none"),
    ("web_kill", "a web (gunicorn) process killed with SIGKILL mid-request", 6, 60, 1000, "fault_web_kill"),
    (
        "capture_kill",
        "the process doing a capture killed inside the capture's transaction",
        1,
        120,
        1000,
        "fault_capture_kill",
    ),
    (
        "result_commit_kill",
        "the worker killed while committing a job's result, a fresh one 3 s later",
        1,
        # Short: the locked job row also stops the waiter's marks, and the worker gives up a job
        # unwatched for 10 s; the result commit must come first.
        40,
        1000,
        "fault_success_kill",
    ),
]


JOB_PAGES = 300
JOB_SCENARIOS: list[tuple[str, str, int, str]] = [
    # name, description, pages of the job, fault method (a version 2 job on a jobs pool of 2 processes)
    (
        "job_worker_kill",
        "the jobs worker killed with SIGKILL (its process group) mid-job, a fresh one 3 s later",
        JOB_PAGES,
        "fault_job_worker_kill",
    ),
    ("job_redis_restart", "Redis restarted mid-job (keeps nothing on disk)", JOB_PAGES, "fault_job_redis_restart"),
    (
        "job_postgres_restart",
        "PostgreSQL restarted mid-job (pg_ctl restart -m fast)",
        JOB_PAGES,
        "fault_job_pg_restart",
    ),
]


LOAD_SAMPLE_S = 10.0  # seconds between two readings of the machine's load average


class LoadSampler(threading.Thread):
    """The machine's 1-minute load average every LOAD_SAMPLE_S while the suite runs: timings of a
    run on a machine shared with other work are read against it."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self.done.wait(LOAD_SAMPLE_S):
                return

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.samples)
        middle = ordered[len(ordered) // 2] if ordered else None
        return {"cpus": os.cpu_count(), "samples": len(ordered), "median": middle, "max": max(ordered, default=None)}


def _load_line(load: dict[str, Any] | None) -> list[str]:
    if not load or not load.get("samples"):
        return []
    return [
        "",
        f"Machine load while it ran (1-minute load average, every {LOAD_SAMPLE_S:.0f} s, {load['cpus']} CPUs shared "
        f"with other work): median {load['median']:.1f}, max {load['max']:.1f}. Timings are only comparable "
        "between runs at a like load.",
    ]


def render(data: dict[str, Any]) -> str:
    lines = [
        "# Fault suite",
        "",
        f"Command: `{data['command']}` (run {data['started']}, commit {data['commit']}, {data['seconds']:.0f} s).",
        *_load_line(data.get("load")),
        "",
        "Web (gunicorn, 2 x 16 threads), one Celery worker (2 processes) and beat as separate processes, on a",
        "throwaway PostgreSQL cluster (`initdb`/`pg_ctl`) and a redis-server of the suite's own that keeps",
        "nothing on disk (the worst case: a restart loses every queued job). Service settings: "
        + ", ".join(f"`{k}={v}`" for k, v in CHILD_ENV.items())
        + ".",
        "",
        "| scenario | requests | answers | no envelope | 5xx retryable | money | holds | converts again |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in data["scenarios"]:
        c = r["checks"]
        mark = lambda name, c=c: ("ok" if c[name]["pass"] else "**FAIL**") + f": {c[name]['detail']}"  # noqa: E731
        answers = ", ".join(f"{n} x {k}" for k, n in r["answers"].items())
        lines.append(
            f"| {r['description']} | {r['requests']} x {r['pages']} pages, {r['credits']} credits | {answers} | "
            f"{mark('every request ended with an envelope')} | {mark('every 5xx is retryable')} | "
            f"{mark('no credit without a 200')}; {mark('ledger sums to the balance')} | "
            f"{mark('no hold outlives its request by more than 60 s')} | {mark('converts again within 60 s')} |"
        )
    if data.get("jobs"):
        lines += [
            "",
            "## Version 2 jobs",
            "",
            "One job (`POST /v2/jobs`, raw PDF) on a jobs pool of its own (`celery worker -Q jobs,jobs_test",
            "--concurrency 2`), the fault once it has parsed 50 pages, then polled to its end. It must end",
            "succeeded with the Markdown of a clean run (the SHA-256 of one `convert` of the whole document) or",
            "failed with its credits released; its ledger one hold and one capture or release; its",
            "`pages_completed` the total; the balance the grant minus what it billed, nothing held.",
            "",
            "| scenario | job | ended | Markdown | billed once | pages completed | balance |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in data["jobs"]:
            c = r["checks"]
            mark = lambda name, c=c: (  # noqa: E731
                ("ok" if c[name]["pass"] else "**FAIL**") + f": {c[name]['detail']}" if name in c else "n/a"
            )
            lines.append(
                f"| {r['description']} | {r['document']} | {mark('the job ended')} | "
                f"{mark('the Markdown of a clean run')} | {mark('billed once')} | "
                f"{mark('pages completed reach the total')} | {mark('ledger sums to the balance')} |"
            )
        lines += [
            "",
            "A part or lead whose whole worker was killed is taken back once the worker has stopped",
            "announcing itself for `SVCX_WORKER_HEARTBEAT_TTL` (and the part stopped beating as long); one",
            "whose process died while its worker lives on (its task ended by a database error) only",
            "`SVCX_JOB_LOST_AFTER` after its last beat, and the job's end waits for it. With Redis restarted",
            "empty, the part tasks still queued are gone: the sweeper finds the jobs queue shorter than the",
            "parts waiting and sends their tasks again (`SVCX_JOB_RESEND_AFTER` after they were sent), so the",
            "pool's other process parses parts beside the lead again. When each part was parsed, how many",
            "times and by which worker are in `faults.json`.",
        ]
    lines += webhook_outage.render(data.get("webhooks", []))
    if data.get("hostile"):
        lines += ["", "## Hostile clients", "", "| scenario | checks | figures |", "| --- | --- | --- |"]
        for r in data["hostile"]:
            checks = "; ".join(
                ("ok" if c["pass"] else "**FAIL**") + f" {goal}: {c['detail']}" for goal, c in r["checks"].items()
            )
            figures = ", ".join(f"{k} = {v}" for k, v in r["figures"].items())
            lines.append(f"| {r['description']} | {checks} | {figures} |")
    passed = all(
        all(c["pass"] for c in r["checks"].values())
        for r in [*data["scenarios"], *data.get("jobs", []), *data.get("webhooks", []), *data.get("hostile", [])]
    )
    lines += [
        "",
        f"**Result: {'all checks pass' if passed else 'some checks FAIL'}.**",
        "",
        "Notes:",
        "",
        "- Money: per request, captures minus refunds equal the credits billed in the 200 the client received;",
        "  the ledger's grants, captures, refunds and adjustments sum to the balance, nothing is held, and the",
        "  balance is the grant minus what the 200s billed.",
        "- Holds: each hold's `settled_at` minus the end of its request as the client saw it.",
        "- Converts again: a fresh organization and key send a one-page conversion every second from the end",
        "  of the fault; the time to its first 200.",
        "- A request held by a web process killed with SIGKILL can only see its connection close: no process",
        "  is left to answer it (a load balancer in front would answer 502). Those requests are counted apart",
        "  and must bill nothing.",
        '- The capture happens in the web process that answers (just before its 200), so "a worker killed',
        "  during a capture\" is run twice: the web process killed inside the capture's transaction (the suite",
        "  holds the balance row locked until the capture waits on it, then kills the process whose",
        "  connection waits), and the Celery worker killed inside the commit of the job's result.",
        "",
        "Details per scenario (fault timings, probe attempts; for a job, when each part was parsed and how",
        "many times) are in `faults.json`.",
    ]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, argv: list[str]) -> int:
    started = time.time()
    for setting in args.set:
        name, _, value = setting.partition("=")
        CHILD_ENV[name] = value
    workdir = CACHE_DIR / "faults" / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
    workdir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="svcx-faults-"))
    os.chmod(tmp, 0o755)
    suite = Suite(workdir, tmp)
    results: list[ScenarioResult] = []
    hostile_results: list[hostile.HostileResult] = []
    job_results: list[JobScenarioResult] = []
    webhook_results: list[webhook_outage.WebhookScenarioResult] = []
    only = set(args.only or [])

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    load = LoadSampler()
    load.start()
    try:
        suite.up()
        for name, description, requests, pages, credits, method in SCENARIOS:
            if only and name not in only:
                continue
            results.append(
                suite.scenario(
                    name, description, requests=requests, pages=pages, credits=credits, fault=getattr(suite, method)
                )
            )
            if suite.s.worker is None or suite.s.worker.poll() is not None:
                suite.s.start_worker(2)
            suite.s.wait_healthy()
        for name, description, pages, method in JOB_SCENARIOS:
            if only and name not in only:
                continue
            job_results.append(suite.job_scenario(name, description, pages=pages, fault=getattr(suite, method)))
            suite.s.wait_healthy()
        if not only or webhook_outage.NAME in only:
            webhook_results.append(webhook_outage.run(suite, outage=args.webhook_outage))
            suite.s.wait_healthy()
        for name, description, scenario in hostile.SCENARIOS:
            if only and name not in only:
                continue
            _log(f"hostile scenario {name}: {description}")
            hostile_results.append(scenario(suite))
            if suite.s.worker is None or suite.s.worker.poll() is not None:
                suite.s.start_worker(2)
            suite.s.wait_healthy()
    finally:
        suite.down()
        shutil.rmtree(tmp, ignore_errors=True)
    load.done.set()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    data = {
        "command": "python -m bench " + " ".join(shlex.quote(a) for a in argv),
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "commit": commit,
        "seconds": time.time() - started,
        "load": load.summary(),
        "settings": CHILD_ENV,
        "logs": str(workdir),
        "scenarios": [{**asdict(r), "passed": r.passed} for r in results],
        "jobs": [{**asdict(r), "passed": r.passed} for r in job_results],
        "webhooks": [{**asdict(r), "passed": r.passed} for r in webhook_results],
        "hostile": [{**asdict(r), "passed": r.passed} for r in hostile_results],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    suffix = "" if not only else "-partial"
    (RESULTS_DIR / f"faults{suffix}.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS_DIR / f"faults{suffix}.md").write_text(render(data))
    _log(f"results in {RESULTS_DIR}/faults{suffix}.md; logs in {workdir}")
    passed = [r.passed for r in results] + [r.passed for r in job_results]
    passed += [r.passed for r in webhook_results] + [r.passed for r in hostile_results]
    return 0 if all(passed) else 1
