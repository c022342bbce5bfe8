"""Elements point into the Markdown: `md_span` into their page's, `doc_span` into the
document's, also where the document joins two pages (a table run on, a word hyphenated over
the break)."""

from __future__ import annotations

from pathlib import Path

from conversion.engine import convert
from conversion.engine.assembly import Continuation, WordBreak, join_document
from conversion.engine.elements import Element, ElementType, Span, join_elements, page_spans

from .pdfs import Text, lines, make_pdf, ruled_grid
from .spans import span_faults


def at(text: str, span: Span | None) -> str:
    assert span is not None
    return text[span[0] : span[1]]


def _el(kind: ElementType, markdown: str, shown: bool = True) -> Element:
    return Element(kind, (0, 0, 1, 1), markdown, markdown, in_markdown=shown)


def test_page_spans_are_each_shown_elements_markdown_with_only_the_joins_between() -> None:
    elements = [
        _el(ElementType.PAGE_HEADER, "Running head", shown=False),
        _el(ElementType.HEADING, "## Fruit"),
        _el(ElementType.LIST_ITEM, "- Apple"),
        _el(ElementType.LIST_ITEM, "- Pear"),
        _el(ElementType.PARAGRAPH, "Ripe in May."),
        _el(ElementType.HIDDEN_TEXT, "Ignore the above", shown=False),
    ]
    markdown = join_elements(elements)
    spans = page_spans(elements)
    assert markdown == "## Fruit\n\n- Apple\n- Pear\n\nRipe in May."
    assert spans == [None, (0, 8), (10, 17), (18, 24), (26, 38), None]
    assert [markdown[s:e] for s, e in filter(None, spans)] == ["## Fruit", "- Apple", "- Pear", "Ripe in May."]


def test_pages_not_joined_keep_their_text_in_the_document() -> None:
    pages = ["## One\n\nAlpha.", "", "Beta."]
    spans = [[(0, 6), (8, 14)], [], [None, (0, 5)]]
    markdown, placed = join_document(pages, spans, [Continuation.NONE] * 3)
    assert markdown == "## One\n\nAlpha.\n\nBeta."
    assert placed == [[(0, 6), (8, 14)], [], [None, (16, 21)]]


def test_a_table_run_on_spans_the_rows_it_adds_and_the_page_after_it_moves_with_it() -> None:
    before = "Prices.\n\n| Fruit | Price |\n| --- | --- |\n| Apple | 1.20 |"
    after = "| Fruit | Price |\n| --- | --- |\n| Pear | 0.80 |\n\nThat is all."
    spans = [[(0, 7), (9, len(before))], [(0, 47), (49, 61)]]
    markdown, placed = join_document([before, after], spans, [Continuation.NONE, Continuation.REPEATED_HEADER])
    assert markdown == "Prices.\n\n| Fruit | Price |\n| --- | --- |\n| Apple | 1.20 |\n| Pear | 0.80 |\n\nThat is all."
    (intro, table), (rest, tail) = placed
    assert at(markdown, intro) == "Prices."
    assert at(markdown, table) == before[9:]
    assert rest[0] == table[1]  # they touch: one table
    assert at(markdown, rest) == "\n| Pear | 0.80 |"
    assert markdown[table[0] : rest[1]] == "| Fruit | Price |\n| --- | --- |\n| Apple | 1.20 |\n| Pear | 0.80 |"
    assert at(markdown, tail) == "That is all."


def test_a_row_cut_by_the_break_is_shared_by_the_two_spans_at_the_join() -> None:
    before = "| Event | Date |\n| --- | --- |\n| Sale | 2017-09-17, |"
    after = "| Event | Date |\n| --- | --- |\n|  | in the morning |"
    spans = [[(0, len(before))], [(0, len(after))]]
    markdown, placed = join_document([before, after], spans, [Continuation.NONE, Continuation.REPEATED_HEADER])
    assert markdown == "| Event | Date |\n| --- | --- |\n| Sale | 2017-09-17, in the morning |"
    (table,), (rest,) = placed
    # The first table keeps what the join left of it; the rest of the cut row is the continuation's.
    assert table[0] == 0
    assert rest[0] == table[1]
    assert rest[1] == len(markdown)


def test_a_word_hyphenated_over_the_break_joins_two_spans_that_touch() -> None:
    before = "## Notes\n\nThe council met to talk about the har-"
    after = "vest and the railway.\n\nThen it rained."
    spans = [[(0, 8), (10, len(before))], [(0, 21), (23, 38)]]
    markdown, placed = join_document(
        [before, after], spans, [Continuation.NONE] * 2, [WordBreak.NONE, WordBreak.HYPHENATION]
    )
    assert markdown == "## Notes\n\nThe council met to talk about the harvest and the railway.\n\nThen it rained."
    (heading, first), (second, last) = placed
    assert at(markdown, heading) == "## Notes"
    assert first[1] == second[0]
    assert markdown[first[0] : second[1]] == "The council met to talk about the harvest and the railway."
    assert at(markdown, first) == "The council met to talk about the har"
    assert at(markdown, last) == "Then it rained."


def test_a_sentence_run_on_over_the_break_is_joined_with_a_space_except_between_cjk_characters() -> None:
    for before, after, joined in (
        ("- Apple trees grow behind", "the old mill.", "- Apple trees grow behind the old mill."),
        (
            "- \u82f9\u679c\u6811\u957f\u5728",
            "\u78e8\u574a\u540e\u9762\u3002",
            "- \u82f9\u679c\u6811\u957f\u5728\u78e8\u574a\u540e\u9762\u3002",
        ),
    ):
        spans = [[(0, len(before))], [(0, len(after))]]
        markdown, placed = join_document(
            [before, after], spans, [Continuation.NONE] * 2, [WordBreak.NONE, WordBreak.SENTENCE]
        )
        assert markdown == joined
        (item,), (rest,) = placed
        assert item is not None
        assert rest is not None
        assert item[1] == rest[0]  # the spans touch
        assert markdown[item[0] : rest[1]] == joined


def test_a_converted_book_keeps_every_span_promise_across_its_joins(tmp_path: Path) -> None:
    prose = [f"Line {k} of the prose that fills the page before its table." for k in range(6)]
    page1 = [Text(72, 740, "Prices of the season", 18, "B"), *lines(72, 700, prose)]
    page1 += ruled_grid([["Fruit", "Price"], ["Apple", "1.20"], ["Pear", "0.80"]], 200)
    page2 = ruled_grid([["Fruit", "Price"], ["Plum", "0.50"], ["Cherry", "3.00"]], 740)
    page2 += lines(72, 600, ["The council met at the bridge to talk about the har-"])
    page3 = lines(72, 740, ["vest and the railway, then about the winter market.", "And then it rained."])
    result = convert(make_pdf(tmp_path / "book.pdf", [page1, page2, page3]))
    assert "| Pear | 0.80 |\n| Plum | 0.50 |" in result.markdown
    assert "harvest and the railway" in result.markdown
    assert span_faults(result) == {}
    markdown, doc_spans = result.document()
    # Both joins are there: the continued table's span and the continued paragraph's start
    # where the span before them ends.
    firsts = [
        next(d for e, d in zip(p.elements, s, strict=True) if e.in_markdown)
        for p, s in zip(result.pages, doc_spans, strict=True)
    ]
    lasts = [
        [d for e, d in zip(p.elements, s, strict=True) if e.in_markdown][-1]
        for p, s in zip(result.pages, doc_spans, strict=True)
    ]
    assert firsts[1][0] == lasts[0][1]
    assert firsts[2][0] == lasts[1][1]
    assert markdown[lasts[0][0] : firsts[1][1]].count("| --- | --- |") == 1
