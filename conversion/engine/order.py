"""Reading order of a page: columns found by their gutters, spanning items in place."""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Sequence

from .elements import GLYPH_GARBAGE
from .figures import Figure
from .layout import BOLD, MONO, Line, is_rtl, line_logical
from .lists import BARE_NUMBER, LONE_MARKER, bullet_glyph, list_marker
from .tables import Table

Item = Line | Table | Figure

# A gutter's left column is text wrapped at the gutter: of its lines that go on to another
# line of the same paragraph, at least this fraction end within a quarter of the column's
# width of the gutter (a column of labels or a table's first column does not).
_WRAPPED_FRACTION = 0.5
# Lines of one paragraph follow each other at most this many of their font sizes apart
# (leading), in the same size.
_PARAGRAPH_LEADING_EMS = 0.8
# ... and start at most this many of their font sizes apart across (a first-line indent).
_INDENT_EMS = 2.0
# Cuts nested at most this deep (columns within columns): a bound on the work per page.
_MAX_CUTS = 4

# A footnote starts with its mark: a number, a symbol or superscript digits.
_FOOTNOTE_MARK = re.compile(
    r"\s*(?:\d{1,3}(?![\d.,:/-]\S)|[*\u2020\u2021\u00a7\u00b6]|[\u00b9\u00b2\u00b3\u2070-\u2079]+)"
)


def find_gutter(items: Sequence[Item], page_width: float, document: float | None = None) -> float | None:
    """x of a gutter between text columns in `items`, or None.

    A gutter is an interior strip crossed by few items, with enough lines on both sides
    that overlap vertically, and with left-side lines that mostly run up to it, or
    whose paragraphs wrap at it (prose, not a label column; code and headings beside).

    `document`: the gutter most of the document's pages have (`DocStats.document_gutter`).
    Where no gutter is found so, the document's is the page's where it falls in such a strip
    and one side of it is prose: the other side's column holds a table, a list or code, whose
    short lines alone would not make a column.
    """
    lines = [it for it in items if isinstance(it, Line)]
    if len(lines) < 6:
        return None
    xmin = min(it.x0 for it in items)
    xmax = max(it.x1 for it in items)
    width = xmax - xmin
    if width < 120:
        return None
    step = 2.0
    nb = int(width / step) + 2
    diff = [0] * (nb + 1)
    for it in items:
        a = int((it.x0 - xmin) / step)
        b = int((it.x1 - xmin) / step)
        diff[a] += 1
        diff[b + 1] -= 1
    cover = []
    acc = 0
    for d in diff[:nb]:
        acc += d
        cover.append(acc)
    lo, hi = int(0.15 * width / step), int(0.85 * width / step)
    interior = sorted(cover[lo:hi])
    if not interior:
        return None
    # A gutter is a deep dip relative to the typical coverage of the text columns.
    limit = max(2, int(0.35 * interior[len(interior) // 2]))
    cands: list[tuple[int, int, int, int]] = []  # (max cover, -width, start, end)
    i = lo
    while i < hi:
        if cover[i] > limit:
            i += 1
            continue
        j = i
        peak = 0
        while j < hi and cover[j] <= limit:
            peak = max(peak, cover[j])
            j += 1
        if (j - i) * step >= 4:
            cands.append((peak, -(j - i), i, j))
        i = j
    # The emptiest strip first; a strip beside a margin note or a header is no gutter,
    # but one further in may be.
    for _, _, i, j in sorted(cands)[:3]:
        # The gutter is the emptiest part of the strip (the strip itself may reach into
        # the columns' ragged edges where a few lines stop early).
        least = min(cover[i:j])
        k = i
        while cover[k] != least:
            k += 1
        m = k
        while m < j and cover[m] == least:
            m += 1
        centre = xmin + (k + m) / 2 * step
        gutter = _gutter_between(lines, xmin + i * step, centre, page_width)
        if gutter is not None:
            return gutter
    for _, _, i, j in cands:
        if document is not None and xmin + i * step <= document <= xmin + j * step:
            return _gutter_between(lines, xmin + i * step, document, page_width, one_prose=True)
    return None


def _gutter_between(
    lines: list[Line], gx0: float, gc: float, page_width: float, *, one_prose: bool = False
) -> float | None:
    """`gc` if the strip from gx0 (where the left column's ragged edge begins) to past
    gc (its emptiest part) parts two columns of text, else None. `one_prose`: the document's
    columns part here, and prose on either side is enough (the left side's then need not
    reach the strip where the right side is prose)."""
    left = [ln for ln in lines if ln.x1 <= gc]
    right = [ln for ln in lines if ln.x0 >= gc]
    if len(left) < 3 or len(right) < 3:
        return None
    ltop, lbot = min(ln.top for ln in left), max(ln.bottom for ln in left)
    rtop, rbot = min(ln.top for ln in right), max(ln.bottom for ln in right)
    overlap = min(lbot, rbot) - max(ltop, rtop)
    if overlap < 0.3 * min(lbot - ltop, rbot - rtop):
        return None
    # Columns of prose have long lines; table cells are short. (Upper quartile, since
    # formulas and list labels inside a column are short too.) A column of short side
    # labels beside prose is a column too when the labels are set in a style of their own
    # on baselines of their own: cells of a table share their row's baseline and style.
    # A list is a column of short lines too.
    prose = [_prose_column(side, page_width) or _list_column(side) for side in (left, right)]
    lwidth = gx0 - min(ln.x0 for ln in left)
    reaching = sum(1 for ln in left if ln.x1 >= gx0 - 0.25 * lwidth)
    if (
        reaching < 0.4 * len(left)
        and not _wrapped_at(left, gx0 - 0.25 * lwidth)
        and not _list_column(left)
        and not (one_prose and prose[1])
    ):
        return None
    if one_prose:
        if not any(prose):
            return None
        # Cells of a table, entries of a contents page: the short side's lines stand on the
        # baselines of the other's, row by row; a column of its own keeps its own leading.
        short = right if prose[0] and not prose[1] else left
        other = left if short is right else right
        baselines = sorted(ln.bottom for ln in other)
        shared = sum(1 for ln in short if _on_baseline(ln.bottom, baselines))
        return gc if shared < _SHARED_BASELINES_SHARE * len(short) else None
    if not all(prose) and not (prose[1] and _label_column(left, right)):
        return None
    return gc


# A side whose lines mostly open list items is a column of its own, short as they are:
# items do not wrap, but a table's cells do not each open with a marker. The share of its
# lines (of list size) that open with a bullet or number.
_LIST_COLUMN_SHARE = 0.6


def _list_column(side: list[Line]) -> bool:
    """Whether the lines of `side` are a list: most of them open an item."""
    body = Counter(round(ln.size, 1) for ln in side).most_common(1)[0][0]
    return sum(1 for ln in side if list_marker(ln, body) is not None) >= _LIST_COLUMN_SHARE * len(side)


def _wrapped_at(side: list[Line], edge: float) -> bool:
    """Whether the text of `side` wraps at `edge`: the lines that a paragraph goes on
    from (the same size directly below, starting under it) mostly end at `edge` or beyond.

    Code, headings and a paragraph's last line say nothing of where a column ends; only
    lines continued by the next one do. A column of labels or short cells does not wrap.
    """
    continued = _continued_lines(side)
    wrapped = sum(1 for ln in continued if ln.x1 >= edge)
    return bool(continued) and wrapped >= _WRAPPED_FRACTION * len(continued)


def _continued_lines(side: list[Line]) -> list[Line]:
    """The lines of `side` (not monospaced) that a paragraph goes on from: the next line
    below is in the same size, within its leading and starting under it."""
    body = [ln for ln in side if not ln.style & MONO]
    body.sort(key=lambda ln: ln.top)
    continued = []
    for k, ln in enumerate(body):
        below = None
        for b in body[k + 1 :]:
            if b.top - ln.bottom > _PARAGRAPH_LEADING_EMS * ln.size:
                break  # sorted by top: nothing further down is close enough
            if b.top >= ln.bottom - 0.3 * ln.height and b.x0 < ln.x1:
                below = b
                break
        if below is None or below.size != ln.size or abs(below.x0 - ln.x0) > _INDENT_EMS * ln.size:
            continue
        continued.append(ln)
    return continued


# Share of the short side's lines standing on a baseline of the other side (within
# `_BASELINE_PT`) from which the two sides are rows of one table, not two columns.
_SHARED_BASELINES_SHARE = 0.5
_BASELINE_PT = 1.0


def _on_baseline(bottom: float, baselines: list[float]) -> bool:
    """Whether `bottom` lies within `_BASELINE_PT` of one of `baselines` (sorted)."""
    k = bisect.bisect_left(baselines, bottom - _BASELINE_PT)
    return k < len(baselines) and baselines[k] <= bottom + _BASELINE_PT


# A line of prose is at least this fraction of the page's width long.
_PROSE_LINE_PAGE_SHARE = 0.18
# A side holds a paragraph of prose where at least this many of its long lines go on to the
# next line of their paragraph (a paragraph of four lines or more): a table, a list or code
# set in the column beside its paragraphs has many short lines, its prose a few long ones.
_PROSE_WRAPPED_LINES = 3


def _prose_column(side: list[Line], page_width: float) -> bool:
    """Whether `side` is a column of prose: a quarter of its lines at least are long, or
    it holds a paragraph of long lines."""
    long = _PROSE_LINE_PAGE_SHARE * page_width
    widths = sorted(ln.x1 - ln.x0 for ln in side)
    if widths[(3 * len(widths)) // 4] >= long:
        return True
    return sum(1 for ln in _continued_lines(side) if ln.x1 - ln.x0 >= long) >= _PROSE_WRAPPED_LINES


def _label_column(labels: list[Line], prose: list[Line]) -> bool:
    sizes = Counter(ln.size for ln in prose)
    body = max(sizes.items(), key=lambda kv: kv[1])[0]
    # Only what stands beside the prose counts (not a header above both columns).
    top, bottom = min(ln.top for ln in prose), max(ln.bottom for ln in prose)
    labels = [ln for ln in labels if top <= ln.cy <= bottom]
    if len(labels) < 3:
        return False
    # (A header line or two beside the top of the prose may share its style.)
    own = sum(1 for ln in labels if ln.style & BOLD or abs(ln.size - body) > 0.6)
    if own < 0.85 * len(labels):
        return False
    baselines = [ln.bottom for ln in prose]
    shared = sum(1 for ln in labels if any(abs(ln.bottom - b) < 1.0 for b in baselines))
    return shared < 0.5 * len(labels)


# A word: two letters or more in a row.
_WORD = re.compile(r"[^\W\d_]{2}")


def _merge_row_markers(row: list[Item]) -> list[Item]:
    """Join a lone list marker with the text that follows it on the same row."""
    out: list[Item] = []
    for it in row:
        prev = out[-1] if out else None
        if not isinstance(it, Line) or not isinstance(prev, Line) or it.x0 - prev.x1 >= 4 * it.size:
            out.append(it)
            continue
        marker = prev.text.strip()
        if not GLYPH_GARBAGE.sub("", it.text).strip():
            # Nothing readable follows (glyphs without Unicode): no item to number.
            out.append(it)
            continue
        if BARE_NUMBER.match(marker) and it.x0 - prev.x1 >= it.size and _WORD.search(it.text):
            # A number alone before a tab stop numbers an item ("1" <tab> "First section");
            # numbers apart on a row with no word after them (a printer's key "1 3 5 7", a
            # row of figures, a formula's "2 g") number nothing.
            marker += "."
        if LONE_MARKER.match(marker) or (bullet_glyph(marker) and it.x0 - prev.x1 >= it.size):
            # Any symbol before a tab stop is a word processor's bullet (`glyph_bullet`).
            out[-1] = Line(
                x0=prev.x0,
                top=min(prev.top, it.top),
                x1=it.x1,
                bottom=max(prev.bottom, it.bottom),
                text=marker + " " + it.text,
                spans=[(marker + " ", prev.style), *it.spans],
                size=it.size,
                style=it.style,
                glyph_x=prev.glyph_x + it.glyph_x,
                glyph_text=prev.glyph_text + it.glyph_text,
                color=it.color,
            )
        else:
            out.append(it)
    return out


def reads_from_right(items: list[Item]) -> bool:
    """Whether `items` are laid out right to left (their columns read from the right):
    most of the letters of their prose are in lines read right to left. Code is left out:
    it is written left to right whatever the language of the page."""
    rtl = ltr = 0
    for it in items:
        if isinstance(it, Line) and not it.style & MONO:
            letters = sum(ch.isalpha() for ch in it.text)
            if it.rtl:
                rtl += letters
            else:
                ltr += letters
    return rtl > ltr


def _rtl_row(row: list[Item]) -> list[Item]:
    """A row of items written mainly right to left, in reading order: from the right, and
    the pieces of each line joined as one line in its reading order.

    Layout splits such a row where the font or the direction changes (a Latin word, a
    number, a full stop); the pieces, read left to right, would put the end of the
    sentence first. The pieces between two other items (a picture, a table) are
    reordered as one line; the items are read from the right.
    """
    lines = [it for it in row if isinstance(it, Line)]
    if len(row) < 2 or (not any(ln.rtl for ln in lines) and not is_rtl("".join(ln.text for ln in lines))):
        return row
    if lines and all(ln.style & MONO for ln in lines):
        return row  # code is written left to right
    groups: list[list[Item]] = []
    for it in row:
        last = groups[-1] if groups else None
        if last is not None and isinstance(it, Line) and all(isinstance(g, Line) for g in last):
            last.append(it)
        else:
            groups.append([it])
    return [
        _rtl_line([g for g in group if isinstance(g, Line)]) if len(group) > 1 else group[0]
        for group in reversed(groups)
    ]


def _rtl_line(lines: list[Line]) -> Line:
    """Pieces of one row of right-to-left text as one line in reading order.

    A list marker printed apart at the right end of the row (a browser's number of an
    ordered list, "1." drawn as ".1") opens the line: the bidirectional algorithm would
    read its digits as part of the Latin or number run beside it.
    """
    right = max(lines, key=lambda ln: ln.x1)
    marker = right.text.strip()
    if len(lines) > 1 and right.rtl and LONE_MARKER.match(marker) and GLYPH_GARBAGE.sub("", marker):
        rest = _rtl_line([ln for ln in lines if ln is not right])
        text = f"{marker} {rest.text}"
        return Line(
            x0=rest.x0,
            top=min(rest.top, right.top),
            x1=right.x1,
            bottom=max(rest.bottom, right.bottom),
            text=text,
            spans=[(marker + " ", right.style), *rest.spans],
            size=max(rest.size, right.size),
            style=rest.style & right.style,
            glyph_x=rest.glyph_x + right.glyph_x,
            glyph_text=rest.glyph_text + right.glyph_text,
            rtl=True,
            code_glyphs=rest.code_glyphs + [False] * len(right.glyph_text) if rest.code_glyphs else None,
            color=rest.color,
        )
    glyph_x: list[float] = []
    glyph_text: list[str] = []
    code: list[bool] = []  # inline code: the glyphs of a monospaced piece or run
    for ln in sorted(lines, key=lambda ln: ln.x0):
        if glyph_text and not glyph_text[-1].isspace() and not ln.glyph_text[0].isspace():
            # A gap between the pieces, or a change of direction, is a word space; a font
            # change inside a word is neither.
            a, b = glyph_text[-1], ln.glyph_text[0]
            turns = a.isalnum() and b.isalnum() and is_rtl(a) != is_rtl(b)
            if turns or ln.x0 - glyph_x[-1] > 0.15 * ln.size:
                glyph_x += [glyph_x[-1], ln.x0]
                glyph_text.append(" ")
                code.append(False)
        glyph_x += ln.glyph_x
        glyph_text += ln.glyph_text
        code += ln.code_glyphs or [bool(ln.style & MONO)] * len(ln.glyph_text)
    text = " ".join(line_logical(glyph_x, glyph_text, True, code if any(code) else None).split())
    style = lines[0].style
    for ln in lines:
        style &= ln.style
    return Line(
        x0=min(ln.x0 for ln in lines),
        top=min(ln.top for ln in lines),
        x1=max(ln.x1 for ln in lines),
        bottom=max(ln.bottom for ln in lines),
        text=text,
        spans=[(text, style)],
        size=max(ln.size for ln in lines),
        style=style,
        glyph_x=glyph_x,
        glyph_text=glyph_text,
        rtl=True,
        code_glyphs=code if any(code) else None,
        color=lines[0].color,
    )


def _in_rows(items: list[Item]) -> list[Item]:
    """Top-to-bottom, and left-to-right within a row of vertically overlapping items
    (a row written right to left becomes one line in its reading order)."""
    out: list[Item] = []
    row: list[Item] = []
    row_bottom = 0.0
    for it in sorted(items, key=lambda it: it.top):
        h = it.bottom - it.top
        if row and (it.top + it.bottom) / 2 < row_bottom and it.top < row_bottom - 0.3 * h:
            row.append(it)
        else:
            if row:
                out.extend(_merge_row_markers(_rtl_row(sorted(row, key=lambda it: it.x0))))
            row = [it]
            row_bottom = it.bottom
    if row:
        out.extend(_merge_row_markers(_rtl_row(sorted(row, key=lambda it: it.x0))))
    return out


def reading_order(
    items: list[Item],
    page_width: float,
    depth: int = 0,
    rtl: bool | None = None,
    document_gutter: float | None = None,
) -> list[list[Item]]:
    """Split `items` into segments read one after the other (columns, spanning parts).

    A recursive cut along the page's whitespace: the region's gutter splits it into
    columns, read one after the other between the items that span the gutter (titles,
    tables, figures, full-width paragraphs), which stay in place; each column is a region
    of its own, cut again (a column may hold columns). `rtl` reads columns from the
    right; None tells it from the text of each band. `document_gutter`: the gutter of the
    document's columns (`find_gutter`), for the page's first cut.
    """
    if not items:
        return []
    gutter = find_gutter(items, page_width, document_gutter if depth == 0 else None) if depth < _MAX_CUTS else None
    if gutter is None:
        return [_in_rows(items)]
    spanning = sorted((it for it in items if it.x0 < gutter < it.x1), key=lambda it: it.top)
    rest = [it for it in items if not (it.x0 < gutter < it.x1)]
    segments: list[list[Item]] = []
    # Bands run from one spanning item's top to the next one's, so every item lands in
    # exactly one band and nothing is lost beside a spanning line.
    band_top = -math.inf
    pending: list[Item] = []
    for sp in [*spanning, None]:
        band_bottom = sp.top if sp is not None else math.inf
        band = [it for it in rest if band_top <= (it.top + it.bottom) / 2 < band_bottom]
        if band:
            if pending:
                segments.append(_in_rows(pending))
                pending = []
            left = [it for it in band if (it.x0 + it.x1) / 2 < gutter]
            right = [it for it in band if (it.x0 + it.x1) / 2 >= gutter]
            if rtl if rtl is not None else reads_from_right(band):
                # Columns of right-to-left text are read from the right.
                left, right = right, left
            segments.extend(reading_order(left, page_width, depth + 1, rtl))
            segments.extend(reading_order(right, page_width, depth + 1, rtl))
        if sp is not None:
            pending.append(sp)
            band_top = sp.top
    if pending:
        segments.append(_in_rows(pending))
    return segments


def footnotes_last(segments: list[list[Item]], body: float, page_height: float) -> tuple[list[list[Item]], set[int]]:
    """Footnotes at the foot of a column moved after the body of the page; and the id()
    of each footnote line.

    A footnote is the run of small lines that ends a column in the lower part of the
    page, beginning with a footnote mark. Read in column order, a first column's notes
    would fall between its last sentence and the next column's first.
    """
    if len(segments) < 2:
        return segments, set()
    notes: list[Item] = []
    for seg in segments:
        k = len(seg)
        while k > 0:
            it = seg[k - 1]
            if not isinstance(it, Line) or it.size >= 0.9 * body or it.top < 0.55 * page_height:
                break
            k -= 1
        # Walk forward to the first line that carries a mark: the notes start there.
        while k < len(seg):
            it = seg[k]
            if isinstance(it, Line) and _FOOTNOTE_MARK.match(it.text):
                break
            k += 1
        if 0 < k < len(seg):
            notes += seg[k:]
            del seg[k:]
    if not notes:
        return segments, set()
    return [*(seg for seg in segments if seg), notes], {id(it) for it in notes}
