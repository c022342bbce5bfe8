"""The money side of the admin for staff: read-only views of the ledger, balances, holds and usage
records; the credits of an organization and the actions that change them (grant, refund or
adjust); the activity report of a key. The organization and key admins are accounts'; billing
registers them again with these parts added."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from accounts import admin as accounts_admin
from accounts import services
from accounts.admin import ActionForm, confirmed_action, org_label
from accounts.keyformat import Environment
from accounts.models import ApiKey, Organization
from billing.ledger import credits_adjust, credits_grant
from billing.models import CreditBalance, CreditHold, LedgerEntry, UsageRecord
from billing.reports import REPORT_DAYS, key_activity_csv
from billing.selectors import allowance_get, credits_get
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


class GrantForm(ActionForm):
    credits = forms.IntegerField(min_value=1)
    field_order = ["credits", "reason"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].help_text = "Why: recorded in the ledger and the audit log."


class AdjustForm(GrantForm):
    kind = forms.ChoiceField(choices=[("refund", "refund"), ("adjustment", "adjustment")])
    credits = forms.IntegerField(help_text="Signed; a refund is positive.")
    field_order = ["kind", "credits", "reason"]


class OrganizationAdmin(accounts_admin.OrganizationAdmin):
    """accounts' organization admin with the organization's credits and the actions on them."""

    list_display = ["id", "name", "status", "live_balance", "debug_policy", "created_at"]
    detail_fields = ["live_credits", "test_allowance", *accounts_admin.OrganizationAdmin.detail_fields]
    actions = [*accounts_admin.OrganizationAdmin.actions, "grant_credits", "refund_or_adjust"]
    object_actions = [*accounts_admin.OrganizationAdmin.object_actions, "grant_credits", "refund_or_adjust"]

    @admin.display(description="live balance")
    def live_balance(self, obj: Organization) -> int:
        return credits_get(organization=obj, environment=Environment.LIVE).balance

    @admin.display(description="credits (live)")
    def live_credits(self, obj: Organization) -> str:
        credits = credits_get(organization=obj, environment=Environment.LIVE)
        return (
            f"balance {credits.balance:,} credits; held {credits.held:,} by requests in flight; "
            f"available {credits.available:,}"
        )

    @admin.display(description="test allowance")
    def test_allowance(self, obj: Organization) -> str:
        allowance = allowance_get(organization=obj)
        return (
            f"{allowance.used:,} of {allowance.limit:,} pages used this month, {allowance.held:,} held; "
            f"resets {allowance.resets_at:%Y-%m-%d}"
        )

    @confirmed_action(
        description="Grant credits",
        consequence="Each organization's live balance grows by the credits granted (a ledger entry).",
        form_class=GrantForm,
    )
    def grant_credits(
        self, request: HttpRequest, queryset: QuerySet[Organization], data: dict[str, Any]
    ) -> HttpResponse | None:
        for organization in queryset:
            row = credits_grant(
                organization=organization,
                credits=data["credits"],
                actor_label=request.user.get_username(),
                reason=data["reason"],
            )
            services.audit_record(
                actor=request.user,
                action="credits.grant",
                organization=organization,
                target=row.id,
                credits=row.credits,
                reason=row.reason,
            )
            self.message_user(
                request,
                f"Granted {row.credits:,} credits to {org_label(organization)}; "
                f"live balance now {row.balance_after:,} ({row.id}).",
            )
        return None

    @confirmed_action(
        description="Refund or adjust credits",
        consequence="Each organization's live balance changes by the credits given (a ledger entry): "
        "a refund adds them; an adjustment adds or, when negative, takes them away.",
        form_class=AdjustForm,
    )
    def refund_or_adjust(
        self, request: HttpRequest, queryset: QuerySet[Organization], data: dict[str, Any]
    ) -> HttpResponse | None:
        for organization in queryset:
            try:
                row = credits_adjust(
                    organization=organization,
                    credits=data["credits"],
                    kind=data["kind"],
                    actor_label=request.user.get_username(),
                    reason=data["reason"],
                )
            except ValueError as exc:
                self.message_user(request, f"{organization}: {exc}", level=messages.ERROR)
                continue
            services.audit_record(
                actor=request.user,
                action=f"credits.{row.kind}",
                organization=organization,
                target=row.id,
                credits=row.credits,
                reason=row.reason,
            )
            verb = "Refunded" if row.kind == "refund" else "Adjusted by"
            self.message_user(
                request,
                f"{verb} {row.credits:,} credits: {org_label(organization)}, reason “{row.reason}”; "
                f"live balance now {row.balance_after:,} ({row.id}).",
            )
        return None


class ApiKeyAdmin(accounts_admin.ApiKeyAdmin):
    """accounts' key admin with the key's activity report (the requests made with it)."""

    readonly_fields = [*accounts_admin.ApiKeyAdmin.readonly_fields, "activity"]
    actions = [*accounts_admin.ApiKeyAdmin.actions, "activity_report"]
    report_days = REPORT_DAYS

    @admin.display(description="activity report")
    def activity(self, obj: ApiKey) -> str:
        url = reverse("admin:accounts_apikey_activity", args=[quote(obj.pk)])
        return format_html('<a href="{}">Download the {}-day activity report (CSV)</a>', url, REPORT_DAYS)

    def get_urls(self) -> list[URLPattern]:
        report = path(
            "<path:object_id>/activity-report/",
            self.admin_site.admin_view(self.activity_report_view),
            name="accounts_apikey_activity",
        )
        return [report, *super().get_urls()]

    def activity_report_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        api_key = self.get_object(request, unquote(object_id))
        if api_key is None or not self.has_view_permission(request, api_key):
            raise Http404("no such key")
        return self._report(request, api_key)

    def _report(self, request: HttpRequest, api_key: ApiKey) -> HttpResponse:
        services.audit_record(
            actor=request.user, action="key.activity_report", organization=api_key.organization, target=api_key.id
        )
        response = HttpResponse(key_activity_csv(api_key=api_key), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{api_key.id}-activity-{REPORT_DAYS}d.csv"'
        return response

    @admin.action(description="Download 90-day activity report (CSV)", permissions=["view"])
    def activity_report(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one key.", level=messages.ERROR)
            return None
        return self._report(request, queryset.get())


admin.site.unregister(Organization)
admin.site.register(Organization, OrganizationAdmin)
admin.site.unregister(ApiKey)
admin.site.register(ApiKey, ApiKeyAdmin)
