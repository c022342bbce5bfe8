"""Idempotency of every POST and DELETE (decisions.md 4).

Keys are scoped to the organization and environment. The first response that is not
retryable (every 2xx, and every 4xx except 409 `idempotency_in_progress` and 429) is stored and
replayed for the same request with `Idempotent-Replayed: true`; a different request under the
same key is 409 `idempotency_conflict`; the same key while the first attempt runs is 409
`idempotency_in_progress` with `Retry-After: 1`. Stored responses are kept 24 hours, keys 7 days.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import Caller
from conversion.models import IdempotencyRecord
from core.context import context_of
from core.errors import ErrorCode, ServiceError
from core.handlers import request_id_of

HEADER = "HTTP_IDEMPOTENCY_KEY"
RESPONSE_LIFETIME = timedelta(hours=24)
KEY_LIFETIME = timedelta(days=7)
# Headers of a stored response that are replayed (the rest belong to the replaying request).
_STORED_HEADERS = ("Content-Type", "X-Request-Id", "Retry-After", "Allow", "WWW-Authenticate")
_STORED_PREFIXES = ("x-svcx-",)


def idempotency_key_of(request: HttpRequest) -> str | None:
    """The request's Idempotency-Key, checked: 1 to 255 printable ASCII characters."""
    key = request.META.get(HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= 255 or not all(" " <= ch <= "~" for ch in key):
        raise ServiceError(
            ErrorCode.INVALID_PARAMETER_TYPE,
            "Idempotency-Key must be 1 to 255 printable ASCII characters.",
            param="Idempotency-Key",
        )
    return key


def fingerprint(request: HttpRequest, body_sha256: str) -> str:
    """What makes two requests "the same": method, path, query, body digest and Accept."""
    parts = [
        request.method or "",
        request.path,
        request.META.get("QUERY_STRING", ""),
        body_sha256,
        request.META.get("HTTP_ACCEPT", ""),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@dataclass
class Claim:
    """A claimed key: this request is the first attempt and must `idempotency_finish`."""

    record_id: int


def _replay(record: IdempotencyRecord) -> HttpResponse:
    response = HttpResponse(bytes(record.body or b""), status=record.status or 200)
    for name, value in record.headers.items():
        response[name] = value
    response["Idempotent-Replayed"] = "true"
    return response


_CLAIM_ATTEMPTS = 3


def _in_progress(original_request_id: str) -> ServiceError:
    return ServiceError(
        ErrorCode.IDEMPOTENCY_IN_PROGRESS,
        "The first request with this Idempotency-Key is still running; retry after Retry-After.",
        retry_after_ms=1000,
        headers={"Retry-After": "1"},
        details={"original_request_id": original_request_id},
    )


def idempotency_begin(*, caller: Caller, request: HttpRequest, body_sha256: str) -> Claim | HttpResponse | None:
    """Claim the request's key, or answer for it.

    Returns None without a key, a Claim for a first attempt, or the stored response to replay.
    Raises 409 `idempotency_conflict`, 409 `idempotency_in_progress`, 410 `result_expired`.
    """
    key = idempotency_key_of(request)
    if key is None:
        return None
    fp = fingerprint(request, body_sha256)
    scope = {"organization_id": caller.org_id, "environment": caller.environment, "key": key}
    # The record can vanish between a failed claim and the read that follows (the first attempt
    # ended retryably and freed the key): then claim again, a bounded number of times.
    for _ in range(_CLAIM_ATTEMPTS):
        outcome = _claim_or_answer(scope=scope, fingerprint_=fp, request=request)
        if outcome is not None:
            return outcome
    raise _in_progress("")


def _claim_or_answer(*, scope: dict[str, str], fingerprint_: str, request: HttpRequest) -> Claim | HttpResponse | None:
    """One attempt: a Claim, a replay, an error raised, or None when the key changed hands."""
    now = timezone.now()
    lease = now + timedelta(seconds=float(settings.SVCX_CONVERSION_TIME_LIMIT) + 60)
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                **scope, fingerprint=fingerprint_, request_id=request_id_of(request), lease_until=lease
            )
            return Claim(record_id=record.pk)
    except IntegrityError:
        pass
    with transaction.atomic():
        found = IdempotencyRecord.objects.select_for_update().filter(**scope).first()
        if found is None:
            return None
        record = found
        if record.created_at < now - KEY_LIFETIME:
            record.delete()
            return None
        if record.fingerprint != fingerprint_:
            raise ServiceError(
                ErrorCode.IDEMPOTENCY_CONFLICT,
                "This Idempotency-Key was used for a different request (method, path, query, body or Accept differ). "
                "Use a new key for a new request.",
                param="Idempotency-Key",
                details={"original_request_id": record.request_id},
            )
        if record.completed:
            if record.body is None or (record.completed_at and record.completed_at < now - RESPONSE_LIFETIME):
                raise ServiceError(
                    ErrorCode.RESULT_EXPIRED,
                    "The response stored for this Idempotency-Key is older than 24 hours and no longer kept. "
                    "Send the request again with a new key.",
                    details={"original_request_id": record.request_id},
                )
            return _replay(record)
        if record.lease_until > now:
            raise _in_progress(record.request_id)
        # The first attempt died without an answer: this request takes the key over.
        record.request_id = request_id_of(request)
        record.lease_until = lease
        record.save(update_fields=["request_id", "lease_until"])
        return Claim(record_id=record.pk)


def _storable(response: HttpResponse) -> bool:
    code = getattr(response, "svcx_error_code", None)
    return not (response.status_code == 429 or response.status_code >= 500 or code == ErrorCode.IDEMPOTENCY_IN_PROGRESS)


def idempotency_release(claim: Claim) -> None:
    """Free the key of an attempt that produced no storable answer: it may be retried at once."""
    IdempotencyRecord.objects.filter(pk=claim.record_id, completed=False).delete()


def idempotency_finish(claim: Claim, response: HttpResponse) -> None:
    """Store the response for replay, or free the key when the response is retryable."""
    if not _storable(response):
        idempotency_release(claim)
        return
    headers = {
        name: value
        for name, value in response.items()
        if name in _STORED_HEADERS or name.lower().startswith(_STORED_PREFIXES)
    }
    IdempotencyRecord.objects.filter(pk=claim.record_id).update(
        completed=True,
        status=response.status_code,
        headers=headers,
        body=bytes(response.content),
        completed_at=timezone.now(),
    )


def idempotency_purge() -> int:
    """Drop stored bodies older than 24 hours and keys older than 7 days."""
    now = timezone.now()
    IdempotencyRecord.objects.filter(completed=True, completed_at__lt=now - RESPONSE_LIFETIME).exclude(
        body=None
    ).update(body=None)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=now - KEY_LIFETIME).delete()
    return deleted


class IdempotencyStep:
    """The API base view's idempotency step (settings.SVCX_API_STEPS): a first attempt's claim,
    left on the request context by `conversion.requests.IdempotentApi`, is settled with the
    rendered answer; an answer that fails to render (a 500) releases it for a retry."""

    def admit(self, request: Request) -> None:
        pass  # requests with a body claim their key in IdempotentApi.idempotent, once it is read

    def finish(self, request: Request, response: HttpResponse) -> None:
        claim = context_of(request).idempotency_claim
        if claim is None:
            return
        try:
            if isinstance(response, Response):
                response.render()
        except Exception:
            idempotency_release(claim)  # the answer is a 500: retryable, never stored
            raise
        idempotency_finish(claim, response)
