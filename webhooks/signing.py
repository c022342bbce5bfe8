"""What an endpoint receives: the event as JSON and the headers that let it check the sender.

    Svcx-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>

as Stripe signs its events: the timestamp is signed with the body, so a receiver refuses an old
delivery replayed (the SDK's `svcx_client.webhooks.verify`, 5 minutes by default). While a
rotated-out secret still counts, a second `v1=` carries its signature; a receiver accepts the
delivery when any `v1` matches its secret. The guide is docs/webhooks.md."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence

from webhooks.models import WebhookEvent

SIGNATURE_HEADER = "Svcx-Signature"
EVENT_ID_HEADER = "Svcx-Event-Id"
USER_AGENT = "svcx-webhooks/1.0"


def event_body(event: WebhookEvent) -> bytes:
    """The body every endpoint is sent for `event`: `{"id", "type", "created", "data"}`."""
    document = {"id": event.id, "type": event.type, "created": int(event.created_at.timestamp()), "data": event.data}
    return json.dumps(document, separators=(",", ":"), sort_keys=False).encode()


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()


def signature_header(*, secrets: Sequence[str], timestamp: int, body: bytes) -> str:
    """`t=<timestamp>` and one `v1=` per secret, the current one first."""
    return ",".join([f"t={timestamp}", *(f"v1={signature(secret=s, timestamp=timestamp, body=body)}" for s in secrets)])


def delivery_headers(
    *, event: WebhookEvent, secrets: Sequence[str], timestamp: int, body: bytes, attempt: int
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_ID_HEADER: event.id,
        "Svcx-Delivery-Attempt": str(attempt),
        SIGNATURE_HEADER: signature_header(secrets=secrets, timestamp=timestamp, body=body),
    }
