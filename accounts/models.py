"""Organizations, their members, their API keys, and the staff audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from accounts.keyformat import Environment
from core.ids import new_key_id, new_org_id

ENVIRONMENT_CHOICES = [(e.value, e.value) for e in Environment]


class Organization(models.Model):
    """An account. Suspension and delinquency are independent: lifting a suspension leaves an
    open dispute in force."""

    class DebugPolicy(models.TextChoices):
        ENABLED = "enabled"
        DISABLED = "disabled"

    id = models.CharField(primary_key=True, max_length=40, default=new_org_id, editable=False)
    name = models.CharField(max_length=200)
    suspended_at = models.DateTimeField(null=True, blank=True)
    # Credits owed under an open dispute or chargeback; null when none is open.
    delinquent_debt = models.PositiveBigIntegerField(null=True, blank=True)
    debug_policy = models.CharField(max_length=10, choices=DebugPolicy.choices, default=DebugPolicy.ENABLED)
    # Per-organization overrides of the rate-limit and quota defaults: {"requests": 1200, ...}.
    limits = models.JSONField(default=dict, blank=True)
    # The engine (GET /v1/engines) that converts the organization's requests that choose none,
    # set by the operator command; empty: the service's default. A request's `engine` overrides it.
    default_engine = models.CharField(max_length=40, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    @property
    def status(self) -> str:
        if self.suspended_at is not None:
            return "suspended"
        if self.delinquent_debt is not None:
            return "delinquent"
        return "active"


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "user"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.organization_id}"


class ApiKey(models.Model):
    """An API key. Only an HMAC of the secret is stored (`key_hash`); the secret itself exists
    only in the response that created it."""

    id = models.CharField(primary_key=True, max_length=40, default=new_key_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    name = models.CharField(max_length=200, blank=True, default="")
    project = models.CharField(max_length=200, blank=True, default="")
    scopes = models.JSONField(default=list)
    ip_allowlist = models.JSONField(default=list, blank=True)
    hint = models.CharField(max_length=40)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(max_length=200, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set on the old key when it is rotated or leaked: the key that replaces it.
    replaced_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["organization", "revoked_at", "expires_at"], name="apikey_org_active")]
        constraints = [
            models.CheckConstraint(
                condition=Q(environment__in=[e.value for e in Environment]), name="apikey_environment_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name or 'key'} {self.hint} ({self.id})"


class KeyReveal(models.Model):
    """A single-use link that shows a replacement key once (after a confirmed leak).

    The secret is kept encrypted with a key derived from the link's token, which is never stored
    (only its hash is): the database alone cannot recover it.
    """

    api_key = models.OneToOneField(ApiKey, on_delete=models.CASCADE, related_name="reveal")
    token_hash = models.CharField(max_length=64, unique=True)
    ciphertext = models.BinaryField(null=True)
    expires_at = models.DateTimeField()
    revealed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"reveal of {self.api_key_id}"


class AuditEvent(models.Model):
    """Who did what to which account, from the admin or the operator command."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150)
    action = models.CharField(max_length=60)
    organization = models.ForeignKey(Organization, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    target = models.CharField(max_length=60, blank=True, default="")
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_label} {self.action} {self.target}"
