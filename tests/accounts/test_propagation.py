"""Revocation and suspension seen by a second web process on its very next request."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from accounts import services
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]


def _status(url: str, secret: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {secret}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, ""
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())["error"]["code"]


def test_revocation_is_seen_by_another_process_on_the_next_request(web_process: str) -> None:
    minted = make_key(make_org())
    # Warm both web processes so any per-process state would exist.
    for _ in range(6):
        assert _status(web_process + "/v1/account", minted.secret) == (200, "")

    services.api_key_revoke(api_key=minted.api_key)

    for _ in range(6):
        assert _status(web_process + "/v1/account", minted.secret) == (401, "revoked_api_key")


def test_suspension_is_seen_by_another_process_on_the_next_request(web_process: str) -> None:
    org = make_org()
    minted = make_key(org)
    for _ in range(6):
        assert _status(web_process + "/v1/account", minted.secret)[0] == 200

    services.organization_suspend(organization=org)

    for _ in range(6):
        assert _status(web_process + "/v1/account", minted.secret) == (403, "account_suspended")
