"""Conversion options of decisions.md section 2: their input serializer and normalisation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from django.conf import settings
from rest_framework import serializers

from conversion import engine
from conversion.engine import EngineError, OcrOptions, PageRanges, parse_page_ranges
from core.errors import ErrorCode, ServiceError, caller_text
from core.inputs import ValueField, field_path, invalid
from core.serializers import SharedFields

TABLES = ("markdown", "html", "text")
FALLBACKS = ("empty", "error")
FLAVORS = ("gfm",)
FIGURES = ("none", "crop")
OPTION_NAMES = ("pages", "ocr", "flavor", "tables", "fallback", "chunking", "figures", "engine")
# Version 2 reads scans: `ocr` takes these, and `ocr_languages` the languages to read.
OCR_MODES = ("off", "auto", "force")
OCR_OPTION_NAMES = (*OPTION_NAMES, "ocr_languages")
OCR_DEFAULT_LANGUAGES = ("en",)
CHUNKING_STRATEGIES = ("structure",)
# Bounds of `chunking.max_tokens` (cl100k_base tokens): below 64 a chunk holds hardly a
# paragraph; 8,191 is what OpenAI's embedding models take at most.
CHUNK_TOKENS_MIN, CHUNK_TOKENS_MAX = 64, 8191


@dataclass(frozen=True)
class Options:
    pages: str | None = None
    ranges: PageRanges | None = None
    tables: str = "markdown"
    fallback: str = "empty"
    flavor: str = "gfm"
    # Where the client put `pages`: the body's `options.pages`, or the query parameter
    # `pages` of a raw PDF. Errors found later (at the worker) name it the same way.
    pages_param: str = "options.pages"
    # `chunking`: (max_tokens, overlap_tokens) of the structure strategy; None: no chunks.
    chunking: tuple[int, int] | None = None
    # `figures`: "none" (a comment stands for each figure) or "crop" (its picture as a stored file),
    # and where the client put it (as `pages_param`).
    figures: str = "none"
    figures_param: str = "options.figures"
    # Version 2 only (version 1 refuses OCR): which pages are read from their picture, and
    # the ISO 639-1 codes of the languages they are written in.
    ocr: str = "off"
    ocr_languages: tuple[str, ...] = OCR_DEFAULT_LANGUAGES
    # `engine`: the engine id the client asked for (GET /v1/engines); None when not sent.
    engine: str | None = None

    @property
    def engine_id(self) -> str:
        """The engine that converts: the one asked for, else the default."""
        return self.engine or engine.ENGINE_ID

    def ocr_options(self) -> OcrOptions:
        return OcrOptions(mode=self.ocr, languages=self.ocr_languages)  # type: ignore[arg-type]  # one of OCR_MODES, validated

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
        key = f"pages={pages or '*'};tables={self.tables};fallback={self.fallback};flavor={self.flavor}"
        # Absent, an option leaves the key as it was before it existed (cached results stay found).
        if self.chunking:
            key += f";chunking=structure:{self.chunking[0]}:{self.chunking[1]}"
        if self.engine_id != engine.ENGINE_ID:
            key += f";engine={self.engine_id}"
        if self.figures == "crop":
            key += ";figures=crop"
        if self.ocr != "off":  # languages in the order given: Tesseract's first one leads
            key += f";ocr={self.ocr}:{'+'.join(self.ocr_languages)}"
        return key


def figures_options(options: Options, filename: str) -> dict[str, str]:
    """What a job keeps of the option `figures` (nothing by default): "crop", and the name its
    figures' files are named after (`<name>-p3-fig1.png`): the document's file name without its
    extension, "document" when the client gave none."""
    if options.figures != "crop":
        return {}
    stem = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if stem.lower().endswith(".pdf"):
        stem = stem[:-4]
    return {"figures": "crop", "figures_name": stem.strip()[:200] or "document"}


def offered_engines() -> list[str]:
    """The engines a request may choose (and GET /v1/engines lists), the default first: the
    PDFium engine only where SVCX_PDFIUM_ENGINE offers it."""
    return [e for e in engine.ENGINES if e != engine.PDFIUM_ENGINE_ID or settings.SVCX_PDFIUM_ENGINE]


def engine_withdrawn(options: Mapping[str, Any]) -> ServiceError | None:
    """engine_not_found for a queued conversion or job whose chosen engine (its options'
    `engine`) the service no longer offers: the operator turned it off after it was accepted.
    It must fail, never run on an engine the service has withdrawn; None when it may run."""
    chosen = options.get("engine")
    if not chosen:
        return None
    offered = offered_engines()
    if chosen in offered:
        return None
    return ServiceError(
        ErrorCode.ENGINE_NOT_FOUND,
        f"The engine {caller_text(chosen)!r} chosen in `options.engine` is no longer offered: the operator "
        f"turned it off after the request was accepted. Send it again with one GET /v1/engines lists: "
        f"{', '.join(offered)}.",
        param="options.engine",
        details={"accepted": list(offered)},
    )


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


class OptionField(ValueField):
    """One option: a string; another type is named in JSON terms."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            path = field_path(self)
            hint = ' (write page ranges as one string such as "1-3,7")' if self.field_name == "pages" else ""
            raise invalid(f"`{path}` must be a string, not {json_type_name(data)}{hint}.")
        return data


class OcrLanguagesField(ValueField):
    """`ocr_languages`: ISO 639-1 codes, each one the engine lists as installed (GET /v1/engines,
    `ocr_languages`), as a JSON array; with `text`, as a comma-separated string (the raw PDF's
    query string). Repeats are dropped. Refuses with invalid_parameter_type,
    unsupported_option_value (none named) and ocr_language_not_available, `param` the exact path
    (`options.ocr_languages[1]`; the query parameter's name in a query string)."""

    def __init__(self, *, text: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = text

    def to_internal_value(self, data: Any) -> tuple[str, ...]:
        path = field_path(self)
        installed = engine.installed_languages()
        if self.text and isinstance(data, str):
            codes: list[Any] = [code.strip() for code in data.split(",")] if data.strip() else []
            params = [path] * len(codes)
        elif not self.text and isinstance(data, list):
            codes = list(data)
            params = [f"{path}[{i}]" for i in range(len(codes))]
        else:
            shape = 'comma-separated language codes such as "en,de"' if self.text else 'an array such as ["en", "de"]'
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`{path}` must be {shape}, not {json_type_name(data)}.",
                param=path,
            )
        if not codes:
            raise ServiceError(
                ErrorCode.UNSUPPORTED_OPTION_VALUE,
                f"`{path}` names no language; name at least one of: {', '.join(installed)}.",
                param=path,
                details={"accepted": installed},
            )
        out: list[str] = []
        for code, param in zip(codes, params, strict=True):
            if not isinstance(code, str):
                raise ServiceError(
                    ErrorCode.INVALID_PARAMETER_TYPE,
                    f"`{param}` must be a string (an ISO 639-1 code), not {json_type_name(code)}.",
                    param=param,
                )
            if code not in installed:
                raise ServiceError(
                    ErrorCode.OCR_LANGUAGE_NOT_AVAILABLE,
                    f"OCR does not read language {caller_text(code)!r} here; GET /v1/engines lists those it "
                    f"reads (`ocr_languages`): {', '.join(installed) or 'none'}.",
                    param=param,
                    details={"language": caller_text(code), "installed": installed},
                )
            if code not in out:
                out.append(code)
        return tuple(out)


class ChunkingField(ValueField):
    """`chunking`: `{"strategy": "structure", "max_tokens": N, "overlap_tokens": M}`, as
    (max_tokens, overlap_tokens). Refuses with invalid_parameter_type, unknown_parameter and
    unsupported_option_value, `param` the exact path (`options.chunking.max_tokens`)."""

    def to_internal_value(self, data: Any) -> tuple[int, int]:
        path = field_path(self)
        if not isinstance(data, Mapping):
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`{path}` must be a JSON object, not {json_type_name(data)}.",
                param=path,
            )
        for name in data:
            if name not in ("strategy", "max_tokens", "overlap_tokens"):
                raise ServiceError(
                    ErrorCode.UNKNOWN_PARAMETER,
                    f"Unknown member {caller_text(name)!r} of `{path}`; it takes strategy, max_tokens, overlap_tokens.",
                    param=f"{path}.{caller_text(name)}",
                )
        strategy = data.get("strategy", "structure")
        if not isinstance(strategy, str):
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`{path}.strategy` must be a string, not {json_type_name(strategy)}.",
                param=f"{path}.strategy",
            )
        if strategy not in CHUNKING_STRATEGIES:
            raise ServiceError(
                ErrorCode.UNSUPPORTED_OPTION_VALUE,
                f"`{path}.strategy` {caller_text(strategy)!r} is not available; accepted: structure.",
                param=f"{path}.strategy",
                details={"accepted": list(CHUNKING_STRATEGIES)},
            )
        max_tokens = self._integer(data, "max_tokens", 512, CHUNK_TOKENS_MIN, CHUNK_TOKENS_MAX)
        overlap = self._integer(data, "overlap_tokens", 0, 0, max_tokens // 2)
        return (max_tokens, overlap)

    def _integer(self, data: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
        param = f"{field_path(self)}.{name}"
        value = data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`{param}` must be an integer, not {json_type_name(value)}.",
                param=param,
            )
        if not low <= value <= high:
            raise ServiceError(
                ErrorCode.UNSUPPORTED_OPTION_VALUE,
                f"`{param}` {value} is out of range; accepted: {low} to {high}.",
                param=param,
                details={"minimum": low, "maximum": high},
            )
        return value


class OptionsSerializer(SharedFields[Options]):
    """The options of decisions.md 2, validated into `Options`: the `options` object of a body,
    or (as the base of the raw-PDF query serializer) query parameters.

    Refuses with unknown_parameter, invalid_parameter_type, ocr_not_available,
    unsupported_option_value and the page-range codes, `param` each option's exact path.

    Version 1 refuses OCR (`ocr` anything but "off" is ocr_not_available, `ocr_languages` an
    unknown option); a subclass with `reads_scans` (version 2) takes `ocr` off, auto or force
    and `ocr_languages` (ocr_not_available there means OCR is not installed on this service).
    """

    reads_scans: ClassVar[bool] = False

    pages = OptionField(required=False)
    ocr = OptionField(required=False)
    flavor = OptionField(required=False)
    tables = OptionField(required=False)
    fallback = OptionField(required=False)
    chunking = ChunkingField(required=False)
    figures = OptionField(required=False)
    engine = OptionField(required=False)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:  # refused by to_internal_value as not an object
            return (False, data)
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> Any:
        path = field_path(self)
        if not isinstance(data, Mapping):
            raise invalid(f"`{path}` must be a JSON object.")
        prefix = f"{path}." if path else ""
        for name in data:
            if name not in self.fields:
                raise serializers.ValidationError(
                    {
                        name: invalid(
                            f"Unknown option {caller_text(prefix + name)!r}; options are "
                            f"{', '.join(OCR_OPTION_NAMES if self.reads_scans else OPTION_NAMES)}.",
                            ErrorCode.UNKNOWN_PARAMETER,
                        ).detail
                    }
                )
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            # DRF reports every refused field; the client is told of the first it sent.
            if isinstance(exc.detail, dict):
                first = next(name for name in [*data, *exc.detail] if name in exc.detail)
                raise serializers.ValidationError({first: exc.detail[first]}) from exc
            raise

    def validate(self, attrs: dict[str, Any]) -> Any:
        fields = self.fields
        if self.reads_scans:
            self._ocr_check(attrs)
        elif attrs.get("ocr", "off") != "off":
            ocr = field_path(fields["ocr"])
            raise serializers.ValidationError(
                {
                    "ocr": invalid(
                        f'OCR is not available in v1 (`{ocr}` was {caller_text(attrs["ocr"])!r}); use "off".',
                        ErrorCode.OCR_NOT_AVAILABLE,
                    ).detail
                }
            )
        for name, accepted in (("flavor", FLAVORS), ("tables", TABLES), ("fallback", FALLBACKS), ("figures", FIGURES)):
            if name in attrs and attrs[name] not in accepted:
                param = field_path(fields[name])
                raise ServiceError(
                    ErrorCode.UNSUPPORTED_OPTION_VALUE,
                    f"`{param}` {caller_text(attrs[name])!r} is not available in v1; accepted: {', '.join(accepted)}.",
                    param=param,
                    details={"accepted": list(accepted)},
                )
        offered = offered_engines()
        if "engine" in attrs and attrs["engine"] not in offered:
            param = field_path(fields["engine"])
            raise ServiceError(
                ErrorCode.ENGINE_NOT_FOUND,
                f"No engine {caller_text(attrs['engine'])!r} (`{param}`); GET /v1/engines lists them: "
                f"{', '.join(offered)}.",
                param=param,
                details={"accepted": list(offered)},
            )
        ranges = None
        if "pages" in attrs:
            try:
                ranges = parse_page_ranges(attrs["pages"])
            except EngineError as exc:
                raise engine_error(exc, param=field_path(fields["pages"])) from exc
        return Options(
            pages=attrs.get("pages"),
            ranges=ranges,
            tables=attrs.get("tables", "markdown"),
            fallback=attrs.get("fallback", "empty"),
            flavor=attrs.get("flavor", "gfm"),
            pages_param=field_path(fields["pages"]),
            chunking=attrs.get("chunking"),
            figures=attrs.get("figures", "none"),
            figures_param=field_path(fields["figures"]),
            ocr=attrs.get("ocr", "off"),
            ocr_languages=attrs.get("ocr_languages", OCR_DEFAULT_LANGUAGES),
            engine=attrs.get("engine"),
        )

    def _ocr_check(self, attrs: dict[str, Any]) -> None:
        """Version 2's `ocr`: one of OCR_MODES, and anything but "off" only where OCR is installed."""
        mode = attrs.get("ocr", "off")
        param = field_path(self.fields["ocr"])
        if mode not in OCR_MODES:
            raise ServiceError(
                ErrorCode.UNSUPPORTED_OPTION_VALUE,
                f"`{param}` {caller_text(mode)!r} is not available; accepted: {', '.join(OCR_MODES)}.",
                param=param,
                details={"accepted": list(OCR_MODES)},
            )
        if mode != "off" and not engine.ocr_available():
            raise ServiceError(
                ErrorCode.OCR_NOT_AVAILABLE,
                f'OCR is not installed on this service (`{param}` was {mode!r}); use "off".',
                param=param,
            )


class ScanOptionsSerializer(OptionsSerializer):
    """The options of a version 2 request (a job, its pre-flight): version 1's and OCR,
    `ocr` off, auto or force and `ocr_languages`."""

    reads_scans = True
    ocr_languages = OcrLanguagesField(required=False)
