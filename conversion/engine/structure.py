"""Structure recovery: from laid-out text lines to GitHub-flavoured Markdown.

Works on `PageModel`s only, so it is cheap next to pdfminer's layout analysis. Document
statistics (body font size, heading sizes, running headers and footers) are gathered
incrementally in `DocStats` from every page parsed so far, so `convert` can stream pages
with a small look-ahead instead of holding the whole document first.

Nothing of the text layer is dropped except lines recognised as running headers, footers,
page numbers and margin line numbers; list bullets (including unmapped "(cid:N)" bullet
glyphs) become Markdown list markers. Characters Markdown would interpret are escaped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .assembly import TableEdge
from .blocks import (
    build_blocks,
    classify_headings,
    keep_introducing_headings,
    merge_wrapped_headings,
    title_front_matter,
)
from .elements import Element, ElementType, clip_to, drop_glyph_garbage, join_elements, page_spans, union
from .figures import figures, link_captions
from .furniture import margin_furniture, ornaments, strip_line_numbers
from .inline import escape_inline, render_blocks
from .layout import HIDDEN_OFF_PAGE, Line, PageModel
from .order import Item, find_gutter, footnotes_last, reading_order
from .stats import DocStats
from .tables import Table, find_row_ruled_tables, find_ruled_tables, find_unruled_tables

__all__ = ["DocStats", "RenderedPage", "Table", "render_page"]


def _median_gap(segments: list[list[Item]], body: float) -> float:
    gaps: list[float] = []
    for seg in segments:
        prev: Line | None = None
        for it in seg:
            if isinstance(it, Line):
                if prev is not None:
                    gap = it.top - prev.bottom
                    if -0.2 * it.size < gap < 2 * it.size:
                        gaps.append(gap)
                prev = it
    if len(gaps) < 3:
        # Too few lines to measure the leading: assume a common one.
        return 0.3 * body
    gaps.sort()
    return max(gaps[len(gaps) // 2], 0.0)


@dataclass(frozen=True)
class RenderedPage:
    markdown: str  # exactly join_elements(elements)
    elements: list[Element] = field(default_factory=list)
    first: TableEdge | None = None  # the table the page starts with
    last: TableEdge | None = None  # the table the page ends with
    unmapped: int = 0  # glyphs without a Unicode value, left out
    hidden: dict[str, int] = field(default_factory=dict)  # lines of hidden text by reason


def render_page(
    page: PageModel,
    stats: DocStats,
    *,
    tables: str,
    outline_titles: dict[str, int] | None = None,
    outline_complete: bool = False,
) -> RenderedPage:
    """The elements and Markdown of one page, given statistics of the document around it,
    and the tables at its edges (which may run on from the page before or onto the next).
    `outline_complete`: the outline lists every section heading (none where it is empty)."""
    running: list[Line] = []  # page furniture: running headers and footers, page and line numbers
    lines: list[Line] = []
    for ln in page.lines:
        (running if stats.is_running(ln, page) else lines).append(ln)
    furniture = margin_furniture(lines, page, stats.body_size) | ornaments(page, lines)
    if furniture:
        running += [ln for ln in lines if id(ln) in furniture]
        lines = [ln for ln in lines if id(ln) not in furniture]
    numbered = strip_line_numbers(lines)
    if len(numbered) < len(lines):
        kept = {id(ln) for ln in numbered}
        running += [ln for ln in lines if id(ln) not in kept]
        lines = numbered
    vertical = [ln for ln in lines if ln.vertical]
    if vertical:
        lines = [ln for ln in lines if not ln.vertical]
    found: list[Table] = []
    if tables != "text":
        found, lines = find_ruled_tables(page, lines)
        by_rows, lines = find_row_ruled_tables(page, lines)
        found += by_rows
        gutter = find_gutter(list(lines), page.width) if len(lines) >= 6 else None
        unruled, lines = find_unruled_tables(page, lines, stats.body_size, gutter)
        found += unruled
    items: list[Item] = [*lines, *found, *figures(page, found)]
    segments, notes = footnotes_last(reading_order(items, page.width), stats.body_size, page.height)
    if vertical:
        # Vertical lines are read right to left; they come first where they dominate.
        column = sorted(vertical, key=lambda ln: (-ln.x1, ln.top))
        if sum(len(ln.text) for ln in vertical) > sum(len(ln.text) for ln in lines):
            segments.insert(0, list(column))
        else:
            segments.append(list(column))
    blocks = build_blocks(
        segments, stats, _median_gap(segments, stats.body_size), outline_titles, outline_complete=outline_complete
    )
    for block in blocks:
        if block.kind == "code" and len(block.lines) == 1:
            # One monospaced line is more often a running title or a term than a program.
            block.kind = "p"
        if block.kind == "p" and notes and id(block.lines[0]) in notes:
            block.role = ElementType.FOOTNOTE
    classify_headings(blocks, stats, outline_titles or {}, outline_complete=outline_complete)
    blocks = merge_wrapped_headings(blocks)
    title_front_matter(blocks)
    keep_introducing_headings(blocks, stats.body_size)
    content = render_blocks(blocks, tables, mono_code=stats.mono_is_code, words=stats.words)
    content, unmapped = drop_glyph_garbage(content)
    elements = [
        *furniture_elements(running, page, top=True),
        *content,
        *furniture_elements(running, page, top=False),
        *hidden_elements(page.hidden),
    ]
    link_captions(elements)
    for element, span in zip(elements, page_spans(elements), strict=True):
        element.md_span = span
        if element.reason != HIDDEN_OFF_PAGE:
            # Glyphs may reach past the page's edge (a descender on the last line, a picture
            # bleeding off): a box says where the element sits on the page.
            clip_to(element, page.width, page.height)
    first = blocks[0].table if blocks and blocks[0].kind == "table" else None
    last = blocks[-1].table if blocks and blocks[-1].kind == "table" else None
    return RenderedPage(
        join_elements(elements),
        elements,
        first=TableEdge.of(first) if first is not None else None,
        last=TableEdge.of(last) if last is not None else None,
        unmapped=unmapped,
        hidden=dict(Counter(ln.hidden for ln in page.hidden)),
    )


def furniture_elements(lines: Sequence[Line], page: PageModel, *, top: bool) -> list[Element]:
    """Running headers, footers and page numbers of the upper (or lower) half of the page:
    elements left out of the Markdown."""
    kind = ElementType.PAGE_HEADER if top else ElementType.PAGE_FOOTER
    half = [ln for ln in lines if (ln.cy < page.height / 2) == top]
    return [
        Element(
            kind,
            _box(ln),
            ln.text.strip(),
            escape_inline(" ".join(ln.text.split())),
            in_markdown=False,
        )
        for ln in sorted(half, key=lambda ln: (ln.top, ln.x0))
    ]


def hidden_elements(lines: Sequence[Line]) -> list[Element]:
    """Text a reader of the page cannot see, with the reason: left out of the Markdown.

    Lines hidden for one reason that follow one another down the page, overlapping across
    it, are one element (a paragraph in white, a column of invisible numbers).
    """
    groups: list[list[Line]] = []
    for ln in sorted(lines, key=lambda ln: (ln.top, ln.x0)):
        for group in groups:
            last = group[-1]
            if (
                last.hidden == ln.hidden
                and -0.5 * ln.height <= ln.top - last.bottom <= ln.height
                and min(last.x1, ln.x1) > max(last.x0, ln.x0)
            ):
                group.append(ln)
                break
        else:
            groups.append([ln])
    out: list[Element] = []
    for group in groups:
        text = " ".join(" ".join(ln.text.split()) for ln in group)
        box = union([_box(ln) for ln in group])
        out.append(Element(ElementType.HIDDEN_TEXT, box, text, escape_inline(text), False, reason=group[0].hidden))
    return out


def _box(line: Line) -> tuple[float, float, float, float]:
    return (line.x0, line.top, line.x1, line.bottom)
