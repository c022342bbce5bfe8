"""Read-only views of conversion jobs and stored files for staff."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from conversion.models import ConversionJob, StoredFile
from core.admin import ReadOnlyAdmin


@admin.register(ConversionJob)
class ConversionJobAdmin(ReadOnlyAdmin):
    list_display = [
        "request_id",
        "created_at",
        "organization",
        "environment",
        "kind",
        "status",
        "pages_completed",
        "pages_billed",
        "credits_billed",
        "finished_at",
    ]
    list_filter = ["status", "kind", "environment", "created_at"]
    search_fields = ["request_id", "organization__id", "api_key_id", "sha256"]
    date_hierarchy = "created_at"


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
