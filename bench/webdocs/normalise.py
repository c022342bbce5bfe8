"""The authored corpus's normalisation of a web source, on pandoc's JSON AST. Stdlib only.

What the page shows is what the reference says (``../shared/corpus/authored/README.md``):

- raw HTML is removed (Node's ``<!-- YAML ... -->`` and ``<!--introduced_in=...-->`` comments,
  ``<br>``, anchors), except an HTML ``<table>``, which pandoc's HTML reader turns into a table
  (Node writes its constant tables so: ``os.md``, ``fs.md``, ``crypto.md``);
- ``Div`` and ``Span`` are unwrapped, pictures dropped (web pages carry none), a definition
  list becomes its term as a bold paragraph followed by the definitions;
- every table becomes what a GFM pipe table can say: each cell flattened onto one line (its
  blocks joined by spaces, a code block as inline code), merged cells repeated in every row and
  column they span, the first row as the header row, a caption as a paragraph before the table.

``split`` cuts a long page into parts at its top-level sections, each part headed by the page's
title, so that a part prints on a bounded number of pages.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

Block = dict[str, Any]
Inline = dict[str, Any]

_NO_ATTR: list[Any] = ["", [], []]
_DEFAULT = {"t": "AlignDefault"}


def pandoc_json(text: str, reader: str) -> dict[str, Any]:
    """``text`` read by pandoc (``gfm``, ``html``, ...) as its JSON AST."""
    out = subprocess.run(["pandoc", "-f", reader, "-t", "json"], input=text, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def pandoc_write(doc: dict[str, Any], writer: list[str]) -> str:
    """The AST ``doc`` written by pandoc with the writer arguments ``writer``."""
    out = subprocess.run(
        ["pandoc", "-f", "json", *writer], input=json.dumps(doc), capture_output=True, text=True, check=True
    )
    return out.stdout


def _is_html(fmt: str) -> bool:
    return fmt.lower() in ("html", "html4", "html5")


def _inlines(inlines: list[Inline]) -> list[Inline]:
    out: list[Inline] = []
    for el in inlines:
        t, c = el["t"], el.get("c")
        if t == "RawInline":
            continue  # <br>, <a id=...>, comments
        if t == "Span":
            out += _inlines(c[1])
        elif t == "Image":
            continue
        elif t in ("Emph", "Strong", "Strikeout", "Superscript", "Subscript", "SmallCaps", "Underline"):
            out.append({"t": t, "c": _inlines(c)})
        elif t == "Quoted":
            out.append({"t": t, "c": [c[0], _inlines(c[1])]})
        elif t == "Link":
            out.append({"t": t, "c": [c[0], _inlines(c[1]), c[2]]})
        elif t == "Cite":
            out.append({"t": t, "c": [c[0], _inlines(c[1])]})
        elif t == "Note":
            out.append({"t": t, "c": blocks(c)})
        else:
            out.append(el)
    return out


def blocks(items: list[Block]) -> list[Block]:
    """``items`` normalised (see the module's docstring)."""
    out: list[Block] = []
    for el in items:
        t, c = el["t"], el.get("c")
        if t == "RawBlock":
            fmt, text = c
            if _is_html(fmt) and "<table" in text.lower():
                out += blocks(pandoc_json(text, "html")["blocks"])
            continue
        if t == "Div":
            out += blocks(c[1])
        elif t in ("Para", "Plain"):
            inl = _inlines(c)
            if inl:
                out.append({"t": t, "c": inl})
        elif t == "Header":
            out.append({"t": t, "c": [c[0], c[1], _inlines(c[2])]})
        elif t == "BlockQuote":
            out.append({"t": t, "c": blocks(c)})
        elif t == "BulletList":
            out.append({"t": t, "c": [blocks(item) for item in c]})
        elif t == "OrderedList":
            out.append({"t": t, "c": [c[0], [blocks(item) for item in c[1]]]})
        elif t == "DefinitionList":
            for term, definitions in c:
                out.append({"t": "Para", "c": [{"t": "Strong", "c": _inlines(term)}]})
                for d in definitions:
                    out += blocks(d)
        elif t == "LineBlock":
            out += [{"t": "Para", "c": _inlines(line)} for line in c if line]
        elif t == "Table":
            out += table(c)
        else:  # CodeBlock, HorizontalRule, Null
            out.append(el)
    return out


def _words(inlines: list[Inline]) -> list[Inline]:
    """``inlines`` on one line: breaks become spaces, leading and trailing spaces dropped."""
    flat = [{"t": "Space"} if el["t"] in ("SoftBreak", "LineBreak") else el for el in inlines]
    while flat and flat[0]["t"] == "Space":
        flat.pop(0)
    while flat and flat[-1]["t"] == "Space":
        flat.pop()
    return flat


def _block_inlines(items: list[Block]) -> list[Inline]:
    """The blocks of a table cell as one run of inlines, blocks separated by a space."""
    parts: list[list[Inline]] = []
    for el in items:
        t, c = el["t"], el.get("c")
        if t in ("Para", "Plain"):
            parts.append(c)
        elif t == "Header":
            parts.append(c[2])
        elif t == "CodeBlock":
            parts.append([{"t": "Code", "c": [_NO_ATTR, " ".join(c[1].split())]}])
        elif t == "BlockQuote":
            parts.append(_block_inlines(c))
        elif t == "BulletList":
            parts += [_block_inlines(item) for item in c]
        elif t == "OrderedList":
            parts += [_block_inlines(item) for item in c[1]]
    out: list[Inline] = []
    for p in parts:
        words = _words(p)
        if words:
            out += ([{"t": "Space"}] if out else []) + words
    return out


def _cell(inlines: list[Inline]) -> list[Any]:
    return [_NO_ATTR, _DEFAULT, 1, 1, [{"t": "Plain", "c": inlines}] if inlines else []]


def table(c: list[Any]) -> list[Block]:
    """A pandoc ``Table``'s content as a caption paragraph (if any) and a pipe-table-shaped
    table: one header row, body rows, every cell one line, spans repeated."""
    _attr, caption, colspecs, head, bodies, foot = c
    rows = list(head[1])
    for body in bodies:
        rows += body[2] + body[3]
    rows += foot[1]
    ncols = len(colspecs)
    grid: list[list[list[Inline] | None]] = [[None] * ncols for _ in rows]
    for r, (_row_attr, cells) in enumerate(rows):
        col = 0
        for _cell_attr, _align, rowspan, colspan, content in cells:
            while col < ncols and grid[r][col] is not None:
                col += 1
            flat = _block_inlines(blocks(content))
            for dr in range(max(1, rowspan)):
                for dc in range(max(1, colspan)):
                    if r + dr < len(rows) and col + dc < ncols:
                        grid[r + dr][col + dc] = flat
            col += max(1, colspan)
    lines = [[cell or [] for cell in row] for row in grid]
    if not lines:
        return []
    out: list[Block] = []
    caption_text = _block_inlines(blocks(caption[1]))
    if caption_text:
        out.append({"t": "Para", "c": caption_text})
    specs = [[spec[0], {"t": "ColWidthDefault"}] for spec in colspecs]
    new_head = [_NO_ATTR, [[_NO_ATTR, [_cell(x) for x in lines[0]]]]]
    new_body = [[_NO_ATTR, 0, [], [[_NO_ATTR, [_cell(x) for x in row]] for row in lines[1:]]]]
    out.append({"t": "Table", "c": [_NO_ATTR, [None, []], specs, new_head, new_body, [_NO_ATTR, []]]})
    return out


def plain_text(inlines: list[Inline]) -> str:
    """The text of ``inlines`` (for a title)."""
    out = []
    for el in inlines:
        t, c = el["t"], el.get("c")
        if t == "Str":
            out.append(c)
        elif t in ("Space", "SoftBreak", "LineBreak"):
            out.append(" ")
        elif t == "Code":
            out.append(c[1])
        elif t in ("Emph", "Strong", "Strikeout", "Superscript", "Subscript", "SmallCaps", "Underline"):
            out.append(plain_text(c))
        elif t in ("Link", "Quoted", "Cite"):
            out.append(plain_text(c[1]))
    return "".join(out).strip()


def _size(items: list[Block]) -> int:
    return len(json.dumps(items))


def _cut(items: list[Block], level: int) -> list[list[Block]]:
    """``items`` cut before each heading of ``level`` (the first piece may have none)."""
    pieces: list[list[Block]] = [[]]
    for el in items:
        if el["t"] == "Header" and el["c"][0] == level and pieces[-1]:
            pieces.append([])
        pieces[-1].append(el)
    return [p for p in pieces if p]


def split(items: list[Block], max_size: int, deepest: int = 3) -> list[list[Block]]:
    """``items`` (a page whose first block may be its ``#`` title) in parts of at most
    ``max_size`` (characters of the JSON AST, a proxy for printed length) where the page's
    sections allow: cut at ``##`` headings, a section still too long at ``###`` ones (down to
    ``deepest``), then consecutive pieces grouped while they fit. Every part after the first
    starts with the title again."""
    title = items[:1] if items and items[0]["t"] == "Header" and items[0]["c"][0] == 1 else []
    rest = items[len(title) :]
    if _size(items) <= max_size:
        return [items]

    def pieces(part: list[Block], level: int) -> list[list[Block]]:
        if _size(part) <= max_size or level > deepest:
            return [part]
        return [q for p in _cut(part, level) for q in pieces(p, level + 1)]

    parts: list[list[Block]] = []
    for p in pieces(rest, 2):
        if parts and _size(parts[-1]) + _size(p) <= max_size:
            parts[-1] += p
        else:
            parts.append(list(p))
    return [title + p for p in parts]
