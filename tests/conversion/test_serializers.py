"""The conversion's output serializer: the envelope is written per answer, the pages are sent
as the worker stored them."""

from __future__ import annotations

from typing import Any

from conversion.serializers import PAGE_MEMBERS, ConversionSerializer


def stored_payload() -> dict[str, Any]:
    # As PostgreSQL's jsonb returns the stored result: members shortest name first.
    element = {"bbox": [1.0, 2.0, 3.0, 4.0], "text": "T", "type": "paragraph", "markdown": "T", "in_markdown": True}
    page = {
        "page": 1,
        "label": None,
        "width": 612.0,
        "height": 792.0,
        "elements": [element],
        "markdown": "T",
        "warnings": [],
        "has_text_layer": True,
    }
    return {
        "pages": [page],
        "engine": {"id": "svcx-layout", "version": "9"},
        "timings": {"total": 0.5},
        "document": {"sha256": "ab", "repaired": False, "page_count": 1, "pdf_version": "1.7"},
        "markdown": "T",
        "warnings": ["w"],
        "pages_converted": 1,
        "result_truncated": False,
    }


def answer(payload: dict[str, Any], **echo: Any) -> dict[str, Any]:
    billing = {"request_id": "req_1", "pages_billed": 1, "credits_billed": 1, "cached": True}
    return {**payload, **billing, "metadata": None, "debug": None, **echo}


def test_the_pages_are_sent_as_stored_and_their_elements_not_serialized_again() -> None:
    payload = stored_payload()

    body = ConversionSerializer(answer(payload)).data

    page = body["pages"][0]
    assert list(page) == list(PAGE_MEMBERS)
    assert list(PAGE_MEMBERS)[:5] == ["page", "label", "markdown", "has_text_layer", "warnings"]
    assert page["elements"] is payload["pages"][0]["elements"]


def test_the_answer_is_written_in_the_order_clients_read_it_with_echoes_only_when_sent() -> None:
    payload = stored_payload()

    plain = ConversionSerializer(answer(payload)).data
    echoed = ConversionSerializer(answer(payload, metadata={"k": "v"}, debug={"timings": {}})).data

    assert list(plain) == [
        "object",
        "request_id",
        "engine",
        "document",
        "pages",
        "markdown",
        "result_truncated",
        "pages_billed",
        "credits_billed",
        "cached",
        "warnings",
    ]
    assert (plain["object"], plain["document"]) == ("conversion", {"page_count": 1, "sha256": "ab"})
    assert list(echoed)[-2:] == ["metadata", "debug"]
    assert echoed["metadata"] == {"k": "v"}


def test_an_element_read_by_ocr_is_written_with_its_source_and_confidence() -> None:
    from conversion.engine.elements import Element, ElementType
    from conversion.serializers import ElementSerializer

    read = Element(ElementType.HEADING, (72.0, 80.0, 300.0, 100.0), "Report", "# Report", level=1)
    read.source, read.confidence = "ocr", 0.934
    layer = Element(ElementType.PARAGRAPH, (72.0, 120.0, 300.0, 140.0), "Text", "Text")

    written = ElementSerializer([read.as_dict(), layer.as_dict()], many=True).data

    assert (written[0]["source"], written[0]["confidence"], written[0]["level"]) == ("ocr", 0.934, 1)
    # A text layer's element says nothing of OCR (version 1's elements are unchanged).
    assert "source" not in written[1]
    assert "confidence" not in written[1]
