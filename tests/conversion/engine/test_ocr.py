"""The OCR stage: pages without a usable text layer read from their picture (Tesseract), and
the recognised words turned into the text-layer path's lines.

The scans are made here: a PDF written with the tests' own writer, rasterised with pypdfium2
and wrapped as an image-only PDF, so the text on them is known exactly.
"""

from __future__ import annotations

import io
import re
import zlib
from pathlib import Path
from typing import Any

import pikepdf
import pytest

from conversion.engine import ConvertOptions, EngineError, OcrPlan, convert, ocr_plan, parse_pages
from conversion.engine.elements import ElementType
from conversion.engine.layout import BOLD, MONO, Line, PageModel, is_rtl
from conversion.engine.lists import opens_at_right
from conversion.engine.ocr import (
    OcrLine,
    OcrOptions,
    OcrParams,
    Recognised,
    Word,
    installed_languages,
    needs_ocr,
    ocr_available,
    page_model,
    recognise,
    script_model,
)
from conversion.engine.parsed import parsed_decode, parsed_encode
from conversion.engine.screen import text_pages

from .pdfs import FONTS, Image, Op, Text, lines, make_pdf

needs_tesseract = pytest.mark.skipif(
    not ocr_available(),
    reason="OCR engine not installed (tesserocr and Debian's tesseract-ocr-eng and tesseract-ocr-osd)",
)

BODY = [
    "The committee met on the fourth of March to review the budget.",
    "Spending on roads rose by twelve percent over the previous year.",
    "The members agreed to publish the accounts before the summer.",
]
HEADING = "Quarterly Report"
# An earlier OCR's invisible layer (shorter than the page, so that using it shows).
LAYER = "Words of an earlier OCR layer over the scanned report page"


def report_ops(top: float = 700) -> list[Op]:
    return [
        Text(72, top, HEADING, 22, "B"),
        *lines(72, top - 40, BODY, size=12, leading=16),
        Text(72, top - 110, "Second Section", 16, "B"),
        *lines(72, top - 135, ["Every line of this page is read from its picture."], size=12),
    ]


def scan(source: Path, out: Path, *, turn: int = 0, dpi: int = 300, invisible: str | None = None) -> Path:
    """`source` rasterised page by page (greyscale, `dpi`), each page turned `turn` degrees
    clockwise, wrapped as an image-only PDF; with `invisible`, that text drawn over the
    picture in render mode 3 (an earlier OCR's layer)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(source))
    images = []
    for page in doc:
        image = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
        images.append(image.rotate(-turn, expand=True) if turn else image)
    doc.close()
    return image_pdf(images, out, dpi=dpi, invisible=invisible)


def image_pdf(images: list[Any], out: Path, *, dpi: int = 300, invisible: str | None = None) -> Path:
    """Greyscale PIL images, one per page at `dpi`, as an image-only PDF (see `scan`)."""
    pdf = pikepdf.new()
    for image in images:
        w, h = image.size[0] * 72 / dpi, image.size[1] * 72 / dpi
        xobject = pikepdf.Stream(pdf, zlib.compress(image.tobytes()))
        xobject.Type, xobject.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        xobject.Width, xobject.Height = image.size
        xobject.ColorSpace, xobject.BitsPerComponent = pikepdf.Name.DeviceGray, 8
        xobject.Filter = pikepdf.Name.FlateDecode
        ops = f"q {w:.2f} 0 0 {h:.2f} 0 0 cm /Im0 Do Q".encode()
        if invisible:
            ops += f" BT 3 Tr /F1 12 Tf 72 {h - 100:.0f} Td ({invisible}) Tj ET".encode()
        font = pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name("/" + FONTS["R"])
        )
        pdf.pages.append(
            pikepdf.Page(
                pikepdf.Dictionary(
                    Type=pikepdf.Name.Page,
                    MediaBox=[0, 0, w, h],
                    Resources=pikepdf.Dictionary(
                        XObject=pikepdf.Dictionary(Im0=xobject), Font=pikepdf.Dictionary(F1=font)
                    ),
                    Contents=pikepdf.Stream(pdf, ops),
                )
            )
        )
    buffer = io.BytesIO()
    pdf.save(buffer)
    out.write_bytes(buffer.getvalue())
    return out


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def found_share(expected: str, got: str) -> float:
    have = words(got)
    want = words(expected)
    return sum(1 for w in want if w in have) / len(want)


AUTO = ConvertOptions(ocr=OcrOptions(mode="auto", languages=("en",)))
FORCE = ConvertOptions(ocr=OcrOptions(mode="force", languages=("en",)))


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One report page scanned upright, the same turned 90 degrees, a document whose first
    page has a text layer and whose second is a scan, and a scan under an invisible layer."""
    d = tmp_path_factory.mktemp("ocr")
    source = make_pdf(d / "source.pdf", [report_ops()])
    upright = scan(source, d / "upright.pdf")
    turned = scan(source, d / "turned.pdf", turn=90)
    layered = scan(source, d / "layered.pdf", invisible=LAYER)
    return {"upright": upright, "turned": turned, "mixed": mixed_scan(d), "layered": layered}


TEXT_PAGE = "This page has a text layer of its own."


def mixed_scan(d: Path, second: list[Op] | None = None, name: str = "mixed") -> Path:
    """`d`/`name`.pdf: a first page with a text layer (TEXT_PAGE) and a second that is a scan
    (no text layer) of the report page, or of the page `second` draws."""
    mixed = make_pdf(
        d / f"{name}-source.pdf", [lines(72, 700, [TEXT_PAGE]), report_ops() if second is None else second]
    )
    scanned = scan(mixed, d / f"{name}-scanned.pdf")
    with pikepdf.open(mixed) as text_pdf, pikepdf.open(scanned) as scan_pdf:
        out = pikepdf.new()
        out.pages.append(text_pdf.pages[0])
        out.pages.append(scan_pdf.pages[1])
        out.save(d / f"{name}.pdf")
    return d / f"{name}.pdf"


# --- end to end ---------------------------------------------------------------------------------


@needs_tesseract
def test_a_scanned_page_is_read_with_its_heading_and_paragraphs(scans: dict[str, Path]) -> None:
    result = convert(scans["upright"], options=AUTO)
    (page,) = result.pages
    assert result.ocr_pages == [1]
    assert page.has_text_layer is False
    assert page.ocr is not None
    assert page.ocr.rotation == 0
    assert page.ocr.confidence > 0.8
    headings = [e for e in page.elements if e.type is ElementType.HEADING]
    assert [words(h.text) for h in headings] == [["quarterly", "report"], ["second", "section"]]
    assert headings[0].level is not None
    assert headings[1].level is not None
    assert headings[0].level < headings[1].level
    assert page.markdown.startswith("# Quarterly Report") or page.markdown.startswith("## Quarterly Report")
    assert found_share(" ".join(BODY), page.markdown) >= 0.95
    for element in page.elements:
        assert element.source == "ocr"
        assert element.confidence is not None
        assert 0.5 < element.confidence <= 1.0
        assert element.as_dict()["source"] == "ocr"
    # Boxes are the page's: the heading near the top left, inside the page.
    x0, top, x1, bottom = headings[0].bbox
    assert 60 <= x0 <= 80
    assert 70 <= top <= 110
    assert bottom < 130
    assert x1 < 300
    assert page.warnings == []
    assert result.warnings == []


@needs_tesseract
def test_a_page_scanned_turned_90_degrees_is_read_upright(scans: dict[str, Path]) -> None:
    result = convert(scans["turned"], options=AUTO)
    (page,) = result.pages
    assert page.ocr is not None
    assert page.ocr.rotation in (90, 270)
    # Described upright: portrait again.
    assert page.width < page.height
    first = page.elements[0]
    assert first.type is ElementType.HEADING
    assert words(first.text) == ["quarterly", "report"]
    assert found_share(" ".join(BODY), page.markdown) >= 0.95
    # In reading order: the body's sentences in turn.
    text = " ".join(words(page.markdown))
    assert text.index("committee") < text.index("spending") < text.index("members")


RUSSIAN = [
    "Настоящий документ описывает порядок работы библиотеки",
    "и правила пользования её фондами. Читатели обязаны",
    "бережно относиться к книгам и возвращать их в срок.",
]
SERIF = Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")  # Debian's fonts-dejavu-core


def drawn_page(rows: list[str], dpi: int = 300) -> Any:
    """A letter-sized greyscale page at `dpi` with `rows` drawn in 14-point DejaVu Serif."""
    from PIL import Image as PILImage
    from PIL import ImageDraw, ImageFont

    page = PILImage.new("L", (int(8.5 * dpi), 11 * dpi), 255)
    font = ImageFont.truetype(str(SERIF), round(14 * dpi / 72))
    draw = ImageDraw.Draw(page)
    for i, row in enumerate(rows):
        draw.text((dpi, dpi + i * round(20 * dpi / 72)), row, font=font, fill=0)
    return page


needs_russian = pytest.mark.skipif(
    not ocr_available() or "ru" not in installed_languages() or not SERIF.exists(),
    reason="OCR, its Russian model (tesseract-ocr-rus) or DejaVu Serif (fonts-dejavu-core) not installed",
)


@needs_russian
def test_a_page_in_a_script_the_requested_languages_do_not_read_is_read_with_its_model(tmp_path: Path) -> None:
    # An English page, two Russian ones, an English one; the client asks for English. The
    # first Russian page reads badly, is found to be Cyrillic and is read again with the
    # Russian model; the pages after it are read with it from the start (a document with a
    # page in Russian has more), and English pages read so stay English.
    pages = [drawn_page(BODY), drawn_page(RUSSIAN), drawn_page(RUSSIAN[::-1]), drawn_page(BODY[::-1])]
    pdf = image_pdf(pages, tmp_path / "mixed-scripts.pdf")
    result = convert(pdf, options=FORCE)
    english_1, russian_2, russian_3, english_4 = result.pages
    assert all(p.ocr is not None for p in result.pages)
    assert [(p.ocr.added_languages, p.ocr.script) for p in result.pages if p.ocr] == [
        ((), ""),
        (("ru",), "Cyrillic"),  # found here
        (("ru",), ""),  # read with it from the start
        (("ru",), ""),
    ]
    for page in (russian_2, russian_3):
        assert found_share(" ".join(RUSSIAN), page.markdown) >= 0.9
    for page in (english_1, english_4):
        assert found_share(" ".join(BODY), page.markdown) >= 0.95
        assert not re.search("[\u0400-\u04ff]", page.markdown)  # no Cyrillic look-alikes in English words
    warning = (
        "Page 2 is written in Cyrillic script, which the requested ocr_languages do not read; OCR read it, and "
        "the pages after, with ru as well. Name the documents' languages in ocr_languages to read every page "
        "with them from the start."
    )
    assert [p.warnings for p in result.pages] == [[], [warning], [], []]
    assert result.warnings == [warning]
    # Named by the client, the language is not added, and nothing is said.
    named = convert(pdf, options=ConvertOptions(ocr=OcrOptions(mode="force", languages=("ru",))))
    assert [p.ocr.added_languages for p in named.pages if p.ocr] == [(), (), (), ()]
    assert named.warnings == []
    # Parsed in parts (a version 2 job's) and kept as bytes, the pages read and warn the
    # same; a part starts again from the requested languages and finds the script itself.
    first, rest = parse_pages(pdf, pages=[1, 2], ocr=FORCE.ocr), parse_pages(pdf, pages=[3, 4], ocr=FORCE.ocr)
    parts = convert(pdf, options=FORCE, parsed=parsed_decode(parsed_encode([*first.models, *rest.models])))
    assert [p.markdown for p in parts.pages[:2]] == [p.markdown for p in result.pages[:2]]
    assert [p.ocr for p in parts.pages[:2]] == [p.ocr for p in result.pages[:2]]
    assert parts.pages[2].ocr is not None
    assert parts.pages[2].ocr.script == "Cyrillic"
    assert found_share(" ".join(RUSSIAN), parts.pages[2].markdown) >= 0.9
    assert parts.warnings == [warning.replace("Page 2 is", "Pages 2-3 are").replace("read it,", "read them,")]


@needs_russian
def test_a_second_reading_in_the_pages_script_is_kept_only_when_it_reads_clearly_better() -> None:
    page = drawn_page(RUSSIAN)
    kept = recognise(page, "eng", 300)
    assert kept.languages == "eng+rus"
    assert kept.confidence >= 80
    # Asked for more gain than the Russian model gives, the first reading stays.
    refused = recognise(page, "eng", 300, OcrParams(script_gain=100.0))
    assert refused.languages == "eng"
    assert refused.confidence < 60
    # Where a requested model reads the script, there is no second reading.
    assert recognise(page, "rus+eng", 300).languages == "rus+eng"


@pytest.mark.skipif("ru" not in installed_languages(), reason="Russian OCR model (tesseract-ocr-rus) not installed")
def test_the_model_of_a_script_is_added_only_where_no_requested_language_reads_it() -> None:
    assert script_model("Cyrillic", "eng") == "rus"
    assert script_model("Cyrillic", "deu+eng") == "rus"
    assert script_model("Cyrillic", "ukr+eng") is None  # Ukrainian is written in Cyrillic
    assert script_model("Cyrillic", "rus+eng") is None
    assert script_model("Latin", "eng") is None
    assert script_model("Tifinagh", "eng") is None  # no model of it here
    if "ar" in installed_languages():
        assert script_model("Arabic", "eng") == "ara"


def test_the_ocr_plan_names_the_pages_auto_reads(scans: dict[str, Path]) -> None:
    # The conversion's own test, without reading a page: the scan, not the text page, nor the
    # scan under an earlier OCR's invisible layer.
    assert ocr_plan(scans["mixed"], pages=[1, 2]).ocr_pages == [2]
    assert ocr_plan(scans["mixed"], pages=[1]).ocr_pages == []
    assert ocr_plan(scans["layered"], pages=[1]) == OcrPlan(ocr_pages=[], parsed=1)  # in doubt: parsed
    assert ocr_plan(scans["upright"], pages=[1, 5]).ocr_pages == [1]  # pages outside the document are left out
    # Stopped before any page: every page is counted in (a hold never falls short), and said so.
    stopped = ocr_plan(scans["mixed"], pages=[1, 2], should_stop=lambda: True)
    assert stopped == OcrPlan(ocr_pages=[1, 2], parsed=0, unexamined=2)
    assert stopped.upper_bound


PROSE = [f"Line {i} of a page of ordinary prose, long enough to be taken for a text layer." for i in range(40)]
STAMP: list[Op] = [Image(0, 0, 612, 792), Text(72, 30, "BATES 000123")]  # a scan with a stamp on it: OCR


@pytest.fixture(scope="module")
def long_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 pages of prose; page 50 a scan with a stamp, page 100 a picture alone, page 150 a
    picture over half the page beside a paragraph of text."""
    pages = [lines(72, 760, PROSE, size=10, leading=12) for _ in range(300)]
    pages[49] = STAMP
    pages[99] = [Image(36, 36, 576, 756)]
    pages[149] = [Image(0, 396, 612, 792), *lines(72, 380, PROSE[:20], size=10, leading=12)]
    return make_pdf(tmp_path_factory.mktemp("long") / "long.pdf", pages)


def test_the_first_look_passes_pages_of_text_and_leaves_pictures_and_short_text_in_doubt(
    long_text: Path, scans: dict[str, Path]
) -> None:
    assert text_pages(long_text, range(1, 301)) == set(range(1, 301)) - {50, 100, 150}
    assert text_pages(long_text, [1, 50, 400]) == {1}
    assert text_pages(scans["layered"], [1]) == set()  # an earlier OCR's layer lies over a picture
    assert text_pages(scans["mixed"], [1]) == set()  # one short line: parsed to be sure
    assert text_pages(long_text, range(1, 301), should_stop=lambda: True) == set()
    assert text_pages(long_text.with_suffix(".missing"), [1]) == set()


def test_the_ocr_plan_parses_only_the_pages_in_doubt(long_text: Path) -> None:
    plan = ocr_plan(long_text, pages=range(1, 301))

    # The engine's own test on the three pages in doubt: the stamped scan and the bare picture
    # are read by OCR, the half-page picture beside its text is not.
    assert plan == OcrPlan(ocr_pages=[50, 100], parsed=3)
    assert not plan.upper_bound
    assert ocr_plan(long_text, pages=[2, 3, 50]) == OcrPlan(ocr_pages=[50], parsed=1)
    models = parse_pages(long_text, pages=[50, 100, 150]).models
    assert [m.number for m in models if isinstance(m, PageModel) and needs_ocr(m)] == [50, 100]


@needs_tesseract
def test_auto_reads_only_the_pages_without_a_text_layer(scans: dict[str, Path]) -> None:
    result = convert(scans["mixed"], options=AUTO)
    assert result.ocr_pages == [2]
    first, second = result.pages
    assert first.markdown == TEXT_PAGE
    assert first.has_text_layer
    assert all(e.source is None for e in first.elements)
    assert "source" not in first.elements[0].as_dict()
    assert found_share(" ".join(BODY), second.markdown) >= 0.95


@needs_tesseract
def test_an_invisible_text_layer_over_a_scan_is_used_unless_ocr_is_forced(scans: dict[str, Path]) -> None:
    auto = convert(scans["layered"], options=AUTO)
    assert auto.ocr_pages == []
    assert auto.pages[0].markdown == LAYER

    forced = convert(scans["layered"], options=FORCE)
    assert forced.ocr_pages == [1]
    assert "earlier OCR layer" not in forced.pages[0].markdown
    assert found_share(" ".join(BODY), forced.pages[0].markdown) >= 0.95


@needs_tesseract
def test_parsed_parts_read_by_ocr_render_like_the_whole(scans: dict[str, Path]) -> None:
    parsed = parse_pages(scans["mixed"], pages=[1, 2], ocr=OcrOptions(mode="auto"))
    whole = convert(scans["mixed"], options=AUTO)
    # Through the bytes a job's parts are kept as.
    parts = convert(scans["mixed"], options=AUTO, parsed=parsed_decode(parsed_encode(parsed.models)))
    assert parts.markdown == whole.markdown
    assert parts.ocr_pages == [2]
    assert parts.pages[1].ocr == whole.pages[1].ocr
    assert [e.as_dict() for e in parts.pages[1].elements] == [e.as_dict() for e in whole.pages[1].elements]


@needs_tesseract
def test_parsed_parts_read_by_ocr_warn_of_a_blank_scan_as_the_whole_does(tmp_path: Path) -> None:
    blank = mixed_scan(tmp_path, second=[], name="blank")
    parsed = parse_pages(blank, pages=[1, 2], ocr=OcrOptions(mode="auto"))
    whole = convert(blank, options=AUTO)

    parts = convert(blank, options=AUTO, parsed=parsed.models)

    assert parts.warnings == whole.warnings == ["Page 2: no text found, in a text layer or by OCR; it was left empty."]
    assert parts.pages[1].warnings == whole.pages[1].warnings


def test_without_ocr_a_scan_is_still_refused(scans: dict[str, Path]) -> None:
    with pytest.raises(EngineError) as info:
        convert(scans["upright"])
    assert info.value.code == "document_has_no_text_layer"
    assert "OCR is not available" in info.value.message


@needs_tesseract
def test_a_language_that_is_not_installed_is_refused(scans: dict[str, Path]) -> None:
    with pytest.raises(EngineError) as info:
        convert(scans["upright"], options=ConvertOptions(ocr=OcrOptions(mode="auto", languages=("xx",))))
    assert info.value.code == "ocr_language_not_available"
    assert info.value.param == "options.ocr_languages"
    assert info.value.details["language"] == "xx"


@needs_tesseract
def test_installed_languages_are_iso_codes_with_english() -> None:
    installed = installed_languages()
    assert "en" in installed
    assert all(re.fullmatch(r"[a-z]{2}", code) for code in installed)


# --- which pages need OCR -----------------------------------------------------------------------


def _line(text: str, top: float = 100) -> Line:
    return Line(72, top, 72 + 6 * len(text), top + 12, text, [(text, 0)], 11, 0, [], [])


def test_a_page_without_text_needs_ocr() -> None:
    assert needs_ocr(PageModel(1, 612, 792))


def test_a_page_of_text_does_not_need_ocr() -> None:
    page = PageModel(1, 612, 792, lines=[_line("An ordinary line of text on the page.")], chars=30)
    assert not needs_ocr(page)


def test_a_page_of_unmapped_or_private_use_glyphs_needs_ocr() -> None:
    garbage = "(cid:12)(cid:40)(cid:7) \ue001\ue002\ue003\ue004 ok"
    page = PageModel(1, 612, 792, lines=[_line(garbage)], chars=len(garbage))
    assert needs_ocr(page)
    mostly_text = "A line with one icon \ue001 in it and plenty of words."
    assert not needs_ocr(PageModel(1, 612, 792, lines=[_line(mostly_text)], chars=len(mostly_text)))


def test_a_stamp_over_a_full_page_picture_needs_ocr() -> None:
    stamped = PageModel(1, 612, 792, lines=[_line("Bates 000123")], chars=11, images=[(0, 0, 612, 792)])
    assert needs_ocr(stamped)
    # The same few words beside a small picture are the page's text.
    small = PageModel(1, 612, 792, lines=[_line("Bates 000123")], chars=11, images=[(72, 72, 200, 200)])
    assert not needs_ocr(small)


def test_the_engine_reads_a_stamped_scan_built_with_the_writer(tmp_path: Path) -> None:
    from conversion.engine.convert import _iter_models, _open_checked

    path = make_pdf(tmp_path / "stamp.pdf", [[Image(0, 0, 612, 792), Text(500, 20, "000123", 8)]])
    opened = _open_checked(path, None, want_outline=False)
    try:
        (model,) = list(_iter_models(opened, [1], None, {}))
    finally:
        opened.close()
    assert isinstance(model, PageModel)
    assert model.has_text_layer
    assert needs_ocr(model)


# --- recognised words to lines --------------------------------------------------------------------


def _word(text: str, x0: float, top: float, width: float, height: float = 40, confidence: float = 90) -> Word:
    return Word(text, (x0, top, x0 + width, top + height), confidence)


def _recognised(rows: list[tuple[list[Word], float]], width: int = 2550, height: int = 3300) -> Recognised:
    return Recognised([OcrLine(ws, row, -8, None) for ws, row in rows], width, height)


def test_recognised_words_become_lines_in_points() -> None:
    scale = 300 / 72
    result = _recognised(
        [
            ([_word("Annual", 300, 300, 240, 80), _word("Review", 570, 300, 250, 80)], 88),
            ([_word("The", 300, 500, 110), _word("board", 430, 500, 180), _word("met.", 630, 500, 150)], 46),
            ([_word("It", 300, 560, 50), _word("agreed", 370, 560, 230), _word("twice.", 620, 560, 200)], 50),
        ]
    )
    model = page_model(result, 3, scale)
    assert (model.number, round(model.width), round(model.height)) == (3, 612, 792)
    title, first, second = model.lines
    assert title.text == "Annual Review"
    assert (round(title.x0), round(title.top), round(title.x1), round(title.bottom)) == (72, 72, 197, 91)
    # Sizes from the row height; 46 and 50 pixels are one size (the page's body), the
    # title's well apart.
    assert first.size == second.size
    assert title.size > 1.5 * first.size
    assert 10 <= first.size <= 13
    assert first.confidence == pytest.approx(0.9)
    # One glyph per character, a space between words, left to right.
    assert "".join(first.glyph_text) == "The board met."
    assert len(first.glyph_x) == 2 * len(first.glyph_text)
    assert first.glyph_x == sorted(first.glyph_x)
    assert model.chars == len("AnnualReviewTheboardmet.Itagreedtwice.")
    assert model.ocr is not None
    assert model.ocr.confidence == pytest.approx(0.9)


def test_a_small_mark_opening_a_line_is_a_bullet() -> None:
    mark = _word("e", 300, 515, 14, 14)
    model = page_model(
        _recognised([([mark, _word("First", 340, 500, 120), _word("point", 480, 500, 120)], 46)]), 1, 300 / 72
    )
    assert model.lines[0].text == "• First point"
    # A real one-letter word of the line's height stays a word.
    word_a = _word("a", 300, 500, 20, 40)
    model = page_model(_recognised([([word_a, _word("second", 340, 500, 160)], 46)]), 1, 300 / 72)
    assert model.lines[0].text == "a second"


def test_words_at_an_even_pitch_are_monospaced() -> None:
    # Courier at 300 dpi: 25 pixels a character, the space included.
    code = ["let", "total", "=", "items.len()", "+", "1;"]
    x, ws = 300.0, []
    for w in code:
        ws.append(_word(w, x, 500, 25 * len(w) - 4))
        x += 25 * (len(w) + 1)
    prose = [_word("Ordinary", 300, 600, 200), _word("words", 520, 600, 140), _word("in", 680, 600, 40)]
    prose += [_word("a", 740, 600, 25), _word("proportional", 785, 600, 300), _word("face.", 1105, 600, 110)]
    model = page_model(_recognised([(ws, 46), (prose, 46)]), 1, 300 / 72)
    assert model.lines[0].style & MONO
    assert not model.lines[1].style & MONO


def test_chinese_words_are_joined_without_spaces() -> None:
    line = [_word("中文", 300, 500, 100), _word("文本", 400, 500, 100), _word("OCR", 520, 500, 90)]
    model = page_model(_recognised([(line, 46)]), 1, 300 / 72)
    assert model.lines[0].text == "中文文本 OCR"


def test_right_to_left_words_come_in_reading_order_and_are_made_logical() -> None:
    # Tesseract gives an Arabic line's words right to left, each word's letters as they
    # lie on the page (left to right): "سلام عليكم" as "سلام" reversed, then "عليكم" reversed.
    line = [_word("سلام"[::-1], 880, 500, 120), _word("عليكم"[::-1], 700, 500, 150)]
    model = page_model(_recognised([(line, 46)]), 1, 300 / 72)
    (ln,) = model.lines
    assert ln.text == "سلام عليكم"
    assert ln.rtl
    assert model.rtl
    # The glyphs lie left to right on the page.
    assert "".join(ln.glyph_text) == "سلام عليكم"[::-1]


def test_a_line_mixing_arabic_and_latin_words_is_read_right_to_left_whatever_order_tesseract_gives() -> None:
    # "WebStorm هو محرر لـ JavaScript" laid out right to left: WebStorm at the right end,
    # JavaScript at the left. Tesseract may give such a line's words left to right (it took
    # the line for a left-to-right one); their places say the order.
    logical = ["WebStorm", "هو", "محرر", "لـ", "JavaScript"]
    x0 = {"JavaScript": 300, "لـ": 560, "محرر": 640, "هو": 800, "WebStorm": 900}
    tesseract_order = sorted(logical, key=lambda w: x0[w])
    line = [_word(w[::-1] if is_rtl(w) else w, x0[w], 500, 60 if is_rtl(w) else 200) for w in tesseract_order]
    body = [_word("نص"[::-1], 900 - 100 * i, 600, 60) for i in range(6)]  # the page is Arabic
    model = page_model(_recognised([(line, 46), (body, 46)]), 1, 300 / 72)
    assert model.lines[0].text == " ".join(logical)
    assert model.lines[0].rtl
    # A list item's number "1." shows as ".1" at the right end of its line: read as "1."
    # (the list stage then takes it for the item's marker).
    item = [_word("مرحبا"[::-1], 700, 700, 150), _word(".1", 870, 700, 40)]
    model = page_model(_recognised([(item, 46), (body, 46)]), 1, 300 / 72)
    assert model.lines[0].text == "1. مرحبا"
    # A number inside right-to-left text keeps its digits' order.
    number = [_word("صفحة"[::-1], 800, 700, 100), _word("2616", 650, 700, 100), _word("من"[::-1], 500, 700, 60)]
    model = page_model(_recognised([(number, 46), (body, 46)]), 1, 300 / 72)
    assert model.lines[0].text == "صفحة 2616 من"
    # A full stop after a Latin word that ends a Hebrew line shows at the word's left (".PDF"):
    # it is read after it, as on a text layer.
    hebrew = [_word(".PDF", 300, 800, 120), _word("הוא"[::-1], 450, 800, 80), _word("הקובץ"[::-1], 560, 800, 120)]
    model = page_model(_recognised([(hebrew, 46), (body, 46)]), 1, 300 / 72)
    assert model.lines[0].text == "הקובץ הוא PDF."
    # A bullet Tesseract misread at the right end of a right-to-left line is the item's
    # bullet, drawn where the line opens.
    item = [_word("שלום"[::-1], 600, 900, 120), _word("e", 760, 915, 14, 14)]
    model = page_model(_recognised([(item, 46), (body, 46)]), 1, 300 / 72)
    assert model.lines[0].text == "• שלום"
    assert model.lines[0].glyph_text[-1] == "•"
    assert opens_at_right(model.lines[0])


def test_short_lines_at_the_pages_monospaced_pitch_are_monospaced() -> None:
    def code(text: str, top: float) -> list[Word]:
        x, ws = 300.0, []
        for w in text.split():
            ws.append(_word(w, x, top, 25 * len(w) - 4))
            x += 25 * (len(w) + 1)
        return ws

    long_line = code("let total = items.len() + 1;", 500)
    short = code("use E::*;", 560)
    prose = [_word("Short", 300, 620, 120), _word("prose.", 440, 620, 130)]
    model = page_model(_recognised([(long_line, 46), (short, 46), (prose, 46)]), 1, 300 / 72)
    assert [bool(ln.style & MONO) for ln in model.lines] == [True, True, False]


# --- weight from the picture ----------------------------------------------------------------------


def _inked(text: str, x0: float, top: float, stem: float) -> Word:
    """A word whose strokes are `stem` pixels wide: ink and edges as the measure finds them
    for strokes 40 pixels long (ink w*L per stroke, edges 2L)."""
    strokes = len(text)
    return Word(text, (x0, top, x0 + 25 * len(text), top + 40), 90, ink=round(stem * 40 * strokes), edges=80 * strokes)


def _inked_line(words: list[tuple[str, float]], top: float) -> list[Word]:
    """Words (text, stem width) set one after the other, a space of 12 pixels between."""
    out: list[Word] = []
    x = 300.0
    for text, stem in words:
        out.append(_inked(text, x, top, stem))
        x = out[-1].box[2] + 12
    return out


def test_a_line_whose_strokes_are_thicker_than_the_body_is_bold() -> None:
    body = [
        "The",
        "members",
        "agreed",
        "to",
        "publish",
        "the",
        "accounts",
        "before",
        "the",
        "summer",
        "recess",
        "began",
    ]
    rows = [([_inked(w, 300 + 200 * i, 500 + 60 * n, 4.0) for i, w in enumerate(body)], 46) for n in range(3)]
    heading = [_inked("Budget", 300, 700, 6.2), _inked("Decisions", 500, 700, 6.0)]
    # Inside a line: a run of bold words long enough to measure, and a short word whose
    # measure is high by chance (noise on a two-letter word).
    mixed = [_inked("Note:", 300, 760, 6.4), _inked("spending", 450, 760, 4.0), _inked("in", 650, 760, 6.0)]
    mixed += [_inked("March", 720, 760, 4.1)]
    model = page_model(_recognised([*rows, (heading, 46), (mixed, 46)]), 1, 300 / 72)

    *body_lines, bold, inline = model.lines
    assert [ln.style & BOLD for ln in body_lines] == [0, 0, 0]
    assert bold.style & BOLD
    assert bold.spans == [("Budget Decisions", BOLD)]
    assert not inline.style & BOLD
    assert inline.spans == [("Note: ", BOLD), ("spending in March", 0)]
    assert "".join(t for t, _ in inline.spans) == inline.text


def test_a_page_with_too_little_text_has_no_bold_measured() -> None:
    heading = [_inked("Budget", 300, 700, 6.2), _inked("Decisions", 500, 700, 6.0)]
    line = [_inked("One", 300, 800, 4.0), _inked("short", 400, 800, 4.0), _inked("line.", 500, 800, 4.0)]
    model = page_model(_recognised([(heading, 46), (line, 46)]), 1, 300 / 72)
    assert [ln.style & BOLD for ln in model.lines] == [0, 0]


@needs_tesseract
def test_a_bold_line_at_the_body_size_of_a_scan_is_a_heading(tmp_path: Path) -> None:
    body = [*BODY, "Reports of the three working groups were read and approved without changes."]
    ops = [
        *lines(72, 700, body, size=12, leading=16),
        Text(72, 620, "Budget Decisions", 12, "B"),
        *lines(72, 600, body, size=12, leading=16),
    ]
    source = make_pdf(tmp_path / "source.pdf", [ops])
    assert "## Budget Decisions" in convert(source).pages[0].markdown  # as on the text layer

    (page,) = convert(scan(source, tmp_path / "scan.pdf"), options=AUTO).pages

    headings = [e for e in page.elements if e.type is ElementType.HEADING]
    assert [words(h.text) for h in headings] == [["budget", "decisions"]]
    assert "**" not in page.markdown.replace("## Budget Decisions", "")  # the body is not bold


def test_sizes_come_from_the_x_height_where_a_line_has_enough_of_its_letters() -> None:
    scale = 300 / 72

    def row(text: str, top: float, row_height: float, x_height: float | None) -> OcrLine:
        ws = [_word(w, 300 + 220 * i, top, 200) for i, w in enumerate(text.split())]
        letters = [c for c in text if c in "acemnorsuvwxz"]
        return OcrLine(ws, row_height, -8, None, [x_height] * len(letters) if x_height else [])

    body = [row("the accounts were read and approved once more", 700 + 60 * n, 37 + n % 3, 19) for n in range(4)]
    # Two headings of one style whose row heights Tesseract measured 15% apart.
    summary, motivation = row("Summary", 500, 50, 25), row("Motivation", 600, 43, 25)
    # Capitals and digits: no x-height letters, sized from the row height like the others.
    capitals = row("RFC 3533", 1000, 38, None)
    model = page_model(Recognised([summary, motivation, *body, capitals], 2550, 3300), 1, scale)

    first, second, *body_lines, caps = model.lines
    assert first.size == second.size
    assert first.size > 1.2 * body_lines[0].size
    assert {ln.size for ln in body_lines} == {body_lines[0].size}
    assert caps.size == body_lines[0].size


def test_words_are_judged_bold_against_the_body_text_of_their_own_script() -> None:
    # An Arabic page: its body strokes 4 pixels wide; Latin names inside it draw 5.5-pixel
    # strokes at the same height (a thicker script, not bold), too few to have a body of their own.
    arabic = ["يمكن", "إضافة", "معظم", "الميزات", "المدرجة", "فيه", "إلى", "المحرر", "كإضافات"]
    rows = [(_inked_line([(w, 4.0) for w in arabic] + [("GitHub", 5.5)], 500 + 60 * n), 46) for n in range(6)]
    heading = _inked_line([("ميزات", 6.2), ("المحرر", 6.0)], 800)
    model = page_model(_recognised([*rows, (heading, 46)]), 1, 300 / 72)

    *body_lines, title = model.lines
    assert [ln.style & BOLD for ln in body_lines] == [0] * 6
    assert not any(style & BOLD for ln in body_lines for _, style in ln.spans)
    assert title.style & BOLD
