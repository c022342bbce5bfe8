"""OCR in version 2 jobs over HTTP with a real worker: the options `ocr` and `ocr_languages`
and their refusals (version 1 still refuses OCR), the pre-flight POST /v2/inspect, and the price
of a page read by OCR, held at creation and captured, itemised, for what the result read.

One scanned document serves every test: a text page and a scan of a report page (the
engine's OCR tests make it), each job two pages."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from billing.limits import MeterName
from billing.meters import OrgScope, meter_peek
from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion.models import Job
from tests.conftest import WorkerProcess, start_worker
from tests.conversion.engine.pdfs import Image, lines, make_pdf
from tests.conversion.engine.test_ocr import BODY, TEXT_PAGE, found_share, mixed_scan, needs_tesseract
from tests.conversion.test_async_jobs import job_settings
from tests.conversion.test_jobs_api import wait_done, workers
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True), needs_tesseract]
__all__ = ["job_settings", "workers"]  # fixtures (the module's worker of every queue: jobs_api's)

RAW = "application/pdf"


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Page 1: a text layer (TEXT_PAGE); page 2: a scan without one (the report page)."""
    return mixed_scan(tmp_path_factory.mktemp("scanned"))


@pytest.fixture
def account(workers: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "secret": make_key(org).secret}


def estimate(client: Client, secret: str, pdf: Path, query: str) -> dict[str, Any]:
    answer = client.post(f"/v2/inspect/raw?{query}", data=pdf.read_bytes(), content_type=RAW, **bearer(secret))
    assert answer.status_code == 200, answer.content
    found: dict[str, Any] = answer.json()["estimate"]
    return found


def ledger(job_id: str) -> list[tuple[str, int, int, dict[str, int]]]:
    rows = LedgerEntry.objects.filter(request_id=job_id).values_list("kind", "credits", "pages", "details")
    return sorted(rows)


def test_auto_reads_the_scanned_page_and_bills_it_as_the_pre_flight_said(
    client: Client, account: dict[str, Any], scanned: Path
) -> None:
    secret = account["secret"]
    predicted = estimate(client, secret, scanned, "ocr=auto")
    assert predicted == {
        "pages": 2,
        "ocr_pages": 1,
        "upper_bound": False,
        "credits": 4,
        "credits_per_page": 1,
        "credits_per_ocr_page": 3,
        "plan": [{"page": 1, "ocr": False}, {"page": 2, "ocr": True}],
    }

    created = client.post(
        "/v2/jobs/raw?ocr=auto&ocr_languages=en", data=scanned.read_bytes(), content_type=RAW, **bearer(secret)
    )

    assert created.status_code == 202, created.content
    job = created.json()
    assert (job["credits_held"], job["ocr_pages"], job["warnings"]) == (predicted["credits"], 1, [])
    assert (job["options"]["ocr"], job["options"]["ocr_languages"]) == ("auto", ["en"])
    done = wait_done(client, secret, job["id"], timeout=120)
    assert (done["status"], done["pages_billed"], done["ocr_pages"], done["credits_billed"]) == ("succeeded", 2, 1, 4)
    assert client.get(f"/v2/jobs/{job['id']}", **bearer(secret)).json()["options"]["ocr"] == "auto"
    first, second = client.get(f"/v2/jobs/{job['id']}/result", **bearer(secret)).json()["pages"]
    assert first["markdown"] == TEXT_PAGE
    assert all("source" not in e for e in first["elements"])
    assert found_share(" ".join(BODY), second["markdown"]) >= 0.9
    assert second["elements"]
    assert all(e["source"] == "ocr" and 0 < e["confidence"] <= 1 for e in second["elements"])
    itemised = {"ocr_pages": 1, "ocr_page_credits": 3}
    assert ledger(job["id"]) == [("capture", -4, 2, itemised), ("hold", -4, 2, itemised)]
    assert credits_get(organization=account["org"], environment="live").balance == 96
    statement = client.get("/v1/credits/ledger", **bearer(secret)).json()["data"]
    assert {row["kind"]: row["details"] for row in statement if row["request_id"] == job["id"]} == {
        "hold": itemised,
        "capture": itemised,
    }


def test_off_leaves_the_scan_empty_and_bills_text_pages(client: Client, account: dict[str, Any], scanned: Path) -> None:
    secret = account["secret"]
    assert estimate(client, secret, scanned, "ocr=off")["credits"] == 2

    created = client.post("/v2/jobs/raw", data=scanned.read_bytes(), content_type=RAW, **bearer(secret))

    job = created.json()
    assert (created.status_code, job["credits_held"], job["ocr_pages"], job["options"]["ocr"]) == (202, 2, 0, "off")
    done = wait_done(client, secret, job["id"], timeout=120)
    assert (done["status"], done["credits_billed"], done["ocr_pages"]) == ("succeeded", 2, 0)
    second = client.get(f"/v2/jobs/{job['id']}/result", **bearer(secret)).json()["pages"][1]
    assert (second["markdown"], second["has_text_layer"]) == ("", False)
    assert "no text layer" in second["warnings"][0]
    assert ledger(job["id"]) == [("capture", -2, 2, {}), ("hold", -2, 2, {})]


def test_force_reads_the_text_page_too(client: Client, account: dict[str, Any], scanned: Path) -> None:
    secret = account["secret"]
    predicted = estimate(client, secret, scanned, "ocr=force&pages=1")
    assert (predicted["ocr_pages"], predicted["credits"], predicted["plan"]) == (1, 3, [{"page": 1, "ocr": True}])
    stored = client.post("/v1/files", data=scanned.read_bytes(), content_type=RAW, **bearer(secret)).json()

    created = client.post(
        "/v2/jobs",
        data={"file_id": stored["id"], "options": {"pages": "1", "ocr": "force", "ocr_languages": ["en", "en"]}},
        content_type="application/json",
        **bearer(secret),
    )

    job = created.json()
    assert (created.status_code, job["credits_held"], job["options"]["ocr_languages"]) == (202, 3, ["en"])
    done = wait_done(client, secret, job["id"], timeout=120)
    assert (done["status"], done["ocr_pages"], done["credits_billed"]) == ("succeeded", 1, 3)
    (page,) = client.get(f"/v2/jobs/{job['id']}/result", **bearer(secret)).json()["pages"]
    assert found_share(TEXT_PAGE, page["markdown"]) >= 0.8
    assert all(e["source"] == "ocr" for e in page["elements"])


def test_without_the_credits_of_the_ocr_pages_nothing_is_created(
    client: Client, workers: WorkerProcess, scanned: Path
) -> None:
    poor = make_org(credits=3)  # enough for 2 text pages, not for 1 text page and 1 read by OCR
    secret = make_key(poor).secret

    error = assert_envelope(
        client.post("/v2/jobs/raw?ocr=auto", data=scanned.read_bytes(), content_type=RAW, **bearer(secret)),
        402,
        "insufficient_credits",
    )

    assert (error["details"]["credits_required"], error["details"]["credits_available"]) == (4, 3)
    assert not Job.objects.filter(organization=poor).exists()
    assert credits_get(organization=poor, environment="live").held == 0


def test_the_pages_the_estimate_parses_count_against_the_daily_sample_pages(
    client: Client, account: dict[str, Any], scanned: Path
) -> None:
    org, secret = account["org"], account["secret"]
    sampled = OrgScope(organization=org, environment="live")

    estimate(client, secret, scanned, "ocr=off")
    assert meter_peek(sampled, MeterName.INSPECT_SAMPLE_PAGES).used == 2  # the text samples of v1's inspect

    estimate(client, secret, scanned, "ocr=auto")
    # 2 more samples, and the 2 pages the plan parsed: the scan and the page of one short line
    # (a page of plain text passes the first look unparsed and is not counted).
    assert meter_peek(sampled, MeterName.INSPECT_SAMPLE_PAGES).used == 2 + 4


@pytest.fixture(scope="module")
def hurried(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[WorkerProcess, str]]:
    """A worker of the interactive queue whose pre-flights stop after 1 s, on queues no other
    worker reads (its queue prefix)."""
    prefix = f"hurried{time.monotonic_ns()}-"
    with django_db_blocker.unblock():
        worker = start_worker(
            tmp_path_factory.mktemp("hurried"),
            queues=f"{prefix}convert,{prefix}convert_test",
            env={"SVCX_CONVERSION_TIME_LIMIT": "1s"},
        )
    yield worker, prefix
    worker.stop()


@pytest.fixture(scope="module")
def covered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 pages of prose each over a full-page picture: every one is parsed to be sure (more
    than a second's work), and none is read by OCR (the text is visible)."""
    page = [Image(0, 0, 612, 792), *lines(72, 760, [f"Line {i} of prose over a picture." for i in range(50)])]
    return make_pdf(tmp_path_factory.mktemp("covered") / "covered.pdf", [page] * 400)


def test_a_pre_flight_out_of_time_counts_the_rest_as_ocr_pages_and_says_it_is_an_upper_bound(
    client: Client, settings: Any, hurried: tuple[WorkerProcess, str], covered: Path
) -> None:
    settings.SVCX_QUEUE_PREFIX = hurried[1]
    secret = make_key(make_org(credits=2000)).secret

    inspected = client.post("/v2/inspect/raw?ocr=auto", data=covered.read_bytes(), content_type=RAW, **bearer(secret))

    assert inspected.status_code == 200, inspected.content
    found = inspected.json()
    unexamined = found["estimate"]["ocr_pages"]
    assert found["estimate"]["upper_bound"] is True
    assert 0 < unexamined <= 400
    assert found["estimate"]["credits"] == 400 + 2 * unexamined
    assert any("upper bound" in w for w in found["warnings"])
    created = client.post("/v2/jobs/raw?ocr=auto", data=covered.read_bytes(), content_type=RAW, **bearer(secret))
    assert created.status_code == 202, created.content
    job = created.json()
    assert job["ocr_pages"] > 0
    assert job["credits_held"] == 400 + 2 * job["ocr_pages"]
    (warning,) = job["warnings"]
    assert f"the {job['ocr_pages']} pages counted as read by OCR are an upper bound" in warning
    assert client.post(f"/v2/jobs/{job['id']}/cancel", **bearer(secret)).status_code == 200


@pytest.mark.parametrize(
    ("options", "status", "code", "param"),
    [
        ({"ocr": "sometimes"}, 400, "unsupported_option_value", "options.ocr"),
        ({"ocr": "auto", "ocr_languages": "en"}, 400, "invalid_parameter_type", "options.ocr_languages"),
        ({"ocr": "auto", "ocr_languages": ["en", 7]}, 400, "invalid_parameter_type", "options.ocr_languages[1]"),
        ({"ocr": "auto", "ocr_languages": ["en", "xx"]}, 400, "ocr_language_not_available", "options.ocr_languages[1]"),
        ({"ocr": "auto", "ocr_languages": []}, 400, "unsupported_option_value", "options.ocr_languages"),
        ({"ocr_language": ["en"]}, 400, "unknown_parameter", "options.ocr_language"),
    ],
)
def test_ocr_options_are_refused_with_their_code_and_path(
    client: Client, options: dict[str, Any], status: int, code: str, param: str
) -> None:
    secret = make_key(make_org(credits=10)).secret
    for path in ("/v2/jobs", "/v2/inspect"):
        error = assert_envelope(
            client.post(
                path, data={"file_id": "file_x", "options": options}, content_type="application/json", **bearer(secret)
            ),
            status,
            code,
        )
        assert error["param"] == param
    if code == "unsupported_option_value":
        assert error["details"]["accepted"]


def test_the_raw_query_string_takes_comma_separated_languages_and_names_the_parameter(client: Client) -> None:
    secret = make_key(make_org(credits=10)).secret
    for query, code, param in (
        ("ocr=sometimes", "unsupported_option_value", "ocr"),
        ("ocr=auto&ocr_languages=en,xx", "ocr_language_not_available", "ocr_languages"),
    ):
        error = assert_envelope(
            client.post(f"/v2/jobs/raw?{query}", data=b"%PDF-1.4", content_type=RAW, **bearer(secret)), 400, code
        )
        assert error["param"] == param
    assert error["details"] == {"language": "xx", "installed": error["details"]["installed"]}
    assert "en" in error["details"]["installed"]


def test_version_1_still_refuses_ocr(client: Client) -> None:
    secret = make_key(make_org(credits=10)).secret
    body = {"file_id": "file_x", "options": {"ocr": "auto"}}
    for path in ("/v1/convert", "/v1/inspect"):
        error = assert_envelope(
            client.post(path, data=body, content_type="application/json", **bearer(secret)), 400, "ocr_not_available"
        )
        assert error["param"] == "options.ocr"
    error = assert_envelope(
        client.post("/v1/convert?ocr=force", data=b"%PDF-1.4", content_type=RAW, **bearer(secret)),
        400,
        "ocr_not_available",
    )
    assert error["param"] == "ocr"
    languages = {"file_id": "file_x", "options": {"ocr_languages": ["en"]}}
    error = assert_envelope(
        client.post("/v1/convert", data=languages, content_type="application/json", **bearer(secret)),
        400,
        "unknown_parameter",
    )
    assert error["param"] == "options.ocr_languages"
    error = assert_envelope(
        client.post("/v1/convert?ocr_languages=en", data=b"%PDF-1.4", content_type=RAW, **bearer(secret)),
        400,
        "unknown_parameter",
    )


def test_ocr_where_it_is_not_installed_is_refused(
    client: Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))  # no traineddata: OCR is not available
    secret = make_key(make_org(credits=10)).secret

    error = assert_envelope(
        client.post(
            "/v2/jobs",
            data={"file_id": "file_x", "options": {"ocr": "auto"}},
            content_type="application/json",
            **bearer(secret),
        ),
        400,
        "ocr_not_available",
    )

    assert error["param"] == "options.ocr"
    off = client.post(
        "/v2/jobs",
        data={"file_id": "file_x", "options": {"ocr": "off"}},
        content_type="application/json",
        **bearer(secret),
    )
    assert_envelope(off, 404, "file_not_found")  # off is accepted: the file is looked for next
