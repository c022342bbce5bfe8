"""Readiness checks for GET /v1/health: database, Redis (or the embedded broker), workers."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import connection

from svcx.redis import redis_client
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
    """Live workers, and per conversion queue how many consume it: a worker that listens on
    other queues converts nothing, so each queue needs one."""
    from conversion.jobs import conversion_queues

    try:
        queues = {queue: len(live_workers(queue)) for queue in conversion_queues()}
        return {"ok": all(queues.values()), "live": len(live_workers()), "queues": queues}
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
