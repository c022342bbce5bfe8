"""List items: the markers that open them, bullets of any glyph and ordered numbers."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from .layout import (
    BOLD,
    MARK_BOX,
    MARK_CIRCLE,
    MARK_DASH,
    MARK_DISC,
    MARK_SQUARE,
    MARK_TICK,
    MONO,
    Box,
    Line,
    PageModel,
    is_rtl,
)

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
# A checkbox after a space and before text, inside a line: the next option of a row.
_INNER_CHECKBOX = re.compile(rf"(?<=\S)\s+([{_UNCHECKED}{_CHECKED}])(?=\s*\S)")
_ORDERED = re.compile(r"^\s*(\d{1,3})([.)])\s+(\S.*)$", re.S)
# Labels Markdown has no ordered marker for: "a)", "(a)", "(iv)", "(1)", "A)", "b.", "iv.",
# and outline numbers "1.2", "1.2.3." before a capital. The item keeps its label as text.
_LABEL = r"\(?(?:\d{1,3}|[a-zA-Z]|[ivxlc]{1,6})\)|[a-z]\.|[ivx]{1,5}\.|\d{1,3}(?:\.\d{1,3}){1,3}\.?"
_LABELLED = re.compile(rf"^\s*((?:{_LABEL})\s+(\S.*))$", re.S)
# A capital letter label ("A.", "B.") opens a line as often as an initial does ("A. Smith"):
# it is a label only as one of a run of consecutive letters (`lettered_runs`).
_CAPITAL_LABEL = re.compile(r"^\s*(([A-Z])\.\s+(\S.*))$", re.S)
# ems of the line's size: the labels of one list stand this close across (a browser sets each
# right-aligned before the text, so "W." starts further left than "I.").
_LABEL_ALIGN_EM = 0.6
_OUTLINE_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3}){1,3}\.?$")
BARE_NUMBER = re.compile(r"^\d{1,3}$")
LONE_MARKER = re.compile(rf"^(?:[{_BULLET_CLASS}]|\d{{1,3}}[.)]|\(cid:\d+\)|{_LABEL})$")
# A label is set apart from its text by a tab stop (a word processor's numbering) when the gap
# after it is at least this wide, in ems of the line's size ...
LABEL_TAB_EM = 0.45
# ... and at least this many times the line's widest gap between two other words (a justified
# line stretches its spaces; a tab stop stands out among them).
LABEL_TAB_SPACES = 1.5
# A glyph gap wider than this (in ems) is a word space.
WORD_SPACE_MIN_EM = 0.1
# One glyph, then the text (see `glyph_bullet`).
_ONE_GLYPH = re.compile(r"^\s*(\S)\s+(\S.*)$", re.S)
# What a word processor's bullet may be beyond `_BULLETS`: a glyph of these Unicode
# categories (symbols: dingbats, arrows, shapes; dashes; private use: a symbol font's glyph
# without a Unicode value of its own) ...
_BULLET_CATEGORIES = frozenset({"So", "Sm", "Pd", "Co"})
# ... or one of these: a letter "o" (Word's second-level bullet in the text font), a
# greater-than sign (the arrow of the text font), guillemets and a middle dot.
_BULLET_MARKS = "o>\u00bb\u203a\u00b7"


def lettered_runs(lines: Sequence[Line]) -> set[int]:
    """The id()s of `lines` (in reading order) opened by a capital letter label that stand
    in a run of consecutive letters ("A.", "B.", "C.") at one indent, with nothing between
    two of them at that indent or left of it: the labels of a list (options, clauses), whose
    items wrap under their text, not initials, nor lettered headings with their sections'
    paragraphs between them."""
    labelled = [(k, ln, m.group(2)) for k, ln in enumerate(lines) if (m := _CAPITAL_LABEL.match(ln.text))]
    return _label_runs(lines, labelled, lambda ln, letter, nxt, after, reach: ord(after) == ord(letter) + 1)


def symbol_runs(lines: Sequence[Line]) -> set[int]:
    """The id()s of `lines` (in reading order) opened by a glyph `bullet_glyph` accepts and a
    space, that stand in a run of lines opened by the same glyph at one indent, their text
    after it at one indent too, with nothing between two of them at the glyph's indent or
    left of it: the items of a list whose bullet a page sets one space from its text (a
    browser's bullet drawn by a style sheet, "→" or "▸"), not a symbol typed before a word.
    Their wrapped lines stand under the text, right of the glyph."""
    opened = [
        (k, ln, m.group(1))
        for k, ln in enumerate(lines)
        if (m := _ONE_GLYPH.match(ln.text)) and bullet_glyph(m.group(1))
    ]
    return _label_runs(
        lines,
        opened,
        lambda ln, glyph, nxt, other, reach: other == glyph and abs(_text_start(nxt) - _text_start(ln)) <= reach,
    )


def _label_runs(
    lines: Sequence[Line],
    labelled: list[tuple[int, Line, str]],
    follows: Callable[[Line, str, Line, str, float], bool],
) -> set[int]:
    """The id()s of the `labelled` lines (index in `lines`, line, label) that the next
    labelled line at their indent (within `_LABEL_ALIGN_EM`) `follows`, with nothing of
    `lines` between the two at that indent or left of it, and of those next lines."""
    out: set[int] = set()
    for n, (k, ln, label) in enumerate(labelled):
        reach = _LABEL_ALIGN_EM * ln.size
        for j, nxt, after in labelled[n + 1 :]:
            if abs(nxt.x0 - ln.x0) <= reach:
                if follows(ln, label, nxt, after, reach) and all(b.x0 > ln.x0 + reach for b in lines[k + 1 : j]):
                    out |= {id(ln), id(nxt)}
                break
    return out


def _text_start(line: Line) -> float:
    """Where the text after a line's opening glyph starts (its second visible glyph)."""
    visible = (line.glyph_x[2 * k] for k, g in enumerate(line.glyph_text) if not g.isspace())
    next(visible, None)
    return next(visible, line.x1)


def list_marker(
    line: Line, body: float, *, not_heading: bool = False, lettered: bool = False, symbol_run: bool = False
) -> tuple[str, str] | None:
    """(markdown marker, text after the source marker) for a list item line. `not_heading`:
    the document says which lines are headings (a word processor's outline) and this is
    none, so a number a tab stop sets apart from its text opens an item at any weight or size.
    `lettered`: the line stands in a run of capital letter labels (`lettered_runs`);
    `symbol_run`: in a run of lines opened by one symbol (`symbol_runs`)."""
    text = line.text
    if (
        line.style & BOLD
        and len(text) < 80
        and not (_CHECKBOX.match(text) or _BULLET.match(text) or glyph_bullet(line) is not None or symbol_run)
        and not (not_heading and tab_numbered(line))
    ):
        # A short bold line opened by a number or a label is a numbered heading; one opened by
        # a bullet or a checkbox is an item set in bold.
        return None
    m = _CHECKBOX.match(text)
    if m:
        return ("- [ ]" if m.group(1) in _UNCHECKED else "- [x]"), m.group(2)
    m = _BULLET.match(text)
    if m:
        if m.group(1) in "-\u2013\u2014*" and not m.group(2)[:1].isalnum():
            return None
        # (A bullet opens an item at any size: a line of inline code, set in a font of
        # its own, may outnumber the body's glyphs. Heading sizes are ruled out before.)
        box = _CHECKBOX.match(m.group(2))
        if box:
            # A checkbox after a bullet or an unmapped label glyph: a task item still.
            return ("- [ ]" if box.group(1) in _UNCHECKED else "- [x]"), box.group(2)
        return "-", m.group(2)
    rest = glyph_bullet(line)
    if rest is None and symbol_run and (m := _ONE_GLYPH.match(text)):
        rest = m.group(2)
    if rest is not None:
        return "-", rest
    if line.size > body * 1.12 and not (not_heading and tab_numbered(line)):
        # A numbered line set larger than the body is a numbered heading.
        return None
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
    m = _CAPITAL_LABEL.match(text) if lettered else None
    if m:
        return "-", m.group(1)
    first = line.spans[0][0] if line.spans else ""
    if len(line.spans) > 1 and first.strip() in ("o", "O") and line.spans[1][1] != line.spans[0][1]:
        # A letter "o" set in a font of its own before the text: a word processor's
        # second-level bullet (Courier New "o").
        rest = text[len(first) :].lstrip()
        if rest[:1].isalnum():
            return "-", rest
    return None


def bullet_glyph(glyph: str) -> bool:
    """Whether `glyph` (one character) may be a word processor's bullet: any symbol, dash or
    private-use glyph beyond ASCII, a letter "o", a ">", a guillemet. Word takes its bullets from
    any font (Wingdings' arrows and boxes, dingbats, shapes), so no list of glyphs is
    complete; the tab stop after it (`glyph_bullet`) is what makes it one."""
    if len(glyph) != 1:
        return False
    # ASCII's other symbols ("+", "=", "<", "|") open formulas and code at least as often as
    # lists (inline code after them stands apart by its padding, as far as a tab stop).
    return glyph in _BULLET_MARKS or (not glyph.isascii() and unicodedata.category(glyph) in _BULLET_CATEGORIES)


def glyph_bullet(line: Line) -> str | None:
    """The text of `line` after a lone glyph that `bullet_glyph` accepts and a tab stop sets
    apart from that text (a word processor's bullet, whatever its font); None if the line
    opens otherwise. Typed text puts a space after a symbol ("→ see below"), no tab stop."""
    m = _ONE_GLYPH.match(line.text)
    if m is None or not bullet_glyph(m.group(1)):
        return None
    return m.group(2) if tab_after(line, 1) else None


def lone_list_marker(cell: str) -> bool:
    """Whether `cell`, text standing alone before a wider gap (a table's first column), is a
    list marker: a bullet of `_BULLETS` or any glyph `bullet_glyph` accepts, a number with
    its "." or ")", a label, or a number alone."""
    cell = cell.strip()
    return bool(LONE_MARKER.match(cell) or BARE_NUMBER.match(cell) or bullet_glyph(cell))


def tab_after(line: Line, chars: int) -> bool:
    """Whether the first `chars` visible glyphs of `line` (its label) stand apart from the
    rest by a tab stop: a gap of `LABEL_TAB_EM` or more, and `LABEL_TAB_SPACES` times the
    widest gap between the words after it."""
    xs = [(line.glyph_x[2 * k], line.glyph_x[2 * k + 1]) for k, g in enumerate(line.glyph_text) if not g.isspace()]
    if len(xs) <= chars:
        return False
    gap = xs[chars][0] - xs[chars - 1][1]
    spaces = [b[0] - a[1] for a, b in zip(xs[chars:], xs[chars + 1 :], strict=False)]
    words = [g for g in spaces if g > WORD_SPACE_MIN_EM * line.size]
    return gap >= LABEL_TAB_EM * line.size and gap >= LABEL_TAB_SPACES * max(words, default=0.0)


def tab_numbered(line: Line) -> bool:
    """Whether `line` opens with a number or a label set apart from its text by a tab stop:
    a word processor's numbering (typed numbers are followed by a space)."""
    m = _ORDERED.match(line.text) or _LABELLED.match(line.text)
    if m is None:
        return False
    label = line.text.split(None, 1)[0]
    return tab_after(line, len(label))


def opens_with_bullet(line: Line) -> bool:
    """Whether `line` opens with a bullet or a checkbox (not a number or a label, which
    headings carry too)."""
    return bool(_CHECKBOX.match(line.text) or _BULLET.match(line.text) or glyph_bullet(line) is not None)


def opens_at_right(line: Line) -> bool:
    """Whether the glyph that opens `line`'s text is drawn at its right end (a list
    marker of a page written right to left)."""
    return (
        bool(line.glyph_text)
        and line.glyph_text[-1] == line.text[:1]
        and line.glyph_x[-1] >= line.x1 - 0.5
        and (len(line.glyph_text) < 2 or line.glyph_text[0] != line.text[:1])
    )


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
        line.x0,
        line.top,
        line.x1,
        line.bottom,
        rest,
        spans,
        line.size,
        line.style,
        line.glyph_x,
        line.glyph_text,
        color=line.color,
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
# A page where at least this share of the lines is written right to left may have list
# markers at the right of its lines of Latin text too.
RTL_PAGE_SHARE = 0.2
# A stroked circle at least this wide (in ems) is an option's radio button, not a bullet.
OPTION_MIN_EM = 0.5


def attach_drawn_marks(model: PageModel) -> None:
    """Give each line its drawn bullet or checkbox as a leading glyph; one line per option
    of a row of options ("[ ] Yes [ ] No").

    A small shape (or picture) that stands just before the start of a line (just after
    its end for a line written right to left), level with the line's middle, with no
    text between them, is the line's list marker: the line gets its glyph and reaches
    out to the shape, so that nesting follows the marker's position as for glyph bullets.
    """
    if not model.lines:
        return
    if model.marks:
        marks = _checked_boxes(model.marks)
        options = [(box, glyph) for box, glyph in marks if glyph in (MARK_BOX, CHECKED, MARK_CIRCLE)]
        if options:
            _split_at_options(model, options)
        # A line written right to left has its marker at the right; on a page with some
        # such lines, so may a line of Latin text (a parameter's description in a list
        # of a right-to-left page): it takes a marker on either side.
        # (Code is left to right on any page: its lines are not counted.)
        rtl = {id(ln) for ln in model.lines if is_rtl(ln.text)}
        prose = sum(1 for ln in model.lines if not ln.style & MONO)
        mixed = model.rtl or (bool(rtl) and len(rtl) >= RTL_PAGE_SHARE * prose)
        right = {id(ln): (True,) if id(ln) in rtl else (False, True) if mixed else (False,) for ln in model.lines}
        rows = _rows(model.lines)
        best: dict[int, tuple[float, Box, str, bool]] = {}  # line index -> (gap, box, glyph, at right)
        for box, glyph in marks:
            if glyph == MARK_TICK:
                continue
            found = _opened_line(model.lines, _level_with(model.lines, rows, box), box, glyph, right)
            if found is not None:
                i, gap, shown, at_right = found
                if i not in best or gap < best[i][0]:
                    best[i] = (gap, box, shown, at_right)
        for i, (_, box, glyph, at_right) in best.items():
            model.lines[i] = _with_marker(model.lines[i], box, glyph, at_right=at_right)
    if any(_INNER_CHECKBOX.search(ln.text) for ln in model.lines):
        model.lines = [part for ln in model.lines for part in _split_glyph_options(ln)]


def _rows(lines: list[Line]) -> dict[int, list[int]]:
    """Indexes of the (horizontal) lines that reach into each row bucket."""
    rows: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(lines):
        if not ln.vertical:
            for r in range(int(ln.top // _ROW), int(ln.bottom // _ROW) + 1):
                rows[r].append(i)
    return rows


def _level_with(lines: list[Line], rows: dict[int, list[int]], box: Box) -> list[int]:
    """Indexes of the lines whose height spans the middle of `box`."""
    cy = (box[1] + box[3]) / 2
    return [i for i in rows.get(int(cy // _ROW), ()) if lines[i].top <= cy <= lines[i].bottom]


def _is_option(glyph: str, w: float, size: float) -> bool:
    """Whether a drawn mark `w` wide beside text of `size` is a checkbox or radio button."""
    return glyph in (MARK_BOX, CHECKED) or (glyph == MARK_CIRCLE and w >= OPTION_MIN_EM * size)


def _opened_line(
    lines: list[Line], near: list[int], box: Box, glyph: str, sides: Mapping[int, tuple[bool, ...]]
) -> tuple[int, float, str, bool] | None:
    """(index, gap, glyph shown, at right) of the line among `near` (level with the mark)
    that the mark opens; `sides` gives by id() of each line where its marker may stand
    (True: at its right end)."""
    x0, top, x1, bottom = box
    w, h = x1 - x0, bottom - top
    chosen: tuple[int, float, str, bool] | None = None
    for i in near:
        ln = lines[i]
        size = ln.size
        option = _is_option(glyph, w, size)
        thin = h if glyph == MARK_DASH else min(w, h)
        if max(w, h) > (BOX_MAX_EM if option else BULLET_MAX_EM) * size or (
            glyph != MARK_DASH and thin < MARK_MIN_EM * size
        ):
            continue
        for at_right in sides[id(ln)]:
            gap = x0 - ln.x1 if at_right else ln.x0 - x1
            if -0.1 * size <= gap <= MARK_GAP_EM * size and (chosen is None or gap < chosen[1]):
                # An empty radio button is an unchecked option, as an empty box is.
                chosen = (i, gap, MARK_BOX if option and glyph == MARK_CIRCLE else glyph, at_right)
    if chosen is None:
        return None
    ln = lines[chosen[0]]
    # Text may stand just before a checkbox (the previous option of a row, a question);
    # just before a bullet it makes the shape a mark inside the text.
    clear = 0.0 if chosen[2] in (MARK_BOX, CHECKED) else MARK_CLEAR_EM * ln.size
    for i in near:
        other = lines[i]
        if i == chosen[0]:
            continue
        if chosen[3]:
            # Nothing over the mark or between it and the line's end, nor just after it.
            if other.x0 < x1 + clear and other.x1 > ln.x1 - 0.1 * ln.size:
                return None
        elif other.x1 > x0 - clear and other.x0 < ln.x0 + 0.1 * ln.size:
            return None
    return chosen


def _split_at_options(model: PageModel, options: list[tuple[Box, str]]) -> None:
    """Cut lines where a checkbox or radio button is drawn between their words: each
    option of a row starts a line of its own."""
    rows = _rows(model.lines)
    cuts: dict[int, list[float]] = defaultdict(list)  # line index -> x where a part starts
    for box, glyph in options:
        x0, _, x1, _ = box
        for i in _level_with(model.lines, rows, box):
            ln = model.lines[i]
            if _is_option(glyph, x1 - x0, ln.size) and ln.x0 < x0 and x1 < ln.x1 and not is_rtl(ln.text):
                cuts[i].append(x1)
    if not cuts:
        return
    out: list[Line] = []
    for i, ln in enumerate(model.lines):
        out.extend(_cut(ln, sorted(cuts[i])) if i in cuts else [ln])
    model.lines = out


def _cut(line: Line, xs: list[float]) -> list[Line]:
    """`line` cut before the first glyph at or after each x in `xs` (where no glyph
    straddles it); the line itself when its glyphs do not spell its text."""
    if "".join(line.glyph_text) != line.text:
        return [line]
    starts: list[int] = []
    gx = line.glyph_x
    for x in xs:
        k = next((k for k in range(len(line.glyph_text)) if gx[2 * k] >= x - 0.5), None)
        if k is None or (k > 0 and gx[2 * k - 1] > x):
            continue
        if k > 0 and (not starts or starts[-1] < k):
            starts.append(k)
    return _parts(line, starts)


def _split_glyph_options(line: Line) -> list[Line]:
    """A line of several options each opened by a checkbox glyph, one line per option."""
    if "".join(line.glyph_text) != line.text:
        return [line]
    starts = [m.start(1) for m in _INNER_CHECKBOX.finditer(line.text)]
    offsets = [0]  # character offset of each glyph
    for g in line.glyph_text:
        offsets.append(offsets[-1] + len(g))
    ks = [offsets.index(c) for c in starts if c in offsets]
    if not ks:
        return [line]
    return _parts(line, ks)


def _parts(line: Line, starts: list[int]) -> list[Line]:
    """`line` cut before each glyph index in `starts` (ascending)."""
    bounds = zip([0, *starts], [*starts, len(line.glyph_text)], strict=True)
    return [part for a, b in bounds if (part := _part(line, a, b)) is not None]


def _part(line: Line, a: int, b: int) -> Line | None:
    """Glyphs a to b of `line` as a line of their own (None if they are all spaces)."""
    glyphs = line.glyph_text[a:b]
    visible = [k for k in range(a, b) if not line.glyph_text[k].isspace()]
    if not visible:
        return None
    start = sum(len(g) for g in line.glyph_text[:a])
    end = start + sum(len(g) for g in glyphs)
    spans: list[tuple[str, int]] = []
    pos = 0
    for text, style in line.spans:
        lo, hi = max(start, pos), min(end, pos + len(text))
        if lo < hi:
            spans.append((text[lo - pos : hi - pos], style))
        pos += len(text)
    text = "".join(t for t, _ in spans)
    style = -1
    for t, st in spans:
        if not t.isspace():
            style &= st
    return Line(
        line.glyph_x[2 * visible[0]],
        line.top,
        line.glyph_x[2 * visible[-1] + 1],
        line.bottom,
        text.strip(),
        _strip_spans(spans),
        line.size,
        max(style, 0),
        line.glyph_x[2 * a : 2 * b],
        glyphs,
        hidden=line.hidden,
        color=line.color,
    )


def _strip_spans(spans: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """`spans` without the spaces that open the first and close the last."""
    out = [s for s in spans if s[0]]
    while out and not out[0][0].strip():
        out.pop(0)
    while out and not out[-1][0].strip():
        out.pop()
    if out:
        out[0] = (out[0][0].lstrip(), out[0][1])
        out[-1] = (out[-1][0].rstrip(), out[-1][1])
    return out


# A mark inside a box or circle that fills this share of its width and height or more is
# the shape's own fill (a filled swatch drawn as a fill and an outline, as a chart's legend
# draws its keys), not a tick or a dot that checks it.
CHECK_FILL_SHARE = 0.85


def _checked_boxes(marks: list[tuple[Box, str]]) -> list[tuple[Box, str]]:
    """Marks with each stroked square or circle that has another mark inside it checked
    (and that mark gone); one whose inner mark fills it is a filled square or disc."""
    holders = [k for k, (_, glyph) in enumerate(marks) if glyph in (MARK_BOX, MARK_CIRCLE)]
    if not holders:
        return marks
    cells: dict[tuple[int, int], list[int]] = defaultdict(list)
    for k, ((x0, top, x1, bottom), _) in enumerate(marks):
        cells[(int((x0 + x1) / 2 // _ROW), int((top + bottom) / 2 // _ROW))].append(k)
    inside: set[int] = set()
    checked: set[int] = set()
    filled: set[int] = set()
    for k in holders:
        x0, top, x1, bottom = marks[k][0]
        for cx in range(int(x0 // _ROW), int(x1 // _ROW) + 1):
            for cy in range(int(top // _ROW), int(bottom // _ROW) + 1):
                for j in cells.get((cx, cy), ()):
                    (a0, atop, a1, abottom), _ = marks[j]
                    if j != k and x0 < (a0 + a1) / 2 < x1 and top < (atop + abottom) / 2 < bottom and a1 - a0 < x1 - x0:
                        inside.add(j)
                        fills = min((a1 - a0) / (x1 - x0), (abottom - atop) / max(bottom - top, 1e-6))
                        (filled if fills >= CHECK_FILL_SHARE else checked).add(k)
    solid = {MARK_BOX: MARK_SQUARE, MARK_CIRCLE: MARK_DISC}
    return [
        (box, CHECKED if k in checked else solid.get(glyph, glyph) if k in filled else glyph)
        for k, (box, glyph) in enumerate(marks)
        if k not in inside
    ]


def _with_marker(line: Line, box: Box, glyph: str, *, at_right: bool) -> Line:
    """`line` opened by `glyph`, drawn in `box` before it (after it, `at_right`)."""
    x0, _, x1, _ = box
    prefix = glyph + " "
    spans = [(prefix, 0), *line.spans]
    if at_right:
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
        color=line.color,
    )
