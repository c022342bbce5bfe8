"""The guides served at /docs/<slug>: Markdown files in the repository's `docs/` folder,
rendered once per process with the Markdown package."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import markdown
from django.conf import settings
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# The order of the docs index: a newcomer reads from the top.
GUIDE_SLUGS = (
    "quickstart",
    "python-sdk",
    "encodings",
    "options",
    "result",
    "elements",
    "chunks",
    "idempotency",
    "testing",
    "rate-limits",
    "ledger",
    "files",
    "jobs",
    "inspect-and-toc",
    "webhooks",
)

_CODE_SPAN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Guide:
    slug: str
    title: str
    summary: str
    html: SafeString


def guides_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")


def _first_sentence(text: str) -> str:
    """The guide's first sentence (links reduced to their text), for the docs index."""
    for block in text.split("\n\n"):
        block = block.strip()
        if block and not block.startswith(("#", "```", "|", "-")):
            paragraph = _LINK.sub(r"\1", " ".join(block.split()))
            return re.split(r"(?<=[.:])\s", paragraph, maxsplit=1)[0].rstrip(":.") + "."
    return ""


@cache
def guide_get(slug: str) -> Guide | None:
    """The guide `slug`, or None when there is no such guide."""
    if slug not in GUIDE_SLUGS:
        return None
    text = (guides_dir() / f"{slug}.md").read_text(encoding="utf-8")
    title_line = text.splitlines()[0]
    if not title_line.startswith("# "):
        raise ValueError(f"docs/{slug}.md must start with its '# Title'")
    body = text[len(title_line) :]
    html = markdown.markdown(text, extensions=["fenced_code", "tables", "toc"], output_format="html")
    return Guide(
        slug=slug,
        title=title_line[2:].strip(),
        summary=inline_markdown(_first_sentence(body)),
        html=mark_safe(html),  # noqa: S308  (our own files from the repository, not user input)
    )


def guide_list() -> list[Guide]:
    return [guide for slug in GUIDE_SLUGS if (guide := guide_get(slug)) is not None]


def inline_markdown(text: str) -> SafeString:
    """Plain text whose `code spans` become <code>: the catalogue's messages and help."""
    return mark_safe(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(text))))  # noqa: S308  (escaped first)
