"""Version 2 jobs over HTTP (`http.client`) and their rows in the scratch database, for the jobs
bench and the fault suite; and the engine's reference Markdown of a document. Stdlib only.

    python -m bench.job_client reference PATH   # (service venv) SHA-256 of convert(PATH)'s Markdown
"""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.job_checks import engine_fingerprint
from bench.paths import CACHE_DIR, MAIN_PYTHON, REPO_DIR
from bench.stack import Stack

JOBS_CACHE = CACHE_DIR / "jobs"


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


def job_cancel(port: int, key: str, job_id: str) -> int:
    """POST /v2/jobs/{id}/cancel; its HTTP status (200 canceled, 409 the job had already ended)."""
    status, data = _request(port, key, "POST", f"/v2/jobs/{job_id}/cancel")
    if status not in (200, 409):
        raise RuntimeError(f"POST /v2/jobs/{job_id}/cancel: HTTP {status}: {data[:400]!r}")
    return status


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
        [str(MAIN_PYTHON), "-m", "bench.job_client", "reference", str(path)],
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


if __name__ == "__main__":
    if sys.argv[1:2] != ["reference"] or len(sys.argv) != 3:
        print("usage: python -m bench.job_client reference PATH", file=sys.stderr)
        sys.exit(2)
    _child_reference(sys.argv[2])
