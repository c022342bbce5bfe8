"""Delivering events: one attempt at a time, claimed in PostgreSQL, retried on a schedule kept
in PostgreSQL, so a delivery outlives any worker.

A delivery is attempted by the task `webhooks.deliver` (queued when the event is emitted or
resent), and again whenever it is due by the sweeper (`webhooks.sweep`, run by the beat every
SVCX_WEBHOOKS_SWEEP_INTERVAL), which queues every pending delivery whose `next_attempt_at` has
come. An attempt claims its delivery with a conditional UPDATE that moves `next_attempt_at` past
the attempt's longest possible run (the lease): a worker that dies mid-attempt leaves the
delivery due again when the lease ends, and two tasks for one delivery make one attempt.

A 2xx answer delivers it. Any other answer, or none, schedules the next attempt after a wait
that is a share of the event's age (SVCX_WEBHOOKS_RETRY_AGE_PERCENT, 25%: of which a random half
to all, the jitter), at least SVCX_WEBHOOKS_RETRY_FIRST and at most SVCX_WEBHOOKS_RETRY_MAX,
until SVCX_WEBHOOKS_RETRY_WINDOW after the event; then the delivery has failed. Each wait adds to
the age, so the waits grow exponentially (by 12.5% to 25% an attempt) as a doubling backoff's do,
and a receiver back after an outage of D gets every event within a quarter of D (plus a sweep):
after a 10-minute outage, within 2.5 minutes, where doubling waits could leave it 16.
An endpoint is disabled, and its organization's owners mailed, when a delivery fails for the
whole window, or when SVCX_WEBHOOKS_DISABLE_AFTER events in a row failed their first attempt with
no 2xx between over at least SVCX_WEBHOOKS_DISABLE_FAILING_FOR (an outage of hours at thousands of
events an hour, or a receiver gone for good; never a busy endpoint's outage of minutes).
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Iterable
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from webhooks.errors import WebhookUrlRefused
from webhooks.guard import target_resolve
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.notifications import endpoint_disabled_recipients, notify_endpoint_disabled
from webhooks.secrets import SecretUnreadable, secret_open
from webhooks.signing import delivery_headers, event_body
from webhooks.transport import Answer, post

logger = logging.getLogger("svcx.webhooks")

# The Celery task that makes one attempt (webhooks/tasks.py), queued by name.
DELIVER_TASK = "webhooks.deliver"
# Pending deliveries the sweeper queues at most per run (the rest on its next run).
SWEEP_BATCH = 500
# Events deleted per statement when purging old ones.
PURGE_BATCH = 1000
_jitter = random.SystemRandom()


def webhooks_queue() -> str:
    """The queue of delivery attempts: of their own, so a slow receiver never holds a worker
    that conversions wait for."""
    return str(settings.SVCX_QUEUE_PREFIX) + "webhooks"


def attempt_time_limit() -> int:
    """Seconds an attempt may run: its connect and read timeouts and a margin to record it."""
    return math.ceil(float(settings.SVCX_WEBHOOKS_CONNECT_TIMEOUT) + float(settings.SVCX_WEBHOOKS_READ_TIMEOUT)) + 10


def _lease() -> timedelta:
    """How long a claimed delivery is left to its attempt: beyond the task's hard time limit."""
    return timedelta(seconds=attempt_time_limit() + 5)


def retry_window() -> timedelta:
    return timedelta(seconds=float(settings.SVCX_WEBHOOKS_RETRY_WINDOW))


def retry_delay(age: float) -> float:
    """Seconds to wait after a failed attempt of an event `age` seconds old: SVCX_WEBHOOKS_RETRY_AGE_PERCENT
    of its age, at least SVCX_WEBHOOKS_RETRY_FIRST and at most SVCX_WEBHOOKS_RETRY_MAX, of which a
    random half to all (so that the deliveries of one outage do not all come back at once)."""
    first, most = float(settings.SVCX_WEBHOOKS_RETRY_FIRST), float(settings.SVCX_WEBHOOKS_RETRY_MAX)
    full = min(max(first, max(age, 0.0) * int(settings.SVCX_WEBHOOKS_RETRY_AGE_PERCENT) / 100), most)
    return full / 2 + _jitter.uniform(0, full / 2)


def duration_text(seconds: float) -> str:
    """A duration in words, in its largest whole unit from two of them ("24 hours", "3 days",
    "90 seconds")."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    exact = round(seconds, 3)
    return f"{exact:g} second{'s' if exact != 1 else ''}"


def deliveries_publish(delivery_ids: Iterable[int]) -> None:
    """Queue an attempt of each delivery. A broker that refuses is logged, not raised: the
    deliveries stay due in PostgreSQL, and the sweeper queues them again."""
    for delivery_id in delivery_ids:
        try:
            current_app.send_task(DELIVER_TASK, args=(delivery_id,), queue=webhooks_queue())
        except Exception as exc:
            logger.warning("webhook delivery not queued; the sweeper will", exc_info=exc)
            return


def _signing_secrets(endpoint: WebhookEndpoint) -> list[str]:
    """The endpoint's secret, and the one it replaced while that still counts."""
    secrets = [secret_open(sealed=endpoint.secret_sealed, endpoint_id=endpoint.id)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret_sealed is not None and expires is not None and expires > timezone.now():
        secrets.append(secret_open(sealed=endpoint.previous_secret_sealed, endpoint_id=endpoint.id))
    return secrets


def _send(delivery: WebhookDelivery, number: int) -> Answer:
    """One POST of the delivery's event, to the endpoint's URL checked (and resolved) now."""
    endpoint, event = delivery.endpoint, delivery.event
    try:
        target = target_resolve(endpoint.url)
    except WebhookUrlRefused as exc:
        return Answer(None, "", str(exc), 0)
    try:
        secrets = _signing_secrets(endpoint)
    except SecretUnreadable:
        logger.error("webhook signing secret unreadable", extra={"endpoint": endpoint.id})
        return Answer(None, "", "The signing secret cannot be read: rotate it.", 0)
    body = event_body(event)
    headers = delivery_headers(event=event, secrets=secrets, timestamp=int(time.time()), body=body, attempt=number)
    return post(
        target,
        body=body,
        headers=headers,
        connect_timeout=float(settings.SVCX_WEBHOOKS_CONNECT_TIMEOUT),
        read_timeout=float(settings.SVCX_WEBHOOKS_READ_TIMEOUT),
    )


def _claim(delivery_id: int) -> tuple[WebhookDelivery, bool] | None:
    """Claim a due delivery of an enabled endpoint for one attempt: (the delivery with its
    endpoint and event, whether the attempt is a resend), or None when it is not due, not
    pending, gone, or claimed by another attempt."""
    now = timezone.now()
    due = WebhookDelivery.objects.filter(
        pk=delivery_id,
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at__lte=now,
        endpoint__enabled=True,
    )
    manual = due.values_list("resend_requested", flat=True).first()
    if manual is None:
        return None
    claimed = due.filter(resend_requested=manual).update(
        attempts=F("attempts") + 1, next_attempt_at=now + _lease(), queued_at=None, resend_requested=False
    )
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.select_related("endpoint", "event").filter(pk=delivery_id).first()
    return (delivery, manual) if delivery is not None else None


def webhook_delivery_attempt(*, delivery_id: int) -> WebhookAttempt | None:
    """Make one attempt of a due delivery and log it; schedule the next one, or end the delivery
    (delivered, or failed for good), and disable an endpoint that keeps failing. Returns the
    attempt, or None when there was nothing to attempt (safe to call twice)."""
    claim = _claim(delivery_id)
    if claim is None:
        return None
    delivery, manual = claim
    number = delivery.attempts
    started_at = timezone.now()
    answer = _send(delivery, number)
    try:
        return _record(delivery=delivery, number=number, manual=manual, started_at=started_at, answer=answer)
    except IntegrityError:
        # The endpoint was deleted while the attempt ran: nothing is left to log it in.
        logger.info("webhook attempt of a deleted endpoint not logged", extra={"delivery": delivery_id})
        return None


def _record(
    *, delivery: WebhookDelivery, number: int, manual: bool, started_at: datetime, answer: Answer
) -> WebhookAttempt:
    finished_at = timezone.now()
    next_attempt_at = None
    if answer.ok:
        status = WebhookDelivery.Status.SUCCEEDED
    elif finished_at < delivery.give_up_at:
        status = WebhookDelivery.Status.PENDING
        # The last attempt is made at the end of the window, not skipped because a delay overshoots it.
        age = (finished_at - delivery.event.created_at).total_seconds()
        next_attempt_at = min(finished_at + timedelta(seconds=retry_delay(age)), delivery.give_up_at)
    else:
        status = WebhookDelivery.Status.FAILED
    outcome = WebhookAttempt.Outcome.SUCCEEDED if answer.ok else WebhookAttempt.Outcome.FAILED
    with transaction.atomic():
        current = WebhookDelivery.objects.filter(pk=delivery.pk, attempts=number).update(
            status=status,
            next_attempt_at=next_attempt_at,
            last_attempt_at=started_at,
            last_response_code=answer.status,
            last_duration_ms=answer.duration_ms,
            last_error=answer.error[:300],
            delivered_at=finished_at if answer.ok else F("delivered_at"),
        )
        attempt = WebhookAttempt.objects.create(
            delivery_id=delivery.pk,
            number=number,
            manual=manual,
            outcome=outcome,
            response_code=answer.status,
            duration_ms=answer.duration_ms,
            error=answer.error[:300],
            response_prefix=answer.body_prefix,
            next_attempt_at=next_attempt_at,
            started_at=started_at,
        )
        if current:  # not overtaken by a later attempt of the same delivery
            _endpoint_account(
                delivery=delivery,
                number=number,
                manual=manual,
                ok=answer.ok,
                gave_up=status == WebhookDelivery.Status.FAILED,
            )
    return attempt


def _endpoint_account(*, delivery: WebhookDelivery, number: int, manual: bool, ok: bool, gave_up: bool) -> None:
    """Count the attempt against its endpoint: a 2xx clears its run of failed events; a failed
    first attempt adds to it; too long a run (in events and in time), or a delivery that failed
    for its whole window, disables the endpoint. A person's resend never disables one."""
    endpoints = WebhookEndpoint.objects.filter(pk=delivery.endpoint_id)
    if ok:
        endpoints.exclude(failed_events=0, failing_since=None).update(failed_events=0, failing_since=None)
        return
    if manual:
        return
    if gave_up:
        window = duration_text(retry_window().total_seconds())
        _endpoint_disable_for_failures(
            endpoint=delivery.endpoint, reason=f"an event could not be delivered for {window}"
        )
        return
    if number == 1:
        now = timezone.now()
        endpoints.update(failed_events=F("failed_events") + 1, failing_since=Coalesce(F("failing_since"), now))
        limit = int(settings.SVCX_WEBHOOKS_DISABLE_AFTER)
        failing_for = float(settings.SVCX_WEBHOOKS_DISABLE_FAILING_FOR)
        if endpoints.filter(failed_events__gte=limit, failing_since__lte=now - timedelta(seconds=failing_for)).exists():
            _endpoint_disable_for_failures(
                endpoint=delivery.endpoint,
                reason=(
                    f"{limit} events in a row failed over {duration_text(failing_for)}"
                    " with no successful delivery between"
                ),
            )


def _endpoint_disable_for_failures(*, endpoint: WebhookEndpoint, reason: str) -> bool:
    """Disable an endpoint that keeps failing and mail its organization's owners (once: an
    endpoint already disabled stays as it is). Returns whether this call disabled it."""
    disabled = WebhookEndpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
        enabled=False, disabled_at=timezone.now(), disabled_reason=reason
    )
    if disabled:
        logger.warning("webhook endpoint disabled", extra={"endpoint": endpoint.id, "reason": reason})
        recipients = endpoint_disabled_recipients(endpoint)
        transaction.on_commit(lambda: notify_endpoint_disabled(endpoint=endpoint, reason=reason, recipients=recipients))
    return bool(disabled)


def webhook_deliveries_sweep() -> int:
    """Queue an attempt of every pending delivery that is due, of an enabled endpoint, and not
    queued lately (a task queued and lost, a worker that died mid-attempt, a retry whose time
    came). Returns how many were queued."""
    now = timezone.now()
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now, endpoint__enabled=True)
            .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=now - _lease()))
            .order_by("next_attempt_at")
            .values_list("pk", flat=True)[:SWEEP_BATCH]
        )
        if due:
            WebhookDelivery.objects.filter(pk__in=due).update(queued_at=now)
            transaction.on_commit(lambda: deliveries_publish(due))
    return len(due)


def webhook_events_purge() -> int:
    """Delete events older than SVCX_WEBHOOKS_RETENTION with their deliveries and attempts.
    Returns how many events were deleted."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.SVCX_WEBHOOKS_RETENTION))
    deleted = 0
    while True:
        batch = list(WebhookEvent.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[:PURGE_BATCH])
        if not batch:
            return deleted
        WebhookAttempt.objects.filter(delivery__event_id__in=batch).delete()
        WebhookDelivery.objects.filter(event_id__in=batch).delete()
        WebhookEvent.objects.filter(pk__in=batch).delete()
        deleted += len(batch)
