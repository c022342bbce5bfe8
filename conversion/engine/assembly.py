"""Document assembly: pages joined into one Markdown document, tables that run on across a
page break joined into one, and a word hyphenated across a page break made whole again.

Every page's Markdown stands alone (a client may read pages one by one, and the Markdown
response puts a page marker between them), so a table that continues on the next page is
rendered there as a table of its own. The document's Markdown joins the two: the
continuation's repeated header is dropped, or, where the continuation has none, its first
row (rendered as a header so that the page's table is valid) becomes a row again. Likewise a
paragraph that ends a page with a hyphenated word ("cre-") and goes on at the top of the next
("ativity. And ...") is left as two paragraphs in the pages and made one in the document.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .elements import Element, ElementType
from .inline import _keeps_hyphen
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


_HYPHENS = ("-", "\u2010", "\u00ad")
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")


def ends_in_hyphen(markdown: str) -> bool:
    """Whether a page's Markdown ends in a hyphen: the cheap test before `word_break`."""
    return markdown.rstrip().endswith(_HYPHENS)


def word_break(before: Sequence[Element], after: Sequence[Element], words: Counter[str] | None) -> WordBreak:
    """Whether the paragraph that ends the page of `before` (its elements) breaks off in a
    hyphenated word that the paragraph starting the page of `after` finishes. The words of
    the document tell a compound's hyphen from the typesetter's, as at a line break."""
    last = next((e for e in reversed(before) if e.in_markdown), None)
    first = next((e for e in after if e.in_markdown), None)
    if last is None or first is None or last.type is not ElementType.PARAGRAPH:
        return WordBreak.NONE
    if first.type is not ElementType.PARAGRAPH:
        return WordBreak.NONE
    tail, head = last.markdown.rstrip(), first.markdown.lstrip()
    if not (tail.endswith(_HYPHENS) and len(tail) >= 2 and tail[-2].isalpha() and head[:1].islower()):
        return WordBreak.NONE
    if not tail.endswith("\u00ad") and _keeps_hyphen(tail, head, words):
        return WordBreak.COMPOUND
    return WordBreak.HYPHENATION


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
    out: list[str] = []
    breaks = word_breaks if word_breaks is not None else [WordBreak.NONE] * len(markdowns)
    for markdown, cont, brk in zip(markdowns, continuations, breaks, strict=True):
        if cont is not Continuation.NONE and out and markdown:
            joined = _join_tables(out[-1], markdown, cont)
            if joined is not None:
                out[-1] = joined
                continue
        if brk is not WordBreak.NONE and out and markdown:
            before = out[-1].rstrip()
            out[-1] = (before if brk is WordBreak.COMPOUND else before[:-1]) + markdown.lstrip()
            continue
        if markdown:
            out.append(markdown)
    return "\n\n".join(out)


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
