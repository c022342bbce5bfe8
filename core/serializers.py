"""What the output serializers of every app share: the wire formats of core.formats as fields,
and the list envelope `{object: "list", data: [...], has_more}`.

An output serializer writes a body (`XSerializer(instance).data`) and is what `extend_schema`
names in `responses=`, so the body and its OpenAPI description are one class and cannot drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, ClassVar, Generic, TypeVar

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import build_basic_type
from drf_spectacular.types import OpenApiTypes
from rest_framework import serializers
from rest_framework.fields import SkipField
from rest_framework.utils.serializer_helpers import BindingDict

from core.formats import iso, iso_date

Row = TypeVar("Row")
Value = TypeVar("Value")


class SharedFields(serializers.Serializer[Value]):
    """A serializer whose fields are built and bound once per class and shared by every
    instance.

    DRF builds the fields again for each instance: a deep copy of every declared field, each
    field's constructor run again, then bound to the instance (about twenty fields on a convert
    request, more work than the validation or writing they serve). Here a root serializer's
    fields are built once, bound to a first instance of the class, and reused; a nested
    serializer lives among its parent's fields and builds its own once.

    So the fields keep no state between uses and must not read the serializer they are bound to
    (`self.parent.context`, its instance or data): that is the class's first instance. What needs
    the current request belongs in the serializer's own methods (`validate`, `to_internal_value`,
    `to_representation`), which run on the current instance. A field's `param` path
    (core.inputs.field_path) is the same for every instance, so it may be read."""

    @property
    def fields(self) -> BindingDict:  # DRF's cached_property, cached per class instead
        if self.parent is not None:  # nested: one instance, inside its root's shared fields
            built = self.__dict__.get("_shared_fields")
            if built is None:
                built = self.__dict__["_shared_fields"] = _bound_fields(self)
            return built
        cls = type(self)
        built = cls.__dict__.get("_shared_fields")
        if built is None:
            built = _bound_fields(cls())
            cls._shared_fields = built  # two threads racing build equal sets; either is kept
        return built


def _bound_fields(serializer: serializers.Serializer[Any]) -> BindingDict:
    fields = BindingDict(serializer)
    for name, field in serializer.get_fields().items():
        fields[name] = field
    return fields


class OutputSerializer(SharedFields[Any]):
    """The base of every output serializer (it writes bodies and reads nothing)."""


class ConstantField(serializers.Field):  # writes one value, reads nothing
    """A member every body of its kind carries with the same value (`object: "file"`): written
    whatever the instance holds, described as required with the value as its default."""

    def __init__(self, value: str | bool, **kwargs: Any) -> None:
        super().__init__(default=value, **kwargs)
        self.required = True  # always written (DRF reads a default as "may be left out")

    def get_attribute(self, instance: Any) -> Any:
        return self.default

    def to_representation(self, value: Any) -> Any:
        return value


class ConstantFieldSchema(OpenApiSerializerFieldExtension):
    """A string or a boolean as its value is; spectacular adds the default and `required`."""

    target_class = ConstantField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> Any:
        return build_basic_type(OpenApiTypes.BOOL if isinstance(self.target.default, bool) else OpenApiTypes.STR)


class TimestampField(serializers.DateTimeField):
    """ISO 8601 UTC with a Z (core.formats): a datetime to the millisecond, a date as its midnight."""

    def to_representation(self, value: datetime | date) -> Any:
        return iso(value) if isinstance(value, datetime) else iso_date(value)


class BlankAsNullField(serializers.CharField):
    """Text stored blank when there is none, written as null."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, **kwargs)

    def to_representation(self, value: Any) -> Any:
        return str(value) if value else None


class OptionalObjectField(serializers.DictField):
    """A JSON object that is absent from the body, not null, while the instance holds None
    (the `metadata` a request did not send, the `debug` it did not ask for)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)

    def get_attribute(self, instance: Any) -> Any:
        value = super().get_attribute(instance)
        if value is None:
            raise SkipField()
        return value


@dataclass(frozen=True)
class ListPage(Generic[Row]):
    """One page of a list answer: its rows and whether more follow."""

    data: Sequence[Row]
    has_more: bool


class ListEnvelopeSerializer(OutputSerializer):  # writes ListPage
    # The serializer of one row; a subclass per resource names it, and the envelope's component
    # is named for the subclass ("LedgerListSerializer" -> "LedgerList").
    row: ClassVar[type[serializers.Serializer]]  # any row serializer

    def get_fields(self) -> dict[str, serializers.Field]:  # DRF's own signature
        # Made here rather than declared: a class attribute `data` would override Serializer.data.
        return {"object": ConstantField("list"), "data": self.row(many=True), "has_more": serializers.BooleanField()}
