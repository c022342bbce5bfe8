"""svcx_client.webhooks.verify: a delivery signed as docs/webhooks.md says is accepted and its
event returned; anything else raises WebhookSignatureError, saying why."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest
from svcx_client import SvcxError, WebhookSignatureError, webhooks

SECRET = "whsec_0123456789abcdefghijABCDEFGHIJ"
BODY = json.dumps(
    {"id": "evt_1", "type": "job.succeeded", "created": 1767225600, "data": {"id": "job_1"}}, separators=(",", ":")
).encode()


def header_for(body: bytes, secret: str = SECRET, at: int | None = None, *extra: str) -> str:
    """The header as the documented scheme makes it, written out here (not with the SDK's own helper)."""
    t = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return ",".join([f"t={t}", f"v1={digest}", *extra])


def test_a_delivery_signed_as_documented_is_verified_and_its_event_returned() -> None:
    event = webhooks.verify(BODY, header_for(BODY), SECRET)

    assert event == {"id": "evt_1", "type": "job.succeeded", "created": 1767225600, "data": {"id": "job_1"}}


def test_a_body_given_as_text_is_read_as_utf8() -> None:
    assert webhooks.verify(BODY.decode(), header_for(BODY), SECRET)["id"] == "evt_1"


def test_a_changed_body_is_refused() -> None:
    tampered = BODY.replace(b"job_1", b"job_2")

    with pytest.raises(WebhookSignatureError, match="no signature in the header matches"):
        webhooks.verify(tampered, header_for(BODY), SECRET)


def test_another_secret_is_refused() -> None:
    with pytest.raises(WebhookSignatureError, match="no signature in the header matches"):
        webhooks.verify(BODY, header_for(BODY, secret="whsec_other"), SECRET)


def test_a_delivery_signed_longer_ago_than_the_tolerance_is_refused_as_a_replay() -> None:
    old = header_for(BODY, at=int(time.time()) - 301)

    with pytest.raises(WebhookSignatureError, match=r"signed 30[12] s ago, beyond the tolerance of 300 s"):
        webhooks.verify(BODY, old, SECRET)
    assert webhooks.verify(BODY, old, SECRET, tolerance=600)["id"] == "evt_1"
    assert webhooks.verify(BODY, old, SECRET, tolerance=0)["id"] == "evt_1"  # 0: no time check


def test_a_delivery_signed_in_the_future_beyond_the_tolerance_is_refused() -> None:
    with pytest.raises(WebhookSignatureError, match=r"signed 3[56]\d\d s ahead of this clock, beyond the tolerance"):
        webhooks.verify(BODY, header_for(BODY, at=int(time.time()) + 3600), SECRET)


def test_any_matching_v1_is_enough_during_a_rotation_and_other_schemes_are_ignored() -> None:
    t = int(time.time())
    old = hmac.new(b"whsec_previous", f"{t}.".encode() + BODY, hashlib.sha256).hexdigest()
    new = hmac.new(SECRET.encode(), f"{t}.".encode() + BODY, hashlib.sha256).hexdigest()

    assert webhooks.verify(BODY, f"t={t},v1={old},v1={new},v0=whatever", SECRET)["id"] == "evt_1"
    assert webhooks.verify(BODY, f"t={t}, v1={old}, v1={new}", "whsec_previous")["id"] == "evt_1"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("", "no Svcx-Signature header"),
        (None, "no Svcx-Signature header"),
        ("v1=abc", "has no timestamp"),
        ("t=12x,v1=abc", "timestamp is not a number"),
        ("t=1767225600", "has no v1 signature"),
        ("garbage", "has no timestamp"),
    ],
)
def test_a_missing_or_malformed_header_is_refused_saying_why(header: str | None, reason: str) -> None:
    with pytest.raises(WebhookSignatureError, match=reason):
        webhooks.verify(BODY, header, SECRET)


def test_a_signed_body_that_is_not_a_json_object_is_refused() -> None:
    for body in (b"not json", b"[1, 2]"):
        with pytest.raises(WebhookSignatureError, match="JSON"):
            webhooks.verify(body, header_for(body), SECRET)


def test_the_helper_signs_as_the_service_does_for_testing_a_receiver() -> None:
    header = webhooks.signature_header(BODY, SECRET, timestamp=1767225600)

    assert header == header_for(BODY, at=1767225600)
    assert webhooks.verify(BODY, webhooks.signature_header(BODY, SECRET), SECRET)["type"] == "job.succeeded"


def test_the_error_is_one_of_the_sdks() -> None:
    assert issubclass(WebhookSignatureError, SvcxError)
    assert webhooks.SIGNATURE_HEADER == "Svcx-Signature"
