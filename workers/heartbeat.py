"""Worker liveness: each worker process announces itself every few seconds, with the queues it
consumes and its pool's size (how many jobs it runs at once), and the health check, overload
protection and the organizations' share of the pool count the workers whose announcement is
fresh (a worker on the wrong queues is no worker for a job).

With Redis the announcements live in a sorted set per queue (member: worker hostname, score:
time) and each pool's size in a key that expires with the heartbeat; on the embedded default
they are files whose modification time is the announcement and whose lines are the queues, then
`slots N`.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis
from celery import bootsteps
from django.conf import settings

from core.redis import redis_client

logger = logging.getLogger("svcx.worker")
_KEY = "svcx:workers"  # every worker, whatever it consumes
_SLOTS_KEY = "svcx:workers:slots:"  # + hostname: the size of its pool (expires with the heartbeat)
_SLOTS_LINE = "slots "


def _queue_key(queue: str) -> str:
    return f"{_KEY}:{queue}"


def _heartbeat_dir() -> Path:
    path = Path(settings.VAR_DIR) / "heartbeats"
    path.mkdir(parents=True, exist_ok=True)
    return path


def worker_heartbeat(*, hostname: str, queues: Sequence[str], slots: int = 1) -> None:
    """Announce the worker alive on `queues`, running up to `slots` jobs at once."""
    client = redis_client()
    if client is not None:
        now = time.time()
        pipe = client.pipeline(transaction=False)
        for key in (_KEY, *(_queue_key(q) for q in queues)):
            pipe.zadd(key, {hostname: now})
        pipe.set(_SLOTS_KEY + hostname, slots, ex=max(1, math.ceil(float(settings.SVCX_WORKER_HEARTBEAT_TTL))))
        pipe.execute()
    else:
        # Written aside and renamed: a reader never sees a half-written announcement.
        path = _heartbeat_dir() / hostname.replace("/", "_")
        staged = path.with_name(f".{path.name}.{os.getpid()}")
        staged.write_text("\n".join([*queues, f"{_SLOTS_LINE}{slots}"]))
        os.replace(staged, path)


def worker_heartbeat_clear(*, hostname: str, queues: Sequence[str]) -> None:
    client = redis_client()
    if client is not None:
        pipe = client.pipeline(transaction=False)
        for key in (_KEY, *(_queue_key(q) for q in queues)):
            pipe.zrem(key, hostname)
        pipe.delete(_SLOTS_KEY + hostname)
        pipe.execute()
    else:
        (_heartbeat_dir() / hostname.replace("/", "_")).unlink(missing_ok=True)


def live_workers(queue: str | None = None) -> list[str]:
    """Hostnames of workers whose last heartbeat is younger than the heartbeat TTL; with
    `queue`, only those that consume it."""
    cutoff = time.time() - float(settings.SVCX_WORKER_HEARTBEAT_TTL)
    client = redis_client()
    if client is not None:
        key = _KEY if queue is None else _queue_key(queue)
        client.zremrangebyscore(key, "-inf", cutoff)
        members: list[bytes] = client.zrangebyscore(key, cutoff, "+inf")  # type: ignore[assignment]  # sync client returns a list
        return sorted(m.decode() for m in members)
    live = []
    for path in _heartbeat_dir().iterdir():
        if path.name.startswith("."):
            continue  # an announcement being written
        try:
            if path.stat().st_mtime < cutoff:
                continue
            if queue is None or queue in path.read_text().splitlines():
                live.append(path.name)
        except FileNotFoundError:
            continue  # cleared while we looked
    return sorted(live)


def pool_slots(queue: str) -> int:
    """How many jobs of `queue` the live workers run at once: the sum of their pools."""
    client = redis_client()
    if client is not None:
        workers = live_workers(queue)
        if not workers:
            return 0
        sizes: list[bytes | None] = client.mget([_SLOTS_KEY + name for name in workers])  # type: ignore[assignment]  # sync client
        return sum(int(size) if size else 1 for size in sizes)
    total = 0
    for name in live_workers(queue):
        try:
            lines = (_heartbeat_dir() / name).read_text().splitlines()
        except FileNotFoundError:
            continue
        sizes_announced = [int(line[len(_SLOTS_LINE) :]) for line in lines if line.startswith(_SLOTS_LINE)]
        total += sizes_announced[0] if sizes_announced else 1
    return total


def consumed_queues(worker: Any) -> list[str]:
    """The queues a Celery worker consumes (its -Q option, else the default queue)."""
    consume_from = worker.app.amqp.queues.consume_from
    return sorted(consume_from) if consume_from else [worker.app.conf.task_default_queue]


class HeartbeatStep(bootsteps.StartStopStep):
    """Celery worker bootstep that announces the worker on the worker's own timer."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        self.tref: Any = None
        self.queues: list[str] = []

    def start(self, worker: Any) -> None:
        self.queues = consumed_queues(worker)
        slots = int(worker.concurrency or 1)
        worker_heartbeat(hostname=worker.hostname, queues=self.queues, slots=slots)
        self.tref = worker.timer.call_repeatedly(
            float(settings.SVCX_WORKER_HEARTBEAT_INTERVAL), _beat, (worker.hostname, self.queues, slots), priority=10
        )

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
        worker_heartbeat_clear(hostname=worker.hostname, queues=self.queues)


def _beat(hostname: str, queues: list[str], slots: int) -> None:
    try:
        worker_heartbeat(hostname=hostname, queues=queues, slots=slots)
    except redis.RedisError:
        # Redis is restarting: announce again on the next beat, once it is back.
        logger.warning("worker heartbeat failed", exc_info=True)
