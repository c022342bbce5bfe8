"""Input serializers and fields shared by the apps: what a request's members and query
parameters must be, with errors in the catalogue's terms.

A field refuses a value by raising DRF's `ValidationError` with a catalogue code
(`ErrorCode`) as its code; the one exception handler turns it into the envelope, with `param`
the path of the field in the request (`options.pages`, `metadata`, a query parameter's name).
An error that carries `details` is raised as `ServiceError` with `param=field_path(field)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, time
from typing import Any

from django.utils.dateparse import parse_date, parse_datetime
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.request import Request

from core.errors import ErrorCode, caller_text
from core.serializers import SharedFields


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
    """A field that takes the value as sent: JSON's null is one more value of the wrong type,
    refused by `to_internal_value` in the field's own words (DRF would say "may not be null"),
    and an empty query parameter is the empty string."""

    def get_value(self, dictionary: Mapping[Any, Any]) -> Any:
        # As sent: DRF reads an empty query parameter or form field as absent.
        return dictionary.get(self.field_name, empty)

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


class QuerySerializer(SharedFields[dict[str, Any]]):
    """An endpoint's query parameters: its fields. Any other parameter is `unknown_parameter`,
    the message listing the accepted ones."""

    def to_internal_value(self, data: Any) -> Any:
        for name in data:
            if name not in self.fields:
                accepted = ", ".join(sorted(self.fields)) or "none"
                message = f"Unknown query parameter {caller_text(name)!r}; accepted: {accepted}."
                raise serializers.ValidationError({name: invalid(message, ErrorCode.UNKNOWN_PARAMETER).detail})
        return super().to_internal_value(data)


class NoQuery(QuerySerializer):
    """An endpoint that takes no query parameter."""


def query_of(request: Request, serializer: type[QuerySerializer]) -> dict[str, Any]:
    """The request's query parameters, validated by `serializer` (errors as the handler maps
    them: `param` the parameter's name)."""
    validated = serializer(data=request.query_params)
    validated.is_valid(raise_exception=True)
    return dict(validated.validated_data)


class IntegerParam(ValueField):
    """An integer query parameter from `minimum` to `maximum`."""

    def __init__(self, *, minimum: int, maximum: int, **kwargs: Any) -> None:
        self.minimum, self.maximum = minimum, maximum
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        try:
            value = int(data)
        except (TypeError, ValueError):
            value = self.minimum - 1
        if not self.minimum <= value <= self.maximum:
            raise invalid(
                f"{field_path(self)} must be an integer from {self.minimum} to {self.maximum}, "
                f"got {caller_text(data)!r}."
            )
        return value


class TimestampParam(ValueField):
    """An ISO 8601 timestamp (a bare date means its midnight UTC; no offset means UTC); empty
    means none."""

    def to_internal_value(self, data: Any) -> datetime | None:
        raw = str(data)
        if raw == "":
            return None
        parsed: datetime | None = None
        try:
            parsed = parse_datetime(raw.replace(" ", "+"))
            if parsed is None:
                day = parse_date(raw)
                parsed = datetime.combine(day, time(0)) if day else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise invalid(
                f"{field_path(self)} must be an ISO 8601 timestamp such as 2026-01-31T00:00:00Z, "
                f"got {caller_text(raw)!r}."
            )
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
