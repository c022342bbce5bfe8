"""The engine's public API: preflight, inspect, text_sample, convert, and its errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pikepdf
import pytest

from conversion.engine import (
    ENGINE_ID,
    ENGINE_VERSION,
    ConvertOptions,
    EngineError,
    OutlineEntry,
    PageResult,
    convert,
    inspect,
    preflight,
    text_sample,
)

from .pdfs import Text, lines, make_pdf


def three_pages(tmp_path: Path) -> Path:
    return make_pdf(
        tmp_path / "three.pdf",
        [lines(72, 600, [f"Text of page number {n} in the document."]) for n in (1, 2, 3)],
    )


def error_of(call: Callable[..., object], *args: object, **kwargs: object) -> EngineError:
    with pytest.raises(EngineError) as info:
        call(*args, **kwargs)
    return info.value


def test_engine_identity() -> None:
    assert (ENGINE_ID, ENGINE_VERSION) == ("svcx-layout", "1.27.2")


def test_only_selected_pages_are_converted_in_order(tmp_path: Path) -> None:
    result = convert(three_pages(tmp_path), pages=[3, 1])
    assert result.page_count == 3
    assert [(p.page, p.markdown) for p in result.pages] == [
        (1, "Text of page number 1 in the document."),
        (3, "Text of page number 3 in the document."),
    ]
    assert result.markdown == ("Text of page number 1 in the document.\n\nText of page number 3 in the document.")
    assert (result.truncated, result.stopped) == (False, False)


def test_pages_outside_the_document_are_out_of_bounds(tmp_path: Path) -> None:
    err = error_of(convert, three_pages(tmp_path), pages=[4, 9])
    assert (err.code, err.details) == ("page_range_out_of_bounds", {"page_count": 3})


def test_on_page_reports_each_delivered_page(tmp_path: Path) -> None:
    seen: list[PageResult] = []
    result = convert(three_pages(tmp_path), on_page=seen.append)
    assert [p.page for p in seen] == [1, 2, 3]
    assert seen == result.pages


def test_result_budget_delivers_the_crossing_page_and_stops(tmp_path: Path) -> None:
    result = convert(three_pages(tmp_path), result_budget_bytes=10)
    assert [p.page for p in result.pages] == [1]
    assert (result.truncated, result.stopped) == (True, False)


def test_should_stop_returns_the_pages_completed_so_far(tmp_path: Path) -> None:
    calls = 0

    def stop_after_first_page() -> bool:
        nonlocal calls
        calls += 1
        return calls > 1

    result = convert(three_pages(tmp_path), should_stop=stop_after_first_page)
    assert [p.page for p in result.pages] == [1]
    assert (result.stopped, result.truncated) == (True, False)


def test_should_stop_before_any_page_returns_no_pages(tmp_path: Path) -> None:
    result = convert(three_pages(tmp_path), should_stop=lambda: True)
    assert (result.pages, result.stopped) == ([], True)


def test_page_without_text_is_empty_with_a_warning(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "a.pdf", [lines(72, 600, ["Some text here."]), []])
    result = convert(path)
    assert [(p.page, p.markdown, p.has_text_layer) for p in result.pages] == [
        (1, "Some text here.", True),
        (2, "", False),
    ]
    assert result.pages[1].warnings == [
        "Page 2 has no text layer (scanned or image-only); it was left empty. OCR is not available."
    ]
    assert result.warnings == result.pages[1].warnings


def test_page_without_text_fails_with_fallback_error(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "a.pdf", [lines(72, 600, ["Some text here."]), []])
    err = error_of(convert, path, options=ConvertOptions(fallback="error"))
    assert (err.code, err.details) == ("page_has_no_text_layer", {"page": 2})


def test_document_without_any_text_is_refused(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "a.pdf", [[], []])
    err = error_of(convert, path)
    assert err.code == "document_has_no_text_layer"
    # Selecting one of its pages changes nothing: no page of the document has text.
    assert error_of(convert, path, pages=[2]).code == "document_has_no_text_layer"


def test_selected_pages_without_text_in_a_document_with_text_are_empty_with_a_warning(tmp_path: Path) -> None:
    # A book's cover (a picture) selected alone: the document has a text layer, so the
    # default fallback ("empty") gives the page empty with a warning, not a document error.
    path = make_pdf(tmp_path / "a.pdf", [[], lines(72, 600, ["Chapter one begins here."])])
    result = convert(path, pages=[1])
    assert [(p.page, p.markdown, p.has_text_layer) for p in result.pages] == [(1, "", False)]
    assert result.warnings == [
        "Page 1 has no text layer (scanned or image-only); it was left empty. OCR is not available."
    ]
    err = error_of(convert, path, pages=[1], options=ConvertOptions(fallback="error"))
    assert (err.code, err.details) == ("page_has_no_text_layer", {"page": 1})


def test_warnings_of_one_kind_are_one_document_warning_naming_the_pages(tmp_path: Path) -> None:
    text = lines(72, 600, ["Some text here."])
    path = make_pdf(tmp_path / "a.pdf", [[], [], text, [], text, []])
    result = convert(path)
    assert result.warnings == [
        "Pages 1-2, 4, 6 have no text layer (scanned or image-only); they were left empty. OCR is not available."
    ]
    # Each page still says it of itself.
    assert result.pages[3].warnings == [
        "Page 4 has no text layer (scanned or image-only); it was left empty. OCR is not available."
    ]


def test_not_a_pdf_is_pdf_invalid(tmp_path: Path) -> None:
    path = tmp_path / "a.pdf"
    path.write_bytes(b"<html><body>Not found</body></html>")
    assert error_of(preflight, path).code == "pdf_invalid"
    assert error_of(convert, path).code == "pdf_invalid"


def test_missing_file_is_pdf_read_error(tmp_path: Path) -> None:
    err = error_of(preflight, tmp_path / "missing.pdf")
    assert err.code == "pdf_read_error"
    assert "missing.pdf" not in err.message


def test_pdf_cut_short_is_pdf_corrupt(tmp_path: Path) -> None:
    data = three_pages(tmp_path).read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[:120])
    assert error_of(convert, path).code == "pdf_corrupt"


def test_damaged_xref_is_repaired(tmp_path: Path) -> None:
    data = three_pages(tmp_path).read_bytes()
    path = tmp_path / "damaged.pdf"
    path.write_bytes(data[: data.rindex(b"startxref")] + b"startxref\n999999\n%%EOF\n")
    info = preflight(path)
    assert (info.page_count, info.repaired) == (3, True)
    assert convert(path).pages[0].markdown == "Text of page number 1 in the document."


def test_zero_page_pdf_is_pdf_no_pages(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    pikepdf.new().save(path)
    assert error_of(preflight, path).code == "pdf_no_pages"
    assert inspect(path).page_count == 0


def encrypted(tmp_path: Path, **kwargs: Any) -> Path:
    src = three_pages(tmp_path)
    path = tmp_path / "locked.pdf"
    with pikepdf.open(src) as pdf:
        pdf.save(path, encryption=pikepdf.Encryption(**kwargs))
    return path


def test_password_protected_pdf_needs_the_password(tmp_path: Path) -> None:
    path = encrypted(tmp_path, user="secret", owner="owner")
    assert error_of(convert, path).code == "pdf_encrypted"
    assert error_of(convert, path, password="wrong").code == "pdf_password_incorrect"
    result = convert(path, password="secret", pages=[2])
    assert result.markdown == "Text of page number 2 in the document."


def test_inspect_reports_a_locked_pdf_without_failing(tmp_path: Path) -> None:
    path = encrypted(tmp_path, user="secret", owner="owner")
    info = inspect(path)
    assert (info.encrypted, info.password_required, info.page_count) == (True, True, None)
    opened = inspect(path, password="secret")
    assert (opened.encrypted, opened.password_required, opened.page_count) == (True, True, 3)
    assert error_of(inspect, path, password="wrong").code == "pdf_password_incorrect"


def test_extraction_forbidden_by_permissions_is_refused(tmp_path: Path) -> None:
    path = encrypted(
        tmp_path,
        user="",
        owner="owner",
        allow=pikepdf.Permissions(extract=False, accessibility=False),
    )
    assert inspect(path).extraction_allowed is False
    assert error_of(convert, path).code == "pdf_extraction_not_permitted"
    # The owner password lifts the restriction.
    assert convert(path, password="owner", pages=[1]).pages[0].markdown.startswith("Text of page")


def test_dynamic_xfa_form_is_pdf_is_xfa(tmp_path: Path) -> None:
    path = three_pages(tmp_path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.Root.AcroForm = pikepdf.Dictionary(Fields=[], XFA=pdf.make_stream(b"<xdp:xdp/>"))
        pdf.Root.NeedsRendering = True
        pdf.save(path)
    assert error_of(preflight, path).code == "pdf_is_xfa"
    assert inspect(path).xfa is True


def test_outline_resolves_direct_and_named_destinations(tmp_path: Path) -> None:
    path = three_pages(tmp_path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.Root.Names = pikepdf.Dictionary(
            Dests=pikepdf.Dictionary(Names=[pikepdf.String("third"), [pdf.pages[2].obj, pikepdf.Name.Fit]])
        )
        with pdf.open_outline() as outline:
            top = pikepdf.OutlineItem("Start", 0)
            top.children.append(pikepdf.OutlineItem("Named", pikepdf.String("third")))
            outline.root.append(top)
            outline.root.append(pikepdf.OutlineItem("Second", 1))
        pdf.save(path)
    assert preflight(path).outline == [
        OutlineEntry(level=1, title="Start", page=1),
        OutlineEntry(level=2, title="Named", page=3),
        OutlineEntry(level=1, title="Second", page=2),
    ]


def test_cyclic_outline_terminates(tmp_path: Path) -> None:
    path = three_pages(tmp_path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        a = pdf.make_indirect(pikepdf.Dictionary(Title="A", Dest=[pdf.pages[0].obj, pikepdf.Name.Fit]))
        b = pdf.make_indirect(pikepdf.Dictionary(Title="B", Dest=[pdf.pages[1].obj, pikepdf.Name.Fit]))
        a.Next = b
        b.Next = a
        b.First = a
        pdf.Root.Outlines = pdf.make_indirect(pikepdf.Dictionary(First=a, Last=b))
        pdf.save(path)
    assert preflight(path).outline == [
        OutlineEntry(level=1, title="A", page=1),
        OutlineEntry(level=1, title="B", page=2),
    ]


def test_page_labels_are_reported_and_attached_to_pages(tmp_path: Path) -> None:
    path = three_pages(tmp_path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.Root.PageLabels = pikepdf.Dictionary(
            Nums=[0, pikepdf.Dictionary(S=pikepdf.Name.r), 1, pikepdf.Dictionary(S=pikepdf.Name.D)]
        )
        pdf.save(path)
    assert preflight(path).page_labels == ["i", "1", "2"]
    assert [p.label for p in convert(path).pages] == ["i", "1", "2"]


def test_text_sample_reports_text_layer_per_page(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "a.pdf", [[Text(72, 600, "Hello sample world")], []])
    samples = text_sample(path, pages=[1, 2, 7], max_chars=5)
    assert [(s.page, s.has_text_layer, s.chars, s.sample) for s in samples] == [
        (1, True, 16, "Hello"),
        (2, False, 0, ""),
    ]


def dense_page(tmp_path: Path) -> Path:
    """Two pages of about 3,000 glyphs each, enough for several polls inside a page."""
    body = [f"Dense line of text number {i} with some words in it." for i in range(60)]
    return make_pdf(tmp_path / "dense.pdf", [lines(40, 760, body, size=8, leading=12)] * 2)


def test_should_stop_is_polled_inside_a_page(tmp_path: Path) -> None:
    calls = 0

    def stop_inside_first_page() -> bool:
        nonlocal calls
        calls += 1
        return calls > 1  # the poll before page 1 says go on, the first poll inside stops

    result = convert(dense_page(tmp_path), should_stop=stop_inside_first_page)
    assert (result.pages, result.stopped) == ([], True)


def test_page_over_the_object_budget_is_document_too_complex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conversion.engine import layout

    monkeypatch.setattr(layout, "MAX_LAYOUT_OBJECTS_PER_PAGE", 1000)
    err = error_of(convert, dense_page(tmp_path))
    assert err.code == "document_too_complex"
    assert err.details["page"] == 1


def test_on_page_exception_reaches_the_caller_unchanged(tmp_path: Path) -> None:
    class Boom(ValueError):
        pass

    def explode(_: PageResult) -> None:
        raise Boom("progress store is down")

    with pytest.raises(Boom):
        convert(three_pages(tmp_path), on_page=explode)


def test_convert_reuses_the_info_of_an_earlier_preflight(tmp_path: Path) -> None:
    path = three_pages(tmp_path)
    info = preflight(path)
    assert info.page_count == 3
    assert convert(path, info=info).markdown == convert(path).markdown


def test_stop_request_after_the_last_page_loses_nothing(tmp_path: Path) -> None:
    calls = 0

    def stop_after_three_pages() -> bool:
        nonlocal calls
        calls += 1
        return calls > 3

    result = convert(three_pages(tmp_path), should_stop=stop_after_three_pages)
    assert [p.page for p in result.pages] == [1, 2, 3]
    assert result.stopped is False


def test_glyphs_without_unicode_are_kept_and_counted_in_a_warning(tmp_path: Path) -> None:
    # A Type0 font with no ToUnicode map and an Identity encoding: its glyphs have no Unicode value.
    pdf = pikepdf.new()
    helvetica = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
    )
    descendant = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.CIDFontType2,
        BaseFont=pikepdf.Name("/Unmapped"),
        CIDSystemInfo=pikepdf.Dictionary(
            Registry=pikepdf.String("Adobe"), Ordering=pikepdf.String("Identity"), Supplement=0
        ),
        DW=500,
    )
    unmapped = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type0,
            BaseFont=pikepdf.Name("/Unmapped"),
            Encoding=pikepdf.Name("/Identity-H"),
            DescendantFonts=pikepdf.Array([pdf.make_indirect(descendant)]),
        )
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    page.obj.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=helvetica, F2=unmapped))
    page.obj.Contents = pdf.make_stream(
        b"BT /F1 12 Tf 72 700 Td (Readable words.) Tj ET BT /F2 12 Tf 72 680 Td <002A002B002C> Tj ET"
    )
    pdf.save(tmp_path / "unmapped.pdf")

    result = convert(tmp_path / "unmapped.pdf")

    assert result.pages[0].markdown == "Readable words."  # no "(cid:N)" garbage
    assert result.pages[0].warnings == [
        "Page 1: 3 character(s) use glyphs that the PDF's fonts do not map to Unicode; they were left out."
    ]
    assert result.warnings == result.pages[0].warnings


def test_a_page_of_mapped_text_has_no_glyph_warning(tmp_path: Path) -> None:
    result = convert(three_pages(tmp_path))

    assert [page.warnings for page in result.pages] == [[], [], []]
