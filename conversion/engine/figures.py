"""Figures: the pictures of a page, where they stand in its reading order, and their captions."""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass

from .elements import Box, Element, ElementType, join_elements, page_spans
from .layout import PageModel
from .render import PageRenderer
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


# --- the pictures of figures (option `figures: "crop"`) ------------------------------------

# Pixels per inch of a figure's picture: twice the 72 points per inch of the page, as a
# high-density screen shows it (a figure 3 inches wide is 432 pixels wide).
FIGURE_DPI = 144
# Pixels of one figure's picture at most (about 12 megabytes as RGB while it is encoded): a
# figure on a poster-sized page is cropped at a lower resolution, which its `dpi` states.
FIGURE_MAX_PIXELS = 4_000_000


@dataclass(frozen=True)
class FigureImage:
    """A figure's picture: PNG bytes, the resolution it was cropped at (pixels per inch) and
    its size in pixels."""

    png: bytes
    dpi: int
    width: int
    height: int


def figure_image(renderer: PageRenderer, page: int, box: Box, dpi: int = FIGURE_DPI) -> FigureImage:
    """The region `box` of page `page` (1-based) rendered at `dpi` as an RGB PNG: its size is
    the box's times dpi / 72, rounded by the renderer. Where the picture would pass
    FIGURE_MAX_PIXELS, at the whole dpi that keeps it within them."""
    square_inches = (box[2] - box[0]) * (box[3] - box[1]) / (72.0 * 72.0)
    if square_inches * dpi * dpi > FIGURE_MAX_PIXELS:
        dpi = max(1, math.floor(math.sqrt(FIGURE_MAX_PIXELS / square_inches)))
    image, _ = renderer.render(page, dpi / 72.0, max_pixels=FIGURE_MAX_PIXELS, box=box)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return FigureImage(out.getvalue(), dpi, image.width, image.height)


_ALT_SPECIALS = re.compile(r"([\\\[\]])")


def figure_markdown(elements: list[Element], index: int, target: str) -> str:
    """The Markdown image of figure `elements[index]` pointing at `target`: its caption's
    text as the alternative text (brackets and backslashes escaped), empty without one."""
    caption = elements[index].caption
    alt = " ".join(elements[caption].text.split()) if caption is not None else ""
    escaped = _ALT_SPECIALS.sub(r"\\\1", alt)
    return f"![{escaped}]({target})"


def relink(elements: list[Element]) -> str:
    """After elements' Markdown changed: their spans set again, and the page's Markdown."""
    for element, span in zip(elements, page_spans(elements), strict=True):
        element.md_span = span
    return join_elements(elements)
