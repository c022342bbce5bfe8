"""Admin building blocks shared by the apps."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record staff may read but never add, change or delete (ledgers, logs)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown on their parent's page that staff may read but never add, change or delete
    (a delivery's attempts, a job's parts): every field in `fields` is read-only."""

    extra = 0

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.fields or ()

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
