"""Tables: ruled ones from drawn rulings, unruled ones from column alignment."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from .layout import Line, PageModel, compat_text, is_rtl
from .lists import BARE_NUMBER, lone_list_marker
from .params import DEFAULT, TableParams


@dataclass
class Table:
    """A table: `rows` is the full grid; a merged cell keeps its text at its top-left
    position, `spans` gives its (rows, columns), and the positions it covers are empty."""

    x0: float
    top: float
    x1: float
    bottom: float
    rows: list[list[str]]
    spans: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    # The box (x0, top, x1, bottom) of each cell, at its top-left position.
    boxes: dict[tuple[int, int], tuple[float, float, float, float]] = field(default_factory=dict)

    def header_rows(self) -> int:
        """Rows of the header: the first row, with the rows its merged cells reach down into."""
        return max((rs for (r, _), (rs, _) in self.spans.items() if r == 0), default=1)

    def covered(self) -> dict[tuple[int, int], tuple[int, int]]:
        """Every position a merged cell covers (its own included), mapped to its anchor."""
        out: dict[tuple[int, int], tuple[int, int]] = {}
        for (r, c), (rs, cs) in self.spans.items():
            for rr in range(r, r + rs):
                for cc in range(c, c + cs):
                    out[(rr, cc)] = (r, c)
        return out


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


def _at(segs: Sequence[tuple[float, float, float]], pos: float) -> list[tuple[float, float]]:
    return [(a, b) for p, a, b in segs if abs(p - pos) <= 2.5]


def _crosses(spans: list[tuple[float, float]], a: float, b: float) -> bool:
    """Whether a ruling of `spans` separates the band [a, b] (covers its middle)."""
    mid = (a + b) / 2
    return any(s - 2 <= mid <= e + 2 for s, e in spans)


def _records(rows: list[list[Line]], xs: Sequence[float]) -> bool:
    """Whether the text rows `rows` inside one ruled row are records, one to a text row: at
    least two thirds of them fill two or more columns. The wrapped cells of a single row
    leave most of its text rows with one column filled (a long text beside short ones, these
    centred in the row)."""
    spread = sum(1 for row in rows if len({_bisect(xs, (ln.x0 + ln.x1) / 2) for ln in row}) >= 2)
    return 3 * spread >= 2 * len(rows)


def _record_rows(
    bands: list[list[Line]], xs: list[float], vs: Sequence[tuple[float, float, float]], ys: list[float]
) -> list[float]:
    """Row boundaries to add inside ruled rows that hold a block of records.

    Rulings drawn only around a block of records (a header rule and a frame) leave many
    text rows in one ruled row. Such a row is cut into its text rows when the table has no
    other ruled body rows, or when the row has no inner column rulings, and most of its
    text rows fill two or more columns. Where the author ruled every row, several lines in
    one ruled row are one multi-line cell.
    """
    cuts: list[float] = []
    inner = [_at(vs, x) for x in xs[1:-1]]
    for r, band in enumerate(bands):
        rows = group_rows(band)
        if len(rows) < 3:
            continue
        ruled_columns = any(_crosses(spans, ys[r], ys[r + 1]) for spans in inner)
        if ruled_columns and len(bands) > 2:
            continue
        if not _records(rows, xs):
            continue
        for above, below in pairwise(rows):
            cuts.append((max(ln.bottom for ln in above) + min(ln.top for ln in below)) / 2)
    return cuts


def _grid_cells(
    xs: list[float], ys: list[float], hs: Sequence[tuple[float, float, float]], vs: Sequence[tuple[float, float, float]]
) -> list[tuple[int, int, int, int]]:
    """Cells (row, column, end row, end column; ends exclusive) of the grid `xs` x `ys`.

    Neighbouring grid positions not separated by a ruling are one merged cell. A cell
    whose positions surround others (a table nested in a cell) takes them in.
    """
    nr, nc = len(ys) - 1, len(xs) - 1
    vat = [_at(vs, x) for x in xs]
    hat = [_at(hs, y) for y in ys]
    parent = list(range(nr * nc))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in range(nr):
        for c in range(nc):
            if c + 1 < nc and not _crosses(vat[c + 1], ys[r], ys[r + 1]):
                parent[find(r * nc + c)] = find(r * nc + c + 1)
            if r + 1 < nr and not _crosses(hat[r + 1], xs[c], xs[c + 1]):
                parent[find(r * nc + c)] = find((r + 1) * nc + c)
    groups: dict[int, list[int]] = {}
    for i in range(nr * nc):
        groups.setdefault(find(i), []).append(i)
    boxes = []
    for members in groups.values():
        rs = [i // nc for i in members]
        cs = [i % nc for i in members]
        boxes.append(((min(rs), min(cs), max(rs) + 1, max(cs) + 1), len(members)))
    boxes.sort(key=lambda b: -(b[0][2] - b[0][0]) * (b[0][3] - b[0][1]))
    owner: dict[tuple[int, int], int] = {}
    cells: list[tuple[int, int, int, int]] = []
    for (r0, c0, r1, c1), _ in boxes:
        positions = [(r, c) for r in range(r0, r1) for c in range(c0, c1)]
        if any(p in owner for p in positions):
            continue  # enclosed by a larger cell (a nested table) or overlapping one
        owner.update(dict.fromkeys(positions, len(cells)))
        cells.append((r0, c0, r1, c1))
    # Positions an irregular (non-rectangular) region left over stay single cells.
    for r in range(nr):
        for c in range(nc):
            if (r, c) not in owner:
                owner[(r, c)] = len(cells)
                cells.append((r, c, r + 1, c + 1))
    return cells


def _cell_text(pieces: list[tuple[float, float, float, str]]) -> str:
    """Text of a cell from its (top, bottom, x0, text) pieces: rows top to bottom, left to right."""
    pieces.sort()
    rows: list[list[tuple[float, str]]] = []
    bottom = -1e9
    for top, bot, x0, text in pieces:
        if rows and (top + bot) / 2 < bottom:
            rows[-1].append((x0, text))
        else:
            rows.append([(x0, text)])
            bottom = bot
    return " ".join(" ".join(t for _, t in sorted(row)) for row in rows).strip()


def _word_columns(line: Line, xs: Sequence[float], cell_of: Sequence[int]) -> tuple[list[tuple[int, str]], int]:
    """(column, text) runs of `line` cut at the grid's column edges, whole words kept, and
    how many words straddle two cells (`cell_of`: the cell of each column in the line's row).

    Glyphs go by their centre; a word that straddles an edge goes where most of it lies.
    """
    last = len(xs) - 2
    chars = line.chars
    ends = [c for c in chars if not c[2].isspace()]
    if not ends:
        return [], 0
    first_col = min(last, _bisect(xs, (ends[0][0] + ends[0][1]) / 2))
    if first_col == min(last, _bisect(xs, (ends[-1][0] + ends[-1][1]) / 2)):
        return [(first_col, line.text)], 0  # the whole line in one column
    runs: list[tuple[int, str]] = []
    word: list[tuple[int, str]] = []
    straddling = 0

    def flush_word() -> None:
        nonlocal straddling
        if not word:
            return
        if len({cell_of[col] for col, _ in word}) > 1:
            straddling += 1
        counts: dict[int, int] = {}
        for col, _ in word:
            counts[col] = counts.get(col, 0) + 1
        col = max(counts, key=lambda c: counts[c])
        text = "".join(t for _, t in word)
        if runs and runs[-1][0] == col:
            runs[-1] = (col, runs[-1][1] + text)
        else:
            runs.append((col, text))
        word.clear()

    for x0, x1, text in chars:
        col = min(last, _bisect(xs, (x0 + x1) / 2))
        if text.isspace():
            flush_word()
            if runs and runs[-1][0] == col:
                runs[-1] = (col, runs[-1][1] + text)
            else:
                runs.append((col, text))
        else:
            word.append((col, text))
    flush_word()
    # (The glyphs' own texts: ligatures and presentation forms as the line's text has them.)
    return [(col, compat_text(text)) for col, text in runs], straddling


# Lines (a count) that start at one x and cut through the table's drawn column rulings: a
# column of text printed over a table that overflows its own column (a two-column page), not
# cells, which never cross a ruling.
OVER_COLUMN_MIN_LINES = 3
# Points: how far apart the left ends of the lines of one text column may lie.
COLUMN_EDGE_TOLERANCE = 2.0


def _cuts_a_ruling(line: Line, vs: Sequence[tuple[float, float, float]]) -> bool:
    """Whether a word of `line` has glyphs on both sides of a vertical ruling at its height."""
    edges = [x for x, a, b in vs if a <= line.cy <= b and line.x0 + 1 < x < line.x1 - 1]
    if not edges:
        return False
    word: list[float] = []
    for x0, x1, text in [*line.chars, (0.0, 0.0, " ")]:
        if not text.isspace():
            word.append((x0 + x1) / 2)
        elif word:
            if any(min(word) < x < max(word) for x in edges):
                return True
            word = []
    return False


def _text_over(lines: list[Line], inside: list[int], vs: Sequence[tuple[float, float, float]]) -> set[int]:
    """The lines of `inside` that belong to a text column printed over the table: every line
    that starts where at least `OVER_COLUMN_MIN_LINES` lines cutting through rulings start."""
    starts = [lines[i].x0 for i in inside if _cuts_a_ruling(lines[i], vs)]
    columns = [
        x for x in starts if sum(1 for y in starts if abs(y - x) <= COLUMN_EDGE_TOLERANCE) >= OVER_COLUMN_MIN_LINES
    ]
    return {i for i in inside if any(abs(lines[i].x0 - x) <= COLUMN_EDGE_TOLERANCE for x in columns)}


def _grid_table(
    lines: list[Line],
    xs: list[float],
    ys: list[float],
    hs: Sequence[tuple[float, float, float]],
    vs: Sequence[tuple[float, float, float]],
    page_area: float,
    page_rtl: bool = False,
    min_rows: int = 2,
    params: TableParams = DEFAULT.tables,
) -> tuple[Table | None, set[int]]:
    p = params
    x0, x1, top, bottom = xs[0], xs[-1], ys[0], ys[-1]
    slack = p.grid_edge_slack_pt
    inside = [
        i
        for i, ln in enumerate(lines)
        if x0 - slack <= (ln.x0 + ln.x1) / 2 <= x1 + slack and top - slack <= ln.cy <= bottom + slack
    ]
    over = _text_over(lines, inside, vs)
    inside = [i for i in inside if i not in over]
    if not inside:
        return None, set()

    def row_of(ln: Line) -> int:
        return max(0, min(len(ys) - 2, _bisect(ys, ln.cy)))

    bands: list[list[Line]] = [[] for _ in range(len(ys) - 1)]
    for i in inside:
        bands[row_of(lines[i])].append(lines[i])
    cuts = _record_rows(bands, xs, vs, ys)
    if cuts:
        # The records' rows and the header's columns, as if ruled.
        hs = [*hs, *((y, x0, x1) for y in cuts)]
        vs = [*vs, *((x, top, bottom) for x in xs)]
        ys = sorted([*ys, *cuts])
    cells = _grid_cells(xs, ys, hs, vs)
    owner = {(r, c): k for k, (r0, c0, r1, c1) in enumerate(cells) for r in range(r0, r1) for c in range(c0, c1)}
    pieces: dict[int, list[tuple[float, float, float, str]]] = {}
    torn = 0
    for i in inside:
        ln = lines[i]
        row = row_of(ln)
        x = ln.x0
        runs, straddling = _word_columns(ln, xs, [owner[(row, c)] for c in range(len(xs) - 1)])
        torn += straddling
        for col, text in runs:
            if text.strip():
                pieces.setdefault(owner[(row, col)], []).append((ln.top, ln.bottom, x, text.strip()))
            x += 1e-3  # keep runs of one line in order
    if len(pieces) < min_rows + 1 or torn > max(1, len(inside) // p.grid_torn_lines_per):
        # Words cut by rulings: lines and boxes of a figure drawn over text, not cells.
        return None, set()
    # A table has a row that starts two cells with text and a column that starts two
    # cells; boxes stacked or set side by side (a diagram, a sidebar) have not.
    rows_starting = Counter(cells[k][0] for k in pieces)
    columns_starting = Counter(cell[1] for cell in cells)
    if max(rows_starting.values()) < 2 or max(columns_starting.values()) < min(2, min_rows):
        return None, set()
    # A box holding a quarter of the page is a frame around the page's text.
    frame = page_area * p.grid_frame_area_share
    if any((ys[cells[k][2]] - ys[cells[k][0]]) * (xs[cells[k][3]] - xs[cells[k][1]]) > frame for k in pieces):
        return None, set()
    filled = [k in pieces for k in range(len(cells))]
    col_at = _compact_lines([(c[1], c[3]) for c in cells], xs, filled, p.grid_thin_column_pt)
    row_at = _compact_lines([(c[0], c[2]) for c in cells], ys, filled, p.grid_thin_row_pt)
    n_rows, n_cols = max(row_at.values()), max(col_at.values())
    if n_rows < min_rows or n_cols < 2:
        return None, set()
    rows = [[""] * n_cols for _ in range(n_rows)]
    spans: dict[tuple[int, int], tuple[int, int]] = {}
    boxes: dict[tuple[int, int], tuple[float, float, float, float]] = {}
    for k, (r0, c0, r1, c1) in enumerate(cells):
        r, c = row_at[r0], col_at[c0]
        size = (row_at[r1] - r, col_at[c1] - c)
        if 0 in size:
            continue  # an empty band between a cell's border and its inset
        rows[r][c] = _cell_text(pieces.get(k, []))
        boxes[(r, c)] = (xs[c0], ys[r0], xs[c1], ys[r1])
        if size != (1, 1):
            spans[(r, c)] = size
    # The table's box holds its text too, where labels reach past the outer rules.
    held = [lines[i] for i in inside]
    x0, x1 = min(x0, *(ln.x0 for ln in held)), max(x1, *(ln.x1 for ln in held))
    top, bottom = min(top, *(ln.top for ln in held)), max(bottom, *(ln.bottom for ln in held))
    table = _trim_empty_rows(Table(x0, top, x1, bottom, rows, spans, boxes))
    if page_rtl or is_rtl(" ".join(ln.text for ln in held)):
        table = _from_the_right(table)
    if len(table.rows) < min_rows:
        return None, set()
    return table, set(inside)


def _from_the_right(table: Table) -> Table:
    """`table` with its columns in reading order when it is laid out right to left (on a
    page of Arabic or Hebrew the first column is the rightmost): every row read from its
    right end, a merged cell anchored at its right-most column."""
    n = max(len(row) for row in table.rows)
    spans = {(r, n - c - cs): (rs, cs) for (r, c), (rs, cs) in table.spans.items()}
    boxes = {(r, n - c - table.spans.get((r, c), (1, 1))[1]): box for (r, c), box in table.boxes.items()}
    rows: list[list[str]] = []
    for r, row in enumerate(table.rows):
        out = [""] * n
        for c, cell in enumerate(row):
            out[n - c - table.spans.get((r, c), (1, 1))[1]] = cell
        rows.append(out)
    return Table(table.x0, table.top, table.x1, table.bottom, rows, spans, boxes)


def _trim_empty_rows(table: Table) -> Table:
    """`table` without the rows at its top and bottom that hold no text (a header row
    whose text was taken for a running header, a blank row ruled under the last one).
    Empty rows between others stay: they are part of the author's grid."""
    covered = table.covered()

    def filled(r: int) -> bool:
        return any(table.rows[ar][ac] for ar, ac in (covered.get((r, c), (r, c)) for c in range(len(table.rows[r]))))

    first, end = 0, len(table.rows)
    while first < end and not filled(first):
        first += 1
    while end > first and not filled(end - 1):
        end -= 1
    if (first, end) == (0, len(table.rows)):
        return table
    spans = {(r - first, c): (min(rs, end - r), cs) for (r, c), (rs, cs) in table.spans.items() if first <= r < end}
    boxes = {(r - first, c): box for (r, c), box in table.boxes.items() if first <= r < end}
    return Table(table.x0, table.top, table.x1, table.bottom, table.rows[first:end], spans, boxes)


def _compact_lines(
    bounds: list[tuple[int, int]], coords: list[float], filled: list[bool], thin: float
) -> dict[int, int]:
    """Index in the table of each grid line that bounds a cell (`bounds`: start and end line
    of each cell along one axis).

    Grid lines that bound no cell (drawn only inside a nested table) are dropped, and so
    are bands narrower than `thin` without text: a double rule, or cell borders drawn
    with an inset.
    """
    edges = sorted({0, len(coords) - 1} | {i for b in bounds for i in b})
    index = {edges[0]: 0}
    k = 0
    for prev, e in pairwise(edges):
        narrow = coords[e] - coords[prev] < thin
        if not narrow or any(f and prev <= lo and hi <= e for (lo, hi), f in zip(bounds, filled, strict=True)):
            k += 1
        index[e] = k
    return index


def _compact_columns(rows: list[list[str]], extents: list[list[float]] | None = None) -> list[list[str]]:
    """Merge neighbouring columns that are never filled in the same row (and their
    horizontal `extents`, where given, in place).

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
        if extents is not None:
            extents[c] = [extents[c][0], extents[c + 1][1]]
            del extents[c + 1]
    return rows


def _bisect(edges: Sequence[float], v: float) -> int:
    """Index of the band of `edges` that holds `v` (the first or last one beyond them)."""
    return max(0, bisect_left(edges, v) - 1)


def _text_rows(lines: list[Line], top: float, bottom: float) -> list[float]:
    """Row boundaries from text rows, for grids drawn without inner row rulings."""
    rows = group_rows([ln for ln in lines if top <= ln.cy <= bottom])
    edges = [top]
    for above, below in pairwise(rows):
        edges.append((max(ln.bottom for ln in above) + min(ln.top for ln in below)) / 2)
    edges.append(bottom)
    return _cluster(edges, 0.5)


def find_ruled_tables(
    page: PageModel, lines: list[Line], params: TableParams = DEFAULT.tables
) -> tuple[list[Table], list[Line]]:
    """Tables drawn with vertical and horizontal rulings; returns (tables, other lines)."""
    if not page.vrules or not page.hrules:
        return [], lines
    p = params
    hs = _merge_segments(page.hrules)
    vs = _merge_segments(page.vrules)
    if len(hs) > p.grid_max_rulings or len(vs) > p.grid_max_rulings:
        return [], lines
    join = p.grid_join_pt
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for hi, (y, hx0, hx1) in enumerate(hs):
        for vi, (x, vt, vb) in enumerate(vs):
            if hx0 - join <= x <= hx1 + join and vt - join <= y <= vb + join:
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
        h_rules = [hs[i] for i in h_ids]
        v_rules = _within_rows([vs[i] for i in v_ids], h_rules, p.grid_overrun_pt)
        top = min(v[1] for v in v_rules)
        bottom = max(v[2] for v in v_rules)
        xs = _cluster([v[0] for v in v_rules] + [left, right], p.grid_column_cluster_pt)
        ys = _cluster([hs[i][0] for i in h_ids] + [top, bottom], p.grid_row_cluster_pt)
        if len(xs) < 3 or right - left < p.grid_min_width_pt or bottom - top < p.grid_min_height_pt:
            continue
        min_rows = 2
        if len(ys) < 3:
            framed = [ln for ln in lines if top <= ln.cy <= bottom and left <= (ln.x0 + ln.x1) / 2 <= right]
            if _records(group_rows(framed), xs):
                # A frame with column rulings only: its text rows are its rows.
                ys = _text_rows(lines, top, bottom)
                h_rules += [(y, left, right) for y in ys]
            elif not any(ln.bottom <= top and ln.x0 < right and ln.x1 > left for ln in lines):
                # One row of wrapped cells first in its column: the rest of a table ruled
                # throughout that a page or column break cut (its header is not repeated).
                min_rows = 1
        table, used = _grid_table(lines, xs, ys, h_rules, v_rules, page.width * page.height, page.rtl, min_rows, params)
        if table is not None and not (used & consumed):
            tables.append(table)
            consumed |= used
    if not tables:
        return [], lines
    return tables, [ln for i, ln in enumerate(lines) if i not in consumed]


def _within_rows(
    vs: list[tuple[float, float, float]], hs: list[tuple[float, float, float]], overrun: float
) -> list[tuple[float, float, float]]:
    """Vertical rulings `vs` of a grid, those that come down from further than `overrun` above
    its highest horizontal ruling (of `hs`) cut to its rows, from that ruling to its lowest:
    a table begins at its top rule, so a ruling that runs down through it from above is a
    rule between columns of text that the table touches, or the side of a frame around it.
    One that starts at the table and runs on below its lowest ruling may rule rows the table
    draws no rule under (a table ruled only around its header), and is kept."""
    high, low = min(h[0] for h in hs), max(h[0] for h in hs)
    return [(x, high, low) if t < high - overrun else (x, t, b) for x, t, b in vs]


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
    page: PageModel,
    lines: list[Line],
    body: float,
    gutter: float | None = None,
    params: TableParams = DEFAULT.tables,
    inner_gutter: Callable[[list[Line]], float | None] | None = None,
) -> tuple[list[Table], list[Line]]:
    """Tables laid out by column alignment only.

    A run of at least three consecutive rows, each split into two or more separate text
    chunks, whose chunks fall into the same column bands. Runs whose columns are as wide
    as prose columns are taken for multi-column text, not tables.

    Layout joins cells set close together into one line, so lines are first cut at wide
    gaps; a table found only that way needs three columns. The lines left over are then
    searched again as they are.

    Where the page's text stands in two columns (`gutter`, `band_column_share` of the text's
    width from either side at least), each column is searched on its own: a table in one
    column stands beside the other's prose, line for line. `inner_gutter` finds a gutter
    inside a column (`order.find_gutter`): a column that holds columns of its own (a page in
    three) is searched column by column in turn, as it is read.
    """
    return _columns_search(page, lines, gutter, params, _cell_gaps_drawn(lines), inner_gutter, 0)


# Columns within columns searched at most this deep (as `order` reads them).
_MAX_COLUMN_DEPTH = 3


def _columns_search(
    page: PageModel,
    lines: list[Line],
    gutter: float | None,
    params: TableParams,
    drawn: bool,
    inner_gutter: Callable[[list[Line]], float | None] | None,
    depth: int,
) -> tuple[list[Table], list[Line]]:
    if gutter is not None and lines:
        start, end = min(ln.x0 for ln in lines), max(ln.x1 for ln in lines)
        if min(gutter - start, end - gutter) < params.band_column_share * (end - start):
            # A margin column (side notes, labels) beside the text, not two columns of it.
            return _unruled_search(page, lines, gutter, params, drawn)
        sides = ([ln for ln in lines if ln.x1 <= gutter], [ln for ln in lines if ln.x0 >= gutter])
        (left_tables, left_rest), (right_tables, right_rest) = (
            _column_search(page, s, gutter, params, drawn, inner_gutter, depth) for s in sides
        )
        if any(_rows_pair(a, b) for a in left_tables for b in right_tables):
            # One table across the gutter, cut in two by it (a full-width table on a page
            # in two columns): not two tables; the page is searched whole, across the gutter.
            return _unruled_search(page, lines, None, params, drawn)
        kept = {id(ln) for ln in left_rest + right_rest}
        taken = {id(ln) for side in sides for ln in side} - kept
        return left_tables + right_tables, [ln for ln in lines if id(ln) not in taken]
    return _unruled_search(page, lines, gutter, params, drawn)


def _column_search(
    page: PageModel,
    side: list[Line],
    gutter: float,
    params: TableParams,
    drawn: bool,
    inner_gutter: Callable[[list[Line]], float | None] | None,
    depth: int,
) -> tuple[list[Table], list[Line]]:
    """The tables of one column (`side` of `gutter`), searched by its own columns where it
    has a gutter of its own."""
    inner = inner_gutter(side) if inner_gutter is not None and depth < _MAX_COLUMN_DEPTH else None
    if inner is not None:
        return _columns_search(page, side, inner, params, drawn, inner_gutter, depth + 1)
    return _unruled_search(page, side, gutter, params, drawn)


def _row_tops(table: Table) -> list[float]:
    tops: dict[int, float] = {}
    for (row, _), box in table.boxes.items():
        tops[row] = min(tops.get(row, box[1]), box[1])
    return sorted(tops.values())


def _rows_pair(a: Table, b: Table) -> bool:
    """Whether tables `a` and `b` (either side of a gutter) are the halves of one table:
    they begin and end with rows at the same heights, and half of the shorter's rows at
    least stand at heights of the other's (within `ROW_PAIR_PT`). Two tables, one in each
    column of a page whose columns share a baseline grid, have many rows at the same
    heights, but begin or end apart."""
    tops_a, tops_b = _row_tops(a), _row_tops(b)
    if not tops_a or not tops_b:
        return False
    if abs(tops_a[0] - tops_b[0]) > ROW_PAIR_PT or abs(tops_a[-1] - tops_b[-1]) > ROW_PAIR_PT:
        return False
    shorter, longer = sorted((tops_a, tops_b), key=len)
    paired = sum(1 for t in shorter if any(abs(t - u) <= ROW_PAIR_PT for u in longer))
    return 2 * paired >= len(shorter)


# Points: rows of two tables whose tops lie this close stand at the same height.
ROW_PAIR_PT = 1.0


def _unruled_search(
    page: PageModel, lines: list[Line], gutter: float | None, params: TableParams, drawn: bool
) -> tuple[list[Table], list[Line]]:
    tables, lines = _unruled_pass(page, lines, gutter, params, split=True, drawn=drawn)
    more, lines = _unruled_pass(page, lines, gutter, params, split=False)
    return tables + more, lines


def _unruled_pass(
    page: PageModel, lines: list[Line], gutter: float | None, params: TableParams, *, split: bool, drawn: bool = False
) -> tuple[list[Table], list[Line]]:
    parent: dict[int, Line] = {}
    chunks: list[Line] = []
    for ln in lines:
        parts = _split_wide_gaps(ln, drawn) if split else [ln]
        for part in parts:
            parent[id(part)] = ln
        chunks.extend(parts)
    rows = group_rows(chunks)
    tables: list[Table] = []
    consumed: set[int] = set()
    visual: list[list[Line]] = []  # the text rows of a run that may be a table, top down
    pending: list[list[Line]] = []  # rows of one chunk just above it (a cell set lower)

    p = params

    def flush() -> None:
        for run in _logical_runs(visual, p):
            if len(run) < p.band_min_rows:
                continue
            table = _band_table(run, page, params)
            if table is not None and gutter is not None and table.x0 < gutter < table.x1:
                # Rows that meet across a column gutter are two columns of text.
                table = None
            if (
                table is not None
                and len(table.rows[0]) < p.band_split_min_columns
                and any(parent[id(ln)] is not ln for row in run for ln in row)
            ):
                # Two "columns" found only inside lines are more often aligned code
                # (SQL keywords) or a contents entry than a table.
                table = None
            if table is not None:
                tables.append(table)
                for row in run:
                    consumed.update(id(parent[id(ln)]) for ln in row)
        visual.clear()

    for row in rows:
        multi = _cells_apart(row, p)
        near = bool(visual) and _near(visual[-1], row, p)
        if near and (multi or _between_cells(row, visual)):
            visual.append(row)
            continue
        if multi:
            flush()
            # Lines of one chunk right above, between the row's cells, each reaching down
            # beside the row below it: a cell set higher in its row than the others
            # (centred beside a taller cell) goes with it.
            lead: list[list[Line]] = []
            below = row
            for above in reversed(pending):
                if not _between_cells(above, [row]) or max(ln.bottom for ln in above) <= min(ln.top for ln in below):
                    break
                lead.insert(0, above)
                below = above
            visual.extend(lead)
            visual.append(row)
            pending.clear()
            continue
        flush()
        pending.append(row)
        if len(pending) > 1 and not _near(pending[-2], row, p):
            del pending[:-1]
    flush()
    if not tables:
        return [], lines
    return tables, [ln for ln in lines if id(ln) not in consumed]


def _near(above: list[Line], row: list[Line], p: TableParams) -> bool:
    """Whether text row `row` stands close enough under `above` to go on one run of rows."""
    gap = min(ln.top for ln in row) - max(ln.bottom for ln in above)
    return gap <= p.band_run_gap_heights * max(ln.height for ln in row)


def _cells_apart(row: list[Line], p: TableParams) -> bool:
    """Whether `row` holds two text chunks or more, each `band_gap_em` from the next."""
    return len(row) >= 2 and all(b.x0 - a.x1 >= p.band_gap_em * min(a.size, b.size) for a, b in pairwise(row))


def _between_cells(row: list[Line], visual: list[list[Line]]) -> bool:
    """Whether `row`, a text row of one chunk, stands within one column of the run's last
    row of several chunks: it overlaps one of its cells at most and reaches neither
    neighbour of the space it stands in (a cell's text wrapped onto another line, or a cell
    set lower or higher than the others of its row)."""
    if len(row) != 1:
        return False
    cells = next((sorted(r, key=lambda ln: ln.x0) for r in reversed(visual) if len(r) >= 2), None)
    if cells is None:
        return False
    ln = row[0]
    under = [i for i, a in enumerate(cells) if a.x0 <= ln.x1 and ln.x0 <= a.x1]
    if len(under) > 1:
        return False
    if under:
        k = under[0]
        return (k + 1 == len(cells) or ln.x1 < cells[k + 1].x0) and (k == 0 or ln.x0 > cells[k - 1].x1)
    return all(a.x1 < ln.x0 or ln.x1 < a.x0 for a in cells)


def _logical_runs(visual: list[list[Line]], p: TableParams) -> list[list[list[Line]]]:
    """The runs of table rows in a run of text rows (`visual`), each row with its wrapped
    lines. Where padding parts the rows (`_leading_pitch`), a column's lines at the text's
    leading are one cell, and cells whose lines overlap down the page are one row, however
    they are aligned in it (top, middle); a row of one cell ending the run is none of it.
    Else a row whose chunks stand under cells of the row above, its first cell empty, closer
    than the rows stand, holds them wrapped (`_wrapped_cells`), and a lone chunk that does
    not ends the run."""
    chunks = [ln for row in visual for ln in row]
    if not chunks:
        return []
    rows = _padded_rows(chunks, p)
    if rows is not None:
        while rows and len(_chunk_columns(rows[-1])) == 1:
            rows.pop()
        if len(rows) >= p.band_min_rows:
            return [rows]
    while visual and len(visual[0]) < 2:
        visual = visual[1:]  # cells set lower are told only by the rows' padding
    if not visual:
        return []
    runs: list[list[list[Line]]] = [[list(visual[0])]]
    for row in visual[1:]:
        run = runs[-1]
        if run and _wrapped_cells(row, run, p):
            run[-1].extend(row)
        elif _cells_apart(row, p):
            run.append(list(row))
        else:
            runs.append([])
    return [run for run in runs if run]


def _padded_rows(chunks: list[Line], p: TableParams) -> list[list[Line]] | None:
    """The table rows of `chunks` (text chunks in columns) where padding parts the rows
    (`_padding`): a column's chunks at the text's leading are one cell, cells whose extents
    down the page overlap one row. None where the rows stand at the leading."""
    padding = _padding(chunks, p)
    return None if padding is None else padding[1]


def _padding(chunks: list[Line], p: TableParams) -> tuple[float, list[list[Line]]] | None:
    """`_leading_pitch` of text chunks in columns and the rows it makes of them: None where no
    padding parts their rows, or where the rows it makes of several lines are mostly not
    ragged (`_ragged`): rows set in groups, a gap after every fifth or after a header and
    before a total, each group's text rows whole but for a blank cell here and there."""
    columns = _chunk_columns(chunks)
    several = {id(ln) for row in group_rows(chunks) if len(row) >= 2 for ln in row}
    leading = _leading_pitch(columns, several, max(ln.height for ln in chunks), p)
    if leading is None:
        return None
    column_of = {id(ln): k for k, column in enumerate(columns) for ln in column}
    rows = _rows_of_cells(columns, leading)
    tall = [row for row in rows if len(group_rows(row)) > 1]
    ragged = sum(1 for row in tall if _ragged(row, column_of))
    return (leading, rows) if ragged >= p.band_ragged_rows_share * len(tall) else None


def _ragged(row: list[Line], column_of: dict[int, int]) -> bool:
    """Whether the table row `row` (lines of several text rows) holds cells of different
    lengths: more than half of its text rows after the first fill fewer of its columns than
    the row does (wrapped text ends where its cell's does, one cell sooner than another; a
    blank cell leaves one text row short)."""
    filled = {column_of[id(ln)] for ln in row}
    rest = group_rows(row)[1:]
    short = sum(1 for text_row in rest if len({column_of[id(ln)] for ln in text_row}) < len(filled))
    return 2 * short > len(rest)


def _chunk_columns(chunks: list[Line]) -> list[list[Line]]:
    """The chunks in columns (chunks whose extents across overlap are one), left to right,
    each column top down."""
    columns: list[list[Line]] = []
    right = 0.0
    for ln in sorted(chunks, key=lambda ln: ln.x0):
        if columns and ln.x0 <= right:
            columns[-1].append(ln)
            right = max(right, ln.x1)
        else:
            columns.append([ln])
            right = ln.x1
    for column in columns:
        column.sort(key=lambda ln: ln.top)
    return columns


def _pitch(a: Line, b: Line) -> float:
    """How far `b`'s centre stands below `a`'s (points): fonts of other heights in a line
    move its edges more than its centre."""
    return (b.top + b.bottom - a.top - a.bottom) / 2


def _leading_pitch(columns: list[list[Line]], several: set[int], height: float, p: TableParams) -> float | None:
    """The widest pitch between a column's lines at the text's leading, where the pitches
    come in two sizes: the least, with those within `band_row_gap_heights` of a line's
    height of it, and others all wider by more than that and `band_row_gap_ratio` times the
    least, as many between lines of rows of several cells (ids in `several`) as part a
    table's rows at least. Cells padded apart, their lines wrapped at the leading. None
    where the pitches are of one size (rows at the leading), or only the lines around the
    rows stand wider apart."""
    pairs = sorted(((_pitch(a, b), a, b) for column in columns for a, b in pairwise(column)), key=lambda t: t[0])
    if not pairs or pairs[0][0] <= 0.0:
        return None
    least = pairs[0][0]
    limit = least + p.band_row_gap_heights * height
    near = [x for x, _, _ in pairs if x <= limit]
    wide = pairs[len(near) :]
    inside = sum(1 for _, a, b in wide if id(a) in several and id(b) in several)
    if inside < p.band_min_rows - 1 or wide[0][0] < p.band_row_gap_ratio * least:
        return None
    return near[-1]


def _rows_of_cells(columns: list[list[Line]], leading: float) -> list[list[Line]]:
    """Table rows from columns of chunks: a column's chunks at `leading` pitch or less are
    one cell, and cells whose extents down the page overlap are one row."""
    cells: list[tuple[float, float, list[Line]]] = []
    for column in columns:
        cell = [column[0]]
        for a, b in pairwise(column):
            if _pitch(a, b) <= leading:
                cell.append(b)
            else:
                cells.append((cell[0].top, max(ln.bottom for ln in cell), cell))
                cell = [b]
        cells.append((cell[0].top, max(ln.bottom for ln in cell), cell))
    rows: list[list[Line]] = []
    bottom = 0.0
    for top, low, cell in sorted(cells, key=lambda c: c[0]):
        if rows and top < bottom:
            rows[-1].extend(cell)
            bottom = max(bottom, low)
        else:
            rows.append(list(cell))
            bottom = low
    for row in rows:
        row.sort(key=lambda ln: (ln.top, ln.x0))
    return rows


# Share of a page's spaces between words that are glyphs drawn with a width of their own,
# from which the page's producer draws its word spaces (browsers, word processors; TeX draws
# none, and a layout puts them in where the glyphs leave a gap).
DRAWN_SPACES_SHARE = 0.5


def draws_spaces(lines: Sequence[Line]) -> bool:
    """Whether the producer of `lines` (a page's) draws its word spaces as glyphs."""
    drawn = total = 0
    for ln in lines:
        xs = ln.glyph_x
        for k, text in enumerate(ln.glyph_text):
            if text == " ":
                total += 1
                drawn += xs[2 * k + 1] > xs[2 * k]
    return total > 0 and drawn >= DRAWN_SPACES_SHARE * total


def _cell_gaps_drawn(lines: Sequence[Line]) -> bool:
    """The `drawn` of `_split_wide_gaps` for `lines`: whether the page draws its word spaces,
    asked only where a line has a gap it could tell (none: no line is cut whatever it says)."""
    return any(ln.max_gap >= CELL_GAP_EM * ln.size for ln in lines) and draws_spaces(lines)


# A gap between two cells set in one line, on a page that draws its word spaces: at least
# this many ems of the line's size (pandoc's tables pad each cell by half an em on either
# side: an em, less what rounding takes off; a contents page's numbers stand closer to their
# titles) ...
CELL_GAP_EM = 0.95
# ... and at least this many times the line's middle word space (the spaces of a justified
# line stretch together; a gap between cells stands out among them). Any gap of an em or
# more is one.
CELL_GAP_SPACES = 2.5


def _split_wide_gaps(line: Line, drawn: bool = False) -> list[Line]:
    """`line` cut where its glyphs leave a gap between cells (`CELL_GAP_EM`, `CELL_GAP_SPACES`).

    `drawn`: the page draws its word spaces (`draws_spaces`), so the line's word spaces are
    its gaps that hold a space glyph of their own (cells are set apart without one), and a gap
    is measured against them and the size (with fewer than two, the size alone). Where the
    page draws none (TeX), nothing tells a word space from a cell's padding but its width: a
    gap of an em or more.

    The parts only serve to find columns: their text is that of their glyphs, in one style.
    """
    if line.max_gap < CELL_GAP_EM * line.size or line.vertical or len(line.glyph_text) < 3:
        return [line]
    chars = line.chars
    n = len(chars)
    gaps: list[tuple[int, float, bool]] = []  # (glyph after the space, its width, a drawn space)
    for at in [i for i, c in enumerate(chars) if c[2].isspace()]:
        before, after = at - 1, at + 1
        while before >= 0 and chars[before][2].isspace():
            before -= 1
        while after < n and chars[after][2].isspace():
            after += 1
        if before >= 0 and after < n and (not gaps or gaps[-1][0] != after):
            own = any(c[1] > c[0] for c in chars[before + 1 : after])
            gaps.append((after, chars[after][0] - chars[before][1], own))
    if not gaps:
        return [line]
    limit = line.size  # for a gap with a space drawn in it, and on a page that draws none
    undrawn = line.size  # for a gap without one, on a page that draws its spaces
    if drawn:
        words = sorted(width for _, width, own in gaps if own)
        word = words[(len(words) - 1) // 2] if len(words) >= 2 else 0.0
        undrawn = min(line.size, max(CELL_GAP_EM * line.size, CELL_GAP_SPACES * word))
    # The glyph indexes where a part starts.
    cuts = [after for after, width, own in gaps if width >= (limit if own else undrawn)]
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
                color=line.color,
            )
        )
    return parts


def _list_rows(rows: list[list[str]]) -> bool:
    """Whether each row is a list marker and one text, or one text alone (a wrapped line)."""
    marked = 0
    for row in rows:
        filled = [c for c in row if c]
        if len(filled) > 2:
            return False
        if len(filled) == 2:
            if not lone_list_marker(filled[0]):
                return False
            marked += 1
    return 2 * marked > len(rows)


def _wrapped_cells(row: list[Line], run: list[list[Line]], p: TableParams) -> bool:
    """Whether `row` holds the cells of the run's last row wrapped onto another line: each
    of its chunks stands under one cell of that row outside the first column, within that
    cell's column, and the row stands closer under it than the run's rows with a first cell
    stand under theirs (a wrapped cell's lines sit at the text's leading; rows are parted
    by the cells' padding as well)."""
    above = run[-1]
    # The first column ends where its narrowest cell does.
    first = min(min(r, key=lambda ln: ln.x0).x1 for r in run)
    cells = sorted(above, key=lambda ln: ln.x0)
    for ln in row:
        under = [i for i, a in enumerate(cells) if a.x0 <= ln.x1 and ln.x0 <= a.x1]
        if len(under) != 1 or ln.x0 <= first or cells[under[0]].x0 <= first:
            return False
        after = under[0] + 1
        if after < len(cells) and ln.x1 >= cells[after].x0:
            return False
    lead_gaps = sorted(
        min(ln.top for ln in b) - max(ln.bottom for ln in a)
        for a, b in pairwise(run)
        if min(ln.x0 for ln in b) <= first
    )
    if not lead_gaps:
        return False
    gap = min(ln.top for ln in row) - max(ln.bottom for ln in above)
    return gap < p.band_wrap_gap_share * lead_gaps[len(lead_gaps) // 2]


def _aligned(column: list[Line], p: TableParams) -> bool:
    """Whether a column's chunks line up as a table's do: `band_aligned_share` of them at
    least start, end or are centred within `band_align_pt` of one another (a diagram's
    labels stand wherever their shapes are)."""
    if len(column) < p.band_min_rows:
        return True
    for edge in ((ln.x0 for ln in column), (ln.x1 for ln in column), ((ln.x0 + ln.x1) / 2 for ln in column)):
        xs = sorted(edge)
        most = max(bisect_left(xs, x + 2 * p.band_align_pt) - k for k, x in enumerate(xs))
        if most >= p.band_aligned_share * len(xs):
            return True
    return False


def _band_table(run: list[list[Line]], page: PageModel, params: TableParams = DEFAULT.tables) -> Table | None:
    p = params
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
            col = next(
                (i for i, (a, b) in enumerate(bands) if a - p.band_edge_slack_pt <= cx <= b + p.band_edge_slack_pt), 0
            )
            text = ln.text.strip()
            cells[col] = f"{cells[col]} {text}" if cells[col] else text
        rows_out.append(cells)
    columns = [list(band) for band in bands]
    rows_out = _compact_columns(rows_out, columns)
    if len(rows_out[0]) < 2:
        return None
    firsts = [r[0] for r in rows_out if r[0]]
    first_markers = all(lone_list_marker(c) for c in firsts)
    numbered_rows = any(BARE_NUMBER.match(c) for c in firsts)
    if (first_markers and (len(rows_out[0]) == 2 or not numbered_rows)) or _list_rows(rows_out):
        # Bullets or item numbers, each beside one text, are a list (nested where the
        # markers stand further in), not a table; so are bullets or numbers with their "."
        # beside text a tab stop splits in columns (a tab inside an item). A column of bare
        # numbers before two or more is a table's row numbers.
        return None
    # Prose columns side by side look like a two- or three-band table; their bands are
    # each as wide as a text column, while a table has at least one narrow band.
    extents = [b - a for a, b in bands]
    prose = p.band_prose_width_share * page.width
    if len(bands) == 2:
        if min(extents) > prose:
            return None
    elif all(e > prose for e in extents):
        return None
    filled_rows = sum(1 for r in rows_out if sum(1 for c in r if c) >= 2)
    if filled_rows < p.band_min_filled_rows:
        return None
    if not all(_aligned(column, p) for column in _chunk_columns([ln for row in run for ln in row])):
        return None
    x0 = min(ln.x0 for row in run for ln in row)
    x1 = max(ln.x1 for row in run for ln in row)
    top = min(ln.top for ln in run[0])
    bottom = max(ln.bottom for ln in run[-1])
    boxes = {
        (r, c): (a, min(ln.top for ln in row), b, max(ln.bottom for ln in row))
        for r, row in enumerate(run)
        for c, (a, b) in enumerate(columns)
    }
    table = Table(x0, top, x1, bottom, rows_out, boxes=boxes)
    if page.rtl or is_rtl(" ".join(ln.text for row in run for ln in row)):
        return _from_the_right(table)
    return table


# Points: the shortest horizontal rule that may bound a table ruled by rows only (a link's
# underline or a rule under one word is shorter than two columns).
ROW_RULE_MIN_WIDTH = 60.0
# Rules (a count) of a table ruled by rows only: above the header, under it, at the bottom.
ROW_RULES_MIN = 3
# Points: how far the ends of the rules of one table, and its text, may stand past each other.
ROW_RULE_END_TOLERANCE = 3.0
# Multiple of the font size: the narrowest blank strip, through every text row between the
# rules, that parts two columns (cells are padded on both sides; words of prose are closer).
ROW_TABLE_COLUMN_GAP = 0.9
# Multiple of the font size: how much wider than the closest gap between two text rows of one
# stretch a gap must be to start a new row (cells padded above and below, wrapped lines not).
ROW_TABLE_ROW_GAP = 0.25


def _frame_edge(rule: tuple[float, float, float], vs: Sequence[tuple[float, float, float]]) -> bool:
    """Whether a horizontal rule ends on a vertical one: the edge of a box (a code block's
    shading, a frame, a table ruled in full), not a rule of a table ruled by rows only."""
    y, a, b = rule
    return any(abs(x - a) <= 2.5 or abs(x - b) <= 2.5 for x, top, bottom in vs if top - 2 <= y <= bottom + 2)


def _blank_columns(lines: list[Line], x0: float, x1: float, gap: float) -> list[float]:
    """Column edges between `x0` and `x1`: the middles of blank strips at least `gap` wide
    that no glyph of `lines` covers."""
    spans = sorted((a, b) for ln in lines for a, b, text in ln.chars if not text.isspace())
    edges = [x0]
    reach = None
    for a, b in spans:
        if reach is not None and a - reach >= gap:
            edges.append((reach + a) / 2)
        reach = b if reach is None else max(reach, b)
    return [*edges, x1]


def _stretch_rows(
    lines: list[Line], top: float, bottom: float, leading: float | None, drawn: bool = False
) -> list[float]:
    """Row boundaries inside one stretch between two rules: where padding parts the table's
    rows (`leading`, the pitch of lines wrapped in a cell, `_padding`), between the
    rows of cells of several lines, set at the top or the middle of their rows;
    else between its text rows, those less apart than the stretch's closest pair by
    `ROW_TABLE_ROW_GAP` taken as one row (wrapped lines of one cell, a short cell centred
    beside them)."""
    rows = group_rows(lines)
    cuts: list[float] = []
    if len(rows) < 2:
        return cuts
    if leading is not None:
        # Rows parted by padding: cells however aligned in their rows (top, middle).
        padded = _rows_of_cells(_chunk_columns([part for ln in lines for part in _split_wide_gaps(ln, drawn)]), leading)
        for above, below in pairwise(padded):
            cut = (max(ln.bottom for ln in above) + min(ln.top for ln in below)) / 2
            if top < cut < bottom:
                cuts.append(cut)
        return cuts
    size = max(ln.size for ln in lines)
    gaps = [min(ln.top for ln in b) - max(ln.bottom for ln in a) for a, b in pairwise(rows)]
    closest = min((g for g in gaps if g >= 0), default=0.0)
    uniform = max(gaps) - closest <= ROW_TABLE_ROW_GAP * size
    for (above, below), g in zip(pairwise(rows), gaps, strict=True):
        if uniform or g > closest + ROW_TABLE_ROW_GAP * size:
            cuts.append((max(ln.bottom for ln in above) + min(ln.top for ln in below)) / 2)
    return [c for c in cuts if top < c < bottom]


def find_row_ruled_tables(
    page: PageModel, lines: list[Line], params: TableParams = DEFAULT.tables
) -> tuple[list[Table], list[Line]]:
    """Tables ruled by rows only (pandoc's HTML, booktabs): horizontal rules of one width, a
    rule above and below the header and one at the bottom, with no vertical rulings. The
    columns are the blank strips through all the text between the rules, the rows the rules
    and, between them, the text rows apart by more than the wrapped lines of one cell.
    Returns (tables, other lines)."""
    vs = _merge_segments(page.vrules)
    hs = [h for h in _merge_segments(page.hrules) if h[2] - h[1] >= ROW_RULE_MIN_WIDTH and not _frame_edge(h, vs)]
    if len(hs) < 2 or len(hs) > 200:
        return [], lines
    groups: list[list[tuple[float, float, float]]] = []
    for h in sorted(hs, key=lambda h: (h[1], h[2], h[0])):
        for g in groups:
            if abs(g[0][1] - h[1]) <= ROW_RULE_END_TOLERANCE and abs(g[0][2] - h[2]) <= ROW_RULE_END_TOLERANCE:
                g.append(h)
                break
        else:
            groups.append([h])
    tables: list[Table] = []
    consumed: set[int] = set()
    drawn = _cell_gaps_drawn(lines)
    for group in groups:
        rules = sorted(group)
        i = 0
        while i < len(rules) - 1:
            for j in range(len(rules) - 1, i, -1):
                found = _row_ruled_table(page, lines, rules[i : j + 1], consumed, drawn, params)
                if found is not None:
                    table, used = found
                    tables.append(table)
                    consumed |= used
                    i = j
                    break
            else:
                i += 1
    if not tables:
        return [], lines
    return tables, [ln for i, ln in enumerate(lines) if i not in consumed]


def _row_ruled_table(
    page: PageModel,
    lines: list[Line],
    rules: list[tuple[float, float, float]],
    consumed: set[int],
    drawn: bool,
    params: TableParams = DEFAULT.tables,
) -> tuple[Table, set[int]] | None:
    """The table between the first and the last of `rules` (one width), or None where the
    text between them is not laid out in columns. A header is ruled off: three rules at least,
    with text between each two (two rules alone bound a code listing or a page's masthead as
    often as a table)."""
    if len(rules) < ROW_RULES_MIN:
        return None
    top, bottom = rules[0][0], rules[-1][0]
    x0, x1 = min(r[1] for r in rules), max(r[2] for r in rules)
    band = [i for i, ln in enumerate(lines) if top < ln.cy < bottom and ln.x1 > x0 and ln.x0 < x1]
    if not band or any(i in consumed for i in band):
        return None
    held = [lines[i] for i in band]
    if any(not any(a < ln.cy < b for ln in held) for (a, _, _), (b, _, _) in pairwise(rules)):
        return None
    if any(ln.x0 < x0 - ROW_RULE_END_TOLERANCE or ln.x1 > x1 + ROW_RULE_END_TOLERANCE for ln in held):
        return None  # text running past the rules: rules above and below prose
    size = sorted(ln.size for ln in held)[len(held) // 2]
    # (Cells set close are one line: the columns are found between its parts.)
    parts = [part for ln in held for part in _split_wide_gaps(ln, drawn)]
    xs = _blank_columns(parts, x0, x1, ROW_TABLE_COLUMN_GAP * size)
    if len(xs) < 3 or len(group_rows(held)) < 2:
        return None
    for a, b in pairwise(r[0] for r in rules):
        # Each stretch between two rules of several text rows is laid out in columns: text of
        # one column there (a code block, a paragraph) parts the rules of two tables, not rows
        # of one. (One text row alone may be one cell across the table: a group's title.)
        stretch = [ln for ln in parts if a < ln.cy < b]
        if len(group_rows(stretch)) > 1 and len(_blank_columns(stretch, x0, x1, ROW_TABLE_COLUMN_GAP * size)) < 3:
            return None
    ys = [r[0] for r in rules]
    padding = _padding(parts, params)
    leading = None if padding is None else padding[0]
    for a, b in pairwise(list(ys)):
        ys += _stretch_rows([ln for ln in held if a < ln.cy < b], a, b, leading, drawn)
    ys = sorted(ys)
    hs = [(y, x0, x1) for y in ys]
    vs = [(x, top, bottom) for x in xs]
    table, used = _grid_table(lines, xs, ys, hs, vs, page.width * page.height, page.rtl, params=params)
    if table is None or _list_rows(table.rows) or used != set(band):
        return None
    # Most rows of a table fill two cells or more; a chart's gridlines hold one label a row.
    if 2 * sum(1 for row in table.rows if sum(1 for c in row if c) >= 2) < len(table.rows):
        return None
    return table, used
