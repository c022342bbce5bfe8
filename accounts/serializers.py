"""Representations of accounts objects: plain dicts for the operator command and the admin."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from accounts.models import ApiKey, Membership, Organization
from core.formats import iso


def key_status(api_key: ApiKey) -> str:
    if api_key.revoked_at is not None:
        return "revoked"
    if api_key.expires_at is not None and api_key.expires_at <= timezone.now():
        return "expired"
    return "active"


def organization_dict(organization: Organization) -> dict[str, Any]:
    return {
        "id": organization.id,
        "object": "organization",
        "name": organization.name,
        "status": organization.status,
        "suspended_at": iso(organization.suspended_at),
        "delinquent_debt": organization.delinquent_debt,
        "debug_policy": organization.debug_policy,
        "limits": organization.limits,
        "default_engine": organization.default_engine or None,
        "created_at": iso(organization.created_at),
    }


def api_key_dict(api_key: ApiKey) -> dict[str, Any]:
    return {
        "id": api_key.id,
        "object": "api_key",
        "organization": api_key.organization_id,
        "environment": api_key.environment,
        "name": api_key.name,
        "project": api_key.project,
        "scopes": api_key.scopes,
        "ip_allowlist": api_key.ip_allowlist,
        "hint": api_key.hint,
        "status": key_status(api_key),
        "expires_at": iso(api_key.expires_at),
        "revoked_at": iso(api_key.revoked_at),
        "revoked_reason": api_key.revoked_reason or None,
        "replaced_by": api_key.replaced_by_id,
        "last_used_at": iso(api_key.last_used_at),
        "created_at": iso(api_key.created_at),
    }


def membership_dict(membership: Membership) -> dict[str, Any]:
    return {
        "object": "membership",
        "organization": membership.organization_id,
        "user": membership.user.get_username(),
        "email": membership.user.email,
        "role": membership.role,
        "created_at": iso(membership.created_at),
    }
