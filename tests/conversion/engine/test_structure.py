"""Structure recovery on small generated PDFs: exact Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pikepdf
import pytest

from conversion.engine import ConvertOptions, convert

from .pdfs import Op, Raw, Rule, Runs, Text, add_outline, glyph_index_codes, lines, make_pdf, produced_by


def md(path: Path, **kwargs: Any) -> str:
    return convert(path, **kwargs).markdown


def test_large_bold_line_becomes_heading_and_lines_reflow_into_a_paragraph(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 700, "Annual Report", 20, "B"),
                *lines(
                    72,
                    660,
                    [
                        "The year was good for the company and",
                        "its many customers around the world.",
                    ],
                ),
                Text(72, 610, "Second paragraph starts here.", 11),
            ]
        ],
    )
    assert md(pdf) == (
        "# Annual Report\n\n"
        "The year was good for the company and its many customers around the world.\n\n"
        "Second paragraph starts here."
    )


def test_heading_levels_follow_font_size_ranks(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "Title", 24, "B"),
                Text(72, 680, "Section", 16, "B"),
                *lines(72, 650, ["Body text of the section that is long enough to be body."]),
                Text(72, 620, "Subsection", 13, "B"),
                *lines(72, 590, ["More body text follows the subsection heading here."]),
            ]
        ],
    )
    assert md(pdf) == (
        "# Title\n\n## Section\n\nBody text of the section that is long enough to be body.\n\n"
        "### Subsection\n\nMore body text follows the subsection heading here."
    )


def test_end_of_line_hyphen_is_repaired(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            lines(
                72,
                700,
                [
                    "This sentence shows an exam-",
                    "ple of hyphen-",
                    "ation repair, not Jean-",
                    "Paul.",
                ],
            )
        ],
    )
    # Before a capital the hyphen is the compound's own: kept, and the parts joined.
    assert md(pdf) == "This sentence shows an example of hyphenation repair, not Jean-Paul."


def test_a_heading_wrapped_after_inline_code_is_one_heading(tmp_path: Path) -> None:
    # A browser sets inline code at about 0.85 of the text: the second line holds more code
    # than text, and is still a line of the heading's size.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Runs(
                    72, 700, (("B", "Matching and coherence for the builtin types "), ("MB", "Copy")), sizes=(10, 8.5)
                ),
                Runs(72, 687, (("B", "and "), ("MB", "Sized")), sizes=(10, 8.5)),
                *lines(72, 660, [BODY], size=10),
            ]
        ],
    )
    assert md(pdf).startswith("## Matching and coherence for the builtin types Copy and Sized\n\n")


def test_a_bold_lead_in_wrapped_over_a_line_opens_its_paragraph(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 700, "Use a capture clause syntax that borrows individual", 10, "B"),
                Runs(72, 687, (("B", "variables."), ("R", " By-value closures already serve this role.")), size=10),
            ]
        ],
    )
    assert md(pdf) == (
        "**Use a capture clause syntax that borrows individual variables.** By-value closures already serve this role."
    )


def test_a_name_the_document_writes_joined_loses_its_hyphen_before_a_capital(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            lines(
                72,
                700,
                ["TraceMonkey records traces; we show that Trace-", "Monkey is fast, and that TraceMonkey is small."],
            )
        ],
    )
    assert md(pdf) == "TraceMonkey records traces; we show that TraceMonkey is fast, and that TraceMonkey is small."


def test_hyphen_of_a_compound_the_document_writes_whole_is_kept_at_a_line_break(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            lines(
                72,
                700,
                [
                    "The policy covers full-time and part-time staff alike, and",
                    "it applies to full-time and part-",
                    "time staff on fixed terms; its exam-",
                    "ple shows a free-",
                    "software licence on open-",
                    "source terms.",
                ],
            )
        ],
    )
    assert md(pdf) == (
        "The policy covers full-time and part-time staff alike, and it applies to full-time and part-time "
        "staff on fixed terms; its example shows a freesoftware licence on opensource terms."
    )


def test_compound_of_two_long_words_the_document_uses_keeps_its_hyphen(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            lines(
                72,
                700,
                [
                    "Free programs and the software they need are shared; the free-",
                    "software movement grew from that, and its work-",
                    "ing groups met often.",
                ],
            )
        ],
    )
    assert md(pdf) == (
        "Free programs and the software they need are shared; the free-software movement grew "
        "from that, and its working groups met often."
    )


def test_list_running_on_into_the_next_column_keeps_its_depth(tmp_path: Path) -> None:
    left = [f"Left column line {i} of the first column text" for i in range(1, 7)]
    right = [f"Right column line {i} of the second column" for i in range(1, 7)]
    ops = [
        *lines(72, 700, left, size=10, leading=12),
        Text(84, 620, "1. Fill in the form at the board.", 10),
        *lines(320, 700, ["2. Pay the fee to the treasurer.", "3. Collect your key from the shed."], size=10),
        *lines(320, 660, right, size=10, leading=12),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert "1. Fill in the form at the board.\n2. Pay the fee to the treasurer.\n3. Collect your key" in md(pdf)


def test_bullets_become_a_nested_list(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                *lines(72, 700, ["Intro paragraph before the list."]),
                Text(72, 670, "\u2022 First item"),
                Text(90, 656, "- Nested item"),
                Text(72, 642, "\u2022 Second item that wraps onto"),
                Text(82, 628, "a second line"),
            ]
        ],
    )
    assert md(pdf) == (
        "Intro paragraph before the list.\n\n- First item\n  - Nested item\n- Second item that wraps onto a second line"
    )


def test_numbered_items_become_an_ordered_list(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [lines(72, 700, ["1. Unpack the box.", "2. Plug it in.", "3. Switch it on."])],
    )
    assert md(pdf) == "1. Unpack the box.\n2. Plug it in.\n3. Switch it on."


def _grid_page() -> list[Op]:
    ops: list[Op] = []
    xs = [72, 200, 330, 460]
    ys = [700, 680, 660, 640]
    for y in ys:
        ops.append(Rule(xs[0], y, xs[-1], y))
    for x in xs:
        ops.append(Rule(x, ys[-1], x, ys[0]))
    cells = [["Name", "Qty", "Price"], ["Apple", "3", "1.20"], ["Pear | big", "10", "0.80"]]
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            ops.append(Text(xs[c] + 4, ys[r] - 14, text, 10))
    ops.append(Text(72, 600, "After the table.", 11))
    return ops


def test_ruled_grid_becomes_a_pipe_table(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [_grid_page()])
    assert md(pdf) == (
        "| Name | Qty | Price |\n|---|---|---|\n| Apple | 3 | 1.20 |\n| Pear \\| big | 10 | 0.80 |\n\nAfter the table."
    ).replace("|---|---|---|", "| --- | --- | --- |")


def test_ruled_grid_renders_as_html_when_asked(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [_grid_page()])
    assert md(pdf, options=ConvertOptions(tables="html")) == (
        "<table>\n<thead>\n<tr>\n<th>Name</th>\n<th>Qty</th>\n<th>Price</th>\n</tr>\n</thead>\n<tbody>\n"
        "<tr><td>Apple</td><td>3</td><td>1.20</td></tr>\n"
        "<tr><td>Pear | big</td><td>10</td><td>0.80</td></tr>\n</tbody>\n</table>\n\n"
        "After the table."
    )


def test_tables_text_mode_keeps_cells_as_plain_lines(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [_grid_page()])
    assert md(pdf, options=ConvertOptions(tables="text")) == (
        "Name Qty Price\n\nApple 3 1.20\n\nPear | big 10 0.80\n\nAfter the table."
    )


def test_aligned_columns_without_rules_become_a_table(tmp_path: Path) -> None:
    rows = [
        ("Country", "Capital", "Population"),
        ("France", "Paris", "67M"),
        ("Spain", "Madrid", "47M"),
        ("Italy", "Rome", "59M"),
    ]
    ops: list[Op] = [Text(72, 720, "Countries of Europe are listed below.")]
    for i, (a, b, c) in enumerate(rows):
        y = 690 - i * 16
        ops += [Text(72, y, a, 10), Text(220, y, b, 10), Text(380, y, c, 10)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == (
        "Countries of Europe are listed below.\n\n"
        "| Country | Capital | Population |\n| --- | --- | --- |\n"
        "| France | Paris | 67M |\n| Spain | Madrid | 47M |\n| Italy | Rome | 59M |"
    )


def test_cells_that_layout_joins_into_one_line_are_split_into_columns(tmp_path: Path) -> None:
    # Columns about one em apart: layout reads "Rain mm Wind km/h Sun h" as one line.
    rows = [
        ("Station", "Rain mm", "Wind km/h", "Sun h"),
        ("Hill Top", "12.4", "31", "4.5"),
        ("Valley Farm", "8.1", "22", "6.0"),
        ("Town Centre", "6.9", "18", "5.2"),
    ]
    ops: list[Op] = [*lines(72, 720, ["Weekly weather at the three stations of the county network."])]
    for i, row in enumerate(rows):
        ops += [Text(x, 690 - 16 * i, cell, 10) for x, cell in zip((72, 141, 192, 251), row, strict=True)]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == (
        "Weekly weather at the three stations of the county network.\n\n"
        "| Station | Rain mm | Wind km/h | Sun h |\n| --- | --- | --- | --- |\n"
        "| Hill Top | 12.4 | 31 | 4.5 |\n| Valley Farm | 8.1 | 22 | 6.0 |\n| Town Centre | 6.9 | 18 | 5.2 |"
    )


def test_two_column_gaps_inside_lines_alone_do_not_make_a_table(tmp_path: Path) -> None:
    code = ["SELECT name, total", "FROM           orders", "WHERE          total > 10", "ORDER BY       name;"]
    ops: list[Op] = [*lines(72, 720, ["The query below lists the large orders by customer name."])]
    for i, row in enumerate(code[1:], start=1):
        keyword, rest = row.split(maxsplit=1) if not row.startswith("ORDER") else ("ORDER BY", row[8:])
        ops += [Text(72, 700 - 14 * i, keyword, 10), Text(72 + 60, 700 - 14 * i, rest.strip(), 10)]
    ops.append(Text(72, 700, code[0], 10))
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert "|" not in md(pdf)


def test_spanning_title_wrapped_into_the_first_column_stays_one_heading(tmp_path: Path) -> None:
    left = [f"Left column line {i} of the first column text" for i in range(1, 9)]
    right = [f"Right column line {i} of the second column" for i in range(1, 9)]
    ops = [
        Text(72, 750, "Seagrass Recovery After the Great Storm", 22, "B"),
        Text(72, 724, "Damage", 22, "B"),
        *lines(72, 680, left, size=10, leading=12),
        *lines(320, 680, right, size=10, leading=12),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf).split("\n\n")[0] == "# Seagrass Recovery After the Great Storm Damage"


def test_two_columns_are_read_column_by_column(tmp_path: Path) -> None:
    left = [f"Left column line {i} of the first column text" for i in range(1, 9)]
    right = [f"Right column line {i} of the second column" for i in range(1, 9)]
    ops = [
        Text(72, 740, "A Two Column Article", 18, "B"),
        *lines(72, 700, left, size=10, leading=12),
        *lines(320, 700, right, size=10, leading=12),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    assert md(pdf) == ("# A Two Column Article\n\n" + " ".join(left) + "\n\n" + " ".join(right))


def test_running_headers_footers_and_page_numbers_are_removed(tmp_path: Path) -> None:
    pages = [
        [
            Text(72, 760, "ACME Corp - Internal Report", 9),
            *lines(72, 600, [f"Body of page {n} talks about topic {n}."]),
            Text(300, 30, str(n), 9),
        ]
        for n in (1, 2, 3)
    ]
    pdf = make_pdf(tmp_path / "a.pdf", pages)
    result = convert(pdf)
    assert [p.markdown for p in result.pages] == [
        "Body of page 1 talks about topic 1.",
        "Body of page 2 talks about topic 2.",
        "Body of page 3 talks about topic 3.",
    ]


def test_single_page_drops_small_margin_header_and_page_number(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 760, "ACME Corp", 9),
                *lines(72, 600, ["Body text of the only page."]),
                Text(300, 30, "Page 1 of 1", 9),
            ]
        ],
    )
    assert md(pdf) == "Body text of the only page."


def test_single_page_keeps_a_body_size_title_and_a_footnote_in_the_margins(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 760, "Notes on the harvest", 11),
                *lines(72, 600, ["Body text of the only page, long enough to be the body."]),
                Text(72, 40, "1 The yield was measured by hand.", 8),
            ]
        ],
    )
    assert md(pdf) == (
        "Notes on the harvest\n\nBody text of the only page, long enough to be the body.\n\n"
        "1 The yield was measured by hand."
    )


def test_alternating_headers_of_a_two_page_document_are_removed(tmp_path: Path) -> None:
    pages = [
        [
            Text(360, 760, "Chapter 2 - The Reading Room", 9),
            *lines(72, 600, ["Body text of the first page, long enough to be the body."]),
            Text(300, 30, "1", 11),
        ],
        [
            Text(72, 760, "Guide to the Archive", 9),
            *lines(72, 600, ["Body text of the second page, long enough to be the body."]),
            Text(300, 30, "2", 11),
        ],
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert [p.markdown for p in result.pages] == [
        "Body text of the first page, long enough to be the body.",
        "Body text of the second page, long enough to be the body.",
    ]


def test_monospace_block_becomes_fenced_code(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                *lines(72, 720, ["Run this program to see the greeting:"]),
                *lines(72, 690, ["def main():", "    print('hi')"], size=10, leading=12, font="M"),
                *lines(72, 640, ["It prints hi."]),
            ]
        ],
    )
    assert md(pdf) == (
        "Run this program to see the greeting:\n\n```\ndef main():\n    print('hi')\n```\n\nIt prints hi."
    )


def test_bold_and_italic_runs_become_emphasis(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Runs(
                    72,
                    700,
                    (
                        ("R", "Plain "),
                        ("B", "strong"),
                        ("R", " and "),
                        ("I", "slanted"),
                        ("R", " words."),
                    ),
                )
            ]
        ],
    )
    assert md(pdf) == "Plain **strong** and *slanted* words."


def test_markdown_characters_in_text_are_escaped(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 700, "# not a heading"),
                Text(72, 660, "1. is not a list when it is a sentence? It is a list."),
                Text(
                    72,
                    620,
                    "Use *stars*, _under_, [link](x), <b> and a \\ backslash; snake_case stays.",
                ),
            ]
        ],
    )
    assert md(pdf) == (
        "\\# not a heading\n\n"
        "1. is not a list when it is a sentence? It is a list.\n\n"
        "Use \\*stars\\*, \\_under\\_, \\[link\\](x), \\<b> and a \\\\ backslash; snake_case stays."
    )


def test_outline_title_on_the_page_makes_a_heading(tmp_path: Path) -> None:
    path = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                *lines(72, 700, ["Scope of work"]),
                *lines(72, 670, ["The scope covers the whole building."]),
            ]
        ],
    )
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        with pdf.open_outline() as outline:
            parent = pikepdf.OutlineItem("Chapter", 0)
            parent.children.append(pikepdf.OutlineItem("Scope of work", 0))
            outline.root.append(parent)
        pdf.save(path)
    assert md(path) == "## Scope of work\n\nThe scope covers the whole building."


BODY = "Body text of this part, long enough to be taken for the body of the page."


def test_without_a_title_the_largest_heading_style_is_level_two(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "Overview", 16, "B"),
                *lines(72, 690, [BODY]),
                Text(72, 650, "Details", 13, "B"),
                *lines(72, 620, [BODY]),
                Text(72, 580, "More details", 13, "B"),
                *lines(72, 550, [BODY]),
            ]
        ],
    )
    assert md(pdf) == f"## Overview\n\n{BODY}\n\n### Details\n\n{BODY}\n\n### More details\n\n{BODY}"


def test_heading_levels_are_ranked_over_the_whole_document_not_the_page(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [Text(72, 720, "Guide", 28, "B"), Text(72, 670, "Background", 14, "B"), *lines(72, 640, [BODY])],
            [Text(72, 720, "Installation", 20, "B"), *lines(72, 690, [BODY])],
        ],
    )
    assert [p.markdown for p in convert(pdf).pages] == [
        f"# Guide\n\n### Background\n\n{BODY}",
        f"## Installation\n\n{BODY}",
    ]


def test_outline_depth_one_below_a_title_outside_the_outline_is_level_two(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "Tenancy Agreement", 28, "B"),
                *lines(72, 670, ["Parties"]),
                *lines(72, 640, [BODY]),
                *lines(72, 600, ["Rent"]),
                *lines(72, 570, [BODY]),
            ]
        ],
    )
    add_outline(pdf, [(1, "Parties", 0), (1, "Rent", 0)])
    assert md(pdf) == f"# Tenancy Agreement\n\n## Parties\n\n{BODY}\n\n## Rent\n\n{BODY}"


def test_a_chapter_the_outline_sets_beside_others_is_no_title_when_its_page_is_selected_alone(
    tmp_path: Path,
) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [[Text(72, 720, f"Chapter {n}", 28, "B"), *lines(72, 670, [BODY])] for n in (1, 2, 3)],
    )
    add_outline(pdf, [(1, f"Chapter {n}", n - 1) for n in (1, 2, 3)])
    whole = convert(pdf).pages[0].markdown
    alone = md(pdf, pages=[1])
    assert whole == alone == f"## Chapter 1\n\n{BODY}"


@pytest.mark.parametrize(
    ("producer", "creator"), [("LibreOffice 7.4", "Writer"), ("Microsoft\u00ae Word 2016", "Microsoft\u00ae Word 2016")]
)
def test_a_heading_style_keeps_its_level_where_a_word_processor_outline_nests_it_higher(
    tmp_path: Path, producer: str, creator: str
) -> None:
    # LibreOffice's Writer nests a Heading 3 directly under a Heading 1 at outline depth 2;
    # its style says 3.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "Report", 28, "B"),
                Text(72, 680, "Section 1", 20, "B"),
                Text(72, 650, "Section 1.1", 16, "B"),
                Text(72, 620, "Section 1.1.1", 14, "B"),
                Text(72, 590, "Section 2", 20, "B"),
                Text(72, 560, "Section 2.0.1", 14, "B"),
                *lines(72, 530, [BODY]),
            ]
        ],
    )
    add_outline(
        pdf,
        [
            (1, "Section 1", 0),
            (2, "Section 1.1", 0),
            (3, "Section 1.1.1", 0),
            (1, "Section 2", 0),
            (2, "Section 2.0.1", 0),
        ],
    )
    produced_by(pdf, producer, creator)
    assert md(pdf) == (
        "# Report\n\n## Section 1\n\n### Section 1.1\n\n#### Section 1.1.1\n\n## Section 2\n\n#### Section 2.0.1\n\n"
        + BODY
    )


def test_a_table_of_contents_outline_sets_the_levels_whatever_the_sizes(tmp_path: Path) -> None:
    # A book: parts, chapters in a smaller face than their sections, sections. The outline's
    # nesting is the hierarchy, and spells the chapters' labels otherwise than the page does.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [Text(72, 700, "PIRACY", 24, "B"), *lines(72, 660, [BODY])],
            [Text(72, 700, "CHAPTER ONE: Creators", 12, "B"), *lines(72, 670, [BODY])],
            [
                Text(72, 700, "Film", 16, "B"),
                *lines(72, 670, [BODY]),
                Text(72, 630, "CHAPTER TWO: \u201cMere Copyists\u201d", 12, "B"),
                *lines(72, 600, [BODY]),
            ],
            [Text(72, 700, "PROPERTY", 24, "B"), *lines(72, 660, [BODY])],
        ],
    )
    toc = [(1, '"PIRACY"', 0), (2, "Chapter 1: Creators", 1), (3, "Film", 2), (2, '2: "Mere Copyists"', 2)]
    add_outline(pdf, [*toc, (1, '"PROPERTY"', 3)])
    headings = [ln for p in convert(pdf).pages for ln in p.markdown.split("\n") if ln.startswith("#")]
    assert headings == [
        "## PIRACY",
        "### CHAPTER ONE: Creators",
        "#### Film",
        "### CHAPTER TWO: \u201cMere Copyists\u201d",
        "## PROPERTY",
    ]
    # The page alone: the same levels.
    assert md(pdf, pages=[3]).split("\n")[0] == "#### Film"


def _headings(pdf: Path) -> list[str]:
    return [ln for p in convert(pdf).pages for ln in p.markdown.split("\n") if ln.startswith("#")]


def test_a_single_root_outline_under_a_title_it_leaves_out_keeps_the_title_alone_at_the_top(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 740, "Annual Report 2026", 28, "B"),
                Text(72, 700, "Summary", 18, "B"),
                *lines(72, 670, [BODY]),
                Text(72, 630, "Budget", 14, "B"),
                *lines(72, 600, [BODY]),
                Text(72, 560, "Staff", 14, "B"),
                *lines(72, 530, [BODY]),
            ]
        ],
    )
    add_outline(pdf, [(1, "Summary", 0), (2, "Budget", 0), (2, "Staff", 0)])
    assert _headings(pdf) == ["# Annual Report 2026", "## Summary", "### Budget", "### Staff"]


def test_a_flat_outline_of_nested_section_numbers_leaves_the_levels_to_the_styles(tmp_path: Path) -> None:
    titles = [("1 Introduction", 18), ("1.1 Background", 14), ("2 Methods", 18), ("2.1 Data", 14)]
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                op
                for i, (t, size) in enumerate(titles)
                for op in (Text(72, 720 - 90 * i, t, size, "B"), *lines(72, 690 - 90 * i, [BODY]))
            ]
        ],
    )
    add_outline(pdf, [(1, t, 0) for t, _ in titles])
    assert _headings(pdf) == ["## 1 Introduction", "### 1.1 Background", "## 2 Methods", "### 2.1 Data"]


def test_a_chapter_title_without_its_label_does_not_take_the_place_of_its_section(tmp_path: Path) -> None:
    # "Chapter 1: Introduction" without its label is "Introduction", the key of the section
    # "1.1 Introduction" too: the section's own title names it.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "Chapter 1: Introduction", 20, "B"),
                Text(72, 680, "1.1 Introduction", 14, "B"),
                *lines(72, 650, [BODY]),
            ],
            [Text(72, 720, "Chapter 2: Methods", 20, "B"), *lines(72, 690, [BODY])],
        ],
    )
    add_outline(pdf, [(1, "Chapter 1: Introduction", 0), (2, "1.1 Introduction", 0), (1, "Chapter 2: Methods", 1)])
    assert _headings(pdf) == ["## Chapter 1: Introduction", "### 1.1 Introduction", "## Chapter 2: Methods"]


def test_an_outline_entry_is_not_found_loosely_in_body_text_or_twice(tmp_path: Path) -> None:
    # The entry's heading is on its page, and a contents line repeats it with dot leaders; a
    # body line on the page of another entry starts with that entry's words.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "CHAPTER 5 TABLE OF CONTENTS", 16, "B"),
                Text(72, 690, "Chapter 5 Table of Contents" + "." * 80 + "5-i", 11, "B"),
                *lines(72, 660, [BODY]),
            ],
            [*lines(72, 720, ["Data collection methods overview costs"]), *lines(72, 690, [BODY])],
            [Text(72, 720, "Results", 16, "B"), *lines(72, 690, [BODY])],
        ],
    )
    add_outline(
        pdf, [(1, "CHAPTER 5 TABLE OF CONTENTS", 0), (1, "Data collection methods overview", 1), (1, "Results", 2)]
    )
    assert _headings(pdf) == ["## CHAPTER 5 TABLE OF CONTENTS", "## Results"]


def test_a_word_processor_outline_is_matched_by_its_whole_titles_only(tmp_path: Path) -> None:
    # LibreOffice's Writer bookmarks a Heading paragraph with its own text: a line that names
    # an entry only without its label is no heading of the outline.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [[Text(72, 720, "Part one: Introduction", 16, "B"), *lines(72, 690, [BODY])]],
    )
    # Neither by its label-free key ("introduction"), nor by another entry's whole title.
    produced_by(add_outline(pdf, [(1, "Chapter 1: Introduction", 0), (1, "Introduction", 0)]), "LibreOffice 7.4")
    assert _headings(pdf) == []


def test_an_outline_entry_with_markup_the_page_does_not_show_matches_its_heading(tmp_path: Path) -> None:
    # A bookmark written from LaTeX source keeps "texttt": the page shows the words without
    # it. The outline nests it under "Setup", which the page sets smaller: matched, the
    # outline's levels stand (unmatched, the larger size would put it above "Setup").
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 720, "Guide", 28, "B"),
                Text(72, 680, "Setup", 13, "B"),
                *lines(72, 650, [BODY]),
                Text(72, 610, "1.1 How to compile a .tex file to a .pdf file", 16, "B"),
                *lines(72, 580, [BODY]),
            ],
            [Text(72, 720, "Appendix", 13, "B"), *lines(72, 690, [BODY])],
        ],
    )
    add_outline(
        pdf,
        [(1, "Setup", 0), (2, "How to compile a texttt {.tex} file to a texttt {.pdf} file", 0), (1, "Appendix", 1)],
    )
    assert _headings(pdf) == ["# Guide", "## Setup", "### 1.1 How to compile a .tex file to a .pdf file", "## Appendix"]


def test_an_outline_nested_against_its_section_numbers_leaves_the_levels_to_the_styles(tmp_path: Path) -> None:
    # "2" nested under "1", "2.2" under "2.1": a list of bookmarks, not a table of contents;
    # its depths would set "2 Extensions" below "1 Preface".
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(72, 740, "Supplement", 28, "B"),
                Text(72, 700, "1 Preface", 18, "B"),
                *lines(72, 670, [BODY]),
                Text(72, 630, "2 Extensions", 18, "B"),
                Text(72, 600, "2.1 Transparency", 14, "B"),
                *lines(72, 570, [BODY]),
                Text(72, 530, "2.2 Collections", 14, "B"),
                *lines(72, 500, [BODY]),
            ]
        ],
    )
    add_outline(
        pdf, [(1, "1 Preface", 0), (2, "2 Extensions", 0), (3, "2.1 Transparency", 0), (4, "2.2 Collections", 0)]
    )
    headings = [ln for ln in md(pdf).split("\n") if ln.startswith("#")]
    assert headings[:4] == ["# Supplement", "## 1 Preface", "## 2 Extensions", "### 2.1 Transparency"]


def test_a_heading_whose_number_changes_per_page_is_content_not_a_running_header(tmp_path: Path) -> None:
    pages = [
        [
            Text(72, 760, f"Heading of page {n}", 16, "B"),
            *lines(72, 700, [BODY]),
            Text(72, 40, f"Annual Report - Page {n}", 16, "B"),
        ]
        for n in (1, 2, 3)
    ]
    result = convert(make_pdf(tmp_path / "a.pdf", pages))
    assert [p.markdown for p in result.pages] == [f"## Heading of page {n}\n\n{BODY}" for n in (1, 2, 3)]


def test_journal_header_with_its_page_number_is_dropped_from_a_single_page(tmp_path: Path) -> None:
    # The text block of a journal page starts lower than a tenth of the page height.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Text(190, 690, "Optimized Tokenization for Structure Recognition", 9),
                Text(476, 690, "9", 9),
                *lines(
                    135, 665, ["order to compute the score, timing results were obtained from one machine."], size=10
                ),
                Text(135, 630, "5.1 Hyper Parameter Optimization", 10, "B"),
                *lines(135, 605, ["We have chosen the data set to perform the optimisation of the model."], size=10),
            ]
        ],
    )
    assert md(pdf) == (
        "order to compute the score, timing results were obtained from one machine.\n\n"
        "## 5.1 Hyper Parameter Optimization\n\n"
        "We have chosen the data set to perform the optimisation of the model."
    )


def test_glyphs_named_by_glyph_index_are_recovered_without_a_warning(tmp_path: Path) -> None:
    text = "Enhance the performance (by 2x) of your database!"
    pdf = make_pdf(tmp_path / "a.pdf", [[Text(72, 700, glyph_index_codes(text), 11, "X")]])
    result = convert(pdf)
    assert result.markdown == "Enhance the performance (by 2x) of your database!"
    assert result.warnings == []


def test_private_use_bullets_become_list_markers_and_other_icons_are_dropped(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Runs(72, 700, (("S", "\u00b7"), ("R", "   First point of the list"))),
                Runs(72, 686, (("S", "\u00b7"), ("R", "   Second point of the list"))),
                Runs(72, 650, (("R", "Call us "), ("S", "n"), ("R", " on weekdays."))),
            ]
        ],
    )
    assert md(pdf) == "- First point of the list\n- Second point of the list\n\nCall us on weekdays."


def test_lettered_and_roman_numbered_items_keep_their_labels(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            lines(
                72,
                700,
                [
                    "3.5 million people live in the valley, by the last count.",
                    "a) Check the seals.",
                    "b) Check the hoses.",
                    "(iv) Report any leak.",
                ],
            )
        ],
    )
    assert md(pdf) == (
        "3.5 million people live in the valley, by the last count.\n\n"
        "- a) Check the seals.\n- b) Check the hoses.\n- (iv) Report any leak."
    )


def test_a_column_of_bullets_beside_text_is_a_list_not_a_table(tmp_path: Path) -> None:
    items = ["Buy fresh bread from the bakery", "Pick up citrus and onions", "Return the library novels"]
    ops: list[Op] = []
    for i, item in enumerate(items):
        ops += [Text(72, 700 - 24 * i, "\u00b7", 12), Text(108, 700 - 24 * i, item, 12)]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == "\n".join(f"- {item}" for item in items)


def test_a_letter_o_in_a_font_of_its_own_is_a_second_level_bullet(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                Runs(90, 700, (("S", "\u00b7"), ("R", " List item 1"))),
                Runs(126, 686, (("M", "o "), ("R", "List item 1.1"))),
                Runs(126, 672, (("M", "o "), ("R", "List item 1.2"))),
                Runs(90, 658, (("S", "\u00b7"), ("R", " List item 2"))),
            ]
        ],
    )
    assert md(pdf) == "- List item 1\n  - List item 1.1\n  - List item 1.2\n- List item 2"


def test_a_paragraph_below_a_short_item_title_is_not_part_of_the_item(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            lines(
                72,
                700,
                [
                    "1. ORCHARD NOTES",
                    "The gravel path bent around a quiet pond where ducks drifted in slow circles.",
                    "2. ERRANDS",
                ],
            )
        ],
    )
    assert md(pdf) == (
        "1. ORCHARD NOTES\n\nThe gravel path bent around a quiet pond where ducks drifted in slow circles.\n\n2. ERRANDS"
    )


def test_a_number_before_a_tab_stop_numbers_an_item_and_outline_numbers_nest(tmp_path: Path) -> None:
    rows = [("1", "First section"), ("1.1", "Sub one"), ("1.2", "Sub two"), ("2", "Second section")]
    ops: list[Op] = []
    for i, (number, text) in enumerate(rows):
        ops += [Text(90, 700 - 24 * i, number, 11), Text(126, 700 - 24 * i, text, 11)]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "1. First section\n   - 1.1 Sub one\n   - 1.2 Sub two\n2. Second section"
    )


def test_letter_spaced_text_keeps_its_words_where_the_line_draws_its_spaces(tmp_path: Path) -> None:
    # Letter spacing (Tc) leaves a gap between every two letters, wider than layout's word
    # margin; the line's words are parted by the spaces it draws, which are wider still.
    ops: list[Op] = [
        Raw(b"BT /FB 14 Tf 2.1 Tc 72 720 Td (VALUE TYPE) Tj 0 Tc ET"),
        *lines(
            72,
            690,
            ["A paragraph of body text set under the heading, long enough to be", "prose of the page."],
            size=10,
        ),
        Raw(b"BT /FR 10 Tf 1.5 Tc 72 640 Td (Spaced words, and more.) Tj 0 Tc ET"),
        # Words parted by position alone (no space drawn between them), then one wide drawn
        # space: as TeX sets a line. Not letter-spaced: its words stay apart.
        Raw(b"BT /FR 10 Tf 72 610 Td [(it) -333 (can) -333 (occur) -333 (in) -333 (limbo)] TJ (   ) Tj (now) Tj ET"),
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", [ops])).markdown
    assert "VALUE TYPE" in out
    assert "Spaced words, and more." in out
    assert "it can occur in limbo now" in out


def test_space_drawn_where_the_pen_does_not_move_parts_no_words(tmp_path: Path) -> None:
    # A browser prints a soft hyphen where it does not break the line as a space glyph of no
    # advance: the next letter starts where the space does. A real space advances the pen.
    ops: list[Op] = [
        Raw(b"BT /FR 10 Tf 72 700 Td [(A con) ( ) 278 (fig) ( ) 278 (u) ( ) 278 (ra) ( ) 278 (tion file.)] TJ ET"),
        *lines(72, 680, ["A paragraph of body text under it, long enough to be the prose", "of the page."], size=10),
    ]
    # A space the next glyph's box reaches back over by two thirds of its width (a shaper's
    # advance narrower than the font's, an italic's overhang) still advances the pen.
    ops.append(Raw(b"BT /FR 10 Tf 72 640 Td [(an event) ( ) 190 (handler)] TJ ET"))
    out = convert(make_pdf(tmp_path / "a.pdf", [ops])).markdown
    assert "A configuration file." in out
    assert "an event handler" in out


def test_heading_of_two_rows_whose_justified_words_layout_cut_apart_is_one_heading(tmp_path: Path) -> None:
    # A justified heading's first row: its spaces stretched wider than two letters, layout
    # cuts it into pieces; they are one row of the heading, not rows of their own.
    body = ["Body text of the section set in a smaller size than the heading", "above it, in lines of"]
    body += ["prose that run on for a while, as paragraphs do in a document."]
    ops: list[Op] = [
        *lines(72, 740, body, size=10),
        *(
            Text(x, 700, word, 14, "B")
            for x, word in ((72, "Reference "), (200, "Behaviour "), (330, "Keyword "), (450, "Object"))
        ),
        Text(72, 683, "Interpreter", 14, "B"),
        *lines(72, 660, body, size=10),
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", [ops])).markdown
    assert "# Reference Behaviour Keyword Object Interpreter\n" in out


def test_line_whose_spaces_take_no_room_keeps_its_words_where_it_is_cut_in_parts(tmp_path: Path) -> None:
    # The line is cut where its visible text meets text drawn invisibly on its baseline; the
    # cut is made in the line as drawn, before its spaces of no advance are left out.
    ops: list[Op] = [
        Raw(b"BT /FR 10 Tf 72 700 Td [(A con) ( ) 278 (fig) ( ) 278 (u) ( ) 278 (ra) ( ) 278 (tion file.)] TJ ET"),
        Raw(b"BT 3 Tr /FR 10 Tf 150 700 Td (hidden words here) Tj 0 Tr ET"),
        *lines(72, 680, ["A paragraph of body text under it, long enough to be the prose", "of the page."], size=10),
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", [ops])).markdown
    assert "A configuration file." in out


def test_words_set_apart_by_position_after_a_label_and_tab_are_no_letter_spacing(tmp_path: Path) -> None:
    # The line draws one space, the label's before a tab stop; its letters stand 1.7 pt
    # apart and its words 5 pt: only the narrower gaps, one width along the line, are
    # letter spacing.
    shown = b"[(4.2 ) -900 (S) -170 (U) -170 (M) -170 (M) -170 (A) -170 (R) -170 (Y) -500 (O) -170 (F) -500 (R)"
    shown += b" -170 (E) -170 (S) -170 (U) -170 (L) -170 (T) -170 (S)] TJ"
    ops: list[Op] = [
        Raw(b"BT /FB 12 Tf 72 700 Td " + shown + b" ET"),
        *lines(
            72, 650, ["A paragraph of body text under the heading, long enough to be", "prose of the page."], size=10
        ),
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", [ops])).markdown
    assert "4.2 SUMMARY OF RESULTS" in out
