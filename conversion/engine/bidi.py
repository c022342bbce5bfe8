"""The Unicode bidirectional algorithm (UAX #9), as much of it as a line of a PDF needs.

A PDF draws a line of Arabic, Hebrew or Persian as glyphs placed left to right on the page
(visual order). Reading it needs the logical order: right-to-left runs turned around,
left-to-right runs embedded in them (Latin words, numbers) kept, neutral characters (spaces,
punctuation, brackets) settled by their neighbours, mirrored brackets put back.

Here: the character classes from `unicodedata.bidirectional`, the weak-type rules W1-W7,
the neutral rules N1-N2, the implicit levels I1-I2, trailing whitespace L1, reordering L2
and mirroring L4 (where it sets the line's brackets right: `_mirrored`), for one paragraph
level and no explicit embeddings (PDF text carries no embedding controls: they are treated
as neutrals). Applied to a line in visual order with
the paragraph direction it was laid out in, reordering gives back its logical order: the
algorithm is its own inverse for the runs of such a line (strong runs, numbers inside
right-to-left text, neutrals between runs of one direction).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

__all__ = ["bidi_class", "embedding_levels", "reorder", "strong_direction", "unit_order"]

_STRONG = frozenset({"L", "R", "AL"})
# Neutral and isolate classes for N1-N2; explicit embedding controls are read as neutrals.
_NEUTRAL = frozenset({"B", "S", "WS", "ON", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
# Characters whose mirrored glyph another character stands for (Unicode BidiMirroring,
# the pairs text uses).
_MIRROR_PAIRS = "()[]{}<>«»‹›⁅⁆⁽⁾₍₎≤≥⟨⟩⟪⟫⦃⦄「」『』"
_MIRROR = {a: b for a, b in zip(_MIRROR_PAIRS[0::2], _MIRROR_PAIRS[1::2], strict=True)}
_MIRROR.update({b: a for a, b in _MIRROR.items()})
# The opening character of each closing one. "<", ">", "≤" and "≥" pair with nothing (a
# comparison, an arrow, a tag's bracket): they take the line's choice, or L4.
_OPENER_OF = {b: a for a, b in zip(_MIRROR_PAIRS[0::2], _MIRROR_PAIRS[1::2], strict=True) if a not in "<≤"}
_OPENERS = frozenset(_OPENER_OF.values())


def bidi_class(glyph: str) -> str:
    """Bidirectional class of a glyph's text: of its first strong character (a ligature
    glyph stands for several letters), else of its first character; "BN" for none."""
    first = ""
    for ch in glyph:
        cls = unicodedata.bidirectional(ch) or "L"  # unassigned code points count as letters
        if cls in _STRONG:
            return cls
        if not first:
            first = cls
    return first or "BN"


def strong_direction(text: str) -> tuple[int, int]:
    """Counts of strong left-to-right and right-to-left characters in `text`."""
    ltr = rtl = 0
    for ch in text:
        cls = unicodedata.bidirectional(ch)
        if cls == "L":
            ltr += 1
        elif cls in ("R", "AL"):
            rtl += 1
    return ltr, rtl


def _resolve_weak(types: list[str], sos: str) -> None:
    """W1-W7 in place, over one level run."""
    n = len(types)
    prev = sos
    for i in range(n):  # W1: a non-spacing mark takes the class before it
        if types[i] == "NSM":
            types[i] = "ON" if prev in ("LRI", "RLI", "FSI", "PDI") else prev
        prev = types[i]
    last = sos
    for i in range(n):  # W2: European digits after Arabic letters are Arabic numbers
        t = types[i]
        if t in _STRONG:
            last = t
        elif t == "EN" and last == "AL":
            types[i] = "AN"
    for i in range(n):  # W3
        if types[i] == "AL":
            types[i] = "R"
    for i in range(1, n - 1):  # W4: one separator between two numbers of a kind
        t, a, b = types[i], types[i - 1], types[i + 1]
        if t == "ES" and a == b == "EN":
            types[i] = "EN"
        elif t == "CS" and a == b and a in ("EN", "AN"):
            types[i] = a
    i = 0
    while i < n:  # W5: terminators next to European digits
        if types[i] != "ET":
            i += 1
            continue
        j = i
        while j < n and types[j] == "ET":
            j += 1
        if (i > 0 and types[i - 1] == "EN") or (j < n and types[j] == "EN"):
            types[i:j] = ["EN"] * (j - i)
        i = j
    for i in range(n):  # W6
        if types[i] in ("ES", "ET", "CS"):
            types[i] = "ON"
    last = sos
    for i in range(n):  # W7: European digits in left-to-right context are letters
        t = types[i]
        if t in ("L", "R"):
            last = t
        elif t == "EN" and last == "L":
            types[i] = "L"


def _resolve_neutral(types: list[str], sos: str, eos: str, embedding: str) -> None:
    """N1-N2 in place: a run of neutrals between two strong sides of one direction takes
    it (numbers count as right to left), otherwise the embedding direction."""
    n = len(types)
    i = 0
    while i < n:
        if types[i] not in _NEUTRAL:
            i += 1
            continue
        j = i
        while j < n and types[j] in _NEUTRAL:
            j += 1
        before = sos if i == 0 else types[i - 1]
        after = eos if j == n else types[j]
        before = "R" if before in ("EN", "AN") else before
        after = "R" if after in ("EN", "AN") else after
        types[i:j] = [before if before == after else embedding] * (j - i)
        i = j


def embedding_levels(glyphs: Sequence[str], rtl: bool, *, classified: bool = False) -> list[int]:
    """The resolved level of each glyph of one line, in a paragraph of direction `rtl`
    (`classified`: `glyphs` are their bidirectional classes already)."""
    base = 1 if rtl else 0
    direction = "R" if rtl else "L"
    raw = list(glyphs) if classified else [bidi_class(g) for g in glyphs]
    # X9: boundary neutrals (joiners, format marks) drop out and take a neighbour's level.
    kept = [i for i, c in enumerate(raw) if c != "BN"]
    types = [raw[i] for i in kept]
    _resolve_weak(types, direction)
    _resolve_neutral(types, direction, direction, direction)
    levels = [base] * len(glyphs)
    for i, t in zip(kept, types, strict=True):
        if base == 0:
            levels[i] = 1 if t == "R" else 2 if t in ("AN", "EN") else 0
        else:
            levels[i] = 2 if t in ("L", "EN", "AN") else 1
    # L1: segment separators, and whitespace before them or at the end of the line, go
    # back to the paragraph level.
    trailing = True
    for i in range(len(glyphs) - 1, -1, -1):
        cls = raw[i]
        if cls in ("S", "B"):
            levels[i] = base
            trailing = True
        elif trailing and cls in ("WS", "BN", "FSI", "LRI", "RLI", "PDI"):
            levels[i] = base
        else:
            trailing = False
    previous = base
    for i, c in enumerate(raw):
        if c == "BN":
            levels[i] = previous
        previous = levels[i]
    return levels


def reorder(glyphs: Sequence[str], rtl: bool, isolated: Sequence[bool] | None = None) -> list[str]:
    """`glyphs` reordered by L2 (each maximal run at or above a level reversed, from the
    highest level down to the lowest odd one), mirrored where they end at an odd level.

    `isolated` marks glyphs set apart as left-to-right isolates inside a right-to-left
    paragraph (inline code, which browsers lay out as a unit): each run of them is one
    neutral for the paragraph (as an isolate's initiator is), its own text left to right.
    """
    if not rtl or isolated is None or not any(isolated):
        return _reorder(glyphs, rtl)
    units: list[list[str]] = []
    kinds: list[str] = []  # the class a unit counts as: an isolate is a neutral
    i, n = 0, len(glyphs)
    while i < n:
        if not isolated[i] or glyphs[i].isspace():
            units.append([glyphs[i]])
            kinds.append("")
            i += 1
            continue
        j = i
        while j < n and isolated[j]:
            j += 1
        while glyphs[j - 1].isspace():  # spaces at its ends stay outside the isolate
            j -= 1
        units.append(_reorder(glyphs[i:j], False))
        kinds.append("ON")
        i = j
    order = _order([k or bidi_class(u[0]) for u, k in zip(units, kinds, strict=True)], rtl, isolates=kinds)
    out: list[str] = []
    mirrored: list[int] = []
    for k, lvl in order:
        if kinds[k]:
            out += units[k]
        else:
            if lvl % 2 and any(ch in _MIRROR for ch in units[k][0]):
                mirrored.append(len(out))
            out.append(units[k][0])
    return _mirrored(out, mirrored)


def unit_order(classes: Sequence[str], rtl: bool) -> list[tuple[int, int]]:
    """(index, level) of each unit in reordered sequence, for units of one bidirectional
    class each (`classes`; whole words, with "WS" for the spaces between them) in a
    paragraph of direction `rtl`: what `reorder` does to glyphs, done to words."""
    return _order(list(classes), rtl)


def _reorder(glyphs: Sequence[str], rtl: bool) -> list[str]:
    out: list[str] = []
    mirrored: list[int] = []
    for k, lvl in _order([bidi_class(g) for g in glyphs], rtl):
        g = glyphs[k]
        if lvl % 2 and any(ch in _MIRROR for ch in g):
            mirrored.append(len(out))
        out.append(g)
    return _mirrored(out, mirrored)


def _mirrored(glyphs: list[str], at: list[int]) -> list[str]:
    """`glyphs` (in logical order) with the brackets of those at the indexes `at` (glyphs
    at a right-to-left level) mirrored (L4) where that sets them right.

    A PDF gives a mirrored glyph's text either as the glyph looks (the character whose
    glyph it is: a word processor maps ")" to the glyph that a right-to-left "(" shows) or
    as the text it stands for (Chromium maps each glyph to the characters it was shaped
    from); PDFium mirrors some of a right-to-left run's brackets itself. Which, the text
    tells: in logical order an opening bracket or quotation mark comes before its closing
    one and clings to the word after it ("«دکمه"), a closing one to the word before it
    ("کن»"). So all of them are mirrored, or none where that leaves fewer of them wrong
    (`_misplaced`); then one still wrong is mirrored alone where that sets fewer wrong and
    leaves it clinging to its side (`_clings`: "1) ... 2)" never becomes "1( ... 2)"). A line
    that does not tell (one bracket of a pair broken over two lines) keeps L4."""
    if not at:
        return glyphs
    best = list(glyphs)
    for i in at:
        best[i] = "".join(_MIRROR.get(ch, ch) for ch in glyphs[i])
    wrong = _misplaced("".join(best))
    if wrong:
        as_given = _misplaced("".join(glyphs))
        if as_given < wrong:
            best, wrong = list(glyphs), as_given
    for i in at:
        if not wrong:
            break
        if len(best[i]) != 1 or not (best[i] in _OPENERS or best[i] in _OPENER_OF):
            continue
        flipped = list(best)
        flipped[i] = _MIRROR[best[i]]
        now = _misplaced("".join(flipped))
        if now < wrong and _clings(flipped, i):
            best, wrong = flipped, now
    return best


def _clings(glyphs: list[str], i: int) -> bool:
    """Whether the bracket `glyphs[i]` clings to its side: an opening one to text after it
    (a space or the start before it), a closing one to text before it."""
    before = glyphs[i - 1][-1:] if i > 0 else " "
    after = glyphs[i + 1][:1] if i + 1 < len(glyphs) else " "
    if glyphs[i] in _OPENERS:
        return (before.isspace() or before in _OPENERS) and not after.isspace()
    return not before.isspace() and (after.isspace() or after in _OPENER_OF or not after.isalnum())


def _misplaced(text: str) -> int:
    """How many brackets and quotation marks of `text` stand wrong: closing ones with no
    opening one before them, opening ones left open, and those that cling to the wrong side
    (an opening one after text and before a space or the end, a closing one after a space or
    the start and before text)."""
    stack: list[str] = []
    wrong = 0
    last = len(text) - 1
    for i, ch in enumerate(text):
        opener = _OPENER_OF.get(ch)
        before = text[i - 1] if i > 0 else " "
        after = text[i + 1] if i < last else " "
        if opener is not None:
            if stack and stack[-1] == opener:
                stack.pop()
            else:
                wrong += 1
            if before.isspace() and not after.isspace():
                wrong += 1
        elif ch in _OPENERS:
            stack.append(ch)
            if after.isspace() and not before.isspace():
                wrong += 1
    return wrong + len(stack)


def _order(classes: list[str], rtl: bool, isolates: Sequence[str] = ()) -> list[tuple[int, int]]:
    """(index, level) of each unit in reordered sequence; isolates sit at the level of
    left-to-right text inside the paragraph."""
    levels = embedding_levels(classes, rtl, classified=True)
    for k, kind in enumerate(isolates):
        if kind:
            levels[k] = 2 if rtl else 0
    order = list(range(len(levels)))
    top = max(levels, default=0)
    lowest_odd = min((lvl for lvl in levels if lvl % 2), default=top + 1)
    for level in range(top, lowest_odd - 1, -1):
        i = 0
        while i < len(order):
            if levels[order[i]] < level:
                i += 1
                continue
            j = i
            while j < len(order) and levels[order[j]] >= level:
                j += 1
            order[i:j] = order[i:j][::-1]
            i = j
    return [(k, levels[k]) for k in order]
