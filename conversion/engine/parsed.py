"""Parsed pages as bytes: the layout `parse_pages` gives, stored between the tasks that parse
the parts of a long document and the one that renders it (`convert(..., parsed=...)`).

Compressed JSON, not pickle: what is read back is plain data, whoever wrote the bytes, and
the floats come back exactly (JSON writes Python's shortest round-trip form), so a page
rendered from its stored layout is the page rendered from the PDF. The bytes name the
engine version that made them; another version's are refused (`ParsedStale`), since a
layout made by other code may not render as this code would make it.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import fields
from typing import Any

from .convert import ENGINES
from .layout import Line, OcrFacts, PageModel

__all__ = ["ParsedStale", "parsed_decode", "parsed_encode"]

_FORMAT = 3  # 2: lines carry their OCR confidence, pages how OCR read them; 3: their colour
_LINE_FIELDS = [f.name for f in fields(Line)]
# Compression level: 6 is zlib's default balance; parsed layout compresses about 2:1 at it.
_ZLIB_LEVEL = 6


class ParsedStale(ValueError):
    """The bytes were written by another engine version or format, or are damaged."""


def _line_out(line: Line) -> list[Any]:
    return [getattr(line, name) for name in _LINE_FIELDS]


def _line_in(values: list[Any]) -> Line:
    line = Line(**dict(zip(_LINE_FIELDS, values, strict=True)))
    line.spans = [(str(text), int(style)) for text, style in line.spans]
    return line


def _boxes(values: list[list[float]]) -> list[tuple[float, float, float, float]]:
    return [(a, b, c, d) for a, b, c, d in values]


def _rules(values: list[list[float]]) -> list[tuple[float, float, float]]:
    return [(a, b, c) for a, b, c in values]


def _page_out(model: PageModel) -> dict[str, Any]:
    return {
        "number": model.number,
        "width": model.width,
        "height": model.height,
        "lines": [_line_out(line) for line in model.lines],
        "hrules": model.hrules,
        "vrules": model.vrules,
        "chars": model.chars,
        "hidden": [_line_out(line) for line in model.hidden],
        "images": model.images,
        "fills": model.fills,
        "rtl": model.rtl,
        "marks": [[box, glyph] for box, glyph in model.marks],
        "ocr": None
        if model.ocr is None
        else [
            model.ocr.confidence,
            model.ocr.rotation,
            model.ocr.skew,
            list(model.ocr.added_languages),
            model.ocr.script,
        ],
    }


def _page_in(data: dict[str, Any]) -> PageModel:
    return PageModel(
        number=int(data["number"]),
        width=float(data["width"]),
        height=float(data["height"]),
        lines=[_line_in(values) for values in data["lines"]],
        hrules=_rules(data["hrules"]),
        vrules=_rules(data["vrules"]),
        chars=int(data["chars"]),
        hidden=[_line_in(values) for values in data["hidden"]],
        images=_boxes(data["images"]),
        fills=_boxes(data["fills"]),
        rtl=bool(data["rtl"]),
        marks=[((box[0], box[1], box[2], box[3]), str(glyph)) for box, glyph in data["marks"]],
        ocr=_ocr_in(data["ocr"]),
    )


def _ocr_in(values: list[Any] | None) -> OcrFacts | None:
    if values is None:
        return None
    return OcrFacts(
        float(values[0]), int(values[1]), float(values[2]), tuple(str(v) for v in values[3]), str(values[4])
    )


# What wrote the pages: every engine's version (a part of either engine is parsed again when
# either changes, rather than mixing pages of two versions in one job).
_WRITTEN_BY = "+".join(f"{engine_id}/{version}" for engine_id, version in ENGINES.items())


def parsed_encode(models: list[PageModel | int]) -> bytes:
    """The pages' layout as bytes (a page that failed to parse as its number)."""
    body = {
        "format": _FORMAT,
        "engine": _WRITTEN_BY,
        "pages": [m if isinstance(m, int) else _page_out(m) for m in models],
    }
    return zlib.compress(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(), _ZLIB_LEVEL)


def parsed_decode(data: bytes) -> list[PageModel | int]:
    """The pages `parsed_encode` wrote.

    Raises:
        ParsedStale: another engine version or format wrote them, or they are damaged.
    """
    try:
        body = json.loads(zlib.decompress(data))
    except (zlib.error, ValueError) as exc:
        raise ParsedStale(f"unreadable parsed pages: {exc}") from None
    if not isinstance(body, dict) or body.get("format") != _FORMAT or body.get("engine") != _WRITTEN_BY:
        raise ParsedStale("parsed pages of another engine version or format")
    try:
        return [p if isinstance(p, int) else _page_in(p) for p in body["pages"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ParsedStale(f"damaged parsed pages: {exc}") from None
