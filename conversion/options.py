"""Conversion options of decisions.md section 2: validation and normalisation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conversion.engine import EngineError, PageRanges, parse_page_ranges
from core.errors import ErrorCode, ServiceError, caller_text

TABLES = ("markdown", "html", "text")
FALLBACKS = ("empty", "error")
FLAVORS = ("gfm",)
OPTION_NAMES = ("pages", "ocr", "flavor", "tables", "fallback")


@dataclass(frozen=True)
class Options:
    pages: str | None = None
    ranges: PageRanges | None = None
    tables: str = "markdown"
    fallback: str = "empty"
    flavor: str = "gfm"

    def cache_key(self) -> str:
        """The normalised options, as they enter the result-cache key: expressions that select the
        same pages of any document (`1,2,3` and `1-3`; `1-` and no expression) are one key."""
        merged: list[tuple[int, int | None]] = []
        for start, end in self.ranges or ():
            if merged and merged[-1][1] is not None and start == merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        if merged == [(1, None)]:
            merged = []
        pages = ",".join(f"{a}-{'' if b is None else b}" if b != a else str(a) for a, b in merged)
        return f"pages={pages or '*'};tables={self.tables};fallback={self.fallback};flavor={self.flavor}"


def json_type_name(value: Any) -> str:
    """How a client's JSON calls the type of a parsed value: `null`, `a number`, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a string"


def engine_error(exc: EngineError, *, param: str | None = None) -> ServiceError:
    """The catalogue error for an engine error (same code: every engine code is a catalogue code)."""
    return ServiceError(ErrorCode(exc.code), exc.message, param=param or exc.param, details=dict(exc.details))


def validate_options(raw: dict[str, Any], *, prefix: str) -> Options:
    """Options from the request. `prefix` is "options." for a body, "" for the query string.

    Raises unknown_parameter, invalid_parameter_type, ocr_not_available, unsupported_option_value
    and the page-range codes, each with `param` the option's exact path.
    """
    for name in raw:
        if name not in OPTION_NAMES:
            raise ServiceError(
                ErrorCode.UNKNOWN_PARAMETER,
                f"Unknown option {caller_text(prefix + name)!r}; options are {', '.join(OPTION_NAMES)}.",
                param=caller_text(prefix + name),
            )
    values: dict[str, str] = {}
    for name, value in raw.items():
        if not isinstance(value, str):
            kind = json_type_name(value)
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`{prefix}{name}` must be a string, not {kind}"
                + (' (write page ranges as one string such as "1-3,7")' if name == "pages" else "")
                + ".",
                param=prefix + name,
            )
        values[name] = value
    if values.get("ocr", "off") != "off":
        raise ServiceError(
            ErrorCode.OCR_NOT_AVAILABLE,
            f'OCR is not available in v1 (`{prefix}ocr` was {caller_text(values["ocr"])!r}); use "off".',
            param=prefix + "ocr",
        )
    _choice(values, "flavor", FLAVORS, prefix)
    _choice(values, "tables", TABLES, prefix)
    _choice(values, "fallback", FALLBACKS, prefix)
    ranges = None
    if "pages" in values:
        try:
            ranges = parse_page_ranges(values["pages"])
        except EngineError as exc:
            raise engine_error(exc, param=prefix + "pages") from exc
    return Options(
        pages=values.get("pages"),
        ranges=ranges,
        tables=values.get("tables", "markdown"),
        fallback=values.get("fallback", "empty"),
        flavor=values.get("flavor", "gfm"),
    )


def _choice(values: dict[str, str], name: str, accepted: tuple[str, ...], prefix: str) -> None:
    if name in values and values[name] not in accepted:
        raise ServiceError(
            ErrorCode.UNSUPPORTED_OPTION_VALUE,
            f"`{prefix}{name}` {caller_text(values[name])!r} is not available in v1; accepted: {', '.join(accepted)}.",
            param=prefix + name,
            details={"accepted": list(accepted)},
        )
