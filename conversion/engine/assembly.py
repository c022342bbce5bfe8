"""Document assembly: pages joined into one Markdown document, tables that run on across a
page break joined into one, and a word hyphenated across a page break made whole again.

Every page's Markdown stands alone (a client may read pages one by one, and the Markdown
response puts a page marker between them), so a table that continues on the next page is
rendered there as a table of its own. The document's Markdown joins the two: the
continuation's repeated header is dropped, or, where the continuation has none, its first
row (rendered as a header so that the page's table is valid) becomes a row again. Likewise a
paragraph that ends a page with a hyphenated word ("cre-") and goes on at the top of the next
("ativity. And ...") is left as two paragraphs in the pages and made one in the document, and
so is a list item whose sentence runs on at the top of the next page, under the item's text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .elements import Element, ElementType, Span
from .inline import _keeps_hyphen, compound_at_break, joined_without_space, written_joined
from .tables import Table


class Continuation(StrEnum):
    """How a page's first table relates to the previous page's last one."""

    NONE = ""
    REPEATED_HEADER = "repeated_header"  # the header row is printed again: drop it
    ROWS = "rows"  # the table goes on without a header: its first row is a row


@dataclass(frozen=True)
class TableEdge:
    """What a table at the top or the bottom of a page shows of itself to its neighbour."""

    columns: int
    x0: float
    x1: float
    header: tuple[str, ...]

    @classmethod
    def of(cls, table: Table) -> TableEdge:
        return cls(len(table.rows[0]), table.x0, table.x1, tuple(_norm(c) for c in table.rows[0]))


def continuation(before: TableEdge | None, after: TableEdge | None, page_width: float) -> Continuation:
    """Whether the table `after`, first on its page, continues `before`, last on the page
    before: the same columns, across the same width of the page."""
    if before is None or after is None or before.columns != after.columns:
        return Continuation.NONE
    tolerance = 0.02 * page_width
    if abs(before.x0 - after.x0) > tolerance or abs(before.x1 - after.x1) > tolerance:
        return Continuation.NONE
    return Continuation.REPEATED_HEADER if before.header == after.header else Continuation.ROWS


class WordBreak(StrEnum):
    """How a page's first paragraph relates to the previous page's last one."""

    NONE = ""
    HYPHENATION = "hyphenation"  # a word split by the typesetter ("cre-" "ativity"): drop the hyphen
    COMPOUND = "compound"  # a hyphenated word split at its hyphen ("part-" "time"): keep it
    SENTENCE = "sentence"  # a list item's text going on under it on the next page: join with a space


_HYPHENS = ("-", "\u2010", "\u00ad")
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")


def ends_in_hyphen(markdown: str) -> bool:
    """Whether a page's Markdown ends in a hyphen: the cheap test before `word_break`."""
    return markdown.rstrip().endswith(_HYPHENS)


def word_break(
    before: Sequence[Element], after: Sequence[Element], words: Counter[str] | None, *, item: bool = False
) -> WordBreak:
    """Whether the paragraph that ends the page of `before` (its elements) breaks off in a
    hyphenated word that the paragraph starting the page of `after` finishes. The words of
    the document tell a compound's hyphen from the typesetter's, as at a line break. With
    `item` (the paragraph stands where the rest of the page's last list item would), a list
    item may break off so too."""
    last = next((e for e in reversed(before) if e.in_markdown), None)
    first = next((e for e in after if e.in_markdown), None)
    ends = (ElementType.PARAGRAPH, ElementType.LIST_ITEM) if item else (ElementType.PARAGRAPH,)
    if last is None or first is None or last.type not in ends:
        return WordBreak.NONE
    if first.type is not ElementType.PARAGRAPH:
        return WordBreak.NONE
    tail, head = last.markdown.rstrip(), first.markdown.lstrip()
    if compound_at_break(tail, head):
        return WordBreak.HYPHENATION if written_joined(tail, head, words) else WordBreak.COMPOUND
    if not (tail.endswith(_HYPHENS) and len(tail) >= 2 and tail[-2].isalpha() and head[:1].islower()):
        return WordBreak.NONE
    if not tail.endswith("\u00ad") and _keeps_hyphen(tail, head, words):
        return WordBreak.COMPOUND
    return WordBreak.HYPHENATION


# The end of a sentence: its closing punctuation, then any closing quotes, brackets or emphasis.
_SENTENCE_END = re.compile(r"[.!?:;\u3002\uff01\uff1f][\"'\u2019\u201d)\]*_`]*$")


def sentence_runs_on(before: Sequence[Element]) -> bool:
    """Whether the list item that ends the page of `before` (its elements) stops mid-sentence."""
    last = next((e for e in reversed(before) if e.in_markdown), None)
    return last is not None and last.type is ElementType.LIST_ITEM and not _SENTENCE_END.search(last.markdown.rstrip())


def document_words(texts: Sequence[str]) -> Counter[str]:
    """The words of a document's texts, lowercase, hyphenated compounds whole."""
    return Counter(_WORD.findall("\n".join(texts).lower()))


def join_pages(
    markdowns: Sequence[str],
    continuations: Sequence[Continuation],
    word_breaks: Sequence[WordBreak] | None = None,
) -> str:
    """The pages' Markdown joined with a blank line, tables continued across a break joined,
    a paragraph broken off in a hyphenated word joined with its continuation."""
    return join_document(markdowns, [[] for _ in markdowns], continuations, word_breaks)[0]


def join_document(
    markdowns: Sequence[str],
    spans: Sequence[Sequence[Span | None]],
    continuations: Sequence[Continuation],
    word_breaks: Sequence[WordBreak] | None = None,
    lists_continued: Sequence[dict[int, str]] | None = None,
) -> tuple[str, list[list[Span | None]]]:
    """`join_pages`, and where each element's span of its page's Markdown (`spans`, per page,
    None for an element not shown) stands in the document's Markdown.

    An element that no join touches has the same text in both. Where a table runs on across
    a break, the table that ends the page keeps the text the join left of it and the
    continuation the rows it adds (the two spans are one table together); where a word is
    joined across a break, the paragraph before ends at the join and the one after starts
    there. `lists_continued` gives, per page, the document's Markdown of the list items (by
    index among the page's elements) that go on nesting in a list the page before left
    open: their text differs from the page's in its leading spaces only."""
    chunks: list[str] = []  # the document's text, one chunk per page or run of joined pages
    starts: list[int] = []  # where each chunk starts in the document
    out: list[list[Span | None]] = []
    breaks = word_breaks if word_breaks is not None else [WordBreak.NONE] * len(markdowns)
    if lists_continued is not None:
        markdowns, spans = _with_lists_continued(markdowns, spans, lists_continued)

    def clamp_previous(limit: int) -> None:
        """Cut the spans already placed so that none reaches past `limit` (they are in
        order: the cut stops at the first that ends before it)."""
        for page in reversed(out):
            for i in range(len(page) - 1, -1, -1):
                span = page[i]
                if span is None:
                    continue
                if span[1] <= limit:
                    return
                page[i] = (min(span[0], limit), limit)

    for markdown, page_spans, cont, brk in zip(markdowns, spans, continuations, breaks, strict=True):
        if cont is not Continuation.NONE and chunks and markdown:
            joined = _join_tables(chunks[-1], markdown, cont)
            if joined is not None:
                kept = starts[-1] + _common_prefix(chunks[-1], joined)
                clamp_previous(kept)
                shift = starts[-1] + len(joined) - len(markdown)  # the page's tail is kept as it is
                first = next((i for i, span in enumerate(page_spans) if span is not None and span[1] > span[0]), None)
                placed: list[Span | None] = []
                for i, span in enumerate(page_spans):
                    if span is None:
                        placed.append(None)
                    elif i == first:
                        # The continued table: the rows it adds to the one before.
                        placed.append((kept, max(kept, span[1] + shift)))
                    else:
                        placed.append((span[0] + shift, span[1] + shift))
                chunks[-1] = joined
                out.append(placed)
                continue
        if brk is not WordBreak.NONE and chunks and markdown:
            before = chunks[-1].rstrip()
            kept_text = before[:-1] if brk is WordBreak.HYPHENATION else before
            rest = markdown.lstrip()
            space = " " if brk is WordBreak.SENTENCE and not joined_without_space(kept_text, rest) else ""
            join_at = starts[-1] + len(kept_text)
            clamp_previous(join_at)
            shift = join_at + len(space) - (len(markdown) - len(rest))
            # The space a sentence's two parts are joined with is the continuation's: the
            # spans touch.
            out.append(
                [None if span is None else (max(join_at, span[0] + shift), span[1] + shift) for span in page_spans]
            )
            first = next((i for i, span in enumerate(out[-1]) if span is not None), None)
            if space and first is not None:
                out[-1][first] = (join_at, out[-1][first][1])  # type: ignore[index]
            chunks[-1] = kept_text + space + rest
            continue
        if markdown:
            start = starts[-1] + len(chunks[-1]) + 2 if chunks else 0  # after the blank line
            chunks.append(markdown)
            starts.append(start)
            out.append([None if span is None else (span[0] + start, span[1] + start) for span in page_spans])
        else:
            out.append([None if span is None else (_end(starts, chunks), _end(starts, chunks)) for span in page_spans])
    return "\n\n".join(chunks), out


def _with_lists_continued(
    markdowns: Sequence[str], spans: Sequence[Sequence[Span | None]], lists_continued: Sequence[dict[int, str]]
) -> tuple[list[str], list[list[Span | None]]]:
    """The pages' Markdown and spans with the elements `lists_continued` names rewritten."""
    texts: list[str] = []
    placed: list[list[Span | None]] = []
    for markdown, page_spans, again in zip(markdowns, spans, lists_continued, strict=True):
        if not again:
            texts.append(markdown)
            placed.append(list(page_spans))
            continue
        parts: list[str] = []
        moved: list[Span | None] = []
        at = shift = 0
        for i, span in enumerate(page_spans):
            if span is None:
                moved.append(None)
                continue
            start, end = span
            if i in again:
                parts += [markdown[at:start], again[i]]
                at = end
                moved.append((start + shift, start + shift + len(again[i])))
                shift += len(again[i]) - (end - start)
            else:
                moved.append((start + shift, end + shift))
        parts.append(markdown[at:])
        texts.append("".join(parts))
        placed.append(moved)
    return texts, placed


def _end(starts: list[int], chunks: list[str]) -> int:
    return starts[-1] + len(chunks[-1]) if chunks else 0


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


_PIPE_DELIMITER = re.compile(r"^\|(?: --- \|)+$")
_HTML_CLOSE = "</tbody>\n</table>"


def _join_tables(before: str, after: str, cont: Continuation) -> str | None:
    """`before` and `after` as one text with the table that ends one and starts the other
    made one; None when the texts do not end and start with tables of one kind."""
    if before.endswith(_HTML_CLOSE) and after.startswith("<table>\n<thead>\n"):
        head, sep, rest = after.partition("</thead>\n<tbody>\n")
        if not sep:
            return None
        if cont is Continuation.REPEATED_HEADER:
            rows = rest
        else:
            header = head.removeprefix("<table>\n<thead>\n")
            if "<tr>" not in header:
                return None
            if not header.startswith("<tr>\n<th>"):
                rows = header.replace("<th", "<td").replace("</th>", "</td>") + "\n" + rest
            else:
                # A header of plain cells is written one element to a line.
                cells = re.findall(r"<th>(.*?)</th>", header)
                rows = "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>\n" + rest
        return before.removesuffix(_HTML_CLOSE) + rows
    before_last = before.rsplit("\n", 1)[-1]
    after_lines = after.split("\n")
    if not before_last.startswith("| ") or len(after_lines) < 2 or not _PIPE_DELIMITER.match(after_lines[1]):
        return None
    keep = after_lines[2:] if cont is Continuation.REPEATED_HEADER else [after_lines[0], *after_lines[2:]]
    if keep and keep[0].startswith("| "):
        whole = _rest_of_row(before_last, keep[0])
        if whole is not None:
            before, keep = before.removesuffix(before_last) + whole, keep[1:]
    return before + ("\n" + "\n".join(keep) if keep else "")


_CELL_SEPARATOR = re.compile(r"(?<!\\) \| ")


def _rest_of_row(last: str, first: str) -> str | None:
    """The pipe row `last` (ending a page's table) with `first` (starting its continuation)
    taken into it cell by cell, when `first` is the rest of a row the page break cut: it
    leaves the first column empty (that column's cell ended before the break), and each cell
    it fills goes on in lower case (a sentence running on; a new row under a cell spanning
    rows starts a value of its own). None otherwise."""
    before = _CELL_SEPARATOR.split(last.removeprefix("| ").removesuffix(" |"))
    after = _CELL_SEPARATOR.split(first.removeprefix("| ").removesuffix(" |"))
    filled = [c.strip() for c in after if c.strip()]
    if len(before) != len(after) or not before[0].strip() or after[0].strip() or not filled:
        return None
    if not all(c[0].islower() for c in filled):
        return None
    cells = [f"{a.strip()} {b.strip()}".strip() for a, b in zip(before, after, strict=True)]
    return "| " + " | ".join(cells) + " |"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()
