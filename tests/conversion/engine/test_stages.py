"""The page stages one by one, on lines and page models built here (no PDF), and the
parameters each stage reads: a parameter changed changes the stage's decision."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conversion.engine.blocks import Block, build_blocks, classify_headings, outline_key
from conversion.engine.elements import ElementType
from conversion.engine.layout import (
    BOLD,
    HIDDEN_INVISIBLE,
    MONO,
    Line,
    PageModel,
    chars_at_least,
)
from conversion.engine.params import DEFAULT, BlockParams, EngineParams, HeadingParams, PageParams, TableParams
from conversion.engine.stats import DocStats
from conversion.engine.structure import (
    PAGE_STAGES,
    PageWork,
    blocks_stage,
    furniture_stage,
    headings_stage,
    hidden_elements,
    order_stage,
    render_page,
    tables_stage,
    vertical_stage,
)
from conversion.engine.tables import (
    Table,
    _split_wide_gaps,
    _word_columns,
    draws_spaces,
    find_row_ruled_tables,
    find_ruled_tables,
    find_unruled_tables,
)

WIDTH, HEIGHT = 612.0, 792.0
BODY = "The committee met twice in the spring and agreed on a"  # a body line (long, regular)


def line(text: str, x0: float, top: float, size: float = 10.0, style: int = 0, *, vertical: bool = False) -> Line:
    """A line of `text` from `x0`, each glyph half an em wide."""
    w = 0.5 * size
    xs = [x for i in range(len(text)) for x in (x0 + i * w, x0 + (i + 1) * w)]
    return Line(
        x0,
        top,
        x0 + w * len(text),
        top + size,
        text,
        [(text, style)],
        size,
        style,
        xs,
        list(text),
        vertical=vertical,
    )


def page_of(
    lines: list[Line],
    hrules: list[tuple[float, float, float]] | None = None,
    vrules: list[tuple[float, float, float]] | None = None,
) -> PageModel:
    return PageModel(1, WIDTH, HEIGHT, lines, hrules=hrules or [], vrules=vrules or [])


def stats_of(page: PageModel) -> DocStats:
    stats = DocStats()
    stats.add_page(page)
    return stats


def body_stats() -> DocStats:
    """A document whose body is set in 10 point regular type."""
    return stats_of(page_of([line(BODY, 72, 100 + 14 * i) for i in range(6)]))


def work_of(page: PageModel, stats: DocStats | None = None, params: EngineParams = DEFAULT) -> PageWork:
    work = PageWork(page, stats or stats_of(page), params=params)
    work.lines = list(page.lines)
    return work


def kinds(blocks: list[Block]) -> list[tuple[str, int]]:
    return [(b.kind, len(b.lines)) for b in blocks]


# The pipeline


def test_page_stages_run_in_order_and_each_stage_time_is_recorded() -> None:
    lines = [line("Results", 72, 80, 10, BOLD), *(line(BODY, 72, 100 + 14 * i) for i in range(4))]
    page = page_of(lines)
    stats = stats_of(page)
    timings: dict[str, float] = {}

    timed = render_page(page, stats, tables="markdown", timings=timings)
    plain = render_page(page, stats, tables="markdown")

    assert [s.name for s in PAGE_STAGES] == [
        "furniture",
        "vertical",
        "tables",
        "order",
        "blocks",
        "headings",
        "inline",
        "elements",
    ]
    assert set(timings) == {f"structure.{s.name}" for s in PAGE_STAGES}
    assert all(t >= 0.0 for t in timings.values())
    assert timed.markdown == plain.markdown
    assert timed.markdown == "## Results\n\n" + " ".join([BODY] * 4)


def test_stage_times_add_up_over_pages() -> None:
    page = page_of([line(BODY, 72, 100 + 14 * i) for i in range(3)])
    stats = stats_of(page)
    timings = {"structure.blocks": 5.0}

    render_page(page, stats, tables="markdown", timings=timings)

    assert timings["structure.blocks"] > 5.0


# furniture, vertical, order


def test_furniture_stage_takes_margin_line_numbers_out_of_the_content() -> None:
    text = [line(BODY, 90, 100 + 14 * i) for i in range(6)]
    numbers = [line(str(i + 1), 60, 100 + 14 * i) for i in range(6)]
    work = work_of(page_of([*text, *numbers]))

    furniture_stage(work)

    assert work.lines == text
    assert sorted(ln.text for ln in work.running) == ["1", "2", "3", "4", "5", "6"]


def test_vertical_lines_come_first_in_reading_order_where_they_dominate() -> None:
    across = line("Note", 72, 700)
    down = [line("縦書きの文章が続きます", 500 - 20 * i, 100, vertical=True) for i in range(3)]
    work = work_of(page_of([across, *down]))

    vertical_stage(work)
    order_stage(work)

    assert work.lines == [across]
    assert work.segments[0] == down  # read right to left
    assert [across] in work.segments


# tables: TableParams


def _grid_page(size: float) -> PageModel:
    """A table of two rows and two columns ruled throughout, each cell `size` points square."""
    x0, y0 = 50.0, 100.0
    xs = [x0, x0 + size, x0 + 2 * size]
    ys = [y0, y0 + size, y0 + 2 * size]
    cells = [line(t, x + 10, y + 10) for (t, x, y) in (("Name", xs[0], ys[0]), ("Value", xs[1], ys[0]))]
    cells += [line(t, x + 10, y + 10) for (t, x, y) in (("Alpha", xs[0], ys[1]), ("1", xs[1], ys[1]))]
    return page_of(
        cells,
        hrules=[(y, xs[0], xs[-1]) for y in ys],
        vrules=[(x, ys[0], ys[-1]) for x in xs],
    )


def test_tables_stage_reads_a_ruled_grid_as_a_table() -> None:
    work = work_of(_grid_page(200.0))

    tables_stage(work)

    assert [t.rows for t in work.tables] == [[["Name", "Value"], ["Alpha", "1"]]]
    assert work.lines == []


def test_a_grid_cell_larger_than_the_frame_share_of_the_page_is_a_frame_not_a_table() -> None:
    page = _grid_page(200.0)  # cells of 40,000 square points: a tenth of the page's area
    framed = replace(DEFAULT.tables, grid_frame_area_share=0.05)

    assert len(find_ruled_tables(page, page.lines)[0]) == 1
    assert find_ruled_tables(page, page.lines, framed) == ([], page.lines)


def _band_lines() -> list[Line]:
    """Four rows of a label and a number, in two narrow columns without rulings."""
    labels = ["Alpha", "Beta", "Gamma", "Delta"]
    return [ln for i, t in enumerate(labels) for ln in (line(t, 72, 100 + 14 * i), line(f"{i}.5", 300, 100 + 14 * i))]


def test_unruled_columns_narrower_than_prose_are_a_table() -> None:
    lines = _band_lines()
    page = page_of(lines)

    tables, rest = find_unruled_tables(page, lines, 10.0)

    assert [t.rows for t in tables] == [[["Alpha", "0.5"], ["Beta", "1.5"], ["Gamma", "2.5"], ["Delta", "3.5"]]]
    assert rest == []


def test_band_prose_width_share_decides_whether_columns_are_prose() -> None:
    lines = _band_lines()
    page = page_of(lines)
    # Columns of 20 and 25 points: prose where a tenth of an inch makes a prose column.
    narrow_prose = TableParams(band_prose_width_share=0.01)

    assert find_unruled_tables(page, lines, 10.0, params=narrow_prose) == ([], lines)


def test_band_min_filled_rows_decides_how_many_rows_make_a_table() -> None:
    lines = _band_lines()
    page = page_of(lines)

    assert find_unruled_tables(page, lines, 10.0, params=TableParams(band_min_filled_rows=5)) == ([], lines)


def _wrapped_cell_lines(wrap_pitch: float) -> list[Line]:
    """A header and three rows of three columns, rows 20 points apart; the second row's
    last cell wraps onto a line `wrap_pitch` points under its first."""
    rows = [("Name", "Game", "Blame"), ("Lebron", "Basketball", "Leaving"), ("Ryan", "Baseball", "Steroids")]
    lines: list[Line] = []
    top = 100.0
    for i, row in enumerate(rows):
        lines += [line(text, x, top) for text, x in zip(row, (72, 172, 272), strict=True)]
        if i == 1:
            lines.append(line("Cleveland", 272, top + wrap_pitch))
            top += wrap_pitch
        top += 20
    lines += [line("Russell", 72, top), line("Football", 172, top), line("Tacky", 272, top)]
    return lines


def test_a_cell_wrapped_onto_a_second_line_stays_in_its_row() -> None:
    lines = _wrapped_cell_lines(wrap_pitch=12)

    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0)

    assert [t.rows for t in tables] == [
        [
            ["Name", "Game", "Blame"],
            ["Lebron", "Basketball", "Leaving Cleveland"],
            ["Ryan", "Baseball", "Steroids"],
            ["Russell", "Football", "Tacky"],
        ]
    ]
    assert rest == []


def _cell_texts(tables: list[Table]) -> set[str]:
    return {cell for t in tables for row in t.rows for cell in row}


def test_a_line_under_a_later_cell_at_the_rows_own_spacing_is_not_that_cell() -> None:
    # Set 20 points under the cell, as rows stand: not the cell's text wrapped.
    lines = _wrapped_cell_lines(wrap_pitch=20)

    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0)

    assert "Leaving Cleveland" not in _cell_texts(tables)
    assert "Cleveland" in [ln.text for ln in rest]


def test_band_wrap_gap_share_decides_how_close_a_wrapped_line_stands() -> None:
    lines = _wrapped_cell_lines(wrap_pitch=12)
    # Rows stand 10 points apart, the wrapped line 2: a share of 0.1 leaves it apart (the
    # rows' padding unread: band_row_gap_ratio out of reach).
    params = TableParams(band_wrap_gap_share=0.1, band_row_gap_ratio=10.0)
    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0, params=params)

    assert "Leaving Cleveland" not in _cell_texts(tables)
    assert "Cleveland" in [ln.text for ln in rest]


def _padded_rows(align: str) -> list[Line]:
    """A header and three rows of three columns, 10-point text at a 12-point leading, rows
    parted by 8 points of padding; the header's first cell and each row's last cell hold
    two lines, the other cells one, set at the top of their row or in its middle."""
    rows = [
        (("Module", "package"), ("Class",), ("Deprecated",)),
        (("os.path",), ("posixpath",), ("Removed in the next", "release of the module")),
        (("sys.argv",), ("list",), ("Kept as it is now", "for every program")),
        (("time.clock",), ("function",), ("Gone since 3.8 and", "replaced by perf_counter")),
    ]
    lines: list[Line] = []
    top = 100.0
    for row in rows:
        tallest = max(len(cell) for cell in row)
        for x, cell in zip((72, 172, 272), row, strict=True):
            offset = 6.0 * (tallest - len(cell)) if align == "middle" else 0.0
            lines += [line(text, x, top + offset + 12 * k) for k, text in enumerate(cell)]
        top += 12 * tallest + 8
    return lines


_PADDED_TABLE = [
    ["Module package", "Class", "Deprecated"],
    ["os.path", "posixpath", "Removed in the next release of the module"],
    ["sys.argv", "list", "Kept as it is now for every program"],
    ["time.clock", "function", "Gone since 3.8 and replaced by perf_counter"],
]


@pytest.mark.parametrize("align", ["top", "middle"])
def test_rows_parted_by_padding_keep_their_cells_however_they_are_aligned(align: str) -> None:
    # Lines at the leading in a column are one cell, the first column's too; cells whose
    # lines overlap down the page are one row, set at its top or in its middle.
    lines = _padded_rows(align)

    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0)

    assert rest == []
    assert [t.rows for t in tables] == [_PADDED_TABLE]


def test_a_table_ruled_by_rows_keeps_cells_set_in_the_middle_of_their_rows() -> None:
    # Rules above and below the header and at the bottom (pandoc's HTML, booktabs): the
    # rows between them are parted by padding, their short cells set in the middle.
    lines = _padded_rows("middle")
    width = (60.0, 420.0)
    rules = [(y, *width) for y in (98.0, 100.0 + 24 + 4, max(ln.bottom for ln in lines) + 2)]

    tables, rest = find_row_ruled_tables(page_of(lines, hrules=rules), lines)

    assert rest == []
    assert [t.rows for t in tables] == [_PADDED_TABLE]


def test_two_tables_ruled_by_rows_with_code_between_them_are_two_tables() -> None:
    # Each table has its three rules, all of one width; the code block between them stands
    # between two of the rules in one column: no rows of a table, so not one table of both.
    def table(top: float, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> tuple[list[Line], list[float]]:
        xs = (70.0, 170.0, 270.0, 370.0)
        out = [line(text, x, top + 4) for text, x in zip(header, xs, strict=True)]
        out += [line(text, x, top + 24 + 16 * k) for k, row in enumerate(rows) for text, x in zip(row, xs, strict=True)]
        return out, [top, top + 18, top + 24 + 16 * len(rows)]

    first, first_rules = table(
        100, ("Feature", "3.8", "3.9", "Notes"), [("slots", "yes", "no", "n/a"), ("any", "no", "yes", "44")]
    )
    code = [line("fn main() { let v: Vec<u32> = Vec::new(); }", 80, 180 + 12 * k) for k in range(3)]
    second, second_rules = table(
        230, ("Module", "Default", "Kind", "Since"), [("os", "on", "core", "3.1"), ("io", "off", "core", "3.2")]
    )
    lines = first + code + second
    width = (60.0, 420.0)
    rules = [(y, *width) for y in first_rules + second_rules]

    tables, rest = find_row_ruled_tables(page_of(lines, hrules=rules), lines)

    assert [t.rows for t in tables] == [
        [["Feature", "3.8", "3.9", "Notes"], ["slots", "yes", "no", "n/a"], ["any", "no", "yes", "44"]],
        [["Module", "Default", "Kind", "Since"], ["os", "on", "core", "3.1"], ["io", "off", "core", "3.2"]],
    ]
    assert rest == code


def test_a_table_ruled_under_every_row_keeps_its_group_rows_of_one_cell() -> None:
    # A rule under every row, and rows that name a group in their first cell alone: one text
    # row between two rules is a row of the table, though it holds one column.
    rows = [("Name", "Office", "Joined"), ("Europe",), ("Alice", "Paris", "2015"), ("Bruno", "Rome", "2018")]
    rows += [("Asia",), ("Chen", "Osaka", "2012")]
    lines = [
        line(text, x, 104 + 20 * k)
        for k, row in enumerate(rows)
        for text, x in zip(row, (70.0, 200.0, 330.0), strict=False)
    ]
    rules = [(100.0 + 20 * k, 60.0, 420.0) for k in range(len(rows) + 1)]

    tables, rest = find_row_ruled_tables(page_of(lines, hrules=rules), lines)

    assert rest == []
    assert [t.rows for t in tables] == [[list(row) + [""] * (3 - len(row)) for row in rows]]


def test_a_table_in_one_column_of_two_is_found_beside_the_other_columns_prose() -> None:
    # Prose in the left column, line for line beside a table in the right one: each column
    # is searched on its own, so the prose is no column of the table.
    table = [[ln for ln in _padded_rows("top") if ln.top < 200]]
    cells = [line(ln.text, ln.x0 + 250, ln.top) for ln in table[0]]
    prose = [line("Prose of the left column, to its edge", 40, 100 + 12 * k) for k in range(8)]
    lines = prose + cells

    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0, gutter=300.0)

    assert [t.rows[0] for t in tables] == [["Module package", "Class", "Deprecated"]]
    assert sorted(ln.text for ln in rest) == sorted(ln.text for ln in prose)


@pytest.mark.parametrize("blank", [None, 4])
def test_rows_set_in_groups_stay_rows_though_a_gap_follows_every_third(blank: int | None) -> None:
    # A data table with more space after every third row: the pitches come in two sizes,
    # but each line of a group stands beside the others of its row, as rows do, not as
    # wrapped text does; a cell left blank (row `blank`'s last) changes nothing.
    lines: list[Line] = []
    top = 100.0
    for k in range(9):
        cells = [(f"{k + 1}", 72), (f"{2460 + 37 * k}", 172), (f"{k * 7}", 272)]
        lines += [line(text, x, top) for text, x in (cells[:2] if k == blank else cells)]
        top += 12 + (8 if k % 3 == 2 else 0)

    tables, _ = find_unruled_tables(page_of(lines), lines, 10.0)

    assert [len(t.rows) for t in tables] == [9]


def test_a_header_and_a_total_set_apart_leave_the_rows_between_them_rows() -> None:
    # A statistical table: the header stands apart, five rows at the leading (one cell
    # blank), the total apart: the gaps come in two sizes, but no cell wraps.
    rows = [("City", "People", "Region"), ("Lyon", "522,000", "Rhone"), ("Lille", "236,000", "Nord")]
    rows += [("Nice", "342,000", ""), ("Nantes", "320,000", "Loire"), ("Brest", "139,000", "Finistere")]
    rows += [("Total", "1,559,000", "")]
    lines: list[Line] = []
    top = 100.0
    for k, row in enumerate(rows):
        lines += [line(text, x, top) for text, x in zip(row, (72, 172, 272), strict=True) if text]
        top += 12 + (8 if k in (0, len(rows) - 2) else 0)

    tables, _ = find_unruled_tables(page_of(lines), lines, 10.0)

    assert [t.rows for t in tables] == [[list(row) for row in rows]]


def test_labels_standing_wherever_their_shapes_are_are_no_table() -> None:
    # A diagram's labels in rows and columns of a sort, but none of its columns lines up
    # (left, right or centre): no table. The same words lined up are one.
    places = [(72, 100), (180, 100), (300, 100), (95, 120), (160, 120), (330, 120), (80, 140), (200, 140), (280, 140)]
    words = ["Record", "Monitor", "Enter", "Compile", "Execute", "Leave", "Abort", "Trace", "Native"]
    scattered = [line(w, x, y) for w, (x, y) in zip(words, places, strict=True)]
    lined_up = [line(w, (72, 180, 300)[k % 3], y) for k, (w, (_, y)) in enumerate(zip(words, places, strict=True))]

    assert find_unruled_tables(page_of(scattered), scattered, 10.0)[0] == []
    assert len(find_unruled_tables(page_of(lined_up), lined_up, 10.0)[0]) == 1


def test_band_row_gap_ratio_decides_whether_padding_parts_the_rows() -> None:
    # Rows 1.1 times the leading apart are parted by padding; asked for 2 times, the rows'
    # first lines alone open rows and the header's second line is a row of one cell.
    lines = _padded_rows("top")

    tables, _ = find_unruled_tables(page_of(lines), lines, 10.0, params=TableParams(band_row_gap_ratio=2.0))

    assert "Module package" not in _cell_texts(tables)


# blocks: PageParams and BlockParams


def _two_lines(gap: float) -> list[Line]:
    first = line("The first line of a paragraph runs on and", 72, 100)
    return [first, line("ends on the next line.", 72, first.bottom + gap)]


def test_a_line_within_the_leading_and_its_slack_continues_the_paragraph() -> None:
    stats = body_stats()
    segment: list = _two_lines(6.0)  # leading 3 points + 0.45 em = 7.5 points allowed

    assert kinds(build_blocks([segment], stats, 3.0)) == [("p", 2)]
    assert kinds(build_blocks([segment], stats, 3.0, params=BlockParams(leading_slack_em=0.2))) == [
        ("p", 1),
        ("p", 1),
    ]


def test_a_full_width_line_indented_under_a_flush_left_one_opens_a_paragraph() -> None:
    stats = body_stats()
    above = line("A paragraph ends on this full line of text.", 72, 100)
    below = line("An indented line opens the next paragraph", 84, 114)
    segment: list = [above, below]  # 12 points in: more than 1 em

    assert kinds(build_blocks([segment], stats, 3.0)) == [("p", 1), ("p", 1)]
    assert kinds(build_blocks([segment], stats, 3.0, params=BlockParams(first_indent_em=1.5))) == [("p", 2)]


def test_blocks_stage_assumes_a_common_leading_where_too_few_lines_measure_it() -> None:
    stats = body_stats()
    segments: list = [_two_lines(6.0)]
    tight = replace(DEFAULT, page=PageParams(default_leading_em=0.1))  # 1 + 4.5 points < 6

    default = work_of(page_of([]), stats)
    default.segments = segments
    blocks_stage(default)
    changed = work_of(page_of([]), stats, tight)
    changed.segments = segments
    blocks_stage(changed)

    assert kinds(default.blocks) == [("p", 2)]
    assert kinds(changed.blocks) == [("p", 1), ("p", 1)]


def test_blocks_stage_makes_a_lone_monospaced_line_a_paragraph() -> None:
    stats = body_stats()
    segments: list = [[line("print(total)", 72, 100, style=MONO)]]

    default = work_of(page_of([]), stats)
    default.segments = segments
    blocks_stage(default)
    one_line_code = work_of(page_of([]), stats, replace(DEFAULT, page=PageParams(code_min_lines=1)))
    one_line_code.segments = segments
    blocks_stage(one_line_code)

    assert kinds(default.blocks) == [("p", 1)]
    assert kinds(one_line_code.blocks) == [("code", 1)]


def test_blocks_stage_marks_a_paragraph_of_footnote_lines_as_a_footnote() -> None:
    note = line("1 A note at the foot of the page.", 72, 700, 8)
    work = work_of(page_of([]), body_stats())
    work.segments, work.notes = [[note]], {id(note)}

    blocks_stage(work)

    assert [(b.kind, b.role) for b in work.blocks] == [("p", ElementType.FOOTNOTE)]


# headings: HeadingParams


def _bold_then_body(title: str) -> list[Block]:
    return [Block("p", [line(title, 72, 80, style=BOLD)]), Block("p", [line(BODY, 72, 100)])]


def test_a_short_bold_line_at_the_body_size_is_a_heading() -> None:
    stats = body_stats()
    blocks = _bold_then_body("Results of the spring survey")

    classify_headings(blocks, stats, {})

    assert [(b.kind, b.level) for b in blocks] == [("h", stats.bold_heading_level), ("p", 0)]


def test_bold_max_chars_decides_how_long_a_bold_heading_may_be() -> None:
    blocks = _bold_then_body("Results of the spring survey")  # 28 characters

    classify_headings(blocks, body_stats(), {}, params=HeadingParams(bold_max_chars=20))

    assert [b.kind for b in blocks] == ["p", "p"]


def test_headings_stage_turns_back_a_heading_over_small_print() -> None:
    stats = body_stats()

    def blocks() -> list[Block]:
        return [
            Block("p", [line("Legend", 72, 80, style=BOLD)]),
            Block("p", [line("Labels of a chart", 72, 96, 8)]),
            Block("p", [line(BODY, 72, 200)]),
        ]

    work = work_of(page_of([]), stats)
    work.blocks = blocks()
    kept = work_of(page_of([]), stats, replace(DEFAULT, headings=HeadingParams(small_print_pt=3.0)))
    kept.blocks = blocks()

    headings_stage(work)
    headings_stage(kept)

    assert [b.kind for b in work.blocks] == ["p", "p", "p"]  # 8 points: small print under 10
    assert [b.kind for b in kept.blocks] == ["h", "p", "p"]


# elements: PageParams


def test_hidden_lines_within_a_line_height_of_each_other_are_one_element() -> None:
    hidden = [line("white text here", 72, 100), line("and its next line", 72, 118)]  # 8 points apart
    for ln in hidden:
        ln.hidden = HIDDEN_INVISIBLE

    assert [e.text for e in hidden_elements(hidden)] == ["white text here and its next line"]
    assert [e.text for e in hidden_elements(hidden, PageParams(hidden_gap_heights=0.5))] == [
        "white text here",
        "and its next line",
    ]


# Per-line helpers of the stages (read a line only as far as the decision needs)


def test_letters_and_digits_are_counted_across_texts_up_to_the_count() -> None:
    assert chars_at_least(["a1", "-b"], 2)
    assert not chars_at_least(["a1", "-2"], 2)
    assert chars_at_least(["®", "1"], 1, str.isalnum)
    assert not chars_at_least(["®", "•"], 1, str.isalnum)
    assert chars_at_least([], 0)


def test_outline_key_keeps_exactly_letters_and_digits_after_a_section_number() -> None:
    assert outline_key("2.3 Über_die Maße: ½ (Teil Ⅻ)") == "überdiemasse½teilⅻ"
    assert outline_key("1.") == "1"


def test_a_table_of_contents_line_stands_alone() -> None:
    stats = body_stats()
    entry = line("Introduction . . . . . . . . 4", 72, 100)
    after = line("and the text that follows it on the page", 72, 114)
    segment: list = [entry, after]

    assert kinds(build_blocks([segment], stats, 3.0)) == [("p", 1), ("p", 1)]


def test_a_table_across_the_gutter_of_a_page_in_two_columns_is_not_cut_in_two() -> None:
    # A full-width table of four columns whose middle gap falls on the page's gutter: the
    # halves found on either side have their rows at the same heights, so the page is
    # searched whole (and a table across the gutter is no table of one column).
    rows = [("Model", "Size", "Accuracy", "Notes"), ("base", "110M", "84.6", "none"), ("large", "340M", "86.7", "slow")]
    rows += [("small", "14M", "80.1", "fast"), ("tiny", "4M", "75.2", "edge")]
    lines = [
        line(text, x, 100 + 14 * k)
        for k, row in enumerate(rows)
        for text, x in zip(row, (72, 172, 320, 420), strict=True)
    ]

    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0, gutter=300.0)

    assert [t.rows for t in tables] == [[list(row) for row in rows]]
    assert rest == []


def test_two_tables_in_the_two_columns_of_a_page_on_one_baseline_grid_stay_two() -> None:
    # Each column holds a table of its own; the columns share a line grid, so most rows of
    # the one stand at heights of the other's, but the tables begin and end apart: no one
    # table across the gutter.
    def table(x: float, top: float, name: str) -> list[Line]:
        rows = [(f"{name}{k}", str(10 * k + 7)) for k in range(1, 6)]
        return [
            line(text, x + dx, top + 14 * k)
            for k, row in enumerate(rows)
            for text, dx in zip(row, (0, 90), strict=True)
        ]

    lines = table(72, 100, "left") + table(330, 128, "right")

    tables, rest = find_unruled_tables(page_of(lines), lines, 10.0, gutter=300.0)

    assert sorted(t.rows[0][0] for t in tables) == ["left1", "right1"]
    assert all(len(t.rows) == 5 and len(t.rows[0]) == 2 for t in tables)
    assert rest == []


def test_the_documents_gutter_is_where_half_its_pages_have_one() -> None:
    def page(number: int, columns: bool) -> PageModel:
        left = [line(f"Left column prose line {k} of page {number}", 60, 100 + 13 * k) for k in range(10)]
        right = [line(f"Right column prose line {k} of page {number}", 320, 100 + 13 * k) for k in range(10)]
        wide = [
            line(f"One wide line of prose across the page, line {k} of page {number}", 60, 100 + 13 * k)
            for k in range(10)
        ]
        return PageModel(number, WIDTH, HEIGHT, left + right if columns else wide)

    two = DocStats()
    for n in (1, 2, 3):
        two.add_page(page(n, columns=n != 2))
    one = DocStats()
    for n in (1, 2, 3):
        one.add_page(page(n, columns=n == 2))
    alone = DocStats()
    alone.add_page(page(1, columns=True))

    gutter = two.document_gutter
    assert gutter is not None
    assert 270 < gutter < 320
    assert one.document_gutter is None  # one page of three in columns
    assert alone.document_gutter is None  # a page alone has its own gutter, not the document's


def pieces_line(pieces: list[tuple[float, str]], top: float, size: float = 10.0, *, drawn: bool = False) -> Line:
    """One line of text pieces each set from its x, glyphs half an em wide; between pieces a
    space the producer did not draw (width 0, as a layout inserts one), or a drawn one."""
    w = 0.5 * size
    xs: list[float] = []
    texts: list[str] = []
    for k, (x, text) in enumerate(pieces):
        if k:
            end = xs[-1]
            xs += [end, x] if drawn else [end, end]
            texts.append(" ")
        for i, ch in enumerate(text):
            xs += [x + i * w, x + (i + 1) * w]
            texts.append(ch)
    gaps = [b - a for a, b in zip(xs[1::2], xs[2::2], strict=False) if b - a > 0]
    text = "".join(texts)
    return Line(
        pieces[0][0], top, xs[-1], top + size, text, [(text, 0)], size, 0, xs, texts, max_gap=max(gaps, default=0.0)
    )


def test_cells_set_an_em_apart_less_rounding_are_cut_where_no_space_is_drawn_between_them() -> None:
    # pandoc's tables pad each cell by half an em on either side: cells each their column's
    # widest stand an em apart, less rounding, and a browser draws no space there, though it
    # draws its word spaces. Where the page draws none (TeX), a gap under an em may be a word
    # space.
    names = ["Feature", "3.8", "3.9", "3.10", "3.11"]
    at = [100.0]
    for name in names[:-1]:
        at.append(at[-1] + 5 * len(name) + 9.8)
    row = pieces_line(list(zip(at, names, strict=True)), 240)
    assert [p.text.strip() for p in _split_wide_gaps(row, drawn=True)] == names
    assert [p.text for p in _split_wide_gaps(row)] == [row.text]
    # A justified line stretches its drawn spaces alike, as wide: one text, not cells.
    words = ["Some", "words", "of", "prose", "set", "in", "the", "page", "body"]
    at = [100.0]
    for word in words[:-1]:
        at.append(at[-1] + 5 * len(word) + 9.8)
    justified = pieces_line(list(zip(at, words, strict=True)), 220, drawn=True)
    assert [p.text for p in _split_wide_gaps(justified, drawn=True)] == [justified.text]
    at = [100.0]
    for word in words[:-1]:
        at.append(at[-1] + 5 * len(word) + 3)
    prose = pieces_line(list(zip(at, words, strict=True)), 260, drawn=True)
    assert draws_spaces([prose, row])
    assert not draws_spaces([row])


def test_a_ligature_in_a_line_that_spans_cells_is_its_letters() -> None:
    row = pieces_line([(100, "\ufb02ag"), (140, "and \ufb01ve")], 200)
    runs, _ = _word_columns(row, [90.0, 135.0, 200.0], [0, 1])
    assert [text.strip() for _, text in runs] == ["flag", "and five"]
