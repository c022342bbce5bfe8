"""The element layer: what the engine found on a page, each piece with its box.

A page's Markdown is written from its elements and nothing else: the Markdown of every
element shown in it (`in_markdown`), joined as `join_elements` joins them. Running headers
and footers, page numbers and text a reader cannot see are elements too, left out of the
Markdown, so that nothing the engine saw is lost to the client.

Boxes are `(x0, y0, x1, y1)` in PDF points from the top-left corner of the page as
displayed (after its rotation).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

Box = tuple[float, float, float, float]
# Character offsets [start, end) into a Markdown text (Unicode code points, as Python and
# most languages other than JavaScript index strings).
Span = tuple[int, int]


class ElementType(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    TABLE = "table"
    FIGURE = "figure"
    CAPTION = "caption"
    CODE = "code"
    FOOTNOTE = "footnote"
    PAGE_HEADER = "page_header"
    PAGE_FOOTER = "page_footer"
    HIDDEN_TEXT = "hidden_text"


@dataclass
class Cell:
    text: str
    row: int
    col: int
    rowspan: int
    colspan: int
    bbox: Box


@dataclass
class Element:
    type: ElementType
    bbox: Box
    text: str
    markdown: str
    in_markdown: bool = True
    level: int | None = None  # heading: its Markdown level
    depth: int | None = None  # list item: 0 for the outermost list
    marker: str | None = None  # list item: its Markdown marker ("-", "3.")
    rows: list[list[Cell]] | None = None  # table: the cells that start in each row
    header_rows: int | None = None  # table
    caption: int | None = None  # figure: index of its caption among the page's elements
    reason: str | None = None  # hidden text: why a reader cannot see it
    source: str | None = None  # "ocr" when read from the page's picture (else the text layer)
    confidence: float | None = None  # read by OCR: the mean confidence of its words (0-1)
    # Figure with the option figures "crop": its picture, {file_id, dpi, width, height}.
    image: dict[str, Any] | None = None
    # Shown elements: where the element's Markdown stands in its page's Markdown, as
    # [start, end) character offsets (`page_spans`).
    md_span: Span | None = None

    def as_dict(self, doc_span: Span | None = None) -> dict[str, Any]:
        """The element as the JSON result writes it: boxes to a tenth of a point, and only
        the fields its type has. The element's Markdown is not copied: `md_span` points
        into the page's Markdown and `doc_span` (where given) into the document's."""
        out: dict[str, Any] = {
            "type": str(self.type),
            "bbox": rounded(self.bbox),
            "text": self.text,
            "in_markdown": self.in_markdown,
        }
        if self.in_markdown and self.md_span is not None:
            out["md_span"] = list(self.md_span)
            if doc_span is not None:
                out["doc_span"] = list(doc_span)
        for name in ("level", "depth", "marker", "header_rows", "caption", "reason", "source", "confidence", "image"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.rows is not None:
            out["rows"] = [
                [
                    {
                        "text": c.text,
                        "row": c.row,
                        "col": c.col,
                        "rowspan": c.rowspan,
                        "colspan": c.colspan,
                        "bbox": rounded(c.bbox),
                    }
                    for c in row
                ]
                for row in self.rows
            ]
        return out


def elements_size(elements: Sequence[Element]) -> int:
    """Bytes the elements take in the JSON result."""
    if not elements:
        return 0
    return len(json.dumps([e.as_dict() for e in elements], ensure_ascii=False).encode("utf-8"))


def rounded(box: Box) -> list[float]:
    return [round(v, 1) for v in box]


def union(boxes: Sequence[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def clip_to(element: Element, width: float, height: float) -> None:
    """The element's box (and its cells') cut to the page, 0..width by 0..height."""

    def clip(box: Box) -> Box:
        x0, y0, x1, y1 = (max(0.0, min(v, limit)) for v, limit in zip(box, (width, height, width, height), strict=True))
        return (x0, y0, x1, y1)

    element.bbox = clip(element.bbox)
    for row in element.rows or []:
        for cell in row:
            cell.bbox = clip(cell.bbox)


def join_elements(elements: Sequence[Element]) -> str:
    """A page's Markdown: the Markdown of its shown elements, a blank line between them and
    a line break only between the items of one list."""
    return "".join(_joined(elements)[0])


def page_spans(elements: Sequence[Element]) -> list[Span | None]:
    """Where each element's Markdown stands in `join_elements(elements)`: a span for each
    shown element (empty where its Markdown is empty), None for the others. The spans are
    in reading order, never overlap, and with the joins between them cover the page."""
    return _joined(elements)[1]


def _joined(elements: Sequence[Element]) -> tuple[list[str], list[Span | None]]:
    out: list[str] = []
    spans: list[Span | None] = []
    at = 0
    previous: Element | None = None
    for element in elements:
        if not element.in_markdown:
            spans.append(None)
            continue
        if not element.markdown:
            spans.append((at, at))
            continue
        if out:
            both_items = previous is not None and previous.type == element.type == ElementType.LIST_ITEM
            out.append("\n" if both_items else "\n\n")
            at += len(out[-1])
        out.append(element.markdown)
        spans.append((at, at + len(element.markdown)))
        at += len(element.markdown)
        previous = element
    return out, spans


# pdfminer writes a glyph that the PDF's fonts give no Unicode value for as "(cid:N)";
# glyphs of icon and symbol fonts come as private-use code points. Both are noise to a
# reader (a bullet among them has become a list marker already).
_UNMAPPED_GLYPHS = re.compile(r"(?:\(cid:\d+\))+")
_PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]+")
# Either kind of glyph garbage, one glyph at a time.
GLYPH_GARBAGE = re.compile(r"\(cid:\d+\)|[\ue000-\uf8ff]")
_SPACES = re.compile(r"(?<=\S) {2,}")
_BARE_MARKER = re.compile(r"^\s*(?:[-*+>]|\d{1,9}[.)]|#{1,6})?\s*$")


def drop_glyph_garbage(elements: list[Element]) -> tuple[list[Element], int]:
    """`elements` without unmapped or private-use glyphs (an element left with nothing is
    dropped), and how many unmapped glyphs went."""
    count = 0
    out: list[Element] = []
    for element in elements:
        if "(cid:" not in element.markdown and not _PRIVATE_USE.search(element.markdown):
            out.append(element)
            continue
        count += element.markdown.count("(cid:")
        element.markdown = _clean_markdown(element.markdown)
        element.text = _clean_line(element.text)
        if element.rows is not None:
            for row in element.rows:
                for cell in row:
                    cell.text = _clean_line(cell.text)
        if element.markdown:
            out.append(element)
    return out, count


def _clean_line(text: str) -> str:
    cleaned = _PRIVATE_USE.sub("", _UNMAPPED_GLYPHS.sub("", text))
    return _SPACES.sub(" ", cleaned).strip() if cleaned != text else text


def _clean_markdown(markdown: str) -> str:
    out: list[str] = []
    for line in markdown.split("\n"):
        cleaned = _PRIVATE_USE.sub("", _UNMAPPED_GLYPHS.sub("", line))
        if cleaned != line:
            cleaned = _SPACES.sub(" ", cleaned).rstrip()
            if _BARE_MARKER.match(cleaned):
                # Nothing left but a marker: the line was all unmapped glyphs.
                continue
        out.append(cleaned)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
