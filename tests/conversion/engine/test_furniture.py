"""Page furniture across a document: running lines, printers' slugs, crop marks."""

from __future__ import annotations

from pathlib import Path

from conversion.engine import convert
from conversion.engine.elements import ElementType

from .pdfs import Op, Text, lines, make_pdf

WORDS = ["harvest", "river", "market", "winter", "council", "bridge", "letter", "garden", "school", "railway"]


def body(n: int, count: int = 6) -> list[str]:
    """Prose lines that differ from page to page in their words, not only in numbers."""
    return [
        f"The {WORDS[(n + i) % len(WORDS)]} and the {WORDS[(n * 3 + i) % len(WORDS)]} were talked about at length."
        for i in range(count)
    ]


def roman(n: int) -> str:
    return ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"][n - 1]


def test_running_footers_alternating_between_pages_inside_the_sheet_are_dropped(tmp_path: Path) -> None:
    # A book's page: its text block, and its running foot below it, sit well inside the
    # sheet (outside the margin bands); left pages print the page number and the book's
    # title, right pages the chapter's title and the number, the chapter's first page
    # the number alone.
    def foot(n: int) -> str:
        return str(n) if n == 1 else f"{n} FREE CULTURE" if n % 2 == 0 else f"\u201cPROPERTY\u201d {n}"

    pages: list[list[Op]] = [
        [*lines(72, 660, body(n)), Text(90 if n % 2 == 0 else 330, 150, foot(n), 8)] for n in range(1, 9)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    for n, page in enumerate(result.pages, 1):
        assert page.markdown == " ".join(body(n))
        assert [e.text for e in page.elements if e.type is ElementType.PAGE_FOOTER] == [foot(n)]


def test_a_printers_slug_with_roman_page_numbers_is_dropped(tmp_path: Path) -> None:
    # Set at the body size and without a separator before "Page": only its repetition
    # across the pages, numbers masked (roman ones too), tells it from text.
    pages = [
        [Text(40, 780, f"14773_00_i-xviii_r9jm.qxd 2/10/04 3:46 PM Page {roman(n)}", 11), *lines(72, 660, body(n))]
        for n in range(1, 7)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert [p.markdown for p in result.pages] == [" ".join(body(n)) for n in range(1, 7)]


def test_a_line_repeated_inside_the_text_block_is_kept(tmp_path: Path) -> None:
    # Short pages end with the same note, numbers aside, at the same place: the last row of
    # each, apart from the text above it, but where the full pages of the document have
    # their text. Content, not a running footer.
    note = "Figures of table {} are in thousands of dollars."
    pages = [[*lines(72, 700, body(n, 40))] for n in range(1, 7)]
    pages += [[*lines(72, 700, body(n)), Text(72, 300, note.format(n), 11)] for n in range(7, 10)]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert [p.markdown for p in result.pages[6:]] == [" ".join(body(n)) + "\n\n" + note.format(n) for n in range(7, 10)]


def test_crop_marks_set_in_a_font_are_dropped(tmp_path: Path) -> None:
    marks = "\u00a6\u00a6\u00a6\u00a6\u00a6\u00a6 \u00a6\u00a6\u00a6\u00a6 \u00a6\u00a6\u00a6\u00a6\u00a6\u00a6\u00a6"
    pdf = make_pdf(tmp_path / "a.pdf", [[*lines(72, 660, body(1)), Text(60, 80, marks, 30)]])
    result = convert(pdf)
    assert result.markdown == " ".join(body(1))
    assert [e.type for e in result.pages[0].elements if not e.in_markdown] == [ElementType.PAGE_FOOTER]


def test_a_word_hyphenated_across_a_page_break_is_joined_in_the_document(tmp_path: Path) -> None:
    first = ["The council met on a cold morning to protect the commercial cre-"]
    second = ["ativity of the town, and its part-time staff worked late that winter."]
    third = ["Nobody asked whether the part-", "time staff had been paid."]
    pdf = make_pdf(tmp_path / "a.pdf", [[*lines(72, 660, first)], [*lines(72, 660, second)]])
    result = convert(pdf)
    # Each page's Markdown stands alone; the document's joins the word.
    assert [p.markdown for p in result.pages] == [first[0], second[0]]
    assert result.markdown.startswith(
        "The council met on a cold morning to protect the commercial creativity of the town, and its part-time"
    )
    pages = [[*lines(72, 660, second)], [*lines(72, 660, third[:1])], [*lines(72, 660, third[1:])]]
    result = convert(make_pdf(tmp_path / "b.pdf", pages))
    # The document writes "part-time" elsewhere: the hyphen is the word's own.
    assert result.markdown.endswith("Nobody asked whether the part-time staff had been paid.")
    # Before a capital the hyphen is the compound's own, whatever the document writes.
    pages = [[*lines(72, 660, ["For the first time in Anglo-"])], [*lines(72, 660, ["American history, it did."])]]
    result = convert(make_pdf(tmp_path / "c.pdf", pages))
    assert result.markdown == "For the first time in Anglo-American history, it did."
    # Unless the document writes the word joined.
    pages = [
        [*lines(72, 660, ["TraceMonkey records traces, and we show that Trace-"])],
        [*lines(72, 660, ["Monkey is fast."])],
    ]
    result = convert(make_pdf(tmp_path / "d.pdf", pages))
    assert result.markdown == "TraceMonkey records traces, and we show that TraceMonkey is fast."


def test_a_line_that_starts_the_text_block_inside_the_margin_band_is_kept(tmp_path: Path) -> None:
    # The text block reaches into the top band (a page printed with narrow margins), and
    # three pages in a row start with the same line, set close to the text below it: the
    # text goes on, it is not a running header.
    first = "Continued from the page before, the account of the year goes on."

    def text(n: int) -> list[str]:
        return ([first] if n in (5, 6, 7) else []) + body(n)

    pages: list[list[Op]] = [[*lines(72, 760, text(n))] for n in range(1, 13)]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert [p.markdown.startswith(first) for p in result.pages] == [n in (5, 6, 7) for n in range(1, 13)]
    assert not [e for p in result.pages for e in p.elements if not e.in_markdown]


def test_a_number_beside_text_in_the_same_row_is_kept(tmp_path: Path) -> None:
    # Each page starts with a row of a calendar table running across the pages: the day
    # (a number at the same place on every page) beside the event, which changes. The
    # number is the row's, not a page number.
    def event(n: int) -> str:
        return f"The {WORDS[n % len(WORDS)]} festival of the {WORDS[(n + 3) % len(WORDS)]}"

    pages: list[list[Op]] = [
        [Text(72, 650, str(n + 10), 11), Text(150, 650, event(n), 11), *lines(72, 600, body(n))] for n in range(1, 9)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    for n, page in enumerate(result.pages, 1):
        assert str(n + 10) in page.markdown
        assert event(n) in page.markdown
    assert not [e for p in result.pages for e in p.elements if not e.in_markdown]


def test_a_line_below_the_start_of_the_text_is_not_a_running_line(tmp_path: Path) -> None:
    # Three pages in a row carry the same line near the top, apart from the text below it,
    # but right under a line that starts the page's text: the text has begun above it.
    same = "The account of the year goes on."

    def top(n: int) -> list[str]:
        return [f"Entry of the ledger for the {WORDS[n % len(WORDS)]}.", same if n in (5, 6, 7) else f"Page text {n}."]

    pages: list[list[Op]] = [[*lines(72, 775, top(n), leading=12), *lines(72, 700, body(n))] for n in range(1, 13)]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert [same in p.markdown for p in result.pages] == [n in (5, 6, 7) for n in range(1, 13)]


def test_a_number_that_ends_the_text_block_is_kept(tmp_path: Path) -> None:
    # Full pages end at the same height, just inside the bottom band, above a footer; on
    # one of them the last line is a number (the end of a listing), set close to the text
    # above it: text, not a page number.
    def text(n: int) -> list[str]:
        return body(n, 50) + (["0"] if n == 6 else [f"The {WORDS[n % len(WORDS)]} ends the page."])

    pages: list[list[Op]] = [
        [*lines(72, 760, text(n)), Text(72, 25, f"Report \u00b7 page {n}", 9)] for n in range(1, 13)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert result.pages[5].markdown.endswith(" 0")
    assert [e.text for p in result.pages for e in p.elements if not e.in_markdown] == [
        f"Report \u00b7 page {n}" for n in range(1, 13)
    ]


def test_a_small_line_above_the_text_block_of_one_page_is_still_furniture(tmp_path: Path) -> None:
    # A journal's first page: a small line above the text block, printed on that page
    # only (so repetition cannot find it), set apart from the text: furniture by position.
    head = "Journal of River Studies 12 (2019) 1-10"
    pages: list[list[Op]] = [
        [*([Text(72, 772, head, 8)] if n == 1 else []), *lines(72, 745, body(n, 40))] for n in range(1, 7)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert head not in result.pages[0].markdown
    assert [e.text for e in result.pages[0].elements if e.type is ElementType.PAGE_HEADER] == [head]


def test_a_small_footer_beside_a_page_number_of_the_body_size_is_furniture(tmp_path: Path) -> None:
    # One page: the footer's small line shares its row with a page number set as large as
    # the text. The number is no text, so it does not bring the text block down to them.
    page: list[Op] = [*lines(72, 720, body(1, 40)), Text(72, 30, "Acme Corp, company confidential", 8)]
    page.append(Text(480, 30, "Page 1 of 1", 11))
    result = convert(make_pdf(tmp_path / "a.pdf", [page]))
    assert "Acme" not in result.pages[0].markdown
    assert "Acme Corp, company confidential" in [e.text for e in result.pages[0].elements if not e.in_markdown]


def test_a_masthead_above_the_text_block_of_page_one_leaves_the_running_heads_furniture(tmp_path: Path) -> None:
    # A three-page article: page one's journal title stands above the text block of every
    # page; pages two and three carry small running heads that differ (authors, title), so
    # repetition cannot find them. One page's masthead does not move the text block.
    heads = {2: "J. Smith and K. Jones", 3: "River flow models"}
    pages: list[list[Op]] = [
        [
            Text(72, 760, "Journal of River Studies", 12, "B") if n == 1 else Text(72, 760, heads[n], 8),
            *lines(72, 720, body(n, 40)),
        ]
        for n in (1, 2, 3)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    for n in (2, 3):
        assert heads[n] not in result.pages[n - 1].markdown
        assert [e.text for e in result.pages[n - 1].elements if e.type is ElementType.PAGE_HEADER] == [heads[n]]
