"""Builders of test data through the real services (so tests exercise what production does)."""

from __future__ import annotations

from typing import Any

from accounts import services
from accounts.models import Organization
from billing.ledger import credits_grant


def make_org(name: str = "Acme", *, credits: int = 0, **kwargs: Any) -> Organization:
    organization = services.organization_create(name=name, **kwargs)
    if credits:
        credits_grant(organization=organization, credits=credits, actor_label="test")
    return organization


def make_key(organization: Organization, environment: str = "live", **kwargs: Any) -> services.MintedKey:
    return services.api_key_create(organization=organization, environment=environment, **kwargs)


def bearer(secret: str) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
