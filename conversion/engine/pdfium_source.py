"""A second text source: the page model of `layout` read through PDFium (pypdfium2).

PDFium parses a page's content in C++ and gives each character with its box, its text
object (font, size, render mode, fill colour) and its place in drawing order; this module
groups the characters into lines as pdfminer's layout analysis does with the engine's
LAParams (line_overlap 0.5, char_margin 2.0, word_margin 0.1), then files them through the
same glyph pass as the pdfminer source (`layout.add_glyphs`): the same spans, styles, sizes,
glyph positions, splits and hidden-text reasons. Rulings, fills, drawn marks and images come
from the page objects (paths and images, form XObjects walked), filed by the same helpers.

What differs from the pdfminer source: text written top to bottom (vertical fonts) is read
as horizontal lines; characters of a form XObject are grouped with the page's (pdfminer
groups them inside their figure); glyph boxes take PDFium's font descent (the box is the
font size tall from there, as pdfminer builds it).
"""

from __future__ import annotations

import array
import base64
import binascii
import contextlib
import ctypes
import gc
import io
import os
import re
import struct
import threading
import time
import unicodedata
import zlib
from collections.abc import Callable, Iterator, Sequence
from ctypes import POINTER, byref, c_double, c_float, c_int, c_uint, c_ulong, c_ushort, c_void_p
from typing import Any, cast

import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdfminer.layout import LTAnno, LTChar, LTCurve, LTLine, LTRect
from pdfminer.utils import INF, apply_matrix_pt, mult_matrix

from .layout import (
    GLYPH_DESCENT_EM,
    HIDDEN_COVERED,
    MARK_MAX_SIDE,
    MAX_LAYOUT_OBJECTS_PER_PAGE,
    MAX_SECONDS_PER_PAGE,
    MAX_SLANT,
    SPACE_ADVANCE_SHARE,
    PageAborted,
    PageModel,
    PageTooComplex,
    add_glyphs,
    add_image,
    add_shape,
    finish_model,
    has_rtl,
    hidden_by_state,
    mark_headings,
    mark_tagged,
)
from .limits import LIMITS, StreamTooLarge, _inflate, _unlzw, _unrunlength, checkpoint
from .occlusion import (
    COVER_CELL,
    INK_BAND,
    MIN_COVER_SIDE,
    NOWHERE,
    cover_grid,
    covering,
    filled_rectangles,
    intersect,
    is_rectangle,
    is_scan,
)

__all__ = ["PdfiumPageParser", "open_pdfium"]

# pdfminer's LAParams as the engine sets them (layout.PageParser).
LINE_OVERLAP = 0.5
CHAR_MARGIN = 2.0
WORD_MARGIN = 0.1
# Form XObjects nested deeper than this are not walked (pdfminer's figures stop there too).
MAX_FORM_DEPTH = 32
# How far (in ems) the next glyph may start from where a glyph's advance ends for the glyph's
# box to be taken to reach it (`_advance_to_next`).
ADVANCE_TOLERANCE = 0.05
# Spaces put in one gap at most.
_MAX_SPACE_RUN = 256
# A space object whose origin is the next glyph's, to this share of an em (rounding), takes
# no room: the pen did not move over it.
_SAME_ORIGIN_EM = 0.001
# The width (ems of the font size) given to a space object's glyph that takes no room: a
# font's word space is about a quarter of an em.
_NOMINAL_SPACE_EM = 0.25
# Points within which a glyph's loose box is taken for the font's (starting at the origin, as
# tall as its text object's first glyph's): PDFium computes it in single precision.
_LOOSE_TOLERANCE = 1e-3
# Objects or characters between two polls of should_stop and the page clock (the pdfminer
# source polls every 512 layout objects; a character costs less here).
_POLL_EVERY = 4096
# Page objects walked between two counts of them on the page's budget.
_WALK_POLL_EVERY = 512

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_Box = tuple[float, float, float, float]  # x0, y0, x1, y1 bottom-up


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    """A prototype of PDFium's function `name` that takes and gives handles as plain
    integers: pypdfium2's typed prototypes build a pointer object per call, a cost paid
    per character here."""
    address = ctypes.cast(getattr(pdfium_c, name), c_void_p).value
    assert address is not None
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


class _RectF(ctypes.Structure):
    _fields_ = [("left", c_float), ("top", c_float), ("right", c_float), ("bottom", c_float)]


# A _RectF's (left, top, right, bottom) in one call: cheaper than reading its four fields.
_UNPACK_RECT = struct.Struct("4f").unpack_from


class _MatrixF(ctypes.Structure):
    _fields_ = [("a", c_float), ("b", c_float), ("c", c_float), ("d", c_float), ("e", c_float), ("f", c_float)]


_count_chars = _fn("FPDFText_CountChars", c_int, c_void_p)
_get_text = _fn("FPDFText_GetText", c_int, c_void_p, c_int, c_int, c_void_p)
_get_unicode = _fn("FPDFText_GetUnicode", c_uint, c_void_p, c_int)
_is_generated = _fn("FPDFText_IsGenerated", c_int, c_void_p, c_int)
_unmapped = _fn("FPDFText_HasUnicodeMapError", c_int, c_void_p, c_int)
_text_object = _fn("FPDFText_GetTextObject", c_void_p, c_void_p, c_int)
_loose_box = _fn("FPDFText_GetLooseCharBox", c_int, c_void_p, c_int, POINTER(_RectF))
_char_origin = _fn("FPDFText_GetCharOrigin", c_int, c_void_p, c_int, POINTER(c_double), POINTER(c_double))
_glyph_width = _fn("FPDFFont_GetGlyphWidth", c_int, c_void_p, c_uint, c_float, POINTER(c_float))
_font_descent = _fn("FPDFFont_GetDescent", c_int, c_void_p, c_float, POINTER(c_float))
_char_size = _fn("FPDFText_GetFontSize", c_double, c_void_p, c_int)
_char_matrix = _fn("FPDFText_GetMatrix", c_int, c_void_p, c_int, POINTER(_MatrixF))
_render_mode = _fn("FPDFTextObj_GetTextRenderMode", c_int, c_void_p)
_text_font = _fn("FPDFTextObj_GetFont", c_void_p, c_void_p)
_base_font_name = _fn("FPDFFont_GetBaseFontName", c_ulong, c_void_p, c_void_p, c_ulong)
_fill_color = _fn(
    "FPDFPageObj_GetFillColor", c_int, c_void_p, POINTER(c_uint), POINTER(c_uint), POINTER(c_uint), POINTER(c_uint)
)
_mcid = _fn("FPDFPageObj_GetMarkedContentID", c_int, c_void_p)
_count_objects = _fn("FPDFPage_CountObjects", c_int, c_void_p)
_page_object = _fn("FPDFPage_GetObject", c_void_p, c_void_p, c_int)
_form_count = _fn("FPDFFormObj_CountObjects", c_int, c_void_p)
_form_object = _fn("FPDFFormObj_GetObject", c_void_p, c_void_p, c_ulong)
_object_type = _fn("FPDFPageObj_GetType", c_int, c_void_p)
_object_matrix = _fn("FPDFPageObj_GetMatrix", c_int, c_void_p, POINTER(_MatrixF))
_object_bounds = _fn(
    "FPDFPageObj_GetBounds", c_int, c_void_p, POINTER(c_float), POINTER(c_float), POINTER(c_float), POINTER(c_float)
)
_transparent = _fn("FPDFPageObj_HasTransparency", c_int, c_void_p)
_count_marks = _fn("FPDFPageObj_CountMarks", c_int, c_void_p)
_get_mark = _fn("FPDFPageObj_GetMark", c_void_p, c_void_p, c_ulong)
_mark_name = _fn("FPDFPageObjMark_GetName", c_int, c_void_p, c_void_p, c_ulong, POINTER(c_ulong))
_clip_path = _fn("FPDFPageObj_GetClipPath", c_void_p, c_void_p)
_clip_count = _fn("FPDFClipPath_CountPaths", c_int, c_void_p)
_clip_segments = _fn("FPDFClipPath_CountPathSegments", c_int, c_void_p, c_int)
_clip_segment = _fn("FPDFClipPath_GetPathSegment", c_void_p, c_void_p, c_int, c_int)
_path_segments = _fn("FPDFPath_CountSegments", c_int, c_void_p)
_path_segment = _fn("FPDFPath_GetPathSegment", c_void_p, c_void_p, c_int)
_segment_point = _fn("FPDFPathSegment_GetPoint", c_int, c_void_p, POINTER(c_float), POINTER(c_float))
_segment_type = _fn("FPDFPathSegment_GetType", c_int, c_void_p)
_segment_close = _fn("FPDFPathSegment_GetClose", c_int, c_void_p)
_draw_mode = _fn("FPDFPath_GetDrawMode", c_int, c_void_p, POINTER(c_int), POINTER(c_int))
_stroke_width = _fn("FPDFPageObj_GetStrokeWidth", c_int, c_void_p, POINTER(c_float))
_media_box = _fn(
    "FPDFPage_GetMediaBox", c_int, c_void_p, POINTER(c_float), POINTER(c_float), POINTER(c_float), POINTER(c_float)
)
_rotation = _fn("FPDFPage_GetRotation", c_int, c_void_p)
_rendered_picture = _fn("FPDFImageObj_GetRenderedBitmap", c_void_p, c_void_p, c_void_p, c_void_p)
_pixel_size = _fn("FPDFImageObj_GetImagePixelSize", c_int, c_void_p, POINTER(c_uint), POINTER(c_uint))
_bitmap_format = _fn("FPDFBitmap_GetFormat", c_int, c_void_p)
_bitmap_width = _fn("FPDFBitmap_GetWidth", c_int, c_void_p)
_bitmap_height = _fn("FPDFBitmap_GetHeight", c_int, c_void_p)
_bitmap_stride = _fn("FPDFBitmap_GetStride", c_int, c_void_p)
_bitmap_buffer = _fn("FPDFBitmap_GetBuffer", c_void_p, c_void_p)
_bitmap_destroy = _fn("FPDFBitmap_Destroy", None, c_void_p)
_BGRA = pdfium_c.FPDFBitmap_BGRA
# Formats without alpha: every pixel painted.
_OPAQUE_FORMATS = frozenset({pdfium_c.FPDFBitmap_BGR, pdfium_c.FPDFBitmap_BGRx, pdfium_c.FPDFBitmap_Gray})

# --- every character of a text page in one call (`_pdfium_chars.c`) --------------------
#
# The characters' text objects, loose boxes and origins cost a ctypes call each per
# character from Python (about 0.3 to 0.45 us a call, more than PDFium's work behind it).
# The helper makes those calls in C and fills arrays; built by `make helpers` (any C
# compiler, no PDFium header: it is given the addresses of pypdfium2's loaded functions).
# Without it, `_chars_by_calls` reads the same values with the calls from Python.

HELPER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pdfium_chars.so")
# The arrays' layout the helper must answer (`svcx_pdfium_chars_abi`, ABI in the C file).
_HELPER_ABI = 5
# Flags of a character (the C file's CHAR_*).
_CHAR_GENERATED, _CHAR_OBJECT_INFO, _CHAR_MATRIX, _CHAR_UNMAPPED = 1, 2, 4, 8
# A flag byte -> 1 where the character is unmapped, else 0 (`bytes.translate`).
_UNMAPPED_BYTES = bytes(1 if flag & _CHAR_UNMAPPED else 0 for flag in range(256))
# Values per character in the helper's `states` (the C file's STATE_FIELDS).
_STATE_FIELDS = 7


class _PdfiumFunctions(ctypes.Structure):
    """The PDFium functions the helper calls (the C file's `pdfium_functions`, same order)."""

    _fields_ = [
        ("FPDFText_GetUnicode", c_void_p),
        ("FPDFText_IsGenerated", c_void_p),
        ("FPDFText_GetTextObject", c_void_p),
        ("FPDFText_GetLooseCharBox", c_void_p),
        ("FPDFText_GetCharOrigin", c_void_p),
        ("FPDFText_GetFontSize", c_void_p),
        ("FPDFText_GetMatrix", c_void_p),
        ("FPDFPath_GetPathSegment", c_void_p),
        ("FPDFPathSegment_GetType", c_void_p),
        ("FPDFPathSegment_GetPoint", c_void_p),
        ("FPDFPathSegment_GetClose", c_void_p),
        ("FPDFPageObj_GetFillColor", c_void_p),
        ("FPDFTextObj_GetTextRenderMode", c_void_p),
        ("FPDFTextObj_GetFont", c_void_p),
        ("FPDFPageObj_GetMarkedContentID", c_void_p),
        ("FPDFText_HasUnicodeMapError", c_void_p),
    ]


class _LinesArgs(ctypes.Structure):
    """What `svcx_pdfium_lines` reads and fills (the C file's `lines_args`, same order): the
    addresses of arrays, counts and parameters (`_HelperChars.glyphs`)."""

    _fields_ = [
        ("n", c_int),
        ("codes", c_void_p),
        ("flags", c_void_p),
        ("objects", c_void_p),
        ("boxes", c_void_p),
        ("origins", c_void_p),
        ("runs", c_int),
        ("starts", c_void_p),
        ("sizes", c_void_p),
        ("descents", c_void_p),
        ("upright", c_void_p),
        ("orders", c_void_p),
        ("spaces", c_int),
        ("space_orders", c_void_p),
        ("space_xs", c_void_p),
        ("space_ys", c_void_p),
        ("ctm", c_double * 6),
        ("translate", c_int),
        ("rtl", c_int),
        ("group", c_int),
        ("line_overlap", c_double),
        ("char_margin", c_double),
        ("word_margin", c_double),
        ("loose", c_double),
        ("glyph_starts", c_void_p),
        ("glyph_runs", c_void_p),
        ("glyph_chars", c_void_p),
        ("glyph_boxes", c_void_p),
        ("glyph_spaces", c_void_p),
        ("appended", c_void_p),
        ("line_boxes", c_void_p),
        ("glyphs", c_int),
        ("lines", c_int),
    ]


class _Helper:
    """The helper's functions, PDFium's functions bound (`_load_helper`)."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._functions = _PdfiumFunctions(
            *(ctypes.cast(getattr(pdfium_c, name), c_void_p).value for name, *_ in _PdfiumFunctions._fields_)
        )
        self._functions_ref = byref(self._functions)
        self._chars = library.svcx_pdfium_chars
        self._chars.restype = c_int
        # (the functions, the text page, n, then the nine arrays)
        self._chars.argtypes = (POINTER(_PdfiumFunctions), c_void_p, c_int, *(c_void_p,) * 9)
        self._path = library.svcx_pdfium_path
        self._path.restype = c_int
        # (the functions, the path object, n, then the four arrays)
        self._path.argtypes = (POINTER(_PdfiumFunctions), c_void_p, c_int, *(c_void_p,) * 4)
        self.runs = library.svcx_pdfium_runs
        self.runs.restype = c_int
        # (n, then the codes, flags, text objects and the run starts filled)
        self.runs.argtypes = (c_int, *(c_void_p,) * 4)
        self.lines = library.svcx_pdfium_lines
        self.lines.restype = c_int
        self.lines.argtypes = (POINTER(_LinesArgs),)

    def chars(self, textpage: int, n: int, *buffers: int) -> int:
        """`svcx_pdfium_chars` into the buffers at these addresses."""
        return int(self._chars(self._functions_ref, textpage, n, *buffers))

    def path(self, obj: int, n: int) -> tuple[list[float], list[float], list[int], list[int]]:
        """The x, y, type and closing flag of each of the `n` segments of a path object."""
        buffer = bytearray(10 * n)
        self._path(self._functions_ref, obj, n, *_addresses(buffer, (0, 4 * n, 8 * n, 9 * n)))
        view = memoryview(buffer)
        return (
            cast(list[float], view[: 4 * n].cast("f").tolist()),
            cast(list[float], view[4 * n : 8 * n].cast("f").tolist()),
            view[8 * n : 9 * n].cast("b").tolist(),
            view[9 * n :].tolist(),
        )


def _addresses(buffer: bytearray, offsets: tuple[int, ...]) -> list[int]:
    """The addresses of these offsets into `buffer` (valid while it lives, unresized)."""
    base = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer)) if buffer else 0
    return [base + offset for offset in offsets]


def _load_helper(path: str) -> _Helper | None:
    """The helper, None where the library is not built (or not loadable, or built from
    another layout of the arrays)."""
    try:
        library = ctypes.CDLL(path)
        abi = library.svcx_pdfium_chars_abi
    except (OSError, AttributeError):
        return None
    abi.restype = c_int
    abi.argtypes = []
    if abi() != _HELPER_ABI:
        return None
    return _Helper(library)


_HELPER = _load_helper(HELPER_PATH)


class _Chars:
    """What the source reads of each character of a text page: its text object (`objects`)
    and loose box (`loose_boxes`), read for every character by the Python loop; whether PDFium
    generated it, its origin, and its text object's font size and matrix (read where they are
    needed)."""

    __slots__ = (
        "_fill",
        "_fill_refs",
        "_matrix",
        "_x",
        "_y",
        "bottoms",
        "lefts",
        "n",
        "objects",
        "rights",
        "textpage",
        "tops",
    )

    def __init__(self, textpage: int, n: int) -> None:
        self.textpage = textpage
        self.n = n
        self._x, self._y, self._matrix = c_double(), c_double(), _MatrixF()  # (the calls' buffers)
        self._fill = (c_uint(), c_uint(), c_uint(), c_uint())
        self._fill_refs = tuple(byref(v) for v in self._fill)
        self.objects: Sequence[int] = []
        self.lefts: list[float] = []
        self.tops: list[float] = []
        self.rights: list[float] = []
        self.bottoms: list[float] = []

    def loose_boxes(self) -> tuple[list[float], list[float], list[float], list[float]]:
        """The characters' loose boxes: their lefts, tops, rights and bottoms."""
        return self.lefts, self.tops, self.rights, self.bottoms

    def unicodes(self) -> list[int]:
        return [_get_unicode(self.textpage, i) for i in range(self.n)]

    def generated(self, i: int) -> bool:
        return bool(_is_generated(self.textpage, i))

    def unmapped(self) -> list[int]:
        """The characters whose font maps their code to no text (PDFium gives the code)."""
        textpage = self.textpage
        return [i for i in range(self.n) if _unmapped(textpage, i)]

    def origin(self, i: int) -> tuple[float, float]:
        """The character's origin, (0, 0) where PDFium has none."""
        x, y = self._x, self._y
        x.value = y.value = 0.0
        _char_origin(self.textpage, i, byref(x), byref(y))
        return x.value, y.value

    def object_state(self, i: int, obj: int) -> tuple[tuple[int, int, int, int, int, int], int, int]:
        """Of the character's text object `obj`: its render mode, whether it has a fill colour
        and that colour's r, g, b, a (0 without), its font handle (0: none), its MCID."""
        r, g, b, a = self._fill
        filled = _fill_color(obj, *self._fill_refs)
        key = (_render_mode(obj), filled, r.value, g.value, b.value, a.value)
        if not filled:
            key = (key[0], 0, 0, 0, 0, 0)
        return key, _text_font(obj) or 0, _mcid(obj)

    def object_info(self, i: int) -> tuple[float, tuple[float, float, float, float] | None]:
        """The character's font size, and a to d of its matrix (None where PDFium has none)."""
        size = _char_size(self.textpage, i)
        matrix = self._matrix
        if not _char_matrix(self.textpage, i, byref(matrix)):
            return size, None
        return size, (matrix.a, matrix.b, matrix.c, matrix.d)


def _chars_by_calls(textpage: int, n: int) -> _Chars:
    """The characters read with a ctypes call per character and value (no helper)."""
    chars = _Chars(textpage, n)
    rect = _RectF()
    rect_ref = byref(rect)
    unpack_rect = _UNPACK_RECT
    text_object, loose_box = _text_object, _loose_box
    objects = cast(list[int], chars.objects)
    lefts, tops, rights, bottoms = chars.lefts, chars.tops, chars.rights, chars.bottoms
    for i in range(n):
        objects.append(text_object(textpage, i) or 0)
        if loose_box(textpage, i, rect_ref):
            left, top, right, bottom = unpack_rect(rect)
        else:
            left = top = right = bottom = 0.0  # (as the helper leaves it)
        lefts.append(left)
        tops.append(top)
        rights.append(right)
        bottoms.append(bottom)
    return chars


def char_offsets(n: int) -> tuple[int, ...]:
    """Where the arrays of `svcx_pdfium_chars` lie in the one buffer of a page of `n`
    characters, in the order of its arguments: unicodes, flags, handles, boxes, origins,
    sizes, matrices, states, font handles (the handles 8 bytes each, whatever a pointer's
    size; each array aligned to its type). The buffer is 113 * n bytes."""
    return (72 * n, 112 * n, 0, 32 * n, 8 * n, 24 * n, 48 * n, 76 * n, 104 * n)


class _HelperChars(_Chars):
    """The characters as the helper copied them in one call. Their text objects are a view of
    the helper's array, and their loose boxes are made into lists when asked for: where the
    helper makes the page's glyphs (`_PageText._read_by_helper`), only the first character of
    each run is read."""

    __slots__ = (
        "_addresses",
        "_buffer",
        "_flags",
        "_fonts",
        "_matrices",
        "_origins",
        "_sizes",
        "_states",
        "_unicodes",
        "helper",
    )

    def __init__(self, textpage: int, n: int, helper: _Helper, buffer: bytearray | None = None) -> None:
        """The characters of `textpage` read by the helper; or, given `buffer`, those its arrays
        hold (laid out as `char_offsets` says; tests build pages so)."""
        super().__init__(textpage, n)
        self.helper = helper
        self._buffer = bytearray(113 * n) if buffer is None else buffer  # (`glyphs` reads it too)
        self._addresses = _addresses(self._buffer, char_offsets(n))
        if buffer is None:
            helper.chars(textpage, n, *self._addresses)
        view = memoryview(self._buffer)
        self._unicodes = view[72 * n : 76 * n].cast("I")
        self._flags = view[112 * n :]
        self._states = view[76 * n : 104 * n].cast("i")
        fonts = view[104 * n : 112 * n]
        self._fonts = fonts.cast("Q") if ctypes.sizeof(c_void_p) == 8 else fonts.cast("I")[:n]
        handles = view[: 8 * n]
        self.objects = handles.cast("Q") if ctypes.sizeof(c_void_p) == 8 else handles.cast("I")[:n]
        self._origins = view[8 * n : 24 * n].cast("d")
        self._sizes = view[24 * n : 32 * n].cast("d")
        self._matrices = view[48 * n : 72 * n].cast("f")

    def loose_boxes(self) -> tuple[list[float], list[float], list[float], list[float]]:
        n = self.n
        box = memoryview(self._buffer)[32 * n : 48 * n].cast("f")
        return (
            cast(list[float], box[:n].tolist()),
            cast(list[float], box[n : 2 * n].tolist()),
            cast(list[float], box[2 * n : 3 * n].tolist()),
            cast(list[float], box[3 * n :].tolist()),
        )

    def unicodes(self) -> list[int]:
        return self._unicodes.tolist()

    def generated(self, i: int) -> bool:
        return bool(self._flags[i] & _CHAR_GENERATED)

    def unmapped(self) -> list[int]:
        marks = self._flags.tobytes().translate(_UNMAPPED_BYTES)
        if b"\x01" not in marks:
            return []
        return [i for i, mark in enumerate(marks) if mark]

    def origin(self, i: int) -> tuple[float, float]:
        origins = self._origins
        return origins[i], origins[self.n + i]

    def object_info(self, i: int) -> tuple[float, tuple[float, float, float, float] | None]:
        flag = self._flags[i]
        if not flag & _CHAR_OBJECT_INFO:
            return super().object_info(i)  # (a text object not first read here)
        if not flag & _CHAR_MATRIX:
            return self._sizes[i], None
        m = self._matrices
        return self._sizes[i], (m[6 * i], m[6 * i + 1], m[6 * i + 2], m[6 * i + 3])

    def object_state(self, i: int, obj: int) -> tuple[tuple[int, int, int, int, int, int], int, int]:
        if not self._flags[i] & _CHAR_OBJECT_INFO:
            return super().object_state(i, obj)
        filled, r, g, b, a, mode, mcid = self._states[_STATE_FIELDS * i : _STATE_FIELDS * (i + 1)]
        key = (mode, filled, r, g, b, a) if filled else (mode, 0, 0, 0, 0, 0)
        return key, self._fonts[i], mcid

    def runs(self, codes: bytes) -> list[int]:
        """Where each run of characters of one text object starts, the characters the glyph
        pass skips left out (`svcx_pdfium_runs`); `codes`: the page's text in UTF-32."""
        n = self.n
        starts = array.array("i", bytes(4 * n))
        _, flags, objects, *_ = self._addresses  # (the order of `svcx_pdfium_chars`'s arrays)
        count = self.helper.runs(n, _bytes_address(codes), flags, objects, starts.buffer_info()[0])
        return starts[:count].tolist()

    def glyphs(
        self,
        codes: bytes,
        starts: list[int],
        infos: list[_TextObject],
        spaces: list[tuple[int, float, float]],
        ctm: Matrix,
        rtl: bool,
        group: bool,
    ) -> _Glyphs | None:
        """The glyphs of the page and, with `group`, its lines (`svcx_pdfium_lines`), from the
        runs `starts` of text objects `infos`; None where the helper leaves the page to the
        Python loop (a count it would not compute as Python does)."""
        n = self.n
        args = _LinesArgs()
        args.n = n
        _, flags, objects, boxes, origins, *_ = self._addresses
        args.codes, args.flags, args.objects = _bytes_address(codes), flags, objects
        args.boxes, args.origins = boxes, origins
        run_arrays = (
            array.array("i", starts),
            array.array("d", [info.size for info in infos]),
            array.array("d", [info.descent for info in infos]),
            array.array("B", [info.upright for info in infos]),
            array.array("i", [info.order for info in infos]),
        )
        args.runs = len(starts)
        args.starts, args.sizes, args.descents, args.upright, args.orders = (a.buffer_info()[0] for a in run_arrays)
        space_arrays = (
            array.array("i", [sp[0] for sp in spaces]),
            array.array("d", [sp[1] for sp in spaces]),
            array.array("d", [sp[2] for sp in spaces]),
        )
        args.spaces = len(spaces)
        args.space_orders, args.space_xs, args.space_ys = (a.buffer_info()[0] for a in space_arrays)
        args.ctm = (c_double * 6)(*ctm)
        args.translate = ctm[:4] == (1.0, 0.0, 0.0, 1.0)
        args.rtl, args.group = rtl, group
        args.line_overlap, args.char_margin, args.word_margin = LINE_OVERLAP, CHAR_MARGIN, WORD_MARGIN
        args.loose = _LOOSE_TOLERANCE
        out = _Glyphs(n)
        args.glyph_starts, args.glyph_runs, args.glyph_chars = (
            out.starts.buffer_info()[0],
            out.runs.buffer_info()[0],
            out.chars.buffer_info()[0],
        )
        args.glyph_boxes, args.glyph_spaces = out.boxes.buffer_info()[0], out.spaces.buffer_info()[0]
        args.appended, args.line_boxes = out.appended.buffer_info()[0], out.line_boxes.buffer_info()[0]
        if self.helper.lines(byref(args)) < 0:
            return None
        out.count, out.lines = args.glyphs, args.lines
        return out


# Values per glyph in `_Glyphs.boxes` (the C file's GLYPH_FIELDS).
_GLYPH_FIELDS = 6


class _Glyphs:
    """What `svcx_pdfium_lines` gives of a page (the C file's `lines_args`, out): per glyph its
    first character, run, count of characters, box (x0, y0, x1, y1, x1 as first made, and
    where the spaces that open its line start) and the word spaces before it in its line (k
    >= 0), or -1 - k where it opens a line after k spaces; per character whether it joins
    the glyph before (a ligature); per line its box. `count` glyphs and `lines` lines."""

    __slots__ = ("appended", "boxes", "chars", "count", "line_boxes", "lines", "runs", "spaces", "starts")

    def __init__(self, n: int) -> None:
        self.starts = array.array("i", bytes(4 * n))
        self.runs = array.array("i", bytes(4 * n))
        self.chars = array.array("i", bytes(4 * n))
        self.boxes = array.array("d", bytes(8 * _GLYPH_FIELDS * n))
        self.spaces = array.array("i", bytes(4 * n))
        self.appended = array.array("B", bytes(n))
        self.line_boxes = array.array("d", bytes(32 * n))
        self.count = self.lines = 0


def _bytes_address(data: bytes) -> int:
    """The address of the bytes of `data` (valid while it lives)."""
    return ctypes.cast(ctypes.c_char_p(data), c_void_p).value or 0


def _read_chars(textpage: int, n: int) -> _Chars:
    """The characters of a text page: through the helper where it is built."""
    if _HELPER is not None:
        return _HelperChars(textpage, n, _HELPER)
    return _chars_by_calls(textpage, n)


_TEXT, _PATH, _IMAGE, _FORM = (
    pdfium_c.FPDF_PAGEOBJ_TEXT,
    pdfium_c.FPDF_PAGEOBJ_PATH,
    pdfium_c.FPDF_PAGEOBJ_IMAGE,
    pdfium_c.FPDF_PAGEOBJ_FORM,
)
_LINETO, _BEZIERTO, _MOVETO = pdfium_c.FPDF_SEGMENT_LINETO, pdfium_c.FPDF_SEGMENT_BEZIERTO, pdfium_c.FPDF_SEGMENT_MOVETO


_SURROGATE = re.compile("[\ud800-\udfff]")
# The two halves of a character beyond the Basic Multilingual Plane (UTF-16).
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
# Line breaks: PDFium inserts them between the lines it sees (FPDFText_IsGenerated).
_BREAKS = frozenset("\r\n")


def _joined_pair(pair: re.Match[str]) -> str:
    """The character whose UTF-16 halves `pair` matched, and a line break in the place of
    its second half (the text keeps one character per character of the text page)."""
    halves = pair[0]
    return chr(0x10000 + ((ord(halves[0]) - 0xD800) << 10) + (ord(halves[1]) - 0xDC00)) + "\n"


def _handle(obj: Any) -> int:
    """The address behind one of pypdfium2's handles."""
    return ctypes.cast(obj.raw, c_void_p).value or 0


def _box(m: Matrix, x0: float, y0: float, x1: float, y1: float) -> _Box:
    """The bounding box of a rectangle's corners under `m`."""
    pts = [apply_matrix_pt(m, (x, y)) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def _page_frame(page: int) -> tuple[Matrix, float, float]:
    """pdfminer's frame of a page: the matrix from user space to a page whose media box
    starts at the origin, turned by /Rotate, and that page's width and height."""
    left, bottom, right, top = c_float(), c_float(), c_float(), c_float()
    if _media_box(page, byref(left), byref(bottom), byref(right), byref(top)):
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
    else:
        x0, y0, x1, y1 = 0.0, 0.0, 612.0, 792.0
    rotate = (_rotation(page) % 4) * 90
    ctm: Matrix
    if rotate == 90:
        ctm = (0.0, -1.0, 1.0, 0.0, -y0, x1)
    elif rotate == 180:
        ctm = (-1.0, 0.0, 0.0, -1.0, x1, y1)
    elif rotate == 270:
        ctm = (0.0, 1.0, -1.0, 0.0, y1, -x0)
    else:
        ctm = (1.0, 0.0, 0.0, 1.0, -x0, -y0)
    ax, ay = apply_matrix_pt(ctm, (x0, y0))
    bx, by = apply_matrix_pt(ctm, (x1, y1))
    return ctm, abs(ax - bx), abs(ay - by)


class _TextObject:
    """What the characters of one text object share."""

    __slots__ = ("color", "descent", "font", "fontname", "heading", "order", "reason", "size", "tagged", "upright")

    def __init__(self, fontname: str, size: float, reason: str, heading: int, upright: bool, descent: float) -> None:
        self.fontname = fontname
        self.size = size
        self.reason = reason
        self.heading = heading
        self.upright = upright
        self.descent = descent  # points from the baseline down to the foot of a glyph's box
        self.order = -1  # its place among the page's objects in drawing order (set by the walk)
        self.font = 0  # PDFium's handle of its font (0: none known)
        self.tagged = False  # a tagged PDF's structure tree holds its text
        self.color = -1  # its fill colour as 0xRRGGBB (-1: none)


# The text object of no glyph yet (`_PageText.read` starts with it).
_NO_OBJECT = _TextObject("", 0.0, "", 0, True, 0.0)


def _font_name(font: int) -> str:
    """The base font name of a font handle ("unknown" for none)."""
    if not font:
        return "unknown"
    size = _base_font_name(font, None, 0)
    if size <= 1:
        return "unknown"
    buffer = ctypes.create_string_buffer(size)
    _base_font_name(font, buffer, size)
    return buffer.value.decode("utf-8", "replace")


def _fill_rgba(obj: int) -> tuple[float, float, float, float] | None:
    r, g, b, a = c_uint(), c_uint(), c_uint(), c_uint()
    if not _fill_color(obj, byref(r), byref(g), byref(b), byref(a)):
        return None
    return r.value / 255, g.value / 255, b.value / 255, a.value / 255


def _optional(obj: int) -> bool:
    """Whether an object lies in optional content (a layer that may be switched off)."""
    count = _count_marks(obj)
    if count <= 0:
        return False
    buffer = ctypes.create_string_buffer(64)
    used = c_ulong()
    for i in range(count):
        mark = _get_mark(obj, i)
        if mark and _mark_name(mark, buffer, 64, byref(used)):
            name = buffer.raw[: max(0, used.value - 2)].decode("utf-16-le", "replace")
            if name == "OC":
                return True
    return False


# A segment PDFium does not give (the C file's NO_SEGMENT).
_NO_SEGMENT = -2


def _segments_by_calls(obj: int, n: int) -> tuple[list[float], list[float], list[int], list[int]]:
    """`_Helper.path` read with a ctypes call per segment and value (no helper)."""
    xs: list[float] = []
    ys: list[float] = []
    kinds: list[int] = []
    closes: list[int] = []
    x, y = c_float(), c_float()
    x_ref, y_ref = byref(x), byref(y)
    get_segment, kind_of, point_of, closes_of = _path_segment, _segment_type, _segment_point, _segment_close
    for i in range(n):
        segment = get_segment(obj, i)
        if not segment:
            kinds.append(_NO_SEGMENT)
            closes.append(0)
        else:
            kinds.append(kind_of(segment))
            point_of(segment, x_ref, y_ref)  # (a failure leaves the previous point, as in C)
            closes.append(1 if closes_of(segment) else 0)
        xs.append(x.value)
        ys.append(y.value)
    return xs, ys, kinds, closes


def _path_points(obj: int) -> list[list[tuple[str, float, float]]]:
    """The subpaths of a path object in its own space: (op, x, y) with op m, l, c or h
    (a closing segment adds an "h")."""
    n = _path_segments(obj)
    if n <= 0:
        return []
    xs, ys, kinds, closes = _HELPER.path(obj, n) if _HELPER is not None else _segments_by_calls(obj, n)
    subpaths: list[list[tuple[str, float, float]]] = []
    current: list[tuple[str, float, float]] = []
    for x, y, kind, close in zip(xs, ys, kinds, closes, strict=True):
        if kind == _NO_SEGMENT:
            continue
        if kind == _MOVETO or not subpaths:
            current = [("m", x, y)]
            subpaths.append(current)
        else:
            current.append(("c" if kind == _BEZIERTO else "l", x, y))
        if close:
            current.append(("h", current[0][1], current[0][2]))
    return subpaths


def _curve(linewidth: float, pts: list[tuple[float, float]], stroke: bool, fill: bool, color: Any) -> LTCurve:
    """pdfminer's `LTCurve(linewidth, pts, stroke, fill, False, None, color)`, its bounds
    taken in C: `get_bound` loops in Python, a cost on paths of thousands of points (maps).
    (From get_bound's start, INF, as it does: the same bounds, a NaN passed over.)"""
    shape = LTCurve.__new__(LTCurve)
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    shape.set_bbox((min(INF, *xs), min(INF, *ys), max(-INF, *xs), max(-INF, *ys)))
    shape.pts = pts
    shape.linewidth = linewidth
    shape.stroke = stroke
    shape.fill = fill
    shape.evenodd = False
    shape.stroking_color = None
    shape.non_stroking_color = color
    shape.original_path = None
    shape.dashing_style = None
    return shape


def _clip_box(obj: int, to_page: Matrix) -> _Box | None:
    """The box of an object's clip in page space: None where nothing clips, an empty box
    where the clip is not a set of rectangles (a shape under it covers nothing)."""
    clip = _clip_path(obj)
    if not clip:
        return None
    paths = _clip_count(clip)
    if paths <= 0:
        return None
    box: _Box | None = None
    x, y = c_float(), c_float()
    for p in range(paths):
        count = _clip_segments(clip, p)
        if count <= 0:
            # A text clip or an empty path: nothing that can be told.
            return NOWHERE
        pts = []
        for s in range(count):
            segment = _clip_segment(clip, p, s)
            if not segment or _segment_type(segment) == _BEZIERTO:
                return NOWHERE
            _segment_point(segment, byref(x), byref(y))
            pts.append(apply_matrix_pt(to_page, (x.value, y.value)))
        if not is_rectangle(pts):
            return NOWHERE
        part = (min(q[0] for q in pts), min(q[1] for q in pts), max(q[0] for q in pts), max(q[1] for q in pts))
        box = part if box is None else intersect(box, part)
    return box


# --- the decoding budgets, checked before PDFium reads a page --------------------------
#
# PDFium decodes and parses a page's streams in C++ when the page is loaded (its content,
# the forms it draws, its fonts' programs and CMaps), with no budget of ours and out of
# reach of the page clock. Each such stream is first decoded here, from pikepdf's reading
# of the file, under the budgets the pdfminer source decodes it under (`limits`): a stream
# past its budget stops the page as it does there, and what PDFium then parses is bounded.

# Bytes of content one page's parse may read, a form counted at each of its draws: the work
# of PDFium's parse of a page grows with it (a form drawing a form ten times, nine deep,
# is a billion draws of a few bytes). The stream budget: a page may draw its largest
# stream once, or many small forms many times.
MAX_PAGE_PARSE_BYTES = LIMITS.max_decoded_bytes
# A picture drawn over text is rendered (`_opaque_picture`) only under this many pixels: its
# bitmap (4 bytes a pixel) stays under the stream budget. A larger one covers nothing.
MAX_RENDERED_PIXELS = LIMITS.max_decoded_bytes // 4
_PARSE_REASON = f"more than {MAX_PAGE_PARSE_BYTES // (1024 * 1024)} MiB of content, forms counted at each draw"
# A form drawn: its name, then `Do`, with white space (NUL is white space in PDF) or comments
# between them, as PDFium's parser reads them.
_DRAWN = re.compile(rb"/([^\s\x00/\[\]<>(){}%]+)(?:[\s\x00]|%[^\r\n]*)*Do(?![^\s\x00/\[\]<>(){}%])")
_DEPTH_REASON = f"forms nested more than {MAX_FORM_DEPTH} deep"
_HEX_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_FONT_STREAMS = ("/FontFile", "/FontFile2", "/FontFile3")
_CMAP_KEYS = ("/ToUnicode", "/Encoding")


def _decoded(stream: pikepdf.Stream, limit: int) -> bytes:
    """The stream's data through its expanding filters, at most `limit` bytes of it (the
    predictors, which never expand, are left out). Data a filter cannot read ends there.

    Raises:
        StreamTooLarge: the data passes `limit`.
    """
    data = bytes(stream.read_raw_bytes())
    filters = stream.get("/Filter")
    chain = list(filters) if isinstance(filters, pikepdf.Array) else [filters] if filters is not None else []
    for item in chain:
        name = str(item)
        try:
            if name in ("/FlateDecode", "/Fl"):
                data = _inflate(data, limit)
            elif name in ("/LZWDecode", "/LZW"):
                data = _unlzw(data, limit)
            elif name in ("/RunLengthDecode", "/RL"):
                data = _unrunlength(data, limit)
            elif name in ("/ASCIIHexDecode", "/AHx"):
                hexdigits = re.sub(rb"[^0-9A-Fa-f]", b"", data.split(b">", 1)[0])
                data = binascii.unhexlify(hexdigits + b"0" * (len(hexdigits) % 2))
            elif name in ("/ASCII85Decode", "/A85"):
                body = re.sub(rb"\s", b"", data.split(b"~>", 1)[0])
                data = base64.a85decode(body.removeprefix(b"<~"))
            else:
                break  # an image's filter: not data PDFium parses as content
        except (zlib.error, ValueError, binascii.Error, EOFError, IndexError):
            break
    if len(data) > limit:
        raise StreamTooLarge(limit)
    return data


def _name(raw: bytes) -> str:
    return "/" + _HEX_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode("latin-1")


class _Budgets:
    """The decoding budgets of the PDFium source, checked on pikepdf's reading of the file
    before PDFium loads a page. A stream shared by pages (a font, a form) is decoded once."""

    def __init__(self, structure: pikepdf.Pdf) -> None:
        self._structure = structure
        self._fonts: set[tuple[int, int]] = set()
        # A form's bytes of content with those of the forms it draws, each counted per draw.
        self._forms: dict[tuple[int, int], int] = {}
        self._page_xobjects: pikepdf.Dictionary | None = None

    def check(self, number: int) -> None:
        """Decode what PDFium decodes to load page `number` under the budgets.

        Raises:
            StreamTooLarge: a stream decodes past its budget.
            PageTooComplex: the page's content, forms counted per draw, passes
                `MAX_PAGE_PARSE_BYTES`.
            PageAborted: should_stop asked to stop.
        """
        page = self._structure.pages[number - 1].obj
        resources = _inherited(page, "/Resources")
        # PDFium looks a name a form's resources lack up in the page's (its fallback).
        page_xobjects = resources.get("/XObject") if isinstance(resources, pikepdf.Dictionary) else None
        self._page_xobjects = page_xobjects if isinstance(page_xobjects, pikepdf.Dictionary) else None
        contents = page.get("/Contents")
        streams = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
        data = b"".join(
            _decoded(stream, LIMITS.max_decoded_bytes) for stream in streams if isinstance(stream, pikepdf.Stream)
        )
        total = self._content(data, resources, 0, set())
        if total > MAX_PAGE_PARSE_BYTES:
            raise PageTooComplex(_PARSE_REASON)

    def _content(self, data: bytes, resources: Any, depth: int, open_forms: set[tuple[int, int]]) -> int:
        """Bytes of content `data` makes PDFium parse, with the fonts and forms of `resources`
        it uses decoded under their budgets."""
        checkpoint()
        total = len(data)
        if not isinstance(resources, pikepdf.Dictionary):
            return total
        fonts = resources.get("/Font")
        if isinstance(fonts, pikepdf.Dictionary):
            for font in fonts.values():
                self._font(font, depth)
        if b"Do" not in data:
            return total
        own = resources.get("/XObject")
        tables = [t for t in (own, self._page_xobjects) if isinstance(t, pikepdf.Dictionary)]
        draws: dict[str, int] = {}
        for match in _DRAWN.finditer(data):
            key = _name(match.group(1))
            draws[key] = draws.get(key, 0) + 1
        for key, times in draws.items():
            form = next((t.get(key) for t in tables if key in t), None)
            if isinstance(form, pikepdf.Stream) and form.get("/Subtype") == pikepdf.Name.Form:
                if depth >= MAX_FORM_DEPTH:
                    # PDFium parses forms deeper than the pdfminer source draws them: more
                    # nesting than that is refused, not left uncounted.
                    raise PageTooComplex(_DEPTH_REASON)
                total += times * self._form(form, resources, depth + 1, open_forms)
                if total > MAX_PAGE_PARSE_BYTES:
                    return total
        return total

    def _form(self, form: pikepdf.Stream, outer: Any, depth: int, open_forms: set[tuple[int, int]]) -> int:
        key = form.objgen
        known = self._forms.get(key)
        if known is not None:
            return known
        if key in open_forms:
            return 0  # a form that draws itself: PDFium draws it once
        open_forms.add(key)
        try:
            own = form.get("/Resources")
            size = self._content(
                _decoded(form, LIMITS.max_decoded_bytes),
                own if isinstance(own, pikepdf.Dictionary) else outer,
                depth,
                open_forms,
            )
        finally:
            open_forms.discard(key)
        if key != (0, 0) and isinstance(own, pikepdf.Dictionary):
            # (A form without resources of its own reads its drawer's: its cost depends on them.)
            self._forms[key] = size
        return size

    def _font(self, font: Any, depth: int) -> None:
        if not isinstance(font, pikepdf.Dictionary):
            return
        key = font.objgen
        if key in self._fonts:
            return
        if key != (0, 0):
            self._fonts.add(key)
        for name in _CMAP_KEYS:
            stream = font.get(name)
            if isinstance(stream, pikepdf.Stream):
                _decoded(stream, LIMITS.max_cmap_bytes)
        descriptors = [font.get("/FontDescriptor")]
        descendants = font.get("/DescendantFonts")
        if isinstance(descendants, pikepdf.Array):
            for descendant in descendants:
                if isinstance(descendant, pikepdf.Dictionary):
                    descriptors.append(descendant.get("/FontDescriptor"))
        for descriptor in descriptors:
            if isinstance(descriptor, pikepdf.Dictionary):
                for name in _FONT_STREAMS:
                    stream = descriptor.get(name)
                    if isinstance(stream, pikepdf.Stream):
                        _decoded(stream, LIMITS.max_decoded_bytes)
        procs = font.get("/CharProcs")
        if isinstance(procs, pikepdf.Dictionary):
            # A Type3 font's glyphs are content streams, with the font's resources.
            resources = font.get("/Resources")
            total = 0
            for proc in procs.values():
                if isinstance(proc, pikepdf.Stream):
                    total += self._content(_decoded(proc, LIMITS.max_decoded_bytes), resources, depth + 1, set())
                    if total > MAX_PAGE_PARSE_BYTES:
                        raise PageTooComplex(_PARSE_REASON)


def _inherited(page: pikepdf.Dictionary, key: str) -> Any:
    """A page attribute that may be inherited from the page tree."""
    node: Any = page
    for _ in range(64):
        if not isinstance(node, pikepdf.Dictionary):
            return None
        value = node.get(key)
        if value is not None:
            return value
        node = node.get("/Parent")
    return None


def open_pdfium(
    path: str | os.PathLike[str],
    password: str | None,
    should_stop: Callable[[], bool] | None = None,
    structure: pikepdf.Pdf | None = None,
) -> PdfiumPageParser | None:
    """A parser of the pages of the PDF at `path`, opened with PDFium; `close()` it. A file
    PDFium cannot open is read as `structure` (pikepdf's reading of it, repairs made) saves it.
    None (the caller reads the file with pdfminer.six, under its own budgets) when PDFium
    cannot open it either way, or when the decoding budgets cannot be checked: pikepdf could
    not read the file (`structure` is None) or counts other pages than PDFium."""
    if structure is None:
        return None
    try:
        pdf = pdfium.PdfDocument(str(path), password=password)
    except pdfium.PdfiumError:
        pdf = None
    if pdf is None and structure is not None:
        buffer = io.BytesIO()
        try:
            structure.save(buffer, encryption=False)
            pdf = pdfium.PdfDocument(buffer.getvalue())
        except (pdfium.PdfiumError, pikepdf.PdfError):
            pdf = None
    if pdf is None:
        return None
    if len(pdf) != len(structure.pages):
        pdf.close()
        return None
    return PdfiumPageParser(pdf, should_stop, structure)


class PdfiumPageParser:
    """Parses the pages of a PDFium document one at a time into `PageModel`s."""

    def __init__(
        self,
        pdf: pdfium.PdfDocument,
        should_stop: Callable[[], bool] | None = None,
        structure: pikepdf.Pdf | None = None,
    ) -> None:
        self._pdf = pdf
        self._should_stop = should_stop
        self._structure = structure  # the document as pikepdf reads it, open as long as this
        self._budgets = _Budgets(structure) if structure is not None else None
        self._rtl = False  # the page being parsed has right-to-left text

    def close(self) -> None:
        self._pdf.close()

    def parse(self, number: int, tagged: dict[int, int] | None = None) -> PageModel:
        """The model of page `number` (1-based); `tagged` maps the MCIDs of the page's text
        that a tagged PDF's structure tree holds to the level of the heading each lies in (0:
        none; `tags`). The cyclic garbage collector waits while the page is parsed
        (`_COLLECTOR.paused`).

        Raises:
            PageAborted: should_stop returned True during the page.
            PageTooComplex: the page exceeded its work budget (objects, content or seconds).
            StreamTooLarge: a stream the page needs decodes past its budget.
            Exception: whatever PDFium raises on a page it cannot load (caller maps it).
        """
        with _COLLECTOR.paused():
            return self._parse(number, tagged)

    def _parse(self, number: int, tagged: dict[int, int] | None) -> PageModel:
        started = time.monotonic()
        if self._budgets is not None:
            self._budgets.check(number)
        page = self._pdf[number - 1]
        try:
            page_handle = _handle(page)
            ctm, width, height = _page_frame(page_handle)
            model = PageModel(number=number, width=width, height=height)
            # The page objects first: rulings and pictures, the drawing order of the text
            # objects, and what may cover text drawn before it.
            document = _handle(self._pdf)
            clock = _Clock(started, self._should_stop)
            walk = _Walk(model, ctm, height, lambda picture: _opaque_picture(document, page_handle, picture), clock)
            walk.objects(page_handle, _count_objects(page_handle), _page_object, _IDENTITY, 0, False)
            textpage = page.get_textpage()
            try:
                # The objects walked since the walk last counted them, and the page's characters.
                clock.count(walk.order % _WALK_POLL_EVERY + max(0, _count_chars(_handle(textpage))))
                spaces = walk.spaces
                page_text = _PageText(self, _handle(textpage), ctm, walk, tagged or {}, started)
                page_text.read()
            finally:
                textpage.close()
            hidden = page_text.hidden
            if page_text.chars is not None:
                chars = page_text.chars
                if page_text.rtl:
                    # PDFium puts right-to-left runs in reading order; pdfminer, and the glyph
                    # pass after it, read glyphs as drawn: text object by text object, each
                    # from left to right as PDF producers write it.
                    chars.sort(key=_drawn)
                    _advance_to_next(chars)
                    _logical_ligatures(chars)
                if spaces:
                    chars = _with_spaces(chars, spaces)
                if walk.covers:
                    for char in _covered(chars, walk.covers, (0.0, 0.0, width, height), walk.image_area):
                        # Text drawn invisible stays so: over a picture, it is the picture's
                        # words (`layout._uncover`), as when the picture is its clip (which
                        # PDFium does not tell apart from no clip).
                        hidden.setdefault(id(char), HIDDEN_COVERED)
                lines = _group(chars)
            else:
                lines = page_text.lines
                if walk.covers:
                    for char in _covered(page_text.drawn_over, walk.covers, (0.0, 0.0, width, height), walk.image_area):
                        hidden.setdefault(id(char), HIDDEN_COVERED)
            filed = 0
            for objs, bbox in lines:
                filed += len(objs)
                if filed >= _POLL_EVERY:
                    filed = 0
                    clock.check()
                add_glyphs(model, objs, bbox, False, height, hidden)
            clock.check()
            finish_model(model)
            if page_text.heading_boxes:
                mark_headings(model, page_text.heading_boxes, height)
            if tagged:
                mark_tagged(model, page_text.untagged.values(), height)
            return model
        finally:
            page.close()


class _CollectorPause:
    """Python's cyclic garbage collector held off while pages are parsed, in any number of
    threads at once: it is disabled when the first parse begins and enabled again when the
    last one ends, unless it was disabled already.

    A page's parse makes one object per glyph (about 1,900 a page of a long book), alive
    until the page's lines are filed. Their count sets off collections that walk them (one
    every 700 objects made, by default) and, as they pile up, full collections that walk every
    object of the process: about a sixth of the PDFium engine's CPU on long documents went to
    the collector. Paused, the
    collector does not run during the page; the glyphs are freed by their reference counts
    when it ends, and the cycles the page left, if any, are collected by the next collection
    after it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parsing = 0  # the parses under way
        self._enable = False  # whether to enable the collector when the last one ends

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if not self._parsing:
                self._enable = gc.isenabled()
                gc.disable()
            self._parsing += 1
        try:
            yield
        finally:
            with self._lock:
                self._parsing -= 1
                if not self._parsing and self._enable:
                    gc.enable()


_COLLECTOR = _CollectorPause()


class _Clock:
    """The page's work budget, as the pdfminer source keeps it (`layout._BudgetedAggregator`):
    the objects of the page (page objects, forms' included, and characters) at most
    `MAX_LAYOUT_OBJECTS_PER_PAGE` (counted every `_WALK_POLL_EVERY` objects walked, the
    characters at once), the page clock and should_stop polled every `_POLL_EVERY` objects or
    characters."""

    __slots__ = ("_next", "_should_stop", "objects", "started")

    def __init__(self, started: float, should_stop: Callable[[], bool] | None) -> None:
        self.started = started
        self._should_stop = should_stop
        self.objects = 0
        self._next = _POLL_EVERY

    def count(self, added: int) -> None:
        """`added` more objects made or read; polls when a step of them has passed."""
        self.objects += added
        if self.objects > MAX_LAYOUT_OBJECTS_PER_PAGE:
            raise PageTooComplex(f"more than {MAX_LAYOUT_OBJECTS_PER_PAGE:,} layout objects")
        if self.objects >= self._next:
            self._next = self.objects + _POLL_EVERY
            self.check()

    def check(self) -> None:
        """Raise when the page's time is up or should_stop asks to stop."""
        if time.monotonic() - self.started > MAX_SECONDS_PER_PAGE:
            raise PageTooComplex(f"more than {MAX_SECONDS_PER_PAGE:.0f} seconds")
        if self._should_stop is not None and self._should_stop():
            raise PageAborted()


def _opaque_picture(document: int, page: int, picture: int) -> bool:
    """Whether an image object paints every pixel of its box: rendered with its masks (a mask,
    a soft mask, a colour key), no pixel is transparent. (PDFium does not tell whether an
    image has a mask; only pictures drawn after text, those that may cover it, are rendered.)"""
    columns, rows = c_uint(), c_uint()
    if not _pixel_size(picture, byref(columns), byref(rows)) or columns.value * rows.value > MAX_RENDERED_PIXELS:
        return False
    bitmap = _rendered_picture(document, page, picture)
    if not bitmap:
        return False
    try:
        kind = _bitmap_format(bitmap)
        if kind != _BGRA:
            return kind in _OPAQUE_FORMATS
        width, height, stride = _bitmap_width(bitmap), _bitmap_height(bitmap), _bitmap_stride(bitmap)
        data = ctypes.string_at(_bitmap_buffer(bitmap), stride * height)
        if stride == 4 * width:
            return min(data[3::4], default=255) == 255
        return all(
            min(data[row * stride + 3 : row * stride + 4 * width : 4], default=255) == 255 for row in range(height)
        )
    finally:
        _bitmap_destroy(bitmap)


# A word space pdfminer would insert (one object serves every line: it is only read).
_SPACE = LTAnno(" ")
_Line = tuple[list[Any], _Box]


class _PageText:
    """The characters of one page read from PDFium's text page, as pdfminer's glyph objects
    (only the attributes the glyph pass reads) grouped into lines as pdfminer groups them.

    On a page where glyphs must be reordered or tested for cover first (right-to-left text,
    shapes drawn over text), `chars` keeps them all for `_group`; else the lines are made
    as the characters are read (`lines`).
    """

    def __init__(
        self,
        parser: PdfiumPageParser,
        textpage: int,
        ctm: Matrix,
        walk: _Walk,
        tagged: dict[int, int],
        started: float,
        *,
        keep: bool = False,
    ) -> None:
        self.parser = parser
        self.keep = keep
        self.objects: dict[int, _TextObject] = {}  # the text objects of the characters
        self.textpage = textpage
        self.ctm = ctm
        self.walk = walk
        self.tagged = tagged  # the page's MCIDs in the structure tree (`tags`)
        self.started = started
        self.rtl = False
        self.chars: list[tuple[LTChar, _TextObject]] | None = None
        # Glyphs drawn before the last cover, when the lines are made as they are read.
        self.drawn_over: list[tuple[LTChar, _TextObject]] = []
        self.lines: list[_Line] = []
        self.hidden: dict[int, str] = {}
        self.heading_boxes: list[tuple[int, float, float, float, float]] = []
        # On a tagged page, the box (x0, y0, x1, y1) of each text object drawn outside the
        # structure tree, by object.
        self.untagged: dict[int, list[float]] = {}
        # The text of each character whose font maps its code to none ("(cid:N)"), by index.
        self.cids: dict[int, str] = {}

    def read(self) -> None:
        textpage = self.textpage
        n = _count_chars(textpage)
        if n <= 0:
            return
        buffer = (c_ushort * (n + 1))()
        got = _get_text(textpage, 0, n, buffer)
        units = bytes(buffer)[: max(0, got - 1) * 2]
        text = units.decode("utf-16-le", "surrogatepass")
        chars = _read_chars(textpage, n)
        if len(text) != n:
            # Characters beyond the Basic Multilingual Plane take two UTF-16 units: the text
            # page holds each as two characters, its halves, with one box and text object.
            # The first becomes the character, the second a break, which no glyph reads.
            # (The text, not the characters' code points: those give a hyphen that ends a
            # line as U+0002.)
            text = _PAIR.sub(_joined_pair, "".join(map(chr, struct.unpack(f"<{len(units) // 2}H", units))))
            if len(text) != n:
                text = _PAIR.sub(_joined_pair, "".join(chr(u) for u in chars.unicodes()))
        if _SURROGATE.search(text):
            # Half of a pair a broken ToUnicode map gives alone: no character of its own.
            text = _SURROGATE.sub("\ufffd", text)
        self.rtl = has_rtl(text)
        if "\ufffe" in text:
            # PDFium marks a hyphen that ends a line with U+FFFE; it is drawn as a hyphen.
            text = text.replace("\ufffe", "-")
        unmapped = chars.unmapped()
        if unmapped:
            # A code its font maps to no text: PDFium gives the code as the character. That
            # is often the letter (fonts that encode text by its codes), never a control
            # character: those glyphs (a bullet, a symbol, a font that numbers its glyphs from
            # 1) are "(cid:N)", as pdfminer writes them, which the stages read as a glyph
            # without text (a bullet, garbage that calls for OCR). The glyph takes that text
            # once made; U+FFFD holds its place, neither a break nor a space.
            listed = list(text)
            for i in unmapped:
                code = ord(listed[i])
                if code < 0x20 or 0x7F <= code < 0xA0:
                    self.cids[i] = f"(cid:{code})"
                    listed[i] = "\ufffd"
            if self.cids:
                text = "".join(listed)
        self.lay_out(text, chars)

    def lay_out(self, text: str, chars: _Chars) -> None:
        """The glyphs of the characters `chars` (whose text is `text`, `rtl` set for it) made
        and grouped into lines: by the helper where it read them, else by the loop below."""
        keep = self.keep or self.rtl
        if keep:
            self.chars = []
        if isinstance(chars, _HelperChars) and self._read_by_helper(text, chars, keep):
            return
        # Glyphs a shape drawn after them may cover, checked once the page is read.
        drawn_over = self.drawn_over if self.walk.covers and not keep else None
        last_cover = self.walk.last_cover
        translate = self.ctm[:4] == (1.0, 0.0, 0.0, 1.0)
        dx, dy = self.ctm[4], self.ctm[5]
        ctm = self.ctm
        generated, char_origin = chars.generated, chars.origin
        new_char = LTChar.__new__
        char_type = LTChar
        objects = self.objects
        order = self.walk.text_order
        hidden = self.hidden
        heading_boxes = self.heading_boxes
        untagged = self.untagged
        tagged_page = bool(self.tagged)
        outside: dict[int, list[float]] | None = None  # `untagged`, for a glyph outside the tree
        kept = self.chars
        lines = self.lines
        space = _SPACE
        clock = self.walk.clock
        poll = _POLL_EVERY
        cids = self.cids
        object_cache = _ObjectCache()
        last_obj = glyph_obj = 0
        # Points from the foot of the text object's loose glyph boxes to ours (None: not known).
        foot: float | None = None
        loose_height = 0.0  # the height of the text object's loose glyph boxes
        info = _NO_OBJECT  # the glyph's text object (set before a glyph is made)
        fontname = ""
        color = -1
        line_overlap, char_margin, word_margin, loose = LINE_OVERLAP, CHAR_MARGIN, WORD_MARGIN, _LOOSE_TOLERANCE
        size = descent = 0.0
        upright = True
        reason = ""
        spaces = self.walk.spaces if not keep else []  # (kept glyphs get theirs in `_with_spaces`)
        n_spaces = len(spaces)
        sj = 0
        pending: list[tuple[int, float, float]] | None = None
        # The text object of the previous glyph when it is a space, and that space's width.
        space_obj = 0
        space_width = 0.0
        rtl = self.rtl
        origin_x = origin_y = 0.0
        heading = 0
        last: LTChar | None = None
        line: list[Any] = []
        # The previous glyph's box, and the box of the line being made.
        px0 = px1 = py0 = py1 = 0.0
        lx0 = ly0 = lx1 = ly1 = 0.0
        for i, (ch, obj, left, loose_top, right, loose_bottom) in enumerate(
            zip(text, chars.objects, *chars.loose_boxes(), strict=True)
        ):
            if ch in _BREAKS or (ch == " " and generated(i)):
                # A line break (PDFium's: content never draws one), or a space PDFium
                # inserted where it saw a gap: pdfminer's grouping decides both.
                continue
            if not obj:
                continue
            if obj != last_obj:
                known = objects.get(obj)
                if known is None:
                    known = objects[obj] = _text_object_info(
                        chars, i, obj, self.tagged, order.get(obj, 0), object_cache
                    )
                info = known
                outside = untagged if tagged_page and not info.tagged else None
                size, upright, reason, heading, descent, fontname, color = (
                    info.size,
                    info.upright,
                    info.reason,
                    info.heading,
                    info.descent,
                    info.fontname,
                    info.color,
                )
                last_obj = obj
                foot = None
                if sj < n_spaces and spaces[sj][0] < info.order:
                    # Space objects drawn before this one (PDFium's text page has not their glyphs).
                    pending = []
                    while sj < n_spaces and spaces[sj][0] < info.order:
                        pending.append(spaces[sj])
                        sj += 1
            if upright:
                # pdfminer's glyph box of upright text: from the font's descent below the
                # origin, the font size tall. (PDFium's "loose" box is the glyph's ink for
                # some glyphs: only its left and right are taken.) Where the loose box is the
                # font's (from the origin, as tall as the text object's first glyph's), its
                # foot lies a fixed distance from the origin for every glyph of the text
                # object: the origin, one call per glyph, is read once per object.
                height = loose_top - loose_bottom
                if foot is not None and not rtl and -loose < height - loose_height < loose:
                    bottom = loose_bottom + foot
                else:
                    origin_x, origin_y = char_origin(i)
                    bottom = origin_y - descent
                    if foot is None and abs(left - origin_x) < loose:
                        foot = bottom - loose_bottom
                        loose_height = height
                top = bottom + size
                if rtl:
                    # Shaped scripts: PDFium gives the ink of some glyphs, not their advance
                    # from the origin; the box starts at the origin, as pdfminer's does.
                    at = origin_x
                    if left - at > 0.01 or at - left > 0.01:
                        left = at
                        if right < at:
                            right = at
            else:
                bottom, top = loose_bottom, loose_top
            if translate:
                x0 = left + dx
                x1 = right + dx
                y0 = bottom + dy
                y1 = top + dy
            else:
                x0, y0, x1, y1 = _box(ctm, left, bottom, right, top)
            if obj == glyph_obj and last is not None and x0 == px0 and y0 == py0 and last._text[:1] != " ":
                # One glyph that stands for several characters (a ligature): pdfminer keeps it
                # whole. A space is no ligature's: the glyph drawn where a space of no advance
                # is (a browser's soft hyphen) is a glyph of its own, as pdfminer reads it.
                last._text += ch
                if x1 > last.x1:
                    last.x1 = px1 = x1
                    if x1 > lx1:
                        lx1 = x1  # (the glyph is the last of the line being made)
                continue
            glyph_obj = obj
            c = new_char(char_type)
            c._text = cids.get(i, ch) if cids else ch
            c.fontname = fontname
            c.size = size
            c.x0 = x0
            c.x1 = x1
            c.y0 = y0
            c.y1 = y1
            c.color = color  # type: ignore[attr-defined]  # (read back by `_glyph_line`)
            last = c
            if reason:
                hidden[id(c)] = reason
            if heading:
                heading_boxes.append((heading, x0, y0, x1, y1))
            if outside is not None:
                box = outside.get(obj)
                if box is None:
                    outside[obj] = [x0, y0, x1, y1]
                else:
                    box[0], box[1], box[2], box[3] = min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)
            poll -= 1
            if not poll:
                poll = _POLL_EVERY
                clock.check()
            # (The previous glyph's: whether a space of this text object, and its width.)
            after_space, after_width = space_obj, space_width
            if ch == " ":
                space_obj, space_width = obj, x1 - x0
            elif space_obj:
                space_obj = 0
            if drawn_over is not None and info.order < last_cover:
                drawn_over.append((c, info))
            if kept is not None:
                kept.append((c, info))
                px0, px1, py0 = x0, x1, y0
                continue
            # Space objects on this glyph's baseline drawn just before it: where pdfminer
            # sees their glyphs, which join the line or open it.
            lead = None
            if pending is not None:
                lead = next((sp for sp in pending if y0 <= sp[2] <= y1 and sp[1] < x0), None)
                pending = None
            # pdfminer's group_objects: the glyph continues the line when it overlaps the
            # previous glyph vertically by half the smaller height and lies within twice
            # the wider glyph's width of it.
            if line:
                h1 = y1 - y0
                overlap = (py1 if py1 < y1 else y1) - (py0 if py0 > y0 else y0)
                w0, w1 = px1 - px0, x1 - x0
                if x0 <= px1 and px0 <= x1:
                    distance = 0.0
                else:
                    distance = abs(px0 - x1)
                    other = abs(px1 - x0)
                    if other < distance:
                        distance = other
                dropped = _dropped_spaces(px1, py0, x0, y0, after_width) if obj == after_space else 0
                if lead is not None and lead[1] >= px0 and py0 <= lead[2] <= py1 and w1 > 0:
                    if rtl or x0 - lead[1] >= SPACE_ADVANCE_SHARE * size:
                        dropped = max(1, int((x0 - px1) / w1 + 0.5))
                    # (else the pen did not move over the space, the glyph's box starting
                    # within a tenth of an em of the space's origin: no word space, as the
                    # glyph pass reads a space of no advance that pdfminer gives)
                    lead = None
                if dropped or (
                    overlap >= 0
                    and (py1 - py0 if py1 - py0 < h1 else h1) * line_overlap < overlap
                    and distance < (w0 if w0 > w1 else w1) * char_margin
                ):
                    if dropped:
                        line.extend([space] * dropped)
                    elif px1 < x0 - word_margin * (w1 if w1 > h1 else h1):
                        line.append(space)
                    line.append(c)
                    if x0 < lx0:
                        lx0 = x0
                    if y0 < ly0:
                        ly0 = y0
                    if x1 > lx1:
                        lx1 = x1
                    if y1 > ly1:
                        ly1 = y1
                    px0, px1, py0, py1 = x0, x1, y0, y1
                    continue
                lines.append((line, (lx0, ly0, lx1, ly1)))
            line = [c]
            lx0, ly0, lx1, ly1 = x0, y0, x1, y1
            if lead is not None and x1 > x0:
                # The line opens with the spaces (code indented with spaces).
                count = max(1, min(_MAX_SPACE_RUN, int((x0 - lead[1]) / (x1 - x0) + 0.5)))
                line = [*_space_run(lead[1], x0, y0, y1, c, count), c]
                lx0 = lead[1]
            px0, px1, py0, py1 = x0, x1, y0, y1
        if line:
            lines.append((line, (lx0, ly0, lx1, ly1)))

    def _read_by_helper(self, text: str, chars: _HelperChars, keep: bool) -> bool:
        """`read`'s loop made by the helper: the glyph boxes, ligatures and lines are computed
        in C (`svcx_pdfium_runs`, `svcx_pdfium_lines`) with the loop's arithmetic; here the
        glyphs are made and filed. False (nothing read) where the helper leaves the page to
        the loop."""
        if len(text) != chars.n:
            return False  # (the loop's zip refuses it)
        codes = text.encode("utf-32-le")
        starts = chars.runs(codes)
        objects = self.objects
        order = self.walk.text_order
        object_cache = _ObjectCache()
        handles = chars.objects
        infos: list[_TextObject] = []
        for i in starts:
            # What the loop reads at the first character of each run of a text object.
            obj = handles[i]
            known = objects.get(obj)
            if known is None:
                known = objects[obj] = _text_object_info(chars, i, obj, self.tagged, order.get(obj, 0), object_cache)
            infos.append(known)
        spaces = self.walk.spaces if not keep else []  # (kept glyphs get theirs in `_with_spaces`)
        made = chars.glyphs(codes, starts, infos, spaces, self.ctm, self.rtl, not keep)
        if made is None:
            return False
        drawn_over = self.drawn_over if self.walk.covers and not keep else None
        last_cover = self.walk.last_cover
        new_char = LTChar.__new__
        char_type = LTChar
        hidden = self.hidden
        heading_boxes = self.heading_boxes
        untagged = self.untagged
        tagged_page = bool(self.tagged)
        outside: dict[int, list[float]] | None = None
        over = False
        kept = self.chars
        lines = self.lines
        space = _SPACE
        clock = self.walk.clock
        poll = _POLL_EVERY
        cids = self.cids
        count = made.count
        appended = made.appended
        boxes = iter(made.boxes[: _GLYPH_FIELDS * count].tolist())
        line_boxes = iter(made.line_boxes[: 4 * made.lines].tolist())
        line_box = zip(line_boxes, line_boxes, line_boxes, line_boxes, strict=True)
        info = _NO_OBJECT
        fontname, size, reason, heading, color = "", 0.0, "", 0, -1
        last_run = -1
        line: list[Any] = []
        for start, run, n_chars, spaced, x0, y0, x1, y1, first_x1, lead_x in zip(
            made.starts[:count].tolist(),
            made.runs[:count].tolist(),
            made.chars[:count].tolist(),
            made.spaces[:count].tolist(),
            boxes,
            boxes,
            boxes,
            boxes,
            boxes,
            boxes,
            strict=True,
        ):
            if run != last_run:
                last_run = run
                info = infos[run]
                fontname, size, reason, heading, color = (
                    info.fontname,
                    info.size,
                    info.reason,
                    info.heading,
                    info.color,
                )
                outside = untagged if tagged_page and not info.tagged else None
                over = drawn_over is not None and info.order < last_cover
            c = new_char(char_type)
            c._text = text[start] if n_chars == 1 else _ligature_text(text, appended, start, n_chars)
            if cids and start in cids:
                c._text = cids[start]
            c.fontname = fontname
            c.size = size
            c.x0 = x0
            c.x1 = x1
            c.y0 = y0
            c.y1 = y1
            c.color = color  # type: ignore[attr-defined]  # (read back by `_glyph_line`)
            if reason:
                hidden[id(c)] = reason
            if heading:
                heading_boxes.append((heading, x0, y0, first_x1, y1))
            if outside is not None:
                obj = handles[start]
                box = outside.get(obj)
                if box is None:
                    outside[obj] = [x0, y0, first_x1, y1]
                else:
                    box[0], box[1] = min(box[0], x0), min(box[1], y0)
                    box[2], box[3] = max(box[2], first_x1), max(box[3], y1)
            poll -= 1
            if not poll:
                poll = _POLL_EVERY
                clock.check()
            if over:
                drawn_over.append((c, info))  # type: ignore[union-attr]
            if kept is not None:
                kept.append((c, info))
            elif spaced >= 0:
                if spaced == 1:
                    line.append(space)
                elif spaced:
                    line.extend([space] * spaced)
                line.append(c)
            else:
                if line:
                    lines.append((line, next(line_box)))
                # (With spaces before it: code indented with spaces.)
                line = [*_space_run(lead_x, x0, y0, y1, c, -1 - spaced), c] if spaced < -1 else [c]
        if line:
            lines.append((line, next(line_box)))
        return True


def _ligature_text(text: str, appended: array.array[int], start: int, count: int) -> str:
    """The text of a glyph that stands for `count` characters: the character at `start` and
    the next characters that join it (`appended`; skipped characters may lie between)."""
    out = [text[start]]
    i = start
    while len(out) < count:
        i += 1
        if appended[i]:
            out.append(text[i])
    return "".join(out)


class _ObjectCache:
    """What `_text_object_info` reads once per page rather than once per text object: font
    names by font handle, descents by font handle and size, hidden reasons by render mode and
    fill colour (a font and a colour serve many text objects); and its ctypes buffers."""

    __slots__ = ("below", "descents", "names", "reasons")

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.descents: dict[tuple[int, float], float] = {}
        self.reasons: dict[tuple[int, int, int, int, int, int], str] = {}
        self.below = c_float()


def _text_object_info(
    chars: _Chars, index: int, obj: int, tagged: dict[int, int], order: int, cache: _ObjectCache
) -> _TextObject:
    """What the characters of the text object `obj` share, read at its character `index`;
    `tagged`: the page's MCIDs in the structure tree, with their heading level (`tags`)."""
    size, matrix = chars.object_info(index)
    upright = True
    if matrix is not None:
        a, b, c, d = matrix
        # Upright: not turned. A slant (an oblique made by shearing an upright face, as
        # Chromium draws the italic of a font that has none) leaves the text horizontal,
        # its glyph box the font size tall as pdfminer builds it (`MAX_SLANT`).
        upright = abs(b) <= 1e-3 * abs(a) and abs(c) <= MAX_SLANT * abs(d)
        if upright:
            # The font size as drawn: pdfminer's glyph box is this tall.
            size *= abs(d)
    key, font, mcid = chars.object_state(index, obj)
    reason = cache.reasons.get(key)
    if reason is None:
        mode, filled, r, g, b_, _ = key
        color = (r / 255, g / 255, b_ / 255) if filled else None
        reason = cache.reasons[key] = hidden_by_state(mode, None, color)
    level = tagged.get(mcid, -1) if tagged and mcid >= 0 else -1
    # Points from the baseline down to the foot of the glyph box: of upright text, as the
    # pdfminer source sets every font's (`layout.GLYPH_DESCENT_EM`); of turned text, the
    # font's descent (its descriptor's, as pdfminer reads it) at the size drawn.
    if upright:
        descent = -GLYPH_DESCENT_EM * size
    else:
        descent = cache.descents.get((font, size))  # type: ignore[assignment]
        if descent is None:
            below = cache.below
            descent = -below.value if font and _font_descent(font, c_float(size), byref(below)) else 0.0
            cache.descents[font, size] = descent
    name = cache.names.get(font)
    if name is None:
        name = cache.names[font] = _font_name(font)
    info = _TextObject(name, size, reason, max(level, 0), upright, descent)
    info.tagged = level >= 0
    if key[1]:
        info.color = (key[2] << 16) | (key[3] << 8) | key[4]
    info.order = order
    info.font = font
    return info


def _group(chars: list[tuple[LTChar, _TextObject]]) -> list[_Line]:
    """The glyphs grouped into lines as pdfminer's `group_objects` does (horizontal lines),
    with its word spaces (`_PageText.read` does the same as it reads). A word space is
    measured from the previous glyph's end, or from its letter's where it is a mark (PDFium's
    box of a mark drawn over its letter ends inside the letter)."""
    lines: list[_Line] = []
    line: list[Any] = []
    prev: LTChar | None = None
    lx0 = ly0 = lx1 = ly1 = 0.0
    edge = 0.0  # where the word space before the next glyph is measured from
    prev_info: _TextObject | None = None
    for c, info in chars:
        if prev is not None:
            h0, h1 = prev.y1 - prev.y0, c.y1 - c.y0
            w0, w1 = prev.x1 - prev.x0, c.x1 - c.x0
            overlap = min(prev.y1, c.y1) - max(prev.y0, c.y0)
            distance = 0.0 if c.x0 <= prev.x1 and prev.x0 <= c.x1 else min(abs(prev.x0 - c.x1), abs(prev.x1 - c.x0))
            dropped = (
                _dropped_spaces(prev.x1, prev.y0, c.x0, c.y0, w0) if prev._text == " " and info is prev_info else 0
            )
            if dropped or (
                overlap >= 0 and min(h0, h1) * LINE_OVERLAP < overlap and distance < max(w0, w1) * CHAR_MARGIN
            ):
                if dropped:
                    line.extend([_SPACE] * dropped)
                elif edge < c.x0 - WORD_MARGIN * max(w1, h1):
                    line.append(_SPACE)
                line.append(c)
                lx0, ly0, lx1, ly1 = min(lx0, c.x0), min(ly0, c.y0), max(lx1, c.x1), max(ly1, c.y1)
                edge = max(edge, c.x1) if _RTL_MARK.sub("", c._text) == "" else c.x1
                prev, prev_info = c, info
                continue
            lines.append((line, (lx0, ly0, lx1, ly1)))
        line = [c]
        lx0, ly0, lx1, ly1 = c.x0, c.y0, c.x1, c.y1
        edge = c.x1
        prev, prev_info = c, info
    if line:
        lines.append((line, (lx0, ly0, lx1, ly1)))
    return lines


def _with_spaces(
    chars: list[tuple[LTChar, _TextObject]], spaces: list[tuple[int, float, float]]
) -> list[tuple[LTChar, _TextObject]]:
    """The glyphs with those of the space objects put in drawing order among them: from the
    space object's origin to the next glyph on its baseline, as many spaces as glyphs of
    the next glyph's width fit there (code is set in monospaced fonts)."""
    out: list[tuple[LTChar, _TextObject]] = []
    j = 0
    for item in chars:
        while j < len(spaces) and spaces[j][0] < item[1].order:
            # Up to the next space object drawn before the glyph, on the same baseline.
            following = spaces[j + 1] if j + 1 < len(spaces) and spaces[j + 1][0] < item[1].order else None
            end = following[1] if following is not None and abs(following[2] - spaces[j][2]) < 0.01 else None
            out.extend(_space_glyphs(spaces[j], item, end))
            j += 1
        out.append(item)
    return out


def _space_glyphs(
    space: tuple[int, float, float], after: tuple[LTChar, _TextObject], end: float | None
) -> list[tuple[LTChar, _TextObject]]:
    """The spaces of one space object, from its origin to `end` (the next space object's
    origin) or else to the glyph drawn `after` it."""
    order, x, y = space
    char, info = after
    width = char.x1 - char.x0
    if not (char.y0 <= y <= char.y1) or width <= 0:
        return []  # not on the glyph's line
    spaced = _TextObject(info.fontname, info.size, "", 0, info.upright, info.descent)
    spaced.order = order
    if abs(char.x0 - x) <= _SAME_ORIGIN_EM * char.size:
        # A space the pen does not move over (a shaper's default-ignorable character: a soft
        # hyphen, a zero-width non-joiner): its glyph as pdfminer sees it, a nominal space
        # wide, which the glyph pass reads as no word space (`layout.SPACE_ADVANCE_SHARE`).
        return [(c, spaced) for c in _space_run(x, x + _NOMINAL_SPACE_EM * char.size, char.y0, char.y1, char, 1)]
    if char.x0 <= x:
        return []  # not before a glyph of its line
    stop = end if end is not None and x < end <= char.x0 else char.x0
    count = max(1, min(_MAX_SPACE_RUN, int((stop - x) / width + 0.5)))
    return [(c, spaced) for c in _space_run(x, stop, char.y0, char.y1, char, count)]


def _space_run(x0: float, x1: float, y0: float, y1: float, like: LTChar, count: int) -> list[LTChar]:
    """`count` space glyphs side by side from `x0` to `x1`, in the font and size of `like`."""
    step = (x1 - x0) / count
    out = []
    for k in range(count):
        c = LTChar.__new__(LTChar)
        c._text = " "
        c.fontname = like.fontname
        c.size = like.size
        c.x0 = x0 + k * step
        c.x1 = c.x0 + step
        c.y0 = y0
        c.y1 = y1
        out.append(c)
    return out


def _dropped_spaces(x1: float, y0: float, next_x0: float, next_y0: float, width: float) -> int:
    """How many spaces PDFium left out after a space glyph (`x1`, `y0`, `width` its right
    edge, foot and width) before the next glyph of the same text object on the same
    baseline: it keeps one space of a run (code indented, columns aligned with spaces),
    where pdfminer sees each, which hold the run's glyphs in one line."""
    gap = next_x0 - x1
    if width <= 0 or gap < 0.5 * width or abs(next_y0 - y0) > 0.01:
        return 0
    return int(gap / width + 0.5)


def _advance_to_next(chars: list[tuple[LTChar, _TextObject]]) -> None:
    """Glyph boxes that end where the next glyph begins when that is where the glyph's
    advance (its font's width of it) ends: pdfminer's box spans the advance. On
    right-to-left pages PDFium's box of a shaped glyph is its ink, narrower than its
    advance: the gap left inside a word was read as a word space. Marks advance nothing: the
    glyph a letter's advance reaches may come after the letter's marks (drawn over it, PDFium's
    boxes of them start at the letter's), and the letter's box reaches it (`_group` measures
    the word space after a mark from its letter's end)."""
    width = c_float()
    letter = -1  # the last glyph that is not marks alone (-1: none since the last letter)
    for j, (b, next_info) in enumerate(chars):
        if not _RTL_MARK.sub("", b._text):
            if letter >= 0 and chars[letter][1] is not next_info:
                letter = -1  # (marks of another text object than the letter's)
            continue
        if letter >= 0:
            a, info = chars[letter]
            if (
                a.x1 < b.x0
                and info.upright
                and next_info.fontname == info.fontname
                and abs(b.y0 - a.y0) < 0.01
                and info.font
                and len(glyph := a._text if len(a._text) == 1 else _RTL_MARK.sub("", a._text)) == 1
                and _glyph_width(info.font, ord(glyph), c_float(info.size), byref(width))
                and abs(a.x0 + width.value - b.x0) <= ADVANCE_TOLERANCE * info.size
            ):
                a.x1 = b.x0
        letter = j


# Arabic letters that join only the letter before them (joining type R in Unicode's
# ArabicShaping.txt: alef and its forms, dal, thal, reh, zain, waw, teh marbuta and their
# variants), or none (U: hamza): never the first letter of a ligature, which joins its
# letters. A glyph standing for several characters that begins with one holds them in
# visual order.
_ENDS_A_JOIN = re.compile(
    "[\u0621-\u0625\u0627\u0629\u062f-\u0632\u0648\u0671-\u0677\u0688-\u0699\u06c0\u06c3-\u06cb"
    "\u06cd\u06cf\u06d2\u06d3\u06d5\u06ee\u06ef\u0759-\u075b\u076b\u076c\u0771\u0773\u0774"
    "\u0778\u0779]"
)
# Combining marks of the right-to-left scripts (Hebrew points, Arabic harakat): a mark
# follows its letter in logical order, so a glyph's text never begins with one.
_RTL_MARK = re.compile("[\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u08d3-\u08ff]")
_RTL_LETTER = re.compile("[\u05d0-\u05ea\u0620-\u064a\u066e-\u06d3\u06d5\u06fa-\u06ff\u0750-\u077f]")


# The letters of Unicode's Arabic ligatures, in logical order: the compatibility
# decompositions of the presentation forms that stand for several letters ("لى" of U+FC43).
_ARABIC_LIGATURES = frozenset(
    text
    for code in (*range(0xFB50, 0xFE00), *range(0xFE70, 0xFF00))
    if len(text := unicodedata.normalize("NFKC", chr(code))) > 1 and all(_RTL_LETTER.match(ch) for ch in text)
)


def _logical_ligatures(chars: list[tuple[LTChar, _TextObject]]) -> None:
    """The characters of a right-to-left glyph that stands for several (a lam-alef ligature,
    a letter and its mark at one origin) put in logical order where PDFium gave them in
    visual order: it turns a glyph's characters around with the right-to-left segments it
    emits, in some segments and not others (alef, lam for the ligature lam-alef). The order
    is told from the characters alone: a glyph whose text starts with a mark, or with a letter
    that cannot join the next, before a right-to-left letter, is read backwards (pdfminer
    gives the glyph's text as its font's map does, in logical order); so is one that spells
    one of Unicode's Arabic ligatures only backwards."""
    for char, _ in chars:
        text = char._text
        if len(text) < 2:
            continue
        first = text[0]
        if (_RTL_MARK.match(first) or _ENDS_A_JOIN.match(first)) and _RTL_LETTER.search(text, 1):
            char._text = text[::-1]
        elif text not in _ARABIC_LIGATURES and text[::-1] in _ARABIC_LIGATURES:
            # Turned around, it spells one of Unicode's ligatures ("ىل": lam with alef
            # maksura, whose first letter could join the next).
            char._text = text[::-1]


def _drawn(item: tuple[LTChar, _TextObject]) -> tuple[int, float]:
    char, info = item
    return info.order, char.x0 if info.upright else 0.0


class _Walk:
    """The page objects in drawing order: paths and images filed on the model, the place
    of each text object in drawing order, and the opaque rectangles and pictures drawn after
    text (covers)."""

    def __init__(
        self, model: PageModel, ctm: Matrix, page_top: float, opaque: Callable[[int], bool], clock: _Clock
    ) -> None:
        self.model = model
        self.clock = clock
        self.opaque = opaque  # whether a picture (image object) paints every pixel of its box
        self.ctm = ctm
        self.page_top = page_top
        self.text_order: dict[int, int] = {}
        # The text objects that draw only spaces: (drawing order, x, y of the origin).
        self.spaces: list[tuple[int, float, float]] = []
        self._bounds = (c_float(), c_float(), c_float(), c_float())
        self._bounds_refs = tuple(byref(v) for v in self._bounds)
        self.covers: list[tuple[int, _Box, bool]] = []
        self.last_cover = 0  # the drawing order of the last cover
        self.order = 0
        self.text_seen = False
        self.image_area = 0.0
        self.page: _Box = (0.0, 0.0, model.width, model.height)

    def objects(
        self, parent: int, count: int, get: Callable[[int, int], int], form: Matrix, depth: int, optional: bool
    ) -> None:
        matrix = _MatrixF()
        for i in range(count):
            obj = get(parent, i)
            if not obj:
                continue
            self.order += 1
            if not self.order % _WALK_POLL_EVERY:
                self.clock.count(_WALK_POLL_EVERY)
            kind = _object_type(obj)
            if kind == _TEXT:
                self.text_order[obj] = self.order
                self.text_seen = True
                self._text(obj, form)
            elif kind == _PATH:
                self._path(obj, form, optional)
            elif kind == _IMAGE:
                self._image(obj, form, optional)
            elif kind == _FORM and depth < MAX_FORM_DEPTH:
                if not _object_matrix(obj, byref(matrix)):
                    continue
                inner = mult_matrix((matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f), form)
                self.objects(obj, _form_count(obj), _form_object, inner, depth + 1, optional or _optional(obj))

    def _text(self, obj: int, form: Matrix) -> None:
        """Note a text object that draws only spaces: it has no ink, so its box is its origin.
        PDFium's text page leaves such objects out; pdfminer sees their glyphs (the
        indentation of code, the gaps of text aligned with spaces)."""
        left, bottom, right, top = self._bounds
        if not _object_bounds(obj, *self._bounds_refs):
            return
        if right.value - left.value > 0.01 or top.value - bottom.value > 0.01:
            return
        x, y = apply_matrix_pt(mult_matrix(form, self.ctm), (left.value, bottom.value))
        self.spaces.append((self.order, x, y))

    def _path(self, obj: int, form: Matrix, optional: bool) -> None:
        fill_mode, stroke = c_int(), c_int()
        if not _draw_mode(obj, byref(fill_mode), byref(stroke)):
            return
        fill = fill_mode.value != 0
        if not fill and not stroke.value:
            return  # a clipping path, or one painted with "n"
        matrix = _MatrixF()
        if not _object_matrix(obj, byref(matrix)):
            return
        to_page = mult_matrix(mult_matrix((matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f), form), self.ctm)
        rgba = _fill_rgba(obj)
        color = rgba[:3] if rgba is not None else None
        width = c_float()
        linewidth = width.value if _stroke_width(obj, byref(width)) else 0.0
        subpaths = _path_points(obj)
        a, b, c, d, e, f = to_page
        stroked = bool(stroke.value)
        model, page_top = self.model, self.page_top
        # Whether a subpath may be a rectangle (`occlusion.filled_rectangles` finds covers
        # among those alone: straight, four corners, closed or not).
        rectangle = False
        for subpath in subpaths:
            pts = [(a * x + c * y + e, b * x + d * y + f) for _, x, y in subpath]
            ops = "".join([op for op, _, _ in subpath])
            if not rectangle and "c" not in ops and len(ops) - ops.count("h") in (4, 5):
                rectangle = True
            corners = pts[:-1] if ops[-1] == "h" else pts
            shape: LTCurve
            if len(corners) == 2 and ops.rstrip("h") == "ml":
                shape = LTLine(linewidth, corners[0], corners[1], stroked, fill, False, None, color)
            elif "c" not in ops and is_rectangle(corners):
                xs = [p[0] for p in corners]
                ys = [p[1] for p in corners]
                bbox = (min(xs), min(ys), max(xs), max(ys))
                shape = LTRect(linewidth, bbox, stroked, fill, False, None, color)
            else:
                shape = _curve(linewidth, pts, stroked, fill, color)
            if shape.width <= MARK_MAX_SIDE and shape.height <= MARK_MAX_SIDE:
                # The path as drawn, which only a shape the size of a list mark has read
                # (`layout.mark_glyph`): built for those alone.
                shape.original_path = [(op, *pt) for (op, _, _), pt in zip(subpath, pts, strict=True)]
            add_shape(model, shape, page_top)
        if (
            rectangle
            and fill
            and self.text_seen
            and not optional
            and rgba is not None
            and rgba[3] >= 1.0
            and not _transparent(obj)
            and not _optional(obj)
        ):
            path = [(op, x, y) if op != "h" else ("h",) for subpath in subpaths for op, x, y in subpath]
            boxes = filled_rectangles(path, to_page)
            if boxes:
                clip = _clip_box(obj, mult_matrix(form, self.ctm))
                for box in boxes:
                    self._cover(box, clip, image=False)

    def _image(self, obj: int, form: Matrix, optional: bool) -> None:
        left, bottom, right, top = c_float(), c_float(), c_float(), c_float()
        if not _object_bounds(obj, byref(left), byref(bottom), byref(right), byref(top)):
            return
        x0, y0, x1, y1 = _box(mult_matrix(form, self.ctm), left.value, bottom.value, right.value, top.value)
        page_top = self.page_top
        add_image(self.model, (x0, page_top - y1, x1, page_top - y0))
        inside = intersect(self.page, (x0, y0, x1, y1))
        self.image_area += (inside[2] - inside[0]) * (inside[3] - inside[1])
        matrix = _MatrixF()
        if (
            self.text_seen
            and not optional
            and _object_matrix(obj, byref(matrix))
            and abs(matrix.b) < 1e-6
            and abs(matrix.c) < 1e-6
            and not _transparent(obj)
            and not _optional(obj)
            and self.opaque(obj)
        ):
            self._cover((x0, y0, x1, y1), _clip_box(obj, mult_matrix(form, self.ctm)), image=True)

    def _cover(self, box: _Box, clip: _Box | None, *, image: bool) -> None:
        if clip is not None:
            box = intersect(clip, box)
        box = intersect(self.page, box)
        if box[2] - box[0] >= MIN_COVER_SIDE and box[3] - box[1] >= MIN_COVER_SIDE:
            self.covers.append((self.order, box, image))
            self.last_cover = self.order


def _covered(
    chars: list[tuple[LTChar, _TextObject]], covers: list[tuple[int, _Box, bool]], page: _Box, image_area: float
) -> list[LTChar]:
    """The glyphs of which one shape drawn after them hides at least `COVERED_SHARE` of
    the box and spans the ink band (`occlusion.Covers.covered`)."""
    grid, _ = cover_grid(covers, is_scan(page, image_area))
    if not grid:
        return []
    out: list[LTChar] = []
    last = max(order for order, _, _ in covers)
    cell = COVER_CELL
    # The rows of cells a cover reaches: a page's few covers leave most of its lines' rows
    # empty, and those glyphs are passed over before their columns are found.
    rows = {j for _, j in grid}
    for c, info in chars:
        if info.order >= last:
            continue  # drawn after every cover
        y0, y1 = c.y0, c.y1
        row = int((y0 + y1) / 2 // cell)
        if row not in rows:
            continue
        x0, x1 = c.x0, c.x1
        if (int((x0 + x1) / 2 // cell), row) not in grid:
            continue  # no cover over the glyph's centre (`covering` looks there only)
        if covering(grid, info.order, (x0, y0, x1, y1), _ink(c, info)):
            out.append(c)
    return out


def _ink(char: LTChar, info: _TextObject) -> Callable[[float, float], bool]:
    """Whether a shape from y0 to y1 spans the ink of the glyph: from its baseline up half
    an em (turned text: always)."""
    base = char.y0 + info.descent
    top = base + INK_BAND * info.size
    upright = info.upright
    return lambda y0, y1: not upright or (y0 <= base and top <= y1)
