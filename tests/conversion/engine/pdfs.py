"""Tiny PDF writer for engine tests: standard-14 fonts and raw content streams.

Coordinates are PDF points with the origin at the bottom left of a US Letter page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pikepdf

FONTS = {
    "R": "Helvetica",
    "B": "Helvetica-Bold",
    "I": "Helvetica-Oblique",
    "BI": "Helvetica-BoldOblique",
    "M": "Courier",
    "MB": "Courier-Bold",
}
# Besides FONTS: "X" names its glyphs by TrueType glyph index only ("g68" for "a") at
# codes of its own (see `glyph_index_codes`), so nothing maps them to Unicode but the glyph
# order; "S" is a symbol font whose ToUnicode
# maps "\u00b7" to the private-use bullet U+F0B7 and "n" to the private-use icon U+F06E,
# "o" to the ballot box U+2610, "x" to the ballot box with X U+2612, "\u00fe" to U+F0FE
# (Wingdings' box with a check, where a font maps it nowhere else), "v" to the dingbat
# U+2756 and "a" to the arrow U+2192 (bullets Word users pick from fonts of symbols).
WIDTH, HEIGHT = 612, 792


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    size: float = 11
    font: str = "R"
    gray: float = 0.0  # fill colour: 0 black, 1 white
    render: int = 0  # text render mode: 0 fill, 3 invisible


@dataclass(frozen=True)
class Rule:
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Box:
    """A rectangle stroked with `re` (pdfminer reads it as an LTRect)."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Runs:
    """Several font runs on one baseline, written one after the other."""

    x: float
    y: float
    runs: tuple[tuple[str, str], ...]  # (font key, text)
    size: float = 11
    sizes: tuple[float, ...] = ()  # a size for each run (inline code set smaller), else `size`


@dataclass(frozen=True)
class Fill:
    """A rectangle filled with a gray (0 black, 1 white), in one of the graphics states of
    `STATES` ("" for the default: opaque)."""

    x0: float
    y0: float
    x1: float
    y1: float
    gray: float = 0.2
    state: str = ""


# Graphics states a Fill may name: half transparent, multiplied onto what lies beneath (as
# highlighters are), painted through a soft mask.
STATES = ("half", "multiply", "softmask")


@dataclass(frozen=True)
class Image:
    """A small gray image drawn to fill the rectangle (a scan, a photograph); with
    `smask`, one whose soft mask makes parts of it transparent."""

    x0: float
    y0: float
    x1: float
    y1: float
    smask: bool = False


@dataclass(frozen=True)
class Raw:
    """Content stream operators written as they are."""

    operators: bytes


Op = Text | Rule | Runs | Box | Fill | Image | Raw


# "H": a simple font whose codes are cp1255 (ASCII, and the Hebrew letters at 0xE0-0xFA),
# read through its ToUnicode map, every glyph 500 units wide. Not embedded: viewers draw
# it with a substitute, and text extraction needs only the map and the widths. Text in it is written in visual order (left to right on the page), as PDF
# producers write right-to-left scripts.
HEBREW = "H"
# The same font named bold ("HB") and monospaced ("HM"): a bold title, a line of code.
HEBREW_BOLD = "HB"
HEBREW_MONO = "HM"
_HEBREW_FONTS = {HEBREW: "TestHebrew", HEBREW_BOLD: "TestHebrew-Bold", HEBREW_MONO: "TestHebrewMono"}
_HEBREW_TO_UNICODE = (
    b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Hebrew def "
    b"1 begincodespacerange <00> <FF> endcodespacerange "
    b"3 beginbfrange <20> <7E> <0020> <C0> <C9> <05B0> <E0> <FA> <05D0> endbfrange endcmap "
    b"CMapName currentdict /CMap defineresource pop end end"
)


def _literal(text: str, font: str = "R") -> bytes:
    raw = text.encode("cp1255" if font in _HEBREW_FONTS else "cp1252")
    out = bytearray(b"(")
    for byte in raw:
        if byte in b"()\\":
            out += b"\\" + bytes([byte])
        elif byte < 32 or byte > 126:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b")")


def content(ops: list[Op]) -> bytes:
    parts: list[bytes] = []
    for op in ops:
        if isinstance(op, Text):
            shown = b"BT /F%s %g Tf %g %g Td %s Tj ET" % (
                op.font.encode(),
                op.size,
                op.x,
                op.y,
                _literal(op.text, op.font),
            )
            if op.gray or op.render:
                # Colour and render mode are graphics state: saved and restored around the text.
                shown = b"q %g g %d Tr %s Q" % (op.gray, op.render, shown)
            parts.append(shown)
        elif isinstance(op, Fill):
            state = b"/GS%s gs " % op.state.encode() if op.state else b""
            parts.append(b"q %s%g g %g %g %g %g re f Q" % (state, op.gray, op.x0, op.y0, op.x1 - op.x0, op.y1 - op.y0))
        elif isinstance(op, Image):
            name = b"/Im1" if op.smask else b"/Im0"
            parts.append(b"q %g 0 0 %g %g %g cm %s Do Q" % (op.x1 - op.x0, op.y1 - op.y0, op.x0, op.y0, name))
        elif isinstance(op, Raw):
            parts.append(op.operators)
        elif isinstance(op, Runs):
            sizes = op.sizes or (op.size,) * len(op.runs)
            body = b" ".join(
                b"/F%s %g Tf %s Tj" % (font.encode(), size, _literal(text, font))
                for (font, text), size in zip(op.runs, sizes, strict=True)
            )
            parts.append(b"BT %g %g Td %s ET" % (op.x, op.y, body))
        elif isinstance(op, Box):
            parts.append(b"0.5 w %g %g %g %g re S" % (op.x0, op.y0, op.x1 - op.x0, op.y1 - op.y0))
        else:
            parts.append(b"0.5 w %g %g m %g %g l S" % (op.x0, op.y0, op.x1, op.y1))
    return b"\n".join(parts)


def glyph_index_codes(text: str) -> str:
    """`text` (printable ASCII) as the codes of font "X": 1 for space, 2 for "!", ..."""
    return "".join(chr(ord(ch) - 31) for ch in text)


def glyph_index_font() -> pikepdf.Dictionary:
    """Helvetica whose codes 1-95 name the standard-order glyph indexes of space to "~"."""
    differences: list[object] = [1]
    differences += [pikepdf.Name(f"/g{code - 29}") for code in range(32, 127)]
    return pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.Type1,
        BaseFont=pikepdf.Name("/Helvetica"),
        Encoding=pikepdf.Dictionary(Type=pikepdf.Name.Encoding, Differences=pikepdf.Array(differences)),
    )


def private_use_font(pdf: pikepdf.Pdf) -> pikepdf.Dictionary:
    cmap = b"""/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Symbolic def /CMapType 2 def
1 begincodespacerange <00> <FF> endcodespacerange
7 beginbfchar <B7> <F0B7> <6E> <F06E> <6F> <2610> <78> <2612> <FE> <F0FE> <76> <2756> <61> <2192> endbfchar
endcmap CMapName currentdict /CMap defineresource pop end end"""
    return pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.Type1,
        BaseFont=pikepdf.Name("/Helvetica"),
        Encoding=pikepdf.Name.WinAnsiEncoding,
        ToUnicode=pdf.make_stream(cmap),
    )


def _gray_image(pdf: pikepdf.Pdf, data: bytes, **extra: object) -> pikepdf.Stream:
    """An 8 x 8 gray image XObject."""
    return pdf.make_stream(
        data,
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Image,
        Width=8,
        Height=8,
        ColorSpace=pikepdf.Name.DeviceGray,
        BitsPerComponent=8,
        **extra,
    )


def font_descriptor(name: str, descent: int = -200) -> pikepdf.Dictionary:
    """A FontDescriptor naming the font `name` (pdfminer reads a font's name there), its
    glyphs 800 units above the baseline and `descent` below."""
    return pikepdf.Dictionary(
        Type=pikepdf.Name.FontDescriptor,
        FontName=pikepdf.Name("/" + name),
        Flags=32,
        FontBBox=[0, min(descent, -200), 1000, max(-descent, 800)],
        ItalicAngle=0,
        Ascent=800,
        Descent=descent,
        CapHeight=700,
        StemV=80,
    )


def make_pdf(path: Path, pages: list[list[Op]]) -> Path:
    pdf = pikepdf.new()
    fonts = pikepdf.Dictionary(
        {
            f"/F{key}": pdf.make_indirect(
                pikepdf.Dictionary(
                    Type=pikepdf.Name.Font,
                    Subtype=pikepdf.Name.Type1,
                    BaseFont=pikepdf.Name("/" + base),
                    Encoding=pikepdf.Name.WinAnsiEncoding,
                )
            )
            for key, base in FONTS.items()
        }
    )
    fonts["/FX"] = pdf.make_indirect(glyph_index_font())
    fonts["/FS"] = pdf.make_indirect(private_use_font(pdf))
    hebrew_map = pdf.make_stream(_HEBREW_TO_UNICODE)
    for key, base in _HEBREW_FONTS.items():
        fonts[f"/F{key}"] = pdf.make_indirect(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Font,
                Subtype=pikepdf.Name.Type1,
                BaseFont=pikepdf.Name("/" + base),
                FirstChar=32,
                LastChar=255,
                # The vowel points (0xC0-0xC9) have no width: they sit over their letter.
                Widths=[0 if 0xC0 <= code <= 0xC9 else 500 for code in range(32, 256)],
                ToUnicode=hebrew_map,
                # The name that says bold or monospaced is the descriptor's FontName.
                FontDescriptor=font_descriptor(base),
            )
        )
    image = _gray_image(pdf, bytes(range(0, 256, 4)))
    # The same picture with a soft mask of stripes: every other column transparent.
    masked = _gray_image(pdf, bytes(range(0, 256, 4)), SMask=_gray_image(pdf, bytes([0, 255] * 32)))
    luminosity = pdf.make_stream(
        b"0.5 g 0 0 612 792 re f",
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Form,
        BBox=[0, 0, WIDTH, HEIGHT],
        Group=pikepdf.Dictionary(S=pikepdf.Name.Transparency, CS=pikepdf.Name.DeviceGray),
    )
    states = pikepdf.Dictionary(
        GShalf=pikepdf.Dictionary(Type=pikepdf.Name.ExtGState, ca=0.5),
        GSmultiply=pikepdf.Dictionary(Type=pikepdf.Name.ExtGState, BM=pikepdf.Name.Multiply),
        GSsoftmask=pikepdf.Dictionary(
            Type=pikepdf.Name.ExtGState, SMask=pikepdf.Dictionary(S=pikepdf.Name.Luminosity, G=luminosity)
        ),
    )
    for ops in pages:
        page = pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=[0, 0, WIDTH, HEIGHT],
                Resources=pikepdf.Dictionary(
                    Font=fonts, XObject=pikepdf.Dictionary(Im0=image, Im1=masked), ExtGState=states
                ),
                Contents=pdf.make_stream(content(ops)),
            )
        )
        pdf.pages.append(page)
    pdf.save(path)
    return path


def lines(
    x: float,
    top: float,
    texts: list[str],
    *,
    size: float = 11,
    leading: float = 14,
    font: str = "R",
) -> list[Op]:
    """Consecutive lines starting at baseline `top`, one `leading` apart."""
    return [Text(x, top - i * leading, t, size, font) for i, t in enumerate(texts)]


def ruled_grid(rows: list[list[str]], top: float, *, xs: tuple[float, ...] | list[float] = (72, 200, 330)) -> list[Op]:
    """A table ruled on every side of every cell, its top rule at `top`, 20 points a row."""
    ys = [top - 20 * i for i in range(len(rows) + 1)]
    ops: list[Op] = [Rule(xs[0], y, xs[-1], y) for y in ys]
    ops += [Rule(x, ys[-1], x, ys[0]) for x in xs]
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            ops.append(Text(xs[c] + 4, ys[r] - 14, text, 10))
    return ops


def add_outline(path: Path, entries: list[tuple[int, str, int]]) -> Path:
    """Bookmarks (depth from 1, title, 0-based page) written in order, nested by depth."""
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        with pdf.open_outline() as outline:
            parents: list[pikepdf.OutlineItem] = []
            for depth, title, page in entries:
                item = pikepdf.OutlineItem(title, page)
                del parents[depth - 1 :]
                (parents[-1].children if parents else outline.root).append(item)
                parents.append(item)
        pdf.save(path)
    return path


def produced_by(path: Path, producer: str, creator: str = "Writer") -> Path:
    """Set the document information's Producer and Creator (as LibreOffice's Writer writes
    "LibreOffice 7.4" and "Writer")."""
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.docinfo["/Producer"] = producer
        pdf.docinfo["/Creator"] = creator
        pdf.save(path)
    return path
