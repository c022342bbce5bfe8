"""What is a heading: heading styles read off the whole document, and the lines that look
like headings but are not (captions, labels of a diagram, taglines, a table's title)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pdfminer.fontmetrics import FONT_METRICS

from conversion.engine import ENGINE_ID, PDFIUM_ENGINE_ID, ConvertOptions, convert

from .pdfs import Op, Raw, Rule, Text, add_outline, lines, make_pdf, produced_by

PROSE = [
    "The committee met on a Tuesday to review the plans that the staff",
    "had drawn up over the winter, and it found most of them sound and",
    "ready to be carried out before the end of the coming summer season.",
]


def md(path: Path) -> str:
    return convert(path).markdown


def _page(*parts: list[Op]) -> list[Op]:
    return [op for part in parts for op in part]


def test_slightly_larger_lines_standing_alone_are_a_heading_style(tmp_path: Path) -> None:
    # 10.8 pt over a 10 pt body is below the usual heading ratio, but the lines stand alone
    # above paragraphs: a heading style, and the first section level.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 720, "Scope of the review", 10.8)],
                lines(72, 700, PROSE, size=10, leading=12),
                [Text(72, 640, "Findings of the committee", 10.8)],
                lines(72, 620, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("## Scope of the review\n\nThe committee met")
    assert "\n\n## Findings of the committee\n\nThe committee met" in out


def test_slightly_larger_lead_paragraph_is_prose_not_a_heading(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                lines(72, 720, PROSE, size=10.8, leading=13),
                lines(72, 660, PROSE, size=10, leading=12),
                lines(72, 600, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert "#" not in out
    assert out.startswith("The committee met on a Tuesday")


def test_body_size_is_read_from_lines_long_in_ems_not_only_in_characters(tmp_path: Path) -> None:
    # Capitals run wide: these prose lines hold fewer than 30 characters each (as a column
    # of Korean or Chinese does), yet they are the body. The short notes in 8 pt with more
    # characters per line must not be taken for it, or every prose line becomes a heading.
    caps = ["WHEREAS THE PARTIES AGREE", "THAT THE WORKS SHALL BEGIN", "ON THE FIRST DAY OF MAY"]
    notes = ["1) a note in small print that runs on for a good many characters in all"]
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                lines(72, 720, caps, size=12, leading=15),
                lines(72, 660, caps, size=12, leading=15),
                lines(72, 100, notes * 4, size=8, leading=10),
            )
        ],
    )
    out = md(pdf)
    assert "#" not in out
    assert out.startswith("WHEREAS THE PARTIES AGREE THAT THE WORKS SHALL BEGIN ON THE FIRST DAY OF MAY")


def test_numbered_line_in_a_heading_style_is_a_heading_not_a_list_item(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 720, "(1) Scope of the review", 10.8)],
                lines(72, 700, PROSE, size=10, leading=12),
                [Text(72, 640, "(2) Findings", 10.8)],
                lines(72, 620, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("## (1) Scope of the review\n\n")
    assert "\n\n## (2) Findings\n\n" in out
    assert "- (1)" not in out


def test_captions_are_never_headings(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 720, "Figure 3-1 The review process", 11, "B")],
                lines(72, 700, PROSE, size=11),
                [Text(72, 640, "Table 2: Costs by year", 16, "B")],
                lines(72, 620, PROSE, size=11),
                [Text(72, 560, "Costs by year", 16, "B")],
                lines(72, 540, PROSE, size=11),
            )
        ],
    )
    out = md(pdf)
    assert "**Figure 3-1 The review process**\n\nThe committee" in out
    assert "\n\n**Table 2: Costs by year**\n\nThe committee" in out
    # The same line without its label is a heading: the label is what makes it a caption.
    assert "\n\n## Costs by year\n\nThe committee" in out


def test_labels_of_a_diagram_above_small_print_are_not_headings(tmp_path: Path) -> None:
    labels: list[Op] = []
    for i, (term, note) in enumerate([("CREATE", "names the rule"), ("ON", "the table"), ("AS", "an alias")]):
        labels.append(Text(90, 600 - 40 * i, term, 13))
        labels.append(Text(90, 585 - 40 * i, note, 8))
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 720, "Permissions", 16, "B")],
                lines(72, 690, PROSE, size=11),
                labels,
                lines(72, 400, PROSE, size=11),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("## Permissions\n\nThe committee met")
    for term in ("CREATE", "ON", "AS"):
        assert f"#{term}" not in out.replace(" ", "")
        assert f"\n\n{term}\n\n" in out


def test_line_above_a_larger_heading_is_not_a_heading(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 740, "Front cover", 16, "B")],
                [Text(72, 700, "\u00ae", 11)],
                [Text(72, 660, "Access Control in Practice", 28, "B")],
                lines(72, 620, PROSE, size=11),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("**Front cover**\n\n")
    assert "# Access Control in Practice\n\nThe committee met" in out


def test_part_title_nearly_as_large_as_the_chapter_title_below_it_is_a_heading(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 720, "Part One", 22, "B")],
                [Text(72, 680, "The Early Years", 26, "B")],
                lines(72, 640, PROSE, size=11),
            )
        ],
    )
    assert md(pdf).startswith("### Part One\n\n## The Early Years\n\nThe committee met")


def test_taglines_set_one_after_another_are_not_headings(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 740, "Implement roles", 14, "B")],
                [Text(72, 700, "Leverage row permissions", 14, "B")],
                [Text(72, 660, "Protect columns", 14, "B")],
                lines(72, 620, PROSE, size=11),
                [Text(72, 560, "Summary", 14, "B")],
                lines(72, 540, PROSE, size=11),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("**Implement roles**\n\n**Leverage row permissions**\n\n**Protect columns**\n\n")
    assert "\n\n## Summary\n\nThe committee met" in out


def test_bold_line_right_above_a_table_is_its_title_not_a_heading(tmp_path: Path) -> None:
    xs, ys = [72, 200, 330], [660, 640, 620]
    grid: list[Op] = [Rule(xs[0], y, xs[-1], y) for y in ys]
    grid += [Rule(x, ys[-1], x, ys[0]) for x in xs]
    for r, row in enumerate([["Year", "Ducks"], ["2019", "120"]]):
        for c, text in enumerate(row):
            grid.append(Text(xs[c] + 4, ys[r] - 14, text, 10))
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                lines(72, 720, PROSE[:2], size=10, leading=12),
                [Text(72, 675, "Ducks per year", 10, "B")],
                grid,
                [Text(72, 560, "Method", 10, "B")],
                lines(72, 540, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert "\n\n**Ducks per year**\n\n| Year | Ducks |" in out
    assert "\n\n## Method\n\nThe committee met" in out


def test_small_label_on_the_baseline_of_a_heading_is_not_part_of_it(tmp_path: Path) -> None:
    # "Chapter 1." printed small a wide gap before the chapter's title, on its baseline:
    # layout joins the two (the gap is narrow next to the large glyphs), but the heading is
    # the title alone.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [Text(72, 700, "Chapter 1.", 7, "B"), Text(125, 700, "Securing the data", 26, "B")],
                lines(72, 650, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert "# Securing the data\n\nThe committee met" in out
    assert "Chapter 1." in out.split("Securing")[0]
    assert "# Chapter" not in out


def _centred(y: float, text: str, size: float) -> Text:
    # Helvetica's widths, so that the line is centred on the page as a word processor sets it.
    widths = FONT_METRICS["Helvetica"][1]
    width = sum(widths.get(ch, 500) for ch in text) * size / 1000
    return Text((612 - width) / 2, y, text, size)


def test_lines_centred_under_the_title_are_its_front_matter_not_sections(tmp_path: Path) -> None:
    # A Word document's Title, then its Subtitle and Author styles centred under it: part of
    # the title, plain paragraphs; the sections start at the margin with their own style.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [
                    _centred(720, "Annual Review", 28),
                    _centred(690, "Plans for the coming year", 14),
                    _centred(670, "A. Smith", 12),
                    Text(72, 640, "Introduction", 16),
                ],
                lines(72, 620, PROSE, size=10, leading=12),
                [Text(72, 570, "Methods", 16)],
                lines(72, 550, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("# Annual Review\n\nPlans for the coming year\n\nA. Smith\n\n## Introduction\n\n")
    assert "\n\n## Methods\n\nThe committee met" in out


def test_a_centred_section_heading_after_body_text_stays_a_heading(tmp_path: Path) -> None:
    # Only what comes right after the title belongs to it: a centred heading below the
    # first paragraph heads a section.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [_centred(720, "Annual Review", 28)],
                lines(72, 690, PROSE, size=10, leading=12),
                [_centred(640, "Plans for the year", 14)],
                lines(72, 620, PROSE, size=10, leading=12),
                [_centred(570, "Budget", 14)],
                lines(72, 550, PROSE, size=10, leading=12),
            )
        ],
    )
    out = md(pdf)
    assert out.startswith("# Annual Review\n\nThe committee met")
    assert "\n\n## Plans for the year\n\nThe committee met" in out
    assert "\n\n## Budget\n\nThe committee met" in out


def _word_page() -> list[Op]:
    # A title, a bold term over its definition, a section heading and a larger lead-in.
    return _page(
        [_centred(720, "Annual Review", 28), Text(72, 680, "Budget lines", 10, "B")],
        lines(72, 664, PROSE, size=10, leading=12),
        [Text(72, 610, "Findings", 16)],
        lines(72, 590, PROSE, size=10, leading=12),
        [Text(72, 540, "Next steps", 13)],
        lines(72, 520, PROSE, size=10, leading=12),
    )


def test_a_libreoffice_outline_lists_the_headings(tmp_path: Path) -> None:
    # LibreOffice exports its Heading paragraphs as the outline: a bold term and a line in a
    # style the outline leaves out are paragraphs; the title (no outline level) stays `#`.
    pdf = make_pdf(tmp_path / "a.pdf", [_word_page()])
    produced_by(add_outline(pdf, [(1, "Findings", 0)]), "LibreOffice 7.4")
    out = md(pdf)
    assert out.startswith("# Annual Review\n\n**Budget lines**\n\nThe committee met")
    assert "\n\n## Findings\n\nThe committee met" in out
    assert "\n\nNext steps\n\nThe committee met" in out


def test_a_libreoffice_export_without_outline_has_no_section_headings(tmp_path: Path) -> None:
    pdf = produced_by(make_pdf(tmp_path / "a.pdf", [_word_page()]), "LibreOffice 7.4")
    out = md(pdf)
    assert out.startswith("# Annual Review\n\n")
    assert out.count("#") == 1
    assert "\n\nFindings\n\nThe committee met" in out


def test_a_libreoffice_presentation_outline_names_slides_not_headings(tmp_path: Path) -> None:
    # LibreOffice's Impress writes one bookmark per slide, named "Slide 1" unless renamed, and
    # Calc one per sheet: only its word processor (Creator "Writer") outlines the headings.
    pdf = make_pdf(tmp_path / "a.pdf", [_word_page()])
    produced_by(add_outline(pdf, [(1, "Slide 1", 0)]), "LibreOffice 7.4", "Impress")
    out = md(pdf)
    assert "\n\n## Findings\n\n" in out
    assert "\n\n### Next steps\n\n" in out


def test_other_producers_keep_headings_their_outline_leaves_out(tmp_path: Path) -> None:
    # An outline of another producer may list the chapters only: styles still tell headings.
    pdf = make_pdf(tmp_path / "a.pdf", [_word_page()])
    produced_by(add_outline(pdf, [(1, "Findings", 0)]), "Acrobat Distiller 10.0")
    out = md(pdf)
    assert "\n\n## Findings\n\n" in out
    assert "\n\n### Next steps\n\n" in out


def _colored(y: float, text: str, size: float, font: str, rgb: tuple[int, int, int]) -> Raw:
    """A line set in `font` at `size` and filled in the colour `rgb` (0-255 each)."""
    r, g, b = (v / 255 for v in rgb)
    return Raw(
        b"BT %.5f %.5f %.5f rg /F%s %g Tf 72 %g Td (%s) Tj ET 0 g" % (r, g, b, font.encode(), size, y, text.encode())
    )


def _word(path: Path) -> Path:
    """The PDF as Word itself saves it (no bookmarks asked for)."""
    word = "Microsoft\u00ae Word for Microsoft 365"
    return produced_by(path, word, word)


# Word 2007-2010's Heading 2 and 3 (13 and 11 pt bold, accent 1 #4F81BD); Word 2016-2022's
# Heading 2 and 3 (13 pt #2F5496, 12 pt #1F3763).
_WORD_2007_H2 = (13, "B", (0x4F, 0x81, 0xBD))
_WORD_2007_H3 = (11, "B", (0x4F, 0x81, 0xBD))
_WORD_2016_H2 = (13, "R", (0x2F, 0x54, 0x96))
_WORD_2016_H3 = (12, "R", (0x1F, 0x37, 0x63))


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
@pytest.mark.parametrize("body", [11, 12])
def test_a_heading_set_in_words_heading_2_style_is_a_second_level_section(
    tmp_path: Path, engine: str, body: float
) -> None:
    # A Word document whose sections are Heading 2 (no Heading 1 above them): one heading
    # style, which ranking would make the first section level.
    size, font, rgb = _WORD_2007_H2
    pdf = _word(
        make_pdf(
            tmp_path / "a.pdf",
            [
                _page(
                    [_colored(720, "Some block quotes", size, font, rgb)],
                    lines(72, 696, PROSE, size=body, leading=body + 3),
                    [_colored(630, "And back to normal", size, font, rgb)],
                    lines(72, 606, PROSE, size=body, leading=body + 3),
                )
            ],
        )
    )

    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown

    assert [ln for ln in out.splitlines() if ln.startswith("#")] == ["### Some block quotes", "### And back to normal"]


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_the_same_heading_set_in_black_is_the_first_section_level(tmp_path: Path, engine: str) -> None:
    size, font, _ = _WORD_2007_H2
    pdf = _word(
        make_pdf(
            tmp_path / "a.pdf",
            [
                _page(
                    [_colored(720, "Some block quotes", size, font, (0, 0, 0))],
                    lines(72, 696, PROSE, size=11, leading=14),
                    [_colored(630, "And back to normal", size, font, (0, 0, 0))],
                    lines(72, 606, PROSE, size=11, leading=14),
                )
            ],
        )
    )

    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown

    assert [ln for ln in out.splitlines() if ln.startswith("#")] == ["## Some block quotes", "## And back to normal"]


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_words_heading_2_and_3_styles_keep_their_levels(tmp_path: Path, engine: str) -> None:
    # Heading 2 and Heading 3 of Word 2016 with no Heading 1: both move down together.
    pages = [
        _page(
            [_colored(716, f"Setting up {n}", *_WORD_2016_H2)],
            lines(72, 694, PROSE, size=11, leading=14),
            [_colored(640, f"Checking {n}", *_WORD_2016_H3)],
            lines(72, 618, PROSE, size=11, leading=14),
        )
        for n in ("one", "two")
    ]
    out = convert(_word(make_pdf(tmp_path / "a.pdf", pages)), options=ConvertOptions(engine=engine)).markdown

    assert [ln for ln in out.splitlines() if ln.startswith("#")] == [
        "### Setting up one",
        "#### Checking one",
        "### Setting up two",
        "#### Checking two",
    ]


def test_a_heading_the_outline_names_set_in_words_heading_2_style_takes_that_level(tmp_path: Path) -> None:
    # LibreOffice writes the Heading 2 paragraph as a bookmark at depth 1: the outline names the
    # heading (13 pt over a 12 pt body is no size of its own), its style says Heading 2.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [_colored(720, "A table, with and without a header row", *_WORD_2007_H2)],
                lines(72, 696, PROSE, size=12, leading=15),
            )
        ],
    )
    produced_by(add_outline(pdf, [(1, "A table, with and without a header row", 0)]), "LibreOffice 7.4")

    assert md(pdf).startswith("### A table, with and without a header row\n\n")


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_words_styles_say_nothing_in_a_pdf_no_word_processor_wrote(tmp_path: Path, engine: str) -> None:
    # The Office accent colour is common outside Word (a LaTeX class, a slide deck's export).
    size, font, rgb = _WORD_2007_H2
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            _page(
                [_colored(720, "Introduction", size, font, rgb)],
                lines(72, 696, PROSE, size=11, leading=14),
                [_colored(630, "Background", size, font, rgb)],
                lines(72, 606, PROSE, size=11, leading=14),
            )
        ],
    )
    produced_by(pdf, "pdfTeX-1.40.25", "LaTeX with hyperref")

    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown

    assert [ln for ln in out.splitlines() if ln.startswith("#")] == ["## Introduction", "## Background"]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        # Word 2007's Heading 3 is set at the body's 11 pt, bold: the bold-line rule finds it,
        # its style gives its level, with no other heading in the document.
        (None, _WORD_2007_H3, ["#### Sampling the sites"]),
        # A hand-made heading (bold, black, at the body size) under Heading 2 sections stays a
        # level below them.
        (_WORD_2007_H2, (11, "B", (0, 0, 0)), ["### Methods", "#### Sampling the sites"]),
    ],
    ids=["heading-3-alone", "bold-under-heading-2"],
)
def test_a_bold_line_at_the_body_size_takes_its_level_from_words_styles(
    tmp_path: Path, first: tuple[float, str, tuple[int, int, int]] | None, second: Any, expected: list[str]
) -> None:
    top = [_colored(720, "Methods", *first)] if first else [Text(72, 720, "Methods", 11)]
    pdf = _word(
        make_pdf(
            tmp_path / "a.pdf",
            [
                _page(
                    top,
                    lines(72, 696, PROSE, size=11, leading=14),
                    [_colored(640, "Sampling the sites", *second)],
                    lines(72, 618, PROSE, size=11, leading=14),
                )
            ],
        )
    )

    assert [ln for ln in md(pdf).splitlines() if ln.startswith("#")] == expected


def test_fill_colours_read_as_pdfium_reads_them() -> None:
    from conversion.engine.layout import fill_rgb

    # Each component scaled to 0-255 and rounded half up, as PDFium's fill colour is.
    assert fill_rgb(0.3) == 0x4D4D4D
    assert fill_rgb((0.3, 0.5, 0.7)) == 0x4D80B3
    assert fill_rgb((79 / 255, 129 / 255, 189 / 255)) == 0x4F81BD
    # One component is no gray in an indexed or separation space; CMYK is no RGB.
    assert fill_rgb(0.5, "Separation") == fill_rgb(1, "Indexed") == -1
    assert fill_rgb((0.0, 0.0, 0.0, 1.0)) == -1
    assert fill_rgb(("x", 0, 0)) == -1
