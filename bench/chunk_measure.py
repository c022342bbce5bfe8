"""The child of ``python -m bench chunks``: runs in the service's venv (it imports the engine).

Reads the documents as JSON on stdin (``[{"id", "pdf", "reference", "budgets": [...]}]``) and
writes one JSON line per document: the conversion's CPU time, and for each budget the chunks'
CPU time and their measures against the document's structure and its reference Markdown.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from conversion.engine import convert
from conversion.engine.chunks import ChunkOptions, _Block, _Ref, chunk_document, refs_to_blocks
from conversion.engine.elements import ElementType
from conversion.engine.tokens import count_tokens, encoding

_PROSE = {ElementType.PARAGRAPH, ElementType.LIST_ITEM, ElementType.CAPTION, ElementType.FOOTNOTE}
# The end of a sentence, for the measure (simpler than the chunker's own rule on purpose).
_SENTENCE_END = re.compile(r"[.!?\u2026:;\u3002\uff01\uff1f][\"'\u201d\u2019)\]*_`]*$")
_ANY_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]*_`]*\s|[\u3002\uff01\uff1f][\"'\u201d\u2019)\]*_`]*")
_WORDS = re.compile(r"\w+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# Words of a chunk's first text looked for in the reference.
PROBE_WORDS = 8


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORDS.findall(text)]


class Reference:
    """The reference Markdown as a stream of words, with the heading path at each word."""

    def __init__(self, text: str) -> None:
        self.words: list[str] = []
        self.paths: list[tuple[int, tuple[str, ...]]] = []  # (first word, path from there)
        stack: list[tuple[int, str]] = []
        fence = False
        for line in text.split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                fence = not fence
            m = None if fence else _HEADING.match(line)
            if m:
                level = len(m.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, " ".join(words(m.group(2)))))
                self.paths.append((len(self.words), tuple(t for _, t in stack)))
            self.words += words(line)
        self.joined = " ".join(self.words)
        # Where each word starts in `joined`.
        self.offsets: list[int] = []
        at = 0
        for w in self.words:
            self.offsets.append(at)
            at += len(w) + 1

    def locate(self, probe: list[str], after: int) -> int | None:
        """The index of the word where `probe` occurs, the first from `after` on (or the first)."""
        needle = " ".join(probe)
        if not needle:
            return None
        start = self.offsets[after] if after < len(self.offsets) else len(self.joined)
        for origin in (start, 0):
            at = self.joined.find(needle, origin)
            while at >= 0 and at > 0 and self.joined[at - 1] != " ":
                at = self.joined.find(needle, at + 1)
            if at >= 0:
                return bisect.bisect_left(self.offsets, at)
        return None

    def path_at(self, word: int) -> tuple[str, ...]:
        i = bisect.bisect_right([w for w, _ in self.paths], word) - 1
        return self.paths[i][1] if i >= 0 else ()


def measure(markdown: str, blocks: list[_Block], budget: int, reference: Reference) -> dict[str, Any]:
    t0 = time.process_time()
    chunks = chunk_document(markdown, blocks, ChunkOptions(max_tokens=budget))
    seconds = time.process_time() - t0
    starts = [b.start for b in blocks]
    headings = [b for b in blocks if b.type is ElementType.HEADING]
    top = min((b.level for b in headings), default=0)
    tops = [b.start for b in headings if b.level == top]
    out: dict[str, Any] = {
        "seconds": seconds,
        "chunks": len(chunks),
        "within_budget": sum(c.token_count <= budget for c in chunks),
        "oversize_single": 0,
        "table_cuts": 0,
        "table_rows_cut": 0,
        "prose_cuts": 0,
        "sentences_cut": 0,
        "sentences_cut_avoidable": 0,
        "top_crossings": 0,
        "top_crossings_bad": 0,
        "located": 0,
        "path_match": 0,
        "heading_last": 0,
        "tokens": [c.token_count for c in chunks],
    }
    for c in chunks:
        if c.token_count > budget and len(c.markdown.split()) <= 1 + c.markdown.count("|"):
            out["oversize_single"] += 1
        if c.markdown.rstrip().rsplit("\n", 1)[-1].startswith("#"):
            out["heading_last"] += 1
    # Cuts: where one chunk ends inside a block.
    for c in chunks[:-1]:
        end = c.doc_span[1]
        i = bisect.bisect_right(starts, end - 1) - 1
        if i < 0 or not blocks[i].start < end < blocks[i].end:
            continue
        block = blocks[i]
        if block.type is ElementType.TABLE:
            out["table_cuts"] += 1
            if markdown[end] != "\n":
                out["table_rows_cut"] += 1
        elif block.type in _PROSE:
            out["prose_cuts"] += 1
            before = markdown[block.start : end].rstrip()
            if not _SENTENCE_END.search(before):
                out["sentences_cut"] += 1
                # The sentence around the cut, by the simple rule: avoidable if it fits.
                text = markdown[block.start : block.end]
                cut = end - block.start
                ends = [m.end() for m in _ANY_SENTENCE_END.finditer(text)]
                s = max([e for e in ends if e <= cut], default=0)
                e = min([e for e in ends if e > cut], default=len(text))
                if count_tokens(text[s:e]) <= budget:
                    out["sentences_cut_avoidable"] += 1
    # Top-level sections: a chunk holding a top-level heading after its start holds the whole
    # section that heading opens, else it crosses the boundary without need.
    for c in chunks:
        s, e = c.doc_span
        for h in tops:
            if s < h < e:
                out["top_crossings"] += 1
                nxt = tops[bisect.bisect_right(tops, h)] if bisect.bisect_right(tops, h) < len(tops) else len(markdown)
                if e < nxt and markdown[e:nxt].strip():
                    out["top_crossings_bad"] += 1
    # Heading paths against the reference's.
    at = 0
    for c in chunks:
        s, e = c.doc_span
        i = max(0, bisect.bisect_right(starts, s) - 1)
        text = ""
        for b in blocks[i:]:
            if b.start >= e:
                break
            if b.type is not ElementType.HEADING:
                text = markdown[max(s, b.start) : min(e, b.end)]
                break
        probe = words(text)[:PROBE_WORDS]
        if len(probe) < 3:
            continue
        found = reference.locate(probe, at)
        if found is None:
            continue
        at = found
        out["located"] += 1
        engine_path = tuple(" ".join(words(t)) for t in c.heading_path)
        if engine_path == reference.path_at(found):
            out["path_match"] += 1
    return out


def main() -> int:
    docs = json.load(sys.stdin)
    t0 = time.process_time()
    encoding()
    print(json.dumps({"id": "", "tokenizer_load_seconds": time.process_time() - t0}), flush=True)
    for doc in docs:
        t0 = time.process_time()
        try:
            result = convert(doc["pdf"])
        except Exception as exc:  # a document the engine refuses is reported, not measured
            print(json.dumps({"id": doc["id"], "error": type(exc).__name__}), flush=True)
            continue
        convert_seconds = time.process_time() - t0
        t0 = time.process_time()
        markdown, doc_spans = result.document()
        refs = [
            _Ref(page.page, i, element, span)
            for page, spans in zip(result.pages, doc_spans, strict=True)
            for i, (element, span) in enumerate(zip(page.elements, spans, strict=True))
            if element.in_markdown and span is not None and span[1] > span[0]
        ]
        blocks = refs_to_blocks(refs)
        prepare_seconds = time.process_time() - t0
        reference = Reference(Path(doc["reference"]).read_text())
        row = {
            "id": doc["id"],
            "pages": len(result.pages),
            "convert_seconds": convert_seconds,
            "prepare_seconds": prepare_seconds,
            "budgets": {str(b): measure(markdown, blocks, b, reference) for b in doc["budgets"]},
        }
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
