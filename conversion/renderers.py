"""The Markdown answer of POST /v1/convert (`Accept: text/markdown`, decisions.md 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import BaseRenderer


class MarkdownRenderer(BaseRenderer):
    """Writes a response whose data is the Markdown text, as UTF-8."""

    media_type = "text/markdown"
    format = "md"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Mapping[str, Any] | None = None
    ) -> bytes:
        return str(data).encode(self.charset)
