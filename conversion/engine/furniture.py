"""Page furniture: page numbers, running titles by position, margin line numbers."""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise
from typing import NamedTuple

from .layout import MONO, Line, PageModel
from .tables import group_rows


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


def strip_line_numbers(lines: list[Line]) -> list[Line]:
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
# also after a running title ("Annual Report | Page 7 of 12", "Preface | Page iv").
PAGE_NUMBER = re.compile(
    r"^(?:(?:page|p\.|pg\.?|seite|página|pagina)\s*)?\d{1,4}(?:\s*(?:of|/|von|de|sur)\s*\d{1,4})?$"
    r"|^[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]$"
    r"|^[ivxlcdm]{1,7}$"
    r"|(?:^|\s[-\u2013\u2014|\u00b7\u2022,]\s*)(?:page|p\.|pg\.?)\s*(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
# A page label ending a line, capitalised as labels are ("... 3:46 PM Page iv" in a printer's
# slug), where "of page 4" in a sentence is not.
PAGE_LABEL = re.compile(r"\s(?:Page|PAGE)\s*(?:\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7})$")
# A footnote starts with its mark; it is text, whatever its size and place.
_FOOTNOTE_MARK = re.compile(r"^\s*(?:\d{1,3}|[*\u2020\u2021\u00a7])\s*[A-Za-z\u00c0-\u024f]")
_FURNITURE_BAND = 0.1  # fraction of the page height at the top and at the bottom
# Running lines (headers, footers, printers' slugs) are told by repetition across pages
# (`DocStats.is_running`); these say which lines of a page may be one. A line of the margin
# bands above is, and so is one of the outermost text rows of the page, above or below the
# text block, wherever the text block ends (a book's pages are cut from a larger sheet, and
# its running foot sits well inside the sheet).
RUNNING_ZONE = 0.1  # fraction of the page height at the top and at the bottom
_EDGE_ROWS = 2  # text rows from the top (and from the bottom): a slug above a running head
_EDGE_GAP_EMS = 1.0  # an edge row stands this many ems (of the smaller text) apart from the next row in
_EDGE_ROW_LINES = 3  # a row of more chunks is a table row or a figure's labels, not furniture
# Arabic numbers and roman numerals (a whole word of roman digits: "xviii", "iv"), masked in
# running lines so that "18 FREE CULTURE" and "20 FREE CULTURE" read the same.
_DIGIT_RUN = re.compile(r"\d+")
_ROMAN_WORD = re.compile(
    r"(?<![^\W\d_])(?=[mdclxvi])m{0,4}(?:c[md]|d?c{0,3})(?:x[cl]|l?x{0,3})(?:i[xv]|v?i{0,3})(?![^\W\d_])"
)


def running_text(text: str) -> str:
    """The text a running line keeps from page to page: case and spacing folded, its
    numbers (arabic or roman) masked as `#`."""
    folded = _DIGIT_RUN.sub("#", " ".join(text.casefold().split()))
    return _ROMAN_WORD.sub("#", folded)


class Candidate(NamedTuple):
    """Where a line that may be a running line sits: at the top or the bottom of its page,
    the distance in points from that edge to its outer side (the place a running line
    keeps from page to page) and to its inner side, whether it lies in the margin band,
    and whether its row, and every row between it and the edge, stands apart from the next
    row toward the middle of the page (the text has not begun); `row` holds the ids of the
    other lines of its row."""

    at_top: bool
    place: float
    reach: float
    in_zone: bool
    apart: bool
    row: tuple[int, ...]


def running_candidates(page: PageModel) -> dict[int, Candidate]:
    """Lines of `page` that may be running lines, by id: those of the margin bands, and
    those of the outermost text rows that stand apart from the rows inside them (an edge
    row beyond the bands is one only where it lies outside the document's text block,
    which `DocStats` knows)."""
    out: dict[int, Candidate] = {}
    height = page.height
    rows = group_rows([ln for ln in page.lines if not ln.vertical])
    for ordered, at_top in ((rows, True), (rows[::-1], False)):
        edge = True  # the rows so far are edge rows, each apart from the next
        outside = True  # every row so far stands apart from the next: the text has not begun
        for depth, row in enumerate(ordered):
            inner = ordered[depth + 1] if depth + 1 < len(ordered) else None
            in_half = max(ln.cy for ln in row) < height / 2 if at_top else min(ln.cy for ln in row) >= height / 2
            if not in_half:
                break
            apart = outside = outside and (
                inner is None
                or _gap(row, inner, at_top)
                >= _EDGE_GAP_EMS * min(max(ln.size for ln in row), max(ln.size for ln in inner))
            )
            edge = edge and apart and depth < _EDGE_ROWS and inner is not None and len(row) <= _EDGE_ROW_LINES
            limit = height * RUNNING_ZONE
            zone = [ln for ln in row if (ln.bottom <= limit if at_top else ln.top >= height - limit)]
            if not zone and not edge:
                break
            for ln in row if edge else zone:
                mates = tuple(id(other) for other in row if other is not ln)
                out[id(ln)] = _candidate(ln, height, at_top, in_zone=any(ln is z for z in zone), apart=apart, row=mates)
    return out


def _gap(row: list[Line], inner: list[Line], at_top: bool) -> float:
    """Points between a row and the next row toward the middle of the page."""
    if at_top:
        return min(ln.top for ln in inner) - max(ln.bottom for ln in row)
    return min(ln.top for ln in row) - max(ln.bottom for ln in inner)


def _candidate(ln: Line, height: float, at_top: bool, *, in_zone: bool, apart: bool, row: tuple[int, ...]) -> Candidate:
    if at_top:
        return Candidate(True, ln.top, ln.bottom, in_zone, apart, row)
    return Candidate(False, height - ln.bottom, height - ln.top, in_zone, apart, row)


# Crop marks, registration bars and ornaments set in a font: a margin line of symbol glyphs
# only (Unicode category So: dingbats, box drawing, marks), no letter or digit among them.
_ORNAMENT_MIN_GLYPHS = 3
_CHECKBOXES = frozenset("\u2610\u2611\u2612")  # ballot boxes are a form's fields, not marks


def ornaments(page: PageModel, lines: list[Line]) -> set[int]:
    """ids of `lines` that are marks in the margin, not text: a string of symbol glyphs in
    one of the page's outermost rows or margin bands (`running_candidates`)."""
    edge = running_candidates(page)
    return {id(ln) for ln in lines if id(ln) in edge and is_ornament(ln)}


def is_ornament(line: Line) -> bool:
    """A line of symbol glyphs only, no letter or digit, as crop marks and ornaments are."""
    if line.style & MONO:
        return False
    glyphs = [ch for ch in line.text if not ch.isspace()]
    return len(glyphs) >= _ORNAMENT_MIN_GLYPHS and all(
        unicodedata.category(ch) == "So" and ch not in _CHECKBOXES for ch in glyphs
    )


_NUMBERED_BAND = 0.16  # the same for a row that holds a page number beside other text


def margin_furniture(lines: list[Line], page: PageModel, body: float) -> set[int]:
    """ids of lines that are page furniture by position alone (running titles, page numbers).

    Repetition across pages cannot find these on one- or two-page documents, or on
    headers that alternate between left and right pages. Only the outermost one or two
    text rows of the top and bottom bands are considered, and only when a clear gap
    separates them from the rest of the page; of those, a line goes when it is a page
    number, or when it is set smaller than the body text and is not a footnote; never a line
    a tagged PDF's structure tree holds (`Line.tagged`).
    """
    if len(lines) < 2:
        return set()
    rows = group_rows(lines)
    drop: set[int] = set()
    min_gap = max(1.5 * body, 10.0)
    for ordered in (rows, rows[::-1]):
        at_top = ordered is rows
        for depth in range(min(2, len(ordered) - 1)):
            row = ordered[depth]
            # A row that carries a page number beside its text is a running header or
            # footer even in the wider margins of a book or journal page.
            band = (
                _NUMBERED_BAND
                if len(row) > 1 and any(PAGE_NUMBER.search(ln.text.strip()) for ln in row)
                else _FURNITURE_BAND
            )
            if at_top:
                in_band = max(ln.bottom for ln in row) <= page.height * band
                gap = min(ln.top for ln in ordered[depth + 1]) - max(ln.bottom for ln in row)
            else:
                in_band = min(ln.top for ln in row) >= page.height * (1 - band)
                gap = min(ln.top for ln in row) - max(ln.bottom for ln in ordered[depth + 1])
            if not in_band or len(row) > 3:
                # A row of many chunks is a table row or a figure's labels, not furniture.
                break
            if gap < min_gap:
                continue
            for band_row in ordered[: depth + 1]:
                for ln in band_row:
                    if ln.vertical or ln.tagged:
                        # (A tagged PDF's structure tree holds the line: content.)
                        continue
                    text = " ".join(ln.text.split())
                    if PAGE_NUMBER.search(text) or (
                        ln.size <= body - 0.75 and len(text) <= 120 and not _FOOTNOTE_MARK.match(text)
                    ):
                        drop.add(id(ln))
            break
    return drop
