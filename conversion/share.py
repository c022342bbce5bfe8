"""The organizations' share of the worker pool: one organization cannot hold every worker.

A job holds a share slot from its submission to its end. An organization may hold at most its
share of the pool that consumes the job's queue (`SVCX_POOL_SHARE_PERCENT` of the live workers' slots,
at least one), or more while that still leaves `SVCX_POOL_RESERVE` slots of the pool free for
the others: alone, it uses an idle pool; when another organization's job arrives, a slot is
waiting for it, however long the first organization's jobs run. A job over its organization's
share waits in its web thread (not in the broker's queue, where it would sit in front of the
others' jobs) until a slot is free, up to the queue wait limit, then answers 503 `overloaded`
(`details.reason: "pool_share"`).

With Redis the slots are leases in two sorted sets per queue (the pool's and the organization's),
taken atomically by a script; on the embedded default (one machine) they are counted
approximately in the cache, as the concurrency meter is.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from django.conf import settings
from django.core.cache import cache

from accounts.authentication import Caller
from core.errors import ErrorCode, ServiceError
from core.redis import redis_client
from workers.heartbeat import pool_slots

# How often a job over its organization's share asks again for a slot (seconds).
SHARE_POLL_SECONDS = 0.2

_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
local mine = redis.call('ZCARD', KEYS[2])
local total = redis.call('ZCARD', KEYS[1])
if mine < tonumber(ARGV[3]) or total + 1 <= tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[5])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
  redis.call('EXPIRE', KEYS[1], ARGV[6])
  redis.call('EXPIRE', KEYS[2], ARGV[6])
  return 1
end
return 0
"""


def _keys(queue: str, caller: Caller) -> tuple[str, str]:
    return f"svcx:share:{queue}", f"svcx:share:{queue}:{caller.org_id}"


def _lease_seconds() -> float:
    """Longer than any job holds its slot; a web process that died releases it by expiry."""
    return (
        float(settings.SVCX_QUEUE_WAIT_LIMIT)
        + float(settings.SVCX_CONVERSION_TIME_LIMIT)
        + float(settings.SVCX_CONVERSION_GRACE)
        + 30
    )


def share_of(slots: int) -> int:
    """The slots one organization may hold of a pool of `slots`: its share, at least one."""
    return max(1, math.floor(slots * int(settings.SVCX_POOL_SHARE_PERCENT) / 100))


def _take(queue: str, caller: Caller, request_id: str) -> bool:
    slots = pool_slots(queue)
    share = share_of(slots)
    beyond = slots - int(settings.SVCX_POOL_RESERVE)  # the pool's total while slots stay free
    now = time.time()
    lease = _lease_seconds()
    pool_key, org_key = _keys(queue, caller)
    client = redis_client()
    if client is not None:
        taken = client.eval(_ACQUIRE, 2, pool_key, org_key, now, now + lease, share, beyond, request_id, int(lease))
        return bool(int(taken))
    pool = {k: v for k, v in (cache.get(pool_key) or {}).items() if v > now}
    mine = {k: v for k, v in (cache.get(org_key) or {}).items() if v > now}
    if len(mine) >= share and len(pool) + 1 > beyond:
        return False
    pool[request_id] = mine[request_id] = now + lease
    cache.set(pool_key, pool, timeout=int(lease))
    cache.set(org_key, mine, timeout=int(lease))
    return True


def _give_back(queue: str, caller: Caller, request_id: str) -> None:
    pool_key, org_key = _keys(queue, caller)
    client = redis_client()
    if client is not None:
        try:
            client.zrem(pool_key, request_id)
            client.zrem(org_key, request_id)
        except redis.RedisError:
            pass  # the lease lapses by itself
        return
    for key in (pool_key, org_key):
        leases = dict(cache.get(key) or {})
        leases.pop(request_id, None)
        cache.set(key, leases, timeout=int(_lease_seconds()))


@contextmanager
def pool_share(*, queue: str, caller: Caller, request_id: str, is_client_gone: Callable[[], bool]) -> Iterator[None]:
    """Hold one of the organization's slots of the queue's pool while the block runs, waiting for
    one up to the queue wait limit (503 `overloaded`, reason `pool_share`); 400 when the client
    leaves while it waits."""
    limit = float(settings.SVCX_QUEUE_WAIT_LIMIT)
    started = time.monotonic()
    while not _take(queue, caller, request_id):
        if is_client_gone():
            raise ServiceError(ErrorCode.BAD_REQUEST, "The client closed the connection.")
        if time.monotonic() - started > limit:
            raise ServiceError(
                ErrorCode.OVERLOADED,
                "Your organization's share of the conversion workers is busy with its other requests; retry after "
                "Retry-After, or send fewer requests at once.",
                retry_after_ms=int(float(settings.SVCX_OVERLOAD_RETRY_AFTER) * 1000),
                details={"reason": "pool_share", "share_slots": share_of(pool_slots(queue))},
            )
        time.sleep(SHARE_POLL_SECONDS)
    try:
        yield
    finally:
        _give_back(queue, caller, request_id)
