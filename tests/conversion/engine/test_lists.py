"""List items whose markers are drawn (browsers' bullets, checkboxes) or are checkbox glyphs."""

from __future__ import annotations

from pathlib import Path

import pikepdf

from conversion.engine import convert
from conversion.engine.inline import ListFrame

from .pdfs import HEBREW, HEBREW_MONO, Box, Image, Op, Raw, Runs, Text, add_outline, lines, make_pdf
from .spans import span_faults

# A circle drawn with four Bezier curves (kappa: the control points of a quarter circle).
_KAPPA = 0.5523


def disc(cx: float, cy: float, r: float, *, filled: bool = True) -> Raw:
    """A circle of radius r, filled (a browser's first-level bullet) or stroked (its second)."""
    k = _KAPPA * r
    path = b"%g %g m %g %g %g %g %g %g c %g %g %g %g %g %g c %g %g %g %g %g %g c %g %g %g %g %g %g c h" % (
        *(cx + r, cy),
        *(cx + r, cy + k, cx + k, cy + r, cx, cy + r),
        *(cx - k, cy + r, cx - r, cy + k, cx - r, cy),
        *(cx - r, cy - k, cx - k, cy - r, cx, cy - r),
        *(cx + k, cy - r, cx + r, cy - k, cx + r, cy),
    )
    return Raw(b"q 0 g 0 G 0.7 w " + path + (b" f Q" if filled else b" S Q"))


def square(x: float, y: float, side: float) -> Raw:
    """A filled square (a browser's third-level bullet)."""
    return Raw(b"q 0 g %g %g %g %g re f Q" % (x, y, side, side))


def md(path: Path) -> str:
    return convert(path).markdown


def test_bullets_drawn_as_discs_circles_and_squares_become_a_nested_list(tmp_path: Path) -> None:
    # As Chromium prints <ul>: a disc 0.75 em before the text, a circle one level down, a
    # square below that, each level 30 points further in; continuation lines under the text.
    ops: list[Op] = [
        Text(72, 720, "The plan has three parts:"),
        disc(84, 704, 1.8),
        Text(93, 700, "Gather the wood from the shed behind the barn before the rain comes,"),
        Text(93, 686, "and stack it by the door."),
        disc(114, 676, 1.8, filled=False),
        Text(123, 672, "Oak burns longest."),
        square(142, 656, 3.6),
        Text(153, 658, "Split it small."),
        disc(84, 648, 1.8),
        Text(93, 644, "Light the fire."),
        Text(72, 616, "That is all."),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "The plan has three parts:\n\n"
        "- Gather the wood from the shed behind the barn before the rain comes, and stack it by the door.\n"
        "  - Oak burns longest.\n"
        "    - Split it small.\n"
        "- Light the fire.\n\n"
        "That is all."
    )


def test_a_small_picture_before_each_line_is_a_bullet(tmp_path: Path) -> None:
    ops: list[Op] = [
        Image(72, 699, 78, 705),
        Text(90, 700, "First point of the list"),
        Image(72, 685, 78, 691),
        Text(90, 686, "Second point of the list"),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == "- First point of the list\n- Second point of the list"


def test_a_shape_between_words_or_far_from_the_text_is_no_bullet(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 700, "Home"),
        disc(104, 704, 1.5),
        Text(110, 700, "Products and services for everyone"),
        # A dot far out in the margin, level with a line.
        disc(20, 690, 1.8),
        Text(72, 686, "A plain sentence of the page."),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "- " not in out
    assert "A plain sentence of the page." in out


def test_right_to_left_items_have_their_bullets_at_the_right(tmp_path: Path) -> None:
    # Hebrew written in visual order, as producers write it; the disc after the line's end.
    first, second = "\u05d0\u05d1\u05d2 \u05d3\u05d4\u05d5", "\u05d6\u05d7\u05d8 \u05d9\u05db\u05dc"
    ops: list[Op] = [
        Text(400, 700, first[::-1], font=HEBREW),
        disc(445, 704, 1.8),
        Text(400, 686, second[::-1], font=HEBREW),
        disc(445, 690, 1.8),
        # A line of Latin text in the same list: its marker is at the right too.
        Text(350, 672, "optional: a callback"),
        disc(445, 676, 1.8),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == f"- {first}\n- {second}\n- optional: a callback"


def test_checkbox_glyphs_become_task_items(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "Which fruit do you like?"),
        Runs(72, 700, (("S", "o"), ("R", " Apples"))),
        Runs(72, 686, (("S", "x"), ("R", " Pears"))),
        Runs(72, 672, (("S", "\u00fe"), ("R", " Plums"))),
        Runs(90, 658, (("S", "\u00b7"), ("R", " Damsons too"))),
    ]
    # A list under a task item lines up with the item's text after "- ".
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "Which fruit do you like?\n\n- [ ] Apples\n- [x] Pears\n- [x] Plums\n  - Damsons too"
    )


def test_drawn_checkboxes_become_task_items_checked_when_marked_inside(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "Which fruit do you like?"),
        Box(72, 699, 80, 707),
        Text(88, 700, "Apples"),
        Box(72, 685, 80, 693),
        Raw(b"q 1 w 73.5 689 m 75.5 687 l 78.5 691.5 l S Q"),  # a tick inside the box
        Text(88, 686, "Pears"),
        disc(76, 668, 1.8),
        Text(88, 664, "A bullet below"),
        Box(102, 657, 110, 665),
        Text(118, 658, "Nested option"),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "Which fruit do you like?\n\n- [ ] Apples\n- [x] Pears\n- A bullet below\n  - [ ] Nested option"
    )


def test_a_swatch_filled_to_its_outline_is_a_filled_bullet_not_a_checked_box(tmp_path: Path) -> None:
    # A chart's legend draws each key as a fill and an outline of the same square; a tick
    # or a dot inside a box is smaller than the box.
    ops: list[Op] = [
        Text(72, 720, "Share of the work done by each tier, per benchmark."),
        square(72.4, 699.4, 7.2),
        Box(72, 699, 80, 707),
        Text(88, 700, "Native code"),
        Box(72, 685, 80, 693),
        Raw(b"q 1 w 73.5 689 m 75.5 687 l 78.5 691.5 l S Q"),  # a tick inside the box
        Text(88, 686, "Checked by hand"),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "Share of the work done by each tier, per benchmark.\n\n- Native code\n- [x] Checked by hand"
    )


def test_a_row_of_options_gives_an_item_per_option(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "Do you own a bicycle?"),
        # Glyph checkboxes on one line, and drawn ones (a radio button checked by a dot).
        Runs(72, 700, (("S", "o"), ("R", " Yes   "), ("S", "x"), ("R", " No   "), ("S", "o"), ("R", " Not yet"))),
        Box(72, 685, 80, 693),
        Text(88, 686, "Daily"),
        disc(136, 689, 4, filled=False),
        disc(136, 689, 1.8),
        Text(146, 686, "Weekly"),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "Do you own a bicycle?\n\n- [ ] Yes\n- [x] No\n- [ ] Not yet\n- [ ] Daily\n- [x] Weekly"
    )


def test_an_item_wrapped_onto_a_line_of_inline_code_keeps_it(tmp_path: Path) -> None:
    # The second line is mostly code, set smaller in a monospaced font: the first line ran
    # to the column's edge, so the item goes on.
    ops: list[Op] = [
        disc(76, 704, 1.8),
        Text(84, 700, "Declare the counter once, so that every thread of the program can write"),
        Runs(84, 686, (("M", "static COUNTER: AtomicUsize"), ("R", " and read it.")), size=9),
        disc(76, 676, 1.8),
        Text(84, 672, "Start the threads."),
        Text(72, 640, "A paragraph of prose that runs on for a while to set the column's right edge."),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "- Declare the counter once, so that every thread of the program can write "
        "`static COUNTER: AtomicUsize` and read it.\n"
        "- Start the threads.\n\n"
        "A paragraph of prose that runs on for a while to set the column's right edge."
    )


def test_bullets_open_items_where_code_outnumbers_the_prose(tmp_path: Path) -> None:
    # Most glyphs are code in a smaller font: the prose's size then looks like a heading's.
    code = [f"let value_{i} = compute_the_next_value(value_{i - 1}, &table);" for i in range(1, 25)]
    ops: list[Op] = [
        Runs(72, 720, (("S", "\u00b7"), ("R", " Start Date: 2015-10-04"))),
        Runs(72, 706, (("S", "\u00b7"), ("R", " Tracking issue: none yet"))),
        Text(72, 680, "The change is small; the code below shows it."),
        *(Text(72, 660 - 11 * i, line, 9, "M") for i, line in enumerate(code)),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert out.startswith("- Start Date: 2015-10-04\n- Tracking issue: none yet\n\n")


def test_an_item_opened_by_inline_code_goes_on_in_prose(tmp_path: Path) -> None:
    # The first line is mostly code in a smaller monospaced font, and stops well short of
    # the column's edge; the prose under the item's text goes on with it.
    ops: list[Op] = [
        Text(72, 720, "A paragraph of prose that runs on for a while to set the column's right edge."),
        disc(76, 704, 1.8),
        Runs(84, 700, (("M", "dynamic-linking-available"), ("R", ": whether the")), size=9),
        Text(84, 686, "dylib crate type is allowed."),
        disc(76, 676, 1.8),
        Text(84, 672, "Another item."),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])).endswith(
        "- `dynamic-linking-available`: whether the dylib crate type is allowed.\n- Another item."
    )


def test_a_code_block_under_an_item_stays_a_code_block(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "A paragraph of prose that runs on for a while to set the column's right edge."),
        Text(72, 700, "1. Deploy the previous version with the deployment tool:"),
        Text(86, 686, "deploy --service orders --version 4.18.2", 9, "M"),
        Text(86, 675, "deploy --service billing --version 2.0.1", 9, "M"),
        Text(72, 656, "2. Wait until every instance reports healthy."),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    # Under the item's text, the block is the item's: its fence indented to that text.
    assert out.endswith(
        "1. Deploy the previous version with the deployment tool:\n\n"
        "   ```\n   deploy --service orders --version 4.18.2\n   deploy --service billing --version 2.0.1\n   ```\n\n"
        "2. Wait until every instance reports healthy."
    )


def test_a_code_block_at_the_lists_margin_after_an_item_is_no_block_of_the_item(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "A paragraph of prose that runs on for a while to set the column's right edge."),
        Text(72, 700, "1. Deploy the previous version with the deployment tool."),
        Text(72, 686, "deploy --service orders --version 4.18.2", 9, "M"),
        Text(72, 675, "deploy --service billing --version 2.0.1", 9, "M"),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert out.endswith("```\ndeploy --service orders --version 4.18.2\ndeploy --service billing --version 2.0.1\n```")


def test_arrowheads_of_a_diagram_are_no_bullets(tmp_path: Path) -> None:
    # Filled triangles and short stroked edges before small labels, as diagrams draw them.
    ops: list[Op] = [
        Text(72, 720, "The trace tree of the loop:"),
        Raw(b"q 0 g 120 700 m 123.7 701.2 l 120 702.5 l h f Q"),
        Text(130, 699, "hot", 5),
        Raw(b"q 0.5 w 120 690 m 122.5 690 l S Q"),
        Text(130, 689, "t2", 5),
    ]
    assert "- " not in md(make_pdf(tmp_path / "a.pdf", [ops]))


def test_checkboxes_in_stacked_field_frames_are_a_task_list_not_a_table(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "Nationality:"),
        # Each option in the frame of its form field, the frames stacked edge to edge.
        Box(70, 696, 240, 712),
        Box(72, 699, 83, 710),
        Text(90, 700, "Agree to privacy policy"),
        Box(70, 680, 150, 696),
        Box(72, 683, 83, 694),
        Text(90, 684, "Other"),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == "Nationality:\n\n- [ ] Agree to privacy policy\n- [ ] Other"


def test_a_checkbox_after_a_label_glyph_is_a_task_item(tmp_path: Path) -> None:
    ops: list[Op] = [
        Runs(72, 700, (("S", "\u00b7"), ("R", " "), ("S", "o"), ("R", " I live with the insured person."))),
        Runs(72, 686, (("S", "\u00b7"), ("R", " "), ("S", "x"), ("R", " I am a member of the family."))),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "- [ ] I live with the insured person.\n- [x] I am a member of the family."
    )


def test_an_item_whose_sentence_runs_on_into_a_line_of_code_keeps_it(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 720, "A paragraph of prose that runs on for a while to set the column's right edge."),
        Text(72, 700, "4. If the registry gave you a subject, run"),
        Text(86, 686, 'cargo login --key-subject="the data"', 9, "M"),
        Text(72, 666, "That is all."),
    ]
    assert '4. If the registry gave you a subject, run `cargo login --key-subject="the data"`' in md(
        make_pdf(tmp_path / "a.pdf", [ops])
    )


def test_a_paragraph_under_an_items_text_is_a_paragraph_of_the_item(tmp_path: Path) -> None:
    ops: list[Op] = [
        Text(72, 730, "The drawbacks:"),
        Text(72, 706, "1. It exposes the layout at compile time, which"),
        Text(86, 692, "is otherwise known at run time only."),
        Text(86, 668, "That said, the layout is known anyway to"),
        Text(86, 654, "anyone who reads the source."),
        Text(72, 630, "2. It reduces dynamism."),
        *lines(
            72, 606, ["A closing paragraph flush with the markers,", "which runs on over", "four lines", "of text."]
        ),
        *lines(72, 540, ["And a last one", "that runs on", "for a while", "to set the", "leading."]),
    ]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "The drawbacks:\n\n1. It exposes the layout at compile time, which is otherwise known at run time only.\n\n"
        "   That said, the layout is known anyway to anyone who reads the source.\n\n2. It reduces dynamism.\n\n"
        "A closing paragraph flush with the markers, which runs on over four lines of text.\n\n"
        "And a last one that runs on for a while to set the leading."
    )


def test_a_paragraph_far_to_the_right_of_an_item_is_not_the_items(tmp_path: Path) -> None:
    # A line of a column beside the list, read after the item: no paragraph of the item.
    ops: list[Op] = [
        *lines(72, 730, ["A paragraph that runs on", "over a few lines", "to set the leading", "of the page."]),
        Text(72, 666, "1. The first step."),
        Text(300, 642, "A note set in the right half of the page."),
        *lines(72, 618, ["A closing paragraph", "over a few lines", "of text."]),
    ]
    assert "\n\nA note set in the right half of the page.\n\n" in md(make_pdf(tmp_path / "a.pdf", [ops]))


def test_a_lone_line_of_code_under_an_item_is_a_code_block_of_the_item(tmp_path: Path) -> None:
    # Not text of the item's sentence, nor a paragraph of inline code after the list: a
    # block of the item (as a browser prints a <pre> inside an <li>).
    ops: list[Op] = [
        *lines(72, 740, ["A paragraph that runs on", "over a few lines", "to set the leading", "of the page."]),
        Text(72, 680, "1. Deploy the previous version with the deployment tool:"),
        Text(86, 656, "deploy --service orders --version 4.18.2", 9, "M"),
        Text(72, 632, "2. Wait until every instance reports healthy."),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "tool:\n\n   ```\n   deploy --service orders --version 4.18.2\n   ```\n\n2. Wait" in out


def test_a_numbered_list_of_latin_text_on_a_right_to_left_page_opens_with_its_numbers(tmp_path: Path) -> None:
    # An untranslated passage of a Hebrew document, printed right to left as browsers do:
    # lines flush right, full stops and colons at their left ends, each item's number
    # printed apart at the right of its line (".1" for "1.", a text object of its own).
    title = "\u05d0\u05d1\u05d2 \u05d3\u05d4\u05d5"
    ops: list[Op] = [
        Text(470, 730, title[::-1], font=HEBREW),
        Text(262, 700, ":The option is a function called with two arguments"),
        Text(380, 680, ".The error that was thrown"),
        Text(532, 680, ".1"),
        Text(330, 664, ".An errorInfo object with its stack"),
        Text(532, 664, ".2"),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "The option is a function called with two arguments:" in out
    assert "1. The error that was thrown.\n2. An errorInfo object with its stack." in out


def test_latin_items_take_their_bullets_at_the_right_on_a_right_to_left_page_of_code(tmp_path: Path) -> None:
    # A Hebrew page whose lines are mostly code: code is written left to right on any page
    # and says nothing of the page's direction; the Latin items' discs stand at their right.
    title = "\u05d0\u05d1\u05d2 \u05d3\u05d4\u05d5 \u05d6\u05d7\u05d8"
    code = ["<ul>", "  <Item name='Space suit' />", "  <Item name='Helmet' />", "</ul>", "}", "}", "}"]
    ops: list[Op] = [
        *[Text(72, 740 - 12 * k, line, 9, "M") for k, line in enumerate(code)],
        Text(440, 640, title[::-1], font=HEBREW),
        Text(380, 620, "Space suit (Importance: 9)"),
        disc(514, 624, 1.8),
        Text(370, 604, "Helmet with a golden leaf"),
        disc(514, 608, 1.8),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "- Space suit (Importance: 9)\n- Helmet with a golden leaf" in out


def test_inline_code_after_a_line_break_in_an_item_stays_in_the_item(tmp_path: Path) -> None:
    # "<li>... pointee types.<br><code>vis(&T)</code> = vis(T).</li>": the line of code
    # follows at the item's own leading, and the item's text goes on after it.
    ops: list[Op] = [
        Text(72, 740, "A paragraph of prose that runs on for a while to set the column's right edge."),
        disc(84, 724, 1.8),
        Text(93, 720, "References and pointers inherit their visibility from the types they point"),
        Text(93, 706, "to, whatever their mutability."),
        Text(93, 692, "vis(&MUT T) = vis(*MUT T)", 10, "M"),
        Text(93, 678, "= vis(T)."),
        disc(84, 660, 1.8),
        Text(93, 656, "Tuple types are as visible as their least visible component."),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "- References and pointers inherit" in out
    assert "whatever their mutability. `vis(&MUT T) = vis(*MUT T)` = vis(T).\n- Tuple types" in out


def test_a_right_to_left_item_goes_on_over_a_line_set_mostly_in_inline_code(tmp_path: Path) -> None:
    # A Hebrew item whose second line is mostly code in a smaller monospaced font: the
    # line's size is that of its code, and it still continues the item (under its text,
    # left of the number printed apart at the right).
    intro = " ".join(["\u05d0\u05d1\u05d2 \u05d3\u05d4\u05d5"] * 4) + ":"
    first, last = "\u05d6\u05d7\u05d8 \u05d9\u05db\u05dc", "\u05de\u05e0"
    ops: list[Op] = [
        Text(330, 720, intro[::-1], 12, HEBREW),
        Text(450, 700, first[::-1], 12, HEBREW),
        Text(530, 700, ".1", 12),
        Text(284, 686, "<tag attribute={value}> </tag>", 10, HEBREW_MONO),
        Text(437, 686, last[::-1], 12, HEBREW),
        Text(330, 660, intro[::-1], 12, HEBREW),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert f"1. {first} {last} <tag attribute={{value}}> </tag>" in out.replace("\\", "")


def test_bullets_open_items_set_in_bold(tmp_path: Path) -> None:
    # A short bold line opened by a number is a numbered heading; opened by a bullet it is
    # an item, however short and however bold.
    ops: list[Op] = [
        Text(72, 720, "1. Scope", font="B"),
        Text(72, 700, "The plan covers three things:"),
        Text(72, 686, "\u2022 Wood", font="B"),
        Text(72, 672, "\u2022 Water", font="B"),
        Text(72, 658, "\u2022 Light, and the paths between the three buildings"),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert out.endswith(
        "The plan covers three things:\n\n- **Wood**\n- **Water**\n- Light, and the paths between the three buildings"
    )
    assert not out.startswith("1.")


def _libreoffice(path: Path, outline: list[tuple[int, str, int]]) -> Path:
    """`path` as LibreOffice exports it: its Heading paragraphs as the outline."""
    add_outline(path, outline)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.docinfo["/Producer"] = "LibreOffice 7.4"
        pdf.docinfo["/Creator"] = "Writer"
        pdf.save(path)
    return path


def _numbered_titles(font: str, size: float, gap: float) -> list[Op]:
    # A numbered heading, then a numbered list of short titles, each with its paragraph
    # flush left under it; the numbers stand `gap` points before the titles' x (a tab stop).
    ops: list[Op] = [Text(72, 720, "1. Terms", 16, "B")]
    ops.append(Text(72, 696, "The agreement covers the points below, each in a paragraph of its own."))
    y = 672
    for k, title in enumerate(["Introduction", "Payment", "Duration"], start=1):
        ops += [Text(90, y, f"{k}.", size, font), Text(90 + gap, y, title, size, font)]
        ops.append(Text(72, y - 20, f"The parties agree on the {title.lower()} in writing, as the law requires."))
        y -= 44
    return ops


def test_numbers_at_a_tab_stop_the_outline_leaves_out_open_items_in_bold(tmp_path: Path) -> None:
    # A LibreOffice export: the outline lists every heading. A bold number set apart from its
    # title by a tab stop, on a line the outline leaves out, is Word's numbering of an item
    # set in bold, not a numbered heading.
    pdf = _libreoffice(make_pdf(tmp_path / "a.pdf", [_numbered_titles("B", 11, 18)]), [(1, "1. Terms", 0)])
    out = md(pdf)
    assert out.startswith("## 1. Terms\n\nThe agreement covers")
    assert "\n\n1. **Introduction**\n\nThe parties agree on the introduction" in out
    assert "\n\n3. **Duration**\n\nThe parties agree on the duration" in out


def test_numbers_at_a_tab_stop_the_outline_leaves_out_open_items_at_any_size(tmp_path: Path) -> None:
    pdf = _libreoffice(make_pdf(tmp_path / "a.pdf", [_numbered_titles("R", 14, 20)]), [(1, "1. Terms", 0)])
    out = md(pdf)
    assert "\n\n1. Introduction\n\nThe parties agree on the introduction" in out
    assert "\n\n2. Payment\n\n" in out


def test_bold_numbers_stay_headings_without_a_tab_stop_or_a_complete_outline(tmp_path: Path) -> None:
    # A number typed before its title (a space, no tab stop) is no numbering of Word's; and
    # another producer's outline says nothing of the lines it leaves out.
    typed = _libreoffice(make_pdf(tmp_path / "a.pdf", [_numbered_titles("B", 11, 12.5)]), [(1, "1. Terms", 0)])
    assert "1. **Introduction**" not in md(typed)
    pdf = make_pdf(tmp_path / "b.pdf", [_numbered_titles("B", 11, 18)])
    add_outline(pdf, [(1, "1. Terms", 0)])
    assert "1. **Introduction**" not in md(pdf)


_INTRO = "The agreement covers the points below, each explained in a paragraph of its own here."


def _bullet_item(x: float, y: float, *texts: str) -> list[Op]:
    """A bullet at `x` and its lines 18 points further in, the first on baseline `y`, 14 apart."""
    return [Text(x, y, "\u2022"), *lines(x + 18, y, list(texts))]


def test_a_paragraph_under_an_item_s_short_title_is_a_paragraph_of_the_item(tmp_path: Path) -> None:
    # The first line of each item ends where the next line's first word would have fitted:
    # the writer broke it (a title, then its paragraph), not the layout. A line that runs to
    # the column's edge wraps into the next; one opened in lower case goes on with a sentence.
    ops: list[Op] = [
        Text(72, 720, _INTRO),
        *_bullet_item(
            90, 700, "Scope of the work", "Check the supply of paper before the meeting starts, and agree on it."
        ),
        *_bullet_item(
            90,
            666,
            "Payment is due within thirty days of the invoice, and the parties agree",
            "Otherwise on a date they set in writing.",
        ),
        *_bullet_item(90, 632, "Duration and", "notice of the agreement"),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert out.endswith(
        "- Scope of the work\n\n"
        "  Check the supply of paper before the meeting starts, and agree on it.\n\n"
        "- Payment is due within thirty days of the invoice, and the parties agree Otherwise on a date they set"
        " in writing.\n"
        "- Duration and notice of the agreement"
    )


def _item_then_indented_paragraph() -> list[Op]:
    # An item's short line, then a paragraph set further in than an item's text starts.
    return [
        Text(72, 720, _INTRO),
        Text(90, 700, "\u2022"),
        Text(108, 700, "Scope of the work"),
        Text(144, 686, "Check the supply of paper before the meeting starts."),
    ]


def test_a_word_processor_s_paragraph_after_an_item_is_its_own_however_far_in(tmp_path: Path) -> None:
    # Word's list item is one paragraph: the next one, set in by its own indent, is not the
    # item's. A browser's item holds what stands under it (a quotation).
    exported = _libreoffice(make_pdf(tmp_path / "a.pdf", [_item_then_indented_paragraph()]), [])
    assert md(exported).endswith("- Scope of the work\n\nCheck the supply of paper before the meeting starts.")
    printed = md(make_pdf(tmp_path / "b.pdf", [_item_then_indented_paragraph()]))
    assert printed.endswith("- Scope of the work Check the supply of paper before the meeting starts.")


def test_a_line_back_at_the_marker_ends_the_paragraph_of_an_item(tmp_path: Path) -> None:
    # A paragraph under an item's title, then a bold line back at the marker's x: a
    # heading of its own, not more of the item's paragraph.
    ops: list[Op] = [
        Text(72, 720, _INTRO),
        *_bullet_item(72, 700, "Scope of the work", "Check the supply of paper before the meeting starts"),
        Text(72, 672, "Payment terms", font="B"),
        Text(72, 652, "The invoice is paid within thirty days, as the law of the country requires it to be."),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "  Check the supply of paper before the meeting starts\n\n## Payment terms\n\nThe invoice" in out


def test_any_symbol_before_a_tab_stop_is_a_word_processor_s_bullet(tmp_path: Path) -> None:
    # Word takes bullets from any font: a dingbat, an arrow, a letter "o" or a ">" in the text
    # font, each followed by a tab stop. The same arrow typed before a word with a space is
    # text; so is a "+" of ASCII before a tab stop (a formula, inline code after its padding).
    ops: list[Op] = [Text(72, 720, "The list below uses bullets of several fonts:")]
    for k, (font, glyph) in enumerate([("S", "v"), ("S", "a"), ("R", "o"), ("R", ">")]):
        y = 700 - 14 * k
        ops += [Text(90, y, glyph, 11, font), Text(108, y, f"Point number {k + 1} of the list")]
    ops += [Runs(72, 640, (("S", "a"), ("R", " see the notes below for the details of each point.")))]
    ops += [Text(72, 610, "+"), Text(90, 610, "one more term of the sum")]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "The list below uses bullets of several fonts:\n\n"
        "- Point number 1 of the list\n"
        "- Point number 2 of the list\n"
        "- Point number 3 of the list\n"
        "- Point number 4 of the list\n\n"
        "\u2192 see the notes below for the details of each point.\n\n"
        "\\+ one more term of the sum"
    )


def test_a_symbol_bullet_a_wide_tab_stop_splits_from_its_text_opens_the_item(tmp_path: Path) -> None:
    # A hanging indent of half an inch: the layout reads the dingbat as a line of its own.
    ops: list[Op] = [Text(72, 720, "Rooms of the house:")]
    for k, room in enumerate(["The kitchen on the ground floor", "The attic under the roof"]):
        ops += [Text(90, 700 - 14 * k, "v", 11, "S"), Text(126, 700 - 14 * k, room)]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "Rooms of the house:\n\n- The kitchen on the ground floor\n- The attic under the roof"
    )


def test_symbol_bullets_before_tabbed_columns_are_a_list_and_row_numbers_a_table(tmp_path: Path) -> None:
    # Items with a tab stop inside (a name, then its extension) line up in columns beside
    # their bullets: a list, not a table. Bare numbers before two columns number a table's rows.
    rows = [("Reception", "extension 100"), ("Security", "extension 200"), ("Help desk", "extension 300")]
    ops: list[Op] = [Text(72, 720, "Contacts and their numbers:")]
    for k, (name, phone) in enumerate(rows):
        ops += [Text(90, 700 - 14 * k, "v", 11, "S"), Text(126, 700 - 14 * k, name), Text(250, 700 - 14 * k, phone)]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "Contacts and their numbers:\n\n- Reception extension 100\n- Security extension 200\n- Help desk extension 300"
    )
    ops = [Text(72, 720, "Contacts and their numbers:")]
    for k, (name, phone) in enumerate(rows):
        ops += [Text(90, 700 - 14 * k, str(k + 1)), Text(126, 700 - 14 * k, name), Text(250, 700 - 14 * k, phone)]
    assert "| 1 | Reception | extension 100 |" in md(make_pdf(tmp_path / "b.pdf", [ops]))


def test_a_number_before_a_tab_stop_numbers_words_not_other_numbers(tmp_path: Path) -> None:
    # "1" <tab> "First section" is Word's numbering; a row of numbers set apart (a printer's
    # key under the imprint, a row of figures) numbers nothing and invents no full stop.
    key = [Text(150 + 30 * i, 500, n) for i, n in enumerate(["1", "3", "5", "7", "9", "10", "8", "6", "4", "2"])]
    numbered = [Text(90, 600, "1"), Text(120, 600, "First section of the agreement")]
    pdf = make_pdf(tmp_path / "a.pdf", [[Text(72, 700, "Printed in the United States of America"), *key, *numbered]])
    out = md(pdf)
    assert "1. First section of the agreement" in out
    assert "1 3 5 7 9 10 8 6 4 2" in out
    assert "5." not in out


def _bullet_page(items: list[tuple[int, str]], top: float = 720, left: float = 84) -> list[Op]:
    """Items as Chromium prints <ul>: (level, text), a disc (first level) or a circle before
    each, the first level's marker at `left`, each level 30 points further in."""
    ops: list[Op] = []
    for k, (level, text) in enumerate(items):
        x, y = left + 30 * level, top - 20 * k
        ops += [disc(x, y + 4, 1.8, filled=level == 0), Text(x + 9, y, text)]
    return ops


def test_a_nested_list_a_page_break_cuts_keeps_its_nesting_in_the_document(tmp_path: Path) -> None:
    intro: list[Op] = [Text(72, 740, "What the market sells:")]
    page1 = intro + _bullet_page([(0, "Fruit"), (1, "Apple"), (1, "Pear")])
    page2 = _bullet_page([(1, "Plum"), (1, "Cherry"), (0, "Vegetables"), (1, "Leek")])
    page3 = [*_bullet_page([(1, "Onion")]), Text(72, 600, "That is all.")]
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2, page3]))
    # Each page alone starts its list at the margin: its Markdown stands alone.
    assert [p.markdown for p in result.pages[1:]] == [
        "- Plum\n- Cherry\n- Vegetables\n  - Leek",
        "- Onion\n\nThat is all.",
    ]
    # The document nests the items after each break as the page before left the list.
    assert result.markdown == (
        "What the market sells:\n\n"
        "- Fruit\n  - Apple\n  - Pear\n\n"
        "  - Plum\n  - Cherry\n- Vegetables\n  - Leek\n\n"
        "  - Onion\n\nThat is all."
    )
    assert span_faults(result) == {}


def test_a_list_after_a_page_that_ends_otherwise_starts_at_the_margin(tmp_path: Path) -> None:
    page1 = [*_bullet_page([(0, "Fruit"), (1, "Apple")]), Text(72, 600, "Prices change weekly.")]
    page2 = _bullet_page([(1, "Plum")])
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert result.markdown.endswith("Prices change weekly.\n\n- Plum")
    assert span_faults(result) == {}


def _column_prose(x: float, top: float, count: int) -> list[Op]:
    words = ["the", "river", "runs", "past", "the", "mill", "and", "the", "town", "below", "it", "every", "day"]
    texts = [" ".join(words[k % 5 : k % 5 + 7]).capitalize() + "." for k in range(count)]
    return lines(x, top, texts, leading=20)


def test_a_nested_list_that_goes_on_in_the_next_pages_left_column_nests_from_that_columns_edge(
    tmp_path: Path,
) -> None:
    # Two columns, 72-290 and 320-540: the list ends page 1's right column and goes on at
    # the top of page 2's left column, where its indents are the same from the column's edge.
    page1 = _column_prose(72, 720, 12)
    page1 += [Text(320, 720, "What the market sells:")]
    page1 += [Text(320, 700, "Stalls open at dawn and close at noon.")]
    page1 += _bullet_page([(0, "Fruit"), (1, "Apple"), (1, "Pear")], top=680, left=332)
    page2 = _bullet_page([(1, "Plum"), (0, "Vegetables"), (1, "Leek")])
    page2 += lines(72, 660, ["Prices change with the weather and the season."] * 3, leading=20)
    page2 += _column_prose(320, 720, 12)
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert "- Fruit\n  - Apple\n  - Pear\n\n  - Plum\n- Vegetables\n  - Leek" in result.markdown
    assert span_faults(result) == {}


def test_a_list_in_a_column_of_items_only_is_not_nested_across_the_break_by_guesswork(tmp_path: Path) -> None:
    # Page 1's right column holds list items only: where that column's edge is (and so how
    # deep its items are) is not shown, and its list goes on in another column of the next
    # page: the document starts that page's items as the page does.
    page1 = _column_prose(72, 720, 12)
    page1 += _bullet_page([(0, "Fruit"), (1, "Apple"), (1, "Pear")], left=332)
    page2 = _bullet_page([(1, "Plum"), (0, "Vegetables")])
    page2 += lines(72, 660, ["Prices change with the weather and the season."] * 3, leading=20)
    page2 += _column_prose(320, 720, 12)
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert "  - Pear\n\n- Plum\n- Vegetables" in result.markdown
    assert span_faults(result) == {}


def test_an_item_whose_sentence_runs_on_over_the_break_is_one_item_in_the_document(tmp_path: Path) -> None:
    page1 = [Text(72, 740, "What the market sells:"), *_bullet_page([(0, "Fruit"), (1, "Apple trees grow behind")])]
    # The rest of the item's sentence, under its text at the top of the next page, then the
    # list goes on.
    page2 = [Text(123, 720, "the old mill and bear in May."), *_bullet_page([(1, "Pear"), (0, "Vegetables")], top=700)]
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    # The page alone shows the rest as a paragraph of its own.
    assert result.pages[1].markdown == "the old mill and bear in May.\n\n- Pear\n- Vegetables"
    assert result.markdown == (
        "What the market sells:\n\n- Fruit\n  - Apple trees grow behind the old mill and bear in May.\n\n"
        "  - Pear\n- Vegetables"
    )
    assert span_faults(result) == {}


def test_an_item_is_joined_only_to_the_rest_of_its_sentence_under_its_text(tmp_path: Path) -> None:
    for last, first_line, x in (
        # A finished sentence: the paragraph under the item is not its sentence's rest.
        ("Apple trees grow behind the mill.", "They bear in May.", 123),
        # A paragraph back at the margin is none of the item's text.
        ("Apple trees grow behind", "the old mill and bear in May.", 72),
    ):
        page1 = [Text(72, 740, "What the market sells:"), *_bullet_page([(0, "Fruit"), (1, last)])]
        page2 = [Text(x, 720, first_line), *_bullet_page([(1, "Pear")], top=700)]
        result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
        assert result.markdown.endswith(f"  - {last}\n\n{first_line}\n\n- Pear")
        assert span_faults(result) == {}


def test_an_items_word_hyphenated_over_the_break_is_made_whole(tmp_path: Path) -> None:
    page1 = [Text(72, 740, "What the market sells:"), *_bullet_page([(0, "Fruit"), (1, "Apple trees need cre-")])]
    page2 = [Text(123, 720, "ative pruning in May."), *_bullet_page([(1, "Pear")], top=700)]
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert result.markdown.endswith("- Fruit\n  - Apple trees need creative pruning in May.\n\n  - Pear")
    assert span_faults(result) == {}


def test_a_dropped_line_of_icons_opening_the_page_is_not_the_rest_of_an_item(tmp_path: Path) -> None:
    page1 = [Text(72, 740, "What the market sells:"), *_bullet_page([(0, "Fruit"), (1, "Apple trees grow behind")])]
    # Private-use glyphs where the item's text would go on: nothing of them is shown, so the
    # page opens with its list, which goes on nesting.
    page2 = [Text(123, 720, "nnnn", 11, "S"), *_bullet_page([(1, "Pear"), (0, "Vegetables")], top=700)]
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert result.pages[1].markdown == "- Pear\n- Vegetables"
    assert result.markdown.endswith("  - Apple trees grow behind\n\n  - Pear\n- Vegetables")
    assert span_faults(result) == {}


def test_lists_nesting_in_opposite_directions_never_compare_across_a_break() -> None:
    # A left-to-right list ending one page, a right-to-left one opening the next, both in
    # columns whose edges show: the same edge distances mean nothing across directions.
    ltr = ListFrame(72, 540, 72, edge_known=True)
    rtl = ListFrame(72, 540, -540, edge_known=True, rtl=True)
    assert ltr.shift_to(ltr) == 0.0
    assert rtl.shift_to(rtl) == 0.0
    assert rtl.shift_to(ltr) is None
    assert ltr.shift_to(rtl) is None
    # Nor where one edge is unknown and the columns overlap.
    assert ListFrame(100, 540, -540, edge_known=False, rtl=True).shift_to(ltr) is None


def test_an_item_ending_the_right_column_goes_on_under_its_text_in_the_next_pages_left_column(
    tmp_path: Path,
) -> None:
    # Two columns, 72-290 and 320-540: the item's sentence runs on from the foot of page 1's
    # right column to the top of page 2's left column, under the item's text measured from
    # that column's edge (its marker at 362 - 320 = 42 points in, its text 9 further).
    page1 = _column_prose(72, 720, 12)
    page1 += [Text(320, 720, "What the market sells:"), Text(320, 700, "Stalls open at dawn and close at noon.")]
    page1 += _bullet_page([(0, "Fruit"), (1, "Apple trees grow behind")], top=680, left=332)
    page2 = [Text(72 + 42 + 9, 720, "the old mill and bear in May."), *_bullet_page([(1, "Pear")], top=700)]
    page2 += lines(72, 660, ["Prices change with the weather and the season."] * 3, leading=20)
    page2 += _column_prose(320, 720, 12)
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert "- Fruit\n  - Apple trees grow behind the old mill and bear in May.\n\n  - Pear" in result.markdown
    assert span_faults(result) == {}
    # Where the rest stands at the column's edge, it is none of the item's text.
    page2[0] = Text(72, 720, "the old mill and bear in May.")
    result = convert(make_pdf(tmp_path / "market.pdf", [page1, page2]))
    assert "  - Apple trees grow behind\n\nthe old mill and bear in May.\n\n- Pear" in result.markdown
    assert span_faults(result) == {}


def test_capital_letter_labels_in_a_run_open_items_and_a_lone_initial_does_not(tmp_path: Path) -> None:
    # "A.", "B.", "C." at one indent (a browser sets each right-aligned before the text, so
    # they start a little apart) are the labels of a list; "J. Smith" opening a wrapped line
    # of prose is an initial.
    ops: list[Op] = [
        *lines(72, 740, ["The committee was chaired by Dr. Anne Brown and", "J. Smith, who wrote the report below."]),
        Text(72, 700, "Choose one of the three options:"),
        Text(88, 680, "A. Keep the service as it runs today."),
        Text(88.5, 666, "B. Move the workers to the new cluster."),
        Text(87, 652, "C. Retire the service at the end of the year."),
        *lines(72, 628, ["A closing paragraph that runs on", "over two lines of text."]),
    ]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "Dr. Anne Brown and J. Smith, who wrote" in out
    assert (
        "- A. Keep the service as it runs today.\n- B. Move the workers to the new cluster.\n"
        "- C. Retire the service at the end of the year."
    ) in out


def test_lettered_headings_with_their_paragraphs_between_them_are_no_list(tmp_path: Path) -> None:
    # A paper's subsections ("A. Data Collection", in italics at the body's size): the runs
    # of letters stand at the margin, but so do their sections' paragraphs between them.
    def section(title: str, top: float) -> list[Op]:
        name = title.split(". ", 1)[1].lower()
        body = [f"The text of the section on {name} runs on, line {k} of it." for k in range(1, 4)]
        return [Text(72, top, title, font="I"), *lines(72, top - 16, body)]

    ops = [*section("A. Data Collection", 720), *section("B. Preprocessing", 640), *section("C. Training", 560)]
    out = md(make_pdf(tmp_path / "a.pdf", [ops]))
    assert "- " not in out
    assert "line 1 of it. The text of the section on data collection runs on, line 2 of it." in out


def test_lines_opened_by_one_symbol_at_one_indent_are_items_though_a_space_parts_it_from_the_text(
    tmp_path: Path,
) -> None:
    # A style sheet's bullet ("li::before { content: '\2192' }") stands one space from its
    # text; a run of lines opened by it at one indent, their wrapped lines under their text,
    # is a list. One such line alone is a symbol typed before a word (see the test above).
    ops: list[Op] = [Text(72, 720, "The steps of a conversion are these:")]
    ops += [Runs(72, 700, (("S", "a"), ("R", " The page is read and its lines are found, then")))]
    ops += [Text(84, 686, "their words are put in order.")]
    ops += [Runs(72, 672, (("S", "a"), ("R", " The blocks are made of the lines.")))]
    ops += [Runs(72, 658, (("S", "a"), ("R", " The Markdown is written.")))]
    ops += [Text(72, 630, "After the list a paragraph of the body text follows, as it does.")]
    assert md(make_pdf(tmp_path / "a.pdf", [ops])) == (
        "The steps of a conversion are these:\n\n"
        "- The page is read and its lines are found, then their words are put in order.\n"
        "- The blocks are made of the lines.\n"
        "- The Markdown is written.\n\n"
        "After the list a paragraph of the body text follows, as it does."
    )
