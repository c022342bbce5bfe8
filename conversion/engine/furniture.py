"""Page furniture: page numbers, running titles by position, margin line numbers."""

from __future__ import annotations

import re
from itertools import pairwise

from .layout import Line, PageModel
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
# also after a running title ("Annual Report | Page 7 of 12").
PAGE_NUMBER = re.compile(
    r"^(?:(?:page|p\.|pg\.?|seite|página|pagina)\s*)?\d{1,4}(?:\s*(?:of|/|von|de|sur)\s*\d{1,4})?$"
    r"|^[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]$"
    r"|^[ivxlcdm]{1,7}$"
    r"|(?:^|\s[-\u2013\u2014|\u00b7\u2022,]\s*)(?:page|p\.|pg\.?)\s*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
# A footnote starts with its mark; it is text, whatever its size and place.
_FOOTNOTE_MARK = re.compile(r"^\s*(?:\d{1,3}|[*\u2020\u2021\u00a7])\s*[A-Za-z\u00c0-\u024f]")
_FURNITURE_BAND = 0.1  # fraction of the page height at the top and at the bottom
_NUMBERED_BAND = 0.16  # the same for a row that holds a page number beside other text


def margin_furniture(lines: list[Line], page: PageModel, body: float) -> set[int]:
    """ids of lines that are page furniture by position alone (running titles, page numbers).

    Repetition across pages cannot find these on one- or two-page documents, or on
    headers that alternate between left and right pages. Only the outermost one or two
    text rows of the top and bottom bands are considered, and only when a clear gap
    separates them from the rest of the page; of those, a line goes when it is a page
    number, or when it is set smaller than the body text and is not a footnote.
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
                    if ln.vertical:
                        continue
                    text = " ".join(ln.text.split())
                    if PAGE_NUMBER.search(text) or (
                        ln.size <= body - 0.75 and len(text) <= 120 and not _FOOTNOTE_MARK.match(text)
                    ):
                        drop.add(id(ln))
            break
    return drop
