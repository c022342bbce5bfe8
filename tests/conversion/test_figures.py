"""The option `figures: "crop"`: each figure's picture stored as a PNG file of the organization,
its `image` on the figure element and `![caption](file_id)` in the Markdown; refused values, and
keys without files:write and files:read; answers without it unchanged; the files of a conversion
that ends without a result deleted (v1, v2 jobs failed, canceled or taken over, and the sweep of
those whose worker died); a cached result never points at a file that is gone, and a figure
without a picture does not make it convert again; a full storage quota leaves the comment with a
warning; another organization or environment cannot read the file."""

from __future__ import annotations

import json
import struct
from datetime import timedelta
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone

from billing.limits import STORAGE_BYTES
from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion.async_jobs import (
    async_job_cancel,
    job_result_bytes,
    job_work_discard,
    object_key,
    object_read,
    object_write,
)
from conversion.async_runner import _succeed, async_job_lead
from conversion.engine import convert
from conversion.engine.elements import ElementType
from conversion.engine.figures import FIGURE_DPI, FIGURE_MAX_PIXELS, figure_image, figure_markdown, relink
from conversion.engine.render import PageRenderer
from conversion.figures import figure_file_ids
from conversion.files import figure_file_create, figure_files_sweep, storage_used
from conversion.models import ConversionJob, Job, StoredFile
from core.errors import ServiceError
from core.ids import new_request_id
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import Image, Text, lines, make_pdf
from tests.conversion.test_async_jobs import job_settings
from tests.conversion.test_chunking import convert_multipart as _convert
from tests.conversion.test_options import validate_options
from tests.factories import bearer, make_job, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

__all__ = ["job_settings"]  # fixture

PROSE = ["The committee met on a Tuesday to review the plans that the staff", "had drawn up over the winter."]
CAPTION = "Figure 2: The orchard [in May]"
CAPTION_MD = r"Figure 2: The orchard \[in May\]"  # as the Markdown writes it


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, read from its IHDR chunk (after checking the signature)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def downloaded_bytes(response: Any) -> bytes:
    """The body of GET /v1/files/{id}/content (streamed from the store)."""
    return b"".join(response.streaming_content)


@pytest.fixture
def figure_pdf(tmp_path: Path) -> Path:
    """One page: prose, a picture 228 x 160 points, its caption under it."""
    return make_pdf(
        tmp_path / "orchard report.pdf",
        [[*lines(72, 720, PROSE), Image(72, 500, 300, 660), Text(72, 485, CAPTION, 9)]],
    )


# --- the option --------------------------------------------------------------------------------


def test_figures_defaults_to_none_and_leaves_the_cache_key_as_it_was() -> None:
    assert validate_options({}).figures == "none"
    assert validate_options({"figures": "none"}).cache_key() == validate_options({}).cache_key()
    crop = validate_options({"figures": "crop"})
    assert crop.figures == "crop"
    assert crop.cache_key() == "pages=*;tables=markdown;fallback=empty;flavor=gfm;figures=crop"


@pytest.mark.parametrize(
    ("figures", "code", "details"),
    [
        ("png", "unsupported_option_value", {"accepted": ["none", "crop"]}),
        (True, "invalid_parameter_type", {}),
        ({"mode": "crop"}, "invalid_parameter_type", {}),
    ],
)
def test_invalid_figures_is_refused_with_its_exact_path(figures: object, code: str, details: dict[str, Any]) -> None:
    with pytest.raises(ServiceError) as info:
        validate_options({"figures": figures})
    assert (info.value.code, info.value.param, info.value.details) == (code, "options.figures", details)


# --- the engine's part -------------------------------------------------------------------------


def test_a_figure_is_cropped_at_the_stated_resolution_and_linked_under_its_caption(figure_pdf: Path) -> None:
    page = convert(figure_pdf).pages[0]
    index, figure = next((i, e) for i, e in enumerate(page.elements) if e.type == ElementType.FIGURE)
    renderer = PageRenderer(figure_pdf, None)
    try:
        picture = figure_image(renderer, 1, figure.bbox)
    finally:
        renderer.close()

    assert picture.dpi == FIGURE_DPI == 144
    assert (picture.width, picture.height) == (228 * 2, 160 * 2) == png_size(picture.png)
    # The caption is the alternative text, its brackets escaped.
    figure.markdown = figure_markdown(page.elements, index, "file_x")
    assert figure.markdown == r"![Figure 2: The orchard \[in May\]](file_x)"
    markdown = relink(page.elements)
    assert markdown == " ".join(PROSE) + "\n\n" + figure.markdown + "\n\n" + CAPTION_MD
    for element in page.elements:
        assert element.md_span is not None
        assert markdown[slice(*element.md_span)] == element.markdown


# --- over HTTP, with a real worker -------------------------------------------------------------


@pytest.fixture
def account(session_worker: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "key": make_key(org)}


def _figure(body: dict[str, Any]) -> dict[str, Any]:
    (figure,) = [e for p in body["pages"] for e in p["elements"] if e["type"] == "figure"]
    return figure


@pytest.mark.django_db(transaction=True)
def test_figures_crop_stores_each_figure_as_a_png_file_the_answer_links(
    client: Client, account: dict[str, Any], figure_pdf: Path
) -> None:
    secret = account["key"].secret
    body = _convert(client, secret, figure_pdf, {"figures": "crop"}).json()

    image = _figure(body)["image"]
    assert set(image) == {"file_id", "dpi", "width", "height"}
    assert image["dpi"] == 144
    x0, y0, x1, y1 = _figure(body)["bbox"]
    assert abs(image["width"] - (x1 - x0) * 144 / 72) <= 1
    assert abs(image["height"] - (y1 - y0) * 144 / 72) <= 1
    link = rf"![Figure 2: The orchard \[in May\]]({image['file_id']})"
    page = body["pages"][0]
    assert page["markdown"] == " ".join(PROSE) + "\n\n" + link + "\n\n" + CAPTION_MD
    assert body["markdown"] == page["markdown"]
    for element in page["elements"]:
        assert page["markdown"][slice(*element["md_span"])] == body["markdown"][slice(*element["doc_span"])]
    assert body["credits_billed"] == 1  # the page, nothing for its figure

    downloaded = client.get(f"/v1/files/{image['file_id']}/content", **bearer(secret))
    assert downloaded.status_code == 200
    assert downloaded["Content-Type"] == "image/png"
    assert downloaded["Content-Disposition"] == 'attachment; filename="orchard report-p1-fig1.png"'
    content = downloaded_bytes(downloaded)
    assert png_size(content) == (image["width"], image["height"])
    record = client.get(f"/v1/files/{image['file_id']}", **bearer(secret)).json()
    assert record["filename"] == "orchard report-p1-fig1.png"
    assert record["bytes"] == len(content) == int(downloaded["Content-Length"])
    stored = StoredFile.objects.get(pk=image["file_id"])
    assert (stored.organization_id, stored.environment, stored.content_type) == (account["org"].pk, "live", "image/png")
    assert stored.expires_at > timezone.now()

    # Another organization cannot read it (404, as for any file that is not its own).
    other = make_key(make_org(name="Other", credits=10)).secret
    assert_envelope(client.get(f"/v1/files/{image['file_id']}/content", **bearer(other)), 404, "file_not_found")
    assert_envelope(client.get(f"/v1/files/{image['file_id']}", **bearer(other)), 404, "file_not_found")
    # A figure's picture is not a PDF to convert.
    refused = client.post(
        "/v1/convert", {"file_id": image["file_id"]}, content_type="application/json", **bearer(secret)
    )
    assert_envelope(refused, 422, "pdf_invalid")

    # The Markdown answer has the same link where the comment was.
    markdown = _convert(client, secret, figure_pdf, {"figures": "crop"}, HTTP_ACCEPT="text/markdown")
    assert markdown["X-Svcx-Cached"] == "true"
    assert markdown.content.decode() == f"<!-- page 1 -->\n\n{page['markdown']}\n"


@pytest.mark.django_db(transaction=True)
def test_answers_without_figures_crop_are_unchanged(client: Client, account: dict[str, Any], figure_pdf: Path) -> None:
    secret = account["key"].secret
    plain = _convert(client, secret, figure_pdf, None, HTTP_ACCEPT="text/markdown")
    assert plain.content.decode() == f"<!-- page 1 -->\n\n{' '.join(PROSE)}\n\n<!-- figure -->\n\n{CAPTION_MD}\n"
    none = _convert(client, secret, figure_pdf, {"figures": "none"}, HTTP_ACCEPT="text/markdown")
    assert none.content == plain.content
    assert none["X-Svcx-Cached"] == "true"  # the same cache key

    body = _convert(client, secret, figure_pdf, None).json()
    assert "image" not in _figure(body)
    assert not StoredFile.objects.filter(organization=account["org"]).exists()


@pytest.mark.django_db(transaction=True)
def test_a_cached_result_whose_figure_file_was_deleted_is_converted_again(
    client: Client, account: dict[str, Any], figure_pdf: Path
) -> None:
    secret = account["key"].secret
    first = _convert(client, secret, figure_pdf, {"figures": "crop"}).json()
    again = _convert(client, secret, figure_pdf, {"figures": "crop"}).json()
    assert (again["cached"], _figure(again)["image"]) == (True, _figure(first)["image"])

    file_id = _figure(first)["image"]["file_id"]
    assert client.delete(f"/v1/files/{file_id}", **bearer(secret)).status_code == 200
    fresh = _convert(client, secret, figure_pdf, {"figures": "crop"}).json()

    assert fresh["cached"] is False
    assert fresh["credits_billed"] == 1
    new_id = _figure(fresh)["image"]["file_id"]
    assert new_id != file_id
    assert client.get(f"/v1/files/{new_id}/content", **bearer(secret)).status_code == 200
    # The new result replaced the stale one in the cache.
    assert _convert(client, secret, figure_pdf, {"figures": "crop"}).json()["cached"] is True


@pytest.mark.django_db(transaction=True)
def test_a_full_storage_quota_leaves_the_comment_and_a_warning(
    client: Client, account: dict[str, Any], figure_pdf: Path
) -> None:
    org = account["org"]
    org.limits = {**(org.limits or {}), STORAGE_BYTES: 100}
    org.save(update_fields=["limits"])
    response = client.post(
        "/v1/convert/raw?figures=crop",
        data=figure_pdf.read_bytes(),
        content_type="application/pdf",
        **bearer(account["key"].secret),
    )

    assert response.status_code == 200
    body = response.json()
    assert "image" not in _figure(body)
    assert "<!-- figure -->" in body["pages"][0]["markdown"]
    warning = "Figures on page 1 were not stored: the storage quota of stored files is full"
    assert any(w.startswith(warning) for w in body["pages"][0]["warnings"])
    assert any(w.startswith(warning) for w in body["warnings"])
    assert not StoredFile.objects.filter(organization=org).exists()


@pytest.mark.django_db(transaction=True)
def test_a_raw_pdf_takes_figures_as_a_query_parameter(
    client: Client, account: dict[str, Any], figure_pdf: Path
) -> None:
    secret = account["key"].secret
    refused = client.post(
        "/v1/convert/raw?figures=png", data=figure_pdf.read_bytes(), content_type="application/pdf", **bearer(secret)
    )
    error = assert_envelope(refused, 400, "unsupported_option_value")
    assert (error["param"], error["details"]) == ("figures", {"accepted": ["none", "crop"]})
    assert not StoredFile.objects.exists()

    answer = client.post(
        "/v1/convert/raw?figures=crop",
        data=figure_pdf.read_bytes(),
        content_type="application/pdf",
        HTTP_ACCEPT="text/markdown",
        **bearer(secret),
    )
    (stored,) = StoredFile.objects.filter(organization=account["org"])
    assert stored.filename == "document-p1-fig1.png"
    assert f"![Figure 2: The orchard \\[in May\\]]({stored.id})" in answer.content.decode()


def test_a_figure_too_large_for_the_pixel_budget_is_cropped_at_a_lower_stated_dpi(tmp_path: Path) -> None:
    # A poster page 40 x 30 inches with a picture 20 x 20 inches: 8.3 million pixels at 144 dpi.
    pdf = make_pdf(tmp_path / "poster.pdf", [[Image(72, 72, 72 + 1440, 72 + 1440)]])
    with pikepdf.open(pdf, allow_overwriting_input=True) as opened:
        opened.pages[0].MediaBox = [0, 0, 2880, 2160]
        opened.save(pdf)
    renderer = PageRenderer(pdf, None)
    try:
        picture = figure_image(renderer, 1, (72.0, 648.0, 1512.0, 2088.0))
    finally:
        renderer.close()

    assert picture.dpi == 100  # floor(sqrt(4,000,000 / 400 square inches))
    assert (picture.width, picture.height) == (2000, 2000) == png_size(picture.png)
    assert picture.width * picture.height <= FIGURE_MAX_PIXELS


# --- the files of a conversion exist only with its kept result -------------------------------


def live_pictures(org: Any, environment: str = "live") -> list[StoredFile]:
    """The figures' files the organization holds (not deleted)."""
    return list(StoredFile.objects.filter(organization=org, environment=environment, deleted_at__isnull=True))


def png_blobs(org: Any) -> list[Path]:
    root = Path(django_settings.SVCX_FILES_DIR) / org.id
    return list(root.rglob("*.png")) if root.exists() else []


@pytest.mark.django_db(transaction=True)
def test_a_conversion_that_fails_after_storing_a_figure_deletes_it(
    client: Client, account: dict[str, Any], tmp_path: Path
) -> None:
    # Given a figure on page 1, forty pages of text, then a page without a text layer.
    org, secret = account["org"], account["key"].secret
    text_page = [*lines(72, 720, PROSE)]
    figure_page = [*lines(72, 720, PROSE), Image(72, 500, 300, 660), Text(72, 485, CAPTION, 9)]
    pdf = make_pdf(tmp_path / "failing.pdf", [figure_page, *[text_page] * 40, [Image(72, 72, 500, 700)]])

    # When `fallback: "error"` fails the conversion on the last page,
    refused = _convert(client, secret, pdf, {"figures": "crop", "fallback": "error"})

    # then the figure's file, stored before the failure, is deleted as DELETE deletes a file.
    assert_envelope(refused, 422, "page_has_no_text_layer")
    assert credits_get(organization=org, environment="live").balance == 100
    (tombstone,) = StoredFile.objects.filter(organization=org)
    assert (tombstone.content_type, tombstone.filename) == ("image/png", "failing-p1-fig1.png")
    assert tombstone.deleted_at is not None
    assert live_pictures(org) == []
    assert storage_used(organization=org, environment="live") == 0
    assert png_blobs(org) == []


@pytest.mark.django_db(transaction=True)
def test_a_kept_result_keeps_its_files_and_they_are_no_longer_pending(
    client: Client, account: dict[str, Any], figure_pdf: Path
) -> None:
    body = _convert(client, account["key"].secret, figure_pdf, {"figures": "crop"}).json()

    (stored,) = live_pictures(account["org"])
    assert stored.id == _figure(body)["image"]["file_id"]
    assert stored.pending_for == ""
    assert figure_files_sweep() == 0
    assert live_pictures(account["org"]) == [stored]


@pytest.fixture
def in_process() -> dict[str, Any]:
    """An organization whose version 2 jobs are led here (`async_job_lead`), no worker."""
    org = make_org(credits=100)
    return {"org": org, "key": make_key(org)}


def _crop_job(account: dict[str, Any], pdf: Path, **options: Any) -> Job:
    return make_job(
        account["org"],
        account["key"].api_key,
        pdf,
        options={"pages": None, "tables": "markdown", "fallback": "empty", "flavor": "gfm", **options},
    )


def _pending_picture(account: dict[str, Any], owner: str) -> StoredFile:
    """A figure's file a conversion stored and has not kept yet."""
    return figure_file_create(
        organization=account["org"],
        environment="live",
        api_key_id=account["key"].api_key.id,
        png=FAKE_PNG + owner.encode(),
        filename="lost-p1-fig1.png",
        pending_for=owner,
    )


FAKE_PNG = b"\x89PNG\r\n\x1a\nnot really"
CROP = {"figures": "crop", "figures_name": "atlas"}


def _led(job: Job, *, attempt: int, beat_seconds_ago: float = 0) -> None:
    """The job running under its lead of `attempt`, which last beat that long ago."""
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING,
        lead_attempts=attempt,
        lead_heartbeat_at=timezone.now() - timedelta(seconds=beat_seconds_ago),
    )


@pytest.mark.django_db(transaction=True)
def test_a_job_that_fails_after_storing_a_figure_deletes_it(
    in_process: dict[str, Any], tmp_path: Path, job_settings: None
) -> None:
    figure_page = [*lines(72, 720, PROSE), Image(72, 500, 300, 660), Text(72, 485, CAPTION, 9)]
    pdf = make_pdf(tmp_path / "atlas.pdf", [figure_page, *[lines(72, 720, PROSE)] * 40, [Image(72, 72, 500, 700)]])
    job = _crop_job(in_process, pdf, fallback="error", **CROP)

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert (job.status, job.error["code"], job.credits_billed) == (Job.Status.FAILED, "page_has_no_text_layer", 0)
    assert StoredFile.objects.filter(organization=in_process["org"]).count() == 1  # stored, then deleted
    assert live_pictures(in_process["org"]) == []
    assert png_blobs(in_process["org"]) == []


@pytest.mark.django_db(transaction=True)
def test_a_lead_taking_over_replaces_the_lost_leads_figures_with_its_own(
    in_process: dict[str, Any], figure_pdf: Path, job_settings: None
) -> None:
    job = _crop_job(in_process, figure_pdf, **CROP)
    # A first lead stored a figure, then its worker died.
    _led(job, attempt=1, beat_seconds_ago=10)
    lost = _pending_picture(in_process, f"{job.id}/1")

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert (job.status, job.lead_attempts) == (Job.Status.SUCCEEDED, 2)
    (kept,) = live_pictures(in_process["org"])
    assert kept.id != lost.id
    assert kept.pending_for == ""
    result = json.loads(job_result_bytes(job=job))
    assert _figure(result)["image"]["file_id"] == kept.id
    lost.refresh_from_db()
    assert lost.deleted_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_replaced_lead_that_finishes_before_the_new_one_keeps_nothing_and_bills_nothing(
    in_process: dict[str, Any], figure_pdf: Path, job_settings: None
) -> None:
    job = _crop_job(in_process, figure_pdf, **CROP)
    _led(job, attempt=1)
    slow = Job.objects.get(pk=job.pk)  # the first lead, taken for lost but still at work
    lost = _pending_picture(in_process, f"{job.id}/1")
    # A second lead took over (and deleted the first one's figures) and is at work.
    Job.objects.filter(pk=job.pk).update(lead_attempts=2)
    lost.refresh_from_db()

    payload = {"pages_converted": 1, "warnings": [], "pages": [], "markdown": "the slow lead's"}
    _succeed(slow, payload)

    job.refresh_from_db()
    assert (job.status, job.lead_attempts, job.credits_billed, job.result_key) == (Job.Status.RUNNING, 2, 0, "")
    with pytest.raises(FileNotFoundError):
        object_read(object_key(job.id, "result-1.json"))
    lost.refresh_from_db()
    assert lost.deleted_at is not None


@pytest.mark.django_db(transaction=True)
def test_the_results_of_leads_not_kept_go_with_the_job_s_work_and_the_kept_one_with_the_job(
    in_process: dict[str, Any], figure_pdf: Path, job_settings: None
) -> None:
    job = _crop_job(in_process, figure_pdf, **CROP)
    _led(job, attempt=1, beat_seconds_ago=10)
    async_job_lead(job_id=job.id)  # the second lead keeps result-2.json
    job.refresh_from_db()
    object_write(object_key(job.id, "result-1.json"), b"{}")  # the first lead's, left by a worker that died

    job_work_discard(job.id, keep_result=True)

    assert json.loads(job_result_bytes(job=job))["pages_converted"] == 1
    with pytest.raises(FileNotFoundError):
        object_read(object_key(job.id, "result-1.json"))

    job_work_discard(job.id, keep_result=False)  # the job's retention ended
    with pytest.raises(FileNotFoundError):
        job_result_bytes(job=job)


@pytest.mark.django_db(transaction=True)
def test_a_replaced_lead_that_finishes_after_the_job_succeeded_leaves_the_kept_result_and_figures(
    in_process: dict[str, Any], figure_pdf: Path, job_settings: None
) -> None:
    job = _crop_job(in_process, figure_pdf, **CROP)
    _led(job, attempt=1, beat_seconds_ago=10)
    slow = Job.objects.get(pk=job.pk)  # the first lead's job, as it saw it: only slow, not dead
    async_job_lead(job_id=job.id)  # a second lead takes over and succeeds
    job.refresh_from_db()
    assert (job.status, job.lead_attempts) == (Job.Status.SUCCEEDED, 2)
    kept, billed = job_result_bytes(job=job), job.credits_billed
    (picture,) = live_pictures(in_process["org"])

    # The first lead finishes after all, with a result of its own.
    mine = json.loads(kept)
    mine["markdown"] = "the slow lead's"
    _succeed(slow, mine)

    job.refresh_from_db()
    assert (job.status, job.credits_billed) == (Job.Status.SUCCEEDED, billed)
    assert job_result_bytes(job=job) == kept  # still there, and the kept lead's
    assert live_pictures(in_process["org"]) == [picture]
    with pytest.raises(FileNotFoundError):
        object_read(object_key(job.id, "result-1.json"))  # the slow lead's own, deleted


@pytest.mark.django_db(transaction=True)
def test_a_conversion_stores_at_most_svcx_figures_max_pictures_and_says_so(
    in_process: dict[str, Any], tmp_path: Path, job_settings: None, settings: Any
) -> None:
    settings.SVCX_FIGURES_MAX = 1
    figure_page = [*lines(72, 720, PROSE), Image(72, 500, 300, 660), Text(72, 485, CAPTION, 9)]
    job = _crop_job(in_process, make_pdf(tmp_path / "atlas.pdf", [figure_page, figure_page]), **CROP)

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED
    result = json.loads(job_result_bytes(job=job))
    first, second = ([e for e in p["elements"] if e["type"] == "figure"] for p in result["pages"])
    assert "image" in first[0]
    assert "image" not in second[0]
    assert "<!-- figure -->" in result["pages"][1]["markdown"]
    warning = "Figures on page 2 were not stored: a conversion stores at most 1 figures' pictures"
    assert any(w.startswith(warning) for w in result["pages"][1]["warnings"])
    assert len(live_pictures(in_process["org"])) == 1


@pytest.mark.django_db(transaction=True)
def test_a_canceled_job_deletes_the_figures_its_lead_stored(
    in_process: dict[str, Any], figure_pdf: Path, job_settings: None
) -> None:
    job = _crop_job(in_process, figure_pdf, **CROP)
    _led(job, attempt=1)
    stored = _pending_picture(in_process, f"{job.id}/1")

    async_job_cancel(job=job)

    stored.refresh_from_db()
    assert stored.deleted_at is not None
    assert live_pictures(in_process["org"]) == []
    assert storage_used(organization=in_process["org"], environment="live") == 0


@pytest.mark.django_db(transaction=True)
def test_the_files_sweep_deletes_the_figures_of_conversions_that_died_and_only_those(
    in_process: dict[str, Any], figure_pdf: Path
) -> None:
    job = _crop_job(in_process, figure_pdf, **CROP)
    _led(job, attempt=2)
    running = _pending_picture(in_process, f"{job.id}/2")  # its lead is at work
    replaced = _pending_picture(in_process, f"{job.id}/1")  # a lead that was replaced
    worker_killed = _pending_picture(in_process, new_request_id())  # a version 1 request without its job

    assert figure_files_sweep() == 2

    assert live_pictures(in_process["org"]) == [running]
    for record in (replaced, worker_killed):
        record.refresh_from_db()
        assert record.deleted_at is not None
    # Past twice its time limit, the job's lead is not coming back.
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=3))
    assert figure_files_sweep() == 1
    assert live_pictures(in_process["org"]) == []


# --- the cache ---------------------------------------------------------------------------------


def test_a_figure_without_a_picture_lists_no_file_and_leaves_the_others() -> None:
    payload = {
        "pages": [
            {"elements": [{"type": "figure", "image": {"file_id": "file_a"}}, {"type": "paragraph"}]},
            {"elements": [{"type": "figure"}, {"type": "figure", "image": {"file_id": "file_b"}}]},
        ]
    }
    assert figure_file_ids(payload) == ["file_a", "file_b"]


@pytest.mark.django_db(transaction=True)
def test_a_result_whose_figure_found_the_quota_full_is_answered_from_the_cache_for_nothing(
    client: Client, account: dict[str, Any], figure_pdf: Path
) -> None:
    org, secret = account["org"], account["key"].secret
    org.limits = {**(org.limits or {}), STORAGE_BYTES: 100}
    org.save(update_fields=["limits"])
    first = _convert(client, secret, figure_pdf, {"figures": "crop"}).json()
    assert (first["cached"], first["credits_billed"], "image" in _figure(first)) == (False, 1, False)

    again = _convert(client, secret, figure_pdf, {"figures": "crop"}).json()

    assert (again["cached"], again["credits_billed"]) == (True, 0)
    assert again["pages"] == first["pages"]
    assert again["warnings"] == first["warnings"]
    assert credits_get(organization=org, environment="live").balance == 99


# --- who may ask for it ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scopes", "missing"),
    [
        (["convert"], "files:write"),
        (["convert", "files:write"], "files:read"),
        (["convert", "files:read"], "files:write"),
    ],
)
@pytest.mark.parametrize("endpoint", ["/v1/convert", "/v1/convert/raw", "/v2/jobs", "/v2/jobs/raw"])
@pytest.mark.django_db(transaction=True)
def test_figures_crop_needs_a_key_that_may_write_and_read_files(
    client: Client, figure_pdf: Path, endpoint: str, scopes: list[str], missing: str
) -> None:
    org = make_org(credits=100)
    key = make_key(org, scopes=scopes)
    raw = endpoint.endswith("/raw")
    if raw:
        response = client.post(
            f"{endpoint}?figures=crop",
            data=figure_pdf.read_bytes(),
            content_type="application/pdf",
            **bearer(key.secret),
        )
    else:
        with figure_pdf.open("rb") as handle:
            response = client.post(
                endpoint, {"file": handle, "options": json.dumps({"figures": "crop"})}, **bearer(key.secret)
            )

    error = assert_envelope(response, 403, "insufficient_scope")
    assert error["param"] == ("figures" if raw else "options.figures")
    assert error["details"] == {"required_scope": missing, "key_scopes": sorted(scopes)}
    assert "'files:write' and 'files:read'" in error["message"]
    # Refused before any work: nothing held, billed, queued or stored.
    assert credits_get(organization=org, environment="live").balance == 100
    assert not LedgerEntry.objects.filter(organization=org).exclude(kind="grant").exists()
    assert not ConversionJob.objects.filter(organization=org).exists()
    assert not Job.objects.filter(organization=org).exists()
    assert not StoredFile.objects.filter(organization=org).exists()


# --- environments ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_figure_file_of_one_environment_is_404_to_a_key_of_the_other(client: Client) -> None:
    org = make_org(credits=10)
    keys = {"live": make_key(org, "live"), "test": make_key(org, "test")}
    files = {
        environment: figure_file_create(
            organization=org,
            environment=environment,
            api_key_id=keys[environment].api_key.id,
            png=FAKE_PNG + environment.encode(),
            filename=f"{environment}-p1-fig1.png",
            pending_for="",
        )
        for environment in keys
    }
    for environment, other in (("live", "test"), ("test", "live")):
        file_id, secret = files[environment].id, keys[other].secret
        assert_envelope(client.get(f"/v1/files/{file_id}/content", **bearer(secret)), 404, "file_not_found")
        assert_envelope(client.get(f"/v1/files/{file_id}", **bearer(secret)), 404, "file_not_found")
        own = client.get(f"/v1/files/{file_id}/content", **bearer(keys[environment].secret))
        assert (own.status_code, downloaded_bytes(own)) == (200, FAKE_PNG + environment.encode())
