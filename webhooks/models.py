"""Webhook endpoints of an organization, the events it is sent, and the delivery log: one
delivery per event and endpoint, with every attempt made to deliver it."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from accounts.models import Organization
from core.ids import new_event_id, new_webhook_endpoint_id


class EventType(models.TextChoices):
    """What an endpoint can subscribe to; `webhook_event_emit` refuses any other type."""

    JOB_SUCCEEDED = "job.succeeded"
    JOB_FAILED = "job.failed"
    JOB_CANCELED = "job.canceled"


class WebhookEndpoint(models.Model):
    """An address of the organization's that is sent the events it subscribes to, signed with
    its secret.

    The secret must be read to sign, so it cannot be kept as a hash like an API key's: it is kept
    sealed (AES-256-GCM under SVCX_WEBHOOKS_SECRET_KEY, bound to the endpoint's id,
    webhooks.secrets) and shown to a person once, when it is made. After a rotation the previous
    secret signs too until `previous_secret_expires_at`, so a receiver can change over."""

    id = models.CharField(primary_key=True, max_length=40, default=new_webhook_endpoint_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=2048)
    description = models.CharField(max_length=200, blank=True, default="")
    events = models.JSONField(default=list)
    secret_sealed = models.BinaryField(editable=False)
    secret_hint = models.CharField(max_length=20, editable=False)
    previous_secret_sealed = models.BinaryField(null=True, editable=False)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    enabled = models.BooleanField(default=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=200, blank=True, default="")
    # Events in a row whose first attempt failed, since the endpoint last answered 2xx.
    failed_events = models.IntegerField(default=0)
    # When the first of those events failed (None while the run is empty): an endpoint is disabled
    # for a run only once it has also lasted SVCX_WEBHOOKS_DISABLE_FAILING_FOR.
    failing_since = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "webhook endpoint"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["organization", "enabled"], name="webhook_endpoint_org")]
        constraints = [
            models.CheckConstraint(
                condition=Q(enabled=True, disabled_at__isnull=True) | Q(enabled=False, disabled_at__isnull=False),
                name="webhook_endpoint_disabled_at",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.url} ({self.id})"


class WebhookEvent(models.Model):
    """Something that happened to an organization, as its endpoints are sent it: the body is
    `{"id", "type", "created", "data"}`."""

    id = models.CharField(primary_key=True, max_length=40, default=new_event_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=40, choices=EventType.choices)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = "webhook event"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"


class WebhookDelivery(models.Model):
    """One event for one endpoint: pending until the endpoint answers 2xx (succeeded), or until
    `give_up_at` (failed). A pending delivery's `next_attempt_at` is when its next attempt is
    due; an attempt claims the row by moving it past the attempt's longest possible run, so a
    worker that dies mid-attempt leaves it due again (the sweeper queues it: at least once)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # Attempts made or in flight; the number of the latest.
    attempts = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    give_up_at = models.DateTimeField()
    # When a task to attempt it was last put in the queue (the sweeper does not queue it again
    # for a while); cleared when an attempt ends.
    queued_at = models.DateTimeField(null=True, blank=True)
    # Set by a resend from the console: the next attempt is a person's, not the schedule's.
    resend_requested = models.BooleanField(default=False)
    # The latest attempt's outcome, for the log's list.
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_response_code = models.IntegerField(null=True, blank=True)
    last_duration_ms = models.IntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due"),
            models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_log"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event"], name="webhook_delivery_unique"),
            models.CheckConstraint(condition=Q(attempts__gte=0), name="webhook_delivery_attempts"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} to {self.endpoint_id}: {self.status}"


class WebhookAttempt(models.Model):
    """One POST of a delivery, as the log shows it. Only a short prefix of the answer is kept."""

    class Outcome(models.TextChoices):
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.IntegerField()
    # A resend asked for in the console, not an attempt of the retry schedule.
    manual = models.BooleanField(default=False)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    response_code = models.IntegerField(null=True, blank=True)
    duration_ms = models.IntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True, default="")
    response_prefix = models.CharField(max_length=256, blank=True, default="")
    # When the attempt after this one was scheduled; null when there is none (delivered, given up).
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "webhook attempt"
        ordering = ["-number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_unique")]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}: {self.outcome}"
