"""The real-document bench's scoring (bench/real/score.py) on small Markdown strings with
known scores. Pure functions: no database, no PDF, no bench venv (text fidelity, the one
score that needs rapidfuzz, is tested where rapidfuzz is installed)."""

from __future__ import annotations

import pytest

from bench.quality.matching import loose_key, match
from bench.real.score import METRICS, clean_reference, longest_increasing, structure, summarise

PARAS = [
    "The first paragraph says where the document comes from and why it was written.",
    "The second paragraph explains the method that the authors followed in detail.",
    "The third paragraph lists the results that were measured on every sample.",
    "The fourth paragraph closes with what remains to be done after this work.",
]


def counts(ref: str, out: str) -> dict[str, tuple[int, int]]:
    return {k: (v.hit, v.total) for k, v in structure(ref, out).items()}


def test_reference_against_itself_is_perfect() -> None:
    ref = "# Title\n\n## One\n\n" + PARAS[0] + "\n\n- a\n    - b\n\n| x | y |\n| - | - |\n| 1 | 2 |\n"
    for hit, total in counts(ref, ref).values():
        assert hit == total


def test_heading_level_off_by_one_costs_level_but_keeps_hierarchy() -> None:
    ref = "# Report\n\n## Scope\n\ntext\n\n## Method\n\ntext\n\n### Samples\n"
    shifted = "## Report\n\n### Scope\n\ntext\n\n### Method\n\ntext\n\n#### Samples\n"
    c = counts(ref, shifted)
    assert c["heading_recall"] == (4, 4)
    assert c["heading_precision"] == (4, 4)
    assert c["heading_level"] == (0, 4)
    assert c["heading_hierarchy"] == (3, 3)


def test_title_at_the_first_level_breaks_one_step_of_the_hierarchy() -> None:
    ref = "# Report\n\n## Scope\n\n## Method\n\n### Samples\n"
    flat = "# Report\n\n# Scope\n\n# Method\n\n## Samples\n"
    c = counts(ref, flat)
    assert c["heading_level"] == (1, 4)
    # Report -> Scope goes deeper in the reference, stays level in the output.
    assert c["heading_hierarchy"] == (2, 3)


def test_missing_and_spurious_headings() -> None:
    ref = "## Scope\n\n## Method\n\n## Results\n"
    out = "## Scope\n\n## Results\n\n## Page 3 of 9\n"
    c = counts(ref, out)
    assert c["heading_recall"] == (2, 3)
    assert c["heading_precision"] == (2, 3)
    assert c["heading_level"] == (2, 3)
    assert c["heading_hierarchy"] == (1, 1)


def test_swapped_pair_of_paragraphs_costs_one_block_of_order() -> None:
    ref = "\n\n".join(PARAS)
    swapped = "\n\n".join([PARAS[0], PARAS[2], PARAS[1], PARAS[3]])
    assert counts(ref, swapped)["reading_order"] == (3, 4)


def test_missing_paragraph_costs_order_over_all_reference_blocks() -> None:
    ref = "\n\n".join(PARAS)
    out = "\n\n".join([PARAS[0], PARAS[1], PARAS[3]])
    assert counts(ref, out)["reading_order"] == (3, 4)
    assert counts(ref, "")["reading_order"] == (0, 4)


def test_paragraph_moved_to_the_end_and_blocks_split_differently() -> None:
    ref = "\n\n".join(PARAS)
    # The output runs two paragraphs together and moves the first to the end.
    out = PARAS[1] + " " + PARAS[2] + "\n\n" + PARAS[3] + "\n\n" + PARAS[0]
    assert counts(ref, out)["reading_order"] == (3, 4)


def test_repeated_paragraphs_in_order_are_not_disorder() -> None:
    ref = "\n\n".join(["Paragraph 1.1", "Paragraph 1.2", "Paragraph 1.1", "Paragraph 1.2", PARAS[0], PARAS[0]])
    assert counts(ref, ref)["reading_order"] == (6, 6)
    out = "\n\n".join(["Paragraph 1.1", "Paragraph 1.2", PARAS[0], "Paragraph 1.1", "Paragraph 1.2", PARAS[0]])
    assert counts(ref, out)["reading_order"] == (5, 6)


TABLE = "| Name | Kind | Size |\n| - | - | - |\n| alpha | disk | 10 |\n| beta | tape | 20 |\n"


def test_table_cell_in_the_wrong_column() -> None:
    out = "| Name | Kind | Size |\n| - | - | - |\n| alpha | 10 | disk |\n| beta | tape | 20 |\n"
    c = counts(TABLE, out)
    assert c["table_cells"] == (7, 9)
    assert c["table_cells_any_position"] == (9, 9)


def test_table_with_an_extra_column_and_row_keeps_every_cell_in_place() -> None:
    out = "| # | Name | Kind | Size |\n| - | - | - | - |\n| 1 | alpha | disk | 10 |\n| | | | |\n| 2 | beta | tape | 20 |\n"
    assert counts(TABLE, out)["table_cells"] == (9, 9)


def test_table_cells_merged_into_one_row_are_not_in_place() -> None:
    out = "| Name | Kind | Size |\n| - | - | - |\n| alpha beta | disk tape | 10 20 |\n"
    c = counts(TABLE, out)
    assert c["table_cells"] == (3, 9)
    assert c["table_cells_any_position"] == (3, 9)


def test_table_continued_over_a_page_break_with_its_header_repeated() -> None:
    out = (
        "| Name | Kind | Size |\n| - | - | - |\n| alpha | disk | 10 |\n\nfooter\n\n"
        "| Name | Kind | Size |\n| - | - | - |\n| beta | tape | 20 |\n"
    )
    assert counts(TABLE, out)["table_cells"] == (9, 9)


def test_table_as_plain_text_finds_no_cells() -> None:
    c = counts(TABLE, "Name Kind Size\n\nalpha disk 10\n\nbeta tape 20\n")
    assert c["table_cells"] == (0, 9)
    assert c["table_cells_any_position"] == (0, 9)


def test_list_item_missing_and_nesting_wrong() -> None:
    ref = "- apples\n- pears\n    - green pears\n    - red pears\n- plums\n"
    out = "- apples\n- pears\n- green pears\n    - red pears\n"
    c = counts(ref, out)
    assert c["list_recall"] == (4, 5)
    assert c["list_depth_correct"] == (3, 4)


def test_numbered_items_that_differ_by_one_digit_are_different_items() -> None:
    ref = "- List item 1.1\n- List item 1.2\n"
    out = "- List item 1.2\n- List item 1.3\n"
    assert counts(ref, out)["list_recall"] == (1, 2)


def test_code_inside_an_item_is_no_text_of_the_item_whether_indented_or_fenced() -> None:
    # CommonMark: four columns past the item's text after a blank line is an indented code
    # block of the item (pandoc writes them so), as a fence there is; neither is item text.
    ref = "1.  Deploy with the tool:\n\n        deploy --service orders\n\n2.  Wait until it is healthy.\n"
    fenced = "1. Deploy with the tool:\n\n   ```\n   deploy --service orders\n   ```\n\n2. Wait until it is healthy.\n"
    after = "1. Deploy with the tool:\n\n```\ndeploy --service orders\n```\n\n2. Wait until it is healthy.\n"
    inline = "1. Deploy with the tool: deploy --service orders\n2. Wait until it is healthy.\n"
    assert counts(ref, fenced)["list_recall"] == (2, 2)
    assert counts(ref, after)["list_recall"] == (2, 2)
    assert counts(ref, inline)["list_recall"] == (1, 2)
    # A paragraph of the item at its text's column stays text of the item.
    loose = "-   First paragraph of the item.\n\n    Second paragraph of the item.\n"
    assert counts(loose, "- First paragraph of the item. Second paragraph of the item.\n")["list_recall"] == (1, 1)


def test_typed_bullets_are_not_list_items() -> None:
    ref = "- apples\n- pears\n"
    c = counts(ref, "• apples\n\n• pears\n")
    assert c["list_recall"] == (0, 2)
    assert c["reading_order"] == (2, 2)


def test_docling_noise_is_not_text_to_find() -> None:
    ref = (
        "## Area\n\n<!-- image -->\n\nThe area of a circle is $A= \\pi r^{2}$ for radius r.\n\n"
        "$$a^{2}+b^{2}=c^{2}$$\n\n<!-- formula-not-decoded -->\n\n- First item with $E=mc^{2}$ inside\n"
    )
    out = "## Area\n\nThe area of a circle is for radius r.\n\n- First item with inside\n"
    assert all(hit == total for hit, total in counts(ref, out).values())
    assert clean_reference(ref).count("$") == 0
    assert "image" not in clean_reference(ref)


def test_dollar_amounts_are_not_math() -> None:
    assert clean_reference("It costs $5 or $6 today.") == "It costs $5 or $6 today."


def test_loose_matching_ignores_whitespace_punctuation_and_case() -> None:
    assert loose_key("1.2  Scope:") == loose_key("1.2 scope") == "12scope"
    assert loose_key("Re-examine the “data”") == loose_key('reexamine the "Data"')
    pairs = match(["Section 1.1"], ["Section 1.2"], loose_key)
    assert pairs == [("Section 1.1", None)]
    long_ref = "A long list item that wraps onto the next line of the page"
    long_out = "A long list item that wraps onto the next lime of the page"
    assert match([long_ref], [long_out], loose_key) == [(long_ref, long_out)]


def test_longest_increasing_subsequence() -> None:
    assert longest_increasing([]) == 0
    assert longest_increasing([0, 3, 1, 2]) == 3
    assert longest_increasing([5, 4, 3]) == 1


def test_set_mean_skips_documents_where_a_metric_is_undefined() -> None:
    none = {m: [0, 0] for m in METRICS if m != "text_fidelity"}
    with_table = {"text_fidelity": 0.5, "counts": {**none, "table_cells": [1, 2]}}
    without = {"text_fidelity": 1.0, "counts": {**none, "list_recall": [3, 4]}}
    summary = summarise([with_table, without])
    assert summary["mean"]["text_fidelity"] == 0.75
    assert summary["mean"]["table_cells"] == 0.5
    assert summary["mean"]["list_recall"] == 0.75
    assert summary["mean"]["reading_order"] is None
    assert summary["documents_scored"]["table_cells"] == 1


def test_text_fidelity_ignores_noise_and_counts_lost_text() -> None:
    pytest.importorskip("rapidfuzz")
    from bench.real.score import score_document

    ref = "## Area\n\n<!-- image -->\n\nThe area is $A=\\pi r^2$ large.\n"
    assert score_document(ref, "## Area\n\nThe area is large.\n")["text_fidelity"] == 1.0
    assert score_document(ref, "## Area\n")["text_fidelity"] < 0.5


def test_blocks_are_found_whatever_the_spacing_around_punctuation() -> None:
    ref = "```\nfunction add(a, b) { return a + b; }\n```\n\n" + PARAS[0]
    out = "```\nfunction add (a , b ) {\n    return a + b ;\n}\n```\n\n" + PARAS[0]
    assert counts(ref, out)["reading_order"] == (2, 2)


def test_furniture_leaked_counts_running_lines_the_reference_does_not_have() -> None:
    from bench.real.score import furniture_leaked

    running = {"header": "Docs · Guide", "footer": "Page {page} of {pages}"}
    ref = "# Guide\n\nSome text.\n"
    clean = "# Guide\n\nSome text.\n\nMore text.\n"
    assert (furniture_leaked(ref, clean, running, 3).hit, furniture_leaked(ref, clean, running, 3).total) == (0, 6)
    leaky = "Docs · Guide\n\n# Guide\n\nSome text. Page 1 of 3\n\nDocs - Guide\n\nMore text.\n\nPage 2\nof 3\n"
    got = furniture_leaked(ref, leaky, running, 3)
    assert (got.hit, got.total) == (4, 6)
    # Text the reference has too is not furniture that leaked.
    assert furniture_leaked("Docs · Guide\n", "Docs · Guide\n", running, 3).hit == 0
    assert furniture_leaked(ref, leaky, {}, 3).total == 0
