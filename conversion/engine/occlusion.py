"""Text covered by what is drawn after it: an opaque fill or picture painted over glyphs.

pdfminer's interpreter ignores the parts of the graphics state that say whether a shape
hides what lies beneath it (fill alpha, soft mask, blend mode, overprint, the clipping
path). `CoveringInterpreter` keeps them in a `PaintState`; the page's device records the
text runs and the opaque rectangles and images in drawing order (a `Covers`), and at the
end of the page `Covers.covered` names the glyphs that a shape drawn later covers.

Only what certainly hides a glyph counts, so that real text is never dropped: a fill of an
axis-aligned rectangle or an image, opaque (alpha 1, no soft mask, Normal blending, no
overprint, no image mask or soft mask of its own), not in optional content (a layer may be
switched off), inside a clip that is a rectangle, over most of the glyph's box. Strokes,
curved or slanted shapes, shadings and annotations (not page content) never cover.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from pdfminer.layout import LTChar
from pdfminer.pdfinterp import PDFGraphicState, PDFPageInterpreter
from pdfminer.pdftypes import PDFStream, dict_value, resolve1
from pdfminer.psparser import PSLiteral, literal_name
from pdfminer.utils import MATRIX_IDENTITY, Matrix, mult_matrix

__all__ = [
    "COVERED_SHARE",
    "COVER_CELL",
    "MIN_COVER_SIDE",
    "SCAN_PAGE_SHARE",
    "CoveringInterpreter",
    "Covers",
    "PaintState",
    "cover_grid",
    "covering",
    "filled_rectangles",
    "intersect",
    "is_rectangle",
    "is_scan",
]

# A glyph is covered when one shape hides at least this fraction of its box's area (the
# box from the font's descent to its ascent). What is left is a sliver of a fifth of the
# box (descenders, or the tops of capitals): not readable. Below it the text stays (a box
# that only reaches into a line, a cell fill that touches the descenders of the row above).
COVERED_SHARE = 0.8
# Images that together cover at least this fraction of the page's area make it a scan: text
# under them is the scan's OCR layer (the "text under the page image" that OCR tools write),
# kept as the engine keeps invisible text over a picture. Smaller pictures cover text.
SCAN_PAGE_SHARE = 0.6
# Multiple of the font size above the baseline: the band where every letter has ink (the
# x-height). A shape must span it to cover a glyph, so that a glyph box pushed off the ink
# by a font's wrong Descent (pdfminer builds the box from it) is not covered by the shape
# beneath the line (the next table row's fill).
INK_BAND = 0.5
# Points: the side of a cell of the grid that indexes covering shapes by position.
COVER_CELL = 32.0
# Points: a shape thinner than this covers no glyph: it cannot hide 80% of the box of text
# of a point or more (smaller text is hidden as tiny already). Rules and cell borders drawn
# as thin filled rectangles, the most common fills drawn after text, are not kept.
MIN_COVER_SIDE = 0.8
# A fill with more subpaths than this (a map, text drawn as outlines) covers nothing:
# finding which of its subpaths are holes in others would cost a test per pair.
_MAX_SUBPATHS = 64
# Points: how far a corner may be from its neighbour's line for an edge to be straight.
_SQUARE = 0.01

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in device space (bottom-up)
# The clip of a shape that cannot be told (a curved clipping path, text used as a clip):
# a shape under it covers nothing.
NOWHERE: Box = (0.0, 0.0, 0.0, 0.0)


class PaintState(PDFGraphicState):
    """pdfminer's graphics state and what it drops: whether fills hide what they cover, and
    the bounding rectangle of the clip (None where nothing clips)."""

    def __init__(self) -> None:
        super().__init__()
        self.alpha = 1.0  # ca: the opacity of fills
        self.soft_mask = False  # SMask other than /None
        self.blend_normal = True  # BM Normal or Compatible
        self.overprint = False  # op: inks laid over others, not knocking them out
        self.clip: Box | None = None

    def copy(self) -> PaintState:
        # Called for every text-showing operator: a shallow copy of the attributes, as
        # pdfminer's own copy makes one (every value is immutable or replaced, never changed).
        obj = PaintState.__new__(PaintState)
        obj.__dict__.update(self.__dict__)
        return obj

    @property
    def opaque(self) -> bool:
        """Whether a fill painted in this state hides what lies beneath it."""
        return self.alpha >= 1.0 and not self.soft_mask and self.blend_normal and not self.overprint


_INHERITED = ("alpha", "soft_mask", "blend_normal", "overprint", "clip")


class CoveringInterpreter(PDFPageInterpreter):
    """pdfminer's interpreter keeping transparency and clipping in a `PaintState`, and
    telling the device of each image with the state it is painted in (`paint_image`).

    A form XObject starts with the transparency and clip of where it is drawn, clipped to
    its bounding box; its colours start afresh, as pdfminer has always read them.
    """

    _inherited: PaintState | None = None
    _form_state: PaintState | None = None

    def init_state(self, ctm: Matrix) -> None:
        super().init_state(ctm)
        state = PaintState()
        if self._inherited is not None:
            for name in _INHERITED:
                setattr(state, name, getattr(self._inherited, name))
        self.graphicstate = state

    def subinterp(self) -> PDFPageInterpreter:
        interp = super().subinterp()
        assert isinstance(interp, CoveringInterpreter)
        interp._inherited = self._form_state
        return interp

    @property
    def _state(self) -> PaintState:
        state = self.graphicstate
        assert isinstance(state, PaintState)
        return state

    def do_gs(self, name: Any) -> None:
        try:
            params = dict_value(dict_value(self.resources.get("ExtGState"))[literal_name(name)])
        except Exception:  # an unknown or broken name changes nothing, as for pdfminer
            return
        state = self._state
        if "ca" in params:
            alpha = resolve1(params["ca"])
            state.alpha = float(alpha) if isinstance(alpha, (int, float)) else 1.0
        if "SMask" in params:
            mask = resolve1(params["SMask"])
            state.soft_mask = not (isinstance(mask, PSLiteral) and mask.name == "None")
        if "BM" in params:
            blend = resolve1(params["BM"])
            if isinstance(blend, list) and blend:
                blend = resolve1(blend[0])
            state.blend_normal = isinstance(blend, PSLiteral) and blend.name in ("Normal", "Compatible")
        overprint = params.get("op", params.get("OP"))
        if overprint is not None:
            state.overprint = resolve1(overprint) is True

    def do_W(self) -> None:
        self._clip_to_path()

    def do_W_a(self) -> None:
        self._clip_to_path()

    def _clip_to_path(self) -> None:
        # The clip takes effect after the painting operator that follows; the shape that
        # operator paints is the clip's own path, so taking it now changes nothing.
        boxes = _subpath_boxes(self.curpath, self.ctm)
        rect = boxes[0][0] if len(boxes) == 1 and boxes[0][1] else NOWHERE
        self._state.clip = intersect(self._state.clip, rect)

    def do_TJ(self, seq: Any) -> None:
        super().do_TJ(seq)
        if self.textstate.render >= 4:
            # Render modes 4-7 add the glyphs' outlines to the clip: what is painted next
            # fills the letters (text filled with a picture), it does not cover them.
            self._state.clip = NOWHERE

    def do_Do(self, xobjid_arg: Any) -> None:
        try:
            xobj = resolve1(self.xobjmap[literal_name(xobjid_arg)])
        except Exception:
            xobj = None
        optional = False
        if isinstance(xobj, PDFStream):
            subtype = resolve1(xobj.get("Subtype"))
            if isinstance(subtype, PSLiteral) and subtype.name == "Form":
                self._form_state = self._state.copy()
                matrix = resolve1(xobj.get("Matrix")) or MATRIX_IDENTITY
                bbox = resolve1(xobj.get("BBox"))
                try:
                    ctm = mult_matrix(tuple(float(v) for v in matrix), self.ctm)  # type: ignore[arg-type]  # six numbers or the except
                    x0, y0, x1, y1 = (float(v) for v in bbox)
                    frame = _subpath_boxes([("m", x0, y0), ("l", x1, y0), ("l", x1, y1), ("l", x0, y1)], ctm)
                except Exception:
                    frame = []
                rect = frame[0][0] if frame and frame[0][1] else NOWHERE
                self._form_state.clip = intersect(self._form_state.clip, rect)
                optional = "OC" in xobj
            elif isinstance(subtype, PSLiteral) and subtype.name == "Image":
                self._paint_image(xobj)
        if optional:
            self.device.begin_tag(_OC)
        try:
            super().do_Do(xobjid_arg)
        finally:
            self._form_state = None
            if optional:
                self.device.end_tag()

    def do_EI(self, obj: Any) -> None:
        if isinstance(obj, PDFStream) and "W" in obj and "H" in obj:
            self._paint_image(obj)
        super().do_EI(obj)

    def _paint_image(self, stream: PDFStream) -> None:
        paint = getattr(self.device, "paint_image", None)
        if paint is not None:
            paint(stream, self._state, self.ctm)


_OC = PSLiteral("OC")


def image_is_opaque(stream: PDFStream) -> bool:
    """Whether an image hides everything under its rectangle: not a stencil (ImageMask,
    painted only where its bits are set), without a soft mask or a colour-key or stencil Mask."""
    for key in ("ImageMask", "IM"):
        if resolve1(stream.get(key)) is True:
            return False
    return stream.get("SMask") is None and stream.get("Mask") is None and stream.get("SMaskInData") in (None, 0)


def _subpath_boxes(path: Sequence[Any], ctm: Matrix) -> list[tuple[Box, bool]]:
    """Each subpath's bounding box in device space and whether it is exactly that box (an
    axis-aligned rectangle); [] past `_MAX_SUBPATHS`."""
    a, b, c, d, e, f = ctm
    subpaths: list[list[tuple[float, float]]] = []
    curved: list[bool] = []
    current: list[tuple[float, float]] | None = None
    for segment in path:
        op = segment[0]
        if op == "m":
            if len(subpaths) == _MAX_SUBPATHS:
                return []
            current = []
            subpaths.append(current)
            curved.append(False)
        elif op == "h" or current is None:
            continue
        elif op != "l":
            curved[-1] = True
        coords = segment[1:]
        for i in range(0, len(coords) - 1, 2):
            x, y = coords[i], coords[i + 1]
            current.append((a * x + c * y + e, b * x + d * y + f))
    out: list[tuple[Box, bool]] = []
    for points, is_curved in zip(subpaths, curved, strict=True):
        if not points:
            continue
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        box = (min(xs), min(ys), max(xs), max(ys))
        out.append((box, not is_curved and is_rectangle(points)))
    return out


def is_rectangle(points: list[tuple[float, float]]) -> bool:
    """Whether the corners (closed or not) make an axis-aligned rectangle."""
    if len(points) == 5 and _near(points[0], points[4]):
        points = points[:4]
    if len(points) != 4:
        return False
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points
    s = _SQUARE
    return (abs(x0 - x1) < s and abs(y1 - y2) < s and abs(x2 - x3) < s and abs(y3 - y0) < s) or (
        abs(y0 - y1) < s and abs(x1 - x2) < s and abs(y2 - y3) < s and abs(x3 - x0) < s
    )


def _near(p: tuple[float, float], q: tuple[float, float]) -> bool:
    return abs(p[0] - q[0]) < _SQUARE and abs(p[1] - q[1]) < _SQUARE


def filled_rectangles(path: Sequence[Any], ctm: Matrix) -> list[Box]:
    """The rectangles a fill of `path` certainly paints: its subpaths that are
    axis-aligned rectangles and meet no other subpath (one that does may be a hole in it,
    or it in another, by the winding rule: a frame drawn as two rectangles)."""
    if len(path) == 5 and ctm[1] == 0 and ctm[2] == 0 and [segment[0] for segment in path] == ["m", "l", "l", "l", "h"]:
        # One rectangle drawn with `re` on an upright page, the common case, without the
        # general walk: its corners share their x and y in pairs.
        (_, x0, y0), (_, x1, y1), (_, x2, y2), (_, x3, y3) = path[0], path[1], path[2], path[3]
        if x0 == x3 and x1 == x2 and y0 == y1 and y2 == y3:
            a, d, e, f = ctm[0], ctm[3], ctm[4], ctm[5]
            xa, xb, ya, yb = a * x0 + e, a * x1 + e, d * y0 + f, d * y2 + f
            return [(min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb))]
    boxes = _subpath_boxes(path, ctm)
    if len(boxes) == 1:
        return [boxes[0][0]] if boxes[0][1] else []
    out: list[Box] = []
    for i, (box, exact) in enumerate(boxes):
        if exact and not any(j != i and _overlaps(box, other) for j, (other, _) in enumerate(boxes)):
            out.append(box)
    return out


def _overlaps(p: Box, q: Box) -> bool:
    return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]


def intersect(clip: Box | None, box: Box) -> Box:
    if clip is None:
        return box
    x0, y0 = max(clip[0], box[0]), max(clip[1], box[1])
    x1, y1 = min(clip[2], box[2]), min(clip[3], box[3])
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else NOWHERE


class Covers:
    """The page's text runs and covering shapes in drawing order.

    A run is the glyphs one text-showing operator added to a layout container; a cover is
    a box and the number of runs drawn before it. Shapes painted before any text are not
    kept (they cannot cover anything), so on most pages there is nothing to check.
    """

    def __init__(self, page: Box) -> None:
        self.page = page
        # (container, first index in its _objs, count, text rise, font size or 0 for a vertical font)
        self.runs: list[tuple[Any, int, int, float, float]] = []
        self.covers: list[tuple[int, Box, bool]] = []  # (runs before it, box, is an image)
        self.image_area = 0.0  # of every image on the page, wherever drawn, within the page

    def add_run(self, container: Any, start: int, count: int, textstate: Any) -> None:
        font = textstate.font
        size = 0.0 if font is None or font.is_vertical() else textstate.fontsize
        self.runs.append((container, start, count, textstate.rise, size))

    def add_fill(self, path: Sequence[Any], ctm: Matrix, state: PaintState) -> None:
        if not self.runs or not state.opaque or state.clip is NOWHERE:
            return
        for box in filled_rectangles(path, ctm):
            self._add(box, state.clip, image=False)

    def add_image(self, stream: PDFStream, ctm: Matrix, state: PaintState | None) -> None:
        """An image painted in `state` (None: in content that may not be shown)."""
        boxes = _subpath_boxes([("m", 0, 0), ("l", 1, 0), ("l", 1, 1), ("l", 0, 1)], ctm)
        if not boxes or not boxes[0][1]:
            return  # turned or slanted: its box is larger than what it paints
        box = intersect(self.page, boxes[0][0])
        self.image_area += (box[2] - box[0]) * (box[3] - box[1])
        if self.runs and state is not None and state.opaque and state.clip is not NOWHERE and image_is_opaque(stream):
            self._add(box, state.clip, image=True)

    def _add(self, box: Box, clip: Box | None, *, image: bool) -> None:
        box = intersect(self.page, intersect(clip, box))
        if box[2] - box[0] >= MIN_COVER_SIDE and box[3] - box[1] >= MIN_COVER_SIDE:
            self.covers.append((len(self.runs), box, image))

    def covered(self) -> Iterator[Any]:
        """The glyphs (LTChar) of which one shape drawn after them hides at least
        `COVERED_SHARE` of the box."""
        if not self.covers:
            return
        grid, last = cover_grid(self.covers, is_scan(self.page, self.image_area))
        char = LTChar
        for index in range(min(last, len(self.runs))):
            container, start, count, rise, size = self.runs[index]
            for obj in container._objs[start : start + count]:
                if type(obj) is not char:
                    continue
                if covering(grid, index, (obj.x0, obj.y0, obj.x1, obj.y1), partial(_spans_ink, obj.matrix, rise, size)):
                    yield obj


CoverGrid = dict[tuple[int, int], list[tuple[int, Box]]]


def is_scan(page: Box, image_area: float) -> bool:
    """Whether pictures cover so much of the page that it is a scan (`SCAN_PAGE_SHARE`)."""
    x0, y0, x1, y1 = page
    return image_area >= SCAN_PAGE_SHARE * (x1 - x0) * (y1 - y0)


def cover_grid(covers: Sequence[tuple[int, Box, bool]], scan: bool) -> tuple[CoverGrid, int]:
    """The covers (runs drawn before each, box, is an image) indexed by position, a scan's
    pictures left out; and the most runs drawn before one of them."""
    grid: CoverGrid = {}
    last = 0
    for order, box, image in covers:
        if image and scan:
            continue
        last = max(last, order)
        for i in range(int(box[0] // COVER_CELL), int(box[2] // COVER_CELL) + 1):
            for j in range(int(box[1] // COVER_CELL), int(box[3] // COVER_CELL) + 1):
                grid.setdefault((i, j), []).append((order, box))
    return grid, last


def covering(grid: CoverGrid, index: int, glyph: Box, ink: Callable[[float, float], bool]) -> bool:
    """Whether a shape drawn after the run `index` hides at least `COVERED_SHARE` of the
    glyph box `glyph` and spans its ink (`ink(y0, y1)` of the shape)."""
    gx0, gy0, gx1, gy1 = glyph
    # A shape over at least `share` (> 1/2) of a box spans more than half its width and
    # its height, so it holds the box's centre: the centre's cell finds every candidate.
    cx, cy = (gx0 + gx1) / 2, (gy0 + gy1) / 2
    cell = grid.get((int(cx // COVER_CELL), int(cy // COVER_CELL)))
    if cell is None:
        return False
    need = COVERED_SHARE * (gx1 - gx0) * (gy1 - gy0)
    if need <= 0:
        return False
    for order, (bx0, by0, bx1, by1) in cell:
        if order <= index or not (bx0 <= cx <= bx1 and by0 <= cy <= by1):
            continue
        w = (bx1 if bx1 < gx1 else gx1) - (bx0 if bx0 > gx0 else gx0)
        h = (by1 if by1 < gy1 else gy1) - (by0 if by0 > gy0 else gy0)
        if w * h >= need and ink(by0, by1):
            return True
    return False


def _spans_ink(matrix: Matrix, rise: float, size: float, y0: float, y1: float) -> bool:
    """Whether a shape from `y0` to `y1` spans the ink band of a glyph of horizontal text
    drawn with this text rendering matrix (turned or vertical text: always)."""
    _, b, c, d, _, f = matrix
    if not size or abs(b) > 1e-6 or abs(c) > 1e-6:
        return True
    base = f + d * rise
    top = base + d * INK_BAND * size
    return y0 <= min(base, top) and max(base, top) <= y1
