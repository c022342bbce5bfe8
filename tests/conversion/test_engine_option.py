"""The option `engine`: a request chooses the engine that converts it (GET /v1/engines lists
them), by `options.engine` in a body or the query parameter `engine` of a raw PDF; the result
names it; an unknown engine is engine_not_found; answers without the option are unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from accounts.services import organization_set_default_engine
from conversion import engine
from conversion.models import ConversionJob
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import Text, lines, make_pdf
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]

PROSE = ["The committee met on a Tuesday to review the plans that the staff", "had drawn up over the winter."]


@pytest.fixture(autouse=True)
def pdfium_offered(settings: Any) -> None:
    settings.SVCX_PDFIUM_ENGINE = True


@pytest.fixture
def account(session_worker: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "key": make_key(org)}


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    return make_pdf(tmp_path / "a.pdf", [[Text(72, 740, "Plans for the winter", 18, "B"), *lines(72, 700, PROSE)]])


def test_a_raw_pdf_chooses_the_pdfium_engine_by_query_parameter(
    client: Client, account: dict[str, Any], pdf: Path
) -> None:
    secret = account["key"].secret
    default = client.post("/v1/convert/raw", data=pdf.read_bytes(), content_type="application/pdf", **bearer(secret))
    chosen = client.post(
        f"/v1/convert/raw?engine={engine.PDFIUM_ENGINE_ID}",
        data=pdf.read_bytes(),
        content_type="application/pdf",
        **bearer(secret),
    )

    assert (default.status_code, chosen.status_code) == (200, 200)
    assert default.json()["engine"] == {"id": engine.ENGINE_ID, "version": engine.ENGINE_VERSION}
    assert chosen.json()["engine"] == {"id": engine.PDFIUM_ENGINE_ID, "version": engine.PDFIUM_ENGINE_VERSION}
    # Not the default's cached answer: a conversion of its own, by the engine asked for.
    assert chosen.json()["cached"] is False
    assert chosen.json()["markdown"] == default.json()["markdown"]
    jobs = ConversionJob.objects.filter(organization=account["org"]).order_by("created_at")
    assert [j.options.get("engine") for j in jobs] == [None, engine.PDFIUM_ENGINE_ID]


def test_a_multipart_body_chooses_the_engine_in_its_options(client: Client, account: dict[str, Any], pdf: Path) -> None:
    response = client.post(
        "/v1/convert",
        {"file": pdf.open("rb"), "options": json.dumps({"engine": engine.PDFIUM_ENGINE_ID})},
        **bearer(account["key"].secret),
    )

    assert response.status_code == 200
    body = response.json()
    assert body["engine"]["id"] == engine.PDFIUM_ENGINE_ID
    assert body["markdown"].startswith("## Plans for the winter\n\nThe committee met")


def test_an_unknown_engine_is_engine_not_found_before_any_work(
    client: Client, account: dict[str, Any], pdf: Path
) -> None:
    refused = client.post(
        "/v1/convert/raw?engine=docling",
        data=pdf.read_bytes(),
        content_type="application/pdf",
        **bearer(account["key"].secret),
    )

    error = assert_envelope(refused, 404, "engine_not_found")
    assert (error["param"], error["details"]) == ("engine", {"accepted": list(engine.ENGINES)})
    assert not ConversionJob.objects.exists()


def test_the_pdfium_engine_is_not_offered_unless_the_operator_turns_it_on(
    client: Client, account: dict[str, Any], pdf: Path, settings: Any
) -> None:
    settings.SVCX_PDFIUM_ENGINE = False
    response = client.post(
        f"/v1/convert/raw?engine={engine.PDFIUM_ENGINE_ID}",
        data=pdf.read_bytes(),
        content_type="application/pdf",
        **bearer(account["key"].secret),
    )

    error = assert_envelope(response, 404, "engine_not_found")
    assert (error["param"], error["details"]) == ("engine", {"accepted": [engine.ENGINE_ID]})
    assert not ConversionJob.objects.filter(organization=account["org"]).exists()


def test_an_organizations_default_engine_converts_unless_the_request_chooses(
    client: Client, account: dict[str, Any], pdf: Path, settings: Any
) -> None:
    organization_set_default_engine(organization=account["org"], engine=engine.PDFIUM_ENGINE_ID)
    secret = account["key"].secret

    def engine_of(query: str = "") -> str:
        response = client.post(
            f"/v1/convert/raw{query}", data=pdf.read_bytes(), content_type="application/pdf", **bearer(secret)
        )
        assert response.status_code == 200, response.content
        return str(response.json()["engine"]["id"])

    assert engine_of() == engine.PDFIUM_ENGINE_ID
    # The request's option overrides the organization's default.
    assert engine_of(f"?engine={engine.ENGINE_ID}") == engine.ENGINE_ID
    # A default the service no longer offers is not used: the service's default converts.
    settings.SVCX_PDFIUM_ENGINE = False
    assert engine_of() == engine.ENGINE_ID
    # Another organization's requests are the service's default's.
    other = make_key(make_org(credits=100))
    settings.SVCX_PDFIUM_ENGINE = True
    response = client.post(
        "/v1/convert/raw", data=pdf.read_bytes(), content_type="application/pdf", **bearer(other.secret)
    )
    assert response.json()["engine"]["id"] == engine.ENGINE_ID
