"""Tables: ruled ones from drawn rulings, unruled ones from column alignment."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from .layout import Line, PageModel, compat_text
from .lists import BARE_NUMBER, LONE_MARKER


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
        text_rows = group_rows(row_lines)
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
    rows = group_rows([ln for ln in lines if top <= ln.cy <= bottom])
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


def group_rows(lines: list[Line]) -> list[list[Line]]:
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
    rows = group_rows(chunks)
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
    if len(rows_out[0]) == 2 and all(LONE_MARKER.match(r[0]) or BARE_NUMBER.match(r[0]) for r in rows_out if r[0]):
        # A column of bullets or item numbers beside one of text is a list, not a table.
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
