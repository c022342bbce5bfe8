"""What every PDF-taking endpoint does with its request before its own work: check the
encoding, spool the body, settle idempotency, parse, and resolve the source to a local file."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.http import HttpRequest, HttpResponse

from accounts.authentication import Caller
from billing.gate import request_gate
from billing.limits import MeterName
from billing.meters import concurrency_acquire, concurrency_release, meter_consume, meter_require, record
from conversion.files import file_get
from conversion.idempotency import idempotency_begin
from conversion.intake import ENCODINGS, ParsedBody, SpooledBody, check_content_type, spool_body
from conversion.store import Source
from core.context import context_of
from core.errors import ErrorCode, ServiceError
from core.handlers import request_id_of


@contextmanager
def idempotent_body(
    raw: HttpRequest, caller: Caller, *, limit: int, encodings: tuple[str, ...] | None = ENCODINGS
) -> Iterator[SpooledBody | HttpResponse]:
    """The spooled body, or the stored response when this request replays an Idempotency-Key.

    A first attempt's claim is left on the request; ApiView.finalize_response stores the answer.
    The spooled body is deleted on exit. `encodings=None`: the body is not read as a document
    (a DELETE), only digested.
    """
    if encodings is not None:
        check_content_type(raw, encodings)
    # Refuse over-limit callers before reading the body; count only once it is not a replay.
    meter_require(caller, MeterName.REQUESTS)
    declared = raw.META.get("CONTENT_LENGTH", "")
    if declared.isdigit() and int(declared) > 0:
        meter_require(caller, MeterName.UPLOADS, int(declared))
    body = spool_body(raw, limit=limit, what="upload" if encodings is not None else "request body")
    try:
        claim = idempotency_begin(caller=caller, request=raw, body_sha256=body.sha256)
        if isinstance(claim, HttpResponse):
            yield claim
            return
        if claim is not None:
            context_of(raw).idempotency_claim = claim  # settled by ApiView.finalize_response
        request_gate(raw, caller)
        if body.size:
            record(raw, meter_consume(caller, MeterName.UPLOADS, body.size))
        yield body
    finally:
        body.close()


def debug_check(caller: Caller, parsed: ParsedBody) -> None:
    """403 `debug_not_permitted` for `debug: true` while the organization's policy is disabled."""
    if parsed.debug and caller.organization.debug_policy == "disabled":
        raise ServiceError(
            ErrorCode.DEBUG_NOT_PERMITTED,
            "debug: true is refused: the organization's debug policy is disabled. Send the request without debug.",
            param="debug",
        )


def resolved_source(caller: Caller, parsed: ParsedBody) -> Source:
    """The PDF the request names: its upload, or the caller's stored file (404 / 410), which
    stays in the store for the worker to fetch."""
    if parsed.upload is not None:
        return Source(sha256=parsed.upload.sha256, path=parsed.upload.path)
    record = file_get(caller=caller, file_id=parsed.file_id or "")
    return Source(sha256=record.sha256, key=record.storage_name)


@contextmanager
def in_flight(raw: HttpRequest, caller: Caller) -> Iterator[None]:
    """Hold one of the organization's concurrency slots while the request works."""
    state = concurrency_acquire(caller, request_id_of(raw))
    record(raw, state)
    try:
        yield
    finally:
        concurrency_release(caller, request_id_of(raw))
