"""Checking that a webhook delivery comes from svcx, unchanged and recent.

svcx signs each delivery as Stripe signs its events: the header

    Svcx-Signature: t=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd

carries the time of sending (Unix seconds) and, in `v1`, the hex HMAC-SHA256 of
`f"{t}.{body}"` (the raw body, as bytes) under the endpoint's signing secret (`whsec_...`). Right
after a rotation the header has a second `v1`, made with the previous secret; a delivery is good
when any `v1` matches.

    from svcx_client import webhooks

    event = webhooks.verify(request_body, request.headers["Svcx-Signature"], secret)

Verify the body exactly as received, before parsing it: parsed and serialised again it is
another string, and no signature matches.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

from svcx_client.errors import WebhookSignatureError

SIGNATURE_HEADER = "Svcx-Signature"
EVENT_ID_HEADER = "Svcx-Event-Id"
DEFAULT_TOLERANCE = 300

__all__ = [
    "DEFAULT_TOLERANCE",
    "EVENT_ID_HEADER",
    "SIGNATURE_HEADER",
    "WebhookSignatureError",
    "sign",
    "signature_header",
    "verify",
]


def sign(payload: bytes | str, secret: str, timestamp: int) -> str:
    """The hex `v1` signature of `payload` sent at `timestamp` under `secret`."""
    body = payload.encode() if isinstance(payload, str) else bytes(payload)
    return hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()


def signature_header(payload: bytes | str, secret: str, timestamp: int | None = None) -> str:
    """A `Svcx-Signature` value for `payload`, as svcx would send it (now, unless `timestamp`):
    for testing a receiver without the service."""
    sent = int(time.time()) if timestamp is None else timestamp
    return f"t={sent},v1={sign(payload, secret, sent)}"


def _parse(header: str) -> tuple[int, list[str]]:
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            continue
        if key == "t":
            if not value.isdigit():
                raise WebhookSignatureError(f"the {SIGNATURE_HEADER} header's timestamp is not a number: {value!r}")
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None:
        raise WebhookSignatureError(f"the {SIGNATURE_HEADER} header has no timestamp (t=)")
    if not signatures:
        raise WebhookSignatureError(f"the {SIGNATURE_HEADER} header has no v1 signature")
    return timestamp, signatures


def verify(payload: bytes | str, header: str | None, secret: str, tolerance: int = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """The event a delivery carries (`{"id", "type", "created", "data"}`), once its signature is
    checked.

    `payload` is the request's body as received (bytes; a str is read as UTF-8), `header` the
    value of its `Svcx-Signature` header, `secret` the endpoint's signing secret. `tolerance` is
    how many seconds the signing time may be from now (either way: a replay, a wrong clock); 0
    skips that check.

    Raises WebhookSignatureError when the header is missing or malformed, no `v1` is the body's
    signature under `secret`, the time is outside the tolerance, or the body is not a JSON
    object."""
    if not header:
        raise WebhookSignatureError(f"no {SIGNATURE_HEADER} header")
    if not secret:
        raise WebhookSignatureError("no signing secret to check the delivery with")
    body = payload.encode() if isinstance(payload, str) else bytes(payload)
    timestamp, signatures = _parse(header)
    expected = sign(body, secret, timestamp)
    if not any(hmac.compare_digest(expected, candidate) for candidate in signatures):
        raise WebhookSignatureError(
            "no signature in the header matches the body under this secret "
            "(a different secret, or a body changed since it was signed: verify the raw body)"
        )
    now = int(time.time())
    if tolerance > 0 and abs(now - timestamp) > tolerance:
        when = f"{now - timestamp} s ago" if timestamp < now else f"{timestamp - now} s ahead of this clock"
        raise WebhookSignatureError(
            f"the delivery was signed {when}, beyond the tolerance of {tolerance} s "
            "(a replay, or a clock that is wrong)"
        )
    try:
        event = json.loads(body)
    except ValueError as exc:
        raise WebhookSignatureError(f"the body is not JSON: {exc}") from exc
    if not isinstance(event, dict):
        raise WebhookSignatureError("the body is not a JSON object")
    return event
