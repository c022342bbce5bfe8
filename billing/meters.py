"""Rate-limit meters (interface.md 7.4, decisions.md 6), per organization and environment.

Windowed meters are fixed-window counters in the cache (Redis in production: INCRBY is atomic;
counts may be approximate, credits never are). The concurrency meter is a set of leases in a
Redis sorted set scored by expiry, so a crashed process cannot hold a slot past the wall-clock
limit. A meter is checked before work; a 429 bills nothing.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

import redis
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from accounts.models import Organization
from billing.limits import MeterName, limit_for
from core.context import context_of
from core.errors import ErrorCode, ServiceError
from core.redis import redis_client

logger = logging.getLogger("svcx.meters")


class Scope(Protocol):
    """Whose meters: an organization and environment (an authenticated Caller is one)."""

    @property
    def organization(self) -> Organization: ...
    @property
    def org_id(self) -> str: ...
    @property
    def environment(self) -> str: ...


@dataclass(frozen=True)
class OrgScope:
    organization: Organization
    environment: str

    @property
    def org_id(self) -> str:
        return self.organization.id


@dataclass(frozen=True)
class Meter:
    """A meter: its name (also the name of its limit), the code a refusal answers, its window
    and whether the x-ratelimit-* headers report it."""

    name: MeterName
    code: ErrorCode
    window: int  # seconds; 0 for the concurrency meter, which holds leases, not a window
    reported: bool

    @property
    def header(self) -> str | None:
        """The <meter> of the x-ratelimit-* headers, when reported."""
        return self.name.value if self.reported else None


# The windowed meters; the concurrency meter is apart (leases in a sorted set).
METERS: dict[MeterName, Meter] = {
    m.name: m
    for m in (
        Meter(MeterName.REQUESTS, ErrorCode.RATE_LIMIT_REQUESTS, 60, reported=True),
        Meter(MeterName.PAGES, ErrorCode.RATE_LIMIT_PAGES, 60, reported=True),
        Meter(MeterName.UPLOADS, ErrorCode.RATE_LIMIT_UPLOADS, 60, reported=True),
        Meter(MeterName.INSPECT, ErrorCode.RATE_LIMIT_INSPECT, 60, reported=True),
        Meter(MeterName.INSPECT_SAMPLE_PAGES, ErrorCode.RATE_LIMIT_INSPECT, 86400, reported=False),
        Meter(MeterName.TOC, ErrorCode.RATE_LIMIT_TOC, 60, reported=True),
        Meter(MeterName.NO_VALUE_CONVERSIONS, ErrorCode.RATE_LIMIT_NO_VALUE_CONVERSIONS, 3600, reported=False),
        Meter(MeterName.UNBILLED_WORK, ErrorCode.RATE_LIMIT_UNBILLED_WORK, 3600, reported=False),
        Meter(MeterName.NEW_ACCOUNT, ErrorCode.RATE_LIMIT_NEW_ACCOUNT, 86400, reported=False),
    )
}
CONCURRENCY = Meter(MeterName.CONCURRENCY, ErrorCode.RATE_LIMIT_CONCURRENCY, 0, reported=True)
NEW_ACCOUNT_AGE = timedelta(days=7)


@dataclass(frozen=True)
class MeterState:
    meter: Meter
    limit: int
    used: int
    reset_seconds: float
    # What `meter_consume` counted (0 where the meter does not apply) and in which window.
    counted: int = 0
    window: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def headers(self) -> dict[str, str]:
        if self.meter.header is None:
            return {}
        name = self.meter.header
        return {
            f"x-ratelimit-limit-{name}": str(self.limit),
            f"x-ratelimit-remaining-{name}": str(self.remaining),
            f"x-ratelimit-reset-{name}": str(max(0, math.ceil(self.reset_seconds))),
        }

    def refusal(self, *, requested: int = 1) -> ServiceError:
        wait = max(1.0, self.reset_seconds)
        window = self.meter.window or int(settings.SVCX_CONVERSION_TIME_LIMIT)
        what = f"The {self.meter.name.replace('_', ' ')} limit of {self.limit} per {_window_text(window)}"
        # A request bigger than the whole limit fails after any wait: say so, and how to shrink it.
        alone = requested > self.limit
        if alone:
            message = (
                f"{what} is smaller than this request alone ({requested}); retrying it unchanged cannot succeed. "
                "Split it into smaller requests."
            )
        else:
            message = (
                f"{what} is reached (this request needs {requested}, {self.remaining} left). Retry after Retry-After."
            )
        return ServiceError(
            self.meter.code,
            message,
            retry_after_ms=math.ceil(wait * 1000),
            details={
                "meter": self.meter.name,
                "limit": self.limit,
                "window_seconds": window,
                "remaining": self.remaining,
                "requested": requested,
                "exceeds_limit": alone,
            },
            headers=self.headers(),
        )


def _window_text(seconds: int) -> str:
    return {60: "minute", 3600: "hour", 86400: "day"}.get(seconds, f"{seconds} seconds")


def _key(caller: Scope, meter: Meter, window_index: int) -> str:
    return f"svcx:rl:{caller.org_id}:{caller.environment}:{meter.name}:{window_index}"


def _window(meter: Meter) -> tuple[int, float]:
    now = time.time()
    index = int(now // meter.window)
    return index, (index + 1) * meter.window - now


def applies(caller: Scope, name: MeterName) -> bool:
    if name == MeterName.NEW_ACCOUNT:
        return timezone.now() - caller.organization.created_at < NEW_ACCOUNT_AGE
    return True


def meter_peek(caller: Scope, name: MeterName) -> MeterState:
    meter = METERS[name]
    index, reset = _window(meter)
    used = _read(_key(caller, meter, index))
    return MeterState(meter=meter, limit=limit_for(caller.organization, meter.name), used=used, reset_seconds=reset)


def record_peek(raw: Any, caller: Scope, name: MeterName) -> None:
    """Remember a meter's state for the response headers, if Redis can tell it now: after the
    work is done, a Redis fault must not turn the answer into an error."""
    try:
        state = meter_peek(caller, name)
    except redis.RedisError:
        logger.warning("meter read failed", exc_info=True)
        return
    record(raw, state)


def meter_require(caller: Scope, name: MeterName, amount: int = 1) -> MeterState:
    """Refuse (429) when `amount` more would exceed the meter; consumes nothing."""
    state = meter_peek(caller, name)
    if applies(caller, name) and state.used + amount > state.limit:
        raise state.refusal(requested=amount)
    return state


def meter_consume(caller: Scope, name: MeterName, amount: int = 1, *, enforce: bool = True) -> MeterState:
    """Count `amount` against the meter; with `enforce`, a count over the limit is taken back
    and refused with 429."""
    meter = METERS[name]
    limit = limit_for(caller.organization, meter.name)
    index, reset = _window(meter)
    if not applies(caller, name):
        return MeterState(meter=meter, limit=limit, used=0, reset_seconds=reset)
    key = _key(caller, meter, index)
    used = _incr(key, amount, meter.window + 5)
    state = MeterState(meter=meter, limit=limit, used=used, reset_seconds=reset, counted=amount, window=index)
    if enforce and used > limit:
        _incr(key, -amount, meter.window + 5)
        raise MeterState(meter=meter, limit=limit, used=used - amount, reset_seconds=reset).refusal(requested=amount)
    return state


def meter_give_back(caller: Scope, state: MeterState) -> None:
    """Take back what `meter_consume` counted (it returned `state`) for work that did not
    happen (the hold refused: no credits), while its window lasts (a window gone is reset)."""
    index, _ = _window(state.meter)
    if not state.counted or index != state.window:
        return
    key = _key(caller, state.meter, index)
    if redis_client() is None and cache.get(key) is None:
        return  # the fallback cache's counter is gone (expired): nothing to take back from
    _incr(key, -state.counted, state.meter.window + 5)


def _incr(key: str, amount: int, ttl: int) -> int:
    """Add `amount` to a window counter; one round trip on Redis."""
    client = redis_client()
    if client is not None:
        pipe = client.pipeline(transaction=False)
        pipe.incrby(key, amount)
        pipe.expire(key, ttl)
        return int(pipe.execute()[0])
    cache.add(key, 0, timeout=ttl)
    try:
        return int(cache.incr(key, amount))
    except ValueError:  # the window expired between add and incr
        cache.set(key, amount, timeout=ttl)
        return amount


def _read(key: str) -> int:
    client = redis_client()
    if client is not None:
        return int(client.get(key) or 0)
    return int(cache.get(key, 0) or 0)


# --- concurrency ---------------------------------------------------------------------------

_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[3]) then return -(n + 1) end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return n + 1
"""


def _lease_seconds() -> float:
    return float(settings.SVCX_CONVERSION_TIME_LIMIT) + float(settings.SVCX_CONVERSION_GRACE) + 30


def _concurrency_key(caller: Scope) -> str:
    return f"svcx:conc:{caller.org_id}:{caller.environment}"


def concurrency_acquire(caller: Scope, request_id: str) -> MeterState:
    """Take an in-flight slot for the request (429 `rate_limit_concurrency` when none is free)."""
    limit = limit_for(caller.organization, MeterName.CONCURRENCY)
    client = redis_client()
    now = time.time()
    if client is None:  # embedded default: a single machine, counted approximately in the cache
        leases: dict[str, float] = {k: v for k, v in (cache.get(_concurrency_key(caller)) or {}).items() if v > now}
        if len(leases) >= limit:
            raise MeterState(meter=CONCURRENCY, limit=limit, used=len(leases), reset_seconds=1).refusal()
        leases[request_id] = now + _lease_seconds()
        cache.set(_concurrency_key(caller), leases, timeout=int(_lease_seconds()))
        return MeterState(meter=CONCURRENCY, limit=limit, used=len(leases), reset_seconds=0)
    result = int(
        client.eval(
            _ACQUIRE, 1, _concurrency_key(caller), now, now + _lease_seconds(), limit, request_id, int(_lease_seconds())
        )
    )
    if result < 0:  # -(slots in use + 1): refused
        raise MeterState(meter=CONCURRENCY, limit=limit, used=-result - 1, reset_seconds=1).refusal()
    return MeterState(meter=CONCURRENCY, limit=limit, used=result, reset_seconds=0)


def concurrency_release(caller: Scope, request_id: str) -> None:
    client = redis_client()
    if client is None:
        leases = dict(cache.get(_concurrency_key(caller)) or {})
        leases.pop(request_id, None)
        cache.set(_concurrency_key(caller), leases, timeout=int(_lease_seconds()))
        return
    try:
        client.zrem(_concurrency_key(caller), request_id)
    except redis.RedisError:
        # The work is done and its answer decided; the slot's lease lapses by itself.
        logger.warning("concurrency release failed", exc_info=True)


def record(raw: Any, state: MeterState) -> None:
    """Remember a meter's state for the response headers."""
    context_of(raw).meters[state.meter.name] = state


def rate_limit_headers(raw: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for state in context_of(raw).meters.values():
        headers.update(state.headers())
    return headers
