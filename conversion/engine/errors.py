"""The one exception type the engine lets escape.

Every failure of `preflight`, `inspect`, `text_sample`, `convert` and the page-range
helpers is an `EngineError` whose `code` is a document or parameter error code of the
public catalogue (interface.md 7.4). The service maps the code to status and type; the
engine never decides HTTP details.
"""

from __future__ import annotations

__all__ = ["EngineError"]

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
    }
)


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
