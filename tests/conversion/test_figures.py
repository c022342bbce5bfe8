"""The option `figures: "crop"`: each figure's picture stored as a PNG file of the organization,
its `image` on the figure element and `![caption](file_id)` in the Markdown; refused values;
answers without it unchanged; a cached result never points at a file that is gone; a full
storage quota leaves the comment with a warning; another organization cannot read the file."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from django.test import Client
from django.utils import timezone

from billing.limits import STORAGE_BYTES
from conversion.engine import convert
from conversion.engine.elements import ElementType
from conversion.engine.figures import FIGURE_DPI, FIGURE_MAX_PIXELS, figure_image, figure_markdown, relink
from conversion.engine.render import PageRenderer
from conversion.models import StoredFile
from core.errors import ServiceError
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import Image, Text, lines, make_pdf
from tests.conversion.test_options import validate_options
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

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


def _convert(client: Client, secret: str, pdf: Path, options: dict[str, Any] | None, **headers: Any) -> Any:
    data: dict[str, Any] = {"file": pdf.open("rb")}
    if options is not None:
        data["options"] = json.dumps(options)
    return client.post("/v1/convert", data, **bearer(secret), **headers)


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
