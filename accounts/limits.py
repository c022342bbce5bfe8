"""The names of an organization's limits: the keys `Organization.limits` may override.

billing.limits gives each its value (the override, else the default from settings) and
billing.meters enforces the meters among them."""

from __future__ import annotations

from enum import StrEnum


class MeterName(StrEnum):
    """Every rate-limit meter; each meter's limit has the meter's name. `billing.meters.METERS`
    describes each one (window, error code, header)."""

    REQUESTS = "requests"
    PAGES = "pages"
    CONCURRENCY = "concurrency"
    UPLOADS = "uploads"
    INSPECT = "inspect"
    INSPECT_SAMPLE_PAGES = "inspect_sample_pages"
    TOC = "toc"
    NO_VALUE_CONVERSIONS = "no_value_conversions"
    UNBILLED_WORK = "unbilled_work"
    NEW_ACCOUNT = "new_account"


# A limit that is a quota, not a meter.
STORAGE_BYTES = "storage_bytes"

# Plain strings: the names are compared with and shown beside what operators type.
LIMIT_NAMES: frozenset[str] = frozenset({*(name.value for name in MeterName), STORAGE_BYTES})
