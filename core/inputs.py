"""Input serializer fields shared by the apps: what the request's members must be, with errors
in the catalogue's terms.

A field refuses a value by raising DRF's `ValidationError` with a catalogue code
(`ErrorCode`) as its code; the one exception handler turns it into the envelope, with `param`
the path of the field in the request (`options.pages`, `metadata`, a query parameter's name).
An error that carries `details` is raised as `ServiceError` with `param=field_path(field)`.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.errors import ErrorCode


def field_path(field: serializers.Field[Any, Any, Any, Any]) -> str:
    """Where the field sits in the request: its name, after its parents' (`options.pages`)."""
    names: list[str] = []
    node: Any = field
    while node is not None and getattr(node, "field_name", None):
        names.append(str(node.field_name))
        node = getattr(node, "parent", None)
    return ".".join(reversed(names))


def invalid(message: str, code: ErrorCode = ErrorCode.INVALID_PARAMETER_TYPE) -> serializers.ValidationError:
    return serializers.ValidationError(message, code=code.value)


class ValueField(serializers.Field[Any, Any, Any, Any]):
    """A field for which JSON's null is one more value of the wrong type, refused by
    `to_internal_value` in the field's own words (DRF would say "may not be null")."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:
            return (False, data)
        return super().validate_empty_values(data)

    def to_representation(self, value: Any) -> Any:
        return value


class StringField(ValueField):
    """A string, taken exactly as sent (no trimming, no character checks); another type is
    `invalid_parameter_type`."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise invalid(f"`{field_path(self)}` must be a string.")
        return data


class FlagField(ValueField):
    """A boolean. In JSON it must be a JSON boolean; in a text encoding (`text=True`: a
    multipart part, a query parameter) `true` or `false`."""

    def __init__(self, *, text: bool, **kwargs: Any) -> None:
        self.text = text
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        if self.text and isinstance(data, str) and data.lower() in ("true", "false"):
            return data.lower() == "true"
        expected = "true or false" if self.text else "a JSON boolean (true or false, not a string)"
        raise invalid(f"`{field_path(self)}` must be {expected}.")
