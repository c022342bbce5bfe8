"""How long a new user waits, on a fresh clone, from `make run` to the first conversion.

    python3 bench/first_run.py [--port 8765]   -> bench/results/first-run.md

Clones this repository's HEAD into a temporary folder (no virtual environment, no var/), runs
`make run` there on the embedded default (no DATABASE_URL / REDIS_URL), reads the live key it
prints, and posts a one-page PDF from tests/data to /v1/convert until it answers 200. The clock
starts when `make run` starts: it covers creating the environment, installing, migrating and
starting the web server, the worker and the scheduler. Standard library only: it runs with any
Python 3.11, before anything is installed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "first-run.md"
PDF = "tests/data/real/pdfjs__nested_outline.pdf"
GOAL_SECONDS = 45.0
LIVE_KEY = re.compile(r"live: (svcx_sk_live_\S+)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="svcx-first-run-"))
    clone = work / "svcx"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV")}
    env["SVCX_BIND"] = f"127.0.0.1:{args.port}"
    env["SVCX_PUBLIC_URL"] = f"http://127.0.0.1:{args.port}"
    started = time.monotonic()
    run = subprocess.Popen(
        ["make", "run"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    marks: dict[str, float] = {}
    key: list[str] = []
    log: list[str] = []

    def read() -> None:
        assert run.stdout is not None
        for line in run.stdout:
            log.append(line)
            if "pip install" in line and "installing" not in marks:
                marks["installing"] = time.monotonic() - started
            found = LIVE_KEY.search(line)
            if found and not key:
                key.append(found.group(1))
                marks["key printed"] = time.monotonic() - started

    threading.Thread(target=read, daemon=True).start()
    body = (clone / PDF).read_bytes()
    converted: float | None = None
    try:
        while time.monotonic() - started < args.timeout and run.poll() is None:
            if key:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{args.port}/v1/convert",
                    data=body,
                    headers={"Authorization": f"Bearer {key[0]}", "Content-Type": "application/pdf"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=130) as response:  # our own server
                        if response.status == 200:
                            converted = time.monotonic() - started
                            break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
            time.sleep(0.5)
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
        venv = clone / ".venv"
        size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file()) if venv.exists() else 0
        shutil.rmtree(work, ignore_errors=True)
    if converted is None:
        sys.stderr.write("".join(log[-40:]))
        print(f"no conversion within {args.timeout:.0f} s", file=sys.stderr)
        return 1
    lines = [
        "# First steps: from `make run` on a fresh clone to the first conversion",
        "",
        f"Produced by `python3 bench/first_run.py` on {datetime.now(UTC):%Y-%m-%d %H:%M UTC} "
        f"({os.cpu_count()} cores). A clone of HEAD with no environment; `make run` on the embedded default;",
        f"the live key it prints; `POST /v1/convert` of `{PDF}` (raw PDF) until it answers 200.",
        "",
        "| step | seconds after `make run` |",
        "| --- | ---: |",
        *(f"| {name} | {at:.1f} |" for name, at in marks.items()),
        f"| first conversion answered 200 | {converted:.1f} |",
        "",
        f"Goal: {GOAL_SECONDS:.0f} s ({'met' if converted <= GOAL_SECONDS else 'NOT met'}). "
        f"The environment `make run` created: {size / 2**20:.0f} MiB.",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
