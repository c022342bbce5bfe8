"""What an organization spent, where: balances, the 30-day chart (server-rendered SVG), the
statement with filters and CSV, usage records with the filters of GET /v1/usage/records, files."""

from __future__ import annotations

import csv
import io
import itertools
import re
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.paginator import Paginator
from django.utils import timezone

from accounts.models import AuditEvent
from billing.ledger import credits_adjust, credits_capture, credits_grant, credits_hold
from billing.usage import request_log_record, usage_copy
from console.charts import _nice_ceiling, stacked_bars
from console.selectors import DailySeries, StatementFilter, ledger_statement, statement_lines, usage_by_day
from conversion.models import StoredFile
from conversion.store import Store, store
from tests.accounts.test_guards import _address
from tests.console.conftest import signed_in
from tests.console.test_scoping import stored_file
from tests.factories import make_key

pytestmark = [pytest.mark.django_db]


_REQUEST_NUMBERS = itertools.count(1)


def used(org: Any, key: Any, *, days_ago: int, pages: int, credits: int, error: tuple[int, str] = (200, "")) -> None:
    """A request of `key` `days_ago` days ago at noon, in the request log (as the API writes it);
    `error`: the status and error code it answered with."""
    day = timezone.localdate() - timedelta(days=days_ago)
    request_log_record(
        request_id=f"req_test{next(_REQUEST_NUMBERS):020d}",
        organization_id=org.id,
        environment=key.environment,
        api_key_id=key.id,
        method="POST",
        endpoint="/v1/convert",
        status=error[0],
        error_code=error[1],
        pages=pages,
        credits=credits,
        client_ip="192.0.2.1",
        duration_ms=10.0,
        created_at=datetime.combine(day, time(12, 0), tzinfo=timezone.get_current_timezone()),
    )


def test_spending_shows_balance_held_credits_and_the_test_allowance(acme: Any, owner: Any) -> None:
    live, test = make_key(acme).api_key, make_key(acme, "test").api_key
    credits_grant(organization=acme, credits=100, actor_label="test")
    credits_hold(organization=acme, environment="live", api_key_id=live.id, request_id="req_a", pages=7)
    credits_hold(organization=acme, environment="test", api_key_id=test.id, request_id="req_b", pages=3)
    credits_capture(request_id="req_b", pages=3)

    page = signed_in(owner, _address()).get(f"/console/{acme.id}/").content.decode()

    assert "100 credits" in page
    assert "7 held by requests in flight · 93 available" in page
    assert "3 of 5000 pages" in page


def test_usage_by_day_sums_the_last_30_days_by_key_and_by_environment(acme: Any, globex: Any) -> None:
    web, ci = make_key(acme, name="web").api_key, make_key(acme, "test", name="ci").api_key
    used(acme, web, days_ago=0, pages=5, credits=5)
    used(acme, web, days_ago=0, pages=2, credits=2)
    used(acme, web, days_ago=29, pages=4, credits=4)
    used(acme, web, days_ago=30, pages=100, credits=100)  # outside the 30 days
    used(acme, ci, days_ago=3, pages=6, credits=0)
    used(globex, make_key(globex).api_key, days_ago=0, pages=50, credits=50)  # another organization
    usage_copy()

    days, by_key = usage_by_day(organization=acme, metric="pages", by="key")
    _, by_env = usage_by_day(organization=acme, metric="credits", by="environment")

    assert (days[0], days[-1], len(days)) == (timezone.localdate() - timedelta(days=29), timezone.localdate(), 30)
    assert [(s.label, s.total) for s in by_key] == [(f"{web.hint} web", 11), (f"{ci.hint} ci", 6)]
    assert (by_key[0].values[-1], by_key[0].values[0], by_key[1].values[-4]) == (7, 4, 6)
    assert [(s.label, s.total) for s in by_env] == [("live", 11), ("test", 0)]


def test_the_chart_is_an_svg_bar_per_day_and_series_with_a_legend(acme: Any, owner: Any) -> None:
    web, ci = make_key(acme, name="web").api_key, make_key(acme, name="ci").api_key
    used(acme, web, days_ago=0, pages=5, credits=5)
    used(acme, ci, days_ago=0, pages=3, credits=3)
    used(acme, ci, days_ago=1, pages=2, credits=2)
    usage_copy()
    client = signed_in(owner, _address())

    page = client.get(f"/console/{acme.id}/?metric=pages&by=key").content.decode()
    environment = client.get(f"/console/{acme.id}/?metric=credits&by=environment").content.decode()

    assert page.count('<rect class="bar"') == 3
    today = timezone.localdate()
    assert f"<title>{today:%Y-%m-%d} {web.hint} web: 5 pages</title>" in page
    assert f"<title>{today - timedelta(days=1):%Y-%m-%d} {ci.hint} ci: 2 pages</title>" in page
    assert f"{ci.hint} ci: 5 pages" in page
    assert re.findall(r'<(?:script src|link rel="stylesheet" href)="([^"]+)"', page) == [
        "/static/console/console.css",
        "/static/console/console.js",
    ]  # our own static files only: no CDN
    assert environment.count('<rect class="bar"') == 2
    assert "live: 10 credits" in environment


def test_stacked_bars_scale_to_a_nice_ceiling() -> None:
    days = [timezone.localdate() - timedelta(days=1), timezone.localdate()]
    chart = stacked_bars(days=days, series=[DailySeries("a", [3, 0]), DailySeries("b", [4, 1])], unit="pages")

    assert [_nice_ceiling(v) for v in (0, 1, 3, 7, 11, 20, 21)] == [1, 1, 5, 10, 20, 20, 50]
    assert chart.maximum == 10
    assert [(b.height, b.title) for b in chart.bars] == [
        (67.8, f"{days[0]:%Y-%m-%d} a: 3 pages"),
        (90.4, f"{days[0]:%Y-%m-%d} b: 4 pages"),
        (22.6, f"{days[1]:%Y-%m-%d} b: 1 pages"),
    ]
    assert [t.label for t in chart.ticks] == ["0", "5", "10"]
    assert [(e.label, e.total) for e in chart.legend] == [("a", 3), ("b", 5)]


def test_statement_filters_and_exports_the_same_rows_as_csv(acme: Any, member: Any) -> None:
    web = make_key(acme, name="web").api_key
    credits_grant(organization=acme, credits=50, actor_label="test", reason="welcome")
    credits_hold(organization=acme, environment="live", api_key_id=web.id, request_id="req_s1", pages=4)
    credits_capture(request_id="req_s1", pages=4)
    credits_adjust(organization=acme, credits=2, kind="refund", actor_label="staff", reason="goodwill")
    client = signed_in(member, _address())

    everything = client.get(f"/console/{acme.id}/statement/").content.decode()
    captures = client.get(f"/console/{acme.id}/statement/?kind=capture").content.decode()
    exported = client.get(f"/console/{acme.id}/statement.csv?kind=capture&environment=live")
    by_key = list(
        csv.DictReader(
            io.StringIO(client.get(f"/console/{acme.id}/statement.csv?api_key_id={web.id}").content.decode())
        )
    )
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    future = client.get(f"/console/{acme.id}/statement.csv?start={tomorrow}").content.decode()

    # One line per request: the conversion's hold and capture fold into one line that
    # changes the balance by what was spent (-4), its two entries one click away.
    lines = everything.split('<table id="statement">', 1)[1].split("<details", 1)
    conversion = lines[0].rsplit("<tr><td>", 1)[1] + lines[1].split("</details>", 1)[0]
    assert everything.count('<details class="entries">') == 1
    assert ">hold → capture<" in conversion
    assert (
        '<td class="num">-4</td><td class="num">-4</td><td class="num">4</td>' in conversion
    )  # balance, available, pages
    assert conversion.count("<tr><td>") == 2  # the hold and the capture, in the detail
    assert "<td>grant</td>" in everything
    assert "<td>refund</td>" in everything
    assert everything.count("<tr><td>") == 3 + 2  # three lines, two entries in the detail
    assert captures.count("<tr><td>") == 1
    assert exported["Content-Disposition"] == f'attachment; filename="{acme.id}-statement-live.csv"'
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [
        (r["kind"], r["credits"], r["balance_change"], r["available_change"], r["pages"], r["api_key_id"]) for r in rows
    ] == [("capture", "-4", "-4", "0", "4", web.id)]
    assert sorted(r["kind"] for r in by_key) == ["capture", "hold"]
    assert future.splitlines() == [
        "created_at,id,environment,kind,credits,balance_change,available_change,pages,balance_after,request_id,api_key_id,reason"
    ]


def test_usage_records_take_the_filters_of_the_api(acme: Any, member: Any) -> None:
    web, ci = make_key(acme, name="web").api_key, make_key(acme, name="ci").api_key
    test = make_key(acme, "test").api_key
    used(acme, web, days_ago=2, pages=1, credits=1)
    used(acme, ci, days_ago=1, pages=2, credits=2)
    used(acme, test, days_ago=1, pages=9, credits=0)
    usage_copy()
    client = signed_in(member, _address())
    yesterday = timezone.localdate() - timedelta(days=1)

    def records(query: str) -> str:
        """The page's table of records (the filter above it lists the keys too)."""
        page = client.get(f"/console/{acme.id}/usage/{query}").content.decode()
        return page.split('<table id="usage-records">', 1)[1]

    every_live = records("")
    of_web = records(f"?api_key_id={web.id}")
    since = records(f"?start={yesterday}T00:00:00")
    of_test = records("?environment=test")
    bad = client.get(f"/console/{acme.id}/usage/?api_key_id=nonsense").content.decode()

    assert (every_live.count(f"<code>{web.id}</code>"), every_live.count(f"<code>{ci.id}</code>")) == (1, 1)
    assert test.id not in every_live
    assert (of_web.count(f"<code>{web.id}</code>"), ci.id in of_web) == (1, False)
    assert (web.id in since, ci.id in since) == (False, True)
    assert of_test.count(f"<code>{test.id}</code>") == 1
    assert "`api_key_id` must be a key id (key_...); &#x27;nonsense&#x27; is not." in bad


def test_usage_records_show_the_error_code_a_request_answered_with(acme: Any, member: Any) -> None:
    web = make_key(acme, name="web").api_key
    used(acme, web, days_ago=1, pages=3, credits=3)
    used(acme, web, days_ago=0, pages=0, credits=0, error=(422, "pdf_encrypted"))
    usage_copy()
    client = signed_in(member, _address())

    page = client.get(f"/console/{acme.id}/usage/").content.decode()

    rows = page.split('<table id="usage-records">', 1)[1].split("<tbody>", 1)[1].split("</tr>")
    assert '<a href="/docs/errors/pdf_encrypted"><code>pdf_encrypted</code></a>' in rows[0]  # newest first
    assert "<td>–</td>" in rows[1]
    # Keys by name: in the rows, and in the filter's picker.
    assert f"<td>web<br><code>{web.id}</code></td>" in rows[0]
    assert f'<option value="{web.id}">web · live · {web.hint}</option>' in page


def test_owner_deletes_a_stored_file_and_a_member_cannot(acme: Any, owner: Any, member: Any, three_pages: Path) -> None:
    minted = make_key(acme)
    record = stored_file(acme, minted, three_pages)
    as_member, as_owner = signed_in(member, _address()), signed_in(owner, _address())

    listing = as_member.get(f"/console/{acme.id}/files/").content.decode()
    assert record.id in listing
    assert f"{record.expires_at:%Y-%m-%d %H:%M} UTC" in listing
    size = three_pages.stat().st_size
    assert f"{size / 1024:.1f}" in listing  # filesizeformat: KB with one decimal
    assert as_member.post(f"/console/{acme.id}/files/{record.id}/delete/").status_code == 403
    assert StoredFile.objects.get(pk=record.pk).deleted_at is None

    done = as_owner.post(f"/console/{acme.id}/files/{record.id}/delete/", follow=True).content.decode()

    assert "Deleted x.pdf." in done
    assert record.id not in done.split("</ul>", 1)[1]
    assert StoredFile.objects.get(pk=record.pk).deleted_at is not None
    assert not store(Store.FILES).exists(record.storage_name)
    assert AuditEvent.objects.get(action="file.delete").actor == owner


def test_chart_day_labels_fit_inside_the_drawing() -> None:
    last = timezone.localdate()
    days = [last - timedelta(days=29 - i) for i in range(30)]

    chart = stacked_bars(days=days, series=[], unit="pages")

    assert [(d.label, d.anchor) for d in chart.days][-2:] == [
        (f"{days[25]:%b %-d}", "middle"),
        (f"{last:%b %-d}", "end"),
    ]
    assert len(chart.days) == 7  # every fifth day (0, 5, ..., 25) and the last
    assert chart.days[-1].x == chart.width
    assert (chart.bars, chart.legend, chart.maximum) == ([], [], 1)


def test_usage_records_page_on_with_starting_after_and_a_key_links_to_its_own(acme: Any, member: Any) -> None:
    web = make_key(acme, name="web").api_key
    for _ in range(52):
        used(acme, web, days_ago=1, pages=1, credits=1)
    usage_copy()
    client = signed_in(member, _address())

    first = client.get(f"/console/{acme.id}/usage/").content.decode()
    older = re.search(r'<a href="\?([^"]+)">Older records</a>', first).group(1).replace("&amp;", "&")
    second = client.get(f"/console/{acme.id}/usage/?{older}").content.decode()
    key_page = client.get(f"/console/{acme.id}/keys/{web.id}/").content.decode()

    shown = re.findall(r"<code>(req_test\d+)</code>", first) + re.findall(r"<code>(req_test\d+)</code>", second)
    assert (len(shown), len(set(shown))) == (52, 52)
    assert "Older records" not in second
    assert f'href="/console/{acme.id}/usage/?environment=live&amp;api_key_id={web.id}"' in key_page


def statement_rows(org: Any) -> Any:
    return ledger_statement(organization=org, filters=StatementFilter())


def test_a_request_split_over_two_pages_is_one_line_on_the_page_of_its_newest_entry(acme: Any) -> None:
    web = make_key(acme, name="web").api_key
    credits_grant(organization=acme, credits=50, actor_label="test")
    credits_hold(organization=acme, environment="live", api_key_id=web.id, request_id="req_p1", pages=3)
    credits_capture(request_id="req_p1", pages=3)
    rows = statement_rows(acme)
    pages = Paginator(rows, 1)

    first, second, third = (statement_lines(rows, list(pages.page(n))) for n in (1, 2, 3))

    assert [(line.what, line.balance_change, line.available_change) for line in first] == [("hold → capture", -3, -3)]
    assert second == []  # the hold: shown with its capture on page 1
    assert [line.what for line in third] == ["grant"]
