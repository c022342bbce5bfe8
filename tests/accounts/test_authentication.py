"""Authentication through HTTP: every 401 of interface.md 5.2 and the key lifecycle states."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts import keyformat, services
from accounts.models import ApiKey
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.svcx.failing_urls")]
WHOAMI = "/v1/test/whoami"
WWW = 'Bearer realm="svcx", error="invalid_token"'


def assert_401(response: object, code: str) -> dict:
    error = assert_envelope(response, 401, code)
    assert response["WWW-Authenticate"] == WWW
    assert error["type"] == "authentication_error"
    assert error["retryable"] is False
    return error


def test_valid_key_authenticates_as_its_org_and_environment(client: Client) -> None:
    org = make_org()
    minted = make_key(org, "test")

    response = client.get(WHOAMI, **bearer(minted.secret))

    assert response.status_code == 200
    assert response.json() == {
        "org": org.id,
        "key": minted.api_key.id,
        "environment": "test",
        "request_id": response["X-Request-Id"],
    }


def test_no_credential_is_missing_api_key(client: Client) -> None:
    assert_401(client.get(WHOAMI), "missing_api_key")


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "Token abc"])
def test_other_schemes_are_missing_api_key(client: Client, header: str) -> None:
    assert_401(client.get(WHOAMI, HTTP_AUTHORIZATION=header), "missing_api_key")


def test_key_in_query_string_is_missing_api_key_and_says_where(client: Client) -> None:
    minted = make_key(make_org())

    error = assert_401(client.get(f"{WHOAMI}?api_key={minted.secret}"), "missing_api_key")

    assert "query parameter" in error["message"]
    assert minted.secret not in error["message"]


def test_key_in_query_string_is_refused_even_beside_a_valid_bearer(client: Client) -> None:
    minted = make_key(make_org())

    response = client.get(f"{WHOAMI}?key={minted.secret}", **bearer(minted.secret))

    assert "query parameter 'key'" in assert_401(response, "missing_api_key")["message"]


@pytest.mark.parametrize("header", ["HTTP_X_API_KEY", "HTTP_API_KEY", "HTTP_X_SVCX_KEY"])
def test_key_in_another_header_is_missing_api_key(client: Client, header: str) -> None:
    minted = make_key(make_org())

    error = assert_401(client.get(WHOAMI, **{header: minted.secret}), "missing_api_key")

    assert "header" in error["message"]


def test_malformed_and_bad_checksum_are_refused_before_any_query(
    client: Client, django_assert_num_queries: object
) -> None:
    minted = make_key(make_org())
    last = minted.secret[-1]
    altered = minted.secret[:-1] + ("A" if last != "A" else "B")

    with django_assert_num_queries(0):
        assert_401(client.get(WHOAMI, **bearer(altered)), "invalid_api_key")
        assert_401(client.get(WHOAMI, **bearer("svcx_sk_live_short")), "invalid_api_key")


def test_live_test_swap_is_invalid(client: Client) -> None:
    minted = make_key(make_org(), "live")

    assert_401(client.get(WHOAMI, **bearer(minted.secret.replace("_live_", "_test_"))), "invalid_api_key")


def test_unknown_well_formed_key_is_invalid(client: Client) -> None:
    assert_401(client.get(WHOAMI, **bearer(keyformat.generate("live"))), "invalid_api_key")


def test_console_token_is_invalid_and_says_so(client: Client) -> None:
    error = assert_401(client.get(WHOAMI, **bearer("svcx_cs_" + "a" * 55)), "invalid_api_key")

    assert "Console session tokens" in error["message"]


def test_revoked_key_is_refused_on_next_request(client: Client) -> None:
    minted = make_key(make_org())
    assert client.get(WHOAMI, **bearer(minted.secret)).status_code == 200

    services.api_key_revoke(api_key=minted.api_key)

    assert_401(client.get(WHOAMI, **bearer(minted.secret)), "revoked_api_key")


def test_expired_key_names_the_replacement_hint(client: Client) -> None:
    minted = make_key(make_org())

    replacement = services.api_key_rotate(api_key=minted.api_key, overlap="immediate")

    error = assert_401(client.get(WHOAMI, **bearer(minted.secret)), "expired_api_key")
    assert replacement.api_key.hint in error["message"]
    assert error["details"]["replacement_hint"] == replacement.api_key.hint
    assert client.get(WHOAMI, **bearer(replacement.secret)).status_code == 200


def test_expired_key_without_replacement_says_create_one(client: Client) -> None:
    minted = make_key(make_org(), expires_at=timezone.now() - timedelta(seconds=1))

    error = assert_401(client.get(WHOAMI, **bearer(minted.secret)), "expired_api_key")

    assert "create a new key" in error["message"]


def test_auth_costs_one_indexed_query(client: Client, django_assert_num_queries: object) -> None:
    minted = make_key(make_org())
    client.get(WHOAMI, **bearer(minted.secret))  # sets last_used_at

    with django_assert_num_queries(2):
        response = client.get(WHOAMI, **bearer(minted.secret))

    assert response.status_code == 200


def test_last_used_at_is_recorded(client: Client) -> None:
    minted = make_key(make_org())

    client.get(WHOAMI, **bearer(minted.secret))

    assert ApiKey.objects.get(pk=minted.api_key.pk).last_used_at is not None


def test_wrong_method_is_405_before_authentication(client: Client) -> None:
    response = client.delete(WHOAMI)

    assert_envelope(response, 405, "method_not_allowed")
    assert response["Allow"] == "GET, HEAD"
