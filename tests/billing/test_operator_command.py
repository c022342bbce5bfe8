"""`python manage.py svcx ...` as decisions.md section 9 describes it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from accounts import keyformat
from accounts.models import ApiKey, AuditEvent, Organization
from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion import engine
from tests.conftest import ROOT, database_url_for_children
from tests.factories import bearer

pytestmark = [pytest.mark.django_db]


def svcx(*args: str) -> Any:
    out = io.StringIO()
    call_command("svcx", *args, stdout=out)
    return json.loads(out.getvalue())


def test_org_create_prints_its_id_and_grants_credits() -> None:
    result = svcx("org", "create", "--name", "Acme", "--credits", "500", "--debug-policy", "disabled")

    assert set(result) == {"id"}
    org = Organization.objects.get(pk=result["id"])
    assert (org.name, org.debug_policy) == ("Acme", "disabled")
    assert credits_get(organization=org, environment="live").balance == 500


def test_org_state_commands_print_the_organization() -> None:
    org_id = svcx("org", "create", "--name", "Acme")["id"]

    assert svcx("org", "suspend", org_id)["status"] == "suspended"
    assert svcx("org", "unsuspend", org_id)["status"] == "active"
    delinquent = svcx("org", "delinquent", org_id, "--debt", "40")
    assert (delinquent["status"], delinquent["delinquent_debt"]) == ("delinquent", 40)
    assert svcx("org", "clear-delinquent", org_id)["status"] == "active"
    limits = svcx("org", "set-limit", org_id, "requests", "5")
    assert limits["limits"]["requests"] == 5
    assert limits["overrides"] == {"requests": 5}


def test_org_set_engine_sets_the_organizations_default_engine() -> None:
    org_id = svcx("org", "create", "--name", "Acme")["id"]

    chosen = svcx("org", "set-engine", org_id, engine.PDFIUM_ENGINE_ID)

    assert chosen["default_engine"] == engine.PDFIUM_ENGINE_ID
    assert Organization.objects.get(pk=org_id).default_engine == engine.PDFIUM_ENGINE_ID
    assert AuditEvent.objects.filter(action="organization.set_default_engine", organization_id=org_id).count() == 1
    assert svcx("org", "set-engine", org_id, "default")["default_engine"] is None
    assert Organization.objects.get(pk=org_id).default_engine == ""
    with pytest.raises(CommandError, match="unknown engine 'docling'"):
        call_command("svcx", "org", "set-engine", org_id, "docling", stdout=io.StringIO())
    assert Organization.objects.get(pk=org_id).default_engine == ""


def test_credits_grant_prints_the_ledger_row() -> None:
    org_id = svcx("org", "create", "--name", "Acme")["id"]

    row = svcx("credits", "grant", org_id, "25")

    assert row["kind"] == "grant"
    assert row["credits"] == 25
    assert row["balance_after"] == 25
    assert LedgerEntry.objects.filter(pk=row["id"]).exists()


def test_key_create_prints_id_key_and_hint_and_the_key_works(client: Client) -> None:
    org_id = svcx("org", "create", "--name", "Acme")["id"]

    result = svcx(
        "key",
        "create",
        "--org",
        org_id,
        "--env",
        "test",
        "--name",
        "ci",
        "--project",
        "p",
        "--preset",
        "read_only",
        "--ip",
        "127.0.0.1",
    )

    assert set(result) == {"id", "key", "hint"}
    assert keyformat.parse(result["key"]).environment == "test"
    key = ApiKey.objects.get(pk=result["id"])
    assert (key.name, key.project, key.scopes, key.ip_allowlist, key.hint) == (
        "ci",
        "p",
        ["files:read", "account:read"],
        ["127.0.0.1/32"],
        result["hint"],
    )
    assert client.get("/v1/account", **bearer(result["key"])).status_code == 200


def test_key_update_rotate_revoke_list_and_confirm_leak() -> None:
    org_id = svcx("org", "create", "--name", "Acme")["id"]
    key_id = svcx("key", "create", "--org", org_id, "--scopes", "convert,inspect")["id"]

    updated = svcx(
        "key", "update", key_id, "--scopes", "convert", "--ip", "10.0.0.0/8", "--expires-at", "2030-01-01T00:00:00Z"
    )
    assert (updated["scopes"], updated["ip_allowlist"], updated["expires_at"]) == (
        ["convert"],
        ["10.0.0.0/8"],
        "2030-01-01T00:00:00.000Z",
    )
    assert "key" not in updated
    assert svcx("key", "update", key_id, "--clear-ips")["ip_allowlist"] == []

    rotated = svcx("key", "rotate", key_id, "--overlap", "24h")
    assert rotated["key"].startswith("svcx_sk_live_")
    assert rotated["replaces"] == key_id

    leak = svcx("key", "confirm-leak", rotated["id"])
    assert set(leak) == {"revoked", "replacement_id", "reveal_url"}
    assert leak["revoked"] == rotated["id"]

    revoked = svcx("key", "revoke", key_id)
    assert revoked["status"] == "revoked"

    listed = svcx("key", "list", "--org", org_id)["data"]
    assert {k["id"] for k in listed} == {key_id, rotated["id"], leak["replacement_id"]}
    assert all("key" not in k and "key_hash" not in k for k in listed)


@pytest.mark.parametrize(
    "args",
    [
        ["key", "create", "--org", "org_missing"],
        ["key", "revoke", "key_missing"],
        ["org", "suspend", "org_missing"],
    ],
)
def test_errors_raise(args: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("svcx", *args, stdout=io.StringIO())


@pytest.mark.django_db(transaction=True)
def test_failure_exits_non_zero_with_the_message_on_stderr() -> None:
    org_id = svcx("org", "create", "--name", "Acme")["id"]
    env = {**os.environ, "DATABASE_URL": database_url_for_children()}

    result = subprocess.run(
        [sys.executable, "manage.py", "svcx", "key", "create", "--org", org_id, "--scopes", "convert,org:admin"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )

    assert result.returncode != 0
    assert result.stdout == ""
    assert "reserved" in result.stderr
    assert not ApiKey.objects.filter(organization_id=org_id).exists()
