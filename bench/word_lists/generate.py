"""Word documents with lists as Word writes them, rendered by LibreOffice: material for the
engine's list rules (issue 24), beside the tune fold of ``bench real``.

Run with an interpreter that has python-docx (not the service's or the bench's venv):

    python3 -m venv /tmp/wl-venv && /tmp/wl-venv/bin/pip install python-docx
    /tmp/wl-venv/bin/python bench/word_lists/generate.py      # -> bench/word_lists/docs/

Each document is written as ``NAME.docx`` (numbering definitions written by hand: python-docx
has no numbering API), rendered to ``NAME.pdf`` by ``soffice --headless --convert-to pdf``
(LibreOffice 7.4, the authored corpus's renderer), and given its reference ``NAME.md``: pandoc's
reading of the Word XML (``pandoc -f docx -t gfm --wrap=none``, as the authored corpus), when
pandoc is installed; otherwise the committed reference is kept. Score with
``python -m bench.word_lists`` (see ``bench/word_lists/__main__.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docx import Document
from docx.enum.text import WD_BREAK
from docx.oxml import parse_xml
from docx.shared import Pt

OUT = Path(__file__).resolve().parent / "docs"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


@dataclass(frozen=True)
class Level:
    fmt: str  # numFmt: bullet, decimal, lowerLetter, upperLetter, lowerRoman, upperRoman
    text: str  # lvlText: the marker ("%1." for numbers, the glyph for bullets)
    left: int  # left indent of the item's text, twips
    hanging: int = 360  # the marker hangs this far left of the text, twips
    font: str = ""  # the marker's font (Symbol, Wingdings, Courier New); "" = the text's
    suffix: str = "tab"  # what follows the marker: tab, space, nothing


def _lvl(i: int, lv: Level) -> str:
    font = f'<w:rPr><w:rFonts w:ascii="{lv.font}" w:hAnsi="{lv.font}" w:hint="default"/></w:rPr>' if lv.font else ""
    suff = "" if lv.suffix == "tab" else f'<w:suff w:val="{lv.suffix}"/>'
    return (
        f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="{lv.fmt}"/>{suff}'
        f'<w:lvlText w:val="{lv.text}"/><w:lvlJc w:val="left"/>'
        f'<w:pPr><w:ind w:left="{lv.left}" w:hanging="{lv.hanging}"/></w:pPr>{font}</w:lvl>'
    )


def numbering_xml(abstracts: list[list[Level]], nums: list[int]) -> str:
    """A numbering part: one abstractNum per list of levels; num i+1 uses abstract nums[i]."""
    parts = [f'<w:numbering xmlns:w="{W}">']
    for k, levels in enumerate(abstracts):
        parts.append(f'<w:abstractNum w:abstractNumId="{k}"><w:multiLevelType w:val="hybridMultilevel"/>')
        parts.extend(_lvl(i, lv) for i, lv in enumerate(levels))
        parts.append("</w:abstractNum>")
    for i, k in enumerate(nums):
        parts.append(f'<w:num w:numId="{i + 1}"><w:abstractNumId w:val="{k}"/></w:num>')
    parts.append("</w:numbering>")
    return "".join(parts)


# Word's own level sets.
SYMBOL = "\uf0b7"
WD_SQUARE = "\uf0a7"
WD_ARROW = "\uf0d8"
WD_DIAMOND = "\uf076"
WORD_BULLETS = [
    Level("bullet", SYMBOL, 720, font="Symbol"),
    Level("bullet", "o", 1440, font="Courier New"),
    Level("bullet", WD_SQUARE, 2160, font="Wingdings"),
]
WORD_NUMBERS = [  # Word's default numbered list: 1. / a. / i.
    Level("decimal", "%1.", 720),
    Level("lowerLetter", "%2.", 1440),
    Level("lowerRoman", "%3.", 2160, hanging=180),
]
OUTLINE = [  # a multilevel list: 1. / 1.1. / 1.1.1.
    Level("decimal", "%1.", 360, hanging=360),
    Level("decimal", "%1.%2.", 792, hanging=432),
    Level("decimal", "%1.%2.%3.", 1224, hanging=504),
]
PAREN = [
    Level("decimal", "%1)", 720),
    Level("lowerLetter", "%2)", 1440),
    Level("lowerRoman", "(%3)", 2160, hanging=432),
]
LETTERS = [Level("lowerLetter", "(%1)", 720, hanging=432), Level("lowerRoman", "(%2)", 1440, hanging=432)]
UPPER = [Level("upperRoman", "%1.", 720, hanging=432), Level("upperLetter", "%2.", 1440)]
FANCY_BULLETS = [
    Level("bullet", WD_ARROW, 720, font="Wingdings"),
    Level("bullet", WD_DIAMOND, 1440, font="Wingdings"),
    Level("bullet", "\u2013", 2160),
]
TEXT_BULLETS = [Level("bullet", "\u2022", 720), Level("bullet", "\u2013", 1440)]
SPACE_BULLETS = [Level("bullet", SYMBOL, 360, hanging=360, font="Symbol", suffix="space")]


LONG = (
    "This item is long enough to wrap onto a second line of the page, so that its continuation "
    "stands under its text and not under its marker, as a hanging indent sets it"
)
SENTENCES = [
    "Check the supply of paper before the meeting starts",
    "Write the minutes and send them to everyone who attended",
    "Book the large room on the second floor for Thursday",
    "Order coffee, tea and a plate of biscuits",
    "Ask the finance team for the figures of the last quarter",
    "Print the agenda in twelve copies",
    "Collect the signed forms from the front desk",
    "Update the contact list with the new addresses",
    "Archive the old reports in the shared folder",
    "Remind the speakers of their time limits",
]

TAILS = ["", "this week", "before noon", "for the board", "by Friday", "with the new team", "once more"]


class Doc:
    def __init__(self, font: str = "Calibri", size: float = 11) -> None:
        self.doc = Document()
        style = self.doc.styles["Normal"]
        style.font.name = font
        style.font.size = Pt(size)
        rpr = style.element.get_or_add_rPr()
        rfonts = rpr.find(f"{{{W}}}rFonts")
        for attr in ("ascii", "hAnsi", "cs", "eastAsia"):
            rfonts.set(f"{{{W}}}{attr}", font)
        self.abstracts: list[list[Level]] = []
        self.nums: list[int] = []
        self.k = 0

    def numbering(self, levels: list[Level]) -> int:
        """A new list (num id) of these levels; the same level set shares its abstractNum."""
        if levels not in self.abstracts:
            self.abstracts.append(levels)
        self.nums.append(self.abstracts.index(levels))
        return len(self.nums)

    def para(self, text: str, container: Any = None, style: str | None = None) -> Any:
        target = container if container is not None else self.doc
        p = target.add_paragraph(text, style=style)
        return p

    def item(self, text: str, num: int, level: int = 0, container: Any = None, style: str = "List Paragraph") -> None:
        p = self.para(text, container, style if style in self.styles() else None)
        ppr = p._p.get_or_add_pPr()
        ppr.append(parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="{level}"/><w:numId w:val="{num}"/></w:numPr>'))

    def styles(self) -> set[str]:
        return {s.name for s in self.doc.styles}

    def next(self) -> str:
        """A sentence no other item of the document has (the scorer pairs items by text)."""
        self.k += 1
        k = self.k - 1
        tail = TAILS[(k // len(SENTENCES)) % len(TAILS)]
        return (SENTENCES[k % len(SENTENCES)] + " " + tail).strip()

    def long(self) -> str:
        self.k += 1
        return LONG + " " + TAILS[self.k % len(TAILS)] if self.k % len(TAILS) else LONG

    def save(self, path: Path) -> None:
        part = self.doc.part.numbering_part
        part._element = parse_xml(numbering_xml(self.abstracts, self.nums))
        self.doc.save(str(path))


def simple_list(
    name_levels: list[Level], depths: list[int], font: str = "Calibri", size: float = 11, long: int = -1
) -> Doc:
    d = Doc(font, size)
    d.para("The list below follows this paragraph, which introduces it.")
    num = d.numbering(name_levels)
    for i, depth in enumerate(depths):
        d.item(d.long() if i == long else d.next(), num, depth)
    d.para("A paragraph after the list closes the section.")
    return d


def doc_bullets_symbol() -> Doc:
    return simple_list(WORD_BULLETS, [0, 0, 1, 1, 2, 0, 1, 0], long=1)


def doc_bullets_serif() -> Doc:
    return simple_list(WORD_BULLETS, [0, 1, 2, 2, 1, 0, 0], font="Times New Roman", size=12, long=5)


def doc_numbers_default() -> Doc:
    return simple_list(WORD_NUMBERS, [0, 0, 1, 1, 2, 2, 1, 0, 0], long=3)


def doc_numbers_outline() -> Doc:
    return simple_list(OUTLINE, [0, 1, 1, 2, 2, 1, 0, 1, 0], font="Arial", size=10, long=2)


def doc_numbers_paren() -> Doc:
    return simple_list(PAREN, [0, 1, 1, 2, 2, 0, 1, 0], long=4)


def doc_letters() -> Doc:
    d = Doc("Cambria", 11)
    d.para("The contractor shall:")
    num = d.numbering(LETTERS)
    for depth in [0, 0, 1, 1, 1, 0]:
        d.item(d.next(), num, depth)
    d.para("The client shall, in turn, do the following:")
    num = d.numbering(UPPER)
    for depth in [0, 1, 1, 0, 0]:
        d.item(d.next(), num, depth)
    d.para("Both parties sign below.")
    return d


def doc_fancy_bullets() -> Doc:
    return simple_list(FANCY_BULLETS, [0, 1, 2, 2, 1, 0, 0], font="Arial", size=11, long=0)


def doc_text_bullets() -> Doc:
    return simple_list(TEXT_BULLETS, [0, 0, 1, 1, 0], font="Georgia", size=11, long=2)


def doc_space_bullets() -> Doc:
    return simple_list(SPACE_BULLETS, [0, 0, 0, 0], long=1)


def doc_continued() -> Doc:
    d = Doc("Calibri", 11)
    d.para("Steps to install the printer driver:")
    num = d.numbering(WORD_NUMBERS)
    d.item(d.next(), num)
    d.item(d.next(), num)
    d.para("Wait until the light on the front of the printer turns green, then go on.")
    d.item(d.next(), num)
    d.item(d.long(), num)
    d.para("Things to keep in mind:")
    bul = d.numbering(WORD_BULLETS)
    d.item(d.next(), bul)
    d.item(d.next(), bul)
    d.para("The driver is updated every month.")
    return d


def doc_table_lists() -> Doc:
    d = Doc("Calibri", 11)
    d.para("The table lists the tasks of each team.")
    table = d.doc.add_table(rows=3, cols=2)
    table.style = d.doc.styles["Table Grid"]
    bul = d.numbering(WORD_BULLETS)
    nums = d.numbering(WORD_NUMBERS)
    table.cell(0, 0).text = "Team"
    table.cell(0, 1).text = "Tasks"
    table.cell(1, 0).text = "Office"
    c = table.cell(1, 1)
    c.text = "Weekly:"
    d.item(d.next(), bul, container=c)
    d.item(d.next(), bul, container=c)
    table.cell(2, 0).text = "Finance"
    c = table.cell(2, 1)
    c.text = "In order:"
    d.item(d.next(), nums, container=c)
    d.item(d.next(), nums, container=c)
    d.item(d.next(), nums, container=c)
    d.para("Each team reports to the board.")
    return d


def doc_mixed_pages() -> Doc:
    """A longer document: several lists of several kinds between paragraphs, over pages."""
    d = Doc("Calibri", 11)
    kinds = [WORD_BULLETS, WORD_NUMBERS, OUTLINE, FANCY_BULLETS, PAREN]
    for round_ in range(3):
        for levels in kinds:
            d.para(
                "This paragraph of running text stands between two lists and is long enough to wrap over "
                "more than one line of the page, as the body text of a report does."
            )
            num = d.numbering(levels)
            for i, depth in enumerate([0, 1, 0, 1, 2, 0][: 4 + round_]):
                d.item(d.long() if i == 2 else d.next(), num, depth)
    return d


def doc_numbered_no_style() -> Doc:
    """List items in the Normal style (numbering set on the paragraph only), as many
    converted documents have them."""
    d = Doc("Calibri", 11)
    d.para("Items in the Normal style:")
    num = d.numbering(WORD_NUMBERS)
    for depth in [0, 0, 1, 0]:
        d.item(d.next(), num, depth, style="Normal")
    d.para("And bullets in the Normal style:")
    bul = d.numbering(WORD_BULLETS)
    for depth in [0, 1, 0, 0]:
        d.item(d.next(), bul, depth, style="Normal")
    d.para("End of the lists.")
    return d


def doc_typed() -> Doc:
    """Bullets and numbers typed as text in Normal paragraphs (pandoc reads them as text)."""
    d = Doc("Calibri", 11)
    d.para("Typed by hand:")
    for s in SENTENCES[:3]:
        d.para("\u2022\t" + s)
    d.para("And with hyphens:")
    for s in SENTENCES[3:5]:
        d.para("- " + s)
    d.para("Options: \u2610 Yes \u2610 No")
    p = d.para("The end.")
    p.runs[0].add_break(WD_BREAK.LINE)
    return d


def doc_bold_items() -> Doc:
    """Numbered items set in bold (short titles), each with a paragraph under it, beside real
    numbered headings (Heading 1 with outline numbering): only the outline tells them apart."""
    d = Doc("Calibri", 11)
    heads = d.numbering([Level("decimal", "%1.", 432, hanging=432)])
    h = d.doc.add_paragraph("Terms of the agreement", style="Heading 1")
    h._p.get_or_add_pPr().append(
        parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="0"/><w:numId w:val="{heads}"/></w:numPr>')
    )
    d.para("The agreement covers the points below, each explained in a paragraph of its own.")
    num = d.numbering(WORD_NUMBERS)
    for title in ["Scope of the work", "Payment", "Duration and notice"]:
        p = d.doc.add_paragraph(style="List Paragraph")
        p.add_run(title).bold = True
        p._p.get_or_add_pPr().append(
            parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="0"/><w:numId w:val="{num}"/></w:numPr>')
        )
        body = d.doc.add_paragraph(d.next() + ", and the parties agree on it in writing.", style="List Paragraph")
        body.paragraph_format.left_indent = Pt(36)
    h = d.doc.add_paragraph("Signatures", style="Heading 1")
    h._p.get_or_add_pPr().append(
        parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="0"/><w:numId w:val="{heads}"/></w:numPr>')
    )
    d.para("Bullets with a bold lead-in:")
    bul = d.numbering(WORD_BULLETS)
    for lead in ["Client:", "Contractor:"]:
        p = d.doc.add_paragraph(style="List Paragraph")
        p.add_run(lead).bold = True
        p.add_run(" " + d.next())
        p._p.get_or_add_pPr().append(
            parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="0"/><w:numId w:val="{bul}"/></w:numPr>')
        )
    d.para("Signed in two copies.")
    return d


def doc_small_report() -> Doc:
    """A report in a small sans face: Heading styles, lists of both kinds, a roman list."""
    d = Doc("Arial", 10)
    d.doc.add_paragraph("Quarterly report", style="Title")
    d.doc.add_paragraph("Summary", style="Heading 1")
    d.para("The quarter went well; the main points follow.")
    bul = d.numbering(WORD_BULLETS)
    for depth in [0, 0, 1, 0]:
        d.item(d.next(), bul, depth)
    d.doc.add_paragraph("Actions", style="Heading 1")
    num = d.numbering(UPPER)
    for depth in [0, 0, 1, 1, 0]:
        d.item(d.next(), num, depth)
    d.doc.add_paragraph("Details", style="Heading 2")
    out = d.numbering(OUTLINE)
    for depth in [0, 1, 2, 2, 1, 0]:
        d.item(d.next(), out, depth)
    d.para("End of the report.")
    return d


def _styled_item(d: Doc, text: str, num: int, *, bold: bool = False, size: float = 0) -> None:
    """An item whose runs and paragraph mark (which Word's number takes its font from) are
    bold or of another size than the body."""
    p = d.doc.add_paragraph(style="List Paragraph")
    run = p.add_run(text)
    run.bold = bold or None
    ppr = p._p.get_or_add_pPr()
    ppr.append(parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="0"/><w:numId w:val="{num}"/></w:numPr>'))
    mark = "<w:b/>" if bold else ""
    if size:
        run.font.size = Pt(size)
        mark += f'<w:sz w:val="{int(size * 2)}"/>'
    if mark:
        ppr.append(parse_xml(f'<w:rPr xmlns:w="{W}">{mark}</w:rPr>'))


def doc_bold_numbers() -> Doc:
    """Numbered items whose number and text are bold (short titles, a paragraph under each),
    numbered items set larger than the body, and bold bullets."""
    d = Doc("Calibri", 11)
    d.para("A numbered list of bold titles, each with its paragraph:")
    num = d.numbering(WORD_NUMBERS)
    for title in ["Introduction", "Scope of the agreement", "Terms and conditions"]:
        _styled_item(d, title, num, bold=True)
        d.para(d.next() + ", and so on for the rest of this section of the text.")
    d.para("A list in a larger size than the body:")
    num = d.numbering(WORD_NUMBERS)
    for _ in range(3):
        _styled_item(d, d.next(), num, size=14)
    d.para("Bullets in bold:")
    num = d.numbering(WORD_BULLETS)
    for _ in range(3):
        _styled_item(d, d.next(), num, bold=True)
    d.para("The end of the document, which is long enough to be the body text of the page, and more so.")
    return d


# Bullets Word users pick from the Symbol and Wingdings fonts (private-use code points) and
# from the text font or a fallback (dingbats, arrows, geometric shapes, typographic marks).
SYMBOL_BULLETS = [
    ("\uf0fc", "Wingdings"),  # check mark
    ("\uf071", "Wingdings"),  # hollow box
    ("\uf06c", "Wingdings"),  # disc
    ("\uf06e", "Wingdings"),  # square
    ("\uf0a8", "Symbol"),  # diamond
    ("\uf0de", "Symbol"),  # arrow
]
TEXT_GLYPHS = [
    "\u2756",
    "\u2794",
    "\u25ba",
    "\u2192",
    "\u25ca",
    "\u2666",
    "\u25ab",
    "\u00bb",
    ">",
    "\u2717",
    "\u21d2",
    "\u2605",
    "o",
    "\u2212",
    "\u25aa",
]


def doc_bullet_glyphs() -> Doc:
    """One short list per bullet glyph: symbol fonts' private-use bullets and text glyphs."""
    d = Doc("Calibri", 11)
    d.para("Each list below uses a bullet of its own.")
    for glyph, font in [*SYMBOL_BULLETS, *((g, "") for g in TEXT_GLYPHS)]:
        num = d.numbering([Level("bullet", glyph, 720, font=font)])
        d.item(d.next(), num)
        d.item(d.next(), num)
        d.para("A paragraph between two lists, long enough to be the body text of the page here.")
    return d


def doc_custom_indents() -> Doc:
    """Multi-level lists with indents Word users set: markers at the margin, narrow steps,
    a wide hanging indent, five levels deep."""
    d = Doc("Calibri", 11)
    d.para("A numbered list whose numbers stand at the margin:")
    levels = [
        Level("decimal", "%1.", 360, hanging=360),
        Level("lowerLetter", "%2.", 720, hanging=360),
        Level("lowerRoman", "%3.", 1080, hanging=360),
    ]
    num = d.numbering(levels)
    for depth in [0, 1, 1, 2, 2, 0, 1, 0]:
        d.item(d.next(), num, depth)
    d.para("Bullets five levels deep, a quarter inch apart:")
    bul = d.numbering(
        [
            Level("bullet", g, 360 * (i + 1), hanging=360, font=f)
            for i, (g, f) in enumerate(
                [
                    (SYMBOL, "Symbol"),
                    ("o", "Courier New"),
                    (WD_SQUARE, "Wingdings"),
                    (SYMBOL, "Symbol"),
                    ("o", "Courier New"),
                ]
            )
        ]
    )
    for depth in [0, 1, 2, 3, 4, 3, 2, 1, 0]:
        d.item(d.next(), bul, depth)
    d.para("A list with a wide hanging indent:")
    wide = d.numbering([Level("decimal", "%1.", 1440, hanging=1080), Level("decimal", "%1.%2.", 2160, hanging=1080)])
    for depth in [0, 0, 1, 1, 0]:
        d.item(d.next(), wide, depth)
    d.para("The end of the lists, in a paragraph of its own.")
    return d


UPPER_PAREN = [Level("upperLetter", "%1)", 720), Level("lowerRoman", "%2)", 1440)]
PAREN_UPPER = [Level("upperLetter", "(%1)", 720, hanging=432), Level("decimal", "(%2)", 1440, hanging=432)]
ROMAN_LOWER = [Level("lowerRoman", "%1.", 720, hanging=432), Level("lowerLetter", "(%2)", 1440, hanging=432)]


def doc_labels_upper() -> Doc:
    """Capital letters and roman numerals, parenthesised labels, short items of a word or two."""
    d = Doc("Calibri", 11)
    d.para("Capital roman numerals, then capital letters:")
    num = d.numbering(UPPER)
    for depth in [0, 0, 1, 1, 0]:
        d.item(d.next(), num, depth)
    d.para("Short items, lettered:")
    num = d.numbering([Level("upperLetter", "%1.", 720)])
    for word in ["Apples", "Pears", "Plums"]:
        d.item(word, num)
    d.para("Short items, numbered:")
    num = d.numbering(WORD_NUMBERS)
    for word, depth in [("one", 0), ("two", 0), ("red", 1), ("blue", 1), ("three", 0)]:
        d.item(word, num, depth)
    d.para("Capital letters with a parenthesis:")
    num = d.numbering(UPPER_PAREN)
    for depth in [0, 1, 1, 0]:
        d.item(d.next(), num, depth)
    d.para("Parenthesised capitals:")
    num = d.numbering(PAREN_UPPER)
    for depth in [0, 1, 0]:
        d.item(d.next(), num, depth)
    d.para("Lower roman numerals:")
    num = d.numbering(ROMAN_LOWER)
    for depth in [0, 0, 1, 0]:
        d.item(d.next(), num, depth)
    d.para("The end.")
    return d


def doc_restarts() -> Doc:
    """Lists that restart at one after a paragraph, and lists right after headings."""
    d = Doc("Calibri", 11)
    d.doc.add_paragraph("Preparation", style="Heading 1")
    num = d.numbering(WORD_NUMBERS)
    for depth in [0, 0, 0]:
        d.item(d.next(), num, depth)
    d.para("Then, a new list that starts again at one:")
    num = d.numbering(WORD_NUMBERS)
    for depth in [0, 0]:
        d.item(d.next(), num, depth)
    d.doc.add_paragraph("Materials", style="Heading 2")
    bul = d.numbering(WORD_BULLETS)
    for depth in [0, 0, 1]:
        d.item(d.next(), bul, depth)
    d.doc.add_paragraph("Follow-up", style="Heading 1")
    num = d.numbering(PAREN)
    for depth in [0, 1, 0]:
        d.item(d.next(), num, depth)
    d.doc.add_paragraph("Notes", style="Heading 2")
    d.para("A closing paragraph under the last heading.")
    return d


def doc_long_items() -> Doc:
    """Items of several lines, and a list that runs over a page break."""
    d = Doc("Calibri", 11)
    d.para("Long items, numbered and bulleted, some running over to the next page.")
    num = d.numbering(WORD_NUMBERS)
    for i in range(9):
        d.item(d.long() + " " + d.long(), num, 1 if i % 3 == 2 else 0)
    bul = d.numbering(WORD_BULLETS)
    for i in range(24):
        d.item(d.long() if i % 2 else d.next(), bul, i % 2)
    d.para("The paragraph after the lists.")
    return d


def _lead_in_item(d: Doc, lead: str, num: int) -> None:
    """An item opened by `lead` in bold, then a sentence in the regular weight."""
    p = d.doc.add_paragraph(style="List Paragraph")
    p.add_run(lead).bold = True
    p.add_run(" " + d.next() + ".")
    p._p.get_or_add_pPr().append(
        parse_xml(f'<w:numPr xmlns:w="{W}"><w:ilvl w:val="0"/><w:numId w:val="{num}"/></w:numPr>')
    )


def doc_lead_ins() -> Doc:
    """Items opened by a bold lead-in: a term and a colon, a bold sentence, a bold number."""
    d = Doc("Calibri", 11)
    d.para("Terms, each with a bold lead-in:")
    bul = d.numbering(WORD_BULLETS)
    for lead in ["Scope.", "Payment terms:", "Notice \u2013"]:
        _lead_in_item(d, lead, bul)
    d.para("Steps, each with a bold lead-in:")
    num = d.numbering(WORD_NUMBERS)
    for lead in ["Prepare:", "Review:", "Sign:"]:
        _lead_in_item(d, lead, num)
    d.para("Short bold items:")
    num = d.numbering(WORD_NUMBERS)
    for title in ["Budget", "Staff", "Schedule"]:
        _styled_item(d, title, num, bold=True)
    d.para("The end of the lead-ins.")
    return d


def doc_tabbed_numbers() -> Doc:
    """Numbered paragraphs typed with a tab after the number (Normal style, no numbering),
    numbered lists whose number is followed by a space or by nothing, and numbers past nine."""
    d = Doc("Calibri", 11)
    d.para("Typed numbers with a tab:")
    for i, s in enumerate(SENTENCES[:3]):
        d.para(f"{i + 1}.\t{s}")
    d.para("Numbering followed by a space:")
    num = d.numbering([Level("decimal", "%1.", 360, hanging=360, suffix="space")])
    for _ in range(3):
        d.item(d.next(), num)
    d.para("Numbering followed by nothing:")
    num = d.numbering([Level("decimal", "%1)", 360, hanging=360, suffix="nothing")])
    for _ in range(2):
        d.item(" " + d.next(), num)
    d.para("A long numbered list:")
    num = d.numbering(WORD_NUMBERS)
    for _ in range(12):
        d.item(d.next(), num)
    d.para("The end of the numbers.")
    return d


def doc_tabbed_items() -> Doc:
    """Items whose text has a tab in it (a term, a tab stop, its value), numbered and
    bulleted: a column of markers, then two columns of text."""
    d = Doc("Calibri", 11)
    d.para("Rooms and their floors:")
    num = d.numbering(WORD_NUMBERS)
    for name, floor in [("Library", "ground floor"), ("Canteen", "first floor"), ("Archive", "basement")]:
        d.item(f"{name}\t\t{floor}", num)
    d.para("Contacts and their numbers:")
    bul = d.numbering(FANCY_BULLETS)
    for name, phone in [("Reception", "extension 100"), ("Security", "extension 200"), ("Help desk", "extension 300")]:
        d.item(f"{name}\t\t{phone}", bul)
    d.para("The same with a wide hanging indent:")
    wide = d.numbering([Level("bullet", WD_ARROW, 1440, hanging=1080, font="Wingdings")])
    for name, phone in [("Garage", "extension 400"), ("Attic", "extension 500"), ("Kitchen", "extension 600")]:
        d.item(f"{name}\t{phone}", wide)
    d.para("And numbered:")
    wide = d.numbering([Level("decimal", "%1.", 1440, hanging=1080)])
    for name, phone in [("Gate", "extension 700"), ("Door", "extension 800"), ("Roof", "extension 900")]:
        d.item(f"{name}\t{phone}", wide)
    d.para("The end of the tabbed items.")
    return d


DOCS = {
    "bold-numbers": doc_bold_numbers,
    "bold-items": doc_bold_items,
    "small-report": doc_small_report,
    "bullets-symbol": doc_bullets_symbol,
    "bullets-serif": doc_bullets_serif,
    "numbers-default": doc_numbers_default,
    "numbers-outline": doc_numbers_outline,
    "numbers-paren": doc_numbers_paren,
    "letters-roman": doc_letters,
    "bullets-wingdings": doc_fancy_bullets,
    "bullets-text-font": doc_text_bullets,
    "bullets-space": doc_space_bullets,
    "continued": doc_continued,
    "table-lists": doc_table_lists,
    "mixed-pages": doc_mixed_pages,
    "normal-style-items": doc_numbered_no_style,
    "typed-bullets": doc_typed,
    "bullet-glyphs": doc_bullet_glyphs,
    "custom-indents": doc_custom_indents,
    "labels-upper": doc_labels_upper,
    "restarts": doc_restarts,
    "long-items": doc_long_items,
    "lead-ins": doc_lead_ins,
    "tabbed-numbers": doc_tabbed_numbers,
    "tabbed-items": doc_tabbed_items,
}

# References pandoc's GFM cannot give in the corpus's convention (a table as a pipe table, each
# cell's content flattened to one line): written by hand.
REFERENCES = {
    "table-lists": (
        "The table lists the tasks of each team.\n\n"
        "| Team | Tasks |\n|---|---|\n"
        f"| Office | Weekly: {SENTENCES[0]} {SENTENCES[1]} |\n"
        f"| Finance | In order: {SENTENCES[2]} {SENTENCES[3]} {SENTENCES[4]} |\n\n"
        "Each team reports to the board.\n"
    ),
}


def main(names: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    pandoc = shutil.which("pandoc")
    for name in names or list(DOCS):
        docx = OUT / f"{name}.docx"
        DOCS[name]().save(docx)
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run(
                [
                    "soffice",
                    f"-env:UserInstallation=file://{profile}",
                    "--headless",
                    "--convert-to",
                    "pdf",
                    "--outdir",
                    str(OUT),
                    str(docx),
                ],
                check=True,
                capture_output=True,
            )
        if name in REFERENCES:
            (OUT / f"{name}.md").write_text(REFERENCES[name])
        elif pandoc:
            md = subprocess.run(
                [pandoc, "-f", "docx", "-t", "gfm", "--wrap=none", str(docx)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            # The corpus's convention: Title `#`, Heading N one level deeper than pandoc's.
            md = "\n".join("#" + ln if ln.startswith("#") else ln for ln in md.split("\n"))
            titles = [p.text for p in Document(str(docx)).paragraphs if p.style.name == "Title"]
            md = "".join(f"# {t}\n\n" for t in titles) + md
            (OUT / f"{name}.md").write_text(md)
        print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
