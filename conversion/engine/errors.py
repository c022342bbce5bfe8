"""The one exception type the engine lets escape.

Every failure of `preflight`, `inspect`, `text_sample`, `convert` and the page-range
helpers is an `EngineError` whose `code` is a document or parameter error code of the
public catalogue (interface.md 7.4). The service maps the code to status and type; the
engine never decides HTTP details.
"""

from __future__ import annotations

__all__ = ["OCR_ERROR_CODES", "OUT_OF_MEMORY", "EngineError", "foreign"]

# details.reason of document_too_complex when a conversion ran out of memory (its worker's
# ceiling): the caller may want a fresh process after it.
OUT_OF_MEMORY = "out of memory"

# Where the exceptions the engine translates come from: Python itself and the libraries that
# read PDFs for it, which raise many unrelated types on broken input.
_LIBRARY_MODULES = frozenset(
    {"builtins", "pdfminer", "pikepdf", "zlib", "struct", "binascii", "decimal", "re", "pypdfium2", "tesserocr", "PIL"}
)

# Codes the engine may raise; kept here so a typo at a raise site fails loudly in tests.
ENGINE_ERROR_CODES: frozenset[str] = frozenset(
    {
        "pdf_invalid",
        "pdf_corrupt",
        "pdf_read_error",
        "pdf_parse_failed",
        "pdf_encrypted",
        "pdf_password_incorrect",
        "pdf_unsupported_security",
        "pdf_no_pages",
        "pdf_is_xfa",
        "document_has_no_text_layer",
        "document_too_complex",
        "pdf_too_complex",
        "pdf_extraction_not_permitted",
        "page_has_no_text_layer",
        "page_range_invalid",
        "page_range_zero",
        "page_range_reversed",
        "page_range_out_of_bounds",
        "page_range_too_complex",
        "ocr_not_available",
        "ocr_language_not_available",
    }
)


# The codes only a conversion with OCR on raises (version 1 refuses OCR before the engine).
OCR_ERROR_CODES: frozenset[str] = frozenset({"ocr_not_available", "ocr_language_not_available"})


class EngineError(Exception):
    """A conversion failure with a stable catalogue code.

    `message` is for humans: what was wrong and how to fix it. It never contains a file
    path, a library's exception text or a stack trace, because the service shows it to
    API callers verbatim.

    Raises:
        ValueError: if `code` is not one of the engine's catalogue codes.
    """

    code: str
    message: str
    details: dict[str, object]
    param: str | None

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, object] | None = None,
        param: str | None = None,
    ) -> None:
        if code not in ENGINE_ERROR_CODES:
            raise ValueError(f"unknown engine error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = dict(details or {})
        self.param = param

    def __repr__(self) -> str:
        return f"EngineError(code={self.code!r}, message={self.message!r})"


def foreign(exc: BaseException) -> bool:
    """Whether `exc` is none of the failures the engine translates into a catalogue code: not
    an Exception at all, or raised by neither Python nor the PDF libraries (a time limit that a
    signal handler raised, a caller's cancellation). Such an exception is not the document's
    fault: every catch-all of the engine lets it through unchanged."""
    if not isinstance(exc, Exception):
        return True
    return type(exc).__module__.partition(".")[0] not in _LIBRARY_MODULES
