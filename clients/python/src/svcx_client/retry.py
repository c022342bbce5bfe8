"""When to retry a request and how long to wait first.

Retried: an answer whose envelope says `retryable: true` (429 rate limits, 503 `overloaded`,
500 `internal_error`, 409 `idempotency_in_progress`), unless `details.exceeds_limit` says the
request alone is over the whole limit (no wait helps); a 502, 503 or 504 without an envelope (a
proxy in front of the service); and a request that got no answer (connection refused, reset or
timed out). Every other error fails the same way until the request changes, so it is raised at
once. A POST or DELETE is retried with the Idempotency-Key of its first attempt, so a retry of a
conversion that did run is answered by its stored result and never billed twice.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GATEWAY_STATUSES = frozenset({502, 503, 504})
IN_PROGRESS = "idempotency_in_progress"


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry and how long to wait.

    `max_retries` retries follow the first attempt. Without a `Retry-After` the wait is drawn
    at random between 0 and `backoff * 2**retry` seconds, at most `max_backoff` ("full
    jitter"). A `Retry-After` is waited as given; one longer than `max_wait` is not waited for,
    the error is raised. `idempotency_in_progress` (the first attempt of the same request is
    still running, for example after a read timeout) is retried each second for up to
    `in_progress_wait` seconds, not counted against `max_retries`.
    """

    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 20.0
    max_wait: float = 120.0
    in_progress_wait: float = 180.0

    def backoff_delay(self, retry: int, rng: random.Random | None = None) -> float:
        """The wait before retry number `retry` (0 for the first) without a Retry-After."""
        ceiling = min(self.max_backoff, self.backoff * (2**retry))
        return (rng or random).uniform(0, ceiling)  # jitter, not a secret


def envelope_error(body: Any) -> Mapping[str, Any] | None:
    """The `error` member of an envelope, or None when the body is not one."""
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        error: Mapping[str, Any] = body["error"]
        return error
    return None


def is_retryable(status: int, envelope: Any) -> bool:
    """Whether an error answer may succeed when sent again unchanged."""
    error = envelope_error(envelope)
    if error is None:
        return status in GATEWAY_STATUSES
    if not error.get("retryable"):
        return False
    details = error.get("details")
    return not (isinstance(details, Mapping) and details.get("exceeds_limit"))


def server_wait(headers: Mapping[str, str], envelope: Any) -> float | None:
    """Seconds the service asked to wait: `Retry-After`, else `retry_after_ms`, else None."""
    value = headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass  # an HTTP date: not sent by the service; fall back to the body
    error = envelope_error(envelope)
    if error is not None and isinstance(error.get("retry_after_ms"), int | float):
        return max(0.0, float(error["retry_after_ms"]) / 1000)
    return None
