"""Letter-spaced text (tracking) read as words.

Titles, running heads and small caps are often set with extra space between their letters
("T H E  P E N G U I N  P R E S S"). pdfminer.six and PDFium see a gap after every letter and
put a word space there, so the text reads as single letters. The gaps tell the truth: inside a
word every letter is followed by the same tracking; between words the gap is that tracking
plus a word space. A run of single letters whose gaps fall into those two groups is joined
into its words; a run with one kind of gap only (single letters with ordinary spaces, "x y z",
or one tracked word) cannot be told apart and is left as it is.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .layout import Line

# Letters standing alone between spaces, four or more in a row: the cheap test a line must
# pass before its gaps are measured.
_SPACED_LETTERS = re.compile(r"(?:^|\s)(?:[^\W\d_]\s+){3,}[^\W\d_](?:\s|$)")
# A run of letters alone is letter spacing only if it holds at least this many letters.
MIN_RUN_LETTERS = 4
# The widest tracking read as letter spacing, in ems of the line's size: wider gaps between
# single letters are columns or word spaces, not tracking.
MAX_TRACKING_EM = 0.6
# A word gap exceeds the tracking by at least a thin space (in ems): gaps that much wider
# than the run's narrowest are between words.
WORD_SPACE_EM = 0.15


def untrack(line: Line) -> None:
    """Join the letters of letter-spaced words in `line` (in place): the spaces inside its
    tracked words go, the spaces between them stay."""
    text = line.text
    if line.vertical or line.code_glyphs is not None or not _SPACED_LETTERS.search(text):
        return
    glyphs = line.glyph_text
    if "".join(glyphs) != text:
        return  # the text was rebuilt (reordered, decomposed): glyphs no longer map onto it
    drop = _tracked_spaces(line.glyph_x, glyphs, line.size)
    if not drop:
        return
    keep = [i for i in range(len(glyphs)) if i not in drop]
    xs = line.glyph_x
    line.glyph_x = [v for i in keep for v in (xs[2 * i], xs[2 * i + 1])]
    line.glyph_text = [glyphs[i] for i in keep]
    # Each span loses the dropped glyphs it held.
    spans: list[tuple[str, int]] = []
    at = 0
    for span_text, style in line.spans:
        end = at + len(span_text)
        kept = "".join(g for i, g in _glyphs_in(glyphs, at, end) if i not in drop)
        if kept:
            spans.append((kept, style))
        at = end
    line.spans = spans
    line.text = "".join(t for t, _ in spans)


def _glyphs_in(glyphs: list[str], start: int, end: int) -> list[tuple[int, str]]:
    """The glyphs (index, text) whose characters lie in [start, end) of the joined text."""
    out = []
    at = 0
    for i, g in enumerate(glyphs):
        if start <= at < end:
            out.append((i, g))
        at += len(g)
    return out


def _tracked_spaces(glyph_x: list[float], glyphs: list[str], size: float) -> set[int]:
    """Indexes of the space glyphs inside letter-spaced words."""
    # Words: runs of glyphs that are not spaces, as (first, last) glyph indexes; between
    # two words, the space glyphs that part them.
    words: list[tuple[int, int]] = []
    spaces: list[list[int]] = []
    first = -1
    gap_glyphs: list[int] = []
    for i, g in enumerate(glyphs):
        if g.isspace():
            if first >= 0:
                words.append((first, i - 1))
                first = -1
                gap_glyphs = []
                spaces.append(gap_glyphs)
            gap_glyphs.append(i)
        elif first < 0:
            first = i
    if first >= 0:
        words.append((first, len(glyphs) - 1))
    drop: set[int] = set()
    k = 0
    while k < len(words):
        # The run of single letters that starts at word k.
        end = k
        while end < len(words) and _single_letter(glyphs, words[end]):
            end += 1
        if end - k >= MIN_RUN_LETTERS:
            drop |= _run_spaces(glyph_x, words[k:end], spaces[k : end - 1], size)
        k = max(end, k + 1)
    return drop


def _single_letter(glyphs: list[str], word: tuple[int, int]) -> bool:
    first, last = word
    return first == last and len(glyphs[first]) == 1 and glyphs[first].isalpha()


def _run_spaces(glyph_x: list[float], run: list[tuple[int, int]], spaces: list[list[int]], size: float) -> set[int]:
    gaps = [glyph_x[2 * b[0]] - glyph_x[2 * a[1] + 1] for a, b in pairwise(run)]
    narrowest = min(gaps)
    if narrowest < 0 or narrowest > MAX_TRACKING_EM * size:
        return set()
    inside = [g - narrowest < WORD_SPACE_EM * size for g in gaps]
    # Two kinds of gap, and at least one word of three letters: tracked words with word
    # spaces between them. One kind alone proves nothing.
    if all(inside) or not any(a and b for a, b in pairwise(inside)):
        return set()
    return {i for joined, between in zip(inside, spaces, strict=True) if joined for i in between}
