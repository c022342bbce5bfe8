"""Readiness checks for GET /v1/health: database, Redis (or the embedded broker), workers."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import connection

from core.redis import redis_client
from workers.heartbeat import live_workers

logger = logging.getLogger("svcx.health")


def _database() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        logger.warning("health: database check failed", exc_info=True)
        return False


def _redis() -> bool:
    client = redis_client()
    try:
        if client is None:
            # Embedded default: the broker is a directory the web and worker processes share.
            broker = Path(settings.VAR_DIR) / "broker"
            broker.mkdir(parents=True, exist_ok=True)
            return broker.is_dir()
        return bool(client.ping())
    except Exception:
        logger.warning("health: redis check failed", exc_info=True)
        return False


def _workers() -> dict[str, object]:
    """Live workers, and per queue how many consume it (a worker on other queues does nothing for
    a queue). Ready means live conversions and the scheduled work (`default`: hold sweeps) are
    served; the test-key queue runs on separate infrastructure and is reported, not required, so a
    missing test worker never takes live traffic out of a load balancer."""
    from conversion.jobs import conversion_queues

    try:
        live_queue, test_queue = conversion_queues()
        queues = {queue: len(live_workers(queue)) for queue in ("default", live_queue, test_queue)}
        ready = queues["default"] > 0 and queues[live_queue] > 0
        return {"ok": ready, "live": len(live_workers()), "queues": queues}
    except Exception:
        logger.warning("health: worker check failed", exc_info=True)
        return {"ok": False, "live": 0, "queues": {}}


def health_checks() -> dict[str, dict[str, object]]:
    """Each component's state; `ok` is True when it answers."""
    return {
        "database": {"ok": _database()},
        "redis": {"ok": _redis(), "embedded": not settings.REDIS_URL},
        "workers": _workers(),
    }
