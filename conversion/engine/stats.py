"""Document statistics: body and heading font sizes, running lines, the words used.

Gathered incrementally from every page parsed so far, so `convert` can stream pages with a
small look-ahead instead of holding the whole document first.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from .layout import MONO, Line, PageModel

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
        self._mono_chars = 0
        self._chars = 0
        self._running: Counter[str] = Counter()
        self._body: float | None = None
        self._levels: dict[float, int] | None = None
        # Words of the pages parsed so far (lowercase, hyphenated compounds whole): the
        # evidence for keeping or dropping a hyphen at a line break.
        self.words: Counter[str] = Counter()

    def add_page(self, page: PageModel) -> None:
        self.pages += 1
        keys: set[str] = set()
        for line in page.lines:
            n = len(line.text)
            self._size_chars[line.size] += n
            if n >= 30:
                # Body text is told by its long lines; table cells would outvote it.
                self._prose_chars[line.size] += n
            self._chars += n
            if line.style & MONO:
                self._mono_chars += n
            key = _running_key(line, page)
            if key is not None:
                keys.add(key)
        self._running.update(keys)
        self.words.update(_WORD.findall("\n".join(ln.text for ln in page.lines).lower()))
        self._body = None
        self._levels = None

    @property
    def body_size(self) -> float:
        if self._body is None:
            counts = self._prose_chars or self._size_chars
            self._body = max(counts.items(), key=lambda kv: (kv[1], -kv[0]))[0] if counts else 10.0
        return self._body

    @property
    def mono_body(self) -> bool:
        """Most text is monospaced: then monospace does not mean code."""
        return self._chars > 0 and self._mono_chars > 0.5 * self._chars

    def heading_level_for_size(self, size: float) -> int | None:
        if self._levels is None:
            body = self.body_size
            sizes = sorted((s for s in self._size_chars if s >= body * 1.15), reverse=True)
            self._levels = {s: min(i + 1, 5) for i, s in enumerate(sizes)}
        return self._levels.get(size)

    @property
    def bold_heading_level(self) -> int:
        self.heading_level_for_size(self.body_size)
        assert self._levels is not None
        return min(len(self._levels) + 1, 6)

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
        count = self._running[key]
        if self.pages == 2:
            edge = page.height * 0.08
            return count == 2 and (line.bottom <= edge or line.top >= page.height - edge)
        # Headers often alternate between odd and even pages (title, chapter), so a
        # repetition on a third of the pages is enough.
        return count >= (2 if self.pages < 5 else max(3, math.ceil(0.3 * self.pages)))
