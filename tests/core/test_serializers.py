"""The fields and the list envelope the output serializers of every app share."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime
from typing import Any

from rest_framework import serializers

from core.inputs import field_path
from core.serializers import (
    BlankAsNullField,
    ConstantField,
    ListEnvelopeSerializer,
    ListPage,
    OptionalObjectField,
    OutputSerializer,
    SharedFields,
    TimestampField,
)


class RowSerializer(serializers.Serializer):
    name = serializers.CharField()
    object = ConstantField("row")
    at = TimestampField(allow_null=True)
    note = BlankAsNullField()
    metadata = OptionalObjectField()


class RowListSerializer(ListEnvelopeSerializer):
    row = RowSerializer


def test_a_row_is_written_in_its_declared_order_with_the_shared_wire_formats() -> None:
    row = {"object": "not this", "note": "", "name": "a", "at": datetime(2026, 1, 31, 8, 5, 1, 123456, tzinfo=UTC)}

    body = RowSerializer(row).data

    assert list(body.items()) == [
        ("name", "a"),
        ("object", "row"),
        ("at", "2026-01-31T08:05:01.123Z"),
        ("note", None),
    ]


def test_a_date_is_its_midnight_and_none_is_null() -> None:
    assert TimestampField().to_representation(date(2026, 2, 1)) == "2026-02-01T00:00:00Z"
    assert RowSerializer({"name": "a", "at": None, "note": "x"}).data["at"] is None


def test_an_echo_is_absent_when_none_and_written_when_sent() -> None:
    left_out = RowSerializer({"name": "a", "at": None, "note": "x", "metadata": None}).data
    sent = RowSerializer({"name": "a", "at": None, "note": "x", "metadata": {"b": 1, "a": None}}).data

    assert "metadata" not in left_out
    assert list(sent["metadata"].items()) == [("b", 1), ("a", None)]


def test_the_list_envelope_is_object_data_has_more() -> None:
    body = RowListSerializer(ListPage([{"name": "a", "at": None, "note": "n"}], has_more=True)).data

    assert list(body) == ["object", "data", "has_more"]
    assert (body["object"], body["has_more"], [r["name"] for r in body["data"]]) == ("list", True, ["a"])


class Inner(SharedFields[dict[str, Any]]):
    size = serializers.IntegerField()


class Outer(SharedFields[dict[str, Any]]):
    name = serializers.CharField()
    inner = Inner()


class Written(OutputSerializer):
    name = serializers.CharField()
    inner = Inner()


def test_shared_fields_are_built_once_per_class_and_per_nesting() -> None:
    first, second = Outer(data={}), Outer(data={})

    assert first.fields is second.fields
    assert Written().fields is Written().fields
    # A subclass builds its own; a nested serializer keeps the set bound under its parent.
    first_inner, second_inner = first.fields["inner"], second.fields["inner"]
    assert isinstance(first_inner, Inner)
    assert isinstance(second_inner, Inner)
    assert Inner().fields is not first_inner.fields
    assert first_inner.fields is second_inner.fields
    # The `param` path of a field is its place in the tree, the same for every instance.
    assert field_path(second_inner.fields["size"]) == "inner.size"
    assert field_path(Inner().fields["size"]) == "size"


def test_instances_sharing_fields_keep_their_own_data_errors_and_output() -> None:
    good, bad = Outer(data={"name": "a", "inner": {"size": "3"}}), Outer(data={"name": "b", "inner": {"size": "x"}})

    assert good.is_valid()
    assert not bad.is_valid()

    assert good.validated_data == {"name": "a", "inner": {"size": 3}}
    assert list(bad.errors) == ["inner"]
    assert list(bad.errors["inner"]) == ["size"]
    assert Written({"name": "c", "inner": {"size": 4}}).data == {"name": "c", "inner": {"size": 4}}
    assert Written({"name": "d", "inner": {"size": 5}}).data == {"name": "d", "inner": {"size": 5}}


def test_shared_fields_validate_and_write_from_many_threads_at_once() -> None:
    failures: list[str] = []
    start = threading.Barrier(8)

    def work(n: int) -> None:
        start.wait()
        for i in range(200):
            value = n * 1000 + i
            validated = Outer(data={"name": str(value), "inner": {"size": str(value)}})
            if not validated.is_valid() or validated.validated_data["inner"]["size"] != value:
                failures.append(f"validated {value}: {validated.errors}")
            written = Written({"name": str(value), "inner": {"size": value}}).data
            if written != {"name": str(value), "inner": {"size": value}}:
                failures.append(f"wrote {written} for {value}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
