"""Chunks follow the document's structure and carry what a citation needs."""

from __future__ import annotations

import itertools
from pathlib import Path

from conversion.engine import ConversionResult, PageResult, convert
from conversion.engine.assembly import Continuation
from conversion.engine.chunks import ChunkOptions, chunk_result, sentence_spans
from conversion.engine.elements import Element, ElementType, join_elements, page_spans
from conversion.engine.tokens import count_tokens

from .pdfs import lines, make_pdf


def _el(kind: ElementType, markdown: str, level: int | None = None, y: float = 0.0) -> Element:
    text = markdown.lstrip("#- ").strip()
    return Element(kind, (72.0, y, 540.0, y + 12.0), text, markdown, level=level)


def _h(level: int, title: str) -> Element:
    return _el(ElementType.HEADING, "#" * level + " " + title, level=level)


def _p(text: str) -> Element:
    return _el(ElementType.PARAGRAPH, text)


def _result(*pages: list[Element], continues: Continuation = Continuation.NONE) -> ConversionResult:
    out = []
    for n, elements in enumerate(pages, start=1):
        for element, span in zip(elements, page_spans(elements), strict=True):
            element.md_span = span
        out.append(
            PageResult(
                n,
                None,
                join_elements(elements),
                True,
                elements=elements,
                table_continues=continues if n > 1 else Continuation.NONE,
                width=612,
                height=792,
            )
        )
    return ConversionResult(len(out), out, False, False, [], {})


def _sentences(n: int, word: str = "alpha") -> str:
    return " ".join(f"Sentence {i} has the word {word} in it." for i in range(n))


def test_small_sections_share_a_chunk_and_each_chunk_says_where_it_came_from() -> None:
    result = _result([_h(1, "Guide"), _p("Intro text."), _h(2, "Install"), _p("Run the installer.")])
    (chunk,) = chunk_result(result, ChunkOptions(max_tokens=100))
    markdown = result.markdown
    assert chunk.id == "c1"
    assert chunk.markdown == markdown == markdown[slice(*chunk.doc_span)]
    assert chunk.heading_path == ["Guide"]
    assert chunk.pages == [1]
    assert chunk.elements == ["p1.e0", "p1.e1", "p1.e2", "p1.e3"]
    assert [b.element for b in chunk.boxes] == chunk.elements
    assert chunk.boxes[0].as_dict() == {"page": 1, "bbox": [72.0, 0.0, 540.0, 12.0], "element": "p1.e0"}
    assert chunk.token_count == count_tokens(markdown)


def test_a_section_that_does_not_fit_starts_a_new_chunk_with_its_heading() -> None:
    result = _result(
        [_h(1, "Guide"), _p(_sentences(4)), _h(2, "Install"), _p(_sentences(4, "beta")), _h(2, "Use"), _p("Short.")]
    )
    chunks = chunk_result(result, ChunkOptions(max_tokens=80))
    assert [c.heading_path for c in chunks] == [["Guide"], ["Guide", "Install"]]
    assert chunks[1].markdown.startswith("## Install\n\n")
    # The last section fits in what remained: it stays with the one before.
    assert chunks[1].markdown.endswith("## Use\n\nShort.")
    assert all(c.token_count <= 80 for c in chunks)


def test_a_heading_is_never_the_last_thing_in_a_chunk() -> None:
    long = _sentences(12)
    result = _result([_h(1, "One"), _p("Short."), _h(1, "Two"), _p(long)])
    chunks = chunk_result(result, ChunkOptions(max_tokens=60))
    for chunk in chunks:
        assert not chunk.markdown.rstrip().split("\n")[-1].startswith("#")
    assert chunks[1].markdown.startswith("# Two\n\nSentence 0")
    assert all(c.heading_path == ["Two"] for c in chunks[1:])


def test_a_long_paragraph_is_cut_between_sentences_and_never_inside_one() -> None:
    text = _sentences(30)
    chunks = chunk_result(_result([_p(text)]), ChunkOptions(max_tokens=50))
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.token_count <= 50
        assert chunk.markdown.startswith("Sentence ")
        assert chunk.markdown.endswith("in it.")
    assert " ".join(c.markdown for c in chunks) == text


def test_a_sentence_larger_than_the_budget_is_cut_between_words_and_a_word_larger_stays_whole() -> None:
    giant = "x" * 400
    text = "word " * 100 + giant + " end."
    chunks = chunk_result(_result([_p(text.strip())]), ChunkOptions(max_tokens=30))
    over = [c for c in chunks if c.token_count > 30]
    assert [c.markdown.strip() for c in over] == [giant]
    assert all(" " not in c.markdown.strip() or c.token_count <= 30 for c in chunks)
    assert " ".join(c.markdown for c in chunks).split() == text.split()


def test_a_long_table_is_cut_between_rows_and_repeats_its_header() -> None:
    header = "| Name | Value |\n| --- | --- |"
    rows = [f"| item {i} | {i * 7} units |" for i in range(60)]
    table = _el(ElementType.TABLE, header + "\n" + "\n".join(rows))
    chunks = chunk_result(_result([_h(1, "Data"), table]), ChunkOptions(max_tokens=80))
    assert len(chunks) > 3
    seen: list[str] = []
    for chunk in chunks:
        assert chunk.token_count <= 80
        lines_ = chunk.markdown.split("\n")
        body = lines_[lines_.index("| --- | --- |") + 1 :]
        assert lines_[lines_.index("| --- | --- |") - 1] == "| Name | Value |"
        assert all(line in rows for line in body)  # whole rows only
        seen += body
        assert chunk.heading_path == ["Data"]
    assert seen == rows
    assert chunks[0].markdown.startswith("# Data\n\n| Name")


def test_an_html_table_cut_in_chunks_is_closed_and_reopened() -> None:
    head = "<table>\n<thead>\n<tr><th>A</th><th>B</th></tr>\n</thead>\n<tbody>\n"
    rows = [f"<tr><td>row {i}</td><td>{i}</td></tr>" for i in range(40)]
    table = _el(ElementType.TABLE, head + "\n".join(rows) + "\n</tbody>\n</table>")
    chunks = chunk_result(_result([table]), ChunkOptions(max_tokens=90))
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.markdown.startswith(head)
        assert chunk.markdown.endswith("\n</tbody>\n</table>")
        assert chunk.token_count <= 90


def test_a_table_run_on_across_a_page_break_is_one_block_on_both_pages() -> None:
    first = _el(ElementType.TABLE, "| A | B |\n| --- | --- |\n| 1 | 2 |")
    second = _el(ElementType.TABLE, "| A | B |\n| --- | --- |\n| 3 | 4 |")
    result = _result([_p("Before."), first], [second, _p("After.")], continues=Continuation.REPEATED_HEADER)
    (chunk,) = chunk_result(result, ChunkOptions(max_tokens=200))
    assert "| 1 | 2 |\n| 3 | 4 |" in chunk.markdown
    assert chunk.pages == [1, 2]
    assert chunk.elements == ["p1.e0", "p1.e1", "p2.e0", "p2.e1"]
    # Small budget: the table's two parts still go together, cut only between rows.
    chunks = chunk_result(result, ChunkOptions(max_tokens=20))
    holding = [c for c in chunks if "p1.e1" in c.elements or "p2.e0" in c.elements]
    assert all("| A | B |" in c.markdown for c in holding)


def test_overlap_repeats_whole_sentences_of_the_chunk_before_within_its_section() -> None:
    text = _sentences(30)
    chunks = chunk_result(_result([_h(1, "Only"), _p(text)]), ChunkOptions(max_tokens=60, overlap_tokens=15))
    sentences = [text[s:e].strip() for s, e in sentence_spans(text)]
    for before, after in itertools.pairwise(chunks):
        last = before.markdown.rsplit(". ", 1)[-1].strip()
        assert after.markdown.startswith(last)
        assert last in sentences
        assert after.doc_span[0] < before.doc_span[1]
        assert after.token_count <= 60


def test_no_overlap_across_a_section_boundary() -> None:
    result = _result([_h(1, "One"), _p(_sentences(6)), _h(1, "Two"), _p(_sentences(6, "beta"))])
    chunks = chunk_result(result, ChunkOptions(max_tokens=90, overlap_tokens=30))
    two = next(c for c in chunks if c.heading_path == ["Two"])
    assert two.markdown.startswith("# Two")


def test_sentences_do_not_end_at_abbreviations_or_before_lower_case() -> None:
    text = "See Fig. 3 and e.g. the table. Then J. Smith said so. it goes on! Next one?"
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "See Fig. 3 and e.g. the table. ",
        "Then J. Smith said so. it goes on! ",
        "Next one?",
    ]


def test_chunks_of_a_converted_pdf_cite_its_pages(tmp_path: Path) -> None:
    body = [f"Line {i} of the first chapter goes on for a while." for i in range(20)]
    pdf = make_pdf(
        tmp_path / "doc.pdf",
        [lines(72, 720, body), lines(72, 720, [f"Line {i} of page two continues the text." for i in range(20)])],
    )
    result = convert(str(pdf))
    chunks = chunk_result(result, ChunkOptions(max_tokens=120))
    markdown = result.markdown
    assert chunks
    assert all(c.token_count <= 120 for c in chunks)
    assert {p for c in chunks for p in c.pages} == {1, 2}
    for chunk in chunks:
        assert chunk.markdown == markdown[slice(*chunk.doc_span)]
        for box in chunk.boxes:
            page = result.pages[box.page - 1]
            index = int(box.element.split(".e")[1])
            assert page.elements[index].bbox == box.bbox


def test_a_section_joins_the_chunk_before_only_with_all_its_subsections() -> None:
    result = _result(
        [_h(1, "Intro"), _p("Short intro."), _h(1, "Chapter"), _p("Small."), _h(2, "Part"), _p(_sentences(9))]
    )
    chunks = chunk_result(result, ChunkOptions(max_tokens=100))
    # "Chapter" alone would fit after the intro; with its part it would not: it starts a chunk.
    assert chunks[0].markdown == "# Intro\n\nShort intro."
    assert chunks[1].markdown.startswith("# Chapter\n\nSmall.")
    assert chunks[1].heading_path == ["Chapter"]


def test_a_sentence_that_fits_a_chunk_but_not_under_its_long_heading_is_cut_by_words() -> None:
    heading = "Heading " + " ".join(f"word{i}" for i in range(20))
    sentence = "This single sentence " + " ".join(f"term{i}" for i in range(30)) + " ends here."
    assert count_tokens(sentence) <= 100 < count_tokens(f"## {heading}\n\n{sentence}")
    chunks = chunk_result(_result([_h(2, heading), _p(sentence)]), ChunkOptions(max_tokens=100))
    assert all(c.token_count <= 100 for c in chunks)
    assert chunks[0].markdown.startswith("## Heading")
    assert not chunks[0].markdown.endswith(heading)  # the heading goes on with text


def test_chinese_and_japanese_sentences_end_at_full_width_stops_without_a_space() -> None:
    text = "公司董事会保证报告内容的真实。所有董事均已出席会议！これは日本語の文です。Then English."
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "公司董事会保证报告内容的真实。",
        "所有董事均已出席会议！",
        "これは日本語の文です。",
        "Then English.",
    ]


def test_a_chinese_paragraph_larger_than_the_budget_is_cut_between_sentences_then_characters() -> None:
    sentence = "公司董事会、监事会及董事保证季度报告内容的真实、准确、完整，不存在虚假记载。"
    text = sentence * 12 + "负责人" * 60 + "声明。"
    assert count_tokens(sentence) <= 60 < count_tokens("负责人" * 60)
    chunks = chunk_result(_result([_p(text)]), ChunkOptions(max_tokens=60))
    # Without spaces the whole paragraph was one word, kept whole far over the budget.
    assert all(c.token_count <= 60 for c in chunks)
    assert "".join(c.markdown for c in chunks) == text
    # Sentences that fit are never cut: every cut within the sentences falls after a stop.
    cuts = [c.doc_span[1] for c in chunks[:-1] if c.doc_span[1] <= len(sentence) * 12]
    assert len(cuts) >= 6
    assert all(end % len(sentence) == 0 for end in cuts)


def test_a_header_too_large_to_repeat_with_a_row_is_left_out_and_the_budget_holds() -> None:
    names = [f"Column heading number {i} with a long description" for i in range(4)]
    header = "| " + " | ".join(names) + " |\n| --- | --- | --- | --- |"
    rows = [f"| item {i} | {i * 7} | {i * 9} | ok |" for i in range(40)]
    table = _el(ElementType.TABLE, header + "\n" + "\n".join(rows))
    budget = 50
    assert count_tokens(header + "\n" + rows[5]) > budget >= count_tokens(rows[5]) * 3
    chunks = chunk_result(_result([table]), ChunkOptions(max_tokens=budget))
    assert len(chunks) > 3
    # The table's own first chunk holds its header; the others their rows alone, whole.
    assert chunks[0].markdown.startswith(header)
    body = [line for c in chunks for line in c.markdown.split("\n") if line in rows]
    assert body == rows
    for chunk in chunks[1:]:
        assert chunk.token_count <= budget
        assert all(line in rows for line in chunk.markdown.split("\n"))


def test_an_html_table_whose_header_does_not_fit_with_a_row_is_reopened_without_it() -> None:
    head = "<table>\n<thead>\n<tr>" + "".join(f"<th>Heading {i} of a wide table</th>" for i in range(6)) + "</tr>\n"
    head += "</thead>\n<tbody>\n"
    rows = [f"<tr><td>row {i}</td><td>{i}</td></tr>" for i in range(30)]
    table = _el(ElementType.TABLE, head + "\n".join(rows) + "\n</tbody>\n</table>")
    budget = 60
    assert count_tokens(head + rows[3] + "\n</tbody>\n</table>") > budget
    chunks = chunk_result(_result([table]), ChunkOptions(max_tokens=budget))
    for chunk in chunks[1:]:
        assert chunk.markdown.startswith("<table>\n<tbody>\n<tr>")
        assert chunk.markdown.endswith("\n</tbody>\n</table>")
        assert chunk.token_count <= budget
