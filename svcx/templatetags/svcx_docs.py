"""Template filters of the documentation pages."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from svcx.guides import inline_markdown

register = template.Library()


@register.filter(name="inline_markdown")
def inline_markdown_filter(text: str) -> SafeString:
    return inline_markdown(text)
