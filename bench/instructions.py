"""CPU instructions the web tier spends on one cache hit, counted by valgrind's callgrind.

    python -m bench instructions                          # this checkout
    python -m bench instructions --compare ../wt-240c34a  # and another checkout, side by side

Wall-clock and CPU-time benchmarks (`bench service`) move by 20-50% between runs on a shared
machine; an instruction count does not: the same code, request and data give the same count
within a fraction of a percent, whatever else the machine is doing. So this is the measure for
"the request path must not get slower" between two commits.

For each checkout (its own code, venv and `bench.stack`): a scratch database and Redis DB, one
gunicorn process (deployed configuration, one worker) started under callgrind with counting
off, and a Celery worker. One conversion warms the result cache, `--warm` cache hits warm the
process, then counting is switched on in the gunicorn worker for `--hits` cache hits (a
one-page PDF sent raw, `POST /v1/convert?pages=1`, one keep-alive connection, as
`bench service`'s cache hit) and the count is dumped. Everything the worker does in those
requests is counted: its request threads, gunicorn's main loop, the timer threads, the Python
interpreter and the C libraries it calls (psycopg, hiredis, OpenSSL). PostgreSQL and Redis are
not counted.

Needs valgrind (`apt-get install valgrind`). Results: bench/results/instructions.md (+ .json).
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Not from bench.paths: the measuring child runs this file as a script, with the measured
# checkout's `bench` package on its path.
REPO_DIR = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_DIR / "bench" / "results"
# The cache hit's document: one page, small, in the suite's own data.
DOCUMENT = REPO_DIR / "tests" / "data" / "real" / "pdfjs__nested_outline.pdf"
QUERY = "pages=1"


def _child(tag: str, database_url: str, redis_url: str, warm: int, hits: int) -> dict[str, Any]:
    """In a process of the measured checkout's interpreter, run from it with its `bench.stack`
    first on the path (see the end of this file)."""
    from bench.stack import BIN, Stack  # the checkout's own

    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"svcx-bench-instructions-{tag}-{os.getpid()}"
    stack = Stack(
        workdir=workdir,
        database_url=database_url,
        redis_url=redis_url,
        db_prefixes=("svcx_bench",),
        label=f"instr{tag}",
        web_concurrency=1,
        web_threads=32,
    )
    body = DOCUMENT.read_bytes()
    try:
        stack.setup(org_name="Bench", credits=10_000_000, limits=None)
        stack.web = stack._spawn(
            "web",
            [
                "valgrind",
                "--tool=callgrind",
                "--trace-children=yes",
                "--instr-atstart=no",
                f"--callgrind-out-file={workdir}/callgrind.%p",
                str(BIN / "python"),
                "-m",
                "gunicorn",
                "-c",
                "python:svcx.gunicorn_conf",
                "svcx.wsgi:application",
            ],
        )
        stack.start_worker(1)
        stack.wait_healthy(timeout=900)
        children = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(stack.web.pid)], capture_output=True, text=True, check=True
        ).stdout.split()
        if len(children) != 1:
            raise RuntimeError(f"expected one gunicorn worker, found {children}")
        worker = int(children[0])
        conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=900)
        headers = {
            "Authorization": f"Bearer {stack.key}",
            "Content-Type": "application/pdf",
            "Accept": "application/json",
        }

        def hit(expect_cached: bool) -> None:
            nonlocal conn
            for attempt in (1, 2):
                try:
                    conn.request("POST", f"/v1/convert?{QUERY}", body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                except (http.client.HTTPException, ConnectionError):
                    conn.close()  # an idle keep-alive connection closed by the server: once more
                    conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=900)
                    if attempt == 2:
                        raise
                    continue
                if resp.status != 200 or (expect_cached and json.loads(data).get("cached") is not True):
                    raise RuntimeError(f"not a cache hit: {resp.status} {data[:300]!r}")
                return

        hit(expect_cached=False)
        for _ in range(warm):
            hit(expect_cached=True)
        control = ["callgrind_control"]
        subprocess.run([*control, "-i", "on", str(worker)], check=True, capture_output=True)
        started = time.monotonic()
        for _ in range(hits):
            hit(expect_cached=True)
        subprocess.run([*control, "-d", str(worker)], check=True, capture_output=True)
        subprocess.run([*control, "-i", "off", str(worker)], check=True, capture_output=True)
        seconds = time.monotonic() - started
        dumps = sorted(workdir.glob(f"callgrind.{worker}.*"))
        if not dumps:
            raise RuntimeError(f"callgrind wrote no dump for worker {worker} in {workdir}")
        total = next(
            int(line.split()[1])
            for line in dumps[-1].read_text(errors="replace").splitlines()
            if line.startswith("summary:")
        )
        return {"instructions": total, "hits": hits, "per_hit": total / hits, "seconds_under_valgrind": seconds}
    finally:
        stack.close(keep=False)


def _commit(checkout: Path) -> str:
    out = subprocess.run(["git", "-C", str(checkout), "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    # Benchmark results written into the checkout are not a change of its code.
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()[:90] + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def run(args: Any, argv: list[str]) -> int:
    checkouts = [REPO_DIR, *(Path(p).resolve() for p in args.compare)]
    rows: list[dict[str, Any]] = []
    for index, checkout in enumerate(checkouts):
        python = checkout / ".venv" / "bin" / "python"
        if not python.exists():
            raise SystemExit(f"{checkout}: no .venv (run `make test` there, or link this checkout's .venv)")
        counts = []
        for repeat in range(args.runs):
            tag = f"{index}{repeat}"
            proc = subprocess.run(
                [
                    str(python),
                    str(Path(__file__).resolve()),
                    str(checkout),
                    tag,
                    f"{args.database_url}_{tag}",
                    args.redis_url,
                    str(args.warm),
                    str(args.hits),
                ],
                capture_output=True,
                text=True,
                cwd=checkout,
            )
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-4000:])
                raise SystemExit(f"{checkout}: the measurement failed (exit {proc.returncode})")
            counts.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"{checkout.name}: {counts[-1]['per_hit'] / 1e6:.2f} M instructions per cache hit", flush=True)
        rows.append({"checkout": str(checkout), "commit": _commit(checkout), "runs": counts})
    write(rows, argv)
    return 0


def write(rows: list[dict[str, Any]], argv: list[str]) -> None:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    command = "python -m bench " + " ".join(argv)
    (RESULTS_DIR / "instructions.json").write_text(json.dumps({"command": command, "rows": rows}, indent=2) + "\n")
    base = min(run["per_hit"] for run in rows[0]["runs"])
    lines = [
        "# Instructions per cache hit (callgrind)",
        "",
        f"`{command}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. One gunicorn worker under callgrind,",
        f"the one-page `{DOCUMENT.name}` sent raw (`POST /v1/convert?{QUERY}`), counted over",
        f"{rows[0]['runs'][0]['hits']} cache hits after a warm-up; see bench/instructions.py.",
        "",
        "| checkout | commit | M instructions per hit | vs the first row |",
        "| --- | --- | ---: | ---: |",
    ]
    for row in rows:
        per_hit = [run["per_hit"] for run in row["runs"]]
        shown = " / ".join(f"{value / 1e6:.2f}" for value in per_hit)
        lines.append(f"| `{Path(row['checkout']).name}` | {row['commit']} | {shown} | {min(per_hit) / base - 1:+.1%} |")
    (RESULTS_DIR / "instructions.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    # The child: argv = checkout, tag, database URL, Redis URL, warm-up hits, counted hits.
    target = Path(sys.argv[1])
    sys.path.insert(0, str(target))
    os.chdir(target)
    result = _child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    print(json.dumps(result))
