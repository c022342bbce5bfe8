"""svcx conversion engine: PDF in, GitHub-flavoured Markdown out.

A pure Python package (pikepdf + pdfminer.six; pypdfium2 and Tesseract through tesserocr for
OCR): no Django, no settings, no HTTP. Every
failure leaves as `EngineError` with a catalogue code.
"""

from .convert import (
    ENGINE_ID,
    ENGINE_VERSION,
    ENGINES,
    PDFIUM_ENGINE_ID,
    PDFIUM_ENGINE_VERSION,
    ConversionResult,
    ConvertOptions,
    OcrPlan,
    PageResult,
    PageSample,
    ParsedMismatch,
    ParsedPages,
    convert,
    inspect,
    ocr_plan,
    parse_pages,
    preflight,
    text_sample,
)
from .document import DocumentInfo, OutlineEntry
from .errors import OUT_OF_MEMORY, EngineError
from .layout import PageModel
from .limits import LIMITS, StreamLimits
from .ocr import OcrOptions, installed_languages, ocr_available
from .pages import PageRanges, parse_page_ranges, select_pages

__all__ = [
    "ENGINES",
    "ENGINE_ID",
    "ENGINE_VERSION",
    "LIMITS",
    "OUT_OF_MEMORY",
    "PDFIUM_ENGINE_ID",
    "PDFIUM_ENGINE_VERSION",
    "ConversionResult",
    "ConvertOptions",
    "DocumentInfo",
    "EngineError",
    "OcrOptions",
    "OcrPlan",
    "OutlineEntry",
    "PageModel",
    "PageRanges",
    "PageResult",
    "PageSample",
    "ParsedMismatch",
    "ParsedPages",
    "StreamLimits",
    "convert",
    "inspect",
    "installed_languages",
    "ocr_available",
    "ocr_plan",
    "parse_page_ranges",
    "parse_pages",
    "preflight",
    "select_pages",
    "text_sample",
]
