"""Figures: the pictures of a page, where they stand in its reading order, and their captions."""

from __future__ import annotations

from dataclasses import dataclass

from .elements import Element, ElementType
from .layout import PageModel
from .tables import Table

# A picture this small is an icon, a logo or a rule drawn as an image, not a figure; one
# covering most of the page is its background or a scan of it.
_MIN_SIDE = 36.0
_MAX_PAGE_SHARE = 0.6


@dataclass
class Figure:
    """A picture's box on the page (top-down coordinates), an item of the reading order."""

    x0: float
    top: float
    x1: float
    bottom: float


def figures(page: PageModel, tables: list[Table]) -> list[Figure]:
    """The page's pictures large enough to be figures, overlapping ones as one, leaving out
    those inside a table (a picture in a cell belongs to the table)."""
    boxes: list[list[float]] = []
    for x0, top, x1, bottom in sorted(page.images, key=lambda b: (b[1], b[0])):
        for box in boxes:
            if x0 <= box[2] and box[0] <= x1 and top <= box[3] and box[1] <= bottom:
                box[:] = [min(box[0], x0), min(box[1], top), max(box[2], x1), max(box[3], bottom)]
                break
        else:
            boxes.append([x0, top, x1, bottom])
    out: list[Figure] = []
    for x0, top, x1, bottom in boxes:
        width, height = x1 - x0, bottom - top
        if width < _MIN_SIDE or height < _MIN_SIDE or width * height > _MAX_PAGE_SHARE * page.width * page.height:
            continue
        cx, cy = (x0 + x1) / 2, (top + bottom) / 2
        if any(t.x0 <= cx <= t.x1 and t.top <= cy <= t.bottom for t in tables):
            continue
        out.append(Figure(x0, top, x1, bottom))
    return out


def link_captions(elements: list[Element]) -> None:
    """Point each figure at its caption: the caption right after it, else right before it."""
    for i, element in enumerate(elements):
        if element.type != ElementType.FIGURE:
            continue
        for j in (i + 1, i - 1):
            if 0 <= j < len(elements) and elements[j].type == ElementType.CAPTION:
                element.caption = j
                break
