"""Content negotiation of the API views (kept apart from core.api: DRF imports it while its
own views module is still loading)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from core.errors import ErrorCode, ServiceError, caller_text


class JsonOnlyNegotiation(BaseContentNegotiation):
    """Answer in the view's first renderer (JSON) whatever `Accept` says: endpoints that answer
    in one type never refuse a client over it. The parser is the one Content-Type names."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        for parser in parsers:
            if request.content_type.split(";")[0].strip().lower() == parser.media_type:
                return parser
        return None

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return (renderer, renderer.media_type)


class AcceptNegotiation(JsonOnlyNegotiation):
    """For a view that answers in more than one type (JSON and Markdown, decisions.md 3): the
    renderer `Accept` asks for; absent or */* means the first; q-values choose within a list;
    a header naming none of them is 406 `unsupported_accept`."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        offered = list(renderers)
        renderer = offered[negotiate(request.META.get("HTTP_ACCEPT"), [r.media_type for r in offered])]
        return (renderer, renderer.media_type)


def _ranges(header: str) -> list[tuple[str, float, int]]:
    """(media range, q, position) of each entry of an Accept header."""
    entries = []
    for position, item in enumerate(header.split(",")):
        parts = [p.strip() for p in item.split(";")]
        media = parts[0].lower()
        if not media:
            continue
        q = 1.0
        for param in parts[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = max(0.0, min(1.0, float(value)))
                except ValueError:
                    q = 0.0
        entries.append((media, q, position))
    return entries


def _matches(media: str, offered: str) -> int:
    """How specifically `media` names `offered`: 3 exact, 2 type/*, 1 */*, 0 not at all."""
    if media == offered:
        return 3
    kind = offered.split("/")[0]
    if media == f"{kind}/*":
        return 2
    if media == "*/*":
        return 1
    return 0


def negotiate(header: str | None, offered: Sequence[str]) -> int:
    """The index in `offered` of the type `Accept` asks for. An absent header or */* means
    the first; q-values choose within a list; a header naming none is 406 `unsupported_accept`."""
    if header is None or not header.strip():
        return 0
    ranges = _ranges(header)
    best: tuple[float, int, int, int] | None = None
    for index, media_type in enumerate(offered):
        # The most specific range naming the type decides its q (RFC 9110 12.5.1).
        matching = [(_matches(media, media_type), q, pos) for media, q, pos in ranges if _matches(media, media_type)]
        if not matching:
            continue
        specificity, q, _position = max(matching, key=lambda m: (m[0], -m[2]))
        if q <= 0:
            continue
        # Higher q wins; then an explicitly named type over a wildcard; then the earlier offer.
        candidate = (q, min(specificity, 2), -index, index)
        if best is None or candidate > best:
            best = candidate
    if best is None:
        raise ServiceError(
            ErrorCode.UNSUPPORTED_ACCEPT,
            f"Accept {caller_text(header)!r} names no type this endpoint produces; use {' or '.join(offered)}.",
            details={"available": list(offered)},
        )
    return best[3]
