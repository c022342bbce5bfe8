"""A cheap census of the fonts every page of a document uses, parsed or not.

Heading levels come from the document's styles: which sizes are headings, which is the
body text, which one is a title set once on the first page. Read off the selected pages
alone, they change with the selection (one page of a chapter makes its section heading
the largest text, so a title). The census reads the text-showing operators of every
page's content stream (font, size, transformation, the length of each string) without
pdfminer's layout work, a fraction of a millisecond a page, and gives `DocStats` the
sizes of the pages it does not parse.

Streams are decoded here under a budget (only Flate or no filter; anything else leaves the
page out of the census), so a hostile stream costs the budget at most.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pikepdf

from .layout import BOLD, MONO, font_style

__all__ = ["PageFonts", "census_pages", "font_census"]

# Bytes one content stream may decode to in the census (the largest page content stream
# of the corpora decodes to a few MiB); a page past it is left out.
CENSUS_STREAM_BYTES = 16 * 1024 * 1024
# Bytes all streams of the census may decode to together: past it, the pages not reached
# are left out (their statistics come from parsing, as before the census).
CENSUS_TOTAL_BYTES = 128 * 1024 * 1024
# Pages not selected that the census reads at most: a sample spread over the document
# says which sizes are its styles as well as every page would.
CENSUS_PAGES = 16
# Operators the census reads at most, over all its pages (about 10 microseconds each: a
# page printed by a browser, one operator a glyph, holds 8,000); past it, no more pages.
CENSUS_OPS = 60_000
# Form XObjects nested in a page's content read for text, at most this deep.
_FORM_DEPTH = 2
# A line this many characters long at least is prose (as `stats`: body text is told by
# its long regular lines).
_PROSE_CHARS = 30
_OPERATORS = "q Q cm BT Tf Tm Td TD T* TL Tj TJ ' \" Do"


@dataclass
class PageFonts:
    """The text of one page by font size (points, rounded to half a point as `layout` does)."""

    chars: Counter[float] = field(default_factory=Counter)  # characters shown, per size
    lines: Counter[float] = field(default_factory=Counter)  # lines of two characters or more
    prose: Counter[float] = field(default_factory=Counter)  # characters of long regular lines


Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _mul(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (
        a * a2 + b * c2,
        a * b2 + b * d2,
        c * a2 + d * c2,
        c * b2 + d * d2,
        e * a2 + f * c2 + e2,
        e * b2 + f * d2 + f2,
    )


class _Budget:
    def __init__(self) -> None:
        self.left = CENSUS_TOTAL_BYTES
        self.ops = CENSUS_OPS


def _decoded(stream: Any, budget: _Budget) -> bytes | None:
    """The stream's bytes, or None when its filter is not Flate or it decodes past the budget."""
    filters = stream.get("/Filter")
    if isinstance(filters, pikepdf.Array):
        filters = list(filters)
        if len(filters) > 1:
            return None
        filters = filters[0] if filters else None
    if stream.get("/DecodeParms") is not None and filters is not None:
        return None
    raw = stream.read_raw_bytes()
    if filters is None:
        data = raw
    elif filters == pikepdf.Name.FlateDecode:
        inflater = zlib.decompressobj()
        data = inflater.decompress(raw, CENSUS_STREAM_BYTES + 1)
    else:
        return None
    if len(data) > CENSUS_STREAM_BYTES or len(data) > budget.left:
        return None
    budget.left -= len(data)
    return data


def _content(obj: Any, budget: _Budget) -> bytes | None:
    contents = obj.get("/Contents")
    streams = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
    parts: list[bytes] = []
    for stream in streams:
        if not isinstance(stream, pikepdf.Stream):
            continue
        data = _decoded(stream, budget)
        if data is None:
            return None
        parts.append(data)
    return b"\n".join(parts)


class _Reader:
    """Text lines by size of one page: each distinct (size, baseline) a line."""

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        self.line_chars: dict[tuple[float, float], int] = {}
        self.line_bold: dict[tuple[float, float], bool] = {}

    def read(self, data: bytes, resources: Any, ctm: Matrix, depth: int) -> None:
        scratch = pikepdf.new()
        try:
            ops = pikepdf.parse_content_stream(pikepdf.Stream(scratch, data), _OPERATORS)
        finally:
            scratch.close()
        self.budget.ops -= len(ops)
        fonts = resources.get("/Font") if isinstance(resources, pikepdf.Dictionary) else None
        font_cache: dict[str, tuple[bool, bool]] = {}
        stack: list[Matrix] = []
        tlm = _IDENTITY
        size = 0.0
        wide = bold = False  # two bytes a character (Type0 fonts); a bold or monospaced face
        leading = 0.0
        key: tuple[float, float] | None = None  # (size, baseline) of the text shown next
        line_chars, line_bold = self.line_chars, self.line_bold
        for instruction in ops:
            operands, op = instruction.operands, instruction.operator.unparse()
            if op == b"Tj" or op == b"TJ" or op == b"'" or op == b'"':
                if op == b"'" or op == b'"':
                    tlm = _mul((1.0, 0.0, 0.0, 1.0, 0.0, -leading), tlm)
                    key = None
                if key is None:
                    key = self._key(size, _mul(tlm, ctm))
                    if key is None:
                        continue
                count = 0
                for operand in operands[-1:]:
                    if isinstance(operand, pikepdf.Array):
                        count += sum(len(bytes(item)) for item in operand if isinstance(item, pikepdf.String))
                    elif isinstance(operand, pikepdf.String):
                        count += len(bytes(operand))
                if wide:
                    count //= 2
                line_chars[key] = line_chars.get(key, 0) + count
                line_bold[key] = line_bold.get(key, True) and bold
            elif op == b"Td" or op == b"TD":
                tx, ty = float(operands[0]), float(operands[1])
                if op == b"TD":
                    leading = -ty
                if ty:
                    key = None
                a, b, c, d, e, f = tlm
                tlm = (a, b, c, d, tx * a + ty * c + e, tx * b + ty * d + f)
            elif op == b"T*":
                tlm = _mul((1.0, 0.0, 0.0, 1.0, 0.0, -leading), tlm)
                key = None
            elif op == b"Tm" or op == b"cm":
                if len(operands) == 6:
                    a, b, c, d, e, f = (float(x) for x in operands)
                    if op == b"cm":
                        ctm = _mul((a, b, c, d, e, f), ctm)
                    else:
                        tlm = (a, b, c, d, e, f)
                key = None
            elif op == b"Tf" and len(operands) == 2:
                size = float(operands[1])
                name = str(operands[0])
                if name not in font_cache:
                    font_cache[name] = _font_facts(fonts, name)
                wide, bold = font_cache[name]
                key = None
            elif op == b"TL" and operands:
                leading = float(operands[0])
            elif op == b"q":
                stack.append(ctm)
            elif op == b"Q":
                if stack:
                    ctm = stack.pop()
                key = None
            elif op == b"BT":
                tlm = _IDENTITY
                key = None
            elif op == b"Do" and depth < _FORM_DEPTH and operands:
                self._form(operands[0], resources, ctm, depth)

    @staticmethod
    def _key(size: float, m: Matrix) -> tuple[float, float] | None:
        if abs(m[1]) > 0.01 * abs(m[0]) + 1e-9:
            return None  # rotated text is left to parsing
        # pdfminer's glyph size: the font size scaled by the matrix's vertical extent.
        effective = round(size * (m[2] ** 2 + m[3] ** 2) ** 0.5 * 2) / 2
        return (effective, round(m[5])) if effective > 0 else None

    def _form(self, name: Any, resources: Any, ctm: Matrix, depth: int) -> None:
        xobjects = resources.get("/XObject") if isinstance(resources, pikepdf.Dictionary) else None
        form = xobjects.get(name) if isinstance(xobjects, pikepdf.Dictionary) else None
        if not isinstance(form, pikepdf.Stream) or form.get("/Subtype") != pikepdf.Name.Form:
            return
        data = _decoded(form, self.budget)
        if data is None:
            return
        matrix = form.get("/Matrix")
        if isinstance(matrix, pikepdf.Array) and len(matrix) == 6:
            ctm = _mul(tuple(float(x) for x in matrix), ctm)  # type: ignore[arg-type]
        self.read(data, form.get("/Resources", resources), ctm, depth + 1)

    def page(self) -> PageFonts:
        fonts = PageFonts()
        for (size, baseline), count in self.line_chars.items():
            fonts.chars[size] += count
            if count >= 2:
                fonts.lines[size] += 1
            if count >= _PROSE_CHARS and not self.line_bold[(size, baseline)]:
                fonts.prose[size] += count
        return fonts


def _font_facts(fonts: Any, name: str) -> tuple[bool, bool]:
    """Whether the font named `name` in the resources is a Type0 font, and is bold or
    monospaced (its long lines are no body text: headings, code)."""
    font = fonts.get(name) if isinstance(fonts, pikepdf.Dictionary) else None
    if not isinstance(font, pikepdf.Dictionary):
        return False, False
    base = str(font.get("/BaseFont", "")).lstrip("/")
    return font.get("/Subtype") == pikepdf.Name.Type0, bool(font_style(base) & (BOLD | MONO))


def _resources(obj: Any) -> Any:
    """The page's resources, inherited from the page tree where the page has none."""
    for _ in range(32):
        if not isinstance(obj, pikepdf.Dictionary):
            return None
        resources = obj.get("/Resources")
        if resources is not None:
            return resources
        obj = obj.get("/Parent")
    return None


def census_pages(selected: list[int], page_count: int) -> list[int]:
    """The pages not selected that the census reads: the first page (where a title would
    be) and others spread evenly over the document, at most `CENSUS_PAGES`."""
    chosen = set(selected)
    rest = [n for n in range(1, page_count + 1) if n not in chosen]
    if len(rest) <= CENSUS_PAGES:
        return rest
    step = len(rest) / CENSUS_PAGES
    picked = {rest[int(i * step)] for i in range(CENSUS_PAGES)}
    return sorted(picked | ({1} if 1 not in chosen else set()))


def font_census(
    pdf: pikepdf.Pdf, numbers: list[int], should_stop: Callable[[], bool] | None = None
) -> dict[int, PageFonts]:
    """Font sizes of the pages `numbers` (1-based) whose content could be read; pages with
    no text found, or whose content is out of budget or unreadable, are left out."""
    budget = _Budget()
    census: dict[int, PageFonts] = {}
    for number in numbers:
        if (should_stop is not None and should_stop()) or budget.ops <= 0:
            break
        fonts = _page_fonts(pdf, number, budget)
        if fonts is not None and fonts.chars:
            census[number] = fonts
    return census


def _page_fonts(pdf: pikepdf.Pdf, number: int, budget: _Budget) -> PageFonts | None:
    """The census of one page; None when its content is out of budget or unreadable (the
    census is a hint: such a page is left to parsing)."""
    try:
        page = pdf.pages[number - 1]
        data = _content(page.obj, budget)
        if data is None:
            return None
        reader = _Reader(budget)
        reader.read(data, _resources(page.obj), _IDENTITY, 0)
    except Exception:
        return None
    return reader.page()
