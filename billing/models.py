"""The credit ledger (append-only), balances, holds, the test allowance, and usage."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from accounts.models import ENVIRONMENT_CHOICES, Organization
from core.ids import new_ledger_id, new_usage_id


class CreditBalance(models.Model):
    """One row per organization and environment, locked by every credit movement.

    `balance` is what the organization owns; `held` is reserved by running requests;
    available = balance - held, which the database never lets go below zero.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="balances")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    balance = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "environment"], name="balance_unique"),
            models.CheckConstraint(condition=Q(held__gte=0), name="balance_held_not_negative"),
            models.CheckConstraint(condition=Q(balance__gte=F("held")), name="balance_available_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.environment}: {self.balance} ({self.held} held)"

    @property
    def available(self) -> int:
        return self.balance - self.held


class TestAllowance(models.Model):
    """Pages test keys used (and hold) in one calendar month (UTC)."""

    __test__ = False  # not a pytest test class, despite the name

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="test_allowances")
    month = models.DateField()  # first day of the month
    used = models.IntegerField(default=0)
    held = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "month"], name="test_allowance_unique"),
            models.CheckConstraint(condition=Q(used__gte=0) & Q(held__gte=0), name="test_allowance_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.month:%Y-%m}: {self.used} used"


class LedgerEntry(models.Model):
    """One credit movement. Rows are only ever inserted."""

    class Kind(models.TextChoices):
        GRANT = "grant"
        HOLD = "hold"
        CAPTURE = "capture"
        RELEASE = "release"
        REFUND = "refund"
        ADJUSTMENT = "adjustment"

    id = models.CharField(primary_key=True, max_length=40, default=new_ledger_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="ledger_entries")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    credits = models.BigIntegerField()
    pages = models.IntegerField(default=0)
    balance_after = models.BigIntegerField()
    request_id = models.CharField(max_length=40, blank=True, default="")
    api_key_id = models.CharField(max_length=40, blank=True, default="")
    # Makes each movement happen at most once (e.g. "req_...:capture").
    idempotency_key = models.CharField(max_length=120, unique=True)
    actor_label = models.CharField(max_length=150, blank=True, default="")
    reason = models.CharField(max_length=500, blank=True, default="")
    # What the movement is made of beyond its pages, for a statement to itemise: a hold or
    # capture of pages read by OCR has `ocr_pages` and `ocr_page_credits` (what one cost).
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "ledger entries"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["organization", "environment", "-created_at"], name="ledger_org_env_time")]

    def __str__(self) -> str:
        return f"{self.id} {self.kind} {self.credits}"


class CreditHold(models.Model):
    """Credits (or test-allowance pages) reserved for one request until it captures or releases.

    `lease_until` is pushed forward while the request is alive; the sweeper releases any hold
    whose lease has lapsed, so a crashed process cannot strand credits.
    """

    class Status(models.TextChoices):
        HELD = "held"
        CAPTURED = "captured"
        RELEASED = "released"

    request_id = models.CharField(max_length=40, unique=True)
    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="holds")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    api_key_id = models.CharField(max_length=40)
    credits = models.BigIntegerField()
    pages = models.IntegerField()
    # The price of a page read by OCR when the hold was made (SVCX_OCR_PAGE_CREDITS then): the
    # capture bills at it, whatever the setting says by then. Null on holds made before it was kept.
    ocr_page_credits = models.IntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.HELD)
    lease_until = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "lease_until"], name="hold_status_lease")]

    def __str__(self) -> str:
        return f"{self.request_id} {self.status} {self.credits}"


class RequestLog(models.Model):
    """The authoritative record of each authenticated request (source of usage reporting and
    of a leaked key's activity report)."""

    request_id = models.CharField(max_length=40, unique=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    api_key_id = models.CharField(max_length=40, db_index=True)
    method = models.CharField(max_length=10)
    endpoint = models.CharField(max_length=100)
    status = models.PositiveSmallIntegerField()
    error_code = models.CharField(max_length=60, blank=True, default="")
    pages = models.IntegerField(default=0)
    credits = models.BigIntegerField(default=0)
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    duration_ms = models.FloatField(default=0)
    created_at = models.DateTimeField(db_index=True)
    copied = models.BooleanField(default=False)

    class Meta:
        indexes = [
            models.Index(fields=["api_key_id", "created_at"], name="requestlog_key_time"),
            models.Index(fields=["copied"], name="requestlog_uncopied", condition=Q(copied=False)),
        ]

    def __str__(self) -> str:
        return f"{self.request_id} {self.method} {self.endpoint} {self.status}"


class UsageRecord(models.Model):
    """The reporting copy of RequestLog served by /v1/usage/records (may lag)."""

    id = models.CharField(primary_key=True, max_length=40, default=new_usage_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    request_id = models.CharField(max_length=40, unique=True)
    api_key_id = models.CharField(max_length=40)
    endpoint = models.CharField(max_length=100)
    status = models.PositiveSmallIntegerField()
    pages = models.IntegerField(default=0)
    credits = models.BigIntegerField(default=0)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "environment", "-created_at"], name="usage_org_env_time"),
            models.Index(
                fields=["organization", "environment", "api_key_id", "-created_at"], name="usage_org_env_key_time"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.endpoint} {self.status}"


class UsageDaily(models.Model):
    """Per-day totals of the reporting copy, for GET /v1/usage."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    day = models.DateField()
    requests = models.IntegerField(default=0)
    pages = models.IntegerField(default=0)
    credits = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "environment", "day"], name="usage_daily_unique")
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.environment} {self.day}"


class UsageWatermark(models.Model):
    """When the reporting copy was last brought up to date (`as_of` of GET /v1/usage)."""

    name = models.CharField(max_length=40, primary_key=True)
    as_of = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} {self.as_of}"
