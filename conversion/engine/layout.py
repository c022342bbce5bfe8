"""pdfminer.six layout analysis of one page, under a work budget, into a small page model.

The page model keeps only what the structure pass needs: text lines with their boxes,
font size and style runs, and the straight rulings that may form table grids. Coordinates
are turned top-down (y grows downwards) so that reading order sorts naturally.
"""

from __future__ import annotations

import copy
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from pdfminer.converter import PDFPageAggregator
from pdfminer.layout import (
    LAParams,
    LTChar,
    LTCurve,
    LTFigure,
    LTImage,
    LTLine,
    LTPage,
    LTRect,
    LTTextBox,
    LTTextLine,
    LTTextLineVertical,
)
from pdfminer.pdffont import PDFFont
from pdfminer.pdfinterp import PDFGraphicState, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.pdftypes import PDFStream, resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import Matrix, mult_matrix

from .bidi import bidi_class, reorder, strong_direction
from .limits import LIMITS, PageAborted, decode_budget
from .occlusion import CoveringInterpreter, Covers, PaintState
from .tracking import untrack

__all__ = [
    "BOLD",
    "ITALIC",
    "MONO",
    "Line",
    "OcrFacts",
    "PageAborted",
    "PageModel",
    "PageParser",
    "PageTooComplex",
    "compat_text",
    "is_rtl",
    "visual_order",
    "visual_to_logical",
]

BOLD = 1
ITALIC = 2
MONO = 4

# Work budget of one page (document_too_complex). The densest corpus page has ~65,000
# layout objects and lays out in ~7 s; these leave room for that and stop pathological
# pages well inside the service's 120 s wall-clock limit.
MAX_LAYOUT_OBJECTS_PER_PAGE = 400_000
MAX_SECONDS_PER_PAGE = 45.0
# How many layout objects between two polls of should_stop and the page clock.
_POLL_EVERY = 512


class PageTooComplex(Exception):
    """A page exhausted its work budget (objects or seconds)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class Line:
    """A text line, top-down coordinates (top < bottom)."""

    x0: float
    top: float
    x1: float
    bottom: float
    text: str
    spans: list[tuple[str, int]]
    size: float
    style: int  # style common to every character (BOLD/ITALIC/MONO bits)
    # Glyph positions for cell splitting: x0 and x1 of each glyph in turn, and its text.
    # Kept flat (floats and strings are not tracked by the garbage collector; a tuple
    # per glyph made collections a tenth of the engine's time on long documents).
    glyph_x: list[float]
    glyph_text: list[str]
    vertical: bool = False  # written top to bottom (CJK vertical text, rotated pages)
    max_gap: float = 0.0  # widest space between two visible glyphs (table cells set close)
    rtl: bool = False  # read as a paragraph written right to left (bidi.py)
    # Which glyphs are inline code (a monospaced run in a line that is not) in a line of
    # right-to-left script; None for other lines.
    code_glyphs: list[bool] | None = None
    hidden: str = ""  # why a reader of the page cannot see it (a HIDDEN_* reason), else ""
    heading: int = 0  # level of the heading a tagged PDF's structure puts the line in (see `tags`)
    # A tagged PDF's structure tree holds all of the line's text: content, not furniture.
    tagged: bool = False
    confidence: float | None = None  # read by OCR: the mean confidence of its words (0-1)
    # The fill colour of its first visible glyph as 0xRRGGBB (gray and RGB fills); -1 where
    # not known (other colour spaces, OCR).
    color: int = -1

    @property
    def chars(self) -> list[tuple[float, float, str]]:
        """(x0, x1, text) of each glyph."""
        xs = self.glyph_x
        return list(zip(xs[0::2], xs[1::2], self.glyph_text, strict=True))

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def cy(self) -> float:
        return (self.top + self.bottom) / 2


Box = tuple[float, float, float, float]  # x0, top, x1, bottom: top-down page coordinates


@dataclass(frozen=True)
class OcrFacts:
    """How a page was read by OCR (`ocr`): the mean confidence of its words (0-1), the turn
    (degrees, counter-clockwise) that made it upright and the skew (degrees) taken out."""

    confidence: float
    rotation: int = 0
    skew: float = 0.0
    # ISO codes of languages the page was read with besides the requested ones: a model of a
    # script none of those reads (ocr.script_model), found on this page or one before it.
    added_languages: tuple[str, ...] = ()
    # The script this page was found written in ("Cyrillic"), where it was (its model added).
    script: str = ""


# Why text is hidden from a reader of the page.
HIDDEN_INVISIBLE = "invisible"  # text render mode 3 or 7 (neither filled nor stroked)
HIDDEN_BACKGROUND = "background_color"  # set in white where nothing dark lies beneath
HIDDEN_OFF_PAGE = "off_page"  # outside the visible area of the page
HIDDEN_TINY = "tiny"  # smaller than one point
HIDDEN_COVERED = "covered"  # under an opaque fill or picture drawn after it (occlusion.py)
_TINY_SIZE = 1.0


@dataclass
class PageModel:
    number: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    hrules: list[tuple[float, float, float]] = field(default_factory=list)  # (y, x0, x1)
    vrules: list[tuple[float, float, float]] = field(default_factory=list)  # (x, top, bottom)
    chars: int = 0  # non-whitespace characters
    # Text a reader cannot see (white on white, invisible, off the page, under a point):
    # kept apart from `lines`, so that nothing downstream reads it as content.
    hidden: list[Line] = field(default_factory=list)
    images: list[Box] = field(default_factory=list)  # (x0, top, x1, bottom) of each image
    # Shapes filled with a colour other than white (a dark band under white text).
    fills: list[Box] = field(default_factory=list)
    rtl: bool = False  # most of its text is written right to left
    # Small shapes and pictures that may be drawn list bullets or checkboxes: each box
    # with the glyph that stands for it (see `mark_glyph`); lists.py gives them to lines.
    marks: list[tuple[Box, str]] = field(default_factory=list)
    ocr: OcrFacts | None = None  # set when the page's lines were read by OCR

    @property
    def has_text_layer(self) -> bool:
        return self.chars > 0


_style_cache: dict[str, int] = {}

# PostScript names only hint at style. TeX fonts encode it in the family name: CM/EC/SF
# "bx"/"b" bold, "ti"/"sl" italic or slanted, "tt" typewriter.
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|-medi|,bd|-bd\b|^(cm|ec|sf|lm)b[x0-9]")
_ITALIC_NAME = re.compile(r"italic|ital|oblique|slant|-it\b|,it\b|-it[a-z]*$|^(cm|ec|sf)(ti|sl|bxti|bxsl)")
_MONO_NAME = re.compile(r"courier|mono|consol|typewriter|menlo|inconsolata|^(cm|ec|sf|lm)tt|^lmmono")


def font_style(fontname: str) -> int:
    """Style bits guessed from a font's PostScript name (subset prefix ignored)."""
    style = _style_cache.get(fontname)
    if style is not None:
        return style
    name = fontname.split("+", 1)[-1].lower()
    style = 0
    if _BOLD_NAME.search(name):
        style |= BOLD
    if _ITALIC_NAME.search(name):
        style |= ITALIC
    if _MONO_NAME.search(name):
        style |= MONO
    _style_cache[fontname] = style
    return style


class _LinesPage(LTPage):
    """A page whose layout analysis stops at text lines.

    The structure pass builds its own blocks and reading order from lines, so pdfminer's
    grouping of lines into text boxes (a neighbour search over the whole page) and the
    per-glyph pass that finishes each box are skipped. Figures keep the full analysis.
    """

    def analyze(self, laparams: LAParams) -> None:
        chars: list[Any] = []
        others: list[Any] = []
        for obj in self._objs:
            (chars if type(obj) is LTChar else others).append(obj)
        for obj in others:
            obj.analyze(laparams)
        if not chars:
            return
        # Lines without visible text are dropped later, where their glyphs are read anyway.
        self._objs = [*self.group_objects(laparams, chars), *others]


# Glyph names that carry a TrueType glyph index ("g68"): fonts converted from TrueType
# keep the standard Macintosh glyph order, where indexes 3-97 are space to "~" (U+0020 to
# U+007E, index = code point - 29). Only trusted in a font whose space is "g3".
_GLYPH_INDEX_NAME = re.compile(r"^(?:g|glyph|index)(\d{1,3})$")


def _recoverable(spec: Any) -> dict[int, str]:
    """Character code -> text for glyphs of a simple font that pdfminer cannot map to
    Unicode but whose /Differences name a TrueType glyph index."""
    encoding = resolve1(spec.get("Encoding")) if isinstance(spec, dict) else None
    if not isinstance(encoding, dict):
        return {}
    indexes: dict[int, int] = {}
    code = 0
    for item in list(resolve1(encoding.get("Differences")) or []):
        item = resolve1(item)
        if isinstance(item, int):
            code = item
        elif isinstance(item, PSLiteral):
            m = _GLYPH_INDEX_NAME.match(str(item.name))
            if m is not None:
                indexes[code] = int(m.group(1))
            code += 1
    if 3 not in indexes.values():
        return {}
    return {code: chr(index + 29) for code, index in indexes.items() if 3 <= index <= 97}


def _decode_cmaps(spec: Any) -> None:
    """Decode a font's CMaps (its /ToUnicode, a Type0 font's embedded /Encoding) under their
    own budget before pdfminer parses them; pdfminer then reads the decoded data."""
    if not isinstance(spec, dict):
        return
    for key in ("ToUnicode", "Encoding"):
        stream = resolve1(spec.get(key))
        if isinstance(stream, PDFStream) and stream.data is None:
            with decode_budget(LIMITS.max_cmap_bytes):
                stream.get_data()


class _FontManager(PDFResourceManager):
    """Fonts whose glyph names give their characters where pdfminer finds none.

    pdfminer skips a /Differences name it does not know and keeps the base encoding's
    character for that code, which is wrong for names that are glyph indexes.
    """

    def get_font(self, objid: object, spec: Any) -> PDFFont:
        _decode_cmaps(spec)
        font = super().get_font(objid, spec)
        if getattr(font, "svcx_checked", False):
            # Every Tf operator asks again; the font object is cached by pdfminer.
            return font
        font.svcx_checked = True  # type: ignore[attr-defined]  # our mark on pdfminer's object
        cid2unicode = getattr(font, "cid2unicode", None)
        if getattr(font, "unicode_map", None) is None and isinstance(cid2unicode, dict):
            recovered = _recoverable(spec)
            if recovered:
                cid2unicode.update(recovered)
        return font


class _BudgetedAggregator(PDFPageAggregator):
    """Collects a page's layout while counting objects and polling should_stop."""

    def __init__(
        self,
        rsrcmgr: PDFResourceManager,
        laparams: LAParams,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        super().__init__(rsrcmgr, laparams=laparams)
        self._should_stop = should_stop
        self.objects = 0
        self._next_poll = _POLL_EVERY
        self.started = 0.0
        self._turned_text = False
        # id() of each glyph object drawn invisible, in white or under a later shape, with
        # the reason; empty on most pages, so the glyph loop looks nothing up there.
        self.hidden: dict[int, str] = {}
        self.covers = Covers((0.0, 0.0, 0.0, 0.0))
        self._optional: list[bool] = []  # marked content open, and whether it is optional content
        self._painting = False
        # MCID -> heading level (0: none) of the page's tagged text (`tags`); for each marked
        # content open, the level of the heading it lies in (0: none; -1: outside the
        # structure tree); the boxes (level, x0, y0, x1, y1) of the text drawn in headings,
        # and those of the text drawn outside the tree, on a tagged page.
        self.tagged_mcids: dict[int, int] = {}
        self._marked: list[int] = []
        self.heading_boxes: list[tuple[int, float, float, float, float]] = []
        self.untagged_boxes: list[tuple[float, float, float, float]] = []

    def begin_page(self, page: PDFPage, ctm: Any) -> None:
        self.hidden = {}
        self._optional = []
        self._marked = []
        self.heading_boxes = []
        self.untagged_boxes = []
        self.objects = 0
        self._next_poll = _POLL_EVERY
        self.started = time.monotonic()
        self._turned_text = False
        super().begin_page(page, ctm)
        assert isinstance(self.cur_item, LTPage)
        self.cur_item = _LinesPage(self.cur_item.pageid, self.cur_item.bbox)
        self.covers = Covers(self.cur_item.bbox)

    def end_page(self, page: PDFPage) -> None:
        for obj in self.covers.covered():
            self.hidden[id(obj)] = HIDDEN_COVERED
        # Looking for vertical lines costs a test per pair of glyphs; only pages with
        # vertical fonts or rotated text can have them.
        assert self.laparams is not None
        self.laparams.detect_vertical = self._turned_text
        super().end_page(page)

    def _count(self, added: int) -> None:
        self.objects += added
        if self.objects < self._next_poll:
            return
        self._next_poll = self.objects + _POLL_EVERY
        if self.objects > MAX_LAYOUT_OBJECTS_PER_PAGE:
            raise PageTooComplex(f"more than {MAX_LAYOUT_OBJECTS_PER_PAGE:,} layout objects")
        if time.monotonic() - self.started > MAX_SECONDS_PER_PAGE:
            raise PageTooComplex(f"more than {MAX_SECONDS_PER_PAGE:.0f} seconds")
        if self._should_stop is not None and self._should_stop():
            raise PageAborted()

    def render_string(self, *args: Any, **kwargs: Any) -> None:
        # Counted per text-showing operator rather than per glyph: the glyph path is the
        # hottest code in pdfminer and a wrapper there costs a few percent.
        item = self.cur_item
        before = len(item)
        if not self._turned_text:
            textstate = args[0] if args else kwargs["textstate"]
            a, b, c, d, _, _ = mult_matrix(textstate.matrix, self.ctm)
            font = textstate.font
            # (A slant, as a synthetic oblique, leaves text horizontal: `MAX_SLANT`.)
            if abs(b) > 1e-3 * abs(a) or abs(c) > MAX_SLANT * abs(d) or (font is not None and font.is_vertical()):
                self._turned_text = True
        super().render_string(*args, **kwargs)
        added = len(item) - before
        self._count(max(1, added))
        if added > 0:
            textstate, ncs, graphicstate = _string_state(args, kwargs)
            _on_one_descent(item._objs[before:], textstate.font)
            self.covers.add_run(item, before, added, textstate)
            reason = hidden_by_state(textstate.render, ncs, graphicstate.ncolor)
            rgb = _run_rgb(graphicstate.ncolor, ncs)
            for obj in item._objs[before:]:
                obj.color = rgb  # type: ignore[attr-defined]  # (read back by `_glyph_line`)
            if reason:
                for obj in item._objs[before:]:
                    self.hidden[id(obj)] = reason
            level = self._marked[-1] if self._marked else -1
            if level > 0 or (level < 0 and self.tagged_mcids):
                objs = item._objs[before:]
                box = (
                    min(o.x0 for o in objs),
                    min(o.y0 for o in objs),
                    max(o.x1 for o in objs),
                    max(o.y1 for o in objs),
                )
                if level > 0:
                    self.heading_boxes.append((level, *box))
                else:
                    self.untagged_boxes.append(box)

    def paint_path(self, gstate: PDFGraphicState, stroke: bool, fill: bool, evenodd: bool, path: Sequence[Any]) -> None:
        self._count(1)
        if self._painting:
            # pdfminer paints a path of several subpaths one subpath at a time, through this
            # method: the covers were taken from the whole path (a subpath may be a hole).
            super().paint_path(gstate, stroke, fill, evenodd, path)
            return
        if fill and isinstance(gstate, PaintState) and not any(self._optional) and not _patterned(gstate):
            self.covers.add_fill(path, self.ctm, gstate)
        self._painting = True
        try:
            super().paint_path(gstate, stroke, fill, evenodd, path)
        finally:
            self._painting = False

    def paint_image(self, stream: Any, state: PaintState, ctm: Matrix) -> None:
        """An image is painted (told by `CoveringInterpreter`, before pdfminer lays it out)."""
        # Optional content may be switched off: what it paints covers nothing.
        self.covers.add_image(stream, ctm, None if any(self._optional) else state)

    def begin_tag(self, tag: PSLiteral, props: Any = None) -> None:
        self._optional.append(getattr(tag, "name", None) == "OC")
        level = self._marked[-1] if self._marked else -1
        if self.tagged_mcids and isinstance(props, dict):
            mcid = props.get("MCID")
            if isinstance(mcid, int):
                level = self.tagged_mcids.get(mcid, -1)
        self._marked.append(level)

    def end_tag(self) -> None:
        if self._optional:
            self._optional.pop()
        if self._marked:
            self._marked.pop()

    def begin_figure(self, *args: Any, **kwargs: Any) -> None:
        self._count(1)
        super().begin_figure(*args, **kwargs)


def _patterned(state: PDFGraphicState) -> bool:
    """Whether fills paint a pattern (which may leave parts of the shape unpainted)."""
    return getattr(state.ncs, "name", "") == "Pattern"


# The shear (horizontal shift per unit of height, the matrix's c over d) up to which text is
# slanted rather than turned: synthetic obliques lean 0.2 to 0.33 (11 to 18 degrees).
MAX_SLANT = 0.5


# pdfminer sets a glyph's box from its font's descent below the baseline to a font size
# above that. Fonts set their descent by their own scripts' needs: Latin fonts about a fifth
# of an em, Arabic and Indic ones far more (Noto Sans Arabic 0.74 em, for its marks). On one
# baseline, a word in such a font and a Latin word or a bracket drawn in a fallback font
# then overlap by less than half their height: pdfminer's grouping (`line_overlap`) parts
# them into two lines, and the line's box, taken so far below its text, misses the bullet
# drawn level with it. Every upright glyph's box stands this far below its baseline instead
# (ems of its size): where the glyphs stand, whatever their fonts' metrics.
GLYPH_DESCENT_EM = -0.25


def _on_one_descent(glyphs: list[Any], font: Any) -> None:
    """The boxes of `glyphs` (of one string, in `font`) moved to stand `GLYPH_DESCENT_EM`
    below their baseline where they are upright."""
    if font is None or font.is_vertical():
        return
    first = glyphs[0]
    a, b, _, d, _, _ = first.matrix
    if abs(b) > 1e-3 * a or a <= 0 or d <= 0 or type(first) is not LTChar:
        # Turned, upside down or mirrored: left as pdfminer boxes it. (A shear, as a
        # synthetic oblique sets, moves no box up or down: it is let through.)
        return
    shift = (GLYPH_DESCENT_EM - font.get_descent()) * (first.y1 - first.y0)
    if not shift:
        return
    for glyph in glyphs:
        if type(glyph) is LTChar:
            glyph.y0 += shift
            glyph.y1 += shift
            glyph.bbox = (glyph.x0, glyph.y0, glyph.x1, glyph.y1)


def _string_state(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(textstate, ncs, graphicstate) of a render_string call."""
    if len(args) == 4:  # how pdfminer's interpreter calls it
        return args[0], args[2], args[3]
    values = dict(zip(("textstate", "seq", "ncs", "graphicstate"), args, strict=False)) | kwargs
    return values["textstate"], values["ncs"], values["graphicstate"]


def hidden_by_state(render: int, ncs: Any, color: Any) -> str:
    """Why glyphs drawn in this state cannot be seen, by render mode and fill colour."""
    if render in (3, 7):
        return HIDDEN_INVISIBLE
    if render in (0, 4) and _is_white(color, getattr(ncs, "name", "")):
        return HIDDEN_BACKGROUND
    return ""


# Fill colours already converted (`fill_rgb`), by colour and colour space name: a page sets a
# few colours for thousands of text-showing operators. Emptied past this many.
_RGB_SEEN: dict[tuple[Any, Any], int] = {}
_RGB_SEEN_MAX = 4096
# Colour spaces whose one or three components are not gray or red, green and blue.
_NOT_GRAY_OR_RGB = frozenset({"Indexed", "Separation", "DeviceN", "Pattern", "Lab"})


def _run_rgb(color: Any, space: Any) -> int:
    """`fill_rgb` of a run's fill colour in its colour space, remembered (`_RGB_SEEN`)."""
    try:
        key = (color, getattr(space, "name", None))
        rgb = _RGB_SEEN.get(key)
    except TypeError:  # (a colour that cannot be a key: malformed)
        return -1
    if rgb is None:
        if len(_RGB_SEEN) >= _RGB_SEEN_MAX:
            _RGB_SEEN.clear()
        rgb = _RGB_SEEN[key] = fill_rgb(*key)
    return rgb


def fill_rgb(color: Any, space: str | None = None) -> int:
    """A fill colour as 0xRRGGBB: gray and RGB (0-1 components, each scaled to 0-255 and
    rounded half up, as PDFium reads them); -1 for other colour spaces (CMYK, indexed,
    separations, patterns, Lab; `space` is the colour space's name) and malformed values."""
    if space in _NOT_GRAY_OR_RGB:
        return -1
    if isinstance(color, (int, float)):
        color = (color,)
    if not isinstance(color, tuple) or len(color) not in (1, 3):
        return -1
    try:
        parts = [min(255, max(0, int(float(v) * 255 + 0.5))) for v in color]
    except (TypeError, ValueError):
        return -1
    r, g, b = parts * 3 if len(parts) == 1 else parts
    return (r << 16) | (g << 8) | b


def _is_white(color: Any, space: str = "") -> bool:
    """Whether a fill colour is white: gray 1, RGB 1 1 1, CMYK 0 0 0 0, a separation at tint 0."""
    if isinstance(color, (int, float)):
        return color <= 0.02 if space == "Separation" else color >= 0.98
    if isinstance(color, tuple) and color and all(isinstance(v, (int, float)) for v in color):
        if len(color) == 1:
            return _is_white(color[0], space)
        if len(color) == 3:
            return all(v >= 0.98 for v in color)
        if len(color) == 4:
            return all(v <= 0.02 for v in color)
    return False


class PageParser:
    """Parses pdfminer pages one at a time into `PageModel`s, sharing font caches."""

    def __init__(self, should_stop: Callable[[], bool] | None = None) -> None:
        self._rsrcmgr = _FontManager(caching=True)
        # boxes_flow=None skips pdfminer's O(n^2) text-box grouping: our own reading
        # order replaces it. all_texts makes text inside form XObjects count as text.
        self._laparams = LAParams(boxes_flow=None, all_texts=True, detect_vertical=True)
        self._device = _BudgetedAggregator(self._rsrcmgr, self._laparams, should_stop)
        self._interpreter = CoveringInterpreter(self._rsrcmgr, self._device)

    def parse(self, page: PDFPage, number: int, tagged: dict[int, int] | None = None) -> PageModel:
        """Lay out `page` and return its model; `tagged` maps the MCIDs of the page's text
        that a tagged PDF's structure tree holds to the level of the heading each lies in (0:
        none; `tags`).

        Raises:
            PageAborted: should_stop returned True during the page.
            PageTooComplex: the page exceeded its work budget.
            Exception: whatever pdfminer raises on a broken page (caller maps it).
        """
        self._device.tagged_mcids = tagged or {}
        self._interpreter.process_page(page)
        ltpage = self._device.get_result()
        if time.monotonic() - self._device.started > MAX_SECONDS_PER_PAGE:
            raise PageTooComplex(f"more than {MAX_SECONDS_PER_PAGE:.0f} seconds")
        model = build_model(ltpage, number, self._device.hidden)
        if self._device.heading_boxes:
            mark_headings(model, self._device.heading_boxes, ltpage.y1)
        if tagged:
            mark_tagged(model, self._device.untagged_boxes, ltpage.y1)
        return model


def mark_headings(model: PageModel, boxes: list[tuple[int, float, float, float, float]], page_top: float) -> None:
    """Give each line whose middle lies in text drawn inside a heading element that level."""
    for line in model.lines:
        cx, cy = (line.x0 + line.x1) / 2, page_top - line.cy
        for level, x0, y0, x1, y1 in boxes:
            if y0 <= cy <= y1 and x0 - line.size <= cx <= x1 + line.size:
                line.heading = level
                break
        else:
            # A line of several runs: the middle may fall between them; its first glyph does not.
            gx = line.glyph_x[0] if line.glyph_x else line.x0
            for level, x0, y0, x1, y1 in boxes:
                if y0 <= cy <= y1 and x0 <= gx + 0.5 <= x1:
                    line.heading = level
                    break


# Runs of text drawn outside the structure tree (a count) past which a tagged page is taken
# for one tagged in part only: its tags then say nothing of what is furniture. A page of a
# browser's or a word processor's print has a few (running header and footer, page number).
MAX_UNTAGGED_RUNS = 200


def mark_tagged(model: PageModel, untagged: Collection[Sequence[float]], page_top: float) -> None:
    """Mark `tagged` each line of a tagged page that no text drawn outside the structure tree
    (boxes x0, y0, x1, y1, bottom-up) reaches: content by the PDF's own account."""
    if len(untagged) > MAX_UNTAGGED_RUNS:
        return
    for line in model.lines:
        cy = page_top - line.cy
        line.tagged = not any(y0 <= cy <= y1 and x0 < line.x1 and line.x0 < x1 for x0, y0, x1, y1 in untagged)


# Lines that may need script repairs; plain Latin lines skip them.
_NEEDS_REPAIR = re.compile(r"[\u0300-\u036f\u0590-\u08ff\u0900-\u0dff\u0e00-\u0e7f\ufb00-\ufdff\ufe70-\ufeff]")
_COMPAT = re.compile(r"[\ufb00-\ufb06\ufb13-\ufb17\ufb50-\ufdff\ufe70-\ufeff]+")
_SPACE_BEFORE_MARK = re.compile(
    r" +(?=[\u0300-\u036f\u0900-\u0903\u093a-\u094f\u0981-\u0983\u09bc-\u09d7"
    r"\u0e31\u0e34-\u0e3a\u0e47-\u0e4e])"
)
_RTL_CHAR = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def compat_text(text: str) -> str:
    """Ligatures and Arabic presentation forms to the letters they stand for."""
    return _COMPAT.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)


_compat = compat_text


def has_rtl(text: str) -> bool:
    """Whether `text` holds a letter of a right-to-left script."""
    return _RTL_CHAR.search(text) is not None


def is_rtl(text: str) -> bool:
    """Whether `text` is written mainly in a right-to-left script (Arabic, Hebrew, ...)."""
    if not _RTL_CHAR.search(text):
        return False
    ltr, rtl = strong_direction(text)
    return rtl > ltr


def visual_order(glyph_x: Sequence[float], glyphs: Sequence[str]) -> list[str]:
    """`glyphs` from left to right on the page, whatever order the content stream drew them in."""
    order = sorted(range(len(glyphs)), key=lambda i: glyph_x[2 * i] + glyph_x[2 * i + 1])
    return [glyphs[i] for i in order]


def visual_to_logical(glyphs: Sequence[str], rtl: bool = True, code: Sequence[bool] | None = None) -> str:
    """Reading order of a line from its glyphs left to right, in a paragraph written right
    to left (`rtl`) or left to right: the Unicode bidirectional algorithm (bidi.py) turns
    right-to-left runs around and keeps the left-to-right runs embedded in them (Latin
    words, numbers), brackets mirrored back. Runs of inline code (`code`, one flag a
    glyph) are laid out as left-to-right units, as browsers isolate them."""
    return "".join(reorder(glyphs, rtl, code))


def line_logical(glyph_x: Sequence[float], glyphs: Sequence[str], rtl: bool, code: Sequence[bool] | None) -> str:
    """The text of a line read in the direction `rtl`, from its glyphs wherever drawn."""
    order = sorted(range(len(glyphs)), key=lambda i: glyph_x[2 * i] + glyph_x[2 * i + 1])
    flags = [code[i] for i in order] if code is not None else None
    return compat_text(visual_to_logical([glyphs[i] for i in order], rtl, flags))


# Letters of a word are joined: the next one starts where the last one ended, give or take
# this share of its width. (A word gap without a space glyph is wider.)
_JOINED_GAP = 0.1


def _drop_spaces_at_marks(
    glyph_x: list[float], glyphs: list[str], code: list[bool] | None
) -> tuple[list[float], list[str], list[bool] | None]:
    """The glyphs of a line without the word spaces layout put beside a vowel mark.

    A mark (Arabic harakat, Hebrew points) is a glyph of no width drawn over its letter,
    before or after it; layout sees a gap between the mark and the letters around it and
    inserts a space, splitting the word ("شَ رطيّ ا" for "شَرطيّا"). An inserted space (no
    width) next to a mark goes where the letters on either side of it touch.
    """
    n = len(glyphs)
    drop: set[int] = set()
    for i, g in enumerate(glyphs):
        if g != " " or glyph_x[2 * i] != glyph_x[2 * i + 1] or not 0 < i < n - 1:
            continue
        if not (_is_mark(glyphs[i - 1]) or _is_mark(glyphs[i + 1])):
            continue
        before = [k for k in range(max(0, i - 2), i) if not glyphs[k].isspace()]
        after = next((k for k in range(i + 1, n) if not glyphs[k].isspace() and not _is_mark(glyphs[k])), None)
        if not before or after is None:
            continue
        end = max(glyph_x[2 * k + 1] for k in before)
        if glyph_x[2 * after] <= end + _JOINED_GAP * (glyph_x[2 * after + 1] - glyph_x[2 * after]):
            drop.add(i)
    if not drop:
        return glyph_x, glyphs, code
    keep = [i for i in range(n) if i not in drop]
    return (
        [v for i in keep for v in (glyph_x[2 * i], glyph_x[2 * i + 1])],
        [glyphs[i] for i in keep],
        [code[i] for i in keep] if code is not None else None,
    )


def _is_mark(glyph: str) -> bool:
    return bool(glyph) and unicodedata.category(glyph[0]) == "Mn"


def _code_glyphs(spans: list[tuple[str, int]], glyphs: Sequence[str]) -> list[bool] | None:
    """One flag a glyph: set in a monospaced font, where the line mixes fonts."""
    if all(st & MONO for _, st in spans) or not any(st & MONO for _, st in spans):
        return None
    flags: list[bool] = []
    k = 0
    left = len(spans[0][0]) if spans else 0
    for g in glyphs:
        while left <= 0 and k + 1 < len(spans):
            k += 1
            left = len(spans[k][0])
        flags.append(bool(spans[k][1] & MONO))
        left -= len(g)
    return flags


def _repair_spans(
    spans: list[tuple[str, int]],
    common: int,
    glyph_x: Sequence[float],
    glyphs: Sequence[str],
    code: list[bool] | None = None,
) -> list[tuple[str, int]]:
    text = "".join(t for t, _ in spans)
    if not _NEEDS_REPAIR.search(text):
        return spans
    if _RTL_CHAR.search(text):
        # Reorder before decomposing ligatures (lam-alef decomposes in logical order).
        # Style runs cannot survive the reordering; keep the style the line shares.
        logical = line_logical(glyph_x, glyphs, is_rtl(text) and not common & MONO, code)
        return [(logical, max(common, 0))]
    spans = [(_compat(t), s) for t, s in spans]
    joined = "".join(t for t, _ in spans)
    if _SPACE_BEFORE_MARK.search(joined):
        # Layout put a word space before a combining mark (Thai tone marks, Indic
        # vowel signs); the mark belongs to the letter before it.
        return [(_SPACE_BEFORE_MARK.sub("", joined), max(common, 0))]
    return spans


# Glyphs per unit of a line's length (its length over its height) beyond which a line
# may be drawn twice over: text averages about two glyphs per em, and a glyph is seldom
# narrower than a third of the line's height.
_OVERPRINT_DENSITY = 3.0
# A copy of a glyph or a line drawn within this many font sizes (ems) of the first is the
# same text overprinted (a simulated bold, a shadow); beyond it, a letter repeated (the
# narrowest letters are about a quarter of an em wide).
_OVERPRINT_SHIFT_EM = 0.15
# An overprint shifted by more than this (points) thickens the strokes: a simulated bold.
_FAKE_BOLD_SHIFT = 0.05


def _add_line(model: PageModel, line: LTTextLine, page_top: float, hidden: dict[int, str]) -> None:
    add_glyphs(
        model, line._objs, (line.x0, line.y0, line.x1, line.y1), isinstance(line, LTTextLineVertical), page_top, hidden
    )


def add_glyphs(
    model: PageModel,
    objs: list[Any],
    bbox: tuple[float, float, float, float],
    vertical: bool,
    page_top: float,
    hidden: dict[int, str],
) -> None:
    """File the line of glyphs `objs` (LTChar, and LTAnno word spaces) inside `bbox`
    (bottom-up page coordinates): split where sizes or visibility change, overprints dropped;
    `hidden` gives the reason of each glyph (by id) drawn where a reader cannot see it."""
    bold = False
    width, height = bbox[2] - bbox[0], bbox[3] - bbox[1]
    extent, across = (height, width) if vertical else (width, height)
    if len(objs) > _OVERPRINT_DENSITY * extent / max(across, 1.0):
        objs, bold = _drop_overprint(objs, vertical)
    if hidden and hidden.keys().isdisjoint(map(id, objs)):
        hidden = {}  # (the page has hidden glyphs, the line none: found once, not glyph by glyph)
    built, splits, visible = _glyph_line(objs, bbox, vertical, page_top, hidden, split=True)
    if not splits:
        _keep(model, _emboldened(built) if bold else built, visible)
        return
    # Two runs of very different sizes a wide gap apart on one baseline are two lines (a
    # small label printed before a heading, a note beside a title): layout joins them
    # because the gap is narrow next to the larger glyphs. So are visible and hidden runs.
    for a, b in pairwise([0, *splits, len(objs)]):
        part = objs[a:b]
        chars = [obj for obj in part if type(obj) is LTChar]
        if chars:
            bbox = (
                min(c.x0 for c in chars),
                min(c.y0 for c in chars),
                max(c.x1 for c in chars),
                max(c.y1 for c in chars),
            )
            built, _, visible = _glyph_line(part, bbox, vertical, page_top, hidden, split=False)
            _keep(model, _emboldened(built) if bold else built, visible)


def _drop_overprint(objs: list[Any], vertical: bool) -> tuple[list[Any], bool]:
    """`objs` without the glyphs drawn a second time over themselves, and whether a copy
    was shifted (a bold simulated by drawing the text twice, slightly apart).

    Text drawn twice over reads twice, or letter by letter doubled once glyphs are put
    in order on the page ("HHeelllloo").
    """
    buckets: dict[tuple[str, int], list[float]] = {}
    out: list[Any] = []
    dropped = shifted = False
    for obj in objs:
        if type(obj) is not LTChar:
            if not (dropped and out and type(out[-1]) is not LTChar):
                out.append(obj)
            continue
        at = obj.y0 if vertical else obj.x0
        step = max(_OVERPRINT_SHIFT_EM * obj.size, 0.1)
        key = int(at // step)
        near = [x for k in (key - 1, key, key + 1) for x in buckets.get((obj._text, k), ()) if abs(x - at) <= step]
        if near:
            dropped = True
            # (A space drawn twice, slightly apart, is no stroke thickened: it has no ink.)
            shifted = shifted or (not obj._text.isspace() and min(abs(x - at) for x in near) > _FAKE_BOLD_SHIFT)
            continue
        buckets.setdefault((obj._text, key), []).append(at)
        out.append(obj)
    if not dropped:
        return objs, False
    return out, shifted


def _emboldened(line: Line | None) -> Line | None:
    if line is not None:
        line.style |= BOLD
        line.spans = [(t, st | BOLD) for t, st in line.spans]
    return line


def _keep(model: PageModel, line: Line | None, visible: int) -> None:
    """File `line` with the page's lines, or with its hidden text (off the page, tiny, or
    hidden by how it was drawn)."""
    if line is None:
        return
    untrack(line)
    model.chars += visible
    if not line.hidden:
        if line.x1 <= 0 or line.x0 >= model.width or line.bottom <= 0 or line.top >= model.height:
            line.hidden = HIDDEN_OFF_PAGE
        elif line.size < _TINY_SIZE:
            line.hidden = HIDDEN_TINY
    (model.hidden if line.hidden else model.lines).append(line)


def _glyph_line(
    objs: list[Any],
    bbox: tuple[float, float, float, float],
    vertical: bool,
    page_top: float,
    hidden: dict[int, str],
    *,
    split: bool,
) -> tuple[Line | None, list[int], int]:
    """The line made of `objs` (None without a visible glyph), the indexes where it should
    be split, and its count of visible characters."""
    # The hot loop of the engine (one pass per glyph): local names, cached styles, the
    # glyph text read as an attribute, and sizes counted in C once per line.
    spans: list[tuple[str, int]] = []
    glyph_x: list[float] = []
    glyph_text: list[str] = []
    span_start = 0  # where the span being made starts in glyph_text (its text: the texts since)
    cur_style = -1
    common = -1  # all bits set until the first visible glyph
    sizes: list[float] = []
    visible = 0
    cache = _style_cache
    char_type = LTChar
    add_x = glyph_x.append
    add_text = glyph_text.append
    add_size = sizes.append
    # The sizes of the glyphs not set in a monospaced face: inline code has a size of its own
    # (browsers set it at about 0.85 of the text around it), and a line's size is its text's.
    text_sizes: list[float] = []
    add_text_size = text_sizes.append
    x0, y0, x1, y1 = bbox
    last_x1 = x0
    seen_x1 = 0.0  # end of the last visible glyph
    seen_size = 0.0
    after_space = False
    inferred = drawn = 0  # word spaces layout inserted, and spaces the text drew
    space = -1  # where the last space drawn since the last visible glyph is
    collapsed: list[int] = []  # where spaces are drawn that do not advance (see SPACE_ADVANCE_SHARE)
    max_gap = 0.0
    splits: list[int] = []
    reason = ""  # why the glyphs so far are hidden (one reason to a line: it splits where it changes)
    font: str | None = None  # the font of the last glyph, and its style
    font_bits = 0
    # Private attributes: the public iterator and get_text() cost a call per glyph.
    for index, obj in enumerate(objs):
        text = obj._text  # LTChar and LTAnno both have it
        if type(obj) is char_type:
            if obj.fontname is not font:
                font = obj.fontname
                known = cache.get(font)
                font_bits = font_style(font) if known is None else known
            style = font_bits
            if not text.isspace():
                size = obj.size
                if hidden:
                    glyph_reason = hidden.get(id(obj), "")
                    if glyph_reason != reason:
                        if visible and split:
                            splits.append(index)
                        reason = glyph_reason
                visible += len(text)
                add_size(size)
                if not style & MONO:
                    add_text_size(size)
                common &= style
                if after_space:
                    gap = obj.x0 - seen_x1
                    if gap > max_gap:
                        max_gap = gap
                    if space >= 0:
                        drawn_at = objs[space].x0
                        if abs(obj.x0 - drawn_at) < SPACE_ADVANCE_SHARE * (objs[space].x1 - drawn_at):
                            collapsed.append(space)
                        space = -1
                    if split and not vertical and gap > min(size, seen_size) and far_sizes(size, seen_size):
                        splits.append(index)
                    after_space = False
                seen_x1 = obj.x1
                seen_size = size
            else:
                after_space = visible > 0
                drawn += 1
                if visible:
                    space = index
            add_x(obj.x0)
            last_x1 = obj.x1
            add_x(last_x1)
            add_text(text)
        else:
            if text == "\n":
                continue
            # Inserted word spaces take the style of the text before them.
            style = cur_style if cur_style != -1 else 0
            after_space = visible > 0
            inferred += 1
            add_x(last_x1)
            add_x(last_x1)
            add_text(text)
        if style != cur_style:
            end = len(glyph_text) - 1  # (this glyph's text is the last)
            if end > span_start:
                spans.append(("".join(glyph_text[span_start:end]), cur_style))
                span_start = end
            cur_style = style
    if len(glyph_text) > span_start:
        spans.append(("".join(glyph_text[span_start:]), cur_style))
    if not visible:
        return None, [], 0
    if collapsed and not vertical:
        # Spaces drawn where the pen does not move: a shaper's default-ignorable character
        # (a soft hyphen where the line does not break, a zero-width non-joiner), no word
        # space. Between two letters of a joining script it keeps them apart: the non-joiner.
        joiners = {i for i in collapsed if _between_joining_letters(objs, i)}
        return _glyph_line_without(objs, set(collapsed) - joiners, bbox, vertical, page_top, hidden, split, joiners)
    # (A letter-spaced line has more inferred spaces between its glyphs than glyphs joined:
    # with fewer, `_letter_spacing` could find none.)
    if inferred and drawn and 2 * inferred + drawn >= len(sizes) and not vertical:
        letter_spacing = _letter_spacing(objs)
        if letter_spacing:
            return _glyph_line_without(objs, letter_spacing, bbox, vertical, page_top, hidden, split)
    weighed = text_sizes or sizes
    if weighed.count(weighed[0]) == len(weighed):
        size = round(weighed[0] * 2) / 2  # (most lines: one size)
    else:
        size_weight: dict[float, int] = {}
        for raw, count in Counter(weighed).items():
            rounded = round(raw * 2) / 2
            size_weight[rounded] = size_weight.get(rounded, 0) + count
        size = max(size_weight.items(), key=lambda kv: (kv[1], kv[0]))[0]
    code = None
    first = next(o for o in objs if type(o) is char_type and not o._text.isspace())
    color = getattr(first, "color", -1)
    text = "".join(glyph_text)  # (the spans' text)
    if _NEEDS_REPAIR.search(text):  # (right-to-left letters among them)
        if _RTL_CHAR.search(text):
            code = _code_glyphs(spans, glyph_text)
            glyph_x, glyph_text, code = _drop_spaces_at_marks(glyph_x, glyph_text, code)
        spans = _repair_spans(spans, common, glyph_x, glyph_text, code)
        text = "".join(t for t, _ in spans)
    built = Line(
        x0=x0,
        top=page_top - y1,
        x1=x1,
        bottom=page_top - y0,
        text=text,
        spans=spans,
        size=size,
        style=max(common, 0),
        glyph_x=glyph_x,
        glyph_text=glyph_text,
        code_glyphs=code,
        vertical=vertical,
        max_gap=max_gap,
        hidden=reason,
        color=color,
    )
    return built, sorted(set(splits)), visible


# A space glyph whose next glyph starts less than this share of the space's width from where
# the space starts (either way) takes no room: the pen did not move over it. Browsers draw a
# soft hyphen (U+00AD) where they do not break the line so, as a space glyph of no advance;
# it parts no words. (Glyph boxes are the fonts' widths, not the advances a shaper gave: an
# Arabic or italic glyph's box may reach over its neighbour's, a space's by a third.)
SPACE_ADVANCE_SHARE = 0.1


# A line whose letters mostly stand apart (layout inferred a word space between most two
# glyphs that no drawn space parts) is letter-spaced; in it, a space inferred from a gap
# narrower than this share of the narrowest gap the line's drawn spaces leave is letter
# spacing, not a word space: text set with extra space between its letters (letter-spaced
# capitals) shows a gap between every two letters, and its words are parted by the spaces
# it draws.
_LETTER_SPACING_SHARE = 0.5
# ... and no wider than this many times the line's most common inferred gap (its letter
# spacing).
_LETTER_SPACING_SPREAD = 1.5


def _glyph_line_without(
    objs: list[Any],
    dropped: set[int],
    bbox: tuple[float, float, float, float],
    vertical: bool,
    page_top: float,
    hidden: dict[int, str],
    split: bool,
    joiners: Collection[int] = (),
) -> tuple[Line | None, list[int], int]:
    """`_glyph_line` of `objs` but those at the indexes `dropped`, and the spaces at the
    indexes `joiners` read as zero-width non-joiners (U+200C, of no width); the indexes where
    it should be split are indexes of `objs`, as the caller cuts it."""
    kept = [index for index in range(len(objs)) if index not in dropped]
    glyphs = [objs[index] for index in kept]
    for k, index in enumerate(kept):
        if index in joiners:
            joiner = copy.copy(objs[index])
            joiner._text, joiner.x1 = ZWNJ, joiner.x0
            glyphs[k] = joiner
            # (Hidden or not as the letter before it: a space may have no reason of its own.)
            letter = next((o for o in reversed(objs[:index]) if type(o) is LTChar and not o._text.isspace()), None)
            reason = hidden.get(id(letter))
            if reason is not None:
                hidden = {**hidden, id(joiner): reason}
    built, splits, visible = _glyph_line(glyphs, bbox, vertical, page_top, hidden, split=split)
    return built, [kept[index] for index in splits], visible


ZWNJ = "\u200c"


def _between_joining_letters(objs: list[Any], index: int) -> bool:
    """Whether the glyph at `index` of a line's glyphs (in the order drawn, left to right)
    stands right between two letters of a joining script (Arabic's letters and their
    presentation forms: bidirectional class AL), their marks aside, that it keeps apart.
    Where the glyphs give their shaped forms, the letter at its right (the one before it in
    reading) must not join forward (a final or isolated form), nor the one at its left join
    back (an initial or isolated form): an invisible character the letters join across (a
    soft hyphen, a direction mark) is none."""
    left, right = _glyph_beside(objs, index, -1), _glyph_beside(objs, index, 1)
    if left is None or right is None or bidi_class(left) != "AL" or bidi_class(right) != "AL":
        return False
    before, after = right[-1], left[0]  # (a glyph's own text is in reading order)
    return (
        before.isalpha()
        and after.isalpha()
        and not _joins(before, "INITIAL", "MEDIAL")
        and not _joins(after, "FINAL", "MEDIAL")
    )


def _glyph_beside(objs: list[Any], index: int, step: int) -> str | None:
    """The text of the glyph next to the one at `index` (`step` -1: at its left, 1: at its
    right), past combining marks; None where a space or nothing stands there."""
    k = index + step
    while 0 <= k < len(objs):
        obj = objs[k]
        if type(obj) is not LTChar or obj._text.isspace() or not obj._text:
            return None
        if not _is_mark(obj._text):
            return str(obj._text)
        k += step
    return None


def _joins(letter: str, *forms: str) -> bool:
    """Whether `letter` is a presentation form of one of `forms` ("INITIAL", "MEDIAL", ...)."""
    name = unicodedata.name(letter, "")
    return any(f"{form} FORM" in name for form in forms)


def _letter_spacing(objs: list[Any]) -> set[int]:
    """The indexes of the word spaces layout inferred inside the words of a letter-spaced
    line of `objs` (see `_LETTER_SPACING_SHARE`): none where it is not one. Only a line whose
    text draws its word spaces tells them apart."""
    drawn_gaps: list[float] = []
    inferred: list[tuple[int, float]] = []
    joined = 0  # glyphs that follow the last one with nothing between them
    previous = None  # the last visible glyph
    spaced = False  # a drawn space since it
    between = False  # an inferred space since it
    between_at = -1
    for index, obj in enumerate(objs):
        text = obj._text
        if type(obj) is LTChar:
            if text.isspace():
                spaced = True
                continue
            if previous is not None:
                if spaced:
                    drawn_gaps.append(obj.x0 - previous.x1)
                elif between:
                    inferred.append((between_at, obj.x0 - previous.x1))
                else:
                    joined += 1
            previous, spaced, between = obj, False, False
        elif text == " " and previous is not None:
            between, between_at = True, index
    if not drawn_gaps or len(inferred) <= joined:
        return set()
    narrowest = min(drawn_gaps)
    # Letter spacing is one width all along the line (the text state's character spacing):
    # the gaps about as wide as most, not those as wide as words set apart by position (a
    # line whose only drawn space is a label's before a tab stop).
    spacing = sorted(gap for _, gap in inferred)[len(inferred) // 2]
    widest = min(_LETTER_SPACING_SHARE * narrowest, _LETTER_SPACING_SPREAD * spacing)
    return {index for index, gap in inferred if 0 <= gap < widest}


def chars_at_least(texts: Iterable[str], count: int, kind: Callable[[str], bool] = str.isalpha) -> bool:
    """Whether `texts` hold `count` characters of a `kind` (letters: str.isalpha; letters or
    digits: str.isalnum) or more between them: the text is read only as far as the count-th,
    which in words is a few characters in."""
    found = 0
    for text in texts:
        for ch in text:
            if kind(ch):
                found += 1
                if found >= count:
                    return True
    return found >= count


def far_sizes(a: float, b: float) -> bool:
    """Sizes too far apart for one line of text (a small label beside a large heading)."""
    return a > 1.5 * b or b > 1.5 * a


def _collect(model: PageModel, container: Any, page_top: float, depth: int, hidden: dict[int, str]) -> None:
    for obj in container:
        if isinstance(obj, LTTextBox):
            for line in obj:
                if isinstance(line, LTTextLine):
                    _add_line(model, line, page_top, hidden)
        elif isinstance(obj, LTTextLine):
            _add_line(model, obj, page_top, hidden)
        elif isinstance(obj, LTFigure):
            if depth < 32:
                _collect(model, obj, page_top, depth + 1, hidden)
        elif isinstance(obj, LTImage):
            add_image(model, (obj.x0, page_top - obj.y1, obj.x1, page_top - obj.y0))
        elif isinstance(obj, (LTRect, LTLine, LTCurve)):
            add_shape(model, obj, page_top)


def add_image(model: PageModel, box: Box) -> None:
    """File a picture drawn in `box` (top-down): a small one may be a drawn bullet."""
    model.images.append(box)
    if _small(box[2] - box[0], box[3] - box[1]) and len(model.marks) < MAX_MARKS_PER_PAGE:
        model.marks.append((box, MARK_DISC))


def add_shape(model: PageModel, obj: LTCurve, page_top: float) -> None:
    """File a painted path: a coloured fill, a drawn list mark, table rulings."""
    if obj.fill and not _is_white(obj.non_stroking_color):
        model.fills.append((obj.x0, page_top - obj.y1, obj.x1, page_top - obj.y0))
    glyph = mark_glyph(obj) if len(model.marks) < MAX_MARKS_PER_PAGE else ""
    if glyph:
        model.marks.append(((obj.x0, page_top - obj.y1, obj.x1, page_top - obj.y0), glyph))
    if glyph not in _NOT_RULINGS:
        # (A checkbox's edges are no table's rules.)
        _add_rulings(model, obj, page_top)


# Drawn marks: browsers print list bullets as small shapes (a filled disc, a stroked circle
# one level down, a filled square below that), some word processors as small pictures, and
# forms draw their checkboxes as small squares. Each shape becomes the glyph it stands for.
MARK_DISC = "\u2022"  # a filled round shape, or a small picture
MARK_CIRCLE = "\u25e6"  # a stroked round shape: a hollow bullet, or an option's radio button
MARK_SQUARE = "\u25aa"  # a filled square or polygon
MARK_BOX = "\u2610"  # a stroked square: a checkbox (checked when something is drawn inside)
MARK_DASH = "\u2013"  # a short thick horizontal bar
MARK_TICK = "\u2713"  # any other small stroked path (a check mark inside a box)
# Marks whose edges are not rulings of a table: a checkbox, a square or round bullet. (A
# dash may be a piece of a dashed rule.)
_NOT_RULINGS = frozenset({MARK_DISC, MARK_CIRCLE, MARK_SQUARE, MARK_BOX})
# Sides of a shape that may be a bullet or a checkbox, in points: bullets are a third to
# two thirds of the font size and checkboxes about the cap height, so text from 5 to 20
# points gives marks of 1.2 to 16 points. Larger shapes are figures or frames.
MARK_MIN_SIDE = 1.2
MARK_MAX_SIDE = 16.0
# A round or square mark is about as wide as it is tall (width / height): browsers draw
# true circles and squares; an arrowhead of a diagram is half as wide again as it is tall.
MARK_MAX_ASPECT = 1.25
# A dash: at least this many times wider than it is thick, and at most this thick (points).
DASH_MIN_ASPECT = 2.5
DASH_MAX_THICKNESS = 2.0
# Marks kept per page at most: a chart of ten thousand dots is not a list (points past this
# are not examined).
MAX_MARKS_PER_PAGE = 2000


def _small(w: float, h: float) -> bool:
    """Whether a box of w x h points is the size and shape of a bullet or a checkbox."""
    return (
        MARK_MIN_SIDE <= w <= MARK_MAX_SIDE
        and MARK_MIN_SIDE <= h <= MARK_MAX_SIDE
        and max(w, h) <= MARK_MAX_ASPECT * min(w, h)
    )


def mark_glyph(obj: LTCurve) -> str:
    """The glyph a small shape stands for as a list marker, or "" for any other shape."""
    w, h = obj.width, obj.height
    if w > MARK_MAX_SIDE or h > MARK_MAX_SIDE:
        return ""  # (most shapes: rules, frames, fills; decided before anything else is read)
    painted_fill = obj.fill and not _is_white(obj.non_stroking_color)
    if DASH_MIN_ASPECT * h <= w <= MARK_MAX_SIDE and h <= DASH_MAX_THICKNESS:
        # A filled bar, not a stroked line (an edge of a diagram, a piece of a rule).
        return MARK_DASH if painted_fill and h >= MARK_MIN_SIDE / 2 else ""
    if not _small(w, h) or not (painted_fill or obj.stroke):
        return ""
    path = obj.original_path or []
    if any(op[0] in "cvy" for op in path):
        return MARK_DISC if painted_fill else MARK_CIRCLE
    if not _rectangular(obj):
        # A triangle or another polygon: an arrowhead, or a check mark inside a box.
        return MARK_TICK
    return MARK_SQUARE if painted_fill else MARK_BOX


def _rectangular(obj: LTCurve) -> bool:
    """Whether a shape of straight lines is an axis-aligned rectangle."""
    if isinstance(obj, LTRect):
        return True
    pts = obj.pts[:-1] if len(obj.pts) == 5 and obj.pts[0] == obj.pts[-1] else obj.pts
    if len(pts) != 4:
        return False
    xs = {round(x, 1) for x, _ in pts}
    ys = {round(y, 1) for _, y in pts}
    return len(xs) == 2 and len(ys) == 2


def _add_rulings(model: PageModel, obj: LTCurve, page_top: float) -> None:
    x0, y0, x1, y1 = obj.x0, obj.y0, obj.x1, obj.y1
    w, h = x1 - x0, y1 - y0
    top, bottom = page_top - y1, page_top - y0
    if h <= 3 and w > 3:
        model.hrules.append(((top + bottom) / 2, x0, x1))
    elif w <= 3 and h > 3:
        model.vrules.append(((x0 + x1) / 2, top, bottom))
    elif isinstance(obj, LTRect) and w > 3 and h > 3:
        # A cell or frame drawn as a rectangle: its edges are rulings, unless it is a
        # page-sized background that would swallow every grid on the page.
        if w * h > 0.8 * model.width * model.height:
            return
        model.hrules.append((top, x0, x1))
        model.hrules.append((bottom, x0, x1))
        model.vrules.append((x0, top, bottom))
        model.vrules.append((x1, top, bottom))


def build_model(ltpage: LTPage, number: int, hidden: dict[int, str] | None = None) -> PageModel:
    model = PageModel(number=number, width=ltpage.width, height=ltpage.height)
    _collect(model, ltpage, ltpage.y1, 0, hidden or {})
    finish_model(model)
    return model


def finish_model(model: PageModel) -> None:
    """The page-wide passes once every line is filed: what only looked hidden given back,
    overprinted copies dropped, each line read in its paragraph direction."""
    if model.hidden:
        _uncover(model)
    _drop_overprinted_lines(model)
    _settle_directions(model)


def _drop_overprinted_lines(model: PageModel) -> None:
    """Keep one of the copies of a line drawn twice over itself; a copy shifted a little
    is a simulated bold, and the line is bold."""
    seen: dict[str, list[Line]] = {}
    kept: list[Line] = []
    for ln in model.lines:
        twins = seen.setdefault(ln.text, [])
        tol = _OVERPRINT_SHIFT_EM * ln.size
        twin = next(
            (t for t in twins if abs(t.x0 - ln.x0) <= tol and abs(t.x1 - ln.x1) <= tol and abs(t.top - ln.top) <= tol),
            None,
        )
        if twin is None:
            twins.append(ln)
            kept.append(ln)
        elif max(abs(twin.x0 - ln.x0), abs(twin.top - ln.top)) > _FAKE_BOLD_SHIFT:
            _emboldened(twin)
    if len(kept) < len(model.lines):
        model.lines = kept


def _settle_directions(model: PageModel) -> None:
    """Read each line in the paragraph direction of its page's text.

    A line is laid out by the bidirectional algorithm in the direction of its paragraph,
    and a paragraph of Arabic or Hebrew is right to left however many Latin words one of
    its lines holds ("(parameters) المعاملات" is "المعاملات (parameters)"); a line of
    Latin letters alone in it shows its closing punctuation at the left (":useId").
    The page's direction is that of most of the strong letters of its prose; code (a
    monospaced line) is written left to right on any page.
    """
    if not any(_RTL_CHAR.search(ln.text) for ln in model.lines):
        return
    ltr = rtl = 0
    closing = [0, 0]  # Latin lines with their closing punctuation at the left, at the right
    for ln in model.lines:
        if not ln.style & MONO:  # code is left to right whatever the page's language
            a, b = strong_direction(ln.text)
            ltr += a
            rtl += b
            if not b:
                side = _closing_side(ln.glyph_x, ln.glyph_text)
                if side is not None:
                    closing[side] += 1
    # A page of untranslated Latin prose in a right-to-left document is still laid out
    # right to left: its lines show their full stops and colons at the left.
    page_rtl = model.rtl = rtl > ltr or (closing[0] >= RTL_CLOSING_MIN_LINES and closing[0] > closing[1])
    for ln in model.lines:
        mono = bool(ln.style & MONO)
        has_rtl = _RTL_CHAR.search(ln.text) is not None
        built = has_rtl and is_rtl(ln.text) and not mono  # as _repair_spans read it
        if has_rtl:
            ln.rtl = not mono and (page_rtl or built)
        else:
            ln.rtl = page_rtl and not mono and _shows_rtl_ends(ln.glyph_x, ln.glyph_text)
        if ln.rtl != built:
            text = line_logical(ln.glyph_x, ln.glyph_text, ln.rtl, ln.code_glyphs)
            ln.text = text
            ln.spans = [(text, ln.style)]


# Sentence punctuation that closes a line of prose.
_CLOSING = ".:;,!?"
# At least this many lines of Latin letters with their closing punctuation at the left
# (and more than with it at the right) make a page right to left.
RTL_CLOSING_MIN_LINES = 2


def _closing_side(glyph_x: Sequence[float], glyphs: Sequence[str]) -> int | None:
    """0 when a line shows sentence punctuation at its left end before a letter (laid
    out right to left), 1 when at its right end after a letter (left to right), else None."""
    visual = [g for g in visual_order(glyph_x, glyphs) if not g.isspace()]
    if len(visual) < 2:
        return None
    if visual[0] in _CLOSING and visual[1].isalpha() and visual[-1].isalnum():
        return 0
    if visual[-1] in _CLOSING and visual[-2].isalnum() and visual[0].isalnum():
        return 1
    return None


def _shows_rtl_ends(glyph_x: Sequence[float], glyphs: Sequence[str]) -> bool:
    """A line of left-to-right letters set right to left: its closing punctuation (a colon,
    a bracket, a full stop) shows at its left end, a letter or digit at its right."""
    visual = [g for g in visual_order(glyph_x, glyphs) if not g.isspace()]
    return len(visual) > 1 and not visual[0].isalnum() and visual[-1].isalnum()


def _uncover(model: PageModel) -> None:
    """Give back to the page's text what only looked hidden: invisible text over an image
    is a scan's OCR layer, and white text over a dark shape or a picture is legible."""
    keep: list[Line] = []
    for line in model.hidden:
        cx, cy = (line.x0 + line.x1) / 2, line.cy
        under = model.images if line.hidden == HIDDEN_INVISIBLE else [*model.images, *model.fills]
        if line.hidden in (HIDDEN_INVISIBLE, HIDDEN_BACKGROUND) and any(
            x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in under
        ):
            line.hidden = ""
            model.lines.append(line)
        else:
            keep.append(line)
    model.hidden = keep
