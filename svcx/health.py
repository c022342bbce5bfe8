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


def _workers() -> int:
    try:
        return len(live_workers())
    except Exception:
        logger.warning("health: worker check failed", exc_info=True)
        return 0


def health_checks() -> dict[str, dict[str, object]]:
    """Each component's state; `ok` is True when it answers."""
    workers = _workers()
    return {
        "database": {"ok": _database()},
        "redis": {"ok": _redis(), "embedded": not settings.REDIS_URL},
        "workers": {"ok": workers > 0, "live": workers},
    }
