"""The launcher of `make run` on the embedded default, started for a test and stopped after it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest import ROOT, free_port


@dataclass
class Launched:
    base: str
    var_dir: Path
    log_path: Path
    returncode: int | None = None

    @property
    def output(self) -> str:
        return self.log_path.read_text(errors="replace")


# How long the launcher may take to answer its health check (a wait, not a goal).
_READY_SECONDS = 180


@contextmanager
def launched(tmp: Path, queue_prefix: str) -> Iterator[Launched]:
    """`python -m svcx.run` with neither DATABASE_URL nor REDIS_URL, its own directory, port and
    queue names (nothing shared with the test servers), healthy before the block runs; stopped
    with Ctrl-C after it (`returncode` set)."""
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")
    }
    env.update(
        SVCX_VAR_DIR=str(tmp / "var"),
        SVCX_BIND=f"127.0.0.1:{port}",
        SVCX_QUEUE_PREFIX=queue_prefix,
        WEB_CONCURRENCY="1",
        WORKER_CONCURRENCY="1",
        SVCX_WORKER_HEARTBEAT_INTERVAL="1s",
    )
    run = Launched(f"http://127.0.0.1:{port}", tmp / "var", tmp / "run.log")
    with run.log_path.open("wb") as log:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "svcx.run"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        # Migrations, collected static files and three processes starting: under a minute
        # on a quiet machine, longer beside the rest of the suite on a busy one.
        deadline = time.monotonic() + _READY_SECONDS
        ready = False
        while time.monotonic() < deadline and not ready:
            time.sleep(0.5)
            try:
                ready = httpx.get(run.base + "/v1/health", timeout=5).status_code == 200
            except httpx.HTTPError:
                continue
        assert ready, run.output[-3000:]
        yield run
    finally:
        launcher.send_signal(signal.SIGINT)
        try:
            launcher.wait(timeout=40)
        except subprocess.TimeoutExpired:
            launcher.kill()
            launcher.wait()
        run.returncode = launcher.returncode
