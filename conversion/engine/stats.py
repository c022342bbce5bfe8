"""Document statistics: body and heading font sizes, running lines, the words used.

Gathered incrementally from every page parsed so far, so `convert` can stream pages with a
small look-ahead instead of holding the whole document first.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from .census import PageFonts
from .furniture import PAGE_LABEL, PAGE_NUMBER, Candidate, is_ornament, running_candidates, running_text
from .layout import BOLD, MONO, Line, PageModel, chars_at_least
from .order import find_gutter
from .params import DEFAULT

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
# ...unless it also sets program text: this many lines of the text block (no margin line), below
# the heading sizes, wholly in the monospaced face and holding a mark of program syntax. An API
# reference may set its signatures as headings in its code face; its code blocks stay code.
_MONO_CODE_LINES = 3
_CODE_MARKS = frozenset("{}[]();=<>")
_PROSE_EMS = 15.0  # a line this many ems wide is prose, however few characters it holds
# A running header or footer is a line of a page's margin (`running_candidates`) that nearby
# pages repeat at the same place, with the same text once its numbers are masked: on every
# page, or on every other page when left and right pages carry different ones.
_SAME_PLACE_PT = 3.0  # points: two lines this close to the same edge of their pages are at one place
_RUNNING_WINDOW = 4  # pages either side of a page (in the selection) among which the repeats are counted
_RUNNING_MIN_PAGES = 3  # pages of that window, the page itself included, that carry the line
_RUNNING_SHARE = 0.3  # share of all the pages that carry a line of the margin band set close to the text
_EDGE_2_PAGES = 0.08  # fraction of the page height: with two pages, only lines this near the edge
# The text block: how far from the top (and the bottom) edge the prose of a page begins (ends),
# this quantile over the pages parsed (a low one: chapter openings start lower). A margin row
# beyond the margin bands is a running line only outside it.
_BLOCK_QUANTILE = 0.1
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")
# Word's built-in heading styles as its templates set them: (size in points, bold, fill colour
# 0xRRGGBB) -> the style's level (Heading 1 is 1). A heading size whose lines are set so is
# that heading level, which ranking cannot tell where the document starts below Heading 1
# (its sections are Heading 2) or uses one level only. Only coloured styles: a black one is
# any document's. Office 2007-2010 theme (Cambria): Heading 1 14 pt bold, 2 13, 3 11 pt bold;
# Office 2013 and 2016-2022 themes (Calibri Light): 16, 13, 12 pt; Office 2023 (Aptos): 20,
# 16, 14 pt.
WORD_HEADING_STYLES: dict[tuple[float, bool, int], int] = {
    (14.0, True, 0x365F91): 1,
    (13.0, True, 0x4F81BD): 2,
    (11.0, True, 0x4F81BD): 3,
    (16.0, False, 0x2E74B5): 1,
    (13.0, False, 0x2E74B5): 2,
    (12.0, False, 0x1F4D78): 3,
    (16.0, False, 0x2F5496): 1,
    (13.0, False, 0x2F5496): 2,
    (12.0, False, 0x1F3763): 3,
    (20.0, False, 0x0F4761): 1,
    (16.0, False, 0x0F4761): 2,
    (14.0, False, 0x0F4761): 3,
}


# Points: gutters found on two pages this close (in bins of this width, or the next) are the
# same gutter of the document's columns ...
GUTTER_BIN_PT = 4.0
# ... which is the document's where this share of its pages with text (lines enough for a
# gutter, `PageParams.gutter_min_lines`) have it.
DOCUMENT_GUTTER_SHARE = 0.5


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
        # Lines of the text block wholly in a monospaced face that hold program marks, per size.
        self._mono_code_lines: Counter[float] = Counter()
        # Running-line candidates: (at the top, masked text) -> page index -> distance from
        # that edge; per page, its candidates' keys by line id; each page's index in the
        # selection (its order among the pages parsed).
        self._running: dict[tuple[bool, str], dict[int, float]] = {}
        self._running_texts: dict[tuple[bool, str], set[str]] = {}
        self._page_running: dict[int, dict[int, tuple[tuple[bool, str], Candidate, Line]]] = {}
        # Places of every candidate standing apart, whatever its text: at the top -> page
        # index -> places.
        self._places: dict[bool, dict[int, list[float]]] = {True: {}, False: {}}
        self._index: dict[int, int] = {}
        # Per page with prose: distance from the top edge to its first prose line, and from
        # the bottom edge to its last (points).
        self._prose_reach: tuple[list[float], list[float]] = ([], [])
        self._body: float | None = None
        self._levels: dict[float, int] | None = None
        # Lines with words per font size, and the pages they sit on: which sizes are
        # heading styles, and whether the largest one is a title used once on page one.
        self._size_lines: Counter[float] = Counter()
        self._size_pages: dict[float, set[int]] = {}
        # Per font size, how its lines with words are set: (bold, fill colour) -> lines.
        self._size_looks: dict[float, Counter[tuple[bool, int]]] = {}
        self._shift = 0  # levels every sized heading goes down (`WORD_HEADING_STYLES`)
        self._title: float | None = None
        # The font census of pages that are not parsed (not selected): their sizes count
        # toward the document's styles, so that levels do not depend on the selection.
        self._census: dict[int, PageFonts] = {}
        self._census_sum: PageFonts | None = None
        self._numbers: set[int] = set()  # pages parsed
        # Words of the pages parsed so far (lowercase, hyphenated compounds whole): the
        # evidence for keeping or dropping a hyphen at a line break.
        self.words: Counter[str] = Counter()
        # The document's structure tree names its headings (`tags.StructureTags.names_headings`):
        # then a line it holds in another element is no section heading, whatever its style.
        self.tags_headings = False
        # A word processor wrote the PDF (LibreOffice's Writer, Microsoft Word): its built-in
        # heading styles say their levels (`WORD_HEADING_STYLES`).
        self.word_processor = False
        # The gutters found on the pages parsed (`order.find_gutter`), in bins of
        # `GUTTER_BIN_PT`, and the pages with text enough to have one: the document's
        # columns (`document_gutter`).
        self._gutters: dict[int, tuple[int, float]] = {}  # bin -> (pages, sum of their x)
        self._gutter_pages = 0
        # The x of the gutter between the document's columns: where `DOCUMENT_GUTTER_SHARE` of
        # its pages with text (and two at least) have one, within a bin of `GUTTER_BIN_PT` or
        # the next (their mean x); else None (a document in one column, or columns that move).
        self.document_gutter: float | None = None

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
        self._index[page.number] = self.pages
        candidates = running_candidates(page)
        on_page: dict[int, tuple[tuple[bool, str], Candidate, Line]] = {}
        prose_top, prose_bottom = math.inf, math.inf
        for line in page.lines:
            n = len(line.text)
            self._size_chars[line.size] += n
            if (n >= 30 or line.x1 - line.x0 >= _PROSE_EMS * line.size) and not line.style & BOLD:
                # Body text is told by its long regular lines; table cells would outvote
                # it, and long bold lines are headings. Long is also measured in ems: a
                # column of Korean or Chinese holds fewer characters than one of Latin.
                # Long monospaced lines are code, unless the document is typewritten.
                (self._mono_prose_chars if line.style & MONO else self._prose_chars)[line.size] += n
            worded = chars_at_least((line.text,), 2)
            if worded and id(line) not in candidates and (n >= 30 or line.x1 - line.x0 >= _PROSE_EMS * line.size):
                # The text block: prose of words, not a margin's furniture.
                prose_top = min(prose_top, line.top)
                prose_bottom = min(prose_bottom, page.height - line.bottom)
            if worded:
                self._size_lines[line.size] += 1
                if line.style & MONO:
                    self._mono_display_lines[line.size] += 1
                    if id(line) not in candidates and not _CODE_MARKS.isdisjoint(line.text):
                        self._mono_code_lines[line.size] += 1
                self._size_pages.setdefault(line.size, set()).add(page.number)
                looks = self._size_looks.get(line.size)
                if looks is None:
                    looks = self._size_looks[line.size] = Counter()
                looks[bool(line.style & BOLD), line.color] += 1
            self._chars += n
            if line.style & MONO:
                self._mono_chars += n
            candidate = candidates.get(id(line))
            if candidate is not None:
                key = (candidate.at_top, running_text(line.text))
                on_page[id(line)] = (key, candidate, line)
                self._running.setdefault(key, {}).setdefault(self.pages, candidate.place)
                if candidate.apart:
                    self._places[candidate.at_top].setdefault(self.pages, []).append(candidate.place)
                self._running_texts.setdefault(key, set()).add(" ".join(line.text.split()))
        self._page_running[page.number] = on_page
        if prose_top < math.inf:
            self._prose_reach[0].append(prose_top)
            self._prose_reach[1].append(prose_bottom)
        for above, below in zip(page.lines, page.lines[1:], strict=False):
            if (
                above.size == below.size
                and -0.2 * above.size <= below.top - above.bottom <= above.size
                and min(above.x1, below.x1) > max(above.x0, below.x0)
            ):
                self._para_chars[above.size] += len(above.text)
                self._para_chars[below.size] += len(below.text)
        self.words.update(_WORD.findall("\n".join(ln.text for ln in page.lines).lower()))
        if len(page.lines) >= DEFAULT.page.gutter_min_lines:
            self._gutter_pages += 1
            gutter = find_gutter([ln for ln in page.lines if not ln.vertical], page.width)
            if gutter is not None:
                place = round(gutter / GUTTER_BIN_PT)
                pages, total = self._gutters.get(place, (0, 0.0))
                self._gutters[place] = (pages + 1, total + gutter)
            self.document_gutter = self._find_document_gutter()
        self._invalidate()

    def _find_document_gutter(self) -> float | None:
        best: tuple[int, float] = (0, 0.0)
        for b in self._gutters:
            window = [self._gutters.get(k, (0, 0.0)) for k in (b - 1, b, b + 1)]
            pages, total = sum(n for n, _ in window), sum(x for _, x in window)
            if pages > best[0]:
                best = (pages, total)
        pages, total = best
        if pages < 2 or pages < DOCUMENT_GUTTER_SHARE * self._gutter_pages:
            return None
        return total / pages

    @property
    def text_elsewhere(self) -> bool:
        """Whether the census found text on a page that is not parsed (not selected): the
        document has a text layer even where the pages selected have none."""
        return bool(self._census)

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
        monospaced face at heading sizes, and `_MONO_DISPLAY_SHARE` of the lines set there;
        and fewer than `_MONO_CODE_LINES` lines of program text in that face below them.
        """
        body = self.body_size
        display = [s for s in self._size_lines if s >= body * _HEADING_RATIO_MIN]
        lines = sum(self._size_lines[s] for s in display)
        mono = sum(self._mono_display_lines[s] for s in display)
        code = sum(n for s, n in self._mono_code_lines.items() if s < body * _HEADING_RATIO_MIN)
        return mono >= _MONO_DISPLAY_LINES and mono >= _MONO_DISPLAY_SHARE * lines and code < _MONO_CODE_LINES

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
        return min(FIRST_SECTION_LEVEL + self._shift + sections, 6)

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
            self._shift = self._builtin_shift(sections)
            self._levels = {s: min(FIRST_SECTION_LEVEL + self._shift + i, 6) for i, s in enumerate(sections)}
            if self._title is not None:
                self._levels[self._title] = 1
        return self._levels, self._title

    def builtin_level(self, line: Line) -> int | None:
        """The Markdown level of the Word built-in heading style `line` is set in
        (`WORD_HEADING_STYLES`; Heading N is N + 1 hashes) in a word processor's PDF, None for
        any other look or producer (the Office accent colours are common elsewhere)."""
        if not self.word_processor:
            return None
        level = WORD_HEADING_STYLES.get((line.size, bool(line.style & BOLD), line.color))
        return None if level is None else level + 1

    def _builtin_shift(self, sections: list[float]) -> int:
        """How many levels below the first section level the sizes of `sections` (largest
        first) start: where a size is set as one of Word's built-in heading styles
        (`WORD_HEADING_STYLES`, its look the one most of its lines have), that style's level
        (Heading N is N + 1 hashes, as the title is one). Only down, and only where every
        size so set says the same."""
        if not self.word_processor:
            return 0
        shifts = set()
        for rank, size in enumerate(sections):
            looks = self._size_looks.get(size)
            if not looks:
                continue
            (bold, color), _ = looks.most_common(1)[0]
            level = WORD_HEADING_STYLES.get((size, bold, color))
            if level is not None:
                shifts.add(level + 1 - (FIRST_SECTION_LEVEL + rank))
        return shifts.pop() if len(shifts) == 1 and min(shifts) > 0 else 0

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
        """True for a header, footer, page number or printer's slug repeated across the
        selected pages.

        A candidate line of the page's margins (`running_candidates`) is one when other
        pages carry a line at the same place whose text is the same once numbers are
        masked: with two pages, both, and only at the very edge; with three or four, two
        of them; from five pages on, `_RUNNING_MIN_PAGES` of the pages within
        `_RUNNING_WINDOW` of this one, so that a running title that changes with the
        chapter, or alternates between left and right pages, is found as well as one
        printed on every page. A line of the margin band that does not stand apart from
        the text next to it (a text block reaching into the band) must be repeated on
        `_RUNNING_SHARE` of all the pages instead. With a single page nothing is removed, nor
        a line a tagged PDF's structure tree holds (`Line.tagged`): a table's header row a
        browser repeats at the top of each page is content.
        """
        if self.pages < 2 or line.tagged:
            return False
        on_page = self._page_running.get(page.number, {})
        candidate = on_page.get(id(line))
        if candidate is None:
            return False
        # A line that shares its row with text that is not running (a table's row at the
        # top of each page, a number beside a caption) is part of that text; marks beside
        # it (crop marks) are not text.
        return self._repeats(line, candidate, page) and all(
            mate in on_page and (is_ornament(on_page[mate][2]) or self._repeats(on_page[mate][2], on_page[mate], page))
            for mate in candidate[1].row
        )

    def _repeats(self, line: Line, candidate: tuple[tuple[bool, str], Candidate, Line], page: PageModel) -> bool:
        key, (at_top, place, reach, in_zone, apart, _row), _line = candidate
        if not in_zone and not self._outside_text_block(at_top, reach):
            return False
        # A line in a heading style whose number changes from page to page ("Part 3") is
        # a heading of each page: content. A running title in a heading style repeats
        # verbatim; one that carries the page number says so ("Page 3").
        if (
            len(self._running_texts[key]) > 1
            and self.heading_level_for_size(line.size) is not None
            and not any(rx.search(" ".join(line.text.split())) for rx in (PAGE_NUMBER, PAGE_LABEL))
        ):
            return False
        index = self._index[page.number]
        # A line that stands apart from the text next to it is counted among the pages
        # around; one that does not (the first line of a text block reaching into the
        # margin band) must repeat on a good share of all the pages.
        window = self.pages if self.pages < 5 or not apart else _RUNNING_WINDOW
        count = sum(
            1
            for other, at in self._running[key].items()
            if abs(other - index) <= window and abs(at - place) <= _SAME_PLACE_PT
        )
        if apart and PAGE_NUMBER.match(" ".join(line.text.split())) and self.pages >= 5:
            # A page number alone, apart from the text, where the pages around carry their
            # running lines (a chapter's first page drops the running title and keeps the
            # number).
            count = sum(
                1
                for other, places in self._places[at_top].items()
                if abs(other - index) <= window and any(abs(at - place) <= _SAME_PLACE_PT for at in places)
            )
        if self.pages == 2:
            edge = page.height * _EDGE_2_PAGES
            return count == 2 and (line.bottom <= edge if at_top else line.top >= page.height - edge)
        if self.pages < 5:
            return count >= 2
        return count >= (_RUNNING_MIN_PAGES if apart else max(3, math.ceil(_RUNNING_SHARE * self.pages)))

    def _outside_text_block(self, at_top: bool, reach: float) -> bool:
        """Whether a line reaching `reach` points in from the top (or bottom) edge stays
        outside the document's text block, as the pages parsed so far place it."""
        reaches = sorted(self._prose_reach[0 if at_top else 1])
        if not reaches:
            return False
        return reach <= reaches[int(_BLOCK_QUANTILE * (len(reaches) - 1))]
