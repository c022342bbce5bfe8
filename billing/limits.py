"""Rate-limit and quota values: the defaults of decisions.md 6 (settings) and per-organization
overrides stored on the organization. The names of the limits are accounts.limits' (the keys
an organization's overrides may have); they are re-exported here with their values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from accounts.limits import LIMIT_NAMES as LIMIT_NAMES
from accounts.limits import STORAGE_BYTES as STORAGE_BYTES
from accounts.limits import MeterName as MeterName

if TYPE_CHECKING:
    from accounts.models import Organization


# limit name -> settings attribute holding its default
_DEFAULT_SETTINGS: dict[str, str] = {
    MeterName.REQUESTS: "SVCX_LIMIT_REQUESTS_PER_MINUTE",
    MeterName.PAGES: "SVCX_LIMIT_PAGES_PER_MINUTE",
    MeterName.CONCURRENCY: "SVCX_LIMIT_CONCURRENCY",
    MeterName.UPLOADS: "SVCX_LIMIT_UPLOAD_BYTES_PER_MINUTE",
    MeterName.INSPECT: "SVCX_LIMIT_INSPECT_PER_MINUTE",
    MeterName.INSPECT_SAMPLE_PAGES: "SVCX_LIMIT_INSPECT_SAMPLE_PAGES_PER_DAY",
    MeterName.TOC: "SVCX_LIMIT_TOC_PER_MINUTE",
    MeterName.NO_VALUE_CONVERSIONS: "SVCX_LIMIT_NO_VALUE_CONVERSIONS_PER_HOUR",
    MeterName.UNBILLED_WORK: "SVCX_LIMIT_UNBILLED_WORK_SECONDS_PER_HOUR",
    MeterName.NEW_ACCOUNT: "SVCX_LIMIT_NEW_ACCOUNT_PAGES_PER_DAY",
    STORAGE_BYTES: "SVCX_STORAGE_QUOTA_BYTES",
}


def limit_for(organization: Organization, name: MeterName | str) -> int:
    """The organization's override of `name`, else the default from settings."""
    override = (organization.limits or {}).get(name)
    if isinstance(override, int) and not isinstance(override, bool):
        return override
    return int(getattr(settings, _DEFAULT_SETTINGS[name]))


def limits_of(organization: Organization) -> dict[str, int]:
    return {name: limit_for(organization, name) for name in sorted(LIMIT_NAMES)}
