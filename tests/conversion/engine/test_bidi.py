"""The Unicode bidirectional algorithm on lines in visual order (bidi.py)."""

from __future__ import annotations

from conversion.engine.bidi import embedding_levels, reorder
from conversion.engine.layout import visual_to_logical


def logical(visual: str, rtl: bool) -> str:
    return "".join(reorder(list(visual), rtl))


def test_a_right_to_left_run_is_turned_around_and_latin_words_inside_it_are_kept() -> None:
    # Logical "خطاطيف التأثير Effect": the Latin word is drawn left to right inside the line.
    assert logical("Effect ريثأتلا فيطاطخ", rtl=True) == "خطاطيف التأثير Effect"


def test_brackets_around_a_latin_word_at_the_end_of_an_arabic_line_are_mirrored_back() -> None:
    # Drawn "(Effect)" at the left end: the closing bracket of the logical text is the
    # opening glyph there.
    assert logical("(Effect) ريثأتلا فيطاطخ", rtl=True) == "خطاطيف التأثير (Effect)"


def test_brackets_a_pdf_gives_as_logical_text_are_not_mirrored_again() -> None:
    # Chromium maps a mirrored glyph to the character it was shaped from: the quotation
    # marks of logical "مانند «دکمه را»" are drawn "»ار ﻪﻤﮐد« ﺪﻨﻧﺎﻣ" (visual order) with the
    # logical characters' text, so L4 would turn them around.
    assert logical("»ار همکد« دننام", rtl=True) == "مانند «دکمه را»"


def test_brackets_a_source_mirrored_in_part_are_each_set_as_they_pair() -> None:
    # PDFium mirrors some of a right-to-left run's brackets itself: drawn "(props)" comes as
    # ")props)", each bracket set as it pairs and clings to its word.
    assert logical(")props) صئاصخلا", rtl=True) == "الخصائص (props)"


def test_a_bracket_whose_pair_is_on_another_line_is_mirrored_as_l4_says() -> None:
    # One bracket alone tells nothing: L4 (the glyph's own character, as word processors map).
    assert logical("(Effect ريثأتلا", rtl=True) == "التأثير Effect)"


def test_two_closing_brackets_alone_are_not_made_a_pair() -> None:
    # A word processor's "1) ... 2)" drawn right to left: L4 gives it back; mirroring one
    # of them alone would make a pair "1( ... 2)" of them.
    assert logical("(2 يناثلا (1", rtl=True) == "1) الثاني 2)"


def test_a_ligature_glyph_is_a_letter_of_the_latin_word_it_stands_in() -> None:
    glyphs = ["(", "E", "\ufb00", "e", "c", "t", ")", " ", *"ريثأتلا"]
    assert visual_to_logical(glyphs, rtl=True) == "التأثير (E\ufb00ect)"


def test_numbers_and_their_separators_keep_their_order_inside_arabic_text() -> None:
    # Logical "في عام 2024 كان السعر 3.14 و ١٢٣" (European and Arabic-Indic digits).
    assert logical("١٢٣ و 3.14 رعسلا ناك 2024 ماع يف", rtl=True) == "في عام 2024 كان السعر 3.14 و ١٢٣"


def test_a_line_of_latin_letters_in_a_right_to_left_paragraph_shows_its_colon_at_the_left() -> None:
    assert logical(":useId", rtl=True) == "useId:"
    assert logical("()useId", rtl=True) == "useId()"


def test_a_left_to_right_paragraph_turns_only_its_hebrew_run_around() -> None:
    assert logical("The word םולש means peace (here).", rtl=False) == "The word שלום means peace (here)."


def test_left_to_right_text_in_a_left_to_right_paragraph_is_left_alone() -> None:
    assert logical("return (a, [b]);", rtl=False) == "return (a, [b]);"
    assert embedding_levels(list("a (b)"), rtl=False) == [0, 0, 0, 0, 0]


def test_a_joiner_inside_a_persian_word_stays_inside_it() -> None:
    # "می‌خواهم" with a zero-width non-joiner (a boundary neutral) after its second letter.
    word = "می\u200cخواهم"
    assert logical(word[::-1] + " 12", rtl=True) == "12 " + word
