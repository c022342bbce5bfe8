"""People of organizations, and test clients signed in to the console as them."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts import services
from accounts.models import Membership, Organization

PASSWORD = "a-long-enough-password-1"


def make_person(organization: Organization | None, email: str, role: str = "member") -> Any:
    """A user who signs in with `email` and PASSWORD, a member of `organization` with `role`."""
    user = get_user_model().objects.create_user(username=email, email=email, password=PASSWORD)
    if organization is not None:
        services.membership_add(organization=organization, user=user, role=role)
    return user


def signed_in(user: Any, address: str = "192.0.2.10") -> Client:
    """A client signed in through the console's own sign-in form."""
    client = Client(REMOTE_ADDR=address)
    response = client.post("/console/sign-in/", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302, response.content[:500]
    return client


@pytest.fixture(autouse=True)
def _fresh_attempt_counters(settings: Any) -> None:
    """Each test counts sign-in attempts afresh: failures per e-mail address last 15 minutes in
    Redis, and the fixtures' people have fixed addresses, so runs close together would add up."""
    settings.RATELIMIT_CACHE_PREFIX = f"rl:{secrets.token_hex(8)}:"


@pytest.fixture
def acme() -> Organization:
    return services.organization_create(name="Acme")


@pytest.fixture
def globex() -> Organization:
    return services.organization_create(name="Globex")


@pytest.fixture
def owner(acme: Organization) -> Any:
    return make_person(acme, "olga@acme.test", Membership.Role.OWNER)


@pytest.fixture
def member(acme: Organization) -> Any:
    return make_person(acme, "mike@acme.test", Membership.Role.MEMBER)
