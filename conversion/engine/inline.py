"""Markdown rendering: inline spans (emphasis, code, escapes), joined lines, tables, blocks."""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .blocks import CAPTION, Block
from .elements import Box, Cell, Element, ElementType, union
from .layout import BOLD, ITALIC, MONO, Line
from .params import DEFAULT, BlockParams
from .tables import Table

_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")  # Hangul is spaced: not here


def joined_without_space(before: str, after: str) -> bool:
    """Whether text `before` and the text `after` that goes on from it on the next line are
    joined with no space: between CJK characters, or before a combining mark."""
    return bool(_CJK.match(before[-1:] or " ") and _CJK.match(after[:1] or " ")) or bool(
        after and unicodedata.category(after[0]).startswith("M")
    )


_ALWAYS = re.compile(r"([\\`*\[\]~])")
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_ANGLE = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_BLOCK_START = re.compile(r"^(#{1,6}(?=\s|$)|>|[-+*](?=\s)|=+\s*$|-+\s*$|\d{1,9}(?=[.)](\s|$)))")


def escape_inline(text: str, *, pipes: bool = False) -> str:
    text = _ALWAYS.sub(r"\\\1", text)
    text = _UNDERSCORE.sub(r"\\_", text)
    text = _ANGLE.sub(r"\\<", text)
    text = _ENTITY.sub(r"\\&", text)
    if pipes:
        text = text.replace("|", "\\|")
    return text


def _escape_block_start(md: str) -> str:
    m = _BLOCK_START.match(md)
    if not m:
        return md
    token = m.group(1)
    if token[0].isdigit():
        end = len(token)
        return md[:end] + "\\" + md[end:]
    return "\\" + md


_LAST_WORD = re.compile(r"([^\W\d_]+)[-\u2010]$")
_FIRST_WORD = re.compile(r"[^\W\d_]+")


_SUFFIXES = tuple(
    [
        "ing",
        "ings",
        "ed",
        "er",
        "ers",
        "ly",
        "ment",
        "ments",
        "ness",
        "ity",
        "ities",
        "able",
        "ible",
        "tion",
        "tions",
        "sion",
        "ance",
        "ence",
        "ous",
        "ive",
        "ful",
        "less",
        "ism",
        "ist",
        "ists",
        "ize",
        "ized",
    ]
)
_PREFIXES = frozenset(("over", "under", "with", "back", "fore", "counter", "inter", "trans", "super"))


def _keeps_hyphen(stripped: str, first: str, words: Counter[str] | None) -> bool:
    """Whether the hyphen ending `stripped` belongs to a compound ("part-" + "time").

    The document's own words decide: the hyphenated form written elsewhere keeps the
    hyphen, the joined form written elsewhere drops it. Without either, a compound of two
    words the document also uses on their own (each seen besides this line break) keeps
    it; anything else is taken for hyphenation, which typeset documents use a lot.
    """
    parts = _parts(stripped, first) if words else None
    if not words or parts is None:
        return False
    left, right = parts
    hyphenated, joined = words[f"{left}-{right}"], words[left + right]
    if hyphenated or joined:
        return hyphenated > joined
    if len(left) < 4 or len(right) < 4 or (right.endswith(_SUFFIXES) and len(right) <= 7):
        # Short parts and suffixes ("turn-ing", "any-body") are mostly hyphenation.
        return False
    return words[left] >= 2 and words[right] >= 2 and left not in _PREFIXES


def compound_at_break(tail: str, head: str) -> bool:
    """Whether a hyphen ending `tail` (after a letter) joins two parts of one word, the next,
    starting `head`, capitalised ("Anglo-" "American", "CD-" "ROMs"): no space goes between
    the parts. Typesetters seldom hyphenate a word before a capital, so the hyphen is the
    compound's own and stays, unless the document writes the parts joined
    (`written_joined`: "Trace-" "Monkey" in a paper about TraceMonkey)."""
    return tail.endswith(("-", "\u2010")) and len(tail) >= 2 and tail[-2].isalpha() and head[:1].isupper()


def written_joined(tail: str, head: str, words: Counter[str] | None) -> bool:
    """Whether the document writes the word broken at the hyphen ending `tail` joined more
    often than hyphenated."""
    parts = _parts(tail, head) if words else None
    if not words or parts is None:
        return False
    left, right = parts
    return words[left + right] > words[f"{left}-{right}"]


def _parts(tail: str, head: str) -> tuple[str, str] | None:
    """The two parts, lowercase, of a word broken at the hyphen ending `tail`."""
    left, right = _LAST_WORD.search(tail), _FIRST_WORD.match(head)
    return None if left is None or right is None else (left.group(1).lower(), right.group(0).lower())


def _join_lines(lines: Sequence[Line], words: Counter[str] | None = None) -> list[tuple[str, int]]:
    """Spans of a paragraph: lines joined with a space, end-of-line hyphens repaired."""
    spans: list[tuple[str, int]] = []
    for line in lines:
        line_spans = [(t, s) for t, s in line.spans if t]
        if not line_spans:
            continue
        if spans:
            last_text, last_style = spans[-1]
            stripped = last_text.rstrip()
            first = line_spans[0][0].lstrip()
            if stripped.endswith("\u00ad") or (
                stripped.endswith(("-", "\u2010"))
                and len(stripped) >= 2
                and stripped[-2].isalpha()
                and first[:1].islower()
            ):
                end = len(stripped) if _keeps_hyphen(stripped, first, words) else -1
                spans[-1] = (stripped[:end], last_style)
            elif compound_at_break(stripped, first):
                spans[-1] = (stripped[: -1 if written_joined(stripped, first, words) else len(stripped)], last_style)
            elif joined_without_space(stripped, first):
                # No space between CJK characters, nor before a combining mark.
                spans[-1] = (stripped, last_style)
            else:
                spans[-1] = (stripped, last_style)
                spans.append((" ", last_style))
            line_spans[0] = (line_spans[0][0].lstrip(), line_spans[0][1])
        spans.extend(line_spans)
    return spans


def render_spans(
    spans: Sequence[tuple[str, int]],
    *,
    styled: bool = True,
    pipes: bool = False,
    mono: bool = True,
) -> str:
    """Inline Markdown of style runs: emphasis, code spans, escaped text, one line."""
    texts: list[str] = []
    styles: list[int] = []
    for text, style in spans:
        if not styled:
            style = 0
        elif not mono:
            style &= ~MONO
        if texts and (styles[-1] == style or text.isspace()):
            # A space between two bold runs must not split them into two bold runs.
            texts[-1] += text
        else:
            texts.append(text)
            styles.append(style)
    out: list[str] = []
    for text, style in zip(texts, styles, strict=True):
        core = text.strip()
        if not core:
            out.append(" " if text else "")
            continue
        lead = " " if text[:1].isspace() else ""
        trail = " " if text[-1:].isspace() else ""
        if style & MONO:
            fence = "``" if "`" in core else "`"
            pad = " " if core.startswith("`") or core.endswith("`") else ""
            body = f"{fence}{pad}{core}{pad}{fence}"
            if pipes:
                body = body.replace("|", "\\|")
        else:
            body = escape_inline(core, pipes=pipes)
            if any(ch.isalnum() for ch in core):
                if style & BOLD and style & ITALIC:
                    body = f"***{body}***"
                elif style & BOLD:
                    body = f"**{body}**"
                elif style & ITALIC:
                    body = f"*{body}*"
        out.append(lead + body + trail)
    return " ".join("".join(out).split())


def _code_lines(lines: Sequence[Line]) -> list[str]:
    """The lines of a code block, each indented by as many characters as it stands in."""
    left = min(ln.x0 for ln in lines)
    out = []
    for ln in lines:
        text = ln.text.rstrip()
        width = (ln.x1 - ln.x0) / max(len(ln.text), 1)
        indent = round((ln.x0 - left) / width) if width > 0 else 0
        out.append(" " * max(indent, 0) + text)
    return out


def _code_text(lines: Sequence[Line]) -> str:
    body = "\n".join(_code_lines(lines))
    fence = "~~~" if "```" in body else "```"
    return f"{fence}\n{body}\n{fence}"


def _item_code(lines: Sequence[Line], column: int) -> str:
    """A code block inside a list item whose text starts at `column`: the fence and every
    line of it indented to the item's text."""
    return "\n".join(" " * column + ln if ln.strip() else "" for ln in _code_text(lines).split("\n"))


def render_table(table: Table, mode: str) -> str:
    """A table as HTML (merged cells with rowspan/colspan) or as a GFM pipe table, where a
    merged cell's text is repeated in every position it covers (no spans in GFM)."""
    rows = table.rows
    if mode == "html":
        covered = table.covered()
        head = table.header_rows()

        def tr(r: int, tag: str) -> str:
            out = []
            for c, text in enumerate(rows[r]):
                if covered.get((r, c), (r, c)) != (r, c):
                    continue
                rs, cs = table.spans.get((r, c), (1, 1))
                attrs = (f' rowspan="{rs}"' if rs > 1 else "") + (f' colspan="{cs}"' if cs > 1 else "")
                out.append(f"<{tag}{attrs}>{html.escape(text)}</{tag}>")
            return "<tr>" + "".join(out) + "</tr>"

        if head == 1 and not table.spans:
            parts = ["<table>", "<thead>", "<tr>", *(f"<th>{html.escape(c)}</th>" for c in rows[0]), "</tr>"]
        else:
            parts = ["<table>", "<thead>", *(tr(r, "th") for r in range(head))]
        parts += ["</thead>", "<tbody>", *(tr(r, "td") for r in range(head, len(rows))), "</tbody>", "</table>"]
        return "\n".join(parts)
    if table.spans:
        rows = [list(row) for row in rows]
        for (r, c), (ar, ac) in table.covered().items():
            rows[r][c] = rows[ar][ac]

    def cell(c: str) -> str:
        return escape_inline(" ".join(c.split()), pipes=True)

    lines = ["| " + " | ".join(cell(c) for c in rows[0]) + " |"]
    lines.append("|" + "|".join(" --- " for _ in rows[0]) + "|")
    for row in rows[1:]:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines)


# The list a page is inside of at its end: for each open item, its marker's indent from the
# column's edge (points) and the column its text starts at in the Markdown (characters).
ListStack = tuple[tuple[float, int], ...]


@dataclass(frozen=True)
class ListEntry:
    """A list item, or a paragraph of the item above it, as the list's nesting sees it."""

    indent: float  # the item's marker from its column's edge (pt)
    size: float  # the item's text size (pt): how far off an indent may be and still match
    marker: str | None  # the item's Markdown marker; None for a paragraph of the item above
    spaces: int  # the leading spaces of its Markdown on its page


@dataclass(frozen=True)
class ListFrame:
    """The column a list's indents are measured in: its left and right edges on the page (pt),
    and where an indent of 0 stands along the direction items nest in (the left edge, or
    the right edge negated for a right-to-left list)."""

    left: float
    right: float
    origin: float
    edge_known: bool  # text other than list items starts at the edge it nests from
    rtl: bool = False  # the list nests from the right edge

    @classmethod
    def of(cls, block: Block) -> ListFrame:
        left, right = block.column
        return cls(left, right, -right if block.rtl else left, block.edge_known, block.rtl)

    def shift_to(self, other: ListFrame) -> float | None:
        """What turns an indent measured in this frame into one measured in `other`, a
        frame of the page before; None when the two do not compare. Where both columns show
        their edge, indents compare from each one's edge (a list going on from the right
        column of one page to the left column of the next; a book's text block set further
        right on odd pages). Where one does not (a page of nested items only starts its
        column at their indent), columns that share part of the page's width are one column
        on both pages: the indents compare on the page. Lists nesting in opposite directions
        never compare."""
        if self.rtl != other.rtl:
            return None
        if self.edge_known and other.edge_known:
            return 0.0
        if self.left < other.right and other.left < self.right:
            return self.origin - other.origin
        return None


@dataclass
class PageLists:
    """What a page shows of its lists to the pages around it, so that the document nests a
    list that a page break cuts as the pages before it opened it (each page alone starts
    its lists at the margin: its Markdown stands alone)."""

    # The page's first content elements while they are one list (items and their
    # paragraphs), each with what its nesting depends on, and the frame of the first.
    # Where the page opens with a paragraph (`head`), the list right after it instead: it
    # goes on from the page before only where that paragraph is the rest of the item the
    # page before ends with.
    lead: list[tuple[Element, ListEntry]] = field(default_factory=list)
    lead_frame: ListFrame | None = None
    head: Box | None = None  # the page's first content element where it is a paragraph
    head_frame: ListFrame | None = None  # the column `head` stands in
    end: ListStack = ()  # the list the page ends inside of (empty where it ends otherwise)
    end_frame: ListFrame | None = None  # the frame of the last item of `end`
    # The marker's x and the text size of the item the page ends with (left to right): where
    # the rest of its text would stand at the top of the next page.
    end_item: tuple[float, float] | None = None
    whole: bool = False  # the page's content is that one list, top to end

    def continues_item(self, nxt: PageLists, params: BlockParams = DEFAULT.blocks) -> bool:
        """Whether the paragraph the next page opens with (`nxt.head`) stands where the rest
        of this page's last item would: under the item's text, measured from the edges of
        the two columns where both show them (the item ends the right column, its rest opens
        the left one), else in the same column on the page."""
        if self.end_item is None or self.end_frame is None or nxt.head is None or nxt.head_frame is None:
            return False
        frame = self.end_frame
        shift = nxt.head_frame.shift_to(frame)
        if shift is None:
            return False
        marker_x, size = self.end_item
        marker = marker_x - frame.origin  # the marker's indent in the item's column
        text = nxt.head[0] - nxt.head_frame.origin + shift  # the paragraph's, measured there
        return marker + 0.5 * size < text <= marker + params.item_text_em * size


def _place_item(stack: list[tuple[float, int]], indent: float, size: float, marker: str) -> tuple[int, int]:
    """Where the item at `indent` nests in the open list `stack` (updated): its depth, and
    the spaces its Markdown starts with. An item half a line's size left of an open item's
    marker closes it, one within half a size of it is its sibling, one further in its child."""
    while stack and indent < stack[-1][0] - 0.5 * size:
        stack.pop()
    if stack and indent <= stack[-1][0] + 0.5 * size:
        stack.pop()
    spaces = stack[-1][1] if stack else 0
    depth = len(stack)
    # Nested items line up with the text after the list marker ("- " of a task item
    # "- [ ]": its box is part of the text).
    stack.append((indent, spaces + len(marker.split(" ", 1)[0]) + 1))
    return depth, spaces


def nest_continued(entries: Sequence[ListEntry], open_list: ListStack, shift: float) -> tuple[list[int], ListStack]:
    """The leading spaces of a page's leading list (`entries`, their indents plus `shift` in
    the frame of `open_list`) where it goes on from the list the page before ends inside of,
    and the list open after them."""
    stack = list(open_list)
    spaces: list[int] = []
    for entry in entries:
        if entry.marker is None:
            spaces.append(stack[-1][1] if stack else entry.spaces)
        else:
            spaces.append(_place_item(stack, entry.indent + shift, entry.size, entry.marker)[1])
    return spaces, tuple(stack)


def render_blocks(
    blocks: list[Block],
    tables_mode: str,
    *,
    mono_code: bool = True,
    words: Counter[str] | None = None,
    lists: PageLists | None = None,
) -> list[Element]:
    """The page's content elements in reading order, each with its Markdown. `lists`, where
    given, gets the page's leading list and the list it ends inside of."""
    out: list[Element] = []
    stack: list[tuple[float, int]] = []  # (marker indent, content column) of the open list
    lead: list[tuple[Element, ListEntry]] = []  # the page's first list, while `leading`
    leading = True
    head: Box | None = None  # the page's first content element, where it is a paragraph
    head_frame: ListFrame | None = None
    lead_frame: ListFrame | None = None
    frame: ListFrame | None = None  # that of the last list item

    item: Block | None = None  # the list item the open list ends with
    for block in blocks:
        inside = block.kind in ("p", "code") and stack and item is not None and _inside_item(block, item)
        if block.kind != "li" and not inside:
            stack.clear()
        if block.kind == "li":
            item = block
        shown = len(out)
        entry: ListEntry | None = None
        if block.kind == "table":
            assert block.table is not None
            out.append(table_element(block.table, tables_mode))
        elif block.kind == "figure":
            assert block.figure is not None
            out.append(Element(ElementType.FIGURE, block.figure, "", FIGURE_MARKDOWN))
        elif block.kind == "code" or (inside and mono_code and all(ln.style & MONO for ln in block.lines)):
            # (A lone line of code is a paragraph of inline code, but a block of its own
            # inside an item.)
            box = _box(block)
            code = _code_text(block.lines)
            if inside:
                # A literal block of the item above.
                code = _item_code(block.lines, stack[-1][1])
                entry = ListEntry(block.indent, block.lines[0].size, None, stack[-1][1])
            out.append(Element(ElementType.CODE, box, "\n".join(ln.text.rstrip() for ln in block.lines), code))
        else:
            box = _box(block)
            spans = _join_lines(block.lines, words)
            text = " ".join("".join(t for t, _ in spans).split())
            if block.kind == "h":
                markdown = "#" * block.level + " " + render_spans(spans, styled=False)
                out.append(Element(ElementType.HEADING, box, text, markdown, level=block.level))
            elif block.kind == "li":
                size = block.lines[0].size
                # Measured from the column's edge, so a list that runs on into the next
                # column keeps its depth.
                depth, indent = _place_item(stack, block.indent, size, block.marker)
                markdown = " " * indent + block.marker + " " + render_spans(spans, mono=mono_code)
                out.append(Element(ElementType.LIST_ITEM, box, text, markdown, depth=depth, marker=block.marker))
                entry = ListEntry(block.indent, size, block.marker, indent)
                frame = ListFrame.of(block)
            else:
                rendered = render_spans(spans, mono=mono_code)
                if rendered:
                    kind = ElementType.CAPTION if CAPTION.match(text) else block.role or ElementType.PARAGRAPH
                    markdown = _escape_block_start(rendered)
                    if inside:
                        # A paragraph of the item above: indented to the item's text.
                        markdown = " " * stack[-1][1] + markdown
                        entry = ListEntry(block.indent, block.lines[0].size, None, stack[-1][1])
                    out.append(Element(kind, box, text, markdown))
        if leading and len(out) > shown:
            if entry is not None:
                lead.append((out[-1], entry))
                lead_frame = lead_frame or frame
            elif shown == 0 and out[-1].type is ElementType.PARAGRAPH and not block.rtl:
                head, head_frame = out[-1].bbox, ListFrame.of(block)
            else:
                leading = False
    if lists is not None:
        lists.lead, lists.lead_frame, lists.head, lists.head_frame = lead, lead_frame, head, head_frame
        lists.whole = leading and bool(lead)
        lists.end, lists.end_frame = tuple(stack), frame if stack else None
        last = blocks[-1] if blocks else None
        if (
            stack
            and out
            and out[-1].type is ElementType.LIST_ITEM
            and last is not None
            and last.kind == "li"
            and not last.rtl
        ):
            lists.end_item = (last.marker_x, last.lines[0].size)
    return out


def _box(block: Block) -> tuple[float, float, float, float]:
    return union([(ln.x0, ln.top, ln.x1, ln.bottom) for ln in block.lines])


def _inside_item(block: Block, item: Block) -> bool:
    """Whether paragraph or code `block`, right after list item `item` (or a block of it),
    is one more block of the item: every line of a paragraph stands in from the item's
    marker, under its text (left to right); so does the left edge of code (a literal block
    of the item, whose own lines are indented as the program is)."""
    if item.rtl or block.rtl:
        return False
    reach = DEFAULT.blocks.item_text_em
    if block.kind == "code" or all(ln.style & MONO for ln in block.lines):
        size = item.lines[0].size
        left = min(ln.x0 for ln in block.lines)
        return item.marker_x + 0.5 * size < left <= item.marker_x + reach * size
    return all(item.marker_x + 0.5 * ln.size < ln.x0 <= item.marker_x + reach * ln.size for ln in block.lines)


FIGURE_MARKDOWN = "<!-- figure -->"


def table_element(table: Table, mode: str) -> Element:
    """A table as an element: its Markdown, and its cells with their boxes."""
    covered = table.covered()
    box = (table.x0, table.top, table.x1, table.bottom)
    rows: list[list[Cell]] = []
    for r, row in enumerate(table.rows):
        cells: list[Cell] = []
        for c, text in enumerate(row):
            if covered.get((r, c), (r, c)) != (r, c):
                continue
            rs, cs = table.spans.get((r, c), (1, 1))
            cells.append(Cell(" ".join(text.split()), r, c, rs, cs, table.boxes.get((r, c), box)))
        rows.append(cells)
    text = "\n".join(" | ".join(cell.text for cell in cells) for cells in rows)
    return Element(ElementType.TABLE, box, text, render_table(table, mode), rows=rows, header_rows=table.header_rows())
