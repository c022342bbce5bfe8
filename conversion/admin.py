"""Read-only views of conversion jobs (version 1's and version 2's, with their parts) and stored
files for staff. Staff change nothing here: a job's money moves only in the conversion service
(a customer cancels a job in the console or the API)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from conversion.models import ConversionJob, Job, JobPart, StoredFile
from core.admin import ReadOnlyAdmin, ReadOnlyInline


class ErrorCodeFilter(admin.SimpleListFilter):
    """The error code a job failed with; the codes offered are those the jobs have."""

    title = "error code"
    parameter_name = "error_code"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        codes = (
            model_admin.model.objects.filter(error__has_key="code")
            .order_by()
            .values_list("error__code", flat=True)
            .distinct()
        )
        return [(code, code) for code in sorted({str(c) for c in codes})]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(error__code=self.value())
        return queryset


class JobColumns(ReadOnlyAdmin):
    """The columns a list of jobs of either version shows first."""

    @admin.display(description="created (UTC)", ordering="created_at")
    def created(self, obj: ConversionJob | Job) -> str:
        return f"{obj.created_at:%Y-%m-%d %H:%M:%S}"

    @admin.display(description="organization", ordering="organization_id")
    def org(self, obj: ConversionJob | Job) -> str:
        return obj.organization_id

    @admin.display(description="error code")
    def error_code(self, obj: ConversionJob | Job) -> str:
        return str((obj.error or {}).get("code", "")) or "-"


@admin.register(ConversionJob)
class ConversionJobAdmin(JobColumns):
    # What staff look for first comes first: at 1280 px, beside the admin's navigation and the
    # filters, the status and the error code are in view; the rest scrolls inside the table's box.
    list_display = ["request_id", "created", "status", "error_code", "kind", "org", "pages_billed", "credits_billed"]
    list_filter = ["status", ErrorCodeFilter, "kind", "environment", "created_at"]
    search_fields = ["request_id", "organization__id", "api_key_id", "sha256"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]


JOB_PART_FIELDS = ("index", "start", "end", "status", "attempts", "heartbeat_at", "finished_at", "error")


class JobPartInline(ReadOnlyInline):
    model = JobPart
    fields = JOB_PART_FIELDS
    ordering = ["index"]


# The sealed PDF password is left out: staff never see it.
JOB_FIELDS = (
    "id",
    "organization",
    "environment",
    "api_key_id",
    "request_id",
    "status",
    "error",
    "filename",
    "sha256",
    "source_store",
    "source_key",
    "options",
    "pages",
    "webhook_metadata",
    "page_count",
    "pages_total",
    "pages_parsed",
    "pages_completed",
    "page_chunks",
    "parts_total",
    "credits_held",
    "credits_billed",
    "pages_billed",
    "result_key",
    "result_bytes",
    "warnings",
    "lead_heartbeat_at",
    "lead_attempts",
    "created_at",
    "started_at",
    "finished_at",
    "expires_at",
)


@admin.register(Job)
class JobAdmin(JobColumns):
    """Version 2 jobs: like version 1's, the status and the error code in view at 1280 px; the
    progress and the money follow."""

    list_display = [
        "id",
        "created",
        "status",
        "error_code",
        "org",
        "environment",
        "progress",
        "credits_held",
        "credits_billed",
    ]
    list_filter = ["status", ErrorCodeFilter, "environment", "created_at"]
    search_fields = ["id", "request_id", "organization__id", "api_key_id", "sha256", "filename"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    fields = JOB_FIELDS
    readonly_fields = JOB_FIELDS
    inlines = [JobPartInline]

    @admin.display(description="pages")
    def progress(self, obj: Job) -> str:
        return f"{obj.pages_completed} / {obj.pages_total}"


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
