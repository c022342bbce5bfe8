"""Load test of the running service: limits hold under 50 concurrent clients, no 5xx, no credit drift.

    .venv/bin/python -m bench.load            # -> bench/results/load.md (+ load.json)

Run from the repository root with the service venv (it generates its PDFs with pikepdf). The
harness drops and recreates the PostgreSQL database `svcx_load` (the name must start with
`svcx_load`), flushes Redis DB 11, migrates, creates one organization (100,000 credits) with
small limits (requests, pages, concurrency) and a live key through `manage.py svcx`, starts
gunicorn (gthread, 2 x 32 threads) and one Celery worker (prefork, 2 processes) on loopback with
their own `SVCX_VAR_DIR` under `bench/.cache/load/run-*/` (logs land there), and waits for
`GET /v1/health`.

Then `--clients` threads (50), each with one keep-alive `http.client` connection, send for
`--duration` seconds (30) a mix of requests against that one organization: conversions of
distinct one-page PDFs (cache misses), of a few repeated ones (cache hits), with repeated
`Idempotency-Key`s (replays, 409 in progress) and with conflicting ones, `GET /v1/account` and
`GET /v1/credits/ledger`. The load starts at second 45 of a minute (`--align-second`; at once
when up to 5 s past it), so it spans two of the meters' fixed minute windows. A client honours `Retry-After` up to `--backoff-cap` seconds, so the
pressure stays on. Meanwhile a monitor samples, in Redis, the organization's concurrency leases
and the depth of the conversion queue (every 50 ms).

After the load it waits for in-flight work to finish (`--settle`), lifts the requests limit so
it can read the account, and checks:

1. no 5xx (a 503 `overloaded` is counted apart and accepted only with reason `queue_full`),
   no transport error;
2. every 429 carries `Retry-After` >= 1 and the `x-ratelimit-limit|remaining|reset-<meter>` of
   its meter; in each fixed minute window the requests the server admitted (and the 2xx among
   them) stay within the requests limit, each with its own `remaining` value, and the pages
   billed stay within the pages limit;
3. concurrency: the sampled leases and the overlap of the job rows (created inside the slot,
   finished before its release, so a lower bound of the slots held) never exceed the limit,
   and `rate_limit_concurrency` was actually hit;
4. credits: the account's balance equals the initial credits minus the credits billed in the
   200 responses (a replay counted once) and nothing is held; in SQL the ledger's grants,
   captures, refunds and adjustments add up to the balance, each capture matches a 200 the
   client received, and no hold is still `held`;
5. idempotency: each key's 200s carry one request id, and exactly one of them is not a replay.

Every process started here runs in its own session and is stopped (and the database dropped,
unless `--keep`) at the end, on error, on SIGTERM/SIGINT and when the watchdog
(`--max-seconds`) fires.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import itertools
import json
import math
import os
import platform
import random
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.paths import CACHE_DIR, REPO_DIR, RESULTS_DIR
from bench.stack import RedisConnection, Stack

WINDOW = 60  # seconds: the fixed window of the requests and pages meters (billing/meters.py)
KINDS = ("convert_new", "convert_cached", "convert_idem", "convert_conflict", "account", "ledger")
# The share of each kind in the mix (cumulative thresholds are derived from these).
MIX = {
    "convert_new": 0.45,
    "convert_cached": 0.15,
    "convert_idem": 0.10,
    "convert_conflict": 0.03,
    "account": 0.14,
    "ledger": 0.13,
}
# The x-ratelimit-* <meter> a 429 code must carry headers for (None: no header for that meter).
CODE_METER = {
    "rate_limit_requests": "requests",
    "rate_limit_pages": "pages",
    "rate_limit_concurrency": "concurrency",
    "rate_limit_uploads": "uploads",
    "rate_limit_inspect": "inspect",
    "rate_limit_toc": "toc",
    "rate_limit_no_value_conversions": None,
    "rate_limit_unbilled_work": None,
    "rate_limit_new_account": None,
}


def _log(msg: str) -> None:
    print(f"[load {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _pct(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))]


def _ms(v: float | None) -> float | None:
    return None if v is None else round(v * 1000, 1)


# --------------------------------------------------------------------------------------------
# PDFs


def make_pdf(tag: str) -> bytes:
    """A one-page PDF with a text layer; `tag` makes its bytes (hence its cache key) distinct."""
    import pikepdf  # the service venv has it

    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type1,
            BaseFont=pikepdf.Name.Helvetica,
            Encoding=pikepdf.Name.WinAnsiEncoding,
        )
    )
    ops = [
        "BT",
        "/F1 18 Tf",
        "72 720 Td",
        f"(Load test document {tag}) Tj",
        "/F1 11 Tf",
        "0 -28 Td",
        "(This one-page PDF exercises the service under load.) Tj",
        "0 -16 Td",
        f"(Its tag {tag} makes it distinct, so the result cache misses.) Tj",
        "ET",
    ]
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream("\n".join(ops).encode("latin-1")),
    )
    pdf.pages.append(pikepdf.Page(page))
    buf = io.BytesIO()
    pdf.save(buf, deterministic_id=True)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# The clients


@dataclass
class Result:
    kind: str
    client: int
    method: str
    path: str
    t_send: float  # time.time()
    t_recv: float
    seconds: float
    status: int  # 0: transport error
    code: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    request_id: str = ""
    credits_billed: int | None = None
    pages_billed: int | None = None
    cached: bool | None = None
    replayed: bool = False
    idem_key: str = ""
    reason: str = ""  # 503: details.reason
    retry_after_ms: int | None = None
    error: str = ""  # transport error text
    transport_retries: int = 0

    @property
    def endpoint(self) -> str:
        return "POST /v1/convert" if self.method == "POST" else f"GET {self.path.split('?')[0]}"


class Client:
    """One keep-alive connection, like a client library would hold. A connection idle for
    longer than `idle_max` is replaced before use (gunicorn closes idle ones after 5 s)."""

    def __init__(self, port: int, key: str, timeout: float, idle_max: float = 3.0) -> None:
        self.port, self.key, self.timeout, self.idle_max = port, key, timeout, idle_max
        self.conn: http.client.HTTPConnection | None = None
        self.last_used = 0.0

    def _fresh(self) -> http.client.HTTPConnection:
        if self.conn is not None and time.monotonic() - self.last_used > self.idle_max:
            self.conn.close()
            self.conn = None
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        return self.conn

    def send(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes, int]:
        headers = {"Authorization": f"Bearer {self.key}", **headers}
        retries = 0
        while True:
            reused = self.conn is not None
            conn = self._fresh()
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.last_used = time.monotonic()
                hdrs = {k.lower(): v for k, v in resp.getheaders()}
                if hdrs.get("connection", "").lower() == "close":
                    conn.close()
                    self.conn = None
                return resp.status, hdrs, data, retries
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                self.conn = None
                # A reused keep-alive connection the server closed before reading the request:
                # retry once on a new one (what client libraries do). Counted and reported.
                if reused and retries == 0:
                    retries += 1
                    continue
                raise
            except BaseException:
                conn.close()
                self.conn = None
                raise

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


@dataclass
class Plan:
    run_tag: str
    cached_pdfs: list[bytes]
    idem_pdfs: list[bytes]
    conflict_pdfs: list[tuple[bytes, bytes]]
    counter: itertools.count = field(default_factory=itertools.count)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_tag(self) -> str:
        with self.lock:
            return f"{self.run_tag}-n{next(self.counter)}"


def _pick(rng: random.Random) -> str:
    r = rng.random()
    acc = 0.0
    for kind in KINDS:
        acc += MIX[kind]
        if r < acc:
            return kind
    return KINDS[-1]


def one_request(client: Client, cid: int, kind: str, plan: Plan, rng: random.Random) -> Result:
    headers: dict[str, str] = {}
    body: bytes | None = None
    idem = ""
    if kind == "account":
        method, path = "GET", "/v1/account"
    elif kind == "ledger":
        method, path = "GET", "/v1/credits/ledger?limit=10"
    else:
        method, path = "POST", "/v1/convert"
        headers = {"Content-Type": "application/pdf", "Accept": "application/json"}
        if kind == "convert_new":
            body = make_pdf(plan.next_tag())
        elif kind == "convert_cached":
            body = rng.choice(plan.cached_pdfs)
        elif kind == "convert_idem":
            k = rng.randrange(len(plan.idem_pdfs))
            body, idem = plan.idem_pdfs[k], f"{plan.run_tag}-idem-{k}"
        else:  # convert_conflict: the same key with one of two different bodies
            k = rng.randrange(len(plan.conflict_pdfs))
            body, idem = plan.conflict_pdfs[k][rng.randrange(2)], f"{plan.run_tag}-conflict-{k}"
        if idem:
            headers["Idempotency-Key"] = idem
    t_send = time.time()
    t0 = time.monotonic()
    try:
        status, hdrs, data, retries = client.send(method, path, body, headers)
    except (OSError, http.client.HTTPException) as exc:
        t1 = time.monotonic()
        return Result(
            kind,
            cid,
            method,
            path,
            t_send,
            time.time(),
            t1 - t0,
            0,
            error=f"{type(exc).__name__}: {exc}",
            idem_key=idem,
        )
    t1 = time.monotonic()
    res = Result(
        kind,
        cid,
        method,
        path,
        t_send,
        time.time(),
        t1 - t0,
        status,
        headers={
            k: v
            for k, v in hdrs.items()
            if k.startswith("x-ratelimit-") or k in ("retry-after", "idempotent-replayed", "x-request-id")
        },
        replayed=hdrs.get("idempotent-replayed", "").lower() == "true",
        idem_key=idem,
        transport_retries=retries,
    )
    try:
        doc = json.loads(data) if data else {}
    except ValueError:
        doc = {}
        res.code = "(not json)"
    if isinstance(doc, dict):
        if status >= 400 and isinstance(doc.get("error"), dict):
            err = doc["error"]
            res.code = str(err.get("code") or "")
            res.retry_after_ms = err.get("retry_after_ms")
            res.request_id = str(err.get("request_id") or "")
            res.reason = str((err.get("details") or {}).get("reason") or "")
        else:
            res.request_id = str(doc.get("request_id") or "")
            if method == "POST" and status == 200:
                res.credits_billed = int(doc.get("credits_billed", 0))
                res.pages_billed = int(doc.get("pages_billed", 0))
                res.cached = bool(doc.get("cached"))
    return res


def client_loop(
    cid: int,
    port: int,
    key: str,
    plan: Plan,
    t_end: float,
    max_requests: int,
    backoff_cap: float,
    seed: int,
    out: list[Result],
) -> None:
    rng = random.Random(seed * 1000 + cid)
    client = Client(port, key, timeout=90.0)
    try:
        for _ in range(max_requests):
            if time.monotonic() >= t_end:
                break
            res = one_request(client, cid, _pick(rng), plan, rng)
            out.append(res)
            wait = 0.0
            if res.status in (429, 503) or (res.status == 409 and res.code == "idempotency_in_progress"):
                try:
                    wait = float(res.headers.get("retry-after", "1"))
                except ValueError:
                    wait = 1.0
                wait = min(wait, backoff_cap) * rng.uniform(0.5, 1.0)
            elif res.status == 0:
                wait = 0.5
            if wait:
                time.sleep(max(0.0, min(wait, t_end - time.monotonic())))
    finally:
        client.close()


class Monitor(threading.Thread):
    """Samples the organization's concurrency leases and the conversion queue depth in Redis."""

    def __init__(self, redis_url: str, org: str, max_seconds: float, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.redis_url, self.org, self.interval = redis_url, org, interval
        self.deadline = time.monotonic() + max_seconds
        self.stop_event = threading.Event()
        self.samples = 0
        self.max_leases = 0
        self.max_leases_at = 0.0
        self.max_queue = 0
        self.errors = 0
        self.lease_hist: Counter[int] = Counter()

    def run(self) -> None:
        r = RedisConnection(self.redis_url)
        key = f"svcx:conc:{self.org}:live"
        try:
            while not self.stop_event.is_set() and time.monotonic() < self.deadline:
                try:
                    now = time.time()
                    leases = int(r.call("ZCOUNT", key, repr(now), "+inf"))
                    depth = int(r.call("LLEN", "convert"))
                except (OSError, RuntimeError):
                    self.errors += 1
                    r.close()
                    self.stop_event.wait(0.5)
                    r = RedisConnection(self.redis_url)
                    continue
                self.samples += 1
                self.lease_hist[leases] += 1
                if leases > self.max_leases:
                    self.max_leases, self.max_leases_at = leases, now
                self.max_queue = max(self.max_queue, depth)
                self.stop_event.wait(self.interval)
        finally:
            r.close()


# --------------------------------------------------------------------------------------------
# Analysis


def _window_of(t_recv: float, reset: str | None) -> int | None:
    """The fixed window a meter counted the request in, from the x-ratelimit-reset-<meter>
    seconds (ceil of the time left at the server) and the client's receive time (same clock)."""
    if reset is None or not reset.isdigit():
        return None
    return int((t_recv + int(reset)) // WINDOW) - 1


def _max_overlap(intervals: list[tuple[float, float]]) -> tuple[int, float | None]:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals], key=lambda e: (e[0], e[1]))
    cur = best = 0
    at: float | None = None
    for t, d in events:
        cur += d
        if cur > best:
            best, at = cur, t
    return best, at


def analyse(
    results: list[Result],
    limits: dict[str, int],
    monitor: Monitor,
    sql: dict[str, Any],
    account: dict[str, Any],
    credits: int,
) -> dict[str, Any]:
    checks: dict[str, dict[str, Any]] = {}

    # --- counts -------------------------------------------------------------------------
    by_status = Counter(r.status for r in results)
    by_code = Counter(f"{r.status} {r.code or 'ok'}" for r in results)
    by_kind_status: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        by_kind_status[r.kind][f"{r.status} {r.code}".strip()] += 1

    # --- 1. no 5xx -----------------------------------------------------------------------
    transport = [r for r in results if r.status == 0]
    overloaded = [r for r in results if r.status == 503 and r.code == "overloaded"]
    overloaded_bad = [r for r in overloaded if r.reason != "queue_full"]
    fivexx = [r for r in results if r.status >= 500 and not (r.status == 503 and r.code == "overloaded")]
    checks["no_5xx"] = {
        "pass": not fivexx and not overloaded_bad and not transport,
        "5xx_other_than_overloaded": len(fivexx),
        "5xx_codes": dict(Counter(f"{r.status} {r.code}" for r in fivexx)),
        "503_overloaded": len(overloaded),
        "503_overloaded_reasons": dict(Counter(r.reason for r in overloaded)),
        "503_overloaded_not_queue_full": len(overloaded_bad),
        "max_queue_depth_sampled": monitor.max_queue,
        "transport_errors": len(transport),
        "transport_error_samples": sorted({r.error for r in transport})[:5],
        "transport_retries_on_reused_connection": sum(r.transport_retries for r in results),
        "request_ids_of_5xx": [r.request_id for r in fivexx][:20],
    }

    # --- 2. 429 headers and windows --------------------------------------------------------
    bad_429: list[dict[str, Any]] = []
    codes_429 = Counter(r.code for r in results if r.status == 429)
    for r in results:
        if r.status != 429:
            continue
        problems = []
        ra = r.headers.get("retry-after", "")
        if not ra.isdigit() or int(ra) < 1:
            problems.append(f"Retry-After {ra!r}")
        if r.retry_after_ms is None or r.retry_after_ms < 1:
            problems.append(f"retry_after_ms {r.retry_after_ms!r}")
        meter = CODE_METER.get(r.code, "?")
        if meter == "?":
            problems.append(f"unknown 429 code {r.code!r}")
        elif meter is not None:
            for h in ("limit", "remaining", "reset"):
                if f"x-ratelimit-{h}-{meter}" not in r.headers:
                    problems.append(f"no x-ratelimit-{h}-{meter}")
        if problems:
            bad_429.append({"code": r.code, "kind": r.kind, "request_id": r.request_id, "problems": problems})

    req_limit = limits["requests"]
    admitted: dict[int, list[Result]] = defaultdict(list)
    missing_header = []
    for r in results:
        if r.status == 0 or r.replayed:
            continue
        rem = r.headers.get("x-ratelimit-remaining-requests")
        if r.code == "rate_limit_requests" or rem is None:
            # Refused by the requests meter, or never counted by it (409 idempotency
            # refusals happen before the meter); a 2xx must always have been counted.
            if 200 <= r.status < 300:
                missing_header.append(r.request_id)
            continue
        w = _window_of(r.t_recv, r.headers.get("x-ratelimit-reset-requests"))
        if w is None:
            missing_header.append(r.request_id)
            continue
        admitted[w].append(r)
    windows: list[dict[str, Any]] = []
    for w in sorted(admitted):
        rs = admitted[w]
        remaining = Counter(r.headers["x-ratelimit-remaining-requests"] for r in rs)
        dups = sum(n - 1 for n in remaining.values() if n > 1)
        windows.append(
            {
                "window_start": time.strftime("%H:%M:%S", time.localtime(w * WINDOW)),
                "admitted": len(rs),
                "2xx": sum(1 for r in rs if 200 <= r.status < 300),
                "refused_429_requests": sum(
                    1
                    for r in results
                    if r.code == "rate_limit_requests"
                    and _window_of(r.t_recv, r.headers.get("x-ratelimit-reset-requests")) == w
                ),
                "duplicate_remaining_values": dups,
                "min_remaining": min(int(v) for v in remaining),
            }
        )
    win_ok = all(
        x["admitted"] <= req_limit and x["2xx"] <= req_limit and x["duplicate_remaining_values"] == 0 for x in windows
    )

    pages_limit = limits["pages"]
    pages_windows = sql.get("pages_windows", [])
    pages_ok = all(x["definite_pages"] <= pages_limit for x in pages_windows)
    checks["limits_429_and_windows"] = {
        "pass": not bad_429
        and win_ok
        and pages_ok
        and not missing_header
        # Each limit must actually have been reached, or the windows prove nothing.
        and codes_429.get("rate_limit_requests", 0) > 0
        and codes_429.get("rate_limit_pages", 0) > 0,
        "429_total": sum(codes_429.values()),
        "429_by_code": dict(codes_429),
        "429_without_proper_headers": len(bad_429),
        "429_problem_samples": bad_429[:10],
        "requests_limit": req_limit,
        "requests_windows": windows,
        "2xx_or_admitted_without_requests_headers": len(missing_header),
        "pages_limit": pages_limit,
        "pages_windows": pages_windows,
        "rate_limit_requests_hit": codes_429.get("rate_limit_requests", 0) > 0,
        "rate_limit_pages_hit": codes_429.get("rate_limit_pages", 0) > 0,
    }

    # --- 3. concurrency ----------------------------------------------------------------------
    conc_limit = limits["concurrency"]
    job_overlap = sql.get("job_overlap", 0)
    conc_headers_bad = [
        r.request_id
        for r in results
        if r.method == "POST"
        and r.status == 200
        and not r.replayed
        and not (
            r.headers.get("x-ratelimit-limit-concurrency") == str(conc_limit)
            and r.headers.get("x-ratelimit-remaining-concurrency", "").isdigit()
        )
    ]
    checks["concurrency"] = {
        "pass": monitor.max_leases <= conc_limit
        and job_overlap <= conc_limit
        and codes_429.get("rate_limit_concurrency", 0) > 0
        and not conc_headers_bad
        and monitor.samples > 0,
        "limit": conc_limit,
        "max_leases_sampled": monitor.max_leases,
        "lease_samples": monitor.samples,
        "lease_histogram": {str(k): v for k, v in sorted(monitor.lease_hist.items())},
        "monitor_errors": monitor.errors,
        "max_overlap_of_job_rows": job_overlap,
        "rate_limit_concurrency_429": codes_429.get("rate_limit_concurrency", 0),
        "convert_200_without_concurrency_headers": len(conc_headers_bad),
    }

    # --- 4. credits ----------------------------------------------------------------------------
    billed_200 = [r for r in results if r.method == "POST" and r.status == 200 and not r.replayed]
    billed = sum(r.credits_billed or 0 for r in billed_200)
    client_by_rid = {r.request_id: r.credits_billed or 0 for r in billed_200 if (r.credits_billed or 0) > 0}
    capture_by_rid = sql.get("captures", {})
    missing_capture = sorted(set(client_by_rid) - set(capture_by_rid))
    capture_unseen = sorted(set(capture_by_rid) - set(client_by_rid))
    amount_mismatch = sorted(
        rid for rid in set(client_by_rid) & set(capture_by_rid) if client_by_rid[rid] != capture_by_rid[rid]
    )
    bad_amount = [
        r.request_id for r in billed_200 if (r.credits_billed, r.pages_billed) != ((0, 0) if r.cached else (1, 1))
    ]
    expected = credits - billed
    acc_credits = (account or {}).get("credits") or {}
    checks["credits"] = {
        "pass": acc_credits.get("balance") == expected
        and acc_credits.get("held") == 0
        and sql.get("ledger_sum") == sql.get("balance")
        and sql.get("balance") == expected
        and sql.get("balance_held") == 0
        and sql.get("holds_held") == 0
        and not missing_capture
        and not capture_unseen
        and not amount_mismatch
        and not bad_amount,
        "initial_credits": credits,
        "billed_in_200_responses": billed,
        "convert_200_not_replayed": len(billed_200),
        "convert_200_cached": sum(1 for r in billed_200 if r.cached),
        "expected_balance": expected,
        "account_balance": acc_credits.get("balance"),
        "account_held": acc_credits.get("held"),
        "account_available": acc_credits.get("available"),
        "sql_balance": sql.get("balance"),
        "sql_held": sql.get("balance_held"),
        "sql_ledger_grant_capture_refund_adjustment": sql.get("ledger_sum"),
        "sql_ledger_kinds": sql.get("ledger_kinds"),
        "sql_holds_by_status": sql.get("holds_by_status"),
        "sql_holds_still_held": sql.get("holds_held"),
        "billed_200_without_capture_row": missing_capture[:10],
        "capture_rows_without_billed_200": capture_unseen[:10],
        "capture_amount_mismatch": amount_mismatch[:10],
        "200_with_unexpected_billing": bad_amount[:10],
        "jobs_by_status": sql.get("jobs_by_status"),
    }

    # --- 5. idempotency ------------------------------------------------------------------------
    by_key: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.idem_key and r.status == 200:
            by_key[r.idem_key].append(r)
    idem_bad = []
    for k, rs in by_key.items():
        originals = [r for r in rs if not r.replayed]
        if len({r.request_id for r in rs}) != 1 or len(originals) != 1 or len({r.credits_billed for r in rs}) != 1:
            idem_bad.append(
                {
                    "key": k,
                    "responses": len(rs),
                    "originals": len(originals),
                    "request_ids": sorted({r.request_id for r in rs}),
                }
            )
    checks["idempotency"] = {
        "pass": not idem_bad,
        "keys_with_200": len(by_key),
        "replays": sum(1 for r in results if r.replayed),
        "409_in_progress": sum(1 for r in results if r.code == "idempotency_in_progress"),
        "409_conflict": sum(1 for r in results if r.code == "idempotency_conflict"),
        "keys_inconsistent": idem_bad[:10],
    }

    # --- latency -----------------------------------------------------------------------------
    latency: dict[str, Any] = {}
    groups: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.status == 0:
            continue
        groups[r.endpoint].append(r)
        label = r.kind
        if r.kind.startswith("convert") and r.status == 200:
            label = (
                "convert 200 replayed"
                if r.replayed
                else ("convert 200 cached" if r.cached else "convert 200 converted")
            )
            groups[label].append(r)
        elif r.status == 429:
            groups["any 429"].append(r)
    for name, rs in groups.items():
        secs = [r.seconds for r in rs]
        latency[name] = {
            "n": len(rs),
            "p50_ms": _ms(_pct(secs, 50)),
            "p99_ms": _ms(_pct(secs, 99)),
            "max_ms": _ms(max(secs)),
        }

    t0 = min((r.t_send for r in results), default=0.0)
    t1 = max((r.t_recv for r in results), default=0.0)
    return {
        "requests": len(results),
        "seconds": round(t1 - t0, 1),
        "requests_per_second": round(len(results) / (t1 - t0), 1) if t1 > t0 else None,
        "by_status": {str(k): v for k, v in sorted(by_status.items())},
        "by_status_code": dict(sorted(by_code.items())),
        "by_kind": {k: dict(sorted(v.items())) for k, v in sorted(by_kind_status.items())},
        "latency": dict(sorted(latency.items())),
        "checks": checks,
        "pass": all(c["pass"] for c in checks.values()),
    }


def collect_sql(stack: Stack, pages_limit: int) -> dict[str, Any]:
    org = stack.org.replace("'", "")
    out: dict[str, Any] = {}
    rows = stack.psql(
        f"SELECT balance, held FROM billing_creditbalance WHERE organization_id='{org}' AND environment='live'"
    )
    out["balance"], out["balance_held"] = (int(rows[0][0]), int(rows[0][1])) if rows else (None, None)
    rows = stack.psql(
        f"SELECT kind, count(*), coalesce(sum(credits),0) FROM billing_ledgerentry "
        f"WHERE organization_id='{org}' AND environment='live' GROUP BY kind ORDER BY kind"
    )
    out["ledger_kinds"] = {k: {"rows": int(n), "credits": int(s)} for k, n, s in rows}
    out["ledger_sum"] = sum(
        v["credits"] for k, v in out["ledger_kinds"].items() if k in ("grant", "capture", "refund", "adjustment")
    )
    rows = stack.psql(f"SELECT status, count(*) FROM billing_credithold WHERE organization_id='{org}' GROUP BY status")
    out["holds_by_status"] = {s: int(n) for s, n in rows}
    out["holds_held"] = out["holds_by_status"].get("held", 0)
    rows = stack.psql(
        f"SELECT request_id, -credits FROM billing_ledgerentry WHERE organization_id='{org}' AND kind='capture' AND credits <> 0"
    )
    out["captures"] = {rid: int(c) for rid, c in rows}
    rows = stack.psql(
        f"SELECT status, count(*) FROM conversion_conversionjob WHERE organization_id='{org}' GROUP BY status"
    )
    out["jobs_by_status"] = {s: int(n) for s, n in rows}
    # Job rows are created inside the request's concurrency slot and finished before it is
    # released: their overlap is a lower bound of the slots held at once.
    rows = stack.psql(
        f"SELECT extract(epoch FROM created_at), extract(epoch FROM coalesce(finished_at, now())) "
        f"FROM conversion_conversionjob WHERE organization_id='{org}'"
    )
    out["job_overlap"], at = _max_overlap([(float(a), float(b)) for a, b in rows])
    out["job_overlap_at"] = at
    # Pages per window: the worker consumes the pages meter between started_at and finished_at.
    rows = stack.psql(
        f"SELECT extract(epoch FROM started_at), extract(epoch FROM finished_at), pages_billed "
        f"FROM conversion_conversionjob WHERE organization_id='{org}' AND pages_billed > 0"
    )
    definite: Counter[int] = Counter()
    ambiguous: Counter[int] = Counter()
    for a, b, p in rows:
        wa, wb = int(float(a) // WINDOW), int(float(b) // WINDOW)
        if wa == wb:
            definite[wa] += int(p)
        else:
            ambiguous[wa] += int(p)
            ambiguous[wb] += int(p)
    out["pages_windows"] = [
        {
            "window_start": time.strftime("%H:%M:%S", time.localtime(w * WINDOW)),
            "definite_pages": definite[w],
            "straddling_pages": ambiguous[w],
            "limit": pages_limit,
        }
        for w in sorted(set(definite) | set(ambiguous))
    ]
    return out


def wait_quiet(stack: Stack, settle: float) -> float:
    """Wait until no job is queued or running and no hold is held (at most `settle` s)."""
    org = stack.org.replace("'", "")
    t0 = time.monotonic()
    while time.monotonic() - t0 < settle:
        busy = stack.psql(
            f"SELECT (SELECT count(*) FROM conversion_conversionjob WHERE organization_id='{org}' AND status IN ('queued','running'))"
            f" + (SELECT count(*) FROM billing_credithold WHERE organization_id='{org}' AND status='held')"
        )
        if busy and busy[0][0] == "0":
            break
        time.sleep(1.0)
    return time.monotonic() - t0


def read_account(stack: Stack) -> dict[str, Any]:
    client = Client(stack.port, stack.key, timeout=30)
    try:
        for _ in range(10):
            status, hdrs, data, _ = client.send("GET", "/v1/account", None, {})
            if status == 200:
                return dict(json.loads(data))
            time.sleep(min(5.0, float(hdrs.get("retry-after", "1") or 1)))
        raise RuntimeError(f"GET /v1/account: {status} {data[:300]!r}")
    finally:
        client.close()


# --------------------------------------------------------------------------------------------
# Report


def render(data: dict[str, Any]) -> str:
    a = data["analysis"]
    c = a["checks"]
    cfg = data["config"]
    ok = lambda v: "PASS" if v else "FAIL"  # noqa: E731
    lines = [
        "# Load test",
        "",
        f"{data['finished_at']}, {data['machine']}, commit {data['code'].get('commit')} (files modified in the "
        f"working tree at start: {', '.join(data['code'].get('modified_files') or []) or 'none'}). "
        "Command (from the repository root):",
        "",
        "```sh",
        data["command"],
        "```",
        "",
        f"{cfg['clients']} client threads (one keep-alive `http.client` connection each) for {cfg['duration']} s "
        f"against one organization ({cfg['credits']:,} credits; limits: requests {cfg['limits']['requests']}/min, "
        f"pages {cfg['limits']['pages']}/min, concurrency {cfg['limits']['concurrency']}), on loopback: gunicorn "
        f"gthread {cfg['web_concurrency']} x {cfg['web_threads']}, one Celery worker with {cfg['worker_concurrency']} "
        f"processes, PostgreSQL, Redis. Mix: "
        + ", ".join(f"{k} {int(v * 100)}%" for k, v in MIX.items())
        + f". A client honours Retry-After up to {cfg['backoff_cap']} s. "
        f"Load average before/after: {data['loadavg_before']} / {data['loadavg_after']} (2 cores, shared).",
        "",
        f"**Overall: {ok(a['pass'])}.** {a['requests']} requests in {a['seconds']} s ({a['requests_per_second']}/s); "
        f"settled in {data['settle_seconds']} s after the load.",
        "",
        "| check | result | evidence |",
        "| --- | --- | --- |",
    ]
    n5 = c["no_5xx"]
    lines.append(
        f"| 1. no 5xx | {ok(n5['pass'])} | 5xx other than overloaded: {n5['5xx_other_than_overloaded']} "
        f"{n5['5xx_codes'] or ''}; 503 overloaded: {n5['503_overloaded']} {n5['503_overloaded_reasons'] or ''} "
        f"(max queue depth sampled {n5['max_queue_depth_sampled']}); transport errors: {n5['transport_errors']} "
        f"(retries on a reused connection: {n5['transport_retries_on_reused_connection']}) |"
    )
    lw = c["limits_429_and_windows"]
    win = "; ".join(
        f"{w['window_start']}: {w['admitted']} admitted ({w['2xx']} 2xx, {w['refused_429_requests']} refused), "
        f"{w['duplicate_remaining_values']} duplicate `remaining`"
        for w in lw["requests_windows"]
    )
    pw = "; ".join(
        f"{w['window_start']}: {w['definite_pages']} pages (+{w['straddling_pages']} straddling)"
        for w in lw["pages_windows"]
    )
    lines.append(
        f"| 2. 429s and windows | {ok(lw['pass'])} | {lw['429_total']} 429s {lw['429_by_code']}, "
        f"{lw['429_without_proper_headers']} without Retry-After >= 1 or x-ratelimit-*; requests limit "
        f"{lw['requests_limit']}/min: {win or 'none'}; pages limit {lw['pages_limit']}/min: {pw or 'none'}; "
        f"2xx/admitted without requests headers: {lw['2xx_or_admitted_without_requests_headers']} |"
    )
    cc = c["concurrency"]
    lines.append(
        f"| 3. concurrency | {ok(cc['pass'])} | limit {cc['limit']}: max leases sampled {cc['max_leases_sampled']} "
        f"({cc['lease_samples']} samples at 50 ms), max overlap of job rows {cc['max_overlap_of_job_rows']}, "
        f"{cc['rate_limit_concurrency_429']} x 429 rate_limit_concurrency |"
    )
    cr = c["credits"]
    lines.append(
        f"| 4. no credit drift | {ok(cr['pass'])} | {cr['initial_credits']} - {cr['billed_in_200_responses']} billed in "
        f"{cr['convert_200_not_replayed']} convert 200s ({cr['convert_200_cached']} cached) = {cr['expected_balance']}; "
        f"account balance {cr['account_balance']}, held {cr['account_held']}; SQL balance {cr['sql_balance']}, held "
        f"{cr['sql_held']}, ledger grant+capture+refund+adjustment {cr['sql_ledger_grant_capture_refund_adjustment']}, "
        f"holds still held {cr['sql_holds_still_held']}; captures without a 200: {len(cr['capture_rows_without_billed_200'])}, "
        f"200s without a capture: {len(cr['billed_200_without_capture_row'])} |"
    )
    ci = c["idempotency"]
    lines.append(
        f"| 5. idempotency | {ok(ci['pass'])} | {ci['keys_with_200']} keys with a 200, {ci['replays']} replays, "
        f"{ci['409_in_progress']} x 409 in progress, {ci['409_conflict']} x 409 conflict, "
        f"{len(ci['keys_inconsistent'])} keys inconsistent |"
    )
    lines += ["", "## Responses by status and code", "", "| status code | n |", "| --- | ---: |"]
    lines += [f"| {k} | {v} |" for k, v in a["by_status_code"].items()]
    lines += ["", "## By request kind", "", "| kind | responses |", "| --- | --- |"]
    lines += [f"| {k} | {', '.join(f'{s}: {n}' for s, n in v.items())} |" for k, v in a["by_kind"].items()]
    lines += [
        "",
        "## Latency",
        "",
        "| endpoint / outcome | n | p50 ms | p99 ms | max ms |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for k, v in a["latency"].items():
        lines.append(f"| {k} | {v['n']} | {v['p50_ms']} | {v['p99_ms']} | {v['max_ms']} |")
    lines += [
        "",
        "Latency is the client's wall time under load on a shared 2-core machine (the client threads, web, worker, "
        "PostgreSQL and Redis share the cores), so it is an indication, not a goal. The windows are the server's "
        "fixed minute windows (derived from `x-ratelimit-reset-requests` and the receive time; pages from the job "
        "rows' start and finish times). Sampled concurrency leases: "
        + ", ".join(f"{k}: {v}" for k, v in cc["lease_histogram"].items())
        + ".",
        "",
        f"Problems found: {', '.join(data['problems']) if data['problems'] else 'none'}.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def _loadavg() -> list[float] | None:
    with contextlib.suppress(OSError):
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    return None


def _code_state() -> dict[str, Any]:
    """The commit the service ran from and the files that differed from it (the tree may be
    edited while a run is under way; the report says which code it measured)."""

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=REPO_DIR, capture_output=True, text=True, timeout=30).stdout.rstrip()

    with contextlib.suppress(OSError, subprocess.SubprocessError):
        dirty = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
        return {"commit": git("rev-parse", "--short", "HEAD").strip(), "modified_files": dirty[:30]}
    return {}


def _problems(analysis: dict[str, Any]) -> list[str]:
    return [name for name, c in analysis["checks"].items() if not c["pass"]]


def run(args: argparse.Namespace, argv: list[str]) -> int:
    limits = {"requests": args.limit_requests, "pages": args.limit_pages, "concurrency": args.limit_concurrency}
    stamp = time.strftime("%Y%m%d-%H%M%S")
    stack = Stack(
        workdir=CACHE_DIR / "load" / f"run-{stamp}",
        database_url=args.database_url,
        redis_url=args.redis_url,
        db_prefixes=("svcx_load",),
        label="load",
        web_concurrency=args.web_concurrency,
        web_threads=args.web_threads,
    )

    def on_term(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    # Watchdog: however the run goes, it ends (and cleans up) after --max-seconds.
    watchdog = threading.Timer(args.max_seconds, lambda: os.kill(os.getpid(), signal.SIGTERM))
    watchdog.daemon = True
    watchdog.start()
    monitor: Monitor | None = None
    t_start = time.monotonic()
    try:
        _log(f"setting up database {stack.db.name} and Redis {args.redis_url}")
        stack.setup(org_name="Load", credits=args.credits, limits=limits)
        code_state = _code_state()
        stack.start_web()
        stack.start_worker(args.worker_concurrency)
        ready = stack.wait_healthy()
        _log(
            f"service healthy on 127.0.0.1:{stack.port} after {ready:.1f} s (org {stack.org}); logs in {stack.workdir}"
        )
        run_tag = f"{stamp}-{os.getpid()}"
        plan = Plan(
            run_tag=run_tag,
            cached_pdfs=[make_pdf(f"{run_tag}-cached-{i}") for i in range(5)],
            idem_pdfs=[make_pdf(f"{run_tag}-idem-{i}") for i in range(20)],
            conflict_pdfs=[
                (make_pdf(f"{run_tag}-conflict-{i}-a"), make_pdf(f"{run_tag}-conflict-{i}-b")) for i in range(5)
            ],
        )
        if args.align_second >= 0:
            wait = (args.align_second - time.time()) % WINDOW
            if wait > WINDOW - args.align_tolerance or wait > args.align_max_wait:
                wait = 0.0  # already within the tolerance past the second (or too long a wait)
            _log(f"waiting {wait:.1f} s so the load starts at second {args.align_second} of a minute")
            time.sleep(wait)
        monitor = Monitor(args.redis_url, stack.org, max_seconds=args.duration + args.settle + 180)
        monitor.start()
        loadavg_before = _loadavg()
        results: list[Result] = []
        t_end = time.monotonic() + args.duration
        _log(f"{args.clients} clients for {args.duration:.0f} s")
        threads = [
            threading.Thread(
                target=client_loop,
                args=(
                    i,
                    stack.port,
                    stack.key,
                    plan,
                    t_end,
                    args.max_requests_per_client,
                    args.backoff_cap,
                    args.seed,
                    results,
                ),
                daemon=True,
            )
            for i in range(args.clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.0, t_end - time.monotonic()) + 120)
        stuck = sum(1 for t in threads if t.is_alive())
        if stuck:
            _log(f"warning: {stuck} clients still waiting on a response; analysing what finished")
        results = list(results)
        _log(f"load done: {len(results)} requests; waiting for in-flight work (at most {args.settle:.0f} s)")
        settle = wait_quiet(stack, args.settle)
        monitor.stop_event.set()
        monitor.join(timeout=5)
        loadavg_after = _loadavg()
        # Lift the requests limit so the account can be read now (the window may be used up).
        stack.set_limit("requests", 1_000_000)
        account = read_account(stack)
        sql = collect_sql(stack, args.limit_pages)
        analysis = analyse(results, limits, monitor, sql, account, args.credits)
        data: dict[str, Any] = {
            "finished_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "command": "cd /work/main && .venv/bin/python -m bench.load" + (" " + shlex.join(argv) if argv else ""),
            "config": {
                "clients": args.clients,
                "duration": args.duration,
                "credits": args.credits,
                "limits": limits,
                "web_concurrency": args.web_concurrency,
                "web_threads": args.web_threads,
                "worker_concurrency": args.worker_concurrency,
                "backoff_cap": args.backoff_cap,
                "mix": MIX,
                "seed": args.seed,
                "stuck_clients": stuck,
            },
            "code": code_state,
            "loadavg_before": loadavg_before,
            "loadavg_after": loadavg_after,
            "settle_seconds": round(settle, 1),
            "total_seconds": round(time.monotonic() - t_start, 1),
            "analysis": analysis,
        }
        data["problems"] = _problems(analysis)
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        (RESULTS_DIR / "load.json").write_text(json.dumps(data, indent=2) + "\n")
        (RESULTS_DIR / "load.md").write_text(render(data))
        _log(f"{'PASS' if analysis['pass'] else 'FAIL'}: {', '.join(data['problems']) or 'every check passed'}")
        _log(f"wrote {RESULTS_DIR / 'load.md'} and load.json in {time.monotonic() - t_start:.0f} s")
        return 0 if analysis["pass"] else 1
    finally:
        watchdog.cancel()
        if monitor is not None:
            monitor.stop_event.set()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stack.close(keep=args.keep)
        _log("processes stopped" + ("" if args.keep else ", database dropped"))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    p.add_argument("--limit-requests", type=int, default=600, help="requests per minute")
    p.add_argument("--limit-pages", type=int, default=40, help="pages per minute")
    p.add_argument("--limit-concurrency", type=int, default=4)
    p.add_argument("--credits", type=int, default=100_000)
    p.add_argument(
        "--backoff-cap", type=float, default=2.0, help="a 429/503/409 waits min(Retry-After, this) x U(0.5, 1)"
    )
    p.add_argument("--max-requests-per-client", type=int, default=2000)
    p.add_argument("--settle", type=float, default=20.0, help="seconds at most to wait for in-flight work")
    p.add_argument(
        "--align-second",
        type=int,
        default=45,
        help="start the load at this second of a minute, so it spans two fixed windows (-1: at once)",
    )
    p.add_argument("--align-tolerance", type=float, default=5.0, help="start at once when at most this far past it")
    p.add_argument("--align-max-wait", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/svcx_load")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/11")
    p.add_argument("--web-concurrency", type=int, default=2)
    p.add_argument("--web-threads", type=int, default=32)
    p.add_argument("--worker-concurrency", type=int, default=2)
    p.add_argument("--max-seconds", type=float, default=300.0, help="watchdog: the whole run stops after this")
    p.add_argument("--keep", action="store_true", help="keep the database and Redis DB afterwards")
    args = p.parse_args(argv)
    return run(args, argv)


if __name__ == "__main__":
    raise SystemExit(main())
