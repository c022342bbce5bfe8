"""OCR of pages without a usable text layer: the page rendered in-process (pypdfium2), its
words recognised by Tesseract 5 (through tesserocr, with the traineddata of Debian's
``tesseract-ocr-*`` packages), and turned into the same `Line`s the text-layer path makes, so
that layout, headings, lists, tables and reading order run on them unchanged.

A page needs OCR (`needs_ocr`) when it has no text, when most of its glyphs are garbage the
engine already recognises (unmapped ``(cid:N)`` glyphs, private-use characters), or when a
picture covers most of it and its text is a stamp (a Bates number over a scan). An
invisible text layer over a scan (an earlier OCR) is text already (`layout._uncover`): it is
used as is unless OCR is forced.

Bold is not something Tesseract reports (its LSTM recogniser gives no font attributes), so it
is measured on the picture: a word's stroke width is twice its ink over its ink's edges, and
a word whose strokes are markedly thicker, for its height, than the page's body text is bold
(bold faces' stems are 1.4 to 1.7 times their regular's). Headings set in bold at the body's
size are then found as on a text layer.

The scan is read upright: a page that reads badly at first is checked by Tesseract's
orientation detection and read again turned (90, 180, 270 degrees); a skew of a few
degrees is measured on the recognised baselines and the word boxes turned back by it.
Nothing is downloaded: the models are the installed traineddata files.

Boxes are the page's as displayed (points from its top-left corner); a page read turned
by 90 or 270 degrees is described upright (its width and height swapped).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import re
import statistics
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .bidi import strong_direction, unit_order
from .elements import GLYPH_GARBAGE, Element, ElementType
from .errors import EngineError
from .layout import BOLD, MONO, Line, OcrFacts, PageModel, has_rtl, is_rtl
from .render import PageRenderer

__all__ = [
    "ISO_TO_TESSERACT",
    "OCR_OFF",
    "OcrOptions",
    "OcrParams",
    "PageOcr",
    "installed_languages",
    "mark_elements",
    "needs_ocr",
    "ocr_available",
]

OcrMode = Literal["off", "auto", "force"]

# ISO 639-1 codes (what clients send) and Tesseract's traineddata names.
ISO_TO_TESSERACT: dict[str, str] = {
    "en": "eng",
    "de": "deu",
    "fr": "fra",
    "es": "spa",
    "it": "ita",
    "pt": "por",
    "nl": "nld",
    "ar": "ara",
    "zh": "chi_sim",
    "ja": "jpn",
    "ru": "rus",
    "uk": "ukr",
    "he": "heb",
    "fa": "fas",
    "el": "ell",
    "ko": "kor",
}
TESSERACT_TO_ISO = {name: iso for iso, name in ISO_TO_TESSERACT.items()}
# The models that read each writing system, by the script names Tesseract's orientation and
# script detection reports, in the order one is taken when a page turns out to be written in
# a script none of the requested languages is (the most widely read language of the script
# first). Latin is absent: English, always read, covers its letters.
SCRIPT_MODELS: dict[str, tuple[str, ...]] = {
    "Cyrillic": ("rus", "ukr"),
    "Arabic": ("ara", "fas"),
    "Hebrew": ("heb",),
    "Greek": ("ell",),
    "Han": ("chi_sim", "jpn"),
    "Japanese": ("jpn",),
    "Korean": ("kor",),
}
# Debian's path for Tesseract 5's traineddata; TESSDATA_PREFIX (Tesseract's own variable) moves it.
DEFAULT_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"


def tessdata_dir() -> Path:
    return Path(os.environ.get("TESSDATA_PREFIX") or DEFAULT_TESSDATA)


def installed_languages() -> list[str]:
    """The ISO codes whose traineddata is installed (empty when OCR is not available)."""
    if not ocr_available():
        return []
    present = {p.name.removesuffix(".traineddata") for p in tessdata_dir().glob("*.traineddata")}
    return sorted(iso for iso, name in ISO_TO_TESSERACT.items() if name in present)


def ocr_available() -> bool:
    """Whether the OCR engine (tesserocr) and the English and orientation models are installed."""
    try:
        import pypdfium2  # noqa: F401
        import tesserocr  # noqa: F401
    except ImportError:
        return False
    return all((tessdata_dir() / f"{name}.traineddata").exists() for name in ("eng", "osd"))


@dataclass(frozen=True)
class OcrOptions:
    """`mode`: off (never), auto (pages that need it), force (every page, an existing text
    layer replaced); `languages`: ISO codes of the languages the pages are written in."""

    mode: OcrMode = "off"
    languages: tuple[str, ...] = ("en",)


OCR_OFF = OcrOptions()


@dataclass(frozen=True)
class OcrParams:
    """Thresholds of the OCR stage, each with its unit and why."""

    # Dots per inch a page is rendered at: Tesseract reads best at an x-height of 20-30
    # pixels, 10-point text at 300 dpi (bench/results/ocr.md).
    dpi: float = 300.0
    # Pixels of one rendering at most (one byte each, greyscale): a poster-sized page is
    # rendered at a lower resolution rather than taking hundreds of megabytes.
    max_pixels: int = 40_000_000
    # Share of a page's glyphs that are unmapped or private-use above which its text layer
    # is garbage (a font without a Unicode map): the page is read from its picture instead.
    garbage_share: float = 0.5
    # Characters: a page with at most this much text, mostly covered by a picture, is a
    # scan with a stamp or a Bates number on it.
    stamp_chars: int = 40
    # Fraction of the page's area a picture covers to make it a scan.
    scan_cover: float = 0.6
    # Mean word confidence (0-100) below which a page's orientation and script are checked:
    # an upright page of clean text reads at 85-95, one upside down or in a script the
    # models read do not write (Russian read by the English model) at under 40.
    check_orientation_below: float = 60.0
    # Share of the characters in lines wider than tall below which the orientation is
    # checked: a page turned 90 degrees is read as vertical writing.
    check_orientation_upright: float = 0.5
    # Tesseract's orientation confidence needed to turn a page (its own default margin is 7).
    orientation_margin: float = 5.0
    # Mean word confidence (0-100) by which a page read again with the model of the script
    # it was found written in must beat its first reading to replace it: a page read in the
    # wrong script reads at 30-40, in the right one at 80-95; noise moves it a few points.
    script_gain: float = 10.0
    # Degrees: a skew under this is left alone (scanners' own tolerance), one over the
    # maximum is not a skew but a page set at an angle, left to the orientation check.
    skew_min_degrees: float = 0.3
    skew_max_degrees: float = 10.0
    # Pixels: baselines shorter than this say little about the skew.
    skew_min_baseline: float = 200.0
    # Font size in points per point of Tesseract's row height (x-height plus ascenders):
    # measured on the bench's pages, whose text layer gives the true size.
    size_per_row_height: float = 1.05
    # The x-height as a fraction of the font size (the em): 0.45 (Times) to 0.55 (DejaVu
    # Sans), 0.52 for Helvetica and Arial; sizes are compared with each other, so the
    # typeface's own ratio matters little.
    x_height_per_em: float = 0.5
    # x-height letters a line has at least before their heights give its size (one letter's
    # box is off by a pixel or two).
    min_x_letters: int = 3
    # Fraction: line sizes within this of the next larger are one size (OCR measures each
    # line's height with a few pixels of noise; heading levels differ by 15% or more).
    size_snap: float = 0.12
    # Monospaced text: from one word's start to the next is the same width per character
    # (the word and its space) all along the line, within this spread (standard deviation
    # over mean; 0.03 and under for code on the bench's pages, 0.08 and more for prose of
    # ten words or more), over at least `mono_min_pairs` pairs of words (a short line of
    # prose can be that even by chance).
    mono_spread: float = 0.03
    mono_min_pairs: int = 4
    # A lone mark opening a line, at most this fraction of the line's height tall, is a list
    # bullet Tesseract misread ("e", "«", "°").
    bullet_max_height: float = 0.6
    # Stroke width (pixels of ink across a stroke, per pixel of the line's row height) of a
    # bold word, as a multiple of the page's body text's: bold faces' stems are 1.4-1.7x
    # their regular's (Times 1.65, Helvetica 1.6, Calibri 1.5, DejaVu Sans 1.45); a scan's
    # noise moves a word's measure by a tenth or so.
    bold_stroke_ratio: float = 1.25
    # Characters of a page's lines, at least, before its body text's stroke is trusted.
    bold_min_body_chars: int = 200
    # Characters a run of bold words inside a line has at least (a short word's measure is
    # noisy: "in" can measure 1.5 times the body); a whole line is judged at any length.
    bold_min_run_chars: int = 5
    # Seconds one page's recognition may take (Tesseract's own deadline); the layout
    # stage's per-page budget.
    page_seconds: float = 45.0


PARAMS = OcrParams()

# What Tesseract reads a round or square bullet as.
_BULLET_MISREADS = frozenset({"e", "«", "°", "©", "¢", "*", "+", "o", "»", "®", "•", "·", "■", "□", "▪", "-"})
# Letters with neither ascender nor descender: their height is the font's x-height.
_X_HEIGHT_LETTERS = frozenset("acemnorsuvwxz")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def needs_ocr(model: PageModel, params: OcrParams = PARAMS) -> bool:
    """Whether the page's text layer is unusable: no text, mostly unmapped or private-use
    glyphs, or a stamp on a picture that covers the page."""
    if not model.has_text_layer:
        return True
    glyphs = garbage = 0
    for line in model.lines:
        found = len(GLYPH_GARBAGE.findall(line.text))
        garbage += found
        glyphs += found + sum(1 for ch in GLYPH_GARBAGE.sub("", line.text) if not ch.isspace())
    if glyphs and garbage / glyphs >= params.garbage_share:
        return True
    area = model.width * model.height
    covered = max(((x1 - x0) * (bottom - top) for x0, top, x1, bottom in model.images), default=0.0)
    return glyphs - garbage <= params.stamp_chars and area > 0 and covered / area >= params.scan_cover


# --- recognition ------------------------------------------------------------------------------


@dataclass
class Word:
    text: str
    box: tuple[float, float, float, float]  # x0, top, x1, bottom: pixels of the upright image
    confidence: float  # 0-100, Tesseract's
    # Pixels of ink in the box, and of its edges (where ink meets paper, across and along):
    # a stroke of width w and length L >> w has ink wL and edges 2L, so 2 ink / edges is w.
    ink: int = 0
    edges: int = 0


@dataclass
class OcrLine:
    words: list[Word]
    row_height: float  # pixels: x-height plus ascenders
    descenders: float  # pixels, negative
    baseline: tuple[tuple[int, int], tuple[int, int]] | None
    # Pixels: the heights of the line's letters that stand on the baseline and reach the
    # x-height only (a c e m n o r s u v w x z): the steadiest measure of the type's size.
    x_heights: list[float] = field(default_factory=list)


@dataclass
class Recognised:
    lines: list[OcrLine]
    width: int  # pixels of the upright image
    height: int
    rotation: int = 0  # degrees the rendering was turned (counter-clockwise) to read upright
    skew: float = 0.0  # degrees the text leaned (clockwise), corrected in the boxes
    # Tesseract's models the page was read with ("eng+rus"); empty where not said.
    languages: str = ""
    # The script the page was found written in when none of the models it was first read
    # with reads it, and it was read again with that script's model ("Cyrillic").
    script: str = ""

    @property
    def confidence(self) -> float:
        """Mean word confidence (0-100), weighted by characters; 0 without words."""
        weight = total = 0.0
        for line in self.lines:
            for w in line.words:
                weight += len(w.text)
                total += len(w.text) * w.confidence
        return total / weight if weight else 0.0

    @property
    def characters(self) -> int:
        return sum(len(w.text) for line in self.lines for w in line.words)

    @property
    def upright_share(self) -> float:
        """Share of the characters in lines wider than tall: Tesseract reads a page turned
        90 degrees as vertical writing, its lines taller than wide."""
        wide = total = 0
        for line in self.lines:
            chars = sum(len(w.text) for w in line.words)
            x0 = min(w.box[0] for w in line.words)
            x1 = max(w.box[2] for w in line.words)
            top = min(w.box[1] for w in line.words)
            bottom = max(w.box[3] for w in line.words)
            total += chars
            if x1 - x0 >= bottom - top:
                wide += chars
        return wide / total if total else 1.0


class _Tesseract:
    """Tesseract instances of this process by language set (loading one takes 0.1-1 s),
    the most recent few kept; one thread at a time (an instance is not thread-safe)."""

    KEEP = 3  # language sets kept loaded (each holds its models: tens of MB)

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._apis: dict[str, Any] = {}

    def api(self, languages: str) -> Any:
        import tesserocr

        api = self._apis.pop(languages, None)
        if api is None:
            api = tesserocr.PyTessBaseAPI(path=str(tessdata_dir()), lang=languages, psm=tesserocr.PSM.AUTO)
            # Word lists bias the reading towards dictionary words; code, names and numbers
            # are common in documents, so the recogniser's own reading is kept.
            while len(self._apis) >= self.KEEP:
                self._apis.pop(next(iter(self._apis))).End()
        self._apis[languages] = api  # most recent last
        return api

    def orientation(self, image: Any) -> dict[str, Any] | None:
        import tesserocr

        api = self._apis.get("osd")
        if api is None:
            api = self._apis["osd"] = tesserocr.PyTessBaseAPI(
                path=str(tessdata_dir()), lang="osd", psm=tesserocr.PSM.OSD_ONLY
            )
        api.SetImage(image)
        try:
            result: dict[str, Any] | None = api.DetectOrientationScript()
        except RuntimeError:
            return None  # too little text to tell
        return result


_TESSERACT = _Tesseract()


def tesseract_languages(languages: Sequence[str]) -> str:
    """Tesseract's language string ("deu+eng") for ISO codes; English always added, as
    documents in any language carry English names and terms.

    Raises:
        EngineError: ocr_language_not_available for a code without installed traineddata.
    """
    names: list[str] = []
    for code in [*languages, "en"]:
        name = ISO_TO_TESSERACT.get(code)
        if name is None or not (tessdata_dir() / f"{name}.traineddata").exists():
            raise EngineError(
                "ocr_language_not_available",
                f"OCR in language {code!r} is not installed. Use one of: {', '.join(installed_languages())}.",
                details={"language": code, "installed": installed_languages()},
                param="options.ocr_languages",
            )
        if name not in names:
            names.append(name)
    return "+".join(names)


def _read(api: Any, image: Any, dpi: float, params: OcrParams) -> list[OcrLine]:
    from tesserocr import RIL

    api.SetImage(image)
    api.SetSourceResolution(round(dpi))
    if not api.Recognize(timeout=int(params.page_seconds * 1000)):
        return []
    lines: list[OcrLine] = []
    it = api.GetIterator()
    if it is None or it.Empty(RIL.WORD):
        return []
    current: OcrLine | None = None
    while True:  # symbol by symbol: the words at their first symbol, x-height letters as they come
        if it.IsAtBeginningOf(RIL.TEXTLINE) or current is None:
            attrs = it.RowAttributes()
            current = OcrLine([], float(attrs["row_height"]), float(attrs["descenders"]), it.Baseline(RIL.TEXTLINE))
            lines.append(current)
        if it.IsAtBeginningOf(RIL.WORD):
            text = (it.GetUTF8Text(RIL.WORD) or "").strip()
            box = it.BoundingBox(RIL.WORD)
            if text and box is not None:
                current.words.append(Word(text, tuple(float(v) for v in box), float(it.Confidence(RIL.WORD))))  # type: ignore[arg-type]  # four floats
        if it.GetUTF8Text(RIL.SYMBOL) in _X_HEIGHT_LETTERS and (symbol := it.BoundingBox(RIL.SYMBOL)) is not None:
            current.x_heights.append(float(symbol[3] - symbol[1]))
        if not it.Next(RIL.SYMBOL):
            break
    return [ln for ln in lines if ln.words]


def recognise(image: Any, languages: str, dpi: float, params: OcrParams = PARAMS) -> Recognised:
    """The words of a page image, read upright: a page that reads badly is checked for a
    turn of 90, 180 or 270 degrees and read again turned, and for a script none of
    `languages` (Tesseract's "deu+eng") reads, and read again with that script's installed
    model added (`Recognised.languages` says which were used); the skew is measured and taken
    out of the word boxes."""
    with _TESSERACT.lock:
        api = _TESSERACT.api(languages)
        lines = _read(api, image, dpi, params)
        result = Recognised(lines, image.width, image.height, languages=languages)
        read_from = image
        if (
            result.confidence < params.check_orientation_below
            or result.upright_share < params.check_orientation_upright
        ):
            found = _TESSERACT.orientation(image)
            turn = int(found["orient_deg"]) if found else 0
            if turn and float(found["orient_conf"]) >= params.orientation_margin:  # type: ignore[index]  # found is set when turn is
                # Tesseract gives the clockwise turn the page was scanned with; PIL turns
                # counter-clockwise.
                turned = image.rotate(turn, expand=True)
                again = Recognised(
                    _read(api, turned, dpi, params), turned.width, turned.height, rotation=turn, languages=languages
                )
                if _better(again, result, params):
                    result, read_from = again, turned
            script = str(found.get("script_name") or "") if found else ""
            model = script_model(script, languages)
            if model is not None:
                wider = f"{languages}+{model}"
                again = Recognised(
                    _read(_TESSERACT.api(wider), read_from, dpi, params),
                    read_from.width,
                    read_from.height,
                    rotation=result.rotation,
                    languages=wider,
                )
                if _better(again, result, params) and again.confidence >= result.confidence + params.script_gain:
                    result = again
                    result.script = script
    _measure_strokes(result, read_from)
    _deskew(result, params)
    return result


def script_model(script: str, languages: str) -> str | None:
    """The installed model (Tesseract's name) that reads `script` (a script name of
    Tesseract's detection: "Cyrillic"), when none of `languages` ("deu+eng") does; None when
    one does, the script is Latin or unknown, or no model of it is installed."""
    models = SCRIPT_MODELS.get(script, ())
    if set(models) & set(languages.split("+")):
        return None
    return next((m for m in models if (tessdata_dir() / f"{m}.traineddata").exists()), None)


def _ink_threshold(image: Any) -> int:
    """The grey level that parts ink from paper (Otsu's method on the image's histogram)."""
    histogram = image.histogram()[:256]
    total = sum(histogram)
    weighted = sum(level * count for level, count in enumerate(histogram))
    best, threshold = -1.0, 128
    below = below_weighted = 0.0
    for level, count in enumerate(histogram):
        below += count
        if below == 0 or below == total:
            continue
        below_weighted += level * count
        mean_below = below_weighted / below
        mean_above = (weighted - below_weighted) / (total - below)
        spread = below * (total - below) * (mean_below - mean_above) ** 2
        if spread > best:
            best, threshold = spread, level + 1
    return threshold


def _measure_strokes(result: Recognised, image: Any) -> None:
    """Each word's stroke width in pixels, measured on the image it was read from (before
    the boxes are deskewed): twice its ink pixels over the ink's edges (the pixels where ink
    meets paper, across and along), which for a stroke of width w and length L >> w is w."""
    from PIL import ImageChops

    threshold = _ink_threshold(image)
    ink = image.point([255 if level < threshold else 0 for level in range(256)])
    for line in result.lines:
        for w in line.words:
            x0, top, x1, bottom = (round(v) for v in w.box)
            if x1 - x0 < 2 or bottom - top < 2:
                continue
            crop = ink.crop((x0, top, x1, bottom))
            width, height = crop.size
            area = crop.histogram()[255]
            across = ImageChops.difference(crop.crop((1, 0, width, height)), crop.crop((0, 0, width - 1, height)))
            along = ImageChops.difference(crop.crop((0, 1, width, height)), crop.crop((0, 0, width, height - 1)))
            w.ink, w.edges = area, across.histogram()[255] + along.histogram()[255]


def _better(a: Recognised, b: Recognised, params: OcrParams) -> bool:
    """Whether reading `a` is better than `b`: lines across the page first (Tesseract reads
    text turned 90 degrees as vertical writing, often confidently), then confidence."""

    def key(r: Recognised) -> tuple[bool, float]:
        return r.upright_share >= params.check_orientation_upright, r.confidence

    return key(a) > key(b)


def _deskew(result: Recognised, params: OcrParams) -> None:
    """Measure the skew on the baselines and turn the word boxes back by it (about the
    image's centre), so that the lines lie level."""
    angles: list[float] = []
    for line in result.lines:
        if line.baseline is None:
            continue
        (start_x, start_y), (end_x, end_y) = line.baseline
        if math.hypot(end_x - start_x, end_y - start_y) >= params.skew_min_baseline:
            angles.append(math.degrees(math.atan2(end_y - start_y, end_x - start_x)))
    if not angles:
        return
    skew = statistics.median(angles)
    if not params.skew_min_degrees <= abs(skew) <= params.skew_max_degrees:
        return
    result.skew = skew
    theta = math.radians(skew)
    cos, sin = math.cos(theta), math.sin(theta)
    cx, cy = result.width / 2, result.height / 2
    for line in result.lines:
        for w in line.words:
            x0, top, x1, bottom = w.box
            mx, my = (x0 + x1) / 2 - cx, (top + bottom) / 2 - cy
            nx, ny = cx + mx * cos + my * sin, cy - mx * sin + my * cos
            width = x1 - x0
            # A leaning word's box is taller than the word by its width times the lean.
            height = max((bottom - top) - width * abs(sin), 0.6 * (bottom - top))
            w.box = (nx - width / 2, ny - height / 2, nx + width / 2, ny + height / 2)


# --- lines --------------------------------------------------------------------------------


def _joined(words: Sequence[Word]) -> str:
    out = ""
    for w in words:
        if out and not (_CJK.match(out[-1]) and _CJK.match(w.text[0])):
            out += " "
        out += w.text
    return out


def stroke(words: Sequence[Word], row_height: float) -> float | None:
    """The stroke width of the words together, per pixel of their line's row height (a
    measure of weight that does not change with the size of the type); None without ink."""
    ink = sum(w.ink for w in words)
    edges = sum(w.edges for w in words)
    return 2.0 * ink / edges / row_height if ink and edges and row_height > 0 else None


def script_of(word: Word) -> str:
    """The writing system a word's weight is judged within: right-to-left (Arabic, Hebrew),
    CJK, or the others (Latin, Cyrillic, Greek, digits). Scripts draw their strokes
    differently: Latin words in an Arabic page are thicker for their height than its Arabic."""
    if is_rtl(word.text):
        return "rtl"
    return "cjk" if _CJK.search(word.text) else "other"


def body_stroke(lines: Sequence[OcrLine], params: OcrParams = PARAMS) -> dict[str, float]:
    """The stroke of the page's body text (per pixel of row height) in each script it is
    written in: the median over the script's characters of its words' strokes; a script with
    too little text on the page to tell has none."""
    weighted: dict[str, list[tuple[float, int]]] = {}
    for ln in lines:
        for w in ln.words:
            measured = stroke([w], ln.row_height)
            if measured is not None:
                weighted.setdefault(script_of(w), []).append((measured, len(w.text)))
    body: dict[str, float] = {}
    for script, strokes in weighted.items():
        total = sum(n for _, n in strokes)
        if total < params.bold_min_body_chars:
            continue
        seen = 0
        for measured, n in sorted(strokes):
            seen += n
            if 2 * seen >= total:
                body[script] = measured
                break
    return body


def _line(
    ocr: OcrLine,
    scale: float,
    size: float,
    params: OcrParams,
    pitch: float | None = None,
    body: Mapping[str, float] | None = None,
    page_rtl: bool = False,
) -> Line:
    words = list(ocr.words)
    # A line with right-to-left letters is read right to left on a right-to-left page, or
    # where they are most of its letters (as the text layer's lines: layout._settle_directions).
    raw = " ".join(w.text for w in words)
    rtl_letters = has_rtl(raw)
    line_rtl = rtl_letters and (page_rtl or is_rtl(raw))
    # Tesseract gives a right-to-left word's characters in visual order (left to right on
    # the page); the words of a line mixing scripts come in an order of its own. A line
    # with right-to-left letters is put in reading order from the words' places.
    shown = _logical_words(words, line_rtl) if rtl_letters else words
    first = shown[0]
    height = max(w.box[3] for w in words) - min(w.box[1] for w in words)
    if (
        len(shown) > 1
        and len(first.text) == 1
        and first.text in _BULLET_MISREADS
        and first.box[3] - first.box[1] <= params.bullet_max_height * height
    ):
        bullet = Word("•", first.box, first.confidence)
        shown[0] = bullet
        words = [bullet if w.box == first.box else w for w in words]
    text = _joined(shown)
    mono = MONO if _monospaced(ocr.words, params, pitch) else 0
    spans = _styled(shown, ocr.row_height, mono, body, params)
    glyph_x: list[float] = []
    glyph_text: list[str] = []
    max_gap = 0.0
    previous_end: float | None = None
    for w in sorted(words, key=lambda w: w.box[0]):
        x0, x1 = w.box[0] / scale, w.box[2] / scale
        if previous_end is not None:
            max_gap = max(max_gap, x0 - previous_end)
            glyph_x += [previous_end, previous_end]
            glyph_text.append(" ")
        step = (x1 - x0) / len(w.text)
        for i, ch in enumerate(w.text):
            glyph_x += [x0 + i * step, x0 + (i + 1) * step]
            glyph_text.append(ch)
        previous_end = x1
    style = mono | (BOLD if all(s & BOLD for _, s in spans) else 0)
    weight = sum(len(w.text) for w in words)
    confidence = sum(len(w.text) * w.confidence for w in words) / weight / 100.0
    return Line(
        x0=min(w.box[0] for w in words) / scale,
        top=min(w.box[1] for w in words) / scale,
        x1=max(w.box[2] for w in words) / scale,
        bottom=max(w.box[3] for w in words) / scale,
        text=text,
        spans=spans,
        size=round(size * 2) / 2,  # half points
        style=style,
        glyph_x=glyph_x,
        glyph_text=glyph_text,
        max_gap=max_gap,
        rtl=line_rtl,
        confidence=max(0.0, min(1.0, confidence)),
    )


# Sentence punctuation a word carries at an edge ("PDF." ending a Hebrew line): set apart from
# the word's letters, it takes its place from its neighbours. Brackets and quotes stay with the
# word: Tesseract gives them as they are drawn beside it.
_EDGE_PUNCTUATION = frozenset(".,:;!?\u060c\u061b\u061f")


def _units(word: str) -> list[tuple[str, str]]:
    """A word as units of the bidirectional algorithm, (text, class): a word with letters is
    one unit of the direction of most of them, less the sentence punctuation at its edges, a
    unit per character; a word without letters (a number, a list item's "1.") is a unit per
    character, each of its own class, so that the algorithm settles it between its
    neighbours as it would on a text layer."""
    ltr, rtl = strong_direction(word)
    if not (ltr or rtl):
        return [(ch, unicodedata.bidirectional(ch) or "ON") for ch in word]
    start, end = 0, len(word)
    while word[start] in _EDGE_PUNCTUATION:
        start += 1
    while word[end - 1] in _EDGE_PUNCTUATION:
        end -= 1
    return [
        *((ch, unicodedata.bidirectional(ch) or "ON") for ch in word[:start]),
        (word[start:end], "R" if rtl > ltr else "L"),
        *((ch, unicodedata.bidirectional(ch) or "ON") for ch in word[end:]),
    ]


def _logical_words(words: Sequence[Word], rtl: bool) -> list[Word]:
    """A line's words in reading order, each with its text logical: the words from left to
    right on the page, reordered by the Unicode bidirectional algorithm in a paragraph of
    direction `rtl` (bidi.unit_order over `_units`); a unit that ends at an odd level (right
    to left) has its characters, which Tesseract gives as they lie on the page, turned
    around (Tesseract already gives a bracket as the one the text means, not as drawn)."""
    visual = sorted(words, key=lambda w: w.box[0])
    units: list[tuple[int, str, str]] = []  # (word index, or -1 for the space between two)
    for i, w in enumerate(visual):
        if i:
            units.append((-1, " ", "WS"))
        units += [(i, text, cls) for text, cls in _units(w.text)]
    out: list[Word] = []
    last = -1
    for k, level in unit_order([cls for _, _, cls in units], rtl):
        index, text, _ = units[k]
        if index < 0:
            last = -1
            continue
        text = text[::-1] if level % 2 else text
        w = visual[index]
        if index == last:  # the next piece of a word split into units
            out[-1] = Word(out[-1].text + text, w.box, w.confidence, w.ink, w.edges)
        else:
            out.append(Word(text, w.box, w.confidence, w.ink, w.edges))
        last = index
    return out


def _styled(
    words: Sequence[Word], row_height: float, base: int, body: Mapping[str, float] | None, params: OcrParams
) -> list[tuple[str, int]]:
    """The line's style runs: `base` for every word, and BOLD for the runs of words whose
    stroke, taken together, is `params.bold_stroke_ratio` times the body's or more: the whole
    line, or a run of at least `params.bold_min_run_chars` characters (a short word's own
    measure is too noisy). The runs join to the line's text (a space between runs ends the
    run before it)."""
    bold = _bold_words(words, row_height, body, params)
    runs: list[tuple[str, int]] = []
    out = ""
    for w, is_bold in zip(words, bold, strict=True):
        style = base | (BOLD if is_bold else 0)
        space = " " if out and not (_CJK.match(out[-1]) and _CJK.match(w.text[0])) else ""
        out += space + w.text
        if runs and runs[-1][1] == style:
            runs[-1] = (runs[-1][0] + space + w.text, style)
        else:
            if runs:
                runs[-1] = (runs[-1][0] + space, runs[-1][1])
            runs.append((w.text, style))
    return runs


def _bold_words(
    words: Sequence[Word], row_height: float, body: Mapping[str, float] | None, params: OcrParams
) -> list[bool]:
    """Which words are bold, each judged against the body text of its own script (a script
    the page has too little of is never bold)."""
    body = body or {}

    def heavy(group: Sequence[Word]) -> bool:
        """The words' strokes, pooled by script, each past its script's body by the ratio."""
        scripts: dict[str, list[Word]] = {}
        for w in group:
            scripts.setdefault(script_of(w), []).append(w)
        for script, these in scripts.items():
            measured = stroke(these, row_height)
            if script not in body or measured is None or measured < params.bold_stroke_ratio * body[script]:
                return False
        return True

    if words and heavy(words):
        return [True] * len(words)
    bold = [False] * len(words)
    start = 0
    while start < len(words):
        end = start
        while end < len(words) and heavy(words[end : end + 1]):
            end += 1
        run = words[start:end]
        if run and heavy(run) and sum(len(w.text) for w in run) >= params.bold_min_run_chars:
            bold[start:end] = [True] * (end - start)
        start = end + 1
    return bold


def _pitches(words: Sequence[Word]) -> list[float]:
    """Pixels per character from each word's start to the next's (the word and one space)."""
    return [(b.box[0] - a.box[0]) / (len(a.text) + 1) for a, b in itertools.pairwise(words)]


def _monospaced(words: Sequence[Word], params: OcrParams, pitch: float | None = None) -> bool:
    """Whether the words are set in a monospaced font: the same advance per character from
    each word's start to the next's all along a long line; on a short line, the advance of
    the page's long monospaced lines (`pitch`)."""
    pitches = _pitches(words)
    if not pitches:
        return False
    if len(pitches) < params.mono_min_pairs:
        return pitch is not None and all(abs(p - pitch) <= params.mono_spread * pitch for p in pitches)
    mean = statistics.fmean(pitches)
    return mean > 0 and statistics.pstdev(pitches) / mean <= params.mono_spread


def _sizes(lines: Sequence[OcrLine], scale: float, params: OcrParams) -> list[float]:
    """Each line's font size in points: from the median height of its x-height letters where
    it has `params.min_x_letters` of them (a line's row height moves with its capitals,
    ascenders and Tesseract's baseline fit: two headings of one style can differ by a tenth);
    else from its row height, scaled by how the two measures compare on the page's other
    lines (capitals, digits, scripts without such letters)."""
    by_row = [ln.row_height / scale * params.size_per_row_height for ln in lines]
    by_x = [
        statistics.median(ln.x_heights) / scale / params.x_height_per_em
        if len(ln.x_heights) >= params.min_x_letters
        else None
        for ln in lines
    ]
    ratios = [x / row for x, row in zip(by_x, by_row, strict=True) if x is not None and row > 0]
    factor = statistics.median(ratios) if ratios else 1.0
    return [x if x is not None else row * factor for x, row in zip(by_x, by_row, strict=True)]


def _snap_sizes(lines: Sequence[Line], snap: float) -> None:
    """Sizes within `snap` (a fraction) of a size more characters have are that size, the
    most common first (OCR measures each line's height with a few pixels of noise, a short
    heading's most); sizes are never chained, so the body and its headings stay apart."""
    weights: Counter[float] = Counter()
    for ln in lines:
        weights[ln.size] += len(ln.text)
    centres: list[float] = []
    to: dict[float, float] = {}
    for size, _ in sorted(weights.items(), key=lambda kv: (-kv[1], -kv[0])):
        near = [c for c in centres if abs(size - c) <= snap * c]
        if near:
            to[size] = min(near, key=lambda c: abs(size - c))
        else:
            centres.append(size)
            to[size] = size
    for ln in lines:
        ln.size = to[ln.size]


def page_model(result: Recognised, number: int, scale: float, params: OcrParams = PARAMS) -> PageModel:
    """The recognised page as the text-layer path's page model (upright; pixels / `scale`
    are points)."""
    # The advance of the page's monospaced font, from its long lines: short lines of code
    # are known by it.
    long_mono = [statistics.fmean(_pitches(ln.words)) for ln in result.lines if _monospaced(ln.words, params)]
    pitch = statistics.median(long_mono) if long_mono else None
    body = body_stroke(result.lines, params)
    sizes = _sizes(result.lines, scale, params)
    # The page's direction: right to left where most of its letters are (a Latin line of an
    # Arabic page is laid out in it).
    ltr = rtl_letters = 0
    for ocr_line in result.lines:
        for w in ocr_line.words:
            a, b = strong_direction(w.text)
            ltr, rtl_letters = ltr + a, rtl_letters + b
    page_rtl = rtl_letters > ltr
    lines = [
        _line(ln, scale, size, params, pitch, body, page_rtl) for ln, size in zip(result.lines, sizes, strict=True)
    ]
    _snap_sizes(lines, params.size_snap)
    rtl = sum(len(ln.text) for ln in lines if ln.rtl)
    model = PageModel(
        number,
        result.width / scale,
        result.height / scale,
        lines=lines,
        chars=sum(1 for ln in lines for ch in ln.text if not ch.isspace()),
        rtl=rtl * 2 > sum(len(ln.text) for ln in lines),
    )
    model.ocr = OcrFacts(confidence=result.confidence / 100.0, rotation=result.rotation, skew=result.skew)
    return model


# --- pages of a document -------------------------------------------------------------------


@dataclass
class PageOcr:
    """Reads the pages of one document that need it (`apply`), rendering them from the file
    with pypdfium2, opened on first use. `close()` when done."""

    path: str | os.PathLike[str]
    password: str | None
    options: OcrOptions
    params: OcrParams = PARAMS
    _renderer: PageRenderer | None = None
    _requested: str = ""
    # The models pages are read with: the requested ones, and those of the scripts found on
    # the pages read so far that the requested ones do not read (a document with a page in
    # Russian has more). A version 2 job reads its pages in parts, each part starting again
    # from the requested ones.
    _languages: str = ""
    read: list[int] = field(default_factory=list)  # pages read by OCR

    def __post_init__(self) -> None:
        if not ocr_available():
            raise EngineError(
                "ocr_not_available",
                "OCR is not installed on this server. Convert without OCR or try again later.",
            )
        self._languages = self._requested = tesseract_languages(self.options.languages)

    def wanted(self, model: PageModel) -> bool:
        return self.options.mode == "force" or (self.options.mode == "auto" and needs_ocr(model, self.params))

    def apply(self, model: PageModel) -> PageModel:
        """The page read by OCR when it needs it (or OCR is forced), else as it was."""
        if not self.wanted(model):
            return model
        image, scale = self.render(model.number)
        result = recognise(image, self._languages, scale * 72.0, self.params)
        self._languages = result.languages or self._languages
        read = page_model(result, model.number, scale, self.params)
        requested = self._requested.split("+")
        added = [TESSERACT_TO_ISO.get(m, m) for m in result.languages.split("+") if m and m not in requested]
        if read.ocr is not None and added:
            read.ocr = dataclasses.replace(read.ocr, added_languages=tuple(added), script=result.script)
        # Text a reader cannot see stays what it was; the scan's own picture is not a figure.
        read.hidden = [ln for ln in model.hidden if ln.hidden]
        self.read.append(model.number)
        return read

    def render(self, number: int) -> tuple[Any, float]:
        """The page (1-based) as displayed, greyscale, and its pixels per point."""
        if self._renderer is None:
            self._renderer = PageRenderer(self.path, self.password)
        return self._renderer.render(number, self.params.dpi / 72.0, max_pixels=self.params.max_pixels, grayscale=True)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def mark_elements(elements: Iterator[Element] | Sequence[Element], lines: Sequence[Line]) -> None:
    """Give the elements of a page read by OCR their source and confidence: the mean word
    confidence of the lines inside each element's box, weighted by characters."""
    for element in elements:
        if element.type is ElementType.HIDDEN_TEXT:
            continue
        x0, top, x1, bottom = element.bbox
        weight = total = 0.0
        for ln in lines:
            cx, cy = (ln.x0 + ln.x1) / 2, ln.cy
            if ln.confidence is not None and x0 - 1 <= cx <= x1 + 1 and top - 1 <= cy <= bottom + 1:
                weight += len(ln.text)
                total += len(ln.text) * ln.confidence
        element.source = "ocr"
        element.confidence = round(total / weight, 3) if weight else None
