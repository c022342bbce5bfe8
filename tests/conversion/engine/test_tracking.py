"""Letter-spaced text (tracking, the PDF's character spacing `Tc`) is read as its words."""

from __future__ import annotations

from pathlib import Path

from conversion.engine import convert

from .pdfs import Op, Raw, Text, make_pdf


def _tracked(x: float, y: float, text: str, size: float, spacing: float) -> Raw:
    # Character spacing adds `spacing` points after every glyph, the space glyph included.
    return Raw(b"BT /FR %g Tf %g Tc %g %g Td (%s) Tj ET" % (size, spacing, x, y, text.encode()))


def _markdown(tmp_path: Path, ops: list[Op]) -> str:
    pdf = make_pdf(tmp_path / "t.pdf", [ops])
    return convert(pdf).pages[0].markdown


def test_tracked_words_are_joined_and_the_spaces_between_them_kept(tmp_path: Path) -> None:
    body = Text(72, 600, "The imprint of the publisher is printed above this line of ordinary text.")
    for spacing in (2.0, 4.0, 6.0):  # 0.14 to 0.43 em at 14 pt
        markdown = _markdown(tmp_path, [_tracked(72, 700, "THE PENGUIN PRESS", 14, spacing), body])
        assert "THE PENGUIN PRESS" in markdown, (spacing, markdown)
        assert "P E N" not in markdown


def test_lowercase_tracked_words_are_joined_too(tmp_path: Path) -> None:
    markdown = _markdown(tmp_path, [_tracked(72, 700, "printed in the united states", 12, 3.0)])
    assert "printed in the united states" in markdown


def test_single_letters_with_ordinary_spaces_stay_apart(tmp_path: Path) -> None:
    # One kind of gap only: variables, options, a spelled-out word; nothing tells them from
    # one tracked word, so nothing is joined.
    markdown = _markdown(tmp_path, [Text(72, 700, "Let x y z w be the unknowns and a b c d e the options.")])
    assert "x y z w" in markdown
    assert "a b c d e" in markdown


def test_letters_set_as_columns_far_apart_stay_apart(tmp_path: Path) -> None:
    ops: list[Op] = [Text(72 + 40 * i, 700, letter) for i, letter in enumerate("ABCDEFG")]
    markdown = _markdown(tmp_path, ops)
    assert not any(len(word) > 1 and word.isalpha() for word in markdown.split())
