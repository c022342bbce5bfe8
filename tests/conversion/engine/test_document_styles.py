"""Heading levels from the whole document: the styles of pages not selected (the font
census), the outline's nesting, and the headings a tagged PDF's structure declares."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest

from conversion.engine import ENGINE_ID, PDFIUM_ENGINE_ID, ConvertOptions, census, convert
from conversion.engine.census import census_pages, font_census
from conversion.engine.convert import _iter_models, _open_checked
from conversion.engine.layout import MAX_UNTAGGED_RUNS, PageModel
from conversion.engine.tags import StructureTags

from .pdfs import Op, Raw, Runs, Text, add_outline, lines, make_pdf

PROSE = [
    "The committee met on a Tuesday to review the plans that the staff",
    "had drawn up over the winter, and it found most of them sound and",
    "ready to be carried out before the end of the coming summer season.",
]


def _chapter(title: str, section: str) -> list[Op]:
    """A page with a chapter heading (18 pt), prose, a section heading (14 pt), prose."""
    return [
        Text(72, 720, title, 18, "B"),
        *lines(72, 690, PROSE, size=10, leading=12),
        Text(72, 630, section, 14, "B"),
        *lines(72, 605, PROSE, size=10, leading=12),
    ]


def test_a_heading_keeps_its_level_whichever_pages_are_selected(tmp_path: Path) -> None:
    # Selected alone, page 2's chapter heading is the largest line of the selection, once
    # on its first page: a title, were the other pages not counted. The census counts them.
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [_chapter(f"Chapter {n}", f"Section {n}.1") for n in (1, 2, 3)],
    )
    whole = convert(pdf).pages
    for number in (1, 2, 3):
        alone = convert(pdf, pages=[number]).pages[0].markdown
        assert alone == whole[number - 1].markdown
        assert alone.startswith(f"## Chapter {number}\n\n")
        assert f"\n\n### Section {number}.1\n\n" in alone


def test_a_section_heading_selected_without_its_chapter_stays_a_level_below(tmp_path: Path) -> None:
    pages = [
        _chapter("Chapter 1", "Section 1.1"),
        [Text(72, 720, "Section 1.2", 14, "B"), *lines(72, 690, PROSE, size=10, leading=12)],
        _chapter("Chapter 2", "Section 2.1"),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", pages)
    alone = convert(pdf, pages=[2]).markdown
    assert alone == convert(pdf).pages[1].markdown
    assert alone.startswith("### Section 1.2\n\n")


def test_the_outline_nests_headings_set_in_one_style_past_their_section_numbers(tmp_path: Path) -> None:
    # The page shows "Introduction", the outline "1. Introduction"; every heading shares a
    # style, so only the outline tells that "Background" is a level below.
    titles = ["Introduction", "Background", "Motivation", "Results"]
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [[Text(72, 720, t, 20, "B"), *lines(72, 690, PROSE, size=10, leading=12)] for t in titles],
    )
    add_outline(
        pdf, [(1, "1. Introduction", 0), (2, "1.1 Background", 1), (2, "1.2 Motivation", 2), (1, "2. Results", 3)]
    )
    expected = ["## Introduction", "### Background", "### Motivation", "## Results"]
    assert [p.markdown.split("\n")[0] for p in convert(pdf).pages] == expected
    assert convert(pdf, pages=[1]).markdown.split("\n")[0] == "## Introduction"
    assert convert(pdf, pages=[2]).markdown.split("\n")[0] == "### Background"


def _models(path: Path) -> list[PageModel]:
    opened = _open_checked(path, None, want_outline=False)
    try:
        count = opened.info.page_count or 0
        return [m for m in _iter_models(opened, list(range(1, count + 1)), None, {}) if isinstance(m, PageModel)]
    finally:
        opened.close()


def test_the_census_reads_the_sizes_parsing_reads_through_scaling_and_forms(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                # 10 pt text drawn at twice its size, 9 pt text at half; a line in a form.
                Raw(b"q 2 0 0 2 0 0 cm BT /FB 10 Tf 36 340 Td (A heading drawn scaled) Tj ET Q"),
                Raw(b"q 0.5 0 0 0.5 0 0 cm BT /FR 18 Tf 144 1200 Td (A line at nine points in all) Tj ET Q"),
                *lines(72, 560, PROSE, size=10, leading=12),
            ]
        ],
    )
    parsed: dict[float, int] = {}
    for line in _models(pdf)[0].lines:
        parsed[line.size] = parsed.get(line.size, 0) + len(line.text)
    with pikepdf.open(pdf) as doc:
        counted = font_census(doc, [1])[1]
    assert set(counted.chars) == set(parsed) == {20.0, 9.0, 10.0}
    assert counted.lines == {20.0: 1, 9.0: 1, 10.0: 3}
    assert counted.chars[10.0] == parsed[10.0]


def test_a_content_stream_past_the_census_budget_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = make_pdf(tmp_path / "a.pdf", [lines(72, 720, PROSE, size=10, leading=12), [Text(72, 720, "Short", 10)]])
    with pikepdf.open(pdf) as doc:
        assert set(font_census(doc, [1, 2])) == {1, 2}
        monkeypatch.setattr(census, "CENSUS_STREAM_BYTES", 100)
        assert set(font_census(doc, [1, 2])) == {2}


def test_the_census_samples_pages_spread_over_the_document_and_the_first() -> None:
    picked = census_pages([40], 200)
    assert 1 in picked
    assert 40 not in picked
    assert len(picked) <= census.CENSUS_PAGES + 1
    assert max(picked) > 150
    assert census_pages([2], 4) == [1, 3, 4]


def _tag(path: Path, kinds: list[str]) -> Path:
    """Give page 1 a structure tree: marked content MCID i is an element of type kinds[i]."""
    return _tag_pages(path, [kinds])


def _tag_pages(path: Path, pages: list[list[str]]) -> Path:
    """Give the pages a structure tree: on page n, marked content MCID i is an element of type
    pages[n][i]."""
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        root = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructTreeRoot))
        document = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructElem, S=pikepdf.Name.Document, P=root))
        everything = []
        parents: list[object] = []
        for n, kinds in enumerate(pages):
            page = pdf.pages[n]
            elements = []
            for mcid, kind in enumerate(kinds):
                # Text sits in a span inside its element, as browsers write it.
                element = pdf.make_indirect(
                    pikepdf.Dictionary(Type=pikepdf.Name.StructElem, S=pikepdf.Name("/" + kind), P=document)
                )
                span = pdf.make_indirect(
                    pikepdf.Dictionary(
                        Type=pikepdf.Name.StructElem, S=pikepdf.Name.Span, P=element, K=mcid, Pg=page.obj
                    )
                )
                element.K = span
                elements.append(span)
                everything.append(element)
            parents.extend([n, pikepdf.Array(elements)])
            page.obj.StructParents = n
        document.K = pikepdf.Array(everything)
        root.K = document
        root.ParentTree = pikepdf.Dictionary(Nums=parents)
        pdf.Root.StructTreeRoot = root
        pdf.save(path)
    return path


def _marked(mcid: int, y: float, text: str, size: float = 11, font: str = "R") -> Raw:
    return Raw(
        b"/Span <</MCID %d>> BDC BT /F%s %g Tf 72 %g Td (%s) Tj ET EMC" % (mcid, font.encode(), size, y, text.encode())
    )


def test_a_tagged_pdf_names_its_headings_and_their_levels(tmp_path: Path) -> None:
    # Every line is set in one style: only the structure tree says which are headings.
    ops: list[Op] = [
        _marked(0, 720, "Getting started"),
        _marked(1, 700, PROSE[0]),
        _marked(2, 680, "Installing the tools"),
        _marked(3, 660, PROSE[1]),
        _marked(4, 640, "Checking the result"),
        _marked(5, 620, PROSE[2]),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["H1", "P", "H2", "P", "H3", "P"])
    assert convert(pdf).markdown == (
        f"# Getting started\n\n{PROSE[0]}\n\n## Installing the tools\n\n{PROSE[1]}\n\n"
        f"### Checking the result\n\n{PROSE[2]}"
    )


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_a_bold_line_a_tagged_pdf_holds_as_a_paragraph_is_no_heading(tmp_path: Path, engine: str) -> None:
    # A browser prints a definition list's terms in bold, each on a line of its own: the
    # structure tree, which names the page's headings, holds them as paragraphs.
    ops: list[Op] = [
        _marked(0, 720, "Options", 16, "B"),
        _marked(1, 690, "encoding", 11, "B"),
        _marked(2, 676, PROSE[0]),
        _marked(3, 640, "signal", 11, "B"),
        _marked(4, 626, PROSE[1]),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["H2", "P", "P", "P", "P"])
    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown
    assert out == f"## Options\n\n**encoding**\n\n{PROSE[0]}\n\n**signal**\n\n{PROSE[1]}"


def test_a_tagged_heading_set_larger_keeps_the_level_the_structure_gives(tmp_path: Path) -> None:
    ops: list[Op] = [
        _marked(0, 720, "Overview", 16, "B"),
        _marked(1, 690, PROSE[0], 10),
        _marked(2, 660, "Details", 16, "B"),
        _marked(3, 630, PROSE[1], 10),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["H3", "P", "H3", "P"])
    assert convert(pdf).markdown == f"### Overview\n\n{PROSE[0]}\n\n### Details\n\n{PROSE[1]}"


def test_a_tagged_heading_wrapped_onto_a_second_line_is_one_heading(tmp_path: Path) -> None:
    # A browser prints an API reference in a narrow column: a method's heading, set partly
    # in a smaller monospaced face, wraps; each line is marked content of its own, both in
    # headings of level 3. One heading; a heading of the same level after the text stays
    # apart.
    first = Raw(
        b"/Span <</MCID 0>> BDC BT /FB 9.5 Tf 72 720 Td (Static method: ) Tj /FMB 8.5 Tf (Buffer.alloc\\(size[, fill[,) Tj"
        b" ET EMC"
    )
    ops: list[Op] = [
        first,
        _marked(1, 706, "encoding]]\\)", 8.5, "MB"),
        # The column's text, as wide as the heading's first line.
        _marked(2, 686, "The size of the new buffer in bytes, and", 9.5),
        _marked(3, 674, "the value to fill it with, if any.", 9.5),
        _marked(4, 654, "Static method: Buffer.from", 9.5, "B"),
        _marked(5, 634, "An array of bytes copied into it.", 9.5),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["H3", "H3", "P", "P", "H3", "P"])
    assert [ln for ln in convert(pdf).markdown.splitlines() if ln.startswith("#")] == [
        "### Static method: Buffer.alloc(size\\[, fill\\[, encoding\\]\\])",
        "### Static method: Buffer.from",
    ]


def test_a_tagged_heading_set_in_a_monospaced_face_is_a_heading_not_code(tmp_path: Path) -> None:
    # An API reference's method heading, all in a code face and wrapped over two lines,
    # beside prose and a line of code: the structure tree names it a heading.
    ops: list[Op] = [
        _marked(0, 720, "child_process.fork\\(modulePath[, args][,", 9.5, "MB"),
        _marked(1, 707, "options]\\)", 9.5, "MB"),
        _marked(2, 686, PROSE[0], 9.5),
        _marked(3, 666, "const child = fork('worker.js');", 9.5, "M"),
        _marked(4, 646, PROSE[1], 9.5),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["H3", "H3", "P", "Code", "P"])
    markdown = convert(pdf).markdown
    assert markdown.startswith("### child_process.fork(modulePath\\[, args\\]\\[, options\\])\n\n")
    assert "\n\n`const child = fork('worker.js');`\n\n" in markdown


def test_a_monospaced_face_the_document_sets_its_titles_in_is_display_type_not_code(tmp_path: Path) -> None:
    # A book sets its chapter titles and the first words of each chapter in a typewriter
    # face: larger than the text for the titles, so it is the book's display type.
    pages = [
        [
            Text(72, 720, f"CHAPTER {n}: Collectors", 14, "M"),
            Runs(72, 690, (("M", "In April 1996, "), ("R", "millions of bots began to copy the pages of the Net."))),
            *lines(72, 676, PROSE, size=11, leading=14),
            # A section title in the display face at the text's size, standing alone.
            Text(72, 620, "The Way Back Machine", 11, "M"),
            *lines(72, 600, PROSE, size=11, leading=14),
        ]
        for n in ("ONE", "TWO", "THREE")
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", pages)).markdown
    assert "`" not in out
    assert out.startswith("## CHAPTER ONE: Collectors\n\nIn April 1996, millions of bots")
    assert "\n\n### The Way Back Machine\n\nThe committee met" in out


def test_a_monospaced_face_that_sets_program_text_is_code_though_it_sets_the_titles_too(tmp_path: Path) -> None:
    # An API reference (untagged) sets each method's signature as a heading in its code face,
    # larger than the text, and its examples in the same face at the text's size: the face is
    # the document's code, its examples code blocks.
    pages = [
        [
            Text(72, 720, f"fs.{name}(path[, options])", 14, "M"),
            *lines(72, 690, PROSE, size=11, leading=14),
            *lines(90, 640, [f"const data = fs.{name}('a.txt');", "console.log(data);"], size=10, leading=12, font="M"),
            *lines(72, 600, PROSE, size=11, leading=14),
        ]
        for name in ("readFile", "writeFile", "stat")
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", pages)).markdown
    assert "const data = fs.readFile('a.txt');\nconsole.log(data);\n```" in out
    assert out.count("```") == 6


def test_a_monospaced_face_set_at_the_text_size_is_still_code(tmp_path: Path) -> None:
    pages = [
        [
            Text(72, 720, f"Step {n}", 14, "B"),
            Runs(72, 690, (("R", "Call "), ("M", "make_pdf(path)"), ("R", " to write the file to disk."))),
            *lines(72, 676, PROSE, size=11, leading=14),
        ]
        for n in ("one", "two", "three")
    ]
    out = convert(make_pdf(tmp_path / "a.pdf", pages)).markdown
    assert "Call `make_pdf(path)` to write the file" in out


def test_a_page_holding_more_code_than_prose_keeps_its_prose_as_body_text(tmp_path: Path) -> None:
    # Long lines of code at 10 pt outnumber the prose at 12 pt: the prose is still the body
    # text (not a heading), and the code is code.
    code = [f"{'    ' * (n % 3)}total_{n} = compute_the_value(alpha, beta, gamma) + offset_{n}" for n in range(12)]
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            [
                *lines(72, 720, PROSE[:2], size=12, leading=15),
                *lines(72, 680, code, size=10, leading=12, font="M"),
                *lines(72, 520, PROSE[2:], size=12, leading=15),
            ]
        ],
    )
    out = convert(pdf).markdown
    assert out.startswith(f"{PROSE[0]} {PROSE[1]}\n\n```\ntotal_0 = ")
    assert "#" not in out


def _code_at_the_foot(tmp_path: Path, *, tagged: bool) -> Path:
    """Prose, then a code block's first line alone at the foot of the page, small and far
    below the prose (the rest of the block is on the next page), and under it a note drawn
    outside the structure tree."""
    ops: list[Op] = [
        _marked(0, 720, PROSE[0]),
        _marked(1, 700, PROSE[1]),
        _marked(2, 60, "let x = match y {", 8, "M"),
        Raw(b"BT /FR 8 Tf 72 44 Td (Draft for review) Tj ET"),
    ]
    pdf = make_pdf(tmp_path / "a.pdf", [ops])
    return _tag(pdf, ["P", "P", "Code"]) if tagged else pdf


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_a_small_line_at_the_foot_that_the_structure_tree_holds_is_content(tmp_path: Path, engine: str) -> None:
    out = convert(_code_at_the_foot(tmp_path, tagged=True), options=ConvertOptions(engine=engine)).markdown

    assert "let x = match y {" in out
    # What the tree leaves out is still furniture by its place and size.
    assert "Draft" not in out


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_the_same_small_line_on_an_untagged_page_is_furniture(tmp_path: Path, engine: str) -> None:
    out = convert(_code_at_the_foot(tmp_path, tagged=False), options=ConvertOptions(engine=engine)).markdown

    assert "let x = match y" not in out
    assert "Draft" not in out


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_a_page_with_more_untagged_runs_than_the_limit_is_judged_by_position(tmp_path: Path, engine: str) -> None:
    # A page tagged in part only: a paragraph drawn outside the tree, one run per word, past
    # the limit. Its tags say nothing of furniture, so the small foot line goes again.
    runs = [
        b"BT /FR 11 Tf %d %d Td (w%d) Tj ET" % (72 + 40 * (i % 10), 680 - 14 * (i // 10), i)
        for i in range(MAX_UNTAGGED_RUNS + 1)
    ]
    ops: list[Op] = [
        _marked(0, 720, PROSE[0]),
        _marked(1, 700, PROSE[1]),
        Raw(b" ".join(runs)),
        _marked(2, 60, "let x = match y {", 8, "M"),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["P", "P", "Code"])

    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown

    assert "w200" in out
    assert "let x = match y" not in out


def test_two_short_tagged_headings_of_one_level_in_a_row_stay_two(tmp_path: Path) -> None:
    # An empty section: its heading right above the next one's, both bookmarked and tagged
    # as headings of level 2, close together: the first ends far from the column's edge, so
    # it did not wrap.
    ops: list[Op] = [
        _marked(0, 720, "2.1 Scope", 13, "B"),
        _marked(1, 703, "2.2 Purpose", 13, "B"),
        _marked(2, 680, PROSE[0]),
        _marked(3, 660, "2.3 Definitions", 13, "B"),
        _marked(4, 640, PROSE[1]),
    ]
    pdf = _tag(make_pdf(tmp_path / "a.pdf", [ops]), ["H2", "H2", "P", "H2", "P"])
    add_outline(pdf, [(1, "2.1 Scope", 0), (1, "2.2 Purpose", 0), (1, "2.3 Definitions", 0)])
    assert [ln for ln in convert(pdf).markdown.splitlines() if ln.startswith("#")] == [
        "## 2.1 Scope",
        "## 2.2 Purpose",
        "## 2.3 Definitions",
    ]


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_a_row_the_structure_tree_holds_repeated_at_each_page_top_is_content(tmp_path: Path, engine: str) -> None:
    # A browser repeats a long table's header row at the top of each page it runs over, in the
    # structure tree; the footer it prints outside the tree is furniture.
    pages: list[list[Op]] = [
        [
            _marked(0, 760, "Constant and what it means"),
            *(_marked(1 + i, 740 - 40 * i, f"{name}_{i} {PROSE[i % 3]}") for i in range(12)),
            Raw(b"BT /FR 8 Tf 72 40 Td (File system | Node.js documentation) Tj ET"),
        ]
        for name in ("F_OK", "R_OK", "W_OK")
    ]
    pdf = _tag_pages(make_pdf(tmp_path / "a.pdf", pages), [["TH"] + ["TD"] * 12] * 3)

    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown

    assert out.count("Constant and what it means") == 3
    assert "Node.js documentation" not in out


@pytest.mark.parametrize("engine", [ENGINE_ID, PDFIUM_ENGINE_ID])
def test_a_running_header_the_tree_holds_as_an_artifact_element_is_furniture(tmp_path: Path, engine: str) -> None:
    # PDF 2.0 producers may put page furniture in the tree as an element of type Artifact.
    pages: list[list[Op]] = [
        [
            _marked(0, 770, "ACME Corp Annual Report 2025", 9),
            *(_marked(1 + i, 740 - 40 * i, f"{name}_{i} {PROSE[i % 3]}") for i in range(6)),
        ]
        for name in ("one", "two", "three", "four")
    ]
    pdf = _tag_pages(make_pdf(tmp_path / "a.pdf", pages), [["Artifact"] + ["P"] * 6] * 4)

    out = convert(pdf, options=ConvertOptions(engine=engine)).markdown

    assert "ACME Corp" not in out
    assert "four_5" in out


def test_whether_the_tree_names_headings_is_the_documents_whatever_the_pages_selected(tmp_path: Path) -> None:
    # The tree's one heading is on page 2: page 1 alone still reads the bold term as the
    # paragraph the tree holds it as.
    first: list[Op] = [_marked(0, 720, "encoding", 11, "B"), _marked(1, 706, PROSE[0]), _marked(2, 692, PROSE[1])]
    second: list[Op] = [_marked(0, 720, "Options", 16, "B"), _marked(1, 690, PROSE[2])]
    pdf = _tag_pages(make_pdf(tmp_path / "a.pdf", [first, second]), [["P", "P", "P"], ["H2", "P"]])

    out = convert(pdf, pages=[1]).markdown

    assert out.startswith(f"**encoding**\n\n{PROSE[0]}")


def test_a_structure_tree_that_loops_names_no_heading_and_ends(tmp_path: Path) -> None:
    # A broken tree whose kids array holds itself (and no element): read once, no heading found.
    with pikepdf.open(make_pdf(tmp_path / "a.pdf", [[Text(72, 720, PROSE[0], 11)]])) as pdf:
        kids = pdf.make_indirect(pikepdf.Array())
        kids.append(kids)
        pdf.Root.StructTreeRoot = pdf.make_indirect(
            pikepdf.Dictionary(Type=pikepdf.Name.StructTreeRoot, K=kids, ParentTree=pikepdf.Dictionary(Nums=[]))
        )
        assert StructureTags(pdf).names_headings() is False
