"""The key state table of interface.md section 3: rotation, expiry, revocation, limits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts import services
from accounts.models import ApiKey, AuditEvent
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.svcx.failing_urls")]
WHOAMI = "/v1/test/whoami"


@pytest.mark.parametrize(
    ("overlap", "delta"), [("7d", timedelta(days=7)), ("24h", timedelta(hours=24)), ("1h", timedelta(hours=1))]
)
def test_rotation_mints_a_twin_and_keeps_the_old_key_until_the_overlap_ends(
    client: Client, overlap: str, delta: timedelta
) -> None:
    org = make_org()
    old = make_key(org, name="ci", project="etl", scopes=["convert", "inspect"], ip_allowlist=["10.0.0.0/8"])

    before = timezone.now()
    new = services.api_key_rotate(api_key=old.api_key, overlap=overlap)

    old.api_key.refresh_from_db()
    twin = new.api_key
    assert (twin.name, twin.project, twin.scopes, twin.ip_allowlist, twin.environment) == (
        "ci",
        "etl",
        ["convert", "inspect"],
        ["10.0.0.0/8"],
        "live",
    )
    assert twin.expires_at is None
    assert before + delta <= old.api_key.expires_at <= timezone.now() + delta
    assert old.api_key.replaced_by_id == twin.id
    assert client.get(WHOAMI, REMOTE_ADDR="10.1.1.1", **bearer(old.secret)).status_code == 200
    assert client.get(WHOAMI, REMOTE_ADDR="10.1.1.1", **bearer(new.secret)).status_code == 200


def test_default_overlap_is_seven_days() -> None:
    old = make_key(make_org())

    services.api_key_rotate(api_key=old.api_key)

    old.api_key.refresh_from_db()
    assert timedelta(days=6, hours=23) < old.api_key.expires_at - timezone.now() <= timedelta(days=7)


def test_old_key_reaching_expiry_is_expired_naming_the_replacement(client: Client) -> None:
    old = make_key(make_org())
    new = services.api_key_rotate(api_key=old.api_key, overlap="1h")

    ApiKey.objects.filter(pk=old.api_key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    error = assert_envelope(client.get(WHOAMI, **bearer(old.secret)), 401, "expired_api_key")
    assert new.api_key.hint in error["message"]


def test_revocation_is_irreversible_and_works_from_expired(client: Client) -> None:
    minted = make_key(make_org(), expires_at=timezone.now() - timedelta(minutes=1))
    assert_envelope(client.get(WHOAMI, **bearer(minted.secret)), 401, "expired_api_key")

    services.api_key_revoke(api_key=minted.api_key)
    first = ApiKey.objects.get(pk=minted.api_key.pk).revoked_at
    services.api_key_revoke(api_key=minted.api_key, reason="again")

    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_at == first
    assert_envelope(client.get(WHOAMI, **bearer(minted.secret)), 401, "revoked_api_key")
    with pytest.raises(services.AccountError):
        services.api_key_update(api_key=minted.api_key, expires_at=None)
    with pytest.raises(services.AccountError):
        services.api_key_rotate(api_key=minted.api_key)
    assert_envelope(client.get(WHOAMI, **bearer(minted.secret)), 401, "revoked_api_key")


def test_rotating_twice_is_refused() -> None:
    old = make_key(make_org())
    services.api_key_rotate(api_key=old.api_key)

    with pytest.raises(services.AccountError, match="already rotated"):
        services.api_key_rotate(api_key=old.api_key)


def test_active_key_limit_is_100() -> None:
    org = make_org()
    keys = [make_key(org) for _ in range(100)]

    with pytest.raises(services.AccountError, match="100 active keys"):
        make_key(org)

    assert ApiKey.objects.filter(organization=org).count() == 100
    services.api_key_revoke(api_key=keys[0].api_key)
    make_key(org)


def test_lifetime_key_limit_is_1000() -> None:
    org = make_org()
    for batch in range(10):
        ApiKey.objects.bulk_create(
            [
                ApiKey(
                    organization=org,
                    environment="live",
                    scopes=["convert"],
                    hint="h",
                    key_hash=f"{batch}-{i}",
                    revoked_at=timezone.now(),
                )
                for i in range(100)
            ]
        )

    with pytest.raises(services.AccountError, match="lifetime limit"):
        make_key(org)

    assert ApiKey.objects.filter(organization=org).count() == 1000


def test_every_change_is_audited() -> None:
    org = make_org()
    minted = make_key(org)
    services.api_key_update(api_key=minted.api_key, scopes=["convert"])
    services.api_key_rotate(api_key=minted.api_key, overlap="1h")
    services.api_key_revoke(api_key=minted.api_key)
    services.organization_suspend(organization=org)

    actions = list(AuditEvent.objects.filter(organization=org).order_by("created_at").values_list("action", flat=True))

    assert actions == [
        "organization.create",
        "key.create",
        "key.update",
        "key.rotate",
        "key.revoke",
        "organization.suspend",
    ]
