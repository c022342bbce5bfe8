"""Document statistics: body and heading font sizes, running lines, the words used.

Gathered incrementally from every page parsed so far, so `convert` can stream pages with a
small look-ahead instead of holding the whole document first.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from .census import PageFonts
from .furniture import PAGE_NUMBER
from .layout import BOLD, MONO, Line, PageModel

# Markdown level of a document's first section level; `#` is kept for its title. (Word's
# styles read this way: Title `#`, Heading 1 `##`.)
FIRST_SECTION_LEVEL = 2
# A title is set this much larger than the body text at least (Word's Title style is
# 2.4 times its body size; a section heading of 1.7 times is still a heading).
_TITLE_BODY_RATIO = 1.8
# A size this much larger than the body is a heading style; one between the two ratios
# only when its lines stand alone (a slightly larger lead paragraph is still prose).
_HEADING_RATIO = 1.15
_HEADING_RATIO_MIN = 1.05
# Share of the text (characters) set in a monospaced face above which the document is
# typewritten and monospace does not mean code: a manual may hold more code than prose.
_MONO_BODY_SHARE = 0.9
# A monospaced face is display type, not code, with this many lines set wholly in it at a
# heading size at least, and this share of the lines at heading sizes.
_MONO_DISPLAY_LINES = 3
_MONO_DISPLAY_SHARE = 0.25
_PROSE_EMS = 15.0  # a line this many ems wide is prose, however few characters it holds
_MARGIN_ZONE = 0.1  # fraction of page height at top and bottom where running lines live
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"^[ivxlcdm]+$")


def _running_key(line: Line, page: PageModel) -> str | None:
    if line.bottom <= page.height * _MARGIN_ZONE:
        zone = "T"
    elif line.top >= page.height * (1 - _MARGIN_ZONE):
        zone = "B"
    else:
        return None
    text = " ".join(line.text.lower().split())
    if _ROMAN.match(text):
        text = "#"
    # Running lines sit at the same height on every page; the position is part of the key.
    return f"{zone}{round(line.top / 6)}:" + _DIGITS.sub("#", text)


class DocStats:
    """Font and repetition statistics over the pages parsed so far."""

    def __init__(self) -> None:
        self.pages = 0
        self._size_chars: Counter[float] = Counter()
        self._prose_chars: Counter[float] = Counter()
        self._mono_prose_chars: Counter[float] = Counter()
        # Characters of lines with a line of the same size directly above or below them
        # (lines of a paragraph), per size.
        self._para_chars: Counter[float] = Counter()
        self._mono_chars = 0
        self._chars = 0
        # Lines with words set at a heading size, per size, and those of them set wholly in
        # a monospaced face, per size: is the monospaced face the document's display type?
        self._mono_display_lines: Counter[float] = Counter()
        self._running: Counter[str] = Counter()
        self._running_texts: dict[str, set[str]] = {}
        self._body: float | None = None
        self._levels: dict[float, int] | None = None
        # Lines with words per font size, and the pages they sit on: which sizes are
        # heading styles, and whether the largest one is a title used once on page one.
        self._size_lines: Counter[float] = Counter()
        self._size_pages: dict[float, set[int]] = {}
        self._title: float | None = None
        # The font census of pages that are not parsed (not selected): their sizes count
        # toward the document's styles, so that levels do not depend on the selection.
        self._census: dict[int, PageFonts] = {}
        self._census_sum: PageFonts | None = None
        self._numbers: set[int] = set()  # pages parsed
        # Words of the pages parsed so far (lowercase, hyphenated compounds whole): the
        # evidence for keeping or dropping a hyphen at a line break.
        self.words: Counter[str] = Counter()

    def add_census(self, census: dict[int, PageFonts]) -> None:
        """Count the font sizes of pages that will not be parsed (see `census`)."""
        self._census.update((n, fonts) for n, fonts in census.items() if n not in self._numbers)
        self._invalidate()

    def _invalidate(self) -> None:
        self._census_sum = None
        self._body = None
        self._levels = None
        self._title = None

    def _census_total(self) -> PageFonts:
        if self._census_sum is None:
            total = PageFonts()
            for fonts in self._census.values():
                total.chars.update(fonts.chars)
                total.lines.update(fonts.lines)
                total.prose.update(fonts.prose)
            self._census_sum = total
        return self._census_sum

    def add_page(self, page: PageModel) -> None:
        self.pages += 1
        self._numbers.add(page.number)
        self._census.pop(page.number, None)
        keys: set[str] = set()
        for line in page.lines:
            n = len(line.text)
            self._size_chars[line.size] += n
            if (n >= 30 or line.x1 - line.x0 >= _PROSE_EMS * line.size) and not line.style & BOLD:
                # Body text is told by its long regular lines; table cells would outvote
                # it, and long bold lines are headings. Long is also measured in ems: a
                # column of Korean or Chinese holds fewer characters than one of Latin.
                # Long monospaced lines are code, unless the document is typewritten.
                (self._mono_prose_chars if line.style & MONO else self._prose_chars)[line.size] += n
            if sum(ch.isalpha() for ch in line.text) >= 2:
                self._size_lines[line.size] += 1
                if line.style & MONO:
                    self._mono_display_lines[line.size] += 1
                self._size_pages.setdefault(line.size, set()).add(page.number)
            self._chars += n
            if line.style & MONO:
                self._mono_chars += n
            key = _running_key(line, page)
            if key is not None:
                keys.add(key)
                self._running_texts.setdefault(key, set()).add(" ".join(line.text.split()))
        self._running.update(keys)
        for above, below in zip(page.lines, page.lines[1:], strict=False):
            if (
                above.size == below.size
                and -0.2 * above.size <= below.top - above.bottom <= above.size
                and min(above.x1, below.x1) > max(above.x0, below.x0)
            ):
                self._para_chars[above.size] += len(above.text)
                self._para_chars[below.size] += len(below.text)
        self.words.update(_WORD.findall("\n".join(ln.text for ln in page.lines).lower()))
        self._invalidate()

    @property
    def body_size(self) -> float:
        if self._body is None:
            census = self._census_total()
            prose = self._prose_chars + census.prose
            if self.mono_body or not prose:
                prose += self._mono_prose_chars
            counts = prose or (self._size_chars + census.chars)
            self._body = max(counts.items(), key=lambda kv: (kv[1], -kv[0]))[0] if counts else 10.0
        return self._body

    @property
    def mono_body(self) -> bool:
        """Nearly all text is monospaced (typewritten): then monospace does not mean code."""
        return self._chars > 0 and self._mono_chars > _MONO_BODY_SHARE * self._chars

    @property
    def mono_is_code(self) -> bool:
        """Whether text in a monospaced face is code: not where most text is monospaced,
        nor where the monospaced face is the document's display type."""
        return not self.mono_body and not self.mono_display

    @property
    def mono_display(self) -> bool:
        """Whether the document's monospaced face is its display type.

        Code is set at the size of the text around it or smaller, a book
        that sets its chapter titles, running heads and lead-ins in a typewriter face sets
        them larger too. Display type: at least `_MONO_DISPLAY_LINES` lines wholly in the
        monospaced face at heading sizes, and `_MONO_DISPLAY_SHARE` of the lines set there.
        """
        body = self.body_size
        display = [s for s in self._size_lines if s >= body * _HEADING_RATIO_MIN]
        lines = sum(self._size_lines[s] for s in display)
        mono = sum(self._mono_display_lines[s] for s in display)
        return mono >= _MONO_DISPLAY_LINES and mono >= _MONO_DISPLAY_SHARE * lines

    def heading_level_for_size(self, size: float) -> int | None:
        """Markdown level of a heading set in `size`, or None when the size is no heading style.

        The heading sizes of the whole document (as far as parsed) are ranked, largest
        first. `#` is the document's title only; the first section level is `##`, with
        or without a title above it.
        """
        return self._ranked()[0].get(size)

    @property
    def bold_heading_level(self) -> int:
        """Level of a heading set in bold at the body size: below every sized heading."""
        levels = self._ranked()[0]
        sections = sum(1 for s in levels if s != self._title)
        return min(FIRST_SECTION_LEVEL + sections, 6)

    @property
    def has_title(self) -> bool:
        return self._ranked()[1] is not None

    def _ranked(self) -> tuple[dict[float, int], float | None]:
        if self._levels is None:
            body = self.body_size
            census = self._census_total().lines
            sizes = sorted((s for s in {*self._size_lines, *census} if self._is_heading_size(s, body)), reverse=True)
            self._title = self._title_size(sizes, body)
            sections = [s for s in sizes if s != self._title]
            self._levels = {s: min(FIRST_SECTION_LEVEL + i, 6) for i, s in enumerate(sections)}
            if self._title is not None:
                self._levels[self._title] = 1
        return self._levels, self._title

    def _is_heading_size(self, size: float, body: float) -> bool:
        if size >= body * _HEADING_RATIO:
            return True
        # Lines of a paragraph are counted twice at most: a size whose lines mostly stand
        # alone, one to a block, is a heading style.
        # Only where the body size was read off prose: next to table cells or labels,
        # a slightly larger line says nothing.
        return (
            size >= body * _HEADING_RATIO_MIN
            and bool(self._prose_chars)
            and self._para_chars[size] < 0.5 * self._size_chars[size]
        )

    def _title_size(self, sizes: list[float], body: float) -> float | None:
        """The largest heading size when it is a title: a line or three on the first page
        only, set far above the body text and clearly above the next heading size."""
        if not sizes:
            return None
        top = sizes[0]
        # Pages are numbered in the document; the first is the first parsed or counted.
        first = min(self._numbers | self._census.keys(), default=1)
        pages = self._size_pages.get(top, set()) | {n for n, fonts in self._census.items() if fonts.lines[top]}
        lines = self._size_lines[top] + self._census_total().lines[top]
        if lines > 3 or pages != {first} or top < _TITLE_BODY_RATIO * body:
            return None
        if len(sizes) > 1 and top < 1.2 * sizes[1]:
            return None
        return top

    def is_running(self, line: Line, page: PageModel) -> bool:
        """True for a header, footer or page number repeated across the selected pages.

        With a single page nothing is removed; with two pages only lines at the very
        edge that repeat on both; from three pages on, lines of the margin zones that
        repeat (digits ignored, same height) on two pages of up to four, or on 30% of
        the pages (at least three) of longer selections.
        """
        if self.pages < 2:
            return False
        key = _running_key(line, page)
        if key is None:
            return False
        # A line in a heading style whose number changes from page to page ("Part 3") is
        # a heading of each page: content. A running title in a heading style repeats
        # verbatim; one that carries the page number says so ("Page 3").
        if (
            len(self._running_texts[key]) > 1
            and self.heading_level_for_size(line.size) is not None
            and not PAGE_NUMBER.search(" ".join(line.text.split()))
        ):
            return False
        count = self._running[key]
        if self.pages == 2:
            edge = page.height * 0.08
            return count == 2 and (line.bottom <= edge or line.top >= page.height - edge)
        # Headers often alternate between odd and even pages (title, chapter), so a
        # repetition on a third of the pages is enough.
        return count >= (2 if self.pages < 5 else max(3, math.ceil(0.3 * self.pages)))
