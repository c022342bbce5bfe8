"""An organization with its people, and a webhook receiver on 127.0.0.1 started by the test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from accounts.models import Organization
from accounts.services import membership_add
from tests.factories import make_org
from tests.webhooks.receiver import Receiver, running


def person(org: Organization, email: str, role: str) -> Any:
    """A member who is mailed, never signs in (no password: none to hash)."""
    user = get_user_model().objects.create_user(username=email, email=email)
    membership_add(organization=org, user=user, role=role)
    return user


@pytest.fixture
def acme() -> Organization:
    """Acme with two owners, an admin and a member."""
    org = make_org("Acme")
    for email, role in [
        ("olga@acme.test", "owner"),
        ("otto@acme.test", "owner"),
        ("ada@acme.test", "admin"),
        ("mike@acme.test", "member"),
    ]:
        person(org, email, role)
    return org


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from running(Receiver())
