"""Word and ODF documents that test what LibreOffice's PDF export writes as its outline, beside
the tune fold of ``bench real`` (issue 24): which paragraphs become bookmarks, and which of them
pandoc (the authored corpus's reference) reads as headings.

Run with an interpreter that has python-docx (not the service's or the bench's venv):

    python3 -m venv /tmp/wh-venv && /tmp/wh-venv/bin/pip install python-docx pikepdf
    /tmp/wh-venv/bin/python bench/word_headings/generate.py      # -> bench/word_headings/docs/

Each document is written as ``NAME.docx`` (or ``NAME.odt``), rendered to ``NAME.pdf`` by
``soffice --headless --convert-to pdf`` (LibreOffice 7.4, the authored corpus's renderer, default
export settings unless the document says otherwise), and given its reference ``NAME.md``:
pandoc's reading (``pandoc -t gfm --wrap=none``, pandoc 2.17 as the corpus) in the corpus's
convention (the Title paragraph `#`, Heading N one level deeper). Score with
``python -m bench.word_headings``; the README says what each export's outline holds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from docx import Document
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt

OUT = Path(__file__).resolve().parent / "docs"
BODY = (
    "The committee met in the spring to review the accounts of the year and agreed on the budget "
    "lines that each team had proposed, with the changes asked for by the board in its letter."
)


def _body(d: Document, n: int = 2) -> None:
    for _ in range(n):
        d.add_paragraph(BODY)


def _bold(d: Document, text: str, size: float) -> object:
    p = d.add_paragraph()
    run = p.add_run(text)
    run.bold, run.font.size = True, Pt(size)
    return p


def _outline_level(pPr: object, level: int) -> None:
    o = OxmlElement("w:outlineLvl")
    o.set(qn("w:val"), str(level))
    pPr.append(o)  # type: ignore[attr-defined]


def _sections(d: Document, parts: list[tuple[str, str | float, int]]) -> Document:
    """Each part a paragraph (text, then its style's name, or a size for bold Normal text)
    followed by that many body paragraphs."""
    for text, style, paragraphs in parts:
        if isinstance(style, str):
            d.add_paragraph(text, style=style)
        else:
            _bold(d, text, style)
        _body(d, paragraphs)
    return d


def doc_headings() -> Document:
    """Title, Heading 1, Heading 2, Heading 1: the ordinary case."""
    return _sections(
        Document(),
        [
            ("Annual Review", "Title", 1),
            ("Findings", "Heading 1", 2),
            ("Budget lines", "Heading 2", 2),
            ("Next steps", "Heading 1", 2),
        ],
    )


def doc_h1_h3() -> Document:
    """A Heading 3 straight under a Heading 1: the outline nests it at depth 2."""
    return _sections(Document(), [("Findings", "Heading 1", 1), ("Budget lines", "Heading 3", 2)])


def doc_h2_alone() -> Document:
    """A Heading 2 the only heading: the outline has it at depth 1."""
    d = Document()
    _body(d, 1)
    return _sections(d, [("Budget lines", "Heading 2", 2)])


def doc_bold_normal() -> Document:
    """Large bold Normal paragraphs and no Heading style: no outline; pandoc reads bold text."""
    return _sections(
        Document(),
        [("Annual Review", 20, 1), ("Findings", 16, 2), ("Budget lines", 14, 2), ("Next steps", 11, 2)],
    )


def doc_title_only() -> Document:
    return _sections(Document(), [("Annual Review", "Title", 3)])


def doc_title_subtitle() -> Document:
    return _sections(Document(), [("Annual Review", "Title", 0), ("The year in figures", "Subtitle", 3)])


def doc_outline_level_normal() -> Document:
    """Bold Normal paragraphs given an outline level of their own (w:outlineLvl in the
    paragraph): bookmarks, but no headings for pandoc."""
    d = Document()
    for text, level in (("Findings", 0), ("Budget lines", 1)):
        p = _bold(d, text, 12)
        _outline_level(p._p.get_or_add_pPr(), level)  # type: ignore[attr-defined]
        _body(d)
    return d


def doc_custom_outline_style() -> Document:
    """A style of the author's (not named Heading) with an outline level: a bookmark, no
    heading for pandoc."""
    d = Document()
    s = d.styles.add_style("Section Title", WD_STYLE_TYPE.PARAGRAPH)
    s.base_style = d.styles["Normal"]
    s.font.size, s.font.bold = Pt(16), True
    _outline_level(s.element.get_or_add_pPr(), 0)
    d.add_paragraph("Findings", style="Section Title")
    _body(d)
    return d


def doc_based_on_heading() -> Document:
    """A style based on Heading 1 (a bookmark, a heading for pandoc) and a large bold style of
    the author's based on Normal (neither)."""
    d = Document()
    s = d.styles.add_style("My Section", WD_STYLE_TYPE.PARAGRAPH)
    s.base_style = d.styles["Heading 1"]
    d.add_paragraph("Findings", style="My Section")
    _body(d)
    s2 = d.styles.add_style("Plain Big", WD_STYLE_TYPE.PARAGRAPH)
    s2.base_style = d.styles["Normal"]
    s2.font.size, s2.font.bold = Pt(18), True
    d.add_paragraph("Budget lines", style="Plain Big")
    _body(d)
    return d


def doc_heading_no_level() -> Document:
    """Heading 1 and 2 whose style definitions carry no w:outlineLvl (Word writes one; some
    tools do not): LibreOffice gives them no outline level, so no outline at all, while pandoc
    reads them as headings by their names."""
    d = Document()
    for name in ("Heading 1", "Heading 2"):
        for o in d.styles[name].element.findall(".//" + qn("w:outlineLvl")):
            o.getparent().remove(o)
    d.add_paragraph("Findings", style="Heading 1")
    _body(d)
    d.add_paragraph("Budget lines", style="Heading 2")
    _body(d)
    return d


def doc_toc_heading() -> Document:
    """Word's TOC Heading (based on Heading 1, outline level 9 = body text) above a Heading 1:
    the outline leaves it out, pandoc reads it as a heading."""
    d = Document()
    d.add_paragraph("Contents", style="TOC Heading")
    _body(d, 1)
    d.add_paragraph("Findings", style="Heading 1")
    _body(d)
    return d


def doc_undefined_style() -> Document:
    """Paragraphs naming the style ids Heading1 / Heading2 that styles.xml does not define (as
    a program may write them): Normal paragraphs for LibreOffice and for pandoc."""
    d = Document()
    for sid in ("Heading1", "Heading2"):
        st = d.styles.element.find(f".//{qn('w:style')}[@{qn('w:styleId')}='{sid}']")
        st.getparent().remove(st)
    for text, sid in (("Findings", "Heading1"), ("Budget lines", "Heading2")):
        p = d.add_paragraph(text)
        ps = OxmlElement("w:pStyle")
        ps.set(qn("w:val"), sid)
        p._p.get_or_add_pPr().insert(0, ps)
        _body(d)
    return d


def doc_table_empty() -> Document:
    """A Heading 1 in a table cell (a bookmark) and an empty Heading 1 (none)."""
    d = Document()
    _body(d, 1)
    t = d.add_table(rows=1, cols=2)
    cell = t.cell(0, 0).paragraphs[0]
    cell.style = d.styles["Heading 1"]
    cell.add_run("Findings")
    t.cell(0, 1).text = "Reviewed"
    _body(d, 1)
    d.add_paragraph("", style="Heading 1")
    _body(d, 1)
    d.add_paragraph("Next steps", style="Heading 1")
    _body(d)
    return d


DOCS: dict[str, Callable[[], Document]] = {
    "headings": doc_headings,
    "h1-h3": doc_h1_h3,
    "h2-alone": doc_h2_alone,
    "bold-normal": doc_bold_normal,
    "title-only": doc_title_only,
    "title-subtitle": doc_title_subtitle,
    "outline-level-normal": doc_outline_level_normal,
    "custom-outline-style": doc_custom_outline_style,
    "based-on-heading": doc_based_on_heading,
    "heading-no-level": doc_heading_no_level,
    "toc-heading": doc_toc_heading,
    "undefined-style": doc_undefined_style,
    "table-empty": doc_table_empty,
}
# Rendered from another document's source with other export settings: name -> (source, filter).
# "Export outlines" off: the headings are there, the outline is not (and nothing else in the
# file tells such an export from one without outline levels).
EXPORTS = {
    "headings-bookmarks-off": (
        "headings",
        'pdf:writer_pdf_Export:{"ExportBookmarks":{"type":"boolean","value":"false"}}',
    ),
}
# ODF documents, from Markdown by pandoc: headings numbered by LibreOffice's outline numbering
# (the number is printed and is in the bookmark; pandoc's reference drops it).
ODT = {
    "numbered-odt": "# Findings\n\n" + BODY + "\n\n## Budget lines\n\n" + BODY + "\n\n# Next steps\n\n" + BODY + "\n",
}
_OUTLINE_NUMBERING = (
    '<text:outline-style style:name="Outline">'
    + "".join(
        f'<text:outline-level-style text:level="{i}" style:num-format="1" text:display-levels="{i}" '
        'style:num-suffix=" "><style:list-level-properties '
        'text:list-level-position-and-space-mode="label-alignment"><style:list-level-label-alignment '
        'text:label-followed-by="space"/></style:list-level-properties></text:outline-level-style>'
        for i in range(1, 11)
    )
    + "</text:outline-style>"
)


def _soffice(src: Path, convert_to: str, out: Path) -> Path:
    with tempfile.TemporaryDirectory() as profile, tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation=file://{profile}",
                "--headless",
                "--convert-to",
                convert_to,
                "--outdir",
                tmp,
                str(src),
            ],
            check=True,
            capture_output=True,
        )
        shutil.move(str(Path(tmp) / (src.stem + ".pdf")), out)
    return out


def _numbered_odt(markdown: str, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain.odt"
        subprocess.run(["pandoc", "-f", "markdown", "-o", str(plain)], input=markdown, text=True, check=True)
        with zipfile.ZipFile(plain) as zin, zipfile.ZipFile(out, "w") as zout:
            for item in zin.infolist():
                data = zin.read(item.filename)
                if item.filename == "styles.xml":
                    styles = data.decode()
                    if "<text:outline-style" in styles:
                        styles = re.sub(
                            r"<text:outline-style.*?</text:outline-style>", _OUTLINE_NUMBERING, styles, flags=re.S
                        )
                    else:
                        styles = styles.replace("</office:styles>", _OUTLINE_NUMBERING + "</office:styles>")
                    data = styles.encode()
                zout.writestr(item, data)


def _reference(src: Path) -> str:
    fmt = "odt" if src.suffix == ".odt" else "docx"
    md = subprocess.run(
        ["pandoc", "-f", fmt, "-t", "gfm", "--wrap=none", str(src)], check=True, capture_output=True, text=True
    ).stdout
    # The corpus's convention: Title `#`, Heading N one level deeper than pandoc's. pandoc's
    # ODT reader writes an anchor span into each heading: the corpus normalises it away.
    md = re.sub(r'<span id="[^"]*"></span>', "", md)
    md = "\n".join("#" + ln if ln.startswith("#") else ln for ln in md.split("\n"))
    if fmt == "docx":
        # The Title paragraph as `#`, its Subtitle as a paragraph after it (pandoc keeps both
        # as metadata only).
        paragraphs = Document(str(src)).paragraphs
        front = [(p.style.name if p.style is not None else "", p.text) for p in paragraphs]
        md = "".join(f"# {t}\n\n" if s == "Title" else f"{t}\n\n" for s, t in front if s in ("Title", "Subtitle")) + md
    return md


# References pandoc's GFM cannot give in the corpus's convention (a table as a pipe table, each
# cell's content flattened to one line; an empty heading dropped): written by hand.
REFERENCES = {
    "table-empty": f"{BODY}\n\n| Findings | Reviewed |\n|---|---|\n\n{BODY}\n\n{BODY}\n\n## Next steps\n\n{BODY}\n\n{BODY}\n",
}


def _outline(pdf: Path) -> list[tuple[int, str]]:
    """The PDF's bookmarks (depth, title), read with pikepdf when it is importable."""
    try:
        import pikepdf
    except ImportError:
        return []
    entries: list[tuple[int, str]] = []
    with pikepdf.open(pdf) as doc:
        node_stack = []
        root = doc.Root.get("/Outlines")
        if root is not None and "/First" in root:
            node_stack.append((root.First, 1))
        while node_stack:
            node, depth = node_stack.pop()
            while node is not None:
                entries.append((depth, str(node.get("/Title", ""))))
                if "/First" in node:
                    node_stack.append((node.get("/Next"), depth))
                    node, depth = node.First, depth + 1
                    continue
                node = node.get("/Next")
    return entries


def main(names: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    record = OUT / "outlines.json"
    outlines: dict[str, list[tuple[int, str]]] = json.loads(record.read_text()) if record.exists() else {}
    for name in names or [*DOCS, *EXPORTS, *ODT]:
        if name in DOCS:
            src = OUT / f"{name}.docx"
            DOCS[name]().save(src)
            pdf = _soffice(src, "pdf", OUT / f"{name}.pdf")
        elif name in EXPORTS:
            source, convert_to = EXPORTS[name]
            src = OUT / f"{source}.docx"
            pdf = _soffice(src, convert_to, OUT / f"{name}.pdf")
        else:
            src = OUT / f"{name}.odt"
            _numbered_odt(ODT[name], src)
            pdf = _soffice(src, "pdf", OUT / f"{name}.pdf")
        (OUT / f"{name}.md").write_text(REFERENCES.get(name) or _reference(src))
        outlines[name] = _outline(pdf)
        print(name, outlines[name], file=sys.stderr)
    record.write_text(json.dumps(outlines, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
