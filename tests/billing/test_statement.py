"""GET /v1/credits/ledger reads like a statement: conversions through HTTP and a real worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from billing.ledger import credits_adjust
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import Text, make_pdf
from tests.factories import bearer, make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]


def credits_of(client: Client, secret: str) -> dict[str, int]:
    body: dict[str, int] = client.get("/v1/account", **bearer(secret)).json()["credits"]
    return body


def statement(client: Client, secret: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = client.get("/v1/credits/ledger?limit=100", **bearer(secret)).json()["data"]
    return rows


def convert(client: Client, secret: str, pdf: Path, query: str = "") -> Any:
    return client.post(f"/v1/convert{query}", data=pdf.read_bytes(), content_type="application/pdf", **bearer(secret))


def test_statement_sums_to_the_change_of_balance_and_available(
    client: Client, session_worker: WorkerProcess, three_pages: Path, tmp_path: Path
) -> None:
    # Given an organization with 100 credits, its opening figures and statement
    org = make_org(credits=100)
    secret = make_key(org).secret
    opening = credits_of(client, secret)
    opened_with = {row["id"] for row in statement(client, secret)}
    no_text = make_pdf(tmp_path / "mixed.pdf", [[Text(72, 700, "Words here.")], []])

    # When it converts 3 pages (billed), fails one conversion (held, then released) and
    # converts 2 selected pages, and staff refund 4 credits
    assert convert(client, secret, three_pages).status_code == 200
    assert convert(client, secret, no_text, "?fallback=error").status_code == 422
    assert convert(client, secret, three_pages, "?pages=2-3").status_code == 200
    credits_adjust(organization=org, credits=4, kind="refund", actor_label="staff", reason="goodwill")

    # Then the rows since opening sum to the change of each figure, and the conversion's
    # hold and capture count once
    closing = credits_of(client, secret)
    rows = [row for row in statement(client, secret) if row["id"] not in opened_with]
    assert sorted(row["kind"] for row in rows) == ["capture", "capture", "hold", "hold", "hold", "refund", "release"]
    assert closing == {"balance": 100 - 3 - 2 + 4, "held": 0, "available": 99}
    assert sum(row["balance_change"] for row in rows) == closing["balance"] - opening["balance"] == -1
    assert sum(row["available_change"] for row in rows) == closing["available"] - opening["available"] == -1
    assert sum(row["credits"] for row in rows) != -1  # why `credits` is not the column to sum


def test_each_kind_moves_balance_or_available_as_documented(
    client: Client, session_worker: WorkerProcess, three_pages: Path, tmp_path: Path
) -> None:
    org = make_org(credits=10)
    secret = make_key(org).secret
    no_text = make_pdf(tmp_path / "mixed.pdf", [[Text(72, 700, "Words here.")], []])

    convert(client, secret, three_pages)
    convert(client, secret, no_text, "?fallback=error")

    moves = {
        (row["kind"], row["credits"]): (row["balance_change"], row["available_change"], row["balance_after"])
        for row in statement(client, secret)
    }
    assert moves == {
        ("grant", 10): (10, 10, 10),
        ("hold", -3): (0, -3, 10),
        ("capture", -3): (-3, 0, 7),
        ("hold", -2): (0, -2, 7),
        ("release", 2): (0, 2, 7),
    }


def test_test_key_rows_move_no_credits(client: Client, session_worker: WorkerProcess, three_pages: Path) -> None:
    org = make_org(credits=10)
    secret = make_key(org, "test").secret

    assert convert(client, secret, three_pages).status_code == 200

    rows = statement(client, secret)
    assert sorted((r["kind"], r["pages"], r["balance_change"], r["available_change"]) for r in rows) == [
        ("capture", 3, 0, 0),
        ("hold", 3, 0, 0),
    ]
    assert credits_of(client, secret) == {"balance": 0, "held": 0, "available": 0}
