"""Pages rendered to pictures with pypdfium2: for OCR (a whole page, greyscale) and for the
pictures of figures (a region of a page, in colour). One renderer per document, opened on
first use; `close()` when done.

Regions are given as boxes in points from the top-left corner of the page as displayed (after
its rotation), as every box of the engine is.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .elements import Box

__all__ = ["PageRenderer"]


@dataclass
class PageRenderer:
    """Renders pages of the document at `path` (1-based page numbers)."""

    path: str | os.PathLike[str]
    password: str | None
    _doc: Any = None

    def _page(self, number: int) -> Any:
        import pypdfium2 as pdfium

        if self._doc is None:
            self._doc = pdfium.PdfDocument(str(self.path), password=self.password)
        return self._doc[number - 1]

    def render(
        self, number: int, scale: float, *, max_pixels: int, grayscale: bool = False, box: Box | None = None
    ) -> tuple[Any, float]:
        """Page `number` (or the region `box` of it) as a PIL image ("L" greyscale, else "RGB")
        at `scale` pixels per point, lowered so that the picture has at most `max_pixels`
        pixels; and the scale used."""
        page = self._page(number)
        try:
            width, height = page.get_size()
            x0, top, x1, bottom = box if box is not None else (0.0, 0.0, width, height)
            x0, top = max(0.0, x0), max(0.0, top)
            x1, bottom = min(width, x1), min(height, bottom)
            pixels = (x1 - x0) * (bottom - top) * scale * scale
            if pixels > max_pixels:
                scale *= math.sqrt(max_pixels / pixels)
            # pdfium cuts (left, bottom, right, top) off the page as displayed, in points.
            crop = (x0, height - bottom, width - x1, top)
            bitmap = page.render(scale=scale, grayscale=grayscale, crop=crop)
            image = bitmap.to_pil().convert("L" if grayscale else "RGB")
            return image, scale
        finally:
            page.close()

    def close(self) -> None:
        if self._doc is not None:
            self._doc.close()
            self._doc = None
