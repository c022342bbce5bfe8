"""State changes of webhooks: endpoints (made, rotated, disabled, enabled, deleted by owners and
admins in the console, each audited with the person), events emitted by the apps above, and a
person's resend of a delivery. Attempts themselves are webhooks.delivery's."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Organization
from accounts.services import Actor, audit_record
from webhooks.delivery import deliveries_publish, retry_window
from webhooks.errors import WebhookError
from webhooks.guard import endpoint_url_check
from webhooks.models import EventType, WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.secrets import secret_hint, secret_new, secret_seal

MAX_ENDPOINTS = 16
MAX_DESCRIPTION = 200
# How long the secret a rotation replaces still signs deliveries (a second `v1=`).
ROTATION_OVERLAPS: dict[str, timedelta] = {"immediate": timedelta(0), "24h": timedelta(hours=24)}


@dataclass(frozen=True)
class MintedSecret:
    """An endpoint and its new signing secret: the one time the secret is in clear."""

    endpoint: WebhookEndpoint
    secret: str


def _person(actor: Actor) -> Any:
    return actor if actor is not None and getattr(actor, "pk", None) else None


def _event_types(events: Iterable[str]) -> list[str]:
    """The subscribed types in the catalogue's order. Raises WebhookError for none or an unknown one."""
    wanted = set(events)
    unknown = wanted - set(EventType.values)
    if unknown:
        raise WebhookError(f"unknown event types: {', '.join(sorted(unknown))}")
    if not wanted:
        raise WebhookError("choose at least one event")
    return [value for value in EventType.values if value in wanted]


def webhook_endpoint_create(
    *, organization: Organization, url: str, events: Iterable[str], description: str = "", actor: Actor = None
) -> MintedSecret:
    """An endpoint of `organization` sent `events`, with a new signing secret (returned once).

    Raises WebhookUrlRefused for a URL webhooks may not go to (webhooks.guard), WebhookError for
    no or unknown events, a description too long, or an organization at MAX_ENDPOINTS."""
    url = url.strip()
    endpoint_url_check(url)
    types = _event_types(events)
    description = description.strip()
    if len(description) > MAX_DESCRIPTION:
        raise WebhookError(f"the description is longer than {MAX_DESCRIPTION} characters")
    with transaction.atomic():
        # The organization's row serialises concurrent creations against the limit.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        if WebhookEndpoint.objects.filter(organization=organization).count() >= MAX_ENDPOINTS:
            raise WebhookError(f"an organization has at most {MAX_ENDPOINTS} webhook endpoints; delete one first")
        secret = secret_new()
        endpoint = WebhookEndpoint(
            organization=organization, url=url, description=description, events=types, created_by=_person(actor)
        )
        endpoint.secret_sealed = secret_seal(secret=secret, endpoint_id=endpoint.id)
        endpoint.secret_hint = secret_hint(secret)
        endpoint.save(force_insert=True)
        audit_record(
            actor=actor, action="webhook.create", organization=organization, target=endpoint.id, url=url, events=types
        )
    return MintedSecret(endpoint=endpoint, secret=secret)


def webhook_endpoint_rotate_secret(*, endpoint: WebhookEndpoint, overlap: str, actor: Actor = None) -> MintedSecret:
    """A new signing secret (returned once). With an overlap, the old secret keeps signing
    deliveries beside the new one until it ends, so a receiver can change over; `immediate`:
    only the new one signs from now. Raises WebhookError for an unknown overlap."""
    if overlap not in ROTATION_OVERLAPS:
        raise WebhookError(f"overlap must be one of {', '.join(ROTATION_OVERLAPS)}")
    secret = secret_new()
    keep_old = ROTATION_OVERLAPS[overlap] > timedelta(0)
    with transaction.atomic():
        current = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        current.previous_secret_sealed = current.secret_sealed if keep_old else None
        current.previous_secret_expires_at = timezone.now() + ROTATION_OVERLAPS[overlap] if keep_old else None
        current.secret_sealed = secret_seal(secret=secret, endpoint_id=current.id)
        current.secret_hint = secret_hint(secret)
        current.save(
            update_fields=["secret_sealed", "secret_hint", "previous_secret_sealed", "previous_secret_expires_at"]
        )
        audit_record(
            actor=actor,
            action="webhook.rotate_secret",
            organization=current.organization,
            target=current.id,
            overlap=overlap,
        )
    return MintedSecret(endpoint=current, secret=secret)


def webhook_endpoint_disable(*, endpoint: WebhookEndpoint, actor: Actor = None) -> WebhookEndpoint:
    """Stop sending to the endpoint: events emitted meanwhile are not sent to it; its pending
    deliveries wait (until enabled again, within their window). Raises WebhookError when it is
    disabled already."""
    person = _person(actor)
    who = person.get_username() if person is not None else "the operator"
    with transaction.atomic():
        disabled = WebhookEndpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
            enabled=False, disabled_at=timezone.now(), disabled_reason=f"disabled by {who}"
        )
        if not disabled:
            raise WebhookError("the endpoint is disabled already")
        audit_record(actor=actor, action="webhook.disable", organization=endpoint.organization, target=endpoint.id)
    endpoint.refresh_from_db()
    return endpoint


def webhook_endpoint_enable(*, endpoint: WebhookEndpoint, actor: Actor = None) -> WebhookEndpoint:
    """Send to the endpoint again, its run of failed events forgotten. Its pending deliveries
    still within their retry window are attempted at once; those whose window ended while it
    was disabled have failed (a person may resend them). Raises WebhookError when it is enabled."""
    now = timezone.now()
    with transaction.atomic():
        enabled = WebhookEndpoint.objects.filter(pk=endpoint.pk, enabled=False).update(
            enabled=True, disabled_at=None, disabled_reason="", failed_events=0, failing_since=None
        )
        if not enabled:
            raise WebhookError("the endpoint is enabled already")
        pending = WebhookDelivery.objects.filter(endpoint_id=endpoint.pk, status=WebhookDelivery.Status.PENDING)
        pending.filter(give_up_at__lte=now).update(
            status=WebhookDelivery.Status.FAILED,
            next_attempt_at=None,
            last_error="the retry window ended while the endpoint was disabled",
        )
        resumed = list(pending.filter(give_up_at__gt=now).values_list("pk", flat=True))
        WebhookDelivery.objects.filter(pk__in=resumed).update(next_attempt_at=now, queued_at=now)
        audit_record(actor=actor, action="webhook.enable", organization=endpoint.organization, target=endpoint.id)
        transaction.on_commit(lambda: deliveries_publish(resumed))
    endpoint.refresh_from_db()
    return endpoint


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint, actor: Actor = None) -> None:
    """Delete the endpoint with its delivery log (the events stay for the other endpoints)."""
    with transaction.atomic():
        audit_record(
            actor=actor,
            action="webhook.delete",
            organization=endpoint.organization,
            target=endpoint.id,
            url=endpoint.url,
        )
        WebhookEndpoint.objects.filter(pk=endpoint.pk).delete()


def webhook_event_emit(*, organization: Organization, type: str, data: dict[str, Any]) -> WebhookEvent:
    """Record an event of `organization` and deliver it to each of its enabled endpoints that
    subscribe to `type`: the deliveries are written with the event, in the caller's transaction,
    and their first attempts queued once it commits (nothing is sent for an event rolled back).
    Delivery is at least once, in no particular order between events.

    Raises WebhookError for a type outside EventType or `data` that is not a JSON object."""
    try:
        event_type = EventType(type)
    except ValueError as exc:
        raise WebhookError(f"unknown event type {type!r}; types are {', '.join(EventType.values)}") from exc
    if not isinstance(data, dict):
        raise WebhookError("an event's data is a JSON object")
    try:
        json.dumps(data)
    except (TypeError, ValueError) as exc:
        raise WebhookError(f"an event's data must be JSON: {exc}") from exc
    with transaction.atomic():
        event = WebhookEvent.objects.create(organization=organization, type=event_type, data=data)
        now = timezone.now()
        # An organization has a handful of endpoints: their subscriptions are read here, which
        # every database does alike (SQLite, the embedded default, has no JSON containment).
        endpoints = [
            endpoint
            for endpoint in WebhookEndpoint.objects.filter(organization=organization, enabled=True)
            if event_type.value in endpoint.events
        ]
        deliveries = WebhookDelivery.objects.bulk_create(
            [
                WebhookDelivery(
                    endpoint=endpoint,
                    event=event,
                    next_attempt_at=now,
                    give_up_at=event.created_at + retry_window(),
                    queued_at=now,
                )
                for endpoint in endpoints
            ]
        )
        ids = [delivery.pk for delivery in deliveries]
        if ids:
            transaction.on_commit(lambda: deliveries_publish(ids))
    return event


def webhook_delivery_resend(*, delivery: WebhookDelivery, actor: Actor = None) -> WebhookDelivery:
    """Attempt the delivery again now, whatever its state: a new attempt in its log, marked as a
    resend. A resend that fails is retried only within the event's window, and never disables
    the endpoint. Raises WebhookError when the endpoint is disabled."""
    endpoint = delivery.endpoint
    if not WebhookEndpoint.objects.filter(pk=endpoint.pk, enabled=True).exists():
        raise WebhookError("the endpoint is disabled: enable it to resend")
    now = timezone.now()
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=WebhookDelivery.Status.PENDING, next_attempt_at=now, resend_requested=True, queued_at=now
        )
        audit_record(
            actor=actor,
            action="webhook.resend",
            organization=endpoint.organization,
            target=delivery.event_id,
            endpoint=endpoint.id,
        )
        transaction.on_commit(lambda: deliveries_publish([delivery.pk]))
    delivery.refresh_from_db()
    return delivery
