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

import html
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from .layout import BOLD, ITALIC, MONO, Line, PageModel, compat_text

__all__ = ["DocStats", "Table", "render_page"]

# --- document statistics --------------------------------------------------------------

_MARGIN_ZONE = 0.1  # fraction of page height at top and bottom where running lines live
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"^[ivxlcdm]+$")


def _running_key(line: Line, page: PageModel) -> str | None:
    if line.bottom <= page.height * _MARGIN_ZONE:
        zone = "T"
    elif line.top >= page.height * (1 - _MARGIN_ZONE):
        zone = "B"
    else:
        return None
    text = " ".join(line.text.lower().split())
    if _ROMAN.match(text):
        text = "#"
    # Running lines sit at the same height on every page; the position is part of the key.
    return f"{zone}{round(line.top / 6)}:" + _DIGITS.sub("#", text)


class DocStats:
    """Font and repetition statistics over the pages parsed so far."""

    def __init__(self) -> None:
        self.pages = 0
        self._size_chars: Counter[float] = Counter()
        self._prose_chars: Counter[float] = Counter()
        self._mono_chars = 0
        self._chars = 0
        self._running: Counter[str] = Counter()
        self._body: float | None = None
        self._levels: dict[float, int] | None = None
        # Words of the pages parsed so far (lowercase, hyphenated compounds whole): the
        # evidence for keeping or dropping a hyphen at a line break.
        self.words: Counter[str] = Counter()

    def add_page(self, page: PageModel) -> None:
        self.pages += 1
        keys: set[str] = set()
        for line in page.lines:
            n = len(line.text)
            self._size_chars[line.size] += n
            if n >= 30:
                # Body text is told by its long lines; table cells would outvote it.
                self._prose_chars[line.size] += n
            self._chars += n
            if line.style & MONO:
                self._mono_chars += n
            key = _running_key(line, page)
            if key is not None:
                keys.add(key)
        self._running.update(keys)
        self.words.update(_WORD.findall("\n".join(ln.text for ln in page.lines).lower()))
        self._body = None
        self._levels = None

    @property
    def body_size(self) -> float:
        if self._body is None:
            counts = self._prose_chars or self._size_chars
            self._body = max(counts.items(), key=lambda kv: (kv[1], -kv[0]))[0] if counts else 10.0
        return self._body

    @property
    def mono_body(self) -> bool:
        """Most text is monospaced: then monospace does not mean code."""
        return self._chars > 0 and self._mono_chars > 0.5 * self._chars

    def heading_level_for_size(self, size: float) -> int | None:
        if self._levels is None:
            body = self.body_size
            sizes = sorted((s for s in self._size_chars if s >= body * 1.15), reverse=True)
            self._levels = {s: min(i + 1, 5) for i, s in enumerate(sizes)}
        return self._levels.get(size)

    @property
    def bold_heading_level(self) -> int:
        self.heading_level_for_size(self.body_size)
        assert self._levels is not None
        return min(len(self._levels) + 1, 6)

    def is_running(self, line: Line, page: PageModel) -> bool:
        """True for a header, footer or page number repeated across the selected pages.

        With a single page nothing is removed; with two pages only lines at the very
        edge that repeat on both; from three pages on, lines of the margin zones that
        repeat (digits ignored, same height) on two pages of up to four, or on 30% of
        the pages (at least three) of longer selections.
        """
        if self.pages < 2:
            return False
        key = _running_key(line, page)
        if key is None:
            return False
        count = self._running[key]
        if self.pages == 2:
            edge = page.height * 0.08
            return count == 2 and (line.bottom <= edge or line.top >= page.height - edge)
        # Headers often alternate between odd and even pages (title, chapter), so a
        # repetition on a third of the pages is enough.
        return count >= (2 if self.pages < 5 else max(3, math.ceil(0.3 * self.pages)))


# --- tables ---------------------------------------------------------------------------


@dataclass
class Table:
    x0: float
    top: float
    x1: float
    bottom: float
    rows: list[list[str]]


def _cluster(values: Iterable[float], tol: float) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if out and v - out[-1] <= tol:
            continue
        out.append(v)
    return out


def _merge_segments(segs: Sequence[tuple[float, float, float]], tol: float = 1.5) -> list[tuple[float, float, float]]:
    """Merge collinear, touching rulings: cell borders become whole grid lines."""
    merged: list[tuple[float, float, float]] = []
    groups: list[list[tuple[float, float, float]]] = []
    for seg in sorted(segs):
        if groups and seg[0] - groups[-1][0][0] <= tol:
            groups[-1].append(seg)
        else:
            groups.append([seg])
    for group in groups:
        pos = sum(s[0] for s in group) / len(group)
        cur: list[float] | None = None
        for _, a, b in sorted(group, key=lambda s: s[1]):
            if cur is not None and a <= cur[1] + 2:
                cur[1] = max(cur[1], b)
            else:
                if cur is not None:
                    merged.append((pos, cur[0], cur[1]))
                cur = [a, b]
        if cur is not None:
            merged.append((pos, cur[0], cur[1]))
    return merged


def _split_line_cells(line: Line, xs: Sequence[float]) -> dict[int, str]:
    """Text of `line` per column of the boundaries `xs`, split at glyph centres."""
    parts: dict[int, list[str]] = {}
    col = 0
    for x0, x1, text in line.chars:
        cx = (x0 + x1) / 2
        while col + 1 < len(xs) - 1 and cx > xs[col + 1]:
            col += 1
        parts.setdefault(col, []).append(text)
    return {c: "".join(t).strip() for c, t in parts.items()}


def _grid_table(
    lines: list[Line],
    xs: list[float],
    ys: list[float],
    vs: Sequence[tuple[float, float, float]] = (),
) -> tuple[Table | None, set[int]]:
    x0, x1, top, bottom = xs[0], xs[-1], ys[0], ys[-1]
    inside = [
        i for i, ln in enumerate(lines) if x0 - 1 <= (ln.x0 + ln.x1) / 2 <= x1 + 1 and top - 1 <= ln.cy <= bottom + 1
    ]
    if not inside:
        return None, set()
    row_edges: dict[int, tuple[list[float], list[int]]] = {}

    def edges_of(row: int) -> tuple[list[float], list[int]]:
        """Column edges present in `row` (a merged cell lacks its inner rulings)."""
        if row not in row_edges:
            mid = (ys[row] + ys[row + 1]) / 2
            keep = [0] + [
                k
                for k in range(1, len(xs) - 1)
                if not vs or any(abs(x - xs[k]) <= 2 and t - 2 <= mid <= b + 2 for x, t, b in vs)
            ]
            row_edges[row] = ([xs[k] for k in keep] + [xs[-1]], keep)
        return row_edges[row]

    by_row: dict[int, list[Line]] = {}
    for i in inside:
        ln = lines[i]
        by_row.setdefault(max(0, min(len(ys) - 2, _bisect(ys, ln.cy))), []).append(ln)
    cells: dict[tuple[int, int, int], list[str]] = {}
    for row, row_lines in by_row.items():
        text_rows = _rows(row_lines)
        # Rulings drawn only around a block of records: one text row per record. A cell
        # wrapped onto two or three lines keeps its lines together.
        split = len(text_rows) >= 4
        # A block of records drawn without inner rulings still uses the header's columns.
        edges, columns = (xs, list(range(len(xs)))) if split else edges_of(row)
        for sub, text_row in enumerate(text_rows):
            for ln in text_row:
                for col, text in _split_line_cells(ln, edges).items():
                    if text:
                        cells.setdefault((row, sub if split else 0, columns[col]), []).append(text)
    used_rows = sorted({(r, s) for r, s, _ in cells})
    used_cols = sorted({c for _, _, c in cells})
    if len(used_rows) < 2 or len(used_cols) < 2 or len(cells) < 3:
        return None, set()
    rows = [[" ".join(cells.get((r, s, c), [])) for c in used_cols] for r, s in used_rows]
    rows = _compact_columns(rows)
    if len(rows[0]) < 2:
        return None, set()
    return Table(x0, top, x1, bottom, rows), set(inside)


def _compact_columns(rows: list[list[str]]) -> list[list[str]]:
    """Merge neighbouring columns that are never filled in the same row.

    Such pairs come from rulings that split one logical column (a label cell drawn
    narrower than the values under it).
    """
    c = 0
    while c < len(rows[0]) - 1:
        if any(row[c] and row[c + 1] for row in rows):
            c += 1
            continue
        for row in rows:
            row[c] = row[c] or row[c + 1]
            del row[c + 1]
    return rows


def _bisect(edges: Sequence[float], v: float) -> int:
    lo, hi = 0, len(edges) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if edges[mid + 1] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _text_rows(lines: list[Line], top: float, bottom: float) -> list[float]:
    """Row boundaries from text rows, for grids drawn without inner row rulings."""
    rows = _rows([ln for ln in lines if top <= ln.cy <= bottom])
    edges = [top]
    for above, below in pairwise(rows):
        edges.append((max(ln.bottom for ln in above) + min(ln.top for ln in below)) / 2)
    edges.append(bottom)
    return _cluster(edges, 0.5)


def find_ruled_tables(page: PageModel, lines: list[Line]) -> tuple[list[Table], list[Line]]:
    """Tables drawn with vertical and horizontal rulings; returns (tables, other lines)."""
    if not page.vrules or not page.hrules:
        return [], lines
    hs = _merge_segments(page.hrules)
    vs = _merge_segments(page.vrules)
    if len(hs) > 2000 or len(vs) > 2000:
        return [], lines
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for hi, (y, hx0, hx1) in enumerate(hs):
        for vi, (x, vt, vb) in enumerate(vs):
            if hx0 - 2 <= x <= hx1 + 2 and vt - 2 <= y <= vb + 2:
                parent[find(hi)] = find(len(hs) + vi)
    comps: dict[int, tuple[list[int], list[int]]] = {}
    for hi in range(len(hs)):
        comps.setdefault(find(hi), ([], []))[0].append(hi)
    for vi in range(len(vs)):
        comps.setdefault(find(len(hs) + vi), ([], []))[1].append(vi)
    tables: list[Table] = []
    consumed: set[int] = set()
    for h_ids, v_ids in comps.values():
        if not h_ids or not v_ids:
            continue
        left = min(hs[i][1] for i in h_ids)
        right = max(hs[i][2] for i in h_ids)
        top = min(vs[i][1] for i in v_ids)
        bottom = max(vs[i][2] for i in v_ids)
        xs = _cluster([vs[i][0] for i in v_ids] + [left, right], 3)
        ys = _cluster([hs[i][0] for i in h_ids] + [top, bottom], 2)
        if len(xs) < 3 or right - left < 20 or bottom - top < 8:
            continue
        if len(ys) < 3:
            ys = _text_rows(lines, top, bottom)
        table, used = _grid_table(lines, xs, ys, [vs[i] for i in v_ids])
        if table is not None and not (used & consumed):
            tables.append(table)
            consumed |= used
    if not tables:
        return [], lines
    return tables, [ln for i, ln in enumerate(lines) if i not in consumed]


def _rows(lines: list[Line]) -> list[list[Line]]:
    """Group lines that share a text row (centre inside the row's first line)."""
    rows: list[list[Line]] = []
    bottom = 0.0
    for ln in sorted(lines, key=lambda ln: ln.top):
        if rows and ln.cy < bottom and ln.top < bottom - 0.3 * ln.height:
            rows[-1].append(ln)
        else:
            rows.append([ln])
            bottom = ln.bottom
    for row in rows:
        row.sort(key=lambda ln: ln.x0)
    return rows


def find_unruled_tables(
    page: PageModel, lines: list[Line], body: float, gutter: float | None = None
) -> tuple[list[Table], list[Line]]:
    """Tables laid out by column alignment only.

    A run of at least three consecutive rows, each split into two or more separate text
    chunks, whose chunks fall into the same column bands. Runs whose columns are as wide
    as prose columns are taken for multi-column text, not tables.

    Layout joins cells set close together into one line, so lines are first cut at wide
    gaps; a table found only that way needs three columns. The lines left over are then
    searched again as they are.
    """
    tables, lines = _unruled_pass(page, lines, gutter, split=True)
    more, lines = _unruled_pass(page, lines, gutter, split=False)
    return tables + more, lines


def _unruled_pass(
    page: PageModel, lines: list[Line], gutter: float | None, *, split: bool
) -> tuple[list[Table], list[Line]]:
    parent: dict[int, Line] = {}
    chunks: list[Line] = []
    for ln in lines:
        parts = _split_wide_gaps(ln) if split else [ln]
        for part in parts:
            parent[id(part)] = ln
        chunks.extend(parts)
    rows = _rows(chunks)
    tables: list[Table] = []
    consumed: set[int] = set()
    run: list[list[Line]] = []

    def flush() -> None:
        if len(run) >= 3:
            table = _band_table(run, page)
            if table is not None and gutter is not None and table.x0 < gutter < table.x1:
                # Rows that meet across a column gutter are two columns of text.
                table = None
            if (
                table is not None
                and len(table.rows[0]) < 3
                and any(parent[id(ln)] is not ln for row in run for ln in row)
            ):
                # Two "columns" found only inside lines are more often aligned code
                # (SQL keywords) or a contents entry than a table.
                table = None
            if table is not None:
                tables.append(table)
                for row in run:
                    consumed.update(id(parent[id(ln)]) for ln in row)
        run.clear()

    for row in rows:
        multi = len(row) >= 2 and all(b.x0 - a.x1 >= 0.8 * min(a.size, b.size) for a, b in pairwise(row))
        if multi:
            if run:
                prev_bottom = max(ln.bottom for ln in run[-1])
                gap = min(ln.top for ln in row) - prev_bottom
                if gap > 2.2 * max(ln.height for ln in row):
                    flush()
            run.append(row)
        else:
            flush()
    flush()
    if not tables:
        return [], lines
    return tables, [ln for ln in lines if id(ln) not in consumed]


def _split_wide_gaps(line: Line) -> list[Line]:
    """`line` cut where its glyphs leave a gap wider than the font size (table cells).

    The parts only serve to find columns: their text is that of their glyphs, in one style.
    """
    if line.max_gap < line.size or line.vertical or len(line.glyph_text) < 3:
        return [line]
    chars = line.chars
    limit = line.size
    n = len(chars)
    cuts: list[int] = []  # glyph indexes where a part starts
    for at in [i for i, c in enumerate(chars) if c[2].isspace()]:
        before, after = at - 1, at + 1
        while before >= 0 and chars[before][2].isspace():
            before -= 1
        while after < n and chars[after][2].isspace():
            after += 1
        wide = before >= 0 and after < n and chars[after][0] - chars[before][1] >= limit
        if wide and (not cuts or cuts[-1] != after):
            cuts.append(after)
    if not cuts:
        return [line]
    joined = "".join(c[2] for c in chars)
    if joined != line.text and compat_text(joined) != line.text:
        # Script repairs reordered the line (right-to-left): glyphs no longer map to it.
        return [line]
    parts: list[Line] = []
    for start, end in pairwise([0, *cuts, n]):
        glyphs = chars[start:end]
        visible = [g for g in glyphs if not g[2].isspace()]
        if not visible:
            continue
        text = compat_text("".join(g[2] for g in glyphs))
        parts.append(
            Line(
                x0=visible[0][0],
                top=line.top,
                x1=visible[-1][1],
                bottom=line.bottom,
                text=text,
                spans=[(text, line.style)],
                size=line.size,
                style=line.style,
                glyph_x=line.glyph_x[2 * start : 2 * end],
                glyph_text=line.glyph_text[start:end],
            )
        )
    return parts


def _band_table(run: list[list[Line]], page: PageModel) -> Table | None:
    spans = sorted((ln.x0, ln.x1) for row in run for ln in row)
    bands: list[list[float]] = []
    for a, b in spans:
        if bands and a <= bands[-1][1]:
            bands[-1][1] = max(bands[-1][1], b)
        else:
            bands.append([a, b])
    if len(bands) < 2:
        return None
    rows_out: list[list[str]] = []
    for row in run:
        cells = [""] * len(bands)
        for ln in row:
            cx = (ln.x0 + ln.x1) / 2
            col = next((i for i, (a, b) in enumerate(bands) if a - 1 <= cx <= b + 1), 0)
            text = ln.text.strip()
            cells[col] = f"{cells[col]} {text}" if cells[col] else text
        rows_out.append(cells)
    rows_out = _compact_columns(rows_out)
    if len(rows_out[0]) < 2:
        return None
    # Prose columns side by side look like a two- or three-band table; their bands are
    # each as wide as a text column, while a table has at least one narrow band.
    extents = [b - a for a, b in bands]
    if len(bands) == 2:
        if min(extents) > 0.22 * page.width:
            return None
    elif all(e > 0.22 * page.width for e in extents):
        return None
    filled_rows = sum(1 for r in rows_out if sum(1 for c in r if c) >= 2)
    if filled_rows < 3:
        return None
    x0 = min(ln.x0 for row in run for ln in row)
    x1 = max(ln.x1 for row in run for ln in row)
    top = min(ln.top for ln in run[0])
    bottom = max(ln.bottom for ln in run[-1])
    return Table(x0, top, x1, bottom, rows_out)


# --- reading order --------------------------------------------------------------------

Item = Line | Table


def _find_gutter(items: list[Item], page_width: float) -> float | None:
    """x of a gutter between text columns in `items`, or None.

    A gutter is an interior strip crossed by few items, with enough lines on both sides
    that overlap vertically, and with left-side lines that mostly run up to it (prose,
    not a label column).
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
    best: tuple[int, int, int, int] | None = None  # (max cover, -width, start, end)
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
            cand = (peak, -(j - i), i, j)
            if best is None or cand < best:
                best = cand
        i = j
    if best is None:
        return None
    _, _, i, j = best
    gx0, gx1 = xmin + i * step, xmin + j * step
    gc = (gx0 + gx1) / 2
    left = [ln for ln in lines if ln.x1 <= gc]
    right = [ln for ln in lines if ln.x0 >= gc]
    if len(left) < 3 or len(right) < 3:
        return None
    ltop, lbot = min(ln.top for ln in left), max(ln.bottom for ln in left)
    rtop, rbot = min(ln.top for ln in right), max(ln.bottom for ln in right)
    overlap = min(lbot, rbot) - max(ltop, rtop)
    if overlap < 0.3 * min(lbot - ltop, rbot - rtop):
        return None
    lwidth = gx0 - min(ln.x0 for ln in left)
    reaching = sum(1 for ln in left if ln.x1 >= gx0 - 0.25 * lwidth)
    if reaching < 0.4 * len(left):
        return None
    # Columns of prose have long lines; table cells and labels are short. (Upper
    # quartile, since formulas and list labels inside a column are short too.)
    for side in (left, right):
        widths = sorted(ln.x1 - ln.x0 for ln in side)
        if widths[(3 * len(widths)) // 4] < 0.18 * page_width:
            return None
    return gc


def _merge_row_markers(row: list[Item]) -> list[Item]:
    """Join a lone list marker with the text that follows it on the same row."""
    out: list[Item] = []
    for it in row:
        prev = out[-1] if out else None
        if (
            isinstance(it, Line)
            and isinstance(prev, Line)
            and _LONE_MARKER.match(prev.text.strip())
            and it.x0 - prev.x1 < 4 * it.size
        ):
            out[-1] = Line(
                x0=prev.x0,
                top=min(prev.top, it.top),
                x1=it.x1,
                bottom=max(prev.bottom, it.bottom),
                text=prev.text.strip() + " " + it.text,
                spans=[(prev.text.strip() + " ", prev.style), *it.spans],
                size=it.size,
                style=it.style,
                glyph_x=prev.glyph_x + it.glyph_x,
                glyph_text=prev.glyph_text + it.glyph_text,
            )
        else:
            out.append(it)
    return out


def _in_rows(items: list[Item]) -> list[Item]:
    """Top-to-bottom, and left-to-right within a row of vertically overlapping items."""
    out: list[Item] = []
    row: list[Item] = []
    row_bottom = 0.0
    for it in sorted(items, key=lambda it: it.top):
        h = it.bottom - it.top
        if row and (it.top + it.bottom) / 2 < row_bottom and it.top < row_bottom - 0.3 * h:
            row.append(it)
        else:
            if row:
                out.extend(_merge_row_markers(sorted(row, key=lambda it: it.x0)))
            row = [it]
            row_bottom = it.bottom
    if row:
        out.extend(_merge_row_markers(sorted(row, key=lambda it: it.x0)))
    return out


def reading_order(items: list[Item], page_width: float, depth: int = 0) -> list[list[Item]]:
    """Split `items` into segments read one after the other (columns, spanning parts)."""
    if not items:
        return []
    gutter = _find_gutter(items, page_width) if depth < 4 else None
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
            segments.extend(reading_order(left, page_width, depth + 1))
            segments.extend(reading_order(right, page_width, depth + 1))
        if sp is not None:
            pending.append(sp)
            band_top = sp.top
    if pending:
        segments.append(_in_rows(pending))
    return segments


# --- blocks ---------------------------------------------------------------------------

# Bullet glyphs, including Symbol/Wingdings private-use code points, hyphen bullet,
# hyphen, en and em dash, asterisk.
_BULLETS = "•●▪◦‣○■□➢►▶✓✔◆◇∙·\u2043\uf0b7\uf0a7\uf0fc\uf076\uf0d8\uf06c\uf0a8-\u2013\u2014*"
# An unmapped glyph "(cid:N)" at the start of a line is almost always a bullet drawn
# from a symbol font without a Unicode mapping.
_BULLET = re.compile(rf"^\s*([{re.escape(_BULLETS)}]|\(cid:\d+\)(?:\(cid:\d+\))?)\s+(?!\(cid:)(\S.*)$", re.S)
_ORDERED = re.compile(r"^\s*(\d{1,3})([.)])\s+(\S.*)$", re.S)
_LONE_MARKER = re.compile(rf"^(?:[{re.escape(_BULLETS)}]|\d{{1,3}}[.)]|\(cid:\d+\))$")
_LEADER = re.compile(r"(?:\.\s?){5,}\s*\S{1,8}\s*$|(?:\.\s?){5,}$")
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")  # Hangul is spaced: not here


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


def _list_marker(line: Line, body: float) -> tuple[str, str] | None:
    """(markdown marker, text after the source marker) for a list item line."""
    if line.size > body * 1.12 or (line.style & BOLD and len(line.text) < 80):
        return None
    text = line.text
    m = _BULLET.match(text)
    if m:
        if m.group(1) in "-\u2013\u2014*" and not m.group(2)[:1].isalnum():
            return None
        return "-", m.group(2)
    m = _ORDERED.match(text)
    if m:
        return f"{int(m.group(1))}{m.group(2)}", m.group(3)
    return None


def _strip_marker(line: Line, rest: str) -> Line:
    """The line without its source list marker (spans trimmed accordingly)."""
    cut = len(line.text) - len(rest)
    spans: list[tuple[str, int]] = []
    for text, style in line.spans:
        if cut >= len(text):
            cut -= len(text)
            continue
        spans.append((text[cut:], style))
        cut = 0
    return Line(
        line.x0, line.top, line.x1, line.bottom, rest, spans, line.size, line.style, line.glyph_x, line.glyph_text
    )


def build_blocks(
    segments: list[list[Item]],
    stats: DocStats,
    page_gap: float,
    outline_titles: dict[str, int] | None = None,
) -> list[Block]:
    body = stats.body_size
    mono_is_code = not stats.mono_body
    blocks: list[Block] = []
    for segment in segments:
        seg_lines = [it for it in segment if isinstance(it, Line)]
        seg_right = max((ln.x1 for ln in seg_lines), default=0.0)
        seg_left = min((ln.x0 for ln in seg_lines), default=0.0)
        cur = _carry_over(blocks, segment, body)
        items = segment
        if cur is not None:
            cur.lines.append(segment[0])  # type: ignore[arg-type]
            items = segment[1:]
        for it in items:
            if isinstance(it, Table):
                blocks.append(Block("table", table=it))
                cur = None
                continue
            line = it
            is_code = mono_is_code and bool(line.style & MONO)
            marker = None if is_code else _list_marker(line, body)
            titled = line.vertical or (
                bool(outline_titles) and _norm(line.text) in outline_titles  # type: ignore[operator]
            )
            if cur is not None and not titled and not cur.pinned:
                prev = cur.lines[-1]
                same_row = line.top < prev.bottom - 0.5 * line.height
                gap = line.top - prev.bottom
                if same_row:
                    cur.lines.append(line)
                    continue
                if _continues(cur, prev, line, is_code, marker, gap, page_gap, seg_left, seg_right, body):
                    cur.lines.append(line)
                    continue
            if marker is not None:
                cur = Block(
                    "li",
                    [_strip_marker(line, marker[1])],
                    marker=marker[0],
                    marker_x=line.x0,
                    indent=line.x0 - seg_left,
                )
            elif is_code:
                cur = Block("code", [line])
            else:
                cur = Block("p", [line], pinned=titled)
            blocks.append(cur)
    return blocks


def _carry_over(blocks: list[Block], segment: list[Item], body: float) -> Block | None:
    """The paragraph a new column continues, if the previous column ended mid-sentence."""
    if not blocks or blocks[-1].kind not in ("p", "li") or blocks[-1].pinned or not segment:
        return None
    first = segment[0]
    last = blocks[-1].lines[-1]
    if not isinstance(first, Line) or first.vertical or abs(first.size - last.size) > 0.6:
        return None
    if _list_marker(first, body) is not None or first.style & MONO:
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
) -> bool:
    """Whether `line` continues block `cur` whose last line is `prev`."""
    if marker is not None:
        return False
    if (cur.kind == "code") != is_code:
        return False
    size = max(prev.size, line.size)
    # Leading grows with the font size, so the allowed gap scales with it too.
    if gap > page_gap * size / body + 0.45 * size or gap < -2 * size:
        return False
    if cur.kind == "code":
        return True
    if abs(prev.size - line.size) > 0.6:
        return False
    if bool(prev.style & BOLD) != bool(line.style & BOLD) and all(ln.style & BOLD for ln in cur.lines):
        # A bold line standing above regular text is a run-in heading, not prose.
        return False
    if cur.kind == "li":
        if line.x0 > cur.marker_x + 0.5 * line.size:
            return True
        # Continuation lines flush with the marker: only while the sentence runs on.
        return line.x0 > cur.marker_x - 0.5 * line.size and prev.text.rstrip()[-1:] not in ".!?:;"
    if _LEADER.search(prev.text) or _LEADER.search(line.text):
        # A table-of-contents entry (dot leaders, then a page number) stands alone.
        return False
    ends = prev.text.rstrip()[-1:]
    if ends in ".!?:" and prev.x1 < seg_right - 3 * size and line.text[:1].isupper():
        return False
    # A full-width line indented under a flush-left one is a first-line indent, so a new
    # paragraph. (Centred lines do not reach the right edge.)
    return not (line.x0 > prev.x0 + 1.0 * size and prev.x0 - seg_left < 0.5 * size and line.x1 > seg_right - 2 * size)


def _norm(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def classify_headings(blocks: list[Block], stats: DocStats, outline_titles: dict[str, int]) -> None:
    body = stats.body_size
    for block in blocks:
        if block.kind != "p" or len(block.lines) > 3:
            continue
        text = " ".join(ln.text.strip() for ln in block.lines)
        if len(text) > 200 or not any(ch.isalpha() for ch in text):
            continue
        if outline_titles:
            level = outline_titles.get(_norm(text))
            if level is not None:
                block.kind, block.level = "h", min(level, 6)
                continue
        size = max(ln.size for ln in block.lines)
        level = stats.heading_level_for_size(size) if size >= body * 1.15 else None
        if level is not None and sum(ch.isalpha() for ch in text) >= 2:
            block.kind, block.level = "h", level
            continue
        if (
            len(block.lines) <= 2
            and all(ln.style & BOLD for ln in block.lines)
            and not all(ln.style & MONO for ln in block.lines)
            and len(text) <= 100
            and text.rstrip()[-1:] not in ".,;:"
            and size >= body - 0.5
        ):
            block.kind, block.level = "h", stats.bold_heading_level


def _merge_wrapped_headings(blocks: list[Block]) -> list[Block]:
    """Join a heading with the next one when it is the same heading wrapped onto a new line.

    A title that spans the columns of a two-column page can wrap so that its last line
    sits inside the first column; reading order then puts that line into the column's
    segment, and it becomes a heading of its own.
    """
    out: list[Block] = []
    for block in blocks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.kind == "h"
            and block.kind == "h"
            and prev.level == block.level
            and not prev.pinned
            and not block.pinned
        ):
            above, below = prev.lines[-1], block.lines[0]
            size = above.size
            gap = below.top - above.bottom
            if (
                abs(below.size - size) <= 0.6
                and (above.style & BOLD) == (below.style & BOLD)
                and -0.2 * size <= gap <= 0.6 * size
                and (abs(below.x0 - above.x0) <= size or abs(below.x0 + below.x1 - above.x0 - above.x1) <= 2 * size)
                and len(prev.lines) + len(block.lines) <= 3
            ):
                prev.lines.extend(block.lines)
                continue
        out.append(block)
    return out


# --- inline rendering -----------------------------------------------------------------

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
    if not words:
        return False
    left_m, right_m = _LAST_WORD.search(stripped), _FIRST_WORD.match(first)
    if left_m is None or right_m is None:
        return False
    left, right = left_m.group(1).lower(), right_m.group(0).lower()
    hyphenated, joined = words[f"{left}-{right}"], words[left + right]
    if hyphenated or joined:
        return hyphenated > joined
    if len(left) < 4 or len(right) < 4 or (right.endswith(_SUFFIXES) and len(right) <= 7):
        # Short parts and suffixes ("turn-ing", "any-body") are mostly hyphenation.
        return False
    return words[left] >= 2 and words[right] >= 2 and left not in _PREFIXES


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
            elif (_CJK.match(stripped[-1:] or " ") and _CJK.match(first[:1] or " ")) or (
                first and unicodedata.category(first[0]).startswith("M")
            ):
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


def _code_text(lines: Sequence[Line]) -> str:
    left = min(ln.x0 for ln in lines)
    out = []
    for ln in lines:
        text = ln.text.rstrip()
        width = (ln.x1 - ln.x0) / max(len(ln.text), 1)
        indent = round((ln.x0 - left) / width) if width > 0 else 0
        out.append(" " * max(indent, 0) + text)
    body = "\n".join(out)
    fence = "~~~" if "```" in body else "```"
    return f"{fence}\n{body}\n{fence}"


def render_table(table: Table, mode: str) -> str:
    rows = table.rows
    if mode == "html":
        parts = ["<table>", "<thead>", "<tr>"]
        parts += [f"<th>{html.escape(c)}</th>" for c in rows[0]]
        parts += ["</tr>", "</thead>", "<tbody>"]
        for row in rows[1:]:
            parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
        parts += ["</tbody>", "</table>"]
        return "\n".join(parts)

    def cell(c: str) -> str:
        return escape_inline(" ".join(c.split()), pipes=True)

    lines = ["| " + " | ".join(cell(c) for c in rows[0]) + " |"]
    lines.append("|" + "|".join(" --- " for _ in rows[0]) + "|")
    for row in rows[1:]:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines)


def render_blocks(
    blocks: list[Block],
    tables_mode: str,
    *,
    mono_code: bool = True,
    words: Counter[str] | None = None,
) -> str:
    out: list[str] = []
    list_lines: list[str] = []
    stack: list[tuple[float, int]] = []  # (marker indent, content column)

    def end_list() -> None:
        if list_lines:
            out.append("\n".join(list_lines))
            list_lines.clear()
        stack.clear()

    for block in blocks:
        if block.kind != "li":
            end_list()
        if block.kind == "table":
            assert block.table is not None
            out.append(render_table(block.table, tables_mode))
        elif block.kind == "code":
            out.append(_code_text(block.lines))
        elif block.kind == "h":
            text = render_spans(_join_lines(block.lines, words), styled=False)
            out.append("#" * block.level + " " + text)
        elif block.kind == "li":
            size = block.lines[0].size
            # Measured from the column's edge, so a list that runs on into the next
            # column keeps its depth.
            while stack and block.indent < stack[-1][0] - 0.5 * size:
                stack.pop()
            if stack and block.indent <= stack[-1][0] + 0.5 * size:
                stack.pop()
            indent = stack[-1][1] if stack else 0
            stack.append((block.indent, indent + len(block.marker) + 1))
            text = render_spans(_join_lines(block.lines, words), mono=mono_code)
            list_lines.append(" " * indent + block.marker + " " + text)
        else:
            text = render_spans(_join_lines(block.lines, words), mono=mono_code)
            if text:
                out.append(_escape_block_start(text))
    end_list()
    return "\n\n".join(p for p in out if p)


# --- page -----------------------------------------------------------------------------


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


def _is_number(line: Line) -> bool:
    text = line.text.strip()
    return text.isdigit() and len(text) <= 4


def _is_number_stack(line: Line) -> bool:
    """A vertical line made of consecutive numbers: line numbers stacked by layout."""
    tokens = line.text.split()
    if not line.vertical or len(tokens) < 3 or not all(t.isdigit() for t in tokens):
        return False
    values = [int(t) for t in tokens]
    return all(b - a == 1 for a, b in pairwise(values))


def _strip_line_numbers(lines: list[Line]) -> list[Line]:
    """Remove a margin column of line numbers (1, 2, 3, ... beside the text lines).

    Like page numbers they are layout furniture; left in, they turn every page into a
    two-column table.
    """
    numeric = [ln for ln in lines if _is_number(ln)]
    stacks = [ln for ln in lines if _is_number_stack(ln)]
    if len(numeric) < 5 and not stacks:
        return lines
    others = [ln for ln in lines if not _is_number(ln) and not _is_number_stack(ln)]
    if not others:
        return lines
    # Percentiles, not extremes: a stray mark in the margin must not hide the column.
    lefts = sorted(ln.x0 for ln in others)
    rights = sorted(ln.x1 for ln in others)
    left_edge = lefts[len(lefts) // 4]
    right_edge = rights[-1 - len(rights) // 4]

    def in_margin(ln: Line) -> bool:
        return ln.x1 <= left_edge + 1 or ln.x0 >= right_edge - 1

    drop = {id(ln) for ln in stacks if in_margin(ln)}
    margin = sorted((ln for ln in numeric if in_margin(ln)), key=lambda ln: ln.top)
    if len(margin) >= 5:
        values = [int(ln.text) for ln in margin]
        steps = sum(1 for a, b in pairwise(values) if b - a == 1)
        if steps >= 0.8 * (len(values) - 1):
            drop.update(id(ln) for ln in margin)
    if not drop:
        return lines
    return [ln for ln in lines if id(ln) not in drop]


# Page numbers printed in a margin: "7", "- 7 -", "vii", "7 / 12", "Page 7", "Page 7 of 12",
# also after a running title ("Annual Report | Page 7 of 12").
_PAGE_NUMBER = re.compile(
    r"^(?:(?:page|p\.|pg\.?|seite|página|pagina)\s*)?\d{1,4}(?:\s*(?:of|/|von|de|sur)\s*\d{1,4})?$"
    r"|^[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]$"
    r"|^[ivxlcdm]{1,7}$"
    r"|(?:^|\s[-\u2013\u2014|\u00b7\u2022,]\s*)(?:page|p\.|pg\.?)\s*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
# A footnote starts with its mark; it is text, whatever its size and place.
_FOOTNOTE_MARK = re.compile(r"^\s*(?:\d{1,3}|[*\u2020\u2021\u00a7])\s*[A-Za-z\u00c0-\u024f]")
_FURNITURE_BAND = 0.1  # fraction of the page height at the top and at the bottom


def _margin_furniture(lines: list[Line], page: PageModel, body: float) -> set[int]:
    """ids of lines that are page furniture by position alone (running titles, page numbers).

    Repetition across pages cannot find these on one- or two-page documents, or on
    headers that alternate between left and right pages. Only the outermost one or two
    text rows of the top and bottom bands are considered, and only when a clear gap
    separates them from the rest of the page; of those, a line goes when it is a page
    number, or when it is set smaller than the body text and is not a footnote.
    """
    if len(lines) < 2:
        return set()
    rows = _rows(lines)
    drop: set[int] = set()
    min_gap = max(1.5 * body, 10.0)
    for ordered in (rows, rows[::-1]):
        at_top = ordered is rows
        for depth in range(min(2, len(ordered) - 1)):
            row = ordered[depth]
            if at_top:
                in_band = max(ln.bottom for ln in row) <= page.height * _FURNITURE_BAND
                gap = min(ln.top for ln in ordered[depth + 1]) - max(ln.bottom for ln in row)
            else:
                in_band = min(ln.top for ln in row) >= page.height * (1 - _FURNITURE_BAND)
                gap = min(ln.top for ln in row) - max(ln.bottom for ln in ordered[depth + 1])
            if not in_band or len(row) > 3:
                # A row of many chunks is a table row or a figure's labels, not furniture.
                break
            if gap < min_gap:
                continue
            for band_row in ordered[: depth + 1]:
                for ln in band_row:
                    if ln.vertical:
                        continue
                    text = " ".join(ln.text.split())
                    if _PAGE_NUMBER.search(text) or (
                        ln.size <= body - 0.75 and len(text) <= 120 and not _FOOTNOTE_MARK.match(text)
                    ):
                        drop.add(id(ln))
            break
    return drop


def render_page(
    page: PageModel,
    stats: DocStats,
    *,
    tables: str,
    outline_titles: dict[str, int] | None = None,
) -> str:
    """Markdown of one page, given statistics of the document around it."""
    lines = [ln for ln in page.lines if not stats.is_running(ln, page)]
    furniture = _margin_furniture(lines, page, stats.body_size)
    if furniture:
        lines = [ln for ln in lines if id(ln) not in furniture]
    lines = _strip_line_numbers(lines)
    vertical = [ln for ln in lines if ln.vertical]
    if vertical:
        lines = [ln for ln in lines if not ln.vertical]
    found: list[Table] = []
    if tables != "text":
        found, lines = find_ruled_tables(page, lines)
        gutter = _find_gutter(list(lines), page.width) if len(lines) >= 6 else None
        unruled, lines = find_unruled_tables(page, lines, stats.body_size, gutter)
        found += unruled
    items: list[Item] = [*lines, *found]
    segments = reading_order(items, page.width)
    if vertical:
        # Vertical lines are read right to left; they come first where they dominate.
        column = sorted(vertical, key=lambda ln: (-ln.x1, ln.top))
        if sum(len(ln.text) for ln in vertical) > sum(len(ln.text) for ln in lines):
            segments.insert(0, list(column))
        else:
            segments.append(list(column))
    blocks = build_blocks(segments, stats, _median_gap(segments, stats.body_size), outline_titles)
    for block in blocks:
        if block.kind == "code" and len(block.lines) == 1:
            # One monospaced line is more often a running title or a term than a program.
            block.kind = "p"
    classify_headings(blocks, stats, outline_titles or {})
    blocks = _merge_wrapped_headings(blocks)
    return render_blocks(blocks, tables, mono_code=not stats.mono_body, words=stats.words)
