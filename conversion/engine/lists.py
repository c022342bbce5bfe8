"""List items: the markers that open them, bullets of any glyph and ordered numbers."""

from __future__ import annotations

import re
from collections import defaultdict

from .layout import BOLD, MARK_BOX, MARK_CIRCLE, MARK_DASH, MARK_TICK, Box, Line, PageModel, is_rtl

# Bullet glyphs: hyphen bullet, hyphen, en and em dash, asterisk, and any private-use
# code point (Symbol and Wingdings fonts put their bullets there).
_BULLETS = "•●▪◦‣○■□➢►▶✓✔◆◇∙·\u2043-\u2013\u2014*"
_BULLET_CLASS = re.escape(_BULLETS) + "\ue000-\uf8ff"
# An unmapped glyph "(cid:N)" at the start of a line is almost always a bullet drawn
# from a symbol font without a Unicode mapping.
_BULLET = re.compile(rf"^\s*([{_BULLET_CLASS}]|\(cid:\d+\)(?:\(cid:\d+\))?)\s+(?!\(cid:)(\S.*)$", re.S)
# Checkboxes: ballot boxes, empty or checked (Wingdings' checked boxes come as private-use
# code points U+F0FE and U+F0FD when the font maps them nowhere else), or drawn ones
# (layout.py's MARK_BOX, lists.CHECKED). Task list items in Markdown.
_UNCHECKED = "\u2610"
_CHECKED = "\u2611\u2612\u2705\u274e\uf0fe\uf0fd"
_CHECKBOX = re.compile(rf"^\s*([{_UNCHECKED}{_CHECKED}])\s*(\S.*)$", re.S)
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
    m = _CHECKBOX.match(text)
    if m:
        return ("- [ ]" if m.group(1) in _UNCHECKED else "- [x]"), m.group(2)
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


# Drawn marks (layout.py's `PageModel.marks`) given to the line they open.
# A bullet is at most this wide or tall, in ems of its line's font size (browsers draw
# discs of a third of an em, word processors' picture bullets reach two thirds); a
# checkbox or an option's circle is about the cap height or a little more.
BULLET_MAX_EM = 0.8
BOX_MAX_EM = 1.3
# ... and at least this (a speck of dust, a dot of a dotted rule, is no bullet).
MARK_MIN_EM = 0.15
# Text starts at most this far after its bullet, in ems (browsers: 0.75 em; word
# processors' hanging indents: up to 2.5 em).
MARK_GAP_EM = 3.0
# Text ending closer than this before a mark (in ems) makes it a mark inside the text (a
# separator between two words), not one that opens a line.
MARK_CLEAR_EM = 1.0
# Row buckets for finding the lines beside a mark, in points.
_ROW = 8.0
# A stroked square or circle with something drawn inside is checked (a tick, a cross, a
# dot); the glyph it becomes.
CHECKED = "\u2611"
# A stroked circle at least this wide (in ems) is an option's radio button, not a bullet.
OPTION_MIN_EM = 0.5


def attach_drawn_marks(model: PageModel) -> None:
    """Give each line its drawn bullet or checkbox as a leading glyph.

    A small shape (or picture) that stands just before the start of a line (just after
    its end for a line written right to left), level with the line's middle, with no
    text between them, is the line's list marker: the line gets its glyph and reaches
    out to the shape, so that nesting follows the marker's position as for glyph bullets.
    """
    if not model.marks or not model.lines:
        return
    marks = _checked_boxes(model.marks)
    rows: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(model.lines):
        if not ln.vertical:
            for r in range(int(ln.top // _ROW), int(ln.bottom // _ROW) + 1):
                rows[r].append(i)
    best: dict[int, tuple[float, Box, str]] = {}  # line index -> (gap, box, glyph)
    for box, glyph in marks:
        if glyph == MARK_TICK:
            continue
        cy = (box[1] + box[3]) / 2
        near = [i for i in rows.get(int(cy // _ROW), ()) if model.lines[i].top <= cy <= model.lines[i].bottom]
        found = _opened_line(model.lines, near, box, glyph)
        if found is not None:
            i, gap = found
            if i not in best or gap < best[i][0]:
                best[i] = (gap, box, glyph)
    for i, (_, box, glyph) in best.items():
        model.lines[i] = _with_marker(model.lines[i], box, glyph)


def _opened_line(lines: list[Line], near: list[int], box: Box, glyph: str) -> tuple[int, float] | None:
    """(index, gap) of the line among `near` (level with the mark) that the mark opens."""
    x0, top, x1, bottom = box
    w, h = x1 - x0, bottom - top
    chosen: tuple[int, float] | None = None
    for i in near:
        ln = lines[i]
        size = ln.size
        rtl = is_rtl(ln.text)
        gap = x0 - ln.x1 if rtl else ln.x0 - x1
        if not -0.1 * size <= gap <= MARK_GAP_EM * size:
            continue
        boxed = glyph in (MARK_BOX, CHECKED) or (glyph == MARK_CIRCLE and w >= OPTION_MIN_EM * size)
        limit = BOX_MAX_EM if boxed else BULLET_MAX_EM
        thin = h if glyph == MARK_DASH else min(w, h)
        if max(w, h) > limit * size or (glyph != MARK_DASH and thin < MARK_MIN_EM * size):
            continue
        if chosen is None or gap < chosen[1]:
            chosen = (i, gap)
    if chosen is None:
        return None
    ln = lines[chosen[0]]
    clear = MARK_CLEAR_EM * ln.size
    for i in near:
        other = lines[i]
        if i == chosen[0]:
            continue
        if is_rtl(ln.text):
            # Nothing over the mark or between it and the line's end, nor just after it.
            if other.x0 < x1 + clear and other.x1 > ln.x1 - 0.1 * ln.size:
                return None
        elif other.x1 > x0 - clear and other.x0 < ln.x0 + 0.1 * ln.size:
            return None
    return chosen


def _checked_boxes(marks: list[tuple[Box, str]]) -> list[tuple[Box, str]]:
    """Marks with each stroked square or circle that has another mark inside it checked
    (and that mark gone)."""
    holders = [k for k, (_, glyph) in enumerate(marks) if glyph in (MARK_BOX, MARK_CIRCLE)]
    if not holders:
        return marks
    cells: dict[tuple[int, int], list[int]] = defaultdict(list)
    for k, ((x0, top, x1, bottom), _) in enumerate(marks):
        cells[(int((x0 + x1) / 2 // _ROW), int((top + bottom) / 2 // _ROW))].append(k)
    inside: set[int] = set()
    checked: set[int] = set()
    for k in holders:
        x0, top, x1, bottom = marks[k][0]
        for cx in range(int(x0 // _ROW), int(x1 // _ROW) + 1):
            for cy in range(int(top // _ROW), int(bottom // _ROW) + 1):
                for j in cells.get((cx, cy), ()):
                    (a0, atop, a1, abottom), _ = marks[j]
                    if j != k and x0 < (a0 + a1) / 2 < x1 and top < (atop + abottom) / 2 < bottom and a1 - a0 < x1 - x0:
                        inside.add(j)
                        checked.add(k)
    return [(box, CHECKED if k in checked else glyph) for k, (box, glyph) in enumerate(marks) if k not in inside]


def _with_marker(line: Line, box: Box, glyph: str) -> Line:
    """`line` opened by `glyph`, drawn in `box` before it (after it, right to left)."""
    x0, _, x1, _ = box
    prefix = glyph + " "
    spans = [(prefix, 0), *line.spans]
    if is_rtl(line.text):
        # Glyph positions run left to right on the page: the mark is the rightmost.
        glyph_x = [*line.glyph_x, line.x1, x0, x0, x1]
        glyph_text = [*line.glyph_text, " ", glyph]
        left, right = line.x0, max(line.x1, x1)
    else:
        glyph_x = [x0, x1, x1, line.x0, *line.glyph_x]
        glyph_text = [glyph, " ", *line.glyph_text]
        left, right = min(line.x0, x0), line.x1
    return Line(
        left,
        line.top,
        right,
        line.bottom,
        prefix + line.text,
        spans,
        line.size,
        0,  # the marker is set in no particular style, as a bullet glyph would be
        glyph_x,
        glyph_text,
        max_gap=line.max_gap,
        hidden=line.hidden,
    )
