"""GET /v1/account, /v1/credits/ledger, /v1/usage, /v1/usage/records through HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from billing.ledger import credits_capture, credits_hold
from billing.models import RequestLog, UsageRecord
from billing.usage import usage_copy
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db]


def test_account_reports_credits_allowance_and_limits(client: Client) -> None:
    org = make_org("Acme", credits=50)
    minted = make_key(org)
    credits_hold(organization=org, environment="live", api_key_id=minted.api_key.id, request_id="req_h", pages=8)

    body = client.get("/v1/account", **bearer(minted.secret)).json()

    assert body["object"] == "account"
    assert (body["id"], body["name"], body["status"], body["environment"]) == (org.id, "Acme", "active", "live")
    assert body["credits"] == {"balance": 50, "held": 8, "available": 42}
    assert body["test_allowance"]["limit"] == 5000
    assert body["test_allowance"]["resets_at"].endswith("-01T00:00:00Z")
    assert body["limits"]["requests"] == 600
    assert body["limits"]["concurrency"] == 8


def test_test_key_sees_the_test_environment(client: Client) -> None:
    org = make_org(credits=50)
    minted = make_key(org, "test")

    body = client.get("/v1/account", **bearer(minted.secret)).json()

    assert body["environment"] == "test"
    assert body["credits"] == {"balance": 0, "held": 0, "available": 0}


def test_ledger_lists_newest_first_with_cursor_pagination(client: Client) -> None:
    org = make_org(credits=100)
    minted = make_key(org)
    for i in range(3):
        credits_hold(organization=org, environment="live", api_key_id=minted.api_key.id, request_id=f"req_{i}", pages=2)
        credits_capture(request_id=f"req_{i}", pages=1)
    # grant + 3 x (hold, capture, release) = 10 rows

    first = client.get("/v1/credits/ledger?limit=4", **bearer(minted.secret)).json()
    second = client.get(
        f"/v1/credits/ledger?limit=4&starting_after={first['data'][-1]['id']}", **bearer(minted.secret)
    ).json()
    third = client.get(
        f"/v1/credits/ledger?limit=4&starting_after={second['data'][-1]['id']}", **bearer(minted.secret)
    ).json()

    assert (first["object"], first["has_more"], second["has_more"], third["has_more"]) == ("list", True, True, False)
    rows = first["data"] + second["data"] + third["data"]
    assert len(rows) == 10
    assert len({r["id"] for r in rows}) == 10
    assert [r["created_at"] for r in rows] == sorted((r["created_at"] for r in rows), reverse=True)
    assert rows[-1]["kind"] == "grant"
    assert rows[0]["kind"] in {"capture", "release"}
    assert all(r["id"].startswith("led_") for r in rows)
    capture = next(r for r in rows if r["kind"] == "capture")
    assert (capture["credits"], capture["api_key_id"], capture["request_id"]) == (
        -1,
        minted.api_key.id,
        capture["request_id"],
    )
    assert set(capture) >= {"id", "created_at", "kind", "credits", "balance_after", "request_id", "api_key_id"}


def test_ledger_is_isolated_by_environment_and_organization(client: Client) -> None:
    org = make_org(credits=100)
    other = make_org(credits=7)
    live, test = make_key(org), make_key(org, "test")
    credits_hold(organization=org, environment="test", api_key_id=test.api_key.id, request_id="req_t", pages=1)

    live_rows = client.get("/v1/credits/ledger", **bearer(live.secret)).json()["data"]
    test_rows = client.get("/v1/credits/ledger", **bearer(test.secret)).json()["data"]
    other_rows = client.get("/v1/credits/ledger", **bearer(make_key(other).secret)).json()["data"]

    assert [r["kind"] for r in live_rows] == ["grant"]
    assert [r["kind"] for r in test_rows] == ["hold"]
    assert [r["credits"] for r in other_rows] == [7]


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=ten"])
def test_bad_limit_is_invalid_parameter_type(client: Client, query: str) -> None:
    minted = make_key(make_org())

    error = assert_envelope(
        client.get(f"/v1/credits/ledger?{query}", **bearer(minted.secret)), 400, "invalid_parameter_type"
    )

    assert error["param"] == "limit"


def test_unknown_query_parameter_is_refused(client: Client) -> None:
    minted = make_key(make_org())

    error = assert_envelope(
        client.get("/v1/credits/ledger?colour=red", **bearer(minted.secret)), 400, "unknown_parameter"
    )

    assert error["param"] == "colour"


@pytest.mark.parametrize(
    ("query", "param", "message"),
    [
        ("limit=ten", "limit", "limit must be an integer from 1 to 100, got 'ten'."),
        ("limit=", "limit", "limit must be an integer from 1 to 100, got ''."),
        (
            "start=2026-13-01",
            "start",
            "start must be an ISO 8601 timestamp such as 2026-01-31T00:00:00Z, got '2026-13-01'.",
        ),
        ("end=soon&limit=0", "limit", "limit must be an integer from 1 to 100, got '0'."),
        (
            "limit=5&colour=red&start=x",
            "colour",
            "Unknown query parameter 'colour'; accepted: api_key_id, end, limit, start, starting_after.",
        ),
    ],
)
def test_query_parameter_errors_name_the_parameter_in_order(
    client: Client, query: str, param: str, message: str
) -> None:
    minted = make_key(make_org())

    response = client.get(f"/v1/usage/records?{query}", **bearer(minted.secret))

    error = assert_envelope(response, 400, "unknown_parameter" if param == "colour" else "invalid_parameter_type")
    assert (error["param"], error["message"]) == (param, message)


def test_an_empty_timestamp_means_none_and_a_bare_date_its_midnight(client: Client) -> None:
    minted = make_key(make_org())

    assert client.get("/v1/usage/records?start=&end=", **bearer(minted.secret)).status_code == 200
    assert client.get("/v1/usage?start=2026-01-01", **bearer(minted.secret)).status_code == 200


def test_an_endpoint_without_query_parameters_accepts_none(client: Client) -> None:
    minted = make_key(make_org())

    error = assert_envelope(client.get("/v1/account?x=1", **bearer(minted.secret)), 400, "unknown_parameter")

    assert (error["param"], error["message"]) == ("x", "Unknown query parameter 'x'; accepted: none.")


@pytest.mark.parametrize(
    ("path", "query", "param"),
    [
        ("/v1/credits/ledger", "starting_after=led_%00x", "starting_after"),
        ("/v1/credits/ledger", "starting_after=led_DoesNotExist", "starting_after"),
        ("/v1/credits/ledger", "starting_after=use_WrongList", "starting_after"),
        ("/v1/usage/records", "starting_after=use_%00", "starting_after"),
        ("/v1/usage/records", "starting_after=garbage", "starting_after"),
        ("/v1/usage/records", "api_key_id=key_%00", "api_key_id"),
    ],
)
def test_a_cursor_or_key_id_that_names_no_row_is_400_not_an_empty_page(
    client: Client, path: str, query: str, param: str
) -> None:
    # A mistyped cursor must not look like the end of the list; NUL must not reach the database.
    minted = make_key(make_org(credits=5))

    error = assert_envelope(client.get(f"{path}?{query}", **bearer(minted.secret)), 400, "invalid_parameter_type")

    assert error["param"] == param


def _logged(client: Client, secret: str, count: int) -> None:
    for _ in range(count):
        client.get("/v1/account", **bearer(secret))


def test_usage_records_come_from_the_request_log_copy(client: Client) -> None:
    org = make_org()
    a, b = make_key(org), make_key(org)
    _logged(client, a.secret, 3)
    _logged(client, b.secret, 2)

    before_copy = client.get("/v1/usage/records", **bearer(a.secret)).json()
    copied = usage_copy()
    after_copy = client.get("/v1/usage/records", **bearer(a.secret)).json()
    only_b = client.get(f"/v1/usage/records?api_key_id={b.api_key.id}", **bearer(a.secret)).json()

    assert before_copy["data"] == []  # the reporting copy lags until the copy job runs
    assert copied == 6  # 5 requests plus the records request itself
    rows = after_copy["data"]
    assert len(rows) == 6
    assert set(rows[0]) == {
        "id",
        "object",
        "request_id",
        "api_key_id",
        "endpoint",
        "status",
        "pages",
        "credits",
        "created_at",
    }
    assert {r["api_key_id"] for r in only_b["data"]} == {b.api_key.id}
    assert len(only_b["data"]) == 2
    assert usage_copy() == 2  # running again copies only the two requests made since
    assert UsageRecord.objects.count() == 8


def test_usage_records_filter_by_time(client: Client) -> None:
    minted = make_key(make_org())
    _logged(client, minted.secret, 2)
    RequestLog.objects.filter(pk=RequestLog.objects.order_by("id").first().pk).update(
        created_at=timezone.now() - timedelta(days=3)
    )
    usage_copy()
    start = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")

    recent = client.get(f"/v1/usage/records?start={start}", **bearer(minted.secret)).json()["data"]
    old = client.get(f"/v1/usage/records?end={start}", **bearer(minted.secret)).json()["data"]

    assert len(recent) == 1
    assert len(old) == 1


@pytest.mark.parametrize("param", ["start", "end"])
def test_unparsable_timestamp_is_invalid_parameter_type(client: Client, param: str) -> None:
    minted = make_key(make_org())

    error = assert_envelope(
        client.get(f"/v1/usage/records?{param}=yesterday", **bearer(minted.secret)), 400, "invalid_parameter_type"
    )

    assert error["param"] == param


def test_usage_totals_by_day_with_as_of(client: Client) -> None:
    minted = make_key(make_org())
    _logged(client, minted.secret, 4)
    assert client.get("/v1/usage", **bearer(minted.secret)).json()["as_of"] is None

    usage_copy()
    body = client.get("/v1/usage", **bearer(minted.secret)).json()

    assert body["object"] == "usage"
    assert body["as_of"].endswith("Z")
    assert body["data"] == [{"date": timezone.now().date().isoformat(), "requests": 5, "pages": 0, "credits": 0}]


def test_usage_is_isolated_by_environment(client: Client) -> None:
    org = make_org()
    live, test = make_key(org), make_key(org, "test")
    _logged(client, live.secret, 3)
    usage_copy()

    assert client.get("/v1/usage/records", **bearer(test.secret)).json()["data"] == []
