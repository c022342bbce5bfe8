"""Read-only views of webhook endpoints, events and the delivery log for staff. Staff change
nothing here: endpoints are the organization's own, managed in the console; a signing secret
is never shown (only its hint)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.admin import ReadOnlyAdmin, ReadOnlyInline
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent

ENDPOINT_FIELDS = (
    "id",
    "organization",
    "url",
    "description",
    "events",
    "secret_hint",
    "previous_secret_expires_at",
    "enabled",
    "disabled_at",
    "disabled_reason",
    "failed_events",
    "failing_since",
    "created_by",
    "created_at",
    "delivery_log",
)


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ReadOnlyAdmin):
    list_display = ["id", "created_at", "organization", "url", "enabled", "failed_events", "disabled_reason"]
    list_filter = ["enabled", "created_at"]
    search_fields = ["id", "url", "organization__id", "organization__name"]
    date_hierarchy = "created_at"
    # The sealed secrets are left out: staff see the hint only.
    fields = ENDPOINT_FIELDS
    readonly_fields = ENDPOINT_FIELDS

    @admin.display(description="delivery log")
    def delivery_log(self, obj: WebhookEndpoint) -> SafeString:
        url = reverse("admin:webhooks_webhookdelivery_changelist")
        return format_html('<a href="{}?endpoint__id__exact={}">deliveries</a>', url, obj.id)


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ["id", "created_at", "organization", "type"]
    list_filter = ["type", "created_at"]
    search_fields = ["id", "organization__id"]
    date_hierarchy = "created_at"


ATTEMPT_FIELDS = (
    "number",
    "manual",
    "outcome",
    "response_code",
    "duration_ms",
    "error",
    "response_prefix",
    "started_at",
    "next_attempt_at",
)


class WebhookAttemptInline(ReadOnlyInline):
    model = WebhookAttempt
    fields = ATTEMPT_FIELDS
    ordering = ["-number"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "created_at",
        "status",
        "event",
        "endpoint",
        "attempts",
        "last_response_code",
        "next_attempt_at",
        "give_up_at",
    ]
    list_filter = ["status", "created_at"]
    search_fields = ["event__id", "endpoint__id", "endpoint__url", "endpoint__organization__id"]
    date_hierarchy = "created_at"
    list_select_related = ["event", "endpoint"]
    inlines = [WebhookAttemptInline]
