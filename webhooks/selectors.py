"""Reads of webhooks, each scoped to the organization or endpoint the caller passes in."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from accounts.models import Organization
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def webhook_endpoint_list(*, organization: Organization) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.select_related("created_by").filter(organization=organization)


def webhook_endpoint_get(*, organization: Organization, endpoint_id: str) -> WebhookEndpoint | None:
    return webhook_endpoint_list(organization=organization).filter(pk=endpoint_id).first()


def webhook_delivery_list(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    """The endpoint's delivery log, newest event first."""
    return WebhookDelivery.objects.select_related("event").filter(endpoint=endpoint).order_by("-created_at", "-id")


def webhook_delivery_list_of_object(
    *, organization: Organization, object_id: str, since: datetime
) -> QuerySet[WebhookDelivery]:
    """The deliveries of the organization's events about one object (an event whose `data` is
    that object, as its API writes it, with its `id`) made from `since` on, newest first."""
    return (
        WebhookDelivery.objects.select_related("event", "endpoint")
        .filter(event__organization=organization, event__created_at__gte=since, event__data__id=object_id)
        .order_by("-created_at", "-id")
    )


def webhook_delivery_get(*, endpoint: WebhookEndpoint, delivery_id: int) -> WebhookDelivery | None:
    return WebhookDelivery.objects.select_related("event", "endpoint").filter(endpoint=endpoint, pk=delivery_id).first()


def webhook_attempt_list(*, delivery: WebhookDelivery) -> QuerySet[WebhookAttempt]:
    """The delivery's attempts, newest first."""
    return WebhookAttempt.objects.filter(delivery=delivery).order_by("-number")
