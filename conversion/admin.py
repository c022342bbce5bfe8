"""Read-only views of conversion jobs and stored files for staff."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from conversion.models import ConversionJob, StoredFile
from core.admin import ReadOnlyAdmin


class ErrorCodeFilter(admin.SimpleListFilter):
    """The error code a job failed with; the codes offered are those the jobs have."""

    title = "error code"
    parameter_name = "error_code"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        codes = (
            ConversionJob.objects.filter(error__has_key="code")
            .order_by()
            .values_list("error__code", flat=True)
            .distinct()
        )
        return [(code, code) for code in sorted({str(c) for c in codes})]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(error__code=self.value())
        return queryset


@admin.register(ConversionJob)
class ConversionJobAdmin(ReadOnlyAdmin):
    # What staff look for first comes first: at 1280 px, beside the admin's navigation and the
    # filters, the status and the error code are in view; the rest scrolls inside the table's box.
    list_display = ["request_id", "created", "status", "error_code", "kind", "org", "pages_billed", "credits_billed"]
    list_filter = ["status", ErrorCodeFilter, "kind", "environment", "created_at"]
    search_fields = ["request_id", "organization__id", "api_key_id", "sha256"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]

    @admin.display(description="created (UTC)", ordering="created_at")
    def created(self, obj: ConversionJob) -> str:
        return f"{obj.created_at:%Y-%m-%d %H:%M:%S}"

    @admin.display(description="organization", ordering="organization_id")
    def org(self, obj: ConversionJob) -> str:
        return obj.organization_id

    @admin.display(description="error code")
    def error_code(self, obj: ConversionJob) -> str:
        return str((obj.error or {}).get("code", "")) or "-"


class StoredFileStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("kept", "kept"), ("deleted", "deleted"), ("purged", "purged")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "kept":
            return queryset.filter(deleted_at__isnull=True, purged_at__isnull=True)
        if self.value() == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        if self.value() == "purged":
            return queryset.filter(purged_at__isnull=False)
        return queryset


@admin.register(StoredFile)
class StoredFileAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "created_at",
        "organization",
        "environment",
        "filename",
        "bytes",
        "page_count",
        "expires_at",
        "deleted_at",
        "purged_at",
    ]
    list_filter = [StoredFileStateFilter, "environment", "created_at"]
    search_fields = ["id", "filename", "sha256", "organization__id", "api_key_id"]
    date_hierarchy = "created_at"
