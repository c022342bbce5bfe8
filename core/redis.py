"""The shared Redis client (one connection pool per URL and process)."""

from __future__ import annotations

from functools import cache
from typing import Any

import redis
from django.conf import settings
from redis.backoff import ExponentialBackoff
from redis.retry import Retry


def reconnecting(timeout: float) -> dict[str, Any]:
    """Connection options that ride out a Redis restart: a broken connection is dropped and the
    command retried on a fresh one a few times within about a second, then the error is raised
    (and answered 503 `service_unavailable`) rather than waited out."""
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "health_check_interval": 10,
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
        "retry_on_error": [redis.ConnectionError, redis.TimeoutError],
    }


@cache
def _client_for(url: str, timeout: float) -> redis.Redis:
    return redis.Redis.from_url(url, **reconnecting(timeout))


def redis_client() -> redis.Redis | None:
    """The Redis named by REDIS_URL, or None on the embedded default that runs without one."""
    if not settings.REDIS_URL:
        return None
    return _client_for(settings.REDIS_URL, float(settings.SVCX_HEALTH_TIMEOUT))
