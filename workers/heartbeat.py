"""Worker liveness: each worker process announces itself every few seconds, and the health
check and overload protection count the workers whose announcement is fresh.

With Redis the announcements live in one sorted set (member: worker hostname, score: time);
on the embedded default they are files whose modification time is the announcement.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from celery import bootsteps
from django.conf import settings

from svcx.redis import redis_client

_KEY = "svcx:workers"


def _heartbeat_dir() -> Path:
    path = Path(settings.VAR_DIR) / "heartbeats"
    path.mkdir(parents=True, exist_ok=True)
    return path


def worker_heartbeat(*, hostname: str) -> None:
    client = redis_client()
    if client is not None:
        client.zadd(_KEY, {hostname: time.time()})
    else:
        (_heartbeat_dir() / hostname.replace("/", "_")).touch()


def worker_heartbeat_clear(*, hostname: str) -> None:
    client = redis_client()
    if client is not None:
        client.zrem(_KEY, hostname)
    else:
        (_heartbeat_dir() / hostname.replace("/", "_")).unlink(missing_ok=True)


def live_workers() -> list[str]:
    """Hostnames of workers whose last heartbeat is younger than the heartbeat TTL."""
    cutoff = time.time() - float(settings.SVCX_WORKER_HEARTBEAT_TTL)
    client = redis_client()
    if client is not None:
        client.zremrangebyscore(_KEY, "-inf", cutoff)
        members: list[bytes] = client.zrangebyscore(_KEY, cutoff, "+inf")  # type: ignore[assignment]  # sync client returns a list
        return sorted(m.decode() for m in members)
    return sorted(p.name for p in _heartbeat_dir().iterdir() if p.stat().st_mtime >= cutoff)


class HeartbeatStep(bootsteps.StartStopStep):
    """Celery worker bootstep that announces the worker on the worker's own timer."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        self.tref: Any = None

    def start(self, worker: Any) -> None:
        worker_heartbeat(hostname=worker.hostname)
        self.tref = worker.timer.call_repeatedly(
            float(settings.SVCX_WORKER_HEARTBEAT_INTERVAL), _beat, (worker.hostname,), priority=10
        )

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
        worker_heartbeat_clear(hostname=worker.hostname)


def _beat(hostname: str) -> None:
    worker_heartbeat(hostname=hostname)
