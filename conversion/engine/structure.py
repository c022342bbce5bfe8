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

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .assembly import TableEdge
from .blocks import (
    Block,
    OutlineTitles,
    build_blocks,
    classify_headings,
    keep_introducing_headings,
    merge_wrapped_headings,
    title_front_matter,
)
from .elements import Element, ElementType, clip_to, drop_glyph_garbage, join_elements, page_spans, union
from .figures import figures, link_captions
from .furniture import margin_furniture, ornaments, strip_line_numbers
from .inline import PageLists, escape_inline, render_blocks
from .layout import HIDDEN_OFF_PAGE, Line, PageModel
from .order import Item, find_gutter, footnotes_last, reading_order
from .params import DEFAULT, EngineParams, PageParams
from .stats import DocStats
from .tables import Table, find_row_ruled_tables, find_ruled_tables, find_unruled_tables

__all__ = ["PAGE_STAGES", "DocStats", "PageWork", "RenderedPage", "Stage", "Table", "render_page"]


def _median_gap(segments: list[list[Item]], body: float, params: PageParams = DEFAULT.page) -> float:
    """The page's leading: the median gap between lines that follow one another in a segment."""
    p = params
    gaps: list[float] = []
    for seg in segments:
        prev: Line | None = None
        for it in seg:
            if isinstance(it, Line):
                if prev is not None:
                    gap = it.top - prev.bottom
                    if p.leading_gap_min_em * it.size < gap < p.leading_gap_max_em * it.size:
                        gaps.append(gap)
                prev = it
    if len(gaps) < p.leading_min_gaps:
        # Too few lines to measure the leading: assume a common one.
        return p.default_leading_em * body
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
    lists: PageLists = field(default_factory=PageLists)  # the list the page starts and ends with


@dataclass
class PageWork:
    """What the page stages hand on, one to the next: the page and the document around it
    (given), then each stage's output, in the order of `PAGE_STAGES`."""

    page: PageModel
    stats: DocStats
    tables_mode: str = "markdown"  # ConvertOptions.tables: "text" finds no tables
    outline_titles: OutlineTitles | None = None  # outline key -> (level, entry), this page's entries
    outline_complete: bool = False  # the outline lists every section heading
    outline_levels: bool = False  # the outline's depths are the headings' levels
    params: EngineParams = DEFAULT
    # furniture: the page's content lines, and the furniture taken out of them (running
    # headers and footers, page and line numbers, ornaments)
    lines: list[Line] = field(default_factory=list)
    running: list[Line] = field(default_factory=list)
    # vertical: lines written top to bottom, set aside from `lines`
    vertical: list[Line] = field(default_factory=list)
    # tables: the tables found, their lines taken out of `lines`
    tables: list[Table] = field(default_factory=list)
    # order: the reading order, by segment (a column, a band), and the id() of footnote lines
    segments: list[list[Item]] = field(default_factory=list)
    notes: set[int] = field(default_factory=set)
    # blocks, then headings: paragraphs, items, code, tables and figures, headings marked
    blocks: list[Block] = field(default_factory=list)
    # inline: the content's elements (Markdown of each), and the unmapped glyphs left out
    content: list[Element] = field(default_factory=list)
    unmapped: int = 0
    lists: PageLists = field(default_factory=PageLists)  # the list the page starts and ends with
    # elements: every element of the page, furniture and hidden text included, placed
    elements: list[Element] = field(default_factory=list)


def furniture_stage(work: PageWork) -> None:
    """page.lines -> lines, running: running lines (by the document's statistics), margin
    furniture, ornaments and margin line numbers taken out of the content."""
    page, stats = work.page, work.stats
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
    work.lines, work.running = lines, running


def vertical_stage(work: PageWork) -> None:
    """lines -> lines, vertical: lines written top to bottom set aside (they are read on
    their own, right to left)."""
    work.vertical = [ln for ln in work.lines if ln.vertical]
    if work.vertical:
        work.lines = [ln for ln in work.lines if not ln.vertical]


def tables_stage(work: PageWork) -> None:
    """lines -> lines, tables: tables drawn with rulings, ruled by rows only, then laid out
    by columns alone; their lines leave `lines`. Nothing with tables "text"."""
    if work.tables_mode == "text":
        return
    page, params = work.page, work.params
    found, lines = find_ruled_tables(page, work.lines, params.tables)
    by_rows, lines = find_row_ruled_tables(page, lines, params.tables)
    found += by_rows
    gutter = (
        find_gutter(lines, page.width, work.stats.document_gutter)
        if len(lines) >= params.page.gutter_min_lines
        else None
    )
    unruled, lines = find_unruled_tables(
        page, lines, work.stats.body_size, gutter, params.tables, lambda side: find_gutter(side, page.width)
    )
    found += unruled
    work.tables, work.lines = found, lines


def order_stage(work: PageWork) -> None:
    """lines, tables, vertical -> segments, notes: lines, tables and figures in reading
    order, footnotes after the body; vertical lines first where they dominate, else last."""
    page = work.page
    items: list[Item] = [*work.lines, *work.tables, *figures(page, work.tables)]
    segments, notes = footnotes_last(
        reading_order(items, page.width, document_gutter=work.stats.document_gutter), work.stats.body_size, page.height
    )
    vertical = work.vertical
    if vertical:
        # Vertical lines are read right to left; they come first where they dominate.
        column = sorted(vertical, key=lambda ln: (-ln.x1, ln.top))
        if sum(len(ln.text) for ln in vertical) > sum(len(ln.text) for ln in work.lines):
            segments.insert(0, list(column))
        else:
            segments.append(list(column))
    work.segments, work.notes = segments, notes


def blocks_stage(work: PageWork) -> None:
    """segments, notes -> blocks: paragraphs, list items, code, tables and figures; a lone
    monospaced line is a paragraph, a paragraph of footnote lines a footnote."""
    stats, params = work.stats, work.params
    blocks = build_blocks(
        work.segments,
        stats,
        _median_gap(work.segments, stats.body_size, params.page),
        work.outline_titles,
        outline_complete=work.outline_complete,
        params=params.blocks,
    )
    notes = work.notes
    for block in blocks:
        if block.kind == "code" and len(block.lines) < params.page.code_min_lines:
            # One monospaced line is more often a running title or a term than a program.
            block.kind = "p"
        if block.kind == "p" and notes and id(block.lines[0]) in notes:
            block.role = ElementType.FOOTNOTE
    work.blocks = blocks


def headings_stage(work: PageWork) -> None:
    """blocks -> blocks: the headings among the paragraphs and their levels; wrapped
    headings joined; front matter under the title and headings that introduce nothing
    back to paragraphs."""
    stats, params = work.stats, work.params.headings
    blocks = work.blocks
    classify_headings(
        blocks,
        stats,
        work.outline_titles or {},
        outline_complete=work.outline_complete,
        outline_levels=work.outline_levels,
        params=params,
    )
    blocks = merge_wrapped_headings(blocks, params)
    title_front_matter(blocks, params)
    keep_introducing_headings(blocks, stats.body_size, params)
    work.blocks = blocks


def inline_stage(work: PageWork) -> None:
    """blocks -> content, unmapped: each block's element and Markdown (inline styles,
    escapes, tables), glyphs without a Unicode value left out."""
    stats = work.stats
    content = render_blocks(
        work.blocks, work.tables_mode, mono_code=stats.mono_is_code, words=stats.words, lists=work.lists
    )
    work.content, work.unmapped = drop_glyph_garbage(content)
    if len(work.content) < len(content):
        # What the page shows its neighbours refers to elements it still shows.
        kept = {id(e) for e in work.content}
        lists = work.lists
        lists.lead = [(e, entry) for e, entry in lists.lead if id(e) in kept]
        if lists.head is not None and id(content[0]) not in kept:
            lists.head = lists.head_frame = None  # the paragraph it opened with is gone
        if lists.end_item is not None and id(content[-1]) not in kept:
            lists.end_item = None


def elements_stage(work: PageWork) -> None:
    """content, running, page.hidden -> elements: the furniture of the upper half, the
    content, that of the lower half, hidden text; captions linked, each element's span in
    the page's Markdown and its box on the page."""
    page = work.page
    elements = [
        *furniture_elements(work.running, page, top=True),
        *work.content,
        *furniture_elements(work.running, page, top=False),
        *hidden_elements(page.hidden, work.params.page),
    ]
    link_captions(elements)
    for element, span in zip(elements, page_spans(elements), strict=True):
        element.md_span = span
        if element.reason != HIDDEN_OFF_PAGE:
            # Glyphs may reach past the page's edge (a descender on the last line, a picture
            # bleeding off): a box says where the element sits on the page.
            clip_to(element, page.width, page.height)
    work.elements = elements


@dataclass(frozen=True)
class Stage:
    name: str  # its time goes to the conversion's timings as "structure.<name>"
    run: Callable[[PageWork], None]


# The page pipeline, in order: each stage reads what those before it wrote in `PageWork`.
PAGE_STAGES: tuple[Stage, ...] = (
    Stage("furniture", furniture_stage),
    Stage("vertical", vertical_stage),
    Stage("tables", tables_stage),
    Stage("order", order_stage),
    Stage("blocks", blocks_stage),
    Stage("headings", headings_stage),
    Stage("inline", inline_stage),
    Stage("elements", elements_stage),
)


def render_page(
    page: PageModel,
    stats: DocStats,
    *,
    tables: str,
    outline_titles: OutlineTitles | None = None,
    outline_complete: bool = False,
    outline_levels: bool = False,
    params: EngineParams = DEFAULT,
    timings: dict[str, float] | None = None,
) -> RenderedPage:
    """The elements and Markdown of one page, given statistics of the document around it,
    and the tables at its edges (which may run on from the page before or onto the next).
    `outline_complete`: the outline lists every section heading (none where it is empty).
    `outline_levels`: the outline's depths are the headings' levels.
    `timings`: where given, each stage's seconds are added to "structure.<stage>"."""
    work = PageWork(page, stats, tables, outline_titles, outline_complete, outline_levels, params)
    if timings is None:
        for stage in PAGE_STAGES:
            stage.run(work)
    else:
        for stage in PAGE_STAGES:
            started = time.perf_counter()
            stage.run(work)
            key = f"structure.{stage.name}"
            timings[key] = timings.get(key, 0.0) + time.perf_counter() - started
    blocks = work.blocks
    first = blocks[0].table if blocks and blocks[0].kind == "table" else None
    last = blocks[-1].table if blocks and blocks[-1].kind == "table" else None
    return RenderedPage(
        join_elements(work.elements),
        work.elements,
        first=TableEdge.of(first) if first is not None else None,
        last=TableEdge.of(last) if last is not None else None,
        unmapped=work.unmapped,
        hidden=dict(Counter(ln.hidden for ln in page.hidden)),
        lists=work.lists,
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


def hidden_elements(lines: Sequence[Line], params: PageParams = DEFAULT.page) -> list[Element]:
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
                and -params.hidden_overlap_heights * ln.height
                <= ln.top - last.bottom
                <= params.hidden_gap_heights * ln.height
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
