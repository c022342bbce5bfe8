"""The fields and the list envelope the output serializers of every app share."""

from __future__ import annotations

from datetime import UTC, date, datetime

from rest_framework import serializers

from core.serializers import (
    BlankAsNullField,
    ConstantField,
    ListEnvelopeSerializer,
    ListPage,
    OptionalObjectField,
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
