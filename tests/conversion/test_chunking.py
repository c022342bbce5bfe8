"""The option `chunking`: validated with the catalogue's codes and exact paths, part of the
cache key, and `chunks` in the JSON result of POST /v1/convert (Markdown answers unchanged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from conversion.options import Options
from core.errors import ServiceError
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import make_pdf
from tests.conversion.test_options import validate_options
from tests.factories import bearer, make_key, make_org


def test_chunking_is_absent_by_default_and_leaves_the_cache_key_as_it_was() -> None:
    options = validate_options({})
    assert options.chunking is None
    assert options.cache_key() == "pages=*;tables=markdown;fallback=empty;flavor=gfm"


def test_chunking_defaults_and_keys() -> None:
    assert validate_options({"chunking": {}}).chunking == (512, 0)
    chosen = validate_options({"chunking": {"strategy": "structure", "max_tokens": 300, "overlap_tokens": 40}})
    assert chosen.chunking == (300, 40)
    assert chosen.cache_key().endswith(";chunking=structure:300:40")
    assert Options().cache_key() != validate_options({"chunking": {}}).cache_key()
    assert validate_options({"chunking": {"max_tokens": 300}}).cache_key() != chosen.cache_key()


@pytest.mark.parametrize(
    ("chunking", "code", "param"),
    [
        ("structure", "invalid_parameter_type", "options.chunking"),
        (None, "invalid_parameter_type", "options.chunking"),
        ({"size": 3}, "unknown_parameter", "options.chunking.size"),
        ({"strategy": 1}, "invalid_parameter_type", "options.chunking.strategy"),
        ({"strategy": "fixed"}, "unsupported_option_value", "options.chunking.strategy"),
        ({"max_tokens": "512"}, "invalid_parameter_type", "options.chunking.max_tokens"),
        ({"max_tokens": True}, "invalid_parameter_type", "options.chunking.max_tokens"),
        ({"max_tokens": 512.0}, "invalid_parameter_type", "options.chunking.max_tokens"),
        ({"max_tokens": 63}, "unsupported_option_value", "options.chunking.max_tokens"),
        ({"max_tokens": 8192}, "unsupported_option_value", "options.chunking.max_tokens"),
        ({"max_tokens": 100, "overlap_tokens": 51}, "unsupported_option_value", "options.chunking.overlap_tokens"),
        ({"overlap_tokens": -1}, "unsupported_option_value", "options.chunking.overlap_tokens"),
    ],
)
def test_invalid_chunking_is_refused_with_its_exact_path(chunking: object, code: str, param: str) -> None:
    with pytest.raises(ServiceError) as info:
        validate_options({"chunking": chunking})
    assert (info.value.code, info.value.param) == (code, param)


@pytest.fixture
def account(session_worker: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "live": make_key(org)}


def convert_multipart(client: Client, secret: str, pdf: Path, options: dict[str, Any] | None, **headers: Any) -> Any:
    """POST /v1/convert of `pdf` as multipart, with `options` (None: none sent)."""
    data: dict[str, Any] = {"file": pdf.open("rb")}
    if options is not None:
        data["options"] = json.dumps(options)
    return client.post("/v1/convert", data, **bearer(secret), **headers)


@pytest.mark.django_db(transaction=True)
def test_a_json_conversion_with_chunking_answers_chunks_that_cite_their_pages(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    plain = convert_multipart(client, secret, three_pages, None).json()
    assert "chunks" not in plain

    body = convert_multipart(client, secret, three_pages, {"chunking": {"max_tokens": 64}}).json()

    assert body["cached"] is False  # another cache key than the plain conversion's
    assert body["pages"] == plain["pages"]
    assert body["markdown"] == plain["markdown"]
    chunks = body["chunks"]
    assert [c["id"] for c in chunks] == [f"c{i}" for i in range(1, len(chunks) + 1)]
    assert {p for c in chunks for p in c["pages"]} == {1, 2, 3}
    for chunk in chunks:
        start, end = chunk["doc_span"]
        assert chunk["markdown"] == body["markdown"][start:end]
        assert chunk["token_count"] <= 64
        assert chunk["heading_path"]
        for box in chunk["boxes"]:
            page = body["pages"][box["page"] - 1]
            element = page["elements"][int(box["element"].split(".e")[1])]
            assert element["bbox"] == box["bbox"]
            assert element["doc_span"][0] < end
            assert start < element["doc_span"][1]
        assert [b["element"] for b in chunk["boxes"]] == chunk["elements"]
    # Three small sections fit one chunk: it starts under the first one's heading.
    (chunk,) = chunks
    assert chunk["heading_path"] == ["Chapter 1"]
    assert chunk["markdown"] == body["markdown"]
    assert chunk["elements"] == ["p1.e0", "p1.e1", "p2.e0", "p2.e1", "p3.e0", "p3.e1"]

    again = convert_multipart(client, secret, three_pages, {"chunking": {"max_tokens": 64}}).json()
    assert again["cached"] is True
    assert again["chunks"] == chunks


@pytest.mark.django_db(transaction=True)
def test_a_markdown_answer_is_the_same_with_chunking(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    plain = convert_multipart(client, secret, three_pages, None, HTTP_ACCEPT="text/markdown")
    chunked = convert_multipart(client, secret, three_pages, {"chunking": {}}, HTTP_ACCEPT="text/markdown")
    assert chunked.status_code == 200
    assert chunked.content == plain.content


@pytest.mark.django_db(transaction=True)
def test_an_invalid_chunking_is_answered_with_the_envelope_and_bills_nothing(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    response = convert_multipart(client, account["live"].secret, three_pages, {"chunking": {"max_tokens": 10}})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unsupported_option_value", "options.chunking.max_tokens")
    assert error["details"] == {"minimum": 64, "maximum": 8191}


@pytest.mark.django_db(transaction=True)
def test_a_version_2_job_with_chunking_keeps_chunks_in_its_result(settings: Any, tmp_path: Path) -> None:
    from conversion import engine
    from conversion.async_jobs import JobSource, async_job_create, job_result_bytes
    from conversion.async_runner import async_job_lead
    from conversion.models import Job
    from conversion.store import Store, object_put
    from core.ids import new_request_id
    from tests.conversion.test_async_jobs import book_page

    settings.SVCX_JOB_PART_PAGES = 3
    book = make_pdf(tmp_path / "book.pdf", [book_page(n) for n in range(1, 9)])
    org = make_org(credits=100)
    job_id = "job_" + new_request_id().split("_", 1)[1]
    job = async_job_create(
        job_id=job_id,
        organization=org,
        environment="live",
        api_key_id=make_key(org).api_key.id,
        request_id=new_request_id(),
        source=JobSource(store=Store.ASYNC, key=object_put(Store.ASYNC, f"{job_id}/input.pdf", book), sha256="0" * 64),
        options={"tables": "markdown", "fallback": "empty", "flavor": "gfm", "chunking": [128, 20]},
        pages=list(range(1, 9)),
    )

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    result = json.loads(job_result_bytes(job=job))
    chunks = result["chunks"]
    assert result["markdown"] == engine.convert(book).markdown
    assert all(c["token_count"] <= 128 for c in chunks)
    assert {p for c in chunks for p in c["pages"]} == set(range(1, 9))
    # The paragraph hyphenated from page 6 to page 7 is one block: a chunk holding the word
    # joined over the break holds both pages' parts.
    joined = [c for c in chunks if "harvest and the railway" in c["markdown"]]
    assert joined
    assert all({6, 7} <= set(c["pages"]) for c in joined)
    assert any(c["heading_path"] == ["Chapter 2: The letter"] for c in chunks)
