"""Rate-limit and quota values: the defaults of decisions.md 6 (settings) and per-organization
overrides stored on the organization."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    from accounts.models import Organization

# meter name -> settings attribute holding its default
_DEFAULT_SETTINGS: dict[str, str] = {
    "requests": "SVCX_LIMIT_REQUESTS_PER_MINUTE",
    "pages": "SVCX_LIMIT_PAGES_PER_MINUTE",
    "concurrency": "SVCX_LIMIT_CONCURRENCY",
    "uploads": "SVCX_LIMIT_UPLOAD_BYTES_PER_MINUTE",
    "inspect": "SVCX_LIMIT_INSPECT_PER_MINUTE",
    "inspect_sample_pages": "SVCX_LIMIT_INSPECT_SAMPLE_PAGES_PER_DAY",
    "toc": "SVCX_LIMIT_TOC_PER_MINUTE",
    "no_value_conversions": "SVCX_LIMIT_NO_VALUE_CONVERSIONS_PER_HOUR",
    "unbilled_work": "SVCX_LIMIT_UNBILLED_WORK_SECONDS_PER_HOUR",
    "new_account": "SVCX_LIMIT_NEW_ACCOUNT_PAGES_PER_DAY",
    "storage_bytes": "SVCX_STORAGE_QUOTA_BYTES",
}
LIMIT_NAMES = frozenset(_DEFAULT_SETTINGS)


def limit_for(organization: Organization, name: str) -> int:
    """The organization's override of `name`, else the default from settings."""
    override = (organization.limits or {}).get(name)
    if isinstance(override, int) and not isinstance(override, bool):
        return override
    return int(getattr(settings, _DEFAULT_SETTINGS[name]))


def limits_of(organization: Organization) -> dict[str, int]:
    return {name: limit_for(organization, name) for name in sorted(LIMIT_NAMES)}
