"""Content negotiation for endpoints that answer in JSON only (kept apart from core.api:
DRF imports it while its own views module is still loading)."""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class JsonOnlyNegotiation(BaseContentNegotiation):
    """Answer in JSON whatever `Accept` says. Endpoints that offer Markdown negotiate
    themselves (and answer 406 `unsupported_accept`); the rest never refuse a client over it."""

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
