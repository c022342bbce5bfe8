"""A document parsed in parts (`parse_pages`), stored as bytes (`parsed_encode`) and rendered
whole (`convert(..., parsed=...)`) gives what one `convert` of the same pages gives."""

from __future__ import annotations

import dataclasses
import importlib
import json
import zlib
from itertools import chain
from pathlib import Path

import pytest

from conversion.engine import ConversionResult, EngineError, convert
from conversion.engine.layout import PageModel
from conversion.engine.parsed import ParsedStale, parsed_decode, parsed_encode

from .pdfs import Op, Rule, Text, add_outline, lines, make_pdf, ruled_grid

engine = importlib.import_module("conversion.engine.convert")

WORDS = ["harvest", "river", "market", "winter", "council", "bridge", "letter", "garden", "school", "railway"]
PAGES = 12


def _body(n: int, count: int = 8) -> list[str]:
    return [
        f"The {WORDS[(n + i) % len(WORDS)]} and the {WORDS[(n * 3 + i) % len(WORDS)]} were talked about at length."
        for i in range(count)
    ]


def _page(n: int) -> list[Op]:
    """A book page: a running foot with its number, a section heading on some pages, prose;
    page 4 ends with a table that runs on at the top of page 5, page 8 with a word
    hyphenated over the break."""
    ops: list[Op] = [Text(300, 40, f"{n} THE RIVER BOOK", 8)]
    top = 720
    if n % 3 == 1:
        ops.append(Text(72, top, f"Chapter {n // 3 + 1}: The {WORDS[n % len(WORDS)]}", 18, "B"))
        top -= 40
    if n == 5:
        ops += ruled_grid([["Cole", "1903"], ["Dunmore", "1904"]], 740)
        top = 680
    body = _body(n)
    if n == 8:
        body[-1] = "The council met at the bridge to talk about the har-"
    if n == 9:
        body[0] = "vest and the railway, then about the winter market."
    ops += lines(72, top, body)
    if n == 4:
        ops += ruled_grid([["Town", "Year"], ["Ashby", "1901"], ["Brill", "1902"]], 250)
    return ops


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_pdf(tmp_path_factory.mktemp("parsed") / "book.pdf", [_page(n) for n in range(1, PAGES + 1)])
    return add_outline(path, [(1, f"Chapter {k + 1}: The {WORDS[(3 * k + 1) % len(WORDS)]}", 3 * k) for k in range(4)])


def _in_parts(path: Path, numbers: list[int], size: int) -> list[PageModel | int]:
    """Parse `numbers` in parts of `size` pages, each through the bytes a task would store."""
    parts = [numbers[i : i + size] for i in range(0, len(numbers), size)]
    return list(
        chain.from_iterable(parsed_decode(parsed_encode(engine.parse_pages(path, pages=p).models)) for p in parts)
    )


def _same(a: ConversionResult, b: ConversionResult) -> None:
    assert b.markdown == a.markdown
    assert [dataclasses.asdict(p) for p in b.pages] == [dataclasses.asdict(p) for p in a.pages]
    assert (b.warnings, b.truncated, b.stopped, b.page_count) == (a.warnings, a.truncated, a.stopped, a.page_count)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_parts_rendered_whole_give_the_conversion_of_the_whole(book: Path, size: int) -> None:
    whole = convert(book)
    # The document-level work is there to be kept: the running foot is dropped, the
    # hyphenated word joined, the table across the break made one.
    assert "THE RIVER BOOK" not in whole.markdown
    assert "harvest and the railway" in whole.markdown
    assert whole.markdown.count("| Town | Year |") == 1
    assert "| Dunmore | 1904 |" in whole.markdown
    _same(whole, convert(book, parsed=_in_parts(book, list(range(1, PAGES + 1)), size)))


def test_converting_the_parts_separately_would_not_give_the_whole(book: Path) -> None:
    # Why rendering waits for every part: each part converted alone keeps a running foot
    # it sees too rarely, and leaves the word and the table split at its edge.
    parts = [convert(book, pages=list(range(s, s + 4))).markdown for s in range(1, PAGES + 1, 4)]
    assert "\n\n".join(parts) != convert(book).markdown


def test_a_selection_is_rendered_as_convert_renders_it(book: Path) -> None:
    selected = [2, 3, 4, 5, 9, 10]
    _same(convert(book, pages=selected), convert(book, parsed=_in_parts(book, selected, 2), pages=selected))


def test_a_prefix_of_the_pages_is_a_conversion_stopped_after_it(book: Path) -> None:
    parsed = _in_parts(book, list(range(1, 6)), 2)
    result = convert(book, parsed=parsed)
    assert result.stopped
    assert [p.page for p in result.pages] == [1, 2, 3, 4, 5]


def test_pages_out_of_order_are_the_callers_mistake(book: Path) -> None:
    parsed = _in_parts(book, [3, 4], 2) + _in_parts(book, [1, 2], 2)
    with pytest.raises(engine.ParsedMismatch):
        convert(book, parsed=parsed)


def test_a_page_that_failed_to_parse_stays_a_page_delivered_empty(book: Path) -> None:
    parsed = _in_parts(book, [1, 2, 3], 3)
    parsed[1] = 2  # as `parse_pages` gives a page it could not parse
    result = convert(book, parsed=parsed_decode(parsed_encode(parsed)), pages=[1, 2, 3])
    assert result.pages[1].markdown == ""
    assert "Page 2 could not be parsed; it was left empty." in result.warnings
    assert result.pages[0].markdown
    assert result.pages[2].markdown


def test_pages_outside_the_document_are_refused(book: Path) -> None:
    with pytest.raises(EngineError) as caught:
        engine.parse_pages(book, pages=[PAGES + 1, PAGES + 2])
    assert caught.value.code == "page_range_out_of_bounds"


def test_a_stop_asked_for_gives_the_pages_parsed_so_far(book: Path) -> None:
    polls: list[int] = []

    def stop_after_page_4() -> bool:
        # Polled between pages (and inside a page with many objects): stop once 4 are parsed.
        polls.append(1)
        return len(polls) > 4

    parsed = engine.parse_pages(book, pages=list(range(1, PAGES + 1)), should_stop=stop_after_page_4)
    assert parsed.stopped
    assert [m.number for m in parsed.models if isinstance(m, PageModel)] == [1, 2, 3, 4]


def test_bytes_of_another_engine_version_or_damaged_are_refused(book: Path) -> None:
    data = parsed_encode(engine.parse_pages(book, pages=[1]).models)
    body = json.loads(zlib.decompress(data))
    written_by = body["engine"]
    # Either engine's version changed since: the parts are parsed again, never mixed.
    for stale in (
        written_by.replace(f"/{engine.ENGINE_VERSION}", "/0.0.1"),
        written_by.replace(f"/{engine.PDFIUM_ENGINE_VERSION}", "/0.0.0-old"),
    ):
        assert stale != written_by
        body["engine"] = stale
        with pytest.raises(ParsedStale):
            parsed_decode(zlib.compress(json.dumps(body).encode()))
    with pytest.raises(ParsedStale):
        parsed_decode(data[: len(data) // 2])
    body["engine"] = written_by
    body["pages"][0]["lines"] = "not lines"
    with pytest.raises(ParsedStale):
        parsed_decode(zlib.compress(json.dumps(body).encode()))


def test_the_stored_layout_is_plain_data(tmp_path: Path) -> None:
    # Rules, pictures and fills survive the bytes as the tuples the renderer reads.
    path = make_pdf(tmp_path / "r.pdf", [[*lines(72, 700, _body(1, 3)), Rule(72, 600, 400, 600)]])
    (model,) = engine.parse_pages(path, pages=[1]).models
    assert isinstance(model, PageModel)
    (back,) = parsed_decode(parsed_encode([model]))
    assert back == model
    assert all(isinstance(r, tuple) for r in back.hrules)
