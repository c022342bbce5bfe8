"""List items: the markers that open them, bullets of any glyph and ordered numbers."""

from __future__ import annotations

import re

from .layout import BOLD, Line

# Bullet glyphs: hyphen bullet, hyphen, en and em dash, asterisk, and any private-use
# code point (Symbol and Wingdings fonts put their bullets there).
_BULLETS = "•●▪◦‣○■□➢►▶✓✔◆◇∙·\u2043-\u2013\u2014*"
_BULLET_CLASS = re.escape(_BULLETS) + "\ue000-\uf8ff"
# An unmapped glyph "(cid:N)" at the start of a line is almost always a bullet drawn
# from a symbol font without a Unicode mapping.
_BULLET = re.compile(rf"^\s*([{_BULLET_CLASS}]|\(cid:\d+\)(?:\(cid:\d+\))?)\s+(?!\(cid:)(\S.*)$", re.S)
_ORDERED = re.compile(r"^\s*(\d{1,3})([.)])\s+(\S.*)$", re.S)
# Labels Markdown has no ordered marker for: "a)", "(a)", "(iv)", "(1)", "A)", "b.", "iv.",
# and outline numbers "1.2", "1.2.3." before a capital. The item keeps its label as text.
_LABEL = r"\(?(?:\d{1,3}|[a-zA-Z]|[ivxlc]{1,6})\)|[a-z]\.|[ivx]{1,5}\.|\d{1,3}(?:\.\d{1,3}){1,3}\.?"
_LABELLED = re.compile(rf"^\s*((?:{_LABEL})\s+(\S.*))$", re.S)
_OUTLINE_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3}){1,3}\.?$")
BARE_NUMBER = re.compile(r"^\d{1,3}$")
LONE_MARKER = re.compile(rf"^(?:[{_BULLET_CLASS}]|\d{{1,3}}[.)]|\(cid:\d+\)|{_LABEL})$")


def list_marker(line: Line, body: float) -> tuple[str, str] | None:
    """(markdown marker, text after the source marker) for a list item line."""
    if line.size > body * 1.12 or (line.style & BOLD and len(line.text) < 80):
        return None
    text = line.text
    m = _BULLET.match(text)
    if m:
        if m.group(1) in "-\u2013\u2014*" and not m.group(2)[:1].isalnum():
            return None
        return "-", m.group(2)
    m = _ORDERED.match(text)
    if m:
        return f"{int(m.group(1))}{m.group(2)}", m.group(3)
    m = _LABELLED.match(text)
    if m:
        label = m.group(1).split(None, 1)[0]
        if _OUTLINE_NUMBER.match(label) and not m.group(2)[:1].isupper():
            # "3.5 million ..." is prose; an outline number stands before a capital.
            return None
        return "-", m.group(1)
    first = line.spans[0][0] if line.spans else ""
    if len(line.spans) > 1 and first.strip() in ("o", "O") and line.spans[1][1] != line.spans[0][1]:
        # A letter "o" set in a font of its own before the text: a word processor's
        # second-level bullet (Courier New "o").
        rest = text[len(first) :].lstrip()
        if rest[:1].isalnum():
            return "-", rest
    return None


def label_depth(text: str) -> int:
    """Levels below the first of an outline-numbered item ("1.2.3 Title" -> 2), else 0."""
    label = text.split(None, 1)[0] if text.strip() else ""
    return label.rstrip(".").count(".") if _OUTLINE_NUMBER.match(label) else 0


def strip_marker(line: Line, rest: str) -> Line:
    """The line without its source list marker (spans trimmed accordingly)."""
    cut = len(line.text) - len(rest)
    spans: list[tuple[str, int]] = []
    for text, style in line.spans:
        if cut >= len(text):
            cut -= len(text)
            continue
        spans.append((text[cut:], style))
        cut = 0
    return Line(
        line.x0, line.top, line.x1, line.bottom, rest, spans, line.size, line.style, line.glyph_x, line.glyph_text
    )
