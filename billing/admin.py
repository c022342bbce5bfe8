"""Read-only views of the money side for staff (changes go through the organization actions)."""

from __future__ import annotations

from django.contrib import admin

from billing.models import CreditBalance, CreditHold, LedgerEntry, UsageRecord
from core.admin import ReadOnlyAdmin


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "created_at",
        "organization",
        "environment",
        "kind",
        "credits",
        "pages",
        "balance_after",
        "request_id",
        "actor_label",
    ]
    list_filter = ["kind", "environment", "created_at"]
    search_fields = ["id", "organization__id", "request_id", "api_key_id"]


@admin.register(CreditBalance)
class CreditBalanceAdmin(ReadOnlyAdmin):
    list_display = ["organization", "environment", "balance", "held", "updated_at"]


@admin.register(CreditHold)
class CreditHoldAdmin(ReadOnlyAdmin):
    list_display = [
        "request_id",
        "organization",
        "environment",
        "credits",
        "pages",
        "status",
        "lease_until",
        "created_at",
    ]
    list_filter = ["status", "environment"]
    search_fields = ["request_id", "organization__id", "api_key_id"]


@admin.register(UsageRecord)
class UsageRecordAdmin(ReadOnlyAdmin):
    list_display = ["id", "created_at", "organization", "environment", "endpoint", "status", "pages", "credits"]
    list_filter = ["environment", "endpoint", "status", "created_at"]
    search_fields = ["id", "request_id", "organization__id", "api_key_id"]
    date_hierarchy = "created_at"
