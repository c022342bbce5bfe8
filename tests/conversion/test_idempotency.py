"""Idempotency-Key races at the service level, on the real database.

The interleaving of two requests is forced by wrapping the calls where it happens: no timing
makes it happen reliably otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError
from django.test import RequestFactory

from accounts.authentication import Caller
from conversion.idempotency import Claim, idempotency_begin
from conversion.models import IdempotencyRecord
from core.context import context_of
from core.errors import ServiceError
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db]


def _request(request_id: str) -> Any:
    request = RequestFactory().post("/v1/convert", data=b"x", content_type="application/pdf", HTTP_IDEMPOTENCY_KEY="k1")
    context_of(request).request_id = request_id  # set by the middleware in service
    return request


@pytest.fixture
def caller() -> Caller:
    minted = make_key(make_org())
    return Caller(api_key=minted.api_key, organization=minted.api_key.organization)


def test_a_key_freed_between_a_failed_claim_and_the_read_is_claimed_again(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = idempotency_begin(caller=caller, request=_request("req_first"), body_sha256="d")
    assert isinstance(first, Claim)
    real_lock = IdempotencyRecord.objects.select_for_update

    def lock_after_the_key_was_freed(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(IdempotencyRecord.objects, "select_for_update", real_lock)
        # Between this request's failed insert and its read, the first attempt was answered
        # with a retryable error, which frees the key.
        IdempotencyRecord.objects.filter(pk=first.record_id).delete()
        return real_lock(*args, **kwargs)

    monkeypatch.setattr(IdempotencyRecord.objects, "select_for_update", lock_after_the_key_was_freed)

    second = idempotency_begin(caller=caller, request=_request("req_second"), body_sha256="d")

    assert isinstance(second, Claim)
    assert IdempotencyRecord.objects.get(pk=second.record_id).request_id == "req_second"


def test_a_key_that_keeps_changing_hands_is_answered_in_progress(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = []

    def insert_that_always_collides(**kwargs: Any) -> Any:
        attempts.append(1)
        raise IntegrityError("duplicate key value violates unique constraint")

    monkeypatch.setattr(IdempotencyRecord.objects, "create", insert_that_always_collides)

    with pytest.raises(ServiceError) as caught:
        idempotency_begin(caller=caller, request=_request("req_x"), body_sha256="d")

    assert caught.value.code == "idempotency_in_progress"
    assert caught.value.headers["Retry-After"] == "1"
    assert len(attempts) == 3


@pytest.mark.urls("tests.svcx.failing_urls")
def test_a_key_whose_answer_failed_to_render_is_free_for_a_retry_at_once(client: Any) -> None:
    # A 500 is retryable: its key must not stay "in progress" until the claim's lease runs out.
    from tests.factories import bearer
    from tests.svcx.test_envelope import assert_envelope

    minted = make_key(make_org())
    headers = {**bearer(minted.secret), "HTTP_IDEMPOTENCY_KEY": "render-1"}

    first = client.post("/v1/test/unrenderable", data=b"{}", content_type="application/json", **headers)
    again = client.post("/v1/test/unrenderable", data=b"{}", content_type="application/json", **headers)

    assert_envelope(first, 500, "internal_error")
    assert_envelope(again, 500, "internal_error")  # tried again, not 409 idempotency_in_progress
    assert not IdempotencyRecord.objects.exists()
