"""Celery workers for the webhook tests: each consumes a webhooks queue of its own
(SVCX_QUEUE_PREFIX), so no other worker of the suite takes its tasks, runs the beat's sweeper every
second and retries within a second."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import WorkerProcess, start_worker

FAST_RETRIES = {
    "SVCX_WEBHOOKS_RETRY_FIRST": "300ms",
    "SVCX_WEBHOOKS_RETRY_MAX": "1s",
    "SVCX_WEBHOOKS_RETRY_WINDOW": "4s",
    "SVCX_WEBHOOKS_SWEEP_INTERVAL": "1s",
}


def webhooks_worker(tmp_path: Path, prefix: str, *, beat: bool = True, **env: str) -> WorkerProcess:
    """A worker of the `<prefix>webhooks` queue (a process in this suite queues there once its
    settings name the same prefix), with the beat unless told otherwise."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    return start_worker(
        tmp_path,
        queues=f"{prefix}webhooks",
        env={"SVCX_QUEUE_PREFIX": prefix, **FAST_RETRIES, **env},
        beat=beat,
        concurrency=2,
    )


def stop(worker: WorkerProcess) -> None:
    """Stop the worker and its embedded beat, the whole process group told at once (a TERM to
    the worker alone left it waiting out the 20 s of WorkerProcess.stop)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.process.pid, signal.SIGTERM)
    worker.stop()


def module_worker(name: str, django_db_blocker: Any, tmp_path_factory: Any) -> Iterator[tuple[WorkerProcess, str]]:
    """For a module-scoped fixture: a worker for the module's tests, and its queue prefix."""
    prefix = f"{name}{os.getpid()}-"
    with django_db_blocker.unblock():
        worker = webhooks_worker(tmp_path_factory.mktemp(f"{name}-worker"), prefix)
    yield worker, prefix
    stop(worker)
