"""Tables as authored: cells from the ruling grid, merged cells, multi-line cells."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Literal

from conversion.engine import ConvertOptions, convert
from conversion.engine.assembly import Continuation, join_pages

from .pdfs import Box, Op, Rule, Text, make_pdf, ruled_grid

XS = [72, 200, 330, 460]
YS = [700, 680, 660, 640]


def md(path: Path, tables: Literal["markdown", "html", "text"] = "markdown") -> str:
    return convert(path, options=ConvertOptions(tables=tables)).markdown


def cells_page(cells: list[tuple[int, int, int, int, list[str]]], xs: list[float], ys: list[float]) -> list[Op]:
    """Each cell (row, column, end row, end column, lines) drawn as its own rectangle."""
    ops: list[Op] = []
    for r0, c0, r1, c1, texts in cells:
        ops.append(Box(xs[c0], ys[r1], xs[c1], ys[r0]))
        for k, text in enumerate(texts):
            ops.append(Text(xs[c0] + 4, ys[r0] - 14 - 12 * k, text, 10))
    ops.append(Text(72, ys[-1] - 40, "After the table.", 11))
    return ops


def test_cell_spanning_two_columns_fills_both_in_markdown_and_carries_colspan_in_html(tmp_path: Path) -> None:
    cells = [
        (0, 0, 1, 1, ["Name"]),
        (0, 1, 1, 2, ["Qty"]),
        (0, 2, 1, 3, ["Price"]),
        (1, 0, 2, 1, ["Apple"]),
        (1, 1, 2, 3, ["Sold out"]),
        (2, 0, 3, 1, ["Pear"]),
        (2, 1, 3, 2, ["10"]),
        (2, 2, 3, 3, ["0.80"]),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [cells_page(cells, XS, YS)])
    assert md(pdf) == (
        "| Name | Qty | Price |\n| --- | --- | --- |\n| Apple | Sold out | Sold out |\n| Pear | 10 | 0.80 |"
        "\n\nAfter the table."
    )
    assert md(pdf, "html") == (
        "<table>\n<thead>\n<tr><th>Name</th><th>Qty</th><th>Price</th></tr>\n</thead>\n<tbody>\n"
        '<tr><td>Apple</td><td colspan="2">Sold out</td></tr>\n'
        "<tr><td>Pear</td><td>10</td><td>0.80</td></tr>\n</tbody>\n</table>\n\nAfter the table."
    )


def test_cell_spanning_two_rows_carries_rowspan_in_html(tmp_path: Path) -> None:
    cells = [
        (0, 0, 1, 1, ["Fruit"]),
        (0, 1, 1, 2, ["Season"]),
        (0, 2, 1, 3, ["Price"]),
        (1, 0, 2, 1, ["Apple"]),
        (1, 1, 3, 2, ["Autumn"]),
        (1, 2, 2, 3, ["1.20"]),
        (2, 0, 3, 1, ["Pear"]),
        (2, 2, 3, 3, ["0.80"]),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [cells_page(cells, XS, YS)])
    assert md(pdf, "html") == (
        "<table>\n<thead>\n<tr><th>Fruit</th><th>Season</th><th>Price</th></tr>\n</thead>\n<tbody>\n"
        '<tr><td>Apple</td><td rowspan="2">Autumn</td><td>1.20</td></tr>\n'
        "<tr><td>Pear</td><td>0.80</td></tr>\n</tbody>\n</table>\n\nAfter the table."
    )
    assert "| Pear | Autumn | 0.80 |" in md(pdf)


def test_lines_of_one_ruled_cell_stay_in_that_cell(tmp_path: Path) -> None:
    ys = [700, 680, 620, 600]
    cells = [
        (0, 0, 1, 1, ["Term"]),
        (0, 1, 1, 2, ["Meaning"]),
        (1, 0, 2, 1, ["Lease"]),
        (1, 1, 2, 2, ["The time a worker", "may hold a job", "before another", "may take it."]),
        (2, 0, 3, 1, ["Queue"]),
        (2, 1, 3, 2, ["Where jobs wait."]),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [cells_page(cells, XS[:3], ys)])
    assert md(pdf) == (
        "| Term | Meaning |\n| --- | --- |\n"
        "| Lease | The time a worker may hold a job before another may take it. |\n"
        "| Queue | Where jobs wait. |\n\nAfter the table."
    )


def test_records_inside_a_frame_with_only_a_header_rule_are_one_row_each(tmp_path: Path) -> None:
    xs, top, head, bottom = [72, 200, 330], 700, 680, 600
    ops: list[Op] = [Box(xs[0], bottom, xs[-1], top), Rule(xs[0], head, xs[-1], head), Rule(xs[1], top, xs[1], head)]
    ops += [Text(76, 686, "Name", 10), Text(204, 686, "Qty", 10)]
    for k, (name, qty) in enumerate([("Apple", "3"), ("Pear", "10"), ("Plum", "7"), ("Fig", "2")]):
        ops += [Text(76, 666 - 14 * k, name, 10), Text(204, 666 - 14 * k, qty, 10)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == ("| Name | Qty |\n| --- | --- |\n| Apple | 3 |\n| Pear | 10 |\n| Plum | 7 |\n| Fig | 2 |")


def test_table_nested_in_a_cell_is_read_into_that_cell(tmp_path: Path) -> None:
    xs, ys = [72, 250, 450], [700, 680, 600]
    ops: list[Op] = [Box(xs[c], ys[r + 1], xs[c + 1], ys[r]) for r in range(2) for c in range(2)]
    ops += [Text(76, 686, "Part", 10), Text(254, 686, "Detail", 10), Text(76, 666, "Sizes", 10)]
    inner_x, inner_y = [260, 320, 380, 440], [670, 650, 630]
    ops += [Box(inner_x[c], inner_y[r + 1], inner_x[c + 1], inner_y[r]) for r in range(2) for c in range(3)]
    for r, row in enumerate([["S", "M", "L"], ["36", "38", "40"]]):
        ops += [Text(inner_x[c] + 4, inner_y[r] - 14, text, 10) for c, text in enumerate(row)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == "| Part | Detail |\n| --- | --- |\n| Sizes | S M L 36 38 40 |"


def test_lines_drawn_through_words_are_a_figure_not_a_table(tmp_path: Path) -> None:
    # A syntax diagram: boxes and connector lines over its labels.
    ops: list[Op] = [Box(72, 560, 460, 700), Rule(115, 560, 115, 700), Rule(300, 560, 300, 700)]
    ops += [Rule(72, 660, 460, 660), Rule(72, 620, 460, 620)]
    for k, text in enumerate(["Names the permission of a row", "Identifies the table for it", "Says when it applies"]):
        ops.append(Text(100, 680 - 40 * k, text, 10))
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == "Names the permission of a row\n\nIdentifies the table for it\n\nSays when it applies"


def test_frame_around_a_quarter_of_the_page_is_not_a_table(tmp_path: Path) -> None:
    ops: list[Op] = [Box(40, 100, 560, 740), Rule(400, 100, 400, 740), Rule(400, 400, 560, 400)]
    ops += [Text(60, 700, "A page of body text inside a frame.", 11), Text(60, 686, "It goes on here.", 11)]
    ops += [Text(410, 700, "Sidebar", 11), Text(410, 380, "More sidebar", 11), Text(60, 120, "Last line.", 11)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert "|" not in md(pdf)


def test_blank_rows_at_the_top_and_bottom_of_a_grid_are_not_rows(tmp_path: Path) -> None:
    ys = [720, *YS, 620]  # a blank ruled row above the header and one under the last row
    cells: list[tuple[int, int, int, int, list[str]]] = [(0, 0, 1, 3, [])]
    cells += [(r + 1, c, r + 2, c + 1, [t]) for r, row in enumerate(_ROWS) for c, t in enumerate(row)]
    cells += [(4, 0, 5, 3, [])]
    pdf = make_pdf(tmp_path / "a.pdf", [cells_page(cells, XS, ys)])
    assert md(pdf) == (
        "| Name | Qty | Price |\n| --- | --- | --- |\n| Apple | 3 | 1.20 |\n| Pear | 10 | 0.80 |\n\nAfter the table."
    )


_ROWS = [["Name", "Qty", "Price"], ["Apple", "3", "1.20"], ["Pear", "10", "0.80"]]


def delimiter_rows(markdown: str) -> int:
    return sum(1 for line in markdown.splitlines() if line.startswith("| --- |"))


INTRO = Text(72, 740, "The prices of the season are these.", 11)
HEADER = ["Fruit", "Price"]
FIRST = [["Apple", "1.20"], ["Pear", "0.80"], ["Plum", "0.50"]]
SECOND = [["Cherry", "3.00"], ["Lemon", "0.40"]]


def test_table_continued_with_its_header_repeated_is_one_table_in_the_document(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [INTRO, *ruled_grid([HEADER, *FIRST], 120)],
            [*ruled_grid([HEADER, *SECOND], 720), Text(72, 560, "After it.", 11)],
        ],
    )
    result = convert(pdf)
    assert result.markdown == (
        "The prices of the season are these.\n\n"
        "| Fruit | Price |\n| --- | --- |\n| Apple | 1.20 |\n| Pear | 0.80 |\n| Plum | 0.50 |\n"
        "| Cherry | 3.00 |\n| Lemon | 0.40 |\n\nAfter it."
    )
    # Each page's own Markdown stands alone, header and all.
    assert result.pages[1].markdown.startswith("| Fruit | Price |\n| --- | --- |\n| Cherry | 3.00 |")


def test_table_continued_without_a_header_joins_its_first_row_as_a_row(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [[INTRO, *ruled_grid([HEADER, *FIRST], 120)], ruled_grid(SECOND, 720)])
    result = convert(pdf)
    assert result.markdown.endswith("| Plum | 0.50 |\n| Cherry | 3.00 |\n| Lemon | 0.40 |")
    assert delimiter_rows(result.markdown) == 1
    assert result.pages[1].markdown.startswith("| Cherry | 3.00 |\n| --- | --- |\n| Lemon | 0.40 |")


def test_continued_table_is_one_html_table_when_tables_are_html(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [[INTRO, *ruled_grid([HEADER, *FIRST], 120)], ruled_grid(SECOND, 720)])
    out = md(pdf, "html")
    assert out.count("<table>") == 1
    assert out.count("<th>") == 2
    assert "<tr><td>Plum</td><td>0.50</td></tr>\n<tr><td>Cherry</td><td>3.00</td></tr>\n" in out
    assert out.endswith("<tr><td>Lemon</td><td>0.40</td></tr>\n</tbody>\n</table>")


def test_tables_of_other_columns_or_after_text_are_not_joined(tmp_path: Path) -> None:
    wider = ruled_grid([["Fruit", "Price", "Stock"], ["Fig", "2.00", "4"]], 720, xs=XS)
    pdf = make_pdf(tmp_path / "a.pdf", [[INTRO, *ruled_grid([HEADER, *FIRST], 120)], wider])
    assert delimiter_rows(convert(pdf).markdown) == 2
    after_text = [Text(72, 740, "A new table follows.", 11), *ruled_grid(SECOND, 720)]
    pdf = make_pdf(tmp_path / "b.pdf", [[INTRO, *ruled_grid([HEADER, *FIRST], 120)], after_text])
    assert delimiter_rows(convert(pdf).markdown) == 2


WRAPPED = ["The time a worker may", "hold a job before", "another worker may", "take it from the queue."]


def test_row_of_wrapped_cells_alone_at_the_top_of_a_page_is_one_row_of_the_table(tmp_path: Path) -> None:
    # A table ruled throughout, cut by the page break: its last row, whose cells wrap (the
    # short one centred in its row), is alone under the next page's top rule.
    xs, ys = [72, 200, 460], [720, 640]
    rest: list[Op] = [Rule(xs[0], y, xs[-1], y) for y in ys]
    rest += [Rule(x, ys[1], x, ys[0]) for x in xs]
    rest += [Text(76, 676, "Lease", 10)] + [Text(204, 706 - 14 * k, t, 10) for k, t in enumerate(WRAPPED)]
    pdf = make_pdf(tmp_path / "a.pdf", [[INTRO, *ruled_grid([HEADER, *FIRST], 120, xs=xs)], rest])
    assert convert(pdf).markdown.endswith(
        "| Plum | 0.50 |\n| Lease | The time a worker may hold a job before another worker may take it from the queue. |"
    )


def test_text_column_printed_over_a_table_too_wide_for_its_column_is_not_in_its_cells(tmp_path: Path) -> None:
    # A two-column page: the table of the left column is wider than it, and the lines of the
    # right column, set from x = 300, run over its last columns and through their rulings.
    xs = [72, 140, 210, 280, 350, 420]
    rows = [["Name", "Kind", "Size", "Since", "Notes"]] + [[f"n{r}", "int", f"{r}0", "3.1", "ok"] for r in range(4)]
    ys = [700 - 30 * i for i in range(len(rows) + 1)]
    ops: list[Op] = [Rule(xs[0], y, xs[-1], y) for y in ys]
    ops += [Rule(x, ys[-1], x, ys[0]) for x in xs]
    ops += [Text(xs[c] + 4, ys[r] - 14, t, 10) for r, row in enumerate(rows) for c, t in enumerate(row)]
    prose = [
        "The right column goes on here",
        "over the table that is wider",
        "than the left column it is in",
        "and ends.",
    ]
    ops += [Text(300, ys[1] - 26 - 30 * k, t, 10) for k, t in enumerate(prose)]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "| n3 | int | 30 | 3.1 | ok |" in out
    text = [line for line in out.splitlines() if not line.startswith("|")]
    assert all(t in text for t in prose)


def test_row_cut_by_the_page_break_is_one_row_in_the_document(tmp_path: Path) -> None:
    # The page break falls inside the last row: its rest, under the repeated header, leaves
    # the first column (whose cell ended on the page before) empty.
    first = [[*FIRST[:2], ["Plum", "0.50 a pound,"]]]
    rest = [HEADER, ["", "in season only"], *SECOND]
    pdf = make_pdf(tmp_path / "a.pdf", [[INTRO, *ruled_grid([HEADER, *first[0]], 120)], ruled_grid(rest, 720)])
    result = convert(pdf)
    assert result.markdown.endswith("| Plum | 0.50 a pound, in season only |\n| Cherry | 3.00 |\n| Lemon | 0.40 |")
    # The page's own table keeps the rest as a row of its own.
    assert "|  | in season only |" in result.pages[1].markdown


def test_row_under_a_cell_spanning_rows_across_the_page_break_stays_a_row() -> None:
    # The first column's cell spans both rows: the row after the break starts values of its own.
    before = "| Event | Date |\n| --- | --- |\n| Sale of assets | 2017-09-17 |"
    after = "| Event | Date |\n| --- | --- |\n|  | 2018-01-15 |"
    joined = join_pages([before, after], [Continuation.NONE, Continuation.REPEATED_HEADER])
    assert joined == "| Event | Date |\n| --- | --- |\n| Sale of assets | 2017-09-17 |\n|  | 2018-01-15 |"


def test_table_ruled_by_rows_only_takes_its_columns_from_the_blank_strips_and_its_rows_from_the_gaps(
    tmp_path: Path,
) -> None:
    # pandoc's HTML: a rule above and below the header and one at the bottom, no vertical
    # rules; the cells of a row are padded apart more than the wrapped lines of one cell.
    ops: list[Op] = [Rule(72, y, 460, y) for y in (700, 680, 596)]
    ops += [Text(76, 686, "Option", 10), Text(200, 686, "Meaning", 10)]
    ops += [Text(76, 664, "lease", 10), Text(200, 664, "How long a worker may hold", 10)]
    ops += [Text(200, 652, "a job before another takes it.", 10)]
    ops += [Text(76, 632, "retries", 10), Text(200, 632, "How often a job is run again.", 10)]
    ops += [Text(76, 612, "queue", 10), Text(200, 612, "Where jobs wait.", 10)]
    ops.append(Text(72, 560, "After the table.", 10))
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "| Option | Meaning |\n| --- | --- |\n"
        "| lease | How long a worker may hold a job before another takes it. |\n"
        "| retries | How often a job is run again. |\n| queue | Where jobs wait. |\n\nAfter the table."
    )


def test_prose_or_a_list_between_rules_is_not_a_table(tmp_path: Path) -> None:
    rules: list[Op] = [Rule(72, y, 460, y) for y in (700, 660, 600)]
    prose = ["A paragraph set between", "rules of a page,", "one after another", "as a reader sees it."]
    lines = [Text(72, 686, prose[0], 10), *(Text(72, 646 - 14 * k, t, 10) for k, t in enumerate(prose[1:]))]
    items = [Text(72, 686, "-    Item number 1 of a list", 10)]
    items += [Text(72, 646 - 14 * k, f"-    Item number {k + 2} of a list", 10) for k in range(3)]
    pdf = make_pdf(tmp_path / "a.pdf", [[*rules, *lines], [*rules, *items]])
    assert "|" not in md(pdf)


def _three_columns(seed: int) -> tuple[list[Op], list[list[str]]]:
    """A page of three narrow columns of paragraphs at 8.5 pt whose lines share one baseline
    grid (as a browser prints `column-count: 3`), and each column's lines."""
    rng = random.Random(seed)
    words = "the queue holds every request until a worker takes it and the result is stored for the client who asked"
    ops: list[Op] = []
    columns: list[list[str]] = []
    for x in (50, 215, 380):
        column: list[str] = []
        y = 740
        while y > 80:
            line = ""
            for _ in range(rng.randint(30, 60)):
                word = rng.choice(words.split())
                if len(line) + len(word) + 1 > 34:
                    ops.append(Text(x, y, line, 8.5))
                    column.append(line)
                    line, y = word, y - 11
                else:
                    line = f"{line} {word}".strip()
            ops.append(Text(x, y, line, 8.5))
            column.append(line)
            y -= 17  # a paragraph's last line, and the space after it
        columns.append(column)
    return ops, columns


def test_page_in_three_columns_of_one_baseline_grid_is_read_column_by_column_not_as_a_table(
    tmp_path: Path,
) -> None:
    # The page's first gutter leaves two columns on one side of it; their lines, side by
    # side on the same baselines, are no table's rows: each column is searched on its own.
    ops, columns = _three_columns(7)
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "|" not in out
    assert out.index(columns[0][-1]) < out.index(columns[1][0]) < out.index(columns[1][-1]) < out.index(columns[2][0])


def test_ruling_between_columns_is_no_edge_of_a_table_that_touches_it(tmp_path: Path) -> None:
    # A ruled table in the middle one of three columns, wider than its column: its right
    # border and its rules reach the rule drawn between the columns, which runs the page's
    # height. The table is its own rows; the columns' text around it is no cell.
    prose, _ = _three_columns(11)
    prose = [op for op in prose if not (isinstance(op, Text) and op.x == 215 and 440 < op.y < 540)]
    rules: list[Op] = [Rule(x, 80, x, 750) for x in (205, 370)]
    table = ruled_grid([["Name", "Size"], ["lease", "30"], ["retries", "3"]], 520, xs=(215, 290, 368))
    out = md(make_pdf(tmp_path / "a.pdf", [[*rules, *table, *prose]]))
    assert "| Name | Size |\n| --- | --- |\n| lease | 30 |\n| retries | 3 |" in out
    assert out.count("|") == 12


def test_table_a_column_break_cuts_keeps_its_rows_beside_the_rule_between_the_columns(tmp_path: Path) -> None:
    # The first rows of a table at the foot of the left column of two, a little wider than
    # its column; the rule drawn between the columns runs from the top of the page to its
    # foot, past the table's top but not past its bottom. The table's own vertical rulings stop at its rows; the rule between
    # the columns is cut to them.
    prose = [Text(72, 740 - 12 * k, f"Prose of the left column, its line number {k}.", 9) for k in range(38)]
    prose += [Text(320, 740 - 12 * k, f"Prose of the right column, its line number {k}.", 9) for k in range(50)]
    rules: list[Op] = [Rule(304, 60, 304, 750)]
    xs, ys = (72, 190, 310), (170, 150, 120, 90)
    table: list[Op] = [Rule(xs[0], y, xs[-1], y) for y in ys]
    table += [Rule(x, ys[-1], x, ys[0]) for x in xs]
    table += [Text(76, 156, "Name", 9), Text(194, 156, "Meaning", 9)]
    for top, (name, meaning) in zip(
        ys[1:], (("lease", "How long a worker"), ("retries", "How often a job")), strict=False
    ):
        table += [Text(76, top - 17, name, 9), Text(194, top - 11, meaning, 9), Text(194, top - 23, "may hold it.", 9)]
    out = md(make_pdf(tmp_path / "a.pdf", [[*rules, *table, *prose]]))
    assert (
        "| Name | Meaning |\n| --- | --- |\n| lease | How long a worker may hold it. |\n"
        "| retries | How often a job may hold it. |"
    ) in out
