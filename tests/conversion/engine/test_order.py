"""Reading order of scripts: right-to-left text in logical order, mixed runs, columns."""

from __future__ import annotations

from pathlib import Path

from pdfminer.fontmetrics import FONT_METRICS

from conversion.engine import convert
from conversion.engine.layout import Line
from conversion.engine.order import Item, reading_order

from .pdfs import HEBREW, HEBREW_BOLD, HEBREW_MONO, WIDTH, Image, Op, Raw, Rule, Runs, Text, lines, make_pdf


def md(path: Path) -> str:
    return convert(path).markdown


def visual(logical: str) -> str:
    """A line of Hebrew as drawn left to right (no embedded left-to-right runs)."""
    return logical[::-1]


def test_hebrew_line_drawn_in_visual_order_reads_in_logical_order(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [[Text(300, 700, visual("שלום עולם וברכה"), font=HEBREW)]])
    assert md(pdf) == "שלום עולם וברכה"


def test_latin_word_and_number_inside_a_hebrew_line_keep_their_own_direction(tmp_path: Path) -> None:
    # Logical: "עבודה עם Python מאז 2024"; on the page, right to left.
    drawn = "2024 " + visual("מאז") + " Python " + visual("עבודה עם")
    pdf = make_pdf(tmp_path / "a.pdf", [[Text(300, 700, drawn, font=HEBREW)]])
    assert md(pdf) == "עבודה עם Python מאז 2024"


def test_hebrew_row_drawn_in_separate_pieces_is_read_as_one_line(tmp_path: Path) -> None:
    # The Hebrew words are drawn first at the right, then the Latin word to their left:
    # layout makes two lines of one row, which read left to right would be reversed.
    ops: list[Op] = [
        Text(300, 700, visual("כתוב בשפת"), font=HEBREW),
        Text(255, 700, "Python", font="R"),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == "כתוב בשפת Python"


def test_hebrew_word_inside_an_english_line_is_turned_back(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [[Text(72, 700, "The word " + visual("שלום") + " means peace.", font=HEBREW)]])
    assert md(pdf) == "The word שלום means peace."


def test_columns_of_hebrew_are_read_from_the_right(tmp_path: Path) -> None:
    right = [f"זו שורה {n} של הטור הימני בעמוד" for n in "אבגדהוזחטי"]
    left = [f"זו שורה {n} של הטור השמאלי בעמוד" for n in "אבגדהוזחטי"]
    ops: list[Op] = [Text(340, 700 - 14 * k, visual(t), font=HEBREW) for k, t in enumerate(right)]
    ops += [Text(72, 700 - 14 * k, visual(t), font=HEBREW) for k, t in enumerate(left)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    out = md(pdf)
    assert out.index("הטור הימני") < out.index("הטור השמאלי")
    assert out.startswith("זו שורה א של הטור הימני בעמוד")


def hebrew_page(extra: list[Op]) -> list[Op]:
    """`extra` above eight lines of Hebrew prose: a page written right to left."""
    prose = [visual(f"זו שורה {n} של הטקסט הרגיל בעמוד הזה") for n in "אבגדהוזח"]
    return [*extra, *(Text(200, 560 - 14 * k, t, font=HEBREW) for k, t in enumerate(prose))]


def test_line_with_more_latin_than_hebrew_on_a_hebrew_page_is_read_right_to_left(tmp_path: Path) -> None:
    # Logical "הפונקציה (createRoot)": drawn with the Latin word and its brackets at the left.
    drawn = "(createRoot) " + visual("הפונקציה")
    pdf = make_pdf(tmp_path / "a.pdf", [hebrew_page([Text(300, 700, drawn, font=HEBREW)])])
    assert md(pdf).startswith("הפונקציה (createRoot)\n")


def test_code_with_more_latin_letters_than_the_prose_leaves_a_hebrew_page_right_to_left(tmp_path: Path) -> None:
    code = [f"const value{n} = computeSomethingLong(parameterNumber{n});" for n in range(12)]
    drawn = "(createRoot) " + visual("הפונקציה")
    ops: list[Op] = [Text(300, 740, drawn, font=HEBREW), *lines(72, 400, code, size=9, leading=11, font="M")]
    out = md(make_pdf(tmp_path / "a.pdf", [hebrew_page(ops)]))
    assert out.startswith("הפונקציה (createRoot)\n")


def test_inline_code_in_a_hebrew_line_keeps_its_brackets(tmp_path: Path) -> None:
    # Logical "הערך src={x} נקרא": browsers lay inline code out as a left-to-right unit,
    # so its closing brace stays beside it instead of moving to the Hebrew after it.
    runs = ((HEBREW, visual("נקרא") + " "), (HEBREW_MONO, "src={x}"), (HEBREW, " " + visual("הערך")))
    pdf = make_pdf(tmp_path / "a.pdf", [hebrew_page([Runs(300, 700, runs)])])
    assert md(pdf).startswith("הערך src={x} נקרא\n")


def test_vowel_point_drawn_over_its_letter_does_not_split_the_word(tmp_path: Path) -> None:
    # "שָלום עולם": the point (qamats) is drawn before its letter, moved over the letter's
    # middle (2.5 points on at size 10), as shaping engines place marks; layout saw a gap
    # before it and put a word space there.
    mark, shin = "\u05b8".encode("cp1255"), "ש".encode("cp1255")
    left = visual("עולם") + " " + visual("לום")
    shown = b"BT /FH 10 Tf 300 700 Td [(%s) -250 (\\%03o) 250 (\\%03o)] TJ ET" % (
        left.encode("cp1255"),
        mark[0],
        shin[0],
    )
    out = md(make_pdf(tmp_path / "a.pdf", [hebrew_page([Raw(shown)])]))
    assert out.startswith("שָלום עולם\n")


def test_latin_line_on_a_hebrew_page_has_its_closing_colon_put_back_at_the_end(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [hebrew_page([Text(300, 700, ":useId", font=HEBREW)])])
    assert md(pdf).startswith("useId:\n")


def test_code_line_with_a_hebrew_string_on_a_hebrew_page_stays_left_to_right(tmp_path: Path) -> None:
    code = 'name = "' + visual("שלום עולם") + '"'
    pdf = make_pdf(tmp_path / "a.pdf", [hebrew_page([Text(72, 700, code, font=HEBREW_MONO)])])
    assert 'name = "שלום עולם"' in md(pdf)


def test_bold_title_drawn_word_by_word_beside_a_picture_reads_from_the_right(tmp_path: Path) -> None:
    # A logo at the left of the title's row: the row holds a picture and the title's
    # words (each drawn on its own, from the right); read left to right, the words of
    # the title came out reversed.
    title = "כותרת ראשית של המסמך"
    ops: list[Op] = [Image(40, 680, 120, 730)]
    x = 520.0
    for word in title.split():
        x -= 10 * len(word)  # 20-point glyphs 500 units wide
        ops.append(Text(x, 700, visual(word), size=20, font=HEBREW_BOLD))
        x -= 6
    out = md(make_pdf(tmp_path / "a.pdf", [hebrew_page(ops)]))
    assert out.startswith("## " + title + "\n")


def test_hebrew_title_drawn_twice_slightly_apart_reads_once_in_order(tmp_path: Path) -> None:
    # A bold simulated by drawing the title a second time 0.4 points to the right: the
    # two copies' glyphs, put in order on the page, doubled every letter.
    title = "כותרת ראשית של המסמך"
    ops: list[Op] = [Text(x, 700, visual(title), size=20, font=HEBREW) for x in (250, 250.4)]
    out = md(make_pdf(tmp_path / "a.pdf", [hebrew_page(ops)]))
    assert out.splitlines()[0].endswith(" " + title)
    assert out.count("כותרת") == 1


def test_line_drawn_twice_slightly_apart_is_one_bold_line(tmp_path: Path) -> None:
    prose = ["This paragraph of body text runs on for a while here."] * 4
    ops: list[Op] = [Text(x, 700, "Results of the study", font="R") for x in (72, 72.3)]
    out = md(make_pdf(tmp_path / "a.pdf", [[*ops, *lines(72, 680, prose)]]))
    assert out.startswith("## Results of the study\n")


def test_glyphs_each_drawn_twice_over_read_once(tmp_path: Path) -> None:
    shows = [
        b"BT /FM 20 Tf %g 700 Td (%s) Tj ET" % (72 + 12 * k + dx, ch.encode())
        for k, ch in enumerate("All Well")
        for dx in (0, 0.4)
    ]
    prose = ["This paragraph of body text runs on for a while here."] * 4
    out = md(make_pdf(tmp_path / "a.pdf", [[Raw(b"\n".join(shows)), *lines(72, 660, prose)]]))
    assert out.splitlines()[0].endswith(" All Well")  # doubled letters kept


def test_a_space_drawn_twice_slightly_apart_makes_no_line_bold(tmp_path: Path) -> None:
    # A dense line (a condensed face: glyphs closer than a third of the line's height, where
    # overprints are looked for) whose word spaces a producer draws twice, 0.12 points apart
    # (LibreOffice's justified Arabic): a space has no ink, so its copy thickens no stroke.
    text = "Plain words of a line set in a condensed face"
    widths = FONT_METRICS["Helvetica"][1]
    shows, x = [], 72.0
    for ch in text:
        for dx in (0, 0.12) if ch == " " else (0,):
            shows.append(b"BT /FR 10 Tf 40 Tz %g 700 Td (%s) Tj ET" % (x + dx, ch.encode()))
        x += widths[ch] / 1000 * 10 * 0.4
    prose = ["This paragraph of body text runs on for a while here."] * 4
    out = md(make_pdf(tmp_path / "a.pdf", [[Raw(b"\n".join(shows)), *lines(72, 660, prose)]]))
    assert out.splitlines()[0] == text


def test_table_on_a_hebrew_page_lists_its_columns_from_the_right(tmp_path: Path) -> None:
    rows = [["מוצר", "מחיר", "כמות"], ["תפוח", "12", "שלוש"], ["לחם", "8", "אחת"]]
    xs = (72, 200, 330, 460)
    ys = [720 - 20 * i for i in range(len(rows) + 1)]
    grid: list[Op] = [Rule(xs[0], y, xs[-1], y) for y in ys]
    grid += [Rule(x, ys[-1], x, ys[0]) for x in xs]
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            # The first column at the right: column c sits in the grid's column 2 - c.
            grid.append(Text(xs[2 - c] + 4, ys[r] - 14, text if text.isdigit() else visual(text), 10, font=HEBREW))
    out = md(make_pdf(tmp_path / "a.pdf", [hebrew_page(grid)]))
    assert "| מוצר | מחיר | כמות |" in out
    assert "| תפוח | 12 | שלוש |" in out


def test_columns_of_hebrew_with_more_code_than_prose_are_read_from_the_right(tmp_path: Path) -> None:
    ops: list[Op] = []
    for x, side in ((340, "הימני"), (72, "השמאלי")):
        for k in range(12):
            y = 700 - 14 * k
            if k % 3 == 0:
                ops.append(Text(x, y, visual(f"שורה {k} בטור {side}"), font=HEBREW))
            else:
                ops.append(Text(x, y, f"value{k} = computeSomething({k})", size=9, font="M"))
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert out.index("בטור הימני") < out.index("בטור השמאלי")


def test_footnote_at_the_foot_of_the_first_column_comes_after_the_second_column(tmp_path: Path) -> None:
    left = [f"The first column carries line {i} of the body" for i in range(1, 19)]
    right = [f"The second column carries line {i} of it" for i in range(1, 19)]
    ops: list[Op] = [
        *lines(72, 700, left, size=10, leading=12),
        *lines(320, 700, right, size=10, leading=12),
        Text(72, 200, "1 A note on the first column, set small.", 7),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == (" ".join(left) + "\n\n" + " ".join(right) + "\n\n1 A note on the first column, set small.")


def test_side_labels_beside_prose_are_read_before_their_paragraph_not_row_by_row(tmp_path: Path) -> None:
    # A back cover or brochure: short bold labels in a narrow column, on baselines of their
    # own, beside a column of prose. Read row by row, each label would be torn into the
    # paragraph beside it.
    prose = [f"Line {i} of the paragraph that runs beside the side label here" for i in range(1, 8)]
    ops = [
        *lines(40, 702, ["Implement roles", "and separation", "of duties"], size=12, leading=15, font="B"),
        *lines(180, 700, prose, size=10, leading=12),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    # A side heading, set larger than the prose, heads the paragraph beside it.
    assert convert(pdf).markdown == "## Implement roles and separation of duties\n\n" + " ".join(prose)


def test_a_table_whose_first_column_is_bold_is_not_read_as_side_labels(tmp_path: Path) -> None:
    # Cells of a row share its baseline: the bold first column stays in the table's rows.
    rows = [("Alpha", "the first of the options that the committee had before it"), ("Beta", "the second")]
    rows += [("Gamma", "the third option, which the committee chose in the end"), ("Delta", "the last one")]
    ops: list[Op] = []
    for i, (term, text) in enumerate(rows):
        ops += [Text(72, 700 - 14 * i, term, 10, "B"), Text(180, 700 - 14 * i, text, 10)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert convert(pdf).markdown.startswith(
        "| Alpha | the first of the options that the committee had before it |\n| --- | --- |\n| Beta | the second |"
    )


def test_sidebar_in_small_print_is_read_apart_from_the_main_column(tmp_path: Path) -> None:
    # A brochure: a header at the top left, a sidebar of small print under it, the main
    # column beside. The emptiest strip lies inside the header's margin; the gutter is
    # the next one.
    main = [f"Main column line {i} runs across the wide column of this brochure page" for i in range(1, 9)]
    side = [f"Sidebar note {i} in small print" for i in range(1, 6)]
    ops = [
        Text(40, 760, "Solution Brief", 8),
        Text(60, 745, "Services", 8),
        *lines(60, 700, side, size=6.5, leading=20),
        *lines(230, 704, main, size=8, leading=11),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    out = convert(pdf).markdown
    assert " ".join(main) in out
    assert out.index("Sidebar note 5") < out.index("Main column line 1")


def test_column_of_code_and_headings_is_still_a_column_when_its_paragraphs_wrap_at_the_gutter(tmp_path: Path) -> None:
    # A two-column web page: the left column holds a heading, code blocks and short lead-in
    # lines, so most of its lines stop well short of the gutter; its paragraphs still wrap
    # at it. Read row by row, the two columns would be joined line by line.
    first = [f"Paragraph one line {i} wraps right at the column gutter here" for i in range(1, 4)]
    second = [f"Paragraph two line {i} wraps right at the column gutter too" for i in range(1, 4)]
    code = ["fn main() {", "    let x = 1;", "    let y = 2;", "    call(x, y);", "}", "", "fn call() {}"]
    ops: list[Op] = [
        Text(60, 720, "Motivation", 14, "B"),
        *lines(60, 696, first, size=10, leading=13),
        Text(60, 654, "is:", 10),
        *lines(66, 630, code, size=7, leading=10, font="M"),
        *lines(66, 550, code, size=7, leading=10, font="M"),
        *lines(60, 470, second, size=10, leading=13),
        Text(60, 428, "as follows:", 10),
    ]
    right = [f"The right column holds line {i} of its own text" for i in range(1, 21)]
    ops += lines(330, 720, right, size=10, leading=13)
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert " ".join(first) in out
    assert " ".join(second) in out
    assert " ".join(right) in out
    assert out.index("Paragraph two line 3") < out.index("The right column holds line 1 ")


def test_gutter_is_found_in_the_emptiest_part_of_a_ragged_strip(tmp_path: Path) -> None:
    # The end of a document: a heading and one short paragraph in the left column, the rest
    # of the text in the right one. The strip crossed by few lines runs from the end of the
    # heading to the right column; only its empty part is the gutter.
    left = [
        "It is not clear whether the restriction on the type",
        "definitions is required, or it is only a workaround.",
    ]
    right = [f"The right column runs on with its line number {i} here" for i in range(1, 5)]
    ops: list[Op] = [
        Text(60, 740, "Unresolved questions", 14, "B"),
        *lines(60, 712, left, size=10, leading=13),
        *lines(330, 745, right, size=10, leading=13),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert " ".join(left) in out
    assert " ".join(right) in out


def _line(x0: float, top: float, text: str, size: float = 10) -> Line:
    x1 = x0 + 0.5 * size * len(text)
    return Line(x0, top, x1, top + size, text, [(text, 0)], size, 0, [x0, x1], [text])


def test_columns_are_read_from_the_right_when_the_direction_says_so() -> None:
    # The page's direction, when known (a right-to-left document), orders the columns,
    # whatever script a band of it happens to hold.
    left = [_line(60, 100 + 13 * i, f"left column line {i} of the body text here") for i in range(10)]
    right = [_line(330, 100 + 13 * i, f"right column line {i} of the body text here") for i in range(10)]
    items: list[Item] = [*left, *right]
    assert [seg[0].text for seg in reading_order(items, WIDTH)] == [left[0].text, right[0].text]
    assert [seg[0].text for seg in reading_order(items, WIDTH, rtl=True)] == [right[0].text, left[0].text]


def test_a_column_of_short_list_items_beside_prose_is_a_column(tmp_path: Path) -> None:
    # The items do not wrap and are short, as a column of table cells would be; but each
    # opens with a bullet, and the list is read before the prose beside it, never joined
    # to it line by line.
    items = ["Apples from the orchard", "Pears in a basket", "Plums for the jam", "Cherries, sour"]
    items += ["Quinces to bake", "Figs and dates", "Grapes, seedless", "Lemons to squeeze"]
    prose = [
        "The fruit market opens at dawn on the square,",
        "when the growers bring their crates down from",
        "the hills in carts and vans. By eight the stalls",
        "are full and the buyers from the restaurants",
        "come to choose what they will cook that day,",
        "haggling over the price of each crate until",
        "the church bell strikes nine and the market",
        "settles into its ordinary morning trade.",
    ]
    ops: list[Op] = [
        Text(72, 740, "The fruit we buy, and where it comes from: a paragraph over the whole page."),
        *[Text(72, 712 - 17 * k, "\u2022 " + item) for k, item in enumerate(items)],
        *lines(320, 710, prose),
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", [ops])).markdown
    assert "\n".join(f"- {item}" for item in items) in out
    assert " ".join(prose) in out


def test_a_column_of_short_cells_beside_prose_is_read_at_the_documents_gutter(tmp_path: Path) -> None:
    # Two pages of prose in two columns, then a page whose right column holds short lines of
    # a table's sort beside the left column's prose: alone, that page's short right side
    # makes no column, but the document's gutter stands there on every other page, so the
    # prose is read whole before the right column, never joined to it row by row.
    def prose(side: str, page: int) -> list[str]:
        topic = ["apples", "pears", "plums"][page - 1]
        return [f"{side.title()} side on {topic}, prose line {k}" for k in range(1, 13)]

    pages = [
        [*lines(60, 720, prose("left", n), leading=13), *lines(320, 720, prose("right", n), leading=13)] for n in (1, 2)
    ]
    cells = [f"{name} {k}" for k, name in enumerate(["Apple", "Pear", "Plum", "Fig", "Date", "Lime"] * 2)]
    third = [*lines(60, 720, prose("left", 3), leading=13), *lines(320, 715, cells, leading=15)]
    pdf = make_pdf(tmp_path / "a.pdf", [*pages, third])

    out = convert(pdf).markdown
    assert " ".join(prose("left", 3)) in out
    assert out.startswith(" ".join(prose("left", 1)))
    assert out.index("Left side on plums, prose line 12") < out.index("Apple 0")
    alone = convert(pdf, pages=[3]).markdown
    assert " ".join(prose("left", 3)) not in alone  # the page alone: read row by row, as before


def test_a_contents_page_of_a_document_in_two_columns_keeps_each_title_with_its_page(tmp_path: Path) -> None:
    # The document's gutter falls between a contents page's titles and their page numbers;
    # the numbers stand on the titles' baselines, row by row: no column of their own.
    def prose(side: str, topic: str) -> list[str]:
        return [f"{side.title()} side on {topic}, prose line {k}" for k in range(1, 13)]

    pages = [
        [*lines(60, 720, prose("left", t), leading=13), *lines(320, 720, prose("right", t), leading=13)]
        for t in ("apples", "pears")
    ]
    titles = [
        "Introduction to the orchard",
        "Planting the young trees",
        "Pruning in the winter",
        "Pests and what to do",
    ]
    titles += ["Harvest and storage", "Selling at the market"]
    contents: list[Op] = []
    for k, title in enumerate(titles):
        contents += [Text(60, 700 - 16 * k, title), Text(520, 700 - 16 * k, str(3 * k + 1))]
    out = convert(make_pdf(tmp_path / "a.pdf", [*pages, contents])).markdown

    for k, title in enumerate(titles):
        assert out.index(str(3 * k + 1), out.index(title)) < out.index(title) + len(title) + 8, title


def test_columns_that_each_hold_a_table_of_short_cells_beside_a_paragraph_are_columns(tmp_path: Path) -> None:
    # A page in two columns, each holding a paragraph and a table of short cells: most of each
    # column's lines are cells, far shorter than its prose, but each column holds a paragraph
    # of long lines, wrapped at the gutter. Read row by row, each paragraph's lines would be
    # joined to the cells beside them.
    def paragraph(side: str) -> list[str]:
        return [f"The {side} column's paragraph runs on, line {k} of it" for k in range(1, 6)]

    def table(side: str, x: float, top: float) -> list[Op]:
        # Twelve rows of three short cells, 15 points apart.
        rows = [[f"{side[0].upper()}{r}", str(10 * r + 1), str(10 * r + 2)] for r in range(1, 13)]
        return [
            Text(x + dx, top - 15 * r, cell, 9)
            for r, row in enumerate(rows)
            for dx, cell in zip((0, 80, 140), row, strict=True)
        ]

    ops: list[Op] = [
        *lines(60, 720, paragraph("left"), size=10, leading=13),
        *table("left", 70, 640),
        *table("right", 330, 720),
        *lines(320, 520, paragraph("right"), size=10, leading=13),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert " ".join(paragraph("left")) in out
    assert " ".join(paragraph("right")) in out
    assert out.index("line 5 of it") < out.index("R1")
