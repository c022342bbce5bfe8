"""Admin building blocks shared by the apps."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.http import HttpRequest


class PastedIdAdmin(admin.ModelAdmin):
    """An object's pages open by its id as the admin's own links write it and as staff paste
    it from an answer or a log. The admin reads "_2B" in a URL as "+" (its quoting of ids), so
    a raw random id such as `org_2Bk...` read that way names nothing: it is then looked up as
    written."""

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        obj = super().get_object(request, object_id, from_field)
        if obj is None and quote(object_id) != object_id:
            obj = super().get_object(request, quote(object_id), from_field)
        return obj


class ReadOnlyAdmin(PastedIdAdmin):
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
