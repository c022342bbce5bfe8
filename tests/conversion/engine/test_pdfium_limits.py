"""The PDFium source works under the budgets of the pdfminer.six source: every stream PDFium
would decode to load a page is decoded first under its budget, a page's content with the
forms it draws is bounded, the objects and characters of a page are counted, and the page
clock and should_stop are polled inside a page. The same hostile file gives the same error
code from both engines."""

from __future__ import annotations

import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.hostile.bombs import _pdf, _stream, cmap_bomb, content_bomb, deflate_repeated, xobject_bomb
from conversion.engine import ENGINE_ID, PDFIUM_ENGINE_ID, EngineError, convert, layout, pdfium_source
from conversion.engine.convert import ConvertOptions
from conversion.engine.limits import LIMITS

MiB = 1024 * 1024
ENGINES = [ENGINE_ID, PDFIUM_ENGINE_ID]
_HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _one_page(resources: bytes, content: bytes, *more: bytes) -> bytes:
    """One page drawing `content` (object 4) with `resources`; `more` are objects 5 on."""
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents 4 0 R >>" % resources,
            _stream(zlib.compress(content)),
            *more,
        ]
    )


def font_program_bomb(mib: int) -> bytes:
    """A Type1 font whose embedded program (/FontFile) inflates to `mib` MiB."""
    program = _stream(deflate_repeated(b"", b"\0" * MiB, mib), b"/Length1 16 /Length2 0 /Length3 0")
    return _one_page(
        b"<< /Font << /F1 5 0 R >> >>",
        b"BT /F1 12 Tf 72 720 Td (Bomb) Tj ET",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Bomb /FirstChar 65 /LastChar 65 /Widths [600]"
        b" /FontDescriptor 6 0 R >>",
        b"<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0"
        b" /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile 7 0 R >>",
        program,
    )


def form_fanout(levels: int, fanout: int) -> bytes:
    """A page drawing form 0, each form drawing the next `fanout` times, `levels` deep: a
    small file whose parse draws fanout ** levels rectangles."""
    objects: list[bytes] = []
    first = 5
    for level in range(levels):
        if level == levels - 1:
            body = b"0 0 1 1 re f\n"
            resources = b""
        else:
            body = b"/X Do\n" * fanout
            resources = b"/Resources << /XObject << /X %d 0 R >> >>" % (first + level + 1)
        objects.append(_stream(zlib.compress(body), b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources))
    return _one_page(
        b"<< /Font << /F1 %d 0 R >> /XObject << /X %d 0 R >> >>" % (first + levels, first),
        b"BT /F1 12 Tf 72 720 Td (Fans) Tj ET\n/X Do\n",
        *objects,
        _HELVETICA,
    )


def many_glyphs(count: int) -> bytes:
    """A page of `count` glyphs, 100 a line."""
    lines = b"".join(b"(%s) Tj 0 -1 Td\n" % (b"A" * 100) for _ in range(count // 100))
    return _one_page(b"<< /Font << /F1 5 0 R >> >>", b"BT /F1 1 Tf 10 780 Td\n" + lines + b"ET", _HELVETICA)


def many_shapes(count: int) -> bytes:
    """A page of one word and `count` filled rectangles."""
    shapes = b"".join(b"%d %d 2 2 re f\n" % (i % 300, i // 300 % 390) for i in range(count))
    return _one_page(b"<< /Font << /F1 5 0 R >> >>", b"BT /F1 12 Tf 72 720 Td (Word) Tj ET\n" + shapes, _HELVETICA)


def _error(path: Path, engine: str, **kwargs: object) -> EngineError:
    with pytest.raises(EngineError) as caught:
        convert(path, options=ConvertOptions(engine=engine), **kwargs)
    return caught.value


@pytest.mark.parametrize(
    ("bomb", "limit"),
    [
        (lambda: content_bomb(256), LIMITS.max_decoded_bytes),
        (lambda: xobject_bomb(256), LIMITS.max_decoded_bytes),
        (lambda: cmap_bomb(64), LIMITS.max_cmap_bytes),
        (lambda: font_program_bomb(256), LIMITS.max_decoded_bytes),
    ],
    ids=["content", "form_xobject", "tounicode_cmap", "font_program"],
)
def test_a_stream_past_its_budget_stops_both_engines_alike(
    tmp_path: Path, bomb: Callable[[], bytes], limit: int
) -> None:
    path = tmp_path / "bomb.pdf"
    path.write_bytes(bomb())
    found = {}
    for engine in ENGINES:
        started = time.monotonic()
        error = _error(path, engine)
        assert time.monotonic() - started < 5
        found[engine] = (error.code, error.details)

    reason = f"a stream decodes to more than {limit // MiB} MiB"
    assert found == {engine: ("document_too_complex", {"page": 1, "reason": reason}) for engine in ENGINES}


def test_the_budgets_bound_pdfiums_parse_of_a_page_under_them(tmp_path: Path) -> None:
    # Each stream well under its budget: both engines convert the page.
    path = tmp_path / "fine.pdf"
    path.write_bytes(content_bomb(8))
    for engine in ENGINES:
        assert "Bomb" in convert(path, options=ConvertOptions(engine=engine)).markdown


def test_forms_drawn_a_hundred_million_times_stop_both_engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ten draws of ten draws ... eight deep: 10^8 rectangles from a file of a few kilobytes.
    path = tmp_path / "fanout.pdf"
    path.write_bytes(form_fanout(9, 10))
    assert path.stat().st_size < 10_000
    # pdfminer.six stops at its object cap, lowered so that it does in a second or so; PDFium's
    # parse is bounded before PDFium reads the page (the content, forms counted per draw).
    monkeypatch.setattr(layout, "MAX_LAYOUT_OBJECTS_PER_PAGE", 5_000)
    errors = {}
    for engine, seconds in ((ENGINE_ID, 20), (PDFIUM_ENGINE_ID, 1)):
        started = time.monotonic()
        errors[engine] = _error(path, engine)
        assert time.monotonic() - started < seconds
    assert {engine: error.code for engine, error in errors.items()} == dict.fromkeys(ENGINES, "document_too_complex")
    assert errors[ENGINE_ID].details == {"page": 1, "reason": "more than 5,000 layout objects"}
    assert errors[PDFIUM_ENGINE_ID].details == {
        "page": 1,
        "reason": "more than 64 MiB of content, forms counted at each draw",
    }


def test_forms_drawn_many_times_within_the_budget_convert(tmp_path: Path) -> None:
    path = tmp_path / "fanout.pdf"
    path.write_bytes(form_fanout(3, 10))
    assert "Fans" in convert(path, options=ConvertOptions(engine=PDFIUM_ENGINE_ID)).markdown


@pytest.mark.parametrize("page", [many_glyphs(6000), many_shapes(6000)], ids=["glyphs", "shapes"])
def test_the_objects_of_a_page_are_counted_as_by_pdfminer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: bytes
) -> None:
    path = tmp_path / "many.pdf"
    path.write_bytes(page)
    for engine in ENGINES:
        assert convert(path, options=ConvertOptions(engine=engine)).pages[0].markdown

    # The same cap in both sources, lowered under the page's objects.
    monkeypatch.setattr(layout, "MAX_LAYOUT_OBJECTS_PER_PAGE", 5000)
    monkeypatch.setattr(pdfium_source, "MAX_LAYOUT_OBJECTS_PER_PAGE", 5000)
    found = {engine: _error(path, engine) for engine in ENGINES}
    assert {engine: (error.code, error.details) for engine, error in found.items()} == dict.fromkeys(
        ENGINES, ("document_too_complex", {"page": 1, "reason": "more than 5,000 layout objects"})
    )


def test_the_page_clock_runs_inside_a_pdfium_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.pdf"
    path.write_bytes(many_glyphs(20_000))
    monkeypatch.setattr(layout, "MAX_SECONDS_PER_PAGE", 0.0)
    monkeypatch.setattr(pdfium_source, "MAX_SECONDS_PER_PAGE", 0.0)

    found = {engine: _error(path, engine) for engine in ENGINES}

    assert {engine: (error.code, error.details) for engine, error in found.items()} == dict.fromkeys(
        ENGINES, ("document_too_complex", {"page": 1, "reason": "more than 0 seconds"})
    )


def test_should_stop_is_polled_inside_a_pdfium_page(tmp_path: Path) -> None:
    path = tmp_path / "many.pdf"
    path.write_bytes(many_glyphs(20_000))
    inside: list[bool] = []

    def should_stop() -> bool:
        # Stops only when asked from inside the PDFium source's page work.
        inside.append(sys._getframe(1).f_code.co_filename == pdfium_source.__file__)
        return inside[-1]

    result = convert(path, options=ConvertOptions(engine=PDFIUM_ENGINE_ID), should_stop=should_stop)

    assert result.stopped
    assert result.pages == []
    assert inside[-1]


def test_a_huge_picture_over_text_is_not_rendered(tmp_path: Path) -> None:
    # 40,000 x 40,000 grey pixels (1.6 GB decoded; PDFium takes seconds to render them) in a
    # file of a few megabytes, drawn over the text: too large to be rendered, it is not taken
    # for a cover (pdfminer.six, which renders nothing, takes it for one).
    side = 40_000
    image = _stream(
        deflate_repeated(b"", b"\0" * side, side),
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8"
        % (side, side),
    )
    path = tmp_path / "picture.pdf"
    path.write_bytes(
        _one_page(
            b"<< /Font << /F1 5 0 R >> /XObject << /Im 6 0 R >> >>",
            b"BT /F1 12 Tf 72 720 Td (Under) Tj ET\nq 200 0 0 200 50 650 cm /Im Do Q\n",
            _HELVETICA,
            image,
        )
    )
    started = time.monotonic()

    result = convert(path, options=ConvertOptions(engine=PDFIUM_ENGINE_ID))

    assert time.monotonic() - started < 1
    assert "Under" in result.markdown
