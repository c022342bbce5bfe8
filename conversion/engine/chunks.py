"""Chunks for retrieval: the document's Markdown cut along its structure, each piece with the
headings above it and the pages and boxes it came from (for citations).

A chunk is a run of the document's Markdown (`doc_span`); its `markdown` is that run, except
that a chunk which starts inside a long table repeats the table's header first (and an HTML
table cut by a chunk is closed and reopened, so that each chunk is a valid table). Tokens are
cl100k_base's (`tokens`).

The rules, in order of precedence:

- a section (a heading, or a run of headings, with the text up to the next heading) starts a
  new chunk, unless the whole section, with its subsections, fits in what remains of the
  chunk before;
- a heading is never the last thing in a chunk: it goes on with the text it heads;
- a section larger than a chunk is cut between its blocks (paragraphs, list items, tables,
  code blocks); a block that does not fit in what remains starts the next chunk, and one
  larger than a chunk is cut: a paragraph or a list item between sentences, a sentence
  larger than a chunk between words; a table between rows, its header repeated where it
  fits in a chunk with the row; code between lines. Chinese and Japanese, written without
  spaces, end their sentences at the full-width stops (。！？) and are cut between
  characters where a sentence is larger than a chunk;
- elements joined across a page break (a table that runs on, a word hyphenated over the
  break: their document spans touch) are one block;
- `overlap_tokens` starts a chunk that continues a section with the last whole sentences
  of the chunk before (at most that many tokens of them);
- `token_count <= max_tokens`, except for a chunk holding one word (or one table row, or
  one line of code) larger than the budget: it is kept whole, in a chunk of its own.

Elements have no id field; a chunk names them as `p{page}.e{index}`, the page number and the
element's index in that page's `elements` (`p3.e5`: page 3, its sixth element).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .elements import Box, Element, ElementType, Span, rounded
from .tokens import count_tokens

if TYPE_CHECKING:
    from .convert import ConversionResult


@dataclass(frozen=True)
class ChunkOptions:
    # The most cl100k_base tokens a chunk holds (embedding models take 8,191; retrieval
    # pipelines cut at 256 to 1,024).
    max_tokens: int = 512
    # Tokens of whole sentences of the chunk before, repeated at the start of a chunk that
    # continues its section (0: none).
    overlap_tokens: int = 0
    # Where the estimated size of a chunk (the sum of its pieces' tokens) comes this close
    # to the budget, as a fraction of it, the chunk's text is counted exactly before a piece
    # is added: tokens counted piece by piece differ from the text's count at the joins.
    exact_from: float = 0.85


@dataclass(frozen=True)
class ChunkBox:
    page: int
    bbox: Box
    element: str  # "p3.e5"

    def as_dict(self) -> dict[str, Any]:
        return {"page": self.page, "bbox": rounded(self.bbox), "element": self.element}


@dataclass
class Chunk:
    id: str
    markdown: str
    heading_path: list[str]
    pages: list[int]
    boxes: list[ChunkBox]
    doc_span: Span
    token_count: int
    elements: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "markdown": self.markdown,
            "heading_path": list(self.heading_path),
            "pages": list(self.pages),
            "boxes": [b.as_dict() for b in self.boxes],
            "doc_span": list(self.doc_span),
            "token_count": self.token_count,
            "elements": list(self.elements),
        }


def element_id(page: int, index: int) -> str:
    return f"p{page}.e{index}"


# Internal model -----------------------------------------------------------------------------

_PROSE = frozenset({ElementType.PARAGRAPH, ElementType.LIST_ITEM, ElementType.CAPTION, ElementType.FOOTNOTE})


@dataclass
class _Ref:
    page: int
    index: int
    element: Element
    span: Span  # in the document


@dataclass
class _Block:
    """One or more shown elements whose document spans touch (joined across a break)."""

    type: ElementType
    start: int
    end: int
    refs: list[_Ref]
    level: int = 0  # headings
    title: str = ""


@dataclass
class _Piece:
    start: int
    end: int
    tokens: int  # of the piece's text, with one token for a line-break join before it
    section: int
    heading: bool = False
    prose: bool = False  # sentences may be taken from it for the overlap
    # Table rows: the header a chunk starting at this row repeats, and the text that closes
    # the table when a chunk ends inside it.
    head: str = ""
    tail: str = ""
    table: int = -1  # the block index of the table the row belongs to


@dataclass
class _Draft:
    start: int
    pieces: list[_Piece] = field(default_factory=list)
    tokens: int = 0
    head: str = ""


def chunk_result(
    result: ConversionResult,
    options: ChunkOptions | None = None,
    document: tuple[str, list[list[Span | None]]] | None = None,
) -> list[Chunk]:
    """The chunks of a conversion's document, in reading order; `document` is
    `result.document()` where the caller has it already."""
    markdown, doc_spans = document if document is not None else result.document()
    refs = [
        _Ref(page.page, i, element, span)
        for page, spans in zip(result.pages, doc_spans, strict=True)
        for i, (element, span) in enumerate(zip(page.elements, spans, strict=True))
        if element.in_markdown and span is not None and span[1] > span[0]
    ]
    return chunk_document(markdown, refs_to_blocks(refs), options or ChunkOptions())


def refs_to_blocks(refs: Sequence[_Ref]) -> list[_Block]:
    blocks: list[_Block] = []
    for ref in refs:
        if blocks and blocks[-1].end == ref.span[0]:
            blocks[-1].end = ref.span[1]
            blocks[-1].refs.append(ref)
            continue
        e = ref.element
        blocks.append(
            _Block(
                e.type,
                ref.span[0],
                ref.span[1],
                [ref],
                level=e.level or 1 if e.type is ElementType.HEADING else 0,
                title=" ".join(e.text.split()),
            )
        )
    return blocks


def chunk_document(markdown: str, blocks: Sequence[_Block], options: ChunkOptions) -> list[Chunk]:
    packer = _Packer(markdown, options)
    paths: list[list[str]] = []  # each section's heading path
    stack: list[tuple[int, str]] = []
    sections: list[list[int]] = []  # block indexes of each section
    for i, block in enumerate(blocks):
        heading = block.type is ElementType.HEADING
        opens = heading and any(blocks[j].type is not ElementType.HEADING for j in sections[-1]) if sections else True
        if opens:
            sections.append([])
            paths.append([])
        sections[-1].append(i)
        if heading:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.title))
            paths[-1] = [title for _, title in stack]
        elif not paths[-1]:
            paths[-1] = [title for _, title in stack]
    wholes = [packer.whole(k, [blocks[i] for i in members]) for k, members in enumerate(sections)]
    totals = [sum(p.tokens for p in whole) for whole in wholes]
    levels = [blocks[m[0]].level if blocks[m[0]].type is ElementType.HEADING else 0 for m in sections]
    for k, members in enumerate(sections):
        # A section joins the chunk before only when it fits there with its subsections.
        end = k + 1
        while levels[k] and end < len(sections) and not 0 < levels[end] <= levels[k]:
            end += 1
        packer.section([(blocks[i], i) for i in members], wholes[k], sum(totals[k:end]))
    drafts = packer.finish()
    starts = [b.start for b in blocks]
    return [_finish(markdown, d, blocks, starts, paths, n, options.max_tokens) for n, d in enumerate(drafts, start=1)]


def _finish(
    markdown: str,
    draft: _Draft,
    blocks: Sequence[_Block],
    starts: list[int],
    paths: list[list[str]],
    n: int,
    limit: int,
) -> Chunk:
    end = draft.pieces[-1].end
    tail = draft.pieces[-1].tail
    text = draft.head + markdown[draft.start : end] + tail
    tokens = count_tokens(text)
    if tokens > limit and draft.start < draft.pieces[0].start:
        # The overlap, counted piece by piece, took the chunk over its budget: it goes.
        draft.start = draft.pieces[0].start
        text = draft.head + markdown[draft.start : end] + tail
        tokens = count_tokens(text)
    first = max(0, bisect.bisect_right(starts, draft.start) - 1)
    last = bisect.bisect_left(starts, end)
    refs = [r for b in blocks[first:last] for r in b.refs if r.span[0] < end and draft.start < r.span[1]]
    # The path of the chunk's own first section (an overlap comes from the same section).
    return Chunk(
        id=f"c{n}",
        markdown=text,
        heading_path=list(paths[draft.pieces[0].section]),
        pages=sorted({r.page for r in refs}),
        boxes=[ChunkBox(r.page, r.element.bbox, element_id(r.page, r.index)) for r in refs],
        doc_span=(draft.start, end),
        token_count=tokens,
        elements=[element_id(r.page, r.index) for r in refs],
    )


# Cutting ------------------------------------------------------------------------------------

# The end of a sentence: its punctuation, what may close around it, and the space after. The
# full-width stops of Chinese and Japanese (。！？) end one with or without a space: those
# scripts put none between sentences.
_CLOSERS = "\"'\u201d\u2019)\\]*_\u300d\u300f\uff09"
_SENTENCE_END = re.compile(rf"[.!?\u2026\u061f\u06d4][{_CLOSERS}]*\s+|[\u3002\uff01\uff1f][{_CLOSERS}]*\s*")
# Words after which a full stop does not end the sentence.
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "fig", "figs", "no", "nos", "vol", "pp", "p", "ch", "sec", "eq", "eqs"}
    | {"dr", "mr", "mrs", "ms", "prof", "st", "al", "approx", "ca", "inc", "ltd", "co", "jr", "sr"}
)
# Han ideographs and kana: scripts written without spaces between words, where a chunk may be
# cut after any character (as UAX #29's word boundaries allow); what follows one up to the
# next of them or a space (punctuation, a Latin run) stays with it.
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD = re.compile(rf"[{_UNSPACED}][^\s{_UNSPACED}]*|[^\s{_UNSPACED}]+")


def sentence_spans(text: str) -> list[Span]:
    """Where the sentences of `text` stand in it, each with the space that follows it (so
    that they cover the text). A full stop after an abbreviation or a single letter, or
    before a lower-case letter, ends nothing."""
    out: list[Span] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        after = text[m.end() : m.end() + 1]
        if not after or after.islower():
            continue
        if text[m.start()] == ".":
            word = text[: m.start()].rsplit(None, 1)[-1] if text[: m.start()].strip() else ""
            word = word.lstrip("(\"'*_[").lower()
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
        out.append((start, m.end()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out


def _word_spans(text: str) -> list[Span]:
    """The words of `text`, each with the space after it."""
    spans = [m.span() for m in _WORD.finditer(text)]
    return [(s, spans[i + 1][0] if i + 1 < len(spans) else len(text)) for i, (s, _) in enumerate(spans)] or [
        (0, len(text))
    ]


_PIPE_DELIMITER = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+$")
_HTML_BODY = "<tbody>\n"
_HTML_OPEN = "<table>\n<tbody>\n"
_HTML_CLOSE = "\n</tbody>\n</table>"


def _table_rows(text: str) -> tuple[str, list[Span], str] | None:
    """A table's header (with its line break), its rows' spans and the text that closes it
    (HTML); None when the text is not a table this can cut."""
    if text.startswith("<table>") and _HTML_BODY in text and text.endswith(_HTML_CLOSE):
        body = text.index(_HTML_BODY) + len(_HTML_BODY)
        end = len(text) - len(_HTML_CLOSE)
        rows = _line_spans(text, body, end)
        return text[:body], rows, _HTML_CLOSE
    lines = text.split("\n")
    if len(lines) >= 3 and _PIPE_DELIMITER.match(lines[1]):
        body = len(lines[0]) + len(lines[1]) + 2
        return text[:body], _line_spans(text, body, len(text)), ""
    return None


def _line_spans(text: str, start: int, end: int) -> list[Span]:
    out: list[Span] = []
    at = start
    while at < end:
        nl = text.find("\n", at, end)
        stop = end if nl < 0 else nl
        out.append((at, stop))
        at = stop + 1
    return out


class _Packer:
    def __init__(self, markdown: str, options: ChunkOptions) -> None:
        self.md = markdown
        self.max = options.max_tokens
        self.overlap = options.overlap_tokens
        self.exact_from = options.exact_from * options.max_tokens
        self.done: list[_Draft] = []
        self.cur: _Draft | None = None

    # Pieces of a block ----------------------------------------------------------------------

    def _piece(self, start: int, end: int, section: int, **kw: Any) -> _Piece:
        joined = start > 0 and self.md[start - 1] == "\n"
        return _Piece(start, end, count_tokens(self.md[start:end]) + (1 if joined else 0), section, **kw)

    def whole(self, section: int, members: list[_Block]) -> list[_Piece]:
        """The blocks of a section, each as one piece."""
        return [
            self._piece(b.start, b.end, section, heading=b.type is ElementType.HEADING, prose=b.type in _PROSE)
            for b in members
        ]

    def section(self, members: list[tuple[_Block, int]], whole: list[_Piece], subtree: int) -> None:
        """Place a section; `subtree` is the tokens of it and its subsections."""
        total = sum(p.tokens for p in whole)
        if self.cur is not None and self.cur.tokens + subtree <= self.max and self._fits(whole, total):
            self._add(whole, total)
            return
        self._flush()
        if self._fits(whole, total):
            self._add(whole, total)
            return
        for (block, index), piece in zip(members, whole, strict=True):
            self._place_block(block, index, piece)

    def _place_block(self, block: _Block, index: int, piece: _Piece) -> None:
        if self._fits([piece], piece.tokens):
            self._add([piece], piece.tokens)
            return
        if piece.tokens <= self.max and self._has_body():
            # The block fits a chunk of its own: it starts the next one, whole.
            self._flush()
            if self._fits([piece], piece.tokens):
                self._add([piece], piece.tokens)
                return
        text = self.md[block.start : block.end]
        if block.type is ElementType.TABLE and (table := _table_rows(text)) is not None:
            head, rows, tail = table
            # The header goes with the first row, the HTML table's closing with the last.
            spans = [(0, rows[0][1]), *rows[1:]] if rows else [(0, len(text))]
            spans[-1] = (spans[-1][0], len(text))
            for n, (s, e) in enumerate(spans):
                last = n == len(spans) - 1
                row = self._piece(
                    block.start + s, block.start + e, piece.section, head=head, tail="" if last else tail, table=index
                )
                self._place_row(row)
            return
        if block.type is ElementType.CODE or block.type is ElementType.TABLE:
            for s, e in _line_spans(text, 0, len(text)):
                self._place_unit(self._piece(block.start + s, block.start + e, piece.section))
            return
        # Pieces end before the space that follows them: a chunk ends at a word.
        for s, e in sentence_spans(text):
            sentence = self._piece(
                block.start + s, block.start + s + len(text[s:e].rstrip()), piece.section, prose=True
            )
            # Whole, unless it is larger than a chunk, or than what a chunk holding only the
            # headings it goes under leaves.
            if sentence.tokens <= self.max and (self._has_body() or self._fits([sentence], sentence.tokens)):
                self._place_unit(sentence)
                continue
            for ws, we in _word_spans(text[s:e]):
                end = block.start + s + ws + len(text[s + ws : s + we].rstrip())
                self._place_unit(self._piece(block.start + s + ws, end, piece.section))

    def _place_row(self, row: _Piece) -> None:
        if self.cur is not None and self.cur.pieces and self.cur.pieces[-1].table == row.table:
            # Within the table: the chunk's text would end in the table.
            candidate = self.cur.tokens + row.tokens + count_tokens(row.tail)
            if self._fits_total([row], candidate):
                self.cur.pieces[-1].tail = ""
                self._add([row], row.tokens)
                return
            self._flush()
            self._start(head=self._head_for(row))
            self._add([row], row.tokens)
            return
        self._place_unit(row)

    def _head_for(self, row: _Piece) -> str:
        """The header a chunk that continues a table repeats before `row`: the table's own, when
        it fits in a chunk with the row; else only what opens the table (an HTML table's
        `<table><tbody>`; nothing for a pipe table), so that the budget holds."""
        if count_tokens(row.head + self.md[row.start : row.end] + row.tail) <= self.max:
            return row.head
        return _HTML_OPEN if row.head.startswith("<table>") else ""

    def _place_unit(self, piece: _Piece) -> None:
        if self._fits([piece], piece.tokens):
            self._add([piece], piece.tokens)
            return
        if self._has_body():
            self._flush()
        # An empty chunk, or one holding only headings: the piece goes in, over the budget
        # only if it alone is larger than it.
        self._add([piece], piece.tokens)

    # The chunk being filled -----------------------------------------------------------------

    def _has_body(self) -> bool:
        return self.cur is not None and any(not p.heading for p in self.cur.pieces)

    def _fits(self, pieces: list[_Piece], tokens: int) -> bool:
        if self.cur is None or not self.cur.pieces:
            head = self.cur.tokens if self.cur is not None else 0
            return self._fits_total(pieces, head + tokens, fresh=True)
        return self._fits_total(pieces, self.cur.tokens + tokens)

    def _fits_total(self, pieces: list[_Piece], total: int, fresh: bool = False) -> bool:
        if total <= self.exact_from:
            return True
        start = self.cur.start if self.cur is not None and self.cur.start >= 0 else pieces[0].start
        head = self.cur.head if self.cur is not None else ""
        text = head + self.md[start : pieces[-1].end] + pieces[-1].tail
        return count_tokens(text) <= self.max

    def _start(self, head: str = "") -> None:
        """A new chunk, opened with the overlap of the one before when it continues its
        section (never before a repeated table header)."""
        self.cur = _Draft(start=-1, head=head, tokens=count_tokens(head) if head else 0)

    def _add(self, pieces: list[_Piece], tokens: int) -> None:
        if self.cur is None:
            self._start()
        assert self.cur is not None
        if not self.cur.pieces and self.cur.start < 0:
            self.cur.start = pieces[0].start
            if not self.cur.head:
                self._overlap(pieces[0], min(self.overlap, self.max - tokens))
        self.cur.pieces.extend(pieces)
        self.cur.tokens += tokens

    def _overlap(self, first: _Piece, budget: int) -> None:
        """Open the chunk (empty, about to take `first`) with the last sentences of the one
        before, at most `budget` tokens of them, when both are in one section."""
        assert self.cur is not None
        if budget <= 0 or not self.done:
            return
        before = self.done[-1]
        if before.pieces[-1].section != first.section or first.heading:
            return
        start = first.start
        used = 0
        for piece in reversed(before.pieces):
            if not piece.prose or piece.section != first.section:
                break
            text = self.md[piece.start : piece.end]
            stop = False
            for s, _e in reversed(sentence_spans(text)):
                cost = count_tokens(self.md[piece.start + s : first.start])
                if cost > budget:
                    stop = True
                    break
                start, used = piece.start + s, cost
            if stop or start != piece.start:
                break
        if start < first.start:
            self.cur.start = start
            self.cur.tokens += used

    def _flush(self) -> None:
        if self.cur is None or not self.cur.pieces:
            return
        carried: list[_Piece] = []
        while self.cur.pieces and self.cur.pieces[-1].heading and self._has_body():
            carried.insert(0, self.cur.pieces.pop())
        if carried:
            self.cur.tokens -= sum(p.tokens for p in carried)
        self.done.append(self.cur)
        self.cur = None
        if carried:
            self._start()
            self._add(carried, sum(p.tokens for p in carried))

    def finish(self) -> list[_Draft]:
        if self.cur is not None and self.cur.pieces:
            self.done.append(self.cur)
        self.cur = None
        return self.done
