"""The meter registry: one enumeration of meter names that the meters and limits both use."""

from __future__ import annotations

from billing.limits import LIMIT_NAMES, STORAGE_BYTES, MeterName
from billing.meters import CONCURRENCY, METERS
from core.errors import CATALOGUE


def test_every_meter_is_described_once() -> None:
    described = [*METERS, CONCURRENCY.name]

    assert sorted(described) == sorted(MeterName)
    assert all(meter.name is name for name, meter in METERS.items())


def test_every_meter_has_a_limit_and_a_rate_limit_code() -> None:
    expected = {*(name.value for name in MeterName), STORAGE_BYTES}

    assert expected == LIMIT_NAMES
    for meter in (*METERS.values(), CONCURRENCY):
        assert CATALOGUE[meter.code].status == 429


def test_reported_meters_name_their_headers() -> None:
    reported = sorted(meter.header for meter in (*METERS.values(), CONCURRENCY) if meter.header is not None)

    assert reported == ["concurrency", "inspect", "pages", "requests", "toc", "uploads"]
