"""The cheap first look of the OCR plan: which pages clearly have a usable text layer, read
with pypdfium2 (its character count and its pictures' extent) without pdfminer's layout.

A page passes when it has enough ordinary characters (not whitespace, not private-use or
unmapped glyphs), most of its text drawn visibly, and no picture covering a large part of it:
`needs_ocr` would not read such a page by OCR. Every other page is left to `needs_ocr` on the
parsed page. About 0.8 CPU seconds for 1,000 pages of text (bench/results/ocr.md), against
30-35 for parsing them.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ScreenParams", "text_pages"]


@dataclass(frozen=True)
class ScreenParams:
    """What a page needs to pass as a text page without being parsed."""

    # Ordinary characters at least (twice `OcrParams.stamp_chars`: pdfium also counts text a
    # reader cannot see, which the engine leaves out).
    min_chars: int = 80
    # Share of unmapped or private-use glyphs at most (the engine reads a page by OCR at 0.5).
    max_garbage: float = 0.1
    # Fraction of the page's area that a picture (or a form holding one) covers at most: the
    # engine's full-page picture is 0.6 of it; boxes are measured differently here.
    max_cover: float = 0.3
    # Share of the text objects drawn invisibly (render mode 3 or 7: an earlier OCR's layer)
    # at most.
    max_invisible: float = 0.5
    # Nesting of forms looked into for pictures and text.
    max_depth: int = 4


SCREEN = ScreenParams()

# Unmapped or private-use glyphs; and what else is not an ordinary character beside whitespace.
_GARBAGE = re.compile(r"[\ue000-\uf8ff\ufffd\ufffe\uffff]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")
_SPACES = " \t\n\r\x0b\x0c\xa0\u2002\u2003\u2009\u3000"
_INVISIBLE_MODES = (3, 7)


def text_pages(
    path: str | os.PathLike[str],
    pages: Sequence[int],
    *,
    password: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    params: ScreenParams = SCREEN,
) -> set[int]:
    """The given pages (1-based) that clearly have a usable text layer. Empty when pypdfium2 is
    missing or cannot open the document; a page it cannot load is not among them. Stops when
    `should_stop` asks to (the pages not looked at are not among them)."""
    try:
        import pypdfium2 as pdfium
        import pypdfium2.raw as raw
    except ImportError:
        return set()
    try:
        document = pdfium.PdfDocument(str(path), password=password)
    except Exception:
        return set()
    passed: set[int] = set()
    try:
        count = len(document)
        for index, number in enumerate(pages):
            if should_stop is not None and index % 16 == 0 and should_stop():
                break
            if not 1 <= number <= count:
                continue
            try:
                if _is_text_page(document, number, raw, params):
                    passed.add(number)
            except Exception:  # the page is parsed instead  # noqa: S112
                continue
    finally:
        document.close()
    return passed


def _is_text_page(document: Any, number: int, raw: Any, params: ScreenParams) -> bool:
    page = document[number - 1]
    try:
        textpage = page.get_textpage()
        try:
            text = textpage.get_text_range() if textpage.count_chars() > 0 else ""
        finally:
            textpage.close()
        garbage = len(_GARBAGE.findall(text))
        # str.count per space character: a tenth of the time of a regular expression's pass.
        ordinary = len(text) - garbage - len(_CONTROL.findall(text)) - sum(text.count(c) for c in _SPACES)
        if ordinary < params.min_chars or garbage > params.max_garbage * (ordinary + garbage):
            return False
        width, height = page.get_size()
        area = width * height
        if area <= 0:
            return False
        found = _Objects(raw, params.max_depth)
        found.walk(page.raw, raw.FPDFPage_CountObjects, raw.FPDFPage_GetObject, 0)
        if found.texts and found.invisible > params.max_invisible * found.texts:
            return False
        return found.cover < params.max_cover * area
    finally:
        page.close()


class _Objects:
    """What a page draws: its text objects (those drawn invisibly), and the largest area a
    picture covers (a form holding pictures counts as one of its own size)."""

    def __init__(self, raw: Any, max_depth: int) -> None:
        self.raw = raw
        self.max_depth = max_depth
        self.texts = 0
        self.invisible = 0
        self.cover = 0.0
        self.images = 0

    def walk(self, parent: Any, count: Callable[[Any], int], get: Callable[[Any, int], Any], depth: int) -> None:
        raw = self.raw
        for i in range(count(parent)):
            obj = get(parent, i)
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_TEXT:
                self.texts += 1
                if raw.FPDFTextObj_GetTextRenderMode(obj) in _INVISIBLE_MODES:
                    self.invisible += 1
            elif kind == raw.FPDF_PAGEOBJ_IMAGE:
                self.images += 1
                self.cover = max(self.cover, _area(raw, obj))
            elif kind == raw.FPDF_PAGEOBJ_FORM:
                before = self.images
                if depth < self.max_depth:
                    self.walk(obj, raw.FPDFFormObj_CountObjects, raw.FPDFFormObj_GetObject, depth + 1)
                if self.images > before or depth >= self.max_depth:
                    # Where a form's pictures lie inside it is in its own space: take its box.
                    self.cover = max(self.cover, _area(raw, obj))


def _area(raw: Any, obj: Any) -> float:
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
        return float("inf")  # unknown: as if it covered the page
    return max(0.0, right.value - left.value) * max(0.0, top.value - bottom.value)
