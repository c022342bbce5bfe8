"""The shared Redis client (one connection pool per URL and process)."""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings


@cache
def _client_for(url: str, timeout: float) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout, health_check_interval=30)


def redis_client() -> redis.Redis | None:
    """The Redis named by REDIS_URL, or None on the embedded default that runs without one."""
    if not settings.REDIS_URL:
        return None
    return _client_for(settings.REDIS_URL, float(settings.SVCX_HEALTH_TIMEOUT))
