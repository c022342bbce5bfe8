"""Blocks of a page (paragraphs, list items, code, tables) and which of them are headings."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from .document import OutlineEntry
from .elements import Box, ElementType
from .figures import Figure
from .layout import BOLD, MONO, Line, chars_at_least, far_sizes, is_rtl
from .lists import (
    label_depth,
    lettered_runs,
    list_marker,
    opens_at_right,
    opens_with_bullet,
    strip_marker,
    symbol_runs,
    tab_numbered,
)
from .order import Item
from .params import DEFAULT, BlockParams, HeadingParams
from .stats import DocStats
from .tables import Table

_LEADER = re.compile(r"(?:\.\s?){5,}\s*\S{1,8}\s*$|(?:\.\s?){5,}$")


def _leader(text: str) -> bool:
    """Whether `text` ends in dot leaders (and a page number). Searched only where the line
    has the five dots a leader needs: the search tries every position of the line."""
    return text.count(".") >= 5 and _LEADER.search(text) is not None


# A caption opens with its label and number ("Figure 3-1", "Table 2:", "[표 1]"): it names
# what it captions and is never a section heading, whatever its size or weight.
CAPTION = re.compile(
    r"^\s*[\[(]?\s*(?:fig(?:ure|\.)?|tab(?:le|\.)|chart|exhibit|plate|listing|scheme|illustration|"
    r"abb(?:ildung|\.)|tabelle|tableau|tabla|tabela|tabella|figura|grafico|gráfico|"
    r"图|表|圖|그림|표|図)\s*[\dIVX]+(?:[.\-\u2013:]\d+)*\s*[\]).:\u2013\u2014-]?(?:\s|$)",
    re.IGNORECASE,
)


@dataclass
class Block:
    kind: str  # "p", "h", "li", "code", "table"
    lines: list[Line] = field(default_factory=list)
    level: int = 0
    marker: str = ""
    marker_x: float = 0.0
    indent: float = 0.0  # marker x from the left edge of its column: the nesting depth
    table: Table | None = None
    pinned: bool = False  # an outline title: nothing joins it
    figure: Box | None = None  # the box of a picture ("figure" blocks)
    role: ElementType | None = None  # what a paragraph is beyond its kind (a footnote)
    rtl: bool = False  # a list item written right to left (marker_x is its right end)
    # A list item or a paragraph: the left and right edges of the column its indent is
    # measured in (pt), and whether text other than list items starts at the edge it nests
    # from (else that edge is where the column's items start, not where the column does).
    column: tuple[float, float] = (0.0, 0.0)
    edge_known: bool = False
    # A paragraph that stands under the text of the list item above it: that item's marker
    # x (a line back at the marker or further out is none of its lines).
    under: float | None = None


def build_blocks(
    segments: list[list[Item]],
    stats: DocStats,
    page_gap: float,
    outline_titles: OutlineTitles | None = None,
    *,
    outline_complete: bool = False,
    params: BlockParams = DEFAULT.blocks,
) -> list[Block]:
    """The blocks of a page's segments. `outline_complete`: the outline lists every heading
    (a word processor's export), so a line it leaves out is no heading."""
    p = params
    body = stats.body_size
    mono_is_code = stats.mono_is_code
    blocks: list[Block] = []
    for segment in segments:
        seg_lines = [it for it in segment if isinstance(it, Line)]
        seg_right = max((ln.x1 for ln in seg_lines), default=0.0)
        seg_left = min((ln.x0 for ln in seg_lines), default=0.0)
        lettered = lettered_runs(seg_lines)
        symbols = symbol_runs(seg_lines)
        cur = _carry_over(blocks, segment, body, p)
        start = len(blocks)
        items = segment
        if cur is not None:
            cur.lines.append(segment[0])  # type: ignore[arg-type]
            items = segment[1:]
        for it in items:
            if isinstance(it, Table):
                blocks.append(Block("table", table=it))
                cur = None
                continue
            if isinstance(it, Figure):
                blocks.append(Block("figure", figure=(it.x0, it.top, it.x1, it.bottom)))
                cur = None
                continue
            line = it
            # A line the document tags as a heading is no code, whatever its face.
            is_code = mono_is_code and bool(line.style & MONO) and not line.heading
            # A line set in a heading style is a heading, whatever number or label opens it;
            # a bullet or a checkbox opens an item at any size (the body's size is that of
            # most glyphs, and inline code in a smaller font of its own may be most). A line
            # the document tags as a heading is one.
            titled = line.vertical or outline_entry(outline_titles, line.text, exact=outline_complete) is not None
            # A numbered line the outline of a word processor leaves out is an item of its
            # numbering, whatever its weight or size.
            not_heading = outline_complete and not titled and not line.heading
            marker = (
                None
                if is_code
                else list_marker(
                    line, body, not_heading=not_heading, lettered=id(line) in lettered, symbol_run=id(line) in symbols
                )
            )
            if marker is not None and (
                line.heading
                or (
                    stats.heading_level_for_size(line.size)
                    and not opens_with_bullet(line)
                    and not (not_heading and tab_numbered(line))
                )
            ):
                marker = None
            sibling: Block | None = None  # the option of the same row before this one
            if cur is not None and not titled and not cur.pinned:
                prev = cur.lines[-1]
                same_row = line.top < prev.bottom - p.same_row_overlap_heights * line.height and not far_sizes(
                    line.size, prev.size
                )
                gap = line.top - prev.bottom
                if same_row and marker is not None and marker[0].startswith("- ["):
                    # Options of a row each open an item: "[ ] Yes  [ ] No".
                    sibling = cur if cur.kind == "li" else None
                elif same_row:
                    cur.lines.append(line)
                    continue
                if _continues(cur, prev, line, is_code, marker, gap, page_gap, seg_left, seg_right, body, p):
                    if not _starts_item_paragraph(cur, prev, line, seg_right, gap, p, paragraphs=outline_complete):
                        cur.lines.append(line)
                        continue
                    # The item's own paragraph under its title: no more of the item's text.
                    cur = Block("p", [line], under=cur.marker_x, column=(seg_left, seg_right))
                    blocks.append(cur)
                    continue
            if marker is not None:
                # A right-to-left item's marker stands at its right end: it nests from the
                # column's right edge.
                rtl = is_rtl(line.text) or opens_at_right(line)
                cur = Block(
                    "li",
                    [strip_marker(line, marker[1])],
                    marker=marker[0],
                    marker_x=line.x1 if rtl else line.x0,
                    # Outline numbers nest by their depth where the items share one indent.
                    indent=(seg_right - line.x1 if rtl else line.x0 - seg_left)
                    + p.label_depth_em * line.size * label_depth(marker[1]),
                    rtl=rtl,
                    column=(seg_left, seg_right),
                )
                if sibling is not None:
                    cur.indent, cur.marker_x = sibling.indent, sibling.marker_x
            elif is_code:
                cur = Block("code", [line])
            else:
                cur = Block("p", [line], pinned=titled, column=(seg_left, seg_right))
            blocks.append(cur)
        _mark_column_edges(blocks[start:], seg_left, seg_right)
    return blocks


# Points a line's start may stand off its column's edge and still be at it: glyphs' side
# bearings move where a line's first glyph starts by less.
EDGE_TOLERANCE_PT = 1.0


def _mark_column_edges(blocks: list[Block], left: float, right: float) -> None:
    """Mark the list items (and paragraphs) of one segment's blocks whose indent is measured
    from the column's own edge: text other than list items (a paragraph, a heading) starts
    there."""
    text = [ln for b in blocks if b.kind not in ("li", "table", "figure") for ln in b.lines]
    at_left = any(ln.x0 - left < EDGE_TOLERANCE_PT for ln in text)
    at_right = any(right - ln.x1 < EDGE_TOLERANCE_PT for ln in text)
    for block in blocks:
        if block.kind in ("li", "p"):
            block.edge_known = at_right if block.rtl else at_left


def _bold_runs_on(prev: Line, line: Line) -> bool:
    """Whether the bold sentence of `prev` (all bold) runs on into `line`, which opens in bold
    and goes on in another weight: a paragraph that opens with a bold lead-in wrapped over
    the line ("**Use a capture clause that borrows individual** / **variables.** By value
    ..."), not a heading above a paragraph."""
    first = next((style for text, style in line.spans if text.strip()), 0)
    return bool(first & BOLD) and prev.text.rstrip()[-1:] not in ".!?:;"


def _carry_over(blocks: list[Block], segment: list[Item], body: float, p: BlockParams) -> Block | None:
    """The paragraph a new column continues, if the previous column ended mid-sentence."""
    if not blocks or blocks[-1].kind not in ("p", "li") or blocks[-1].pinned or not segment:
        return None
    first = segment[0]
    last = blocks[-1].lines[-1]
    if not isinstance(first, Line) or first.vertical or abs(first.size - last.size) > p.size_tolerance_pt:
        return None
    if list_marker(first, body) is not None or first.style & MONO:
        return None
    ends = last.text.rstrip()[-1:]
    if ends in '.!?:;"\u201d)' or not first.text.lstrip()[:1].islower():
        return None
    return blocks[-1]


def _continues(
    cur: Block,
    prev: Line,
    line: Line,
    is_code: bool,
    marker: tuple[str, str] | None,
    gap: float,
    page_gap: float,
    seg_left: float,
    seg_right: float,
    body: float,
    p: BlockParams = DEFAULT.blocks,
) -> bool:
    """Whether `line` continues block `cur` whose last line is `prev`."""
    if marker is not None:
        return False
    size = max(prev.size, line.size)
    # Leading grows with the font size, so the allowed gap scales with it too.
    if gap > page_gap * size / body + p.leading_slack_em * size or gap < -p.overlap_max_em * size:
        return False
    if cur.kind == "li" and _wrapped_into(cur, prev, line, seg_right, gap, p):
        return True
    if (cur.kind == "code") != is_code:
        return False
    if cur.kind == "code":
        return True
    if (
        abs(prev.size - line.size) > p.size_tolerance_pt
        and not (cur.kind == "li" and cur.rtl and _code_sized(prev, line, p))
    ) or (prev.heading != line.heading):
        # A tagged PDF says where a heading ends.
        return False
    if (
        bool(prev.style & BOLD) != bool(line.style & BOLD)
        and all(ln.style & BOLD for ln in cur.lines)
        and not _bold_runs_on(prev, line)
    ):
        # A bold line standing above regular text is a run-in heading, not prose.
        return False
    if cur.kind == "li" and cur.rtl:
        # Continuation lines of a right-to-left item end left of its marker.
        return line.x1 < cur.marker_x - p.marker_clearance_em * line.size
    if cur.kind == "li":
        if line.x0 > cur.marker_x + p.marker_clearance_em * line.size:
            return True
        # Continuation lines flush with the marker: only while the sentence runs on, and
        # not after a short line (an item's title with a paragraph below it).
        short = prev.x1 < seg_right - p.short_line_em * size and line.text[:1].isupper()
        return (
            line.x0 > cur.marker_x - p.marker_clearance_em * line.size
            and prev.text.rstrip()[-1:] not in ".!?:;"
            and not short
        )
    if cur.under is not None and line.x0 <= cur.under + p.marker_clearance_em * line.size:
        # Back at the item's marker or further out: the item's paragraph has ended.
        return False
    if _leader(prev.text) or _leader(line.text):
        # A table-of-contents entry (dot leaders, then a page number) stands alone.
        return False
    ends = prev.text.rstrip()[-1:]
    if prev.rtl:
        # Right-to-left lines start at the right edge and end short of the left one.
        if ends in ".!?:\u061f" and prev.x0 > seg_left + p.short_line_em * size:
            return False
        return not (
            line.x1 < prev.x1 - size
            and seg_right - prev.x1 < p.rtl_flush_em * size
            and line.x0 < seg_left + p.rtl_full_em * size
        )
    if ends in ".!?:" and prev.x1 < seg_right - p.short_line_em * size and line.text[:1].isupper():
        return False
    # A full-width line indented under a flush-left one is a first-line indent, so a new
    # paragraph. (Centred lines do not reach the right edge.)
    return not (
        line.x0 > prev.x0 + p.first_indent_em * size
        and prev.x0 - seg_left < p.flush_left_em * size
        and line.x1 > seg_right - p.full_width_em * size
    )


# A section number opening a heading or an outline entry ("1.", "2.3", "IV.", "B)"): an
# outline may give it where the page does not, or the other way round.
# What is neither a letter nor a digit: re's word characters are those of str.isalnum and
# the underscore, so what this leaves is exactly the characters isalnum keeps.
_NOT_ALNUM = re.compile(r"[\W_]+")
_SECTION_NUMBER = re.compile(r"^\s*(?:\d+(?:[.\-]\d+)*[.):]?|[IVXLCDM]+[.):]|[A-Za-z][.)])\s+")


# A short label before a colon opening a title ("Chapter 1:", "CHAPTER ONE:", "Part II:"):
# one to three words, the last ending at the colon, with the title's words after it. The
# outline and the page may spell the label differently (a bookmark "Chapter 1: Creators" for
# the page's "CHAPTER ONE: Creators"; "2: Catalogs" for "CHAPTER TWO: Catalogs").
_LABEL = re.compile(r"^\s*(?:\S+\s+){0,2}\S+?:\s+(?=\S)")
# The fewest letters and digits a title matched without its label keeps: a label-less
# match of one short word ("I", "To") would find words that are no title.
MIN_LABELLED_KEY = 4


def outline_key(text: str) -> str:
    """What an outline entry and a heading on the page are matched by: their letters and
    digits, casefolded, after a section number."""
    stripped = _SECTION_NUMBER.sub("", text, count=1)
    key = _NOT_ALNUM.sub("", stripped.casefold())
    return key or _NOT_ALNUM.sub("", text.casefold())


def outline_keys(text: str) -> tuple[str, ...]:
    """The keys a title is matched by: `outline_key`, then the key of what follows a short
    label (`_LABEL`), when that is a different key of MIN_LABELLED_KEY characters or more."""
    key = outline_key(text)
    label = _LABEL.match(text)
    if label is None:
        return (key,)
    rest = outline_key(text[label.end() :])
    return (key, rest) if rest != key and len(rest) >= MIN_LABELLED_KEY else (key,)


# An outline title may carry what the page does not show (markup a typesetter wrote into
# the bookmark: LaTeX's "texttt {.tex}" for the page's ".tex"), or the page more words than
# the bookmark. The fewest characters the shorter of two keys has, and the least share of
# the longer it makes up, for the two to match when the shorter is a subsequence of the
# longer.
MIN_LOOSE_KEY = 12
MIN_LOOSE_SHARE = 0.7

# A page's outline entries: key -> (level, the entry's index in the outline). An entry may
# have two keys (`outline_keys`); it names one heading.
OutlineTitles = dict[str, tuple[int, int]]


def outline_entry(titles: OutlineTitles | None, text: str, *, exact: bool = False) -> tuple[int, int] | None:
    """The (level, entry) of the page's outline entry a title names: by its whole key, else
    (unless `exact`: a word processor's bookmarks are its paragraphs' own text) by the key of
    what follows its label."""
    if not titles:
        return None
    for key in outline_keys(text)[:1] if exact else outline_keys(text):
        if key in titles:
            return titles[key]
    return None


def loose_entry(text: str, titles: OutlineTitles, entries: Iterable[int]) -> tuple[int, int] | None:
    """The (level, entry) of the first of `entries` (indexes into the outline) with a key that
    and the title's key are one a subsequence of the other, the shorter of MIN_LOOSE_KEY
    characters or more and MIN_LOOSE_SHARE of the longer; None when there is none."""
    key = outline_key(text)
    wanted = set(entries)
    for entry_key, (level, entry) in titles.items():
        if entry not in wanted:
            continue
        short, long = sorted((key, entry_key), key=len)
        if len(short) >= MIN_LOOSE_KEY and len(short) >= MIN_LOOSE_SHARE * len(long) and _subsequence(short, long):
            return level, entry
    return None


# A decimal section number opening an outline entry ("3", "3.2", "3.2.1."), and how many
# parts it has.
_DECIMAL_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?\s")


def outline_depths_are_levels(entries: Iterable[OutlineEntry]) -> bool:
    """Whether an outline's depths can stand as its headings' levels: it nests its entries
    as their section numbers do (every number of k parts at one depth, deeper the more parts;
    an outline without numbers says nothing against it). An outline that sets "1 Preface" at depth 1 and
    "2 Transitioning" at depth 2 is a list of bookmarks, not a table of contents."""
    depth_of: dict[int, int] = {}
    for entry in entries:
        number = _DECIMAL_NUMBER.match(entry.title)
        if number is not None and depth_of.setdefault(number.group(1).count(".") + 1, entry.level) != entry.level:
            return False
    # More parts, deeper: "1.1" at the depth of "1" is a flat list of bookmarks.
    depths = [depth for _, depth in sorted(depth_of.items())]
    return all(a < b for a, b in pairwise(depths))


def _subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(ch in rest for ch in short)


def _wrapped_into(cur: Block, prev: Line, line: Line, seg_right: float, gap: float, p: BlockParams) -> bool:
    """Whether `line` is the wrapped rest of list item `cur` (left to right): it stands
    under the item's text, and either the line before it ran to the column's edge or the
    two differ in size only as a line of inline code does."""
    if cur.rtl or line.vertical or line.x0 <= cur.marker_x + p.marker_clearance_em * line.size:
        return False
    if line.style & MONO and prev.text.rstrip()[-1:] in ".:!?;" and not _at_item_leading(cur, gap, line.size, p):
        # A line all of code after a finished sentence is a code block under the item;
        # following at the leading of the item's own wrapped lines, it is inline code
        # after a line break.
        return False
    if prev.x1 >= seg_right - p.wrapped_em * prev.size:
        return True
    code = any(style & MONO for ln in (prev, line) for _, style in ln.spans)
    big = max(prev.size, line.size)
    return code and abs(prev.size - line.size) <= p.code_size_share * big and prev.style & BOLD == line.style & BOLD


def _starts_item_paragraph(
    cur: Block, prev: Line, line: Line, seg_right: float, gap: float, p: BlockParams, *, paragraphs: bool
) -> bool:
    """Whether `line`, which would continue block `cur`, starts a paragraph of list item
    `cur` (left to right) under its text: `prev` ends before the column's right edge by
    more than the first word of `line` needs, so the layout would have set that word on
    `prev` (a title, then its paragraph, as Word sets a paragraph under an item).

    Only for a line that opens with a capital or a digit (anything else goes on with a
    sentence or a formula, or is in a script that breaks lines anywhere), and that stands
    where the item's text does (further in, it is a quotation inside the item) unless a word
    processor set the page (`paragraphs`): its item is one paragraph, and every paragraph
    after it one of its own, however far in."""
    if cur.kind != "li" or cur.rtl or line.x0 <= cur.marker_x + p.marker_clearance_em * line.size:
        return False
    first = line.text[:1]
    if not (first.isupper() or first.isdigit()) or not line.glyph_text:
        return False
    if not paragraphs and line.x0 > cur.marker_x + p.item_text_em * line.size:
        return False
    if _wrapped_into(cur, prev, line, seg_right, gap, p):
        return False
    xs, glyphs = line.glyph_x, line.glyph_text
    k = 0
    while k + 1 < len(glyphs) and not glyphs[k + 1].isspace():
        k += 1
    word = xs[2 * k + 1] - xs[0]
    return seg_right - prev.x1 > word + p.break_room_em * line.size


def _code_sized(prev: Line, line: Line, p: BlockParams) -> bool:
    """Whether two lines differ in size only as lines with inline code do (a line's size is
    that of most of its glyphs, which may be those of its code)."""
    code = any(
        bool(ln.code_glyphs and any(ln.code_glyphs)) or any(st & MONO for _, st in ln.spans) for ln in (prev, line)
    )
    return code and abs(prev.size - line.size) <= p.code_size_share * max(prev.size, line.size)


def _at_item_leading(cur: Block, gap: float, size: float, p: BlockParams) -> bool:
    """Whether a line `gap` below item `cur` follows at the leading of the item's own
    wrapped lines (known once the item has two)."""
    if len(cur.lines) < 2:
        return False
    a, b = cur.lines[-2], cur.lines[-1]
    return gap <= b.top - a.bottom + p.item_leading_slack_em * size


def text_rows(lines: list[Line]) -> int:
    """How many rows of text `lines` (in reading order) stand in: layout cuts a line where
    a space it draws is stretched wider than two letters (pdfminer's `char_margin`, in a
    justified line), and the pieces, each but the last ending in that space, share a row."""
    return len(lines) - sum(
        1 for a, b in pairwise(lines) if a.text.endswith(" ") and a.top <= b.cy <= a.bottom and b.x0 >= a.x1
    )


def classify_headings(
    blocks: list[Block],
    stats: DocStats,
    outline_titles: OutlineTitles,
    *,
    outline_complete: bool = False,
    outline_levels: bool = False,
    params: HeadingParams = DEFAULT.headings,
) -> None:
    """Mark the headings among the paragraphs. With `outline_complete` the outline lists
    every section heading (a word processor's export writes its Heading paragraphs as the
    outline), so a line the outline leaves out is no section, whatever its style: a bold
    term, a lead-in, a subtitle; the title (`#`, a style no outline level has) still is.
    With `outline_levels` an outline entry's depth is its heading's level, whatever the
    styles (`outline_depths_are_levels`)."""
    p = params
    body = stats.body_size
    # An entry names one heading: one its title matches exactly on the page is not looked for
    # loosely in another line (a contents line "Chapter 5 Contents.....5-i" under the heading
    # "CHAPTER 5 CONTENTS").
    found = {
        outline_titles[key][1]
        for block in blocks
        if block.kind == "p" and text_rows(block.lines) <= p.max_lines and not outline_complete
        for key in outline_keys(" ".join(ln.text.strip() for ln in block.lines))
        if key in outline_titles
    }
    unmatched = [] if outline_complete else sorted({entry for _, entry in outline_titles.values()} - found)
    for i, block in enumerate(blocks):
        if block.kind != "p" or text_rows(block.lines) > p.max_lines:
            continue
        text = " ".join(ln.text.strip() for ln in block.lines)
        if len(text) > p.max_chars or not any(ch.isalpha() for ch in text) or CAPTION.match(text):
            continue
        tagged = block.lines[0].heading
        if tagged:
            # The structure of a tagged PDF names its headings and their levels: the
            # author's, whatever the styles.
            block.kind, block.level, block.pinned = "h", tagged, True
            continue
        size = max(ln.size for ln in block.lines)
        level = stats.heading_level_for_size(size)
        named = outline_entry(outline_titles, text, exact=outline_complete)
        if named is None and unmatched and (level is not None or all(ln.style & BOLD for ln in block.lines)):
            # Loosely only a line set as a heading is: by its size or its weight.
            named = loose_entry(text, outline_titles, unmatched)
            if named is not None:
                unmatched.remove(named[1])
        outlined = None if named is None else named[0]
        if outlined is not None:
            # The outline says what is a heading, and how deep it nests. Where its depths
            # are the levels (`outline_levels`: a table of contents whose nesting agrees
            # with its section numbers) they stand, whatever the sizes: a book's chapter
            # titles set smaller than its section titles stay above them. Otherwise the
            # styles may tell apart sections the outline keeps at one depth (a word
            # processor nests a Heading 3 right under a Heading 1 at depth 2), so the
            # deeper of the two. A heading the outline sets beside others is a section,
            # never the title.
            if (level == 1 and outlined > 1) or outline_levels:
                level = None
            # Set in one of Word's built-in heading styles: that style's level at least (an
            # outline's first depth may be Heading 2).
            builtin = stats.builtin_level(block.lines[0]) or 0
            block.kind, block.level = "h", min(max(level or 0, outlined, builtin), 6)
            continue
        if outline_complete and level != 1:
            continue
        if level is None and stats.tags_headings and all(ln.tagged for ln in block.lines):
            # The structure tree names the headings and holds this bold text at the body's
            # size as something else (a definition's term, a lead-in, a table's label): no
            # section. (A larger size is a heading style still: a page may set its sections in
            # styled blocks beside one tagged heading.)
            continue
        if level is not None and chars_at_least((text,), p.min_letters):
            block.kind, block.level = "h", level
            continue
        if (
            text_rows(block.lines) <= p.bold_max_lines
            # A line at the body size right above a table is its title (a spreadsheet's title
            # row, a report's table name), not a section heading.
            and not (i + 1 < len(blocks) and blocks[i + 1].kind == "table")
            # Set apart by its weight, or in the document's display face (not code).
            and (
                (all(ln.style & BOLD for ln in block.lines) and not all(ln.style & MONO for ln in block.lines))
                or (stats.mono_display and all(ln.style & MONO for ln in block.lines))
            )
            and len(text) <= p.bold_max_chars
            and text.rstrip()[-1:] not in ".,;:"
            and size >= body - p.bold_below_body_pt
        ):
            block.kind, block.level = "h", stats.builtin_level(block.lines[0]) or stats.bold_heading_level


def title_front_matter(blocks: list[Block], params: HeadingParams = DEFAULT.headings) -> None:
    """Turn back into paragraphs the lines centred under the title: its front matter.

    A title is followed by its subtitle, authors, date or the word "Abstract", each set in a
    style of its own and centred under it like the title; they belong to the title, not to
    sections, which start where the text does (at the margin). So the headings right after
    the title (`#`) that share its centre, up to the first other block, are paragraphs.
    """
    for i, block in enumerate(blocks):
        if block.kind != "h" or block.level != 1 or block.pinned:
            continue
        centre = _centre(block)
        for other in blocks[i + 1 :]:
            if other.kind != "h" or other.pinned or other.level == 1:
                break
            size = max(ln.size for ln in other.lines)
            if abs(_centre(other) - centre) > params.centred_em * size or _width(other) >= _width(block):
                break
            other.kind, other.level = "p", 0


def _centre(block: Block) -> float:
    return (min(ln.x0 for ln in block.lines) + max(ln.x1 for ln in block.lines)) / 2


def _width(block: Block) -> float:
    return max(ln.x1 for ln in block.lines) - min(ln.x0 for ln in block.lines)


def keep_introducing_headings(blocks: list[Block], body: float, params: HeadingParams = DEFAULT.headings) -> None:
    """Turn back into paragraphs the headings that introduce nothing.

    A section heading stands above its content: body text, a list, a table, or a heading
    of a deeper level that in turn introduces content. A large line followed by a larger
    one ("Front cover" above a title), by small print (labels of a diagram), or by other
    such lines (the taglines of a cover) is display text, not a heading. The last block of
    a page may introduce what the next page holds.
    """
    # Headings of one level set one after the other with nothing between them are a run
    # of display lines (the taglines of a cover, the labels of a diagram): no section is
    # empty but the last, so none of them is a heading.
    i = 0
    while i < len(blocks):
        j = i
        while j + 1 < len(blocks) and _same_heading_run(blocks[i], blocks[j + 1]):
            j += 1
        if j > i:
            for block in blocks[i : j + 1]:
                block.kind, block.level = "p", 0
        i = j + 1
    # Small print is small next to the text of its page: a brochure page set smaller than
    # the rest of the document has headings too.
    sizes: Counter[float] = Counter()
    for block in blocks:
        if block.kind in ("p", "li"):
            for ln in block.lines:
                sizes[ln.size] += len(ln.text)
    if sizes and sizes[body] < params.page_body_share * sum(sizes.values()):
        body = min(body, max(sizes.items(), key=lambda kv: (kv[1], -kv[0]))[0])
    nxt: Block | None = None
    for block in reversed(blocks):
        if block.kind == "h" and not block.pinned and not _introduces(block, nxt, body, params):
            block.kind, block.level = "p", 0
        if block.kind != "p" or chars_at_least((ln.text for ln in block.lines), params.content_min_alnum, str.isalnum):
            nxt = block  # a stray mark ("®", a bullet alone) introduces nothing


def _same_heading_run(first: Block, other: Block) -> bool:
    return (
        first.kind == "h" == other.kind
        and _style_key(first) == _style_key(other)
        and not first.pinned
        and not other.pinned
    )


def _style_key(block: Block) -> tuple[float, bool]:
    return max(ln.size for ln in block.lines), all(ln.style & BOLD for ln in block.lines)


def _introduces(heading: Block, nxt: Block | None, body: float, p: HeadingParams) -> bool:
    if nxt is None or nxt.kind in ("li", "code", "table", "figure"):
        return True
    if nxt.kind == "h":
        # A line far smaller than the heading below it is that heading's kicker ("Front
        # cover" above a title); one nearly as large heads a part of its own.
        return nxt.level >= heading.level or _style_key(heading)[0] >= p.kicker_share * _style_key(nxt)[0]
    # Text below a heading is set smaller than the heading (or as large, where the heading
    # stands out by its weight), and not in small print.
    size = max(ln.size for ln in nxt.lines)
    if size < body - p.small_print_pt:
        return False
    heading_size, heading_bold = _style_key(heading)
    if size <= p.body_text_share * body or size < heading_size - p.heading_size_margin_pt:
        return True
    return size <= heading_size + p.heading_size_margin_pt and heading_bold and not _style_key(nxt)[1]


def merge_wrapped_headings(blocks: list[Block], params: HeadingParams = DEFAULT.headings) -> list[Block]:
    """Join a heading with the next one when it is the same heading wrapped onto a new line.

    A title that spans the columns of a two-column page can wrap so that its last line
    sits inside the first column; reading order then puts that line into the column's
    segment, and it becomes a heading of its own.
    """
    p = params
    out: list[Block] = []
    for block in blocks:
        prev = out[-1] if out else None
        if prev is not None and prev.kind == "h" and block.kind == "h" and _wrapped(prev, block, blocks, p):
            prev.lines.extend(block.lines)
            continue
        out.append(block)
    return out


def _wrapped(prev: Block, block: Block, blocks: list[Block], p: HeadingParams) -> bool:
    """Whether heading `block` is the next line of heading `prev`, wrapped."""
    if _tagged_wrap(prev, block, blocks, p):
        # A tagged PDF names both lines headings of the same level (a browser tags each
        # line of a heading that wraps in a narrow column, and a line set partly in a
        # monospaced face measures apart from the next): one heading when they sit as one
        # heading's lines do.
        return True
    if block.level not in (prev.level, prev.level + 1) or prev.pinned or block.pinned:
        return False
    above, below = prev.lines[-1], block.lines[0]
    size = above.size
    # A display title may set its second line a size smaller, but tight below the first:
    # still one heading. A sub-heading keeps its distance.
    smaller = (
        p.wrap_smaller_share * size <= below.size < size - p.wrap_size_tolerance_pt
        and below.top - above.bottom <= p.wrap_smaller_gap_em * size
    )
    return (
        ((abs(below.size - size) <= p.wrap_size_tolerance_pt and prev.level == block.level) or smaller)
        and (above.style & BOLD) == (below.style & BOLD)
        and _stacked(prev, block, size, p, centred=True)
    )


def _stacked(prev: Block, block: Block, size: float, p: HeadingParams, *, centred: bool) -> bool:
    """Whether `block`'s first line sits under `prev`'s last as a heading's next line does:
    at a line's gap (in ems of `size`), starting where it starts (or, `centred`, centred
    under it), the two within a wrapped heading's lines."""
    above, below = prev.lines[-1], block.lines[0]
    return (
        p.wrap_gap_min_em * size <= below.top - above.bottom <= p.wrap_gap_max_em * size
        and (
            abs(below.x0 - above.x0) <= p.wrap_left_em * size
            or (centred and abs(below.x0 + below.x1 - above.x0 - above.x1) <= p.wrap_centre_em * size)
        )
        and text_rows(prev.lines) + text_rows(block.lines) <= p.wrap_max_lines
    )


def _tagged_wrap(prev: Block, block: Block, blocks: list[Block], p: HeadingParams) -> bool:
    """Whether two headings a tagged PDF names at the same level are one heading wrapped:
    the second right below the first, at a line's gap, starting where it starts, and the
    first running so near its column's right edge that the second's first word could not
    have followed it there (two short headings in a row are two)."""
    above, below = prev.lines[-1], block.lines[0]
    if not (prev.pinned and block.pinned and above.heading and above.heading == below.heading):
        return False
    size = max(above.size, below.size)
    if prev.level != block.level or not _stacked(prev, block, size, p, centred=False):
        return False
    # The column: the lines that start where the heading starts.
    right = max(
        (ln.x1 for b in blocks for ln in b.lines if abs(ln.x0 - above.x0) <= p.wrap_left_em * size),
        default=above.x1,
    )
    words = below.text.split()
    if not words:
        return False
    word = len(words[0]) * (below.x1 - below.x0) / max(1, len(below.text))
    return right - above.x1 < word + p.wrap_space_em * below.size
