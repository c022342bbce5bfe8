"""Structure of a Markdown document, as the scorer sees it. Stdlib only.

The same parser reads the ground truth and every system's output, so no system is judged
by rules the others escape. It understands the Markdown a PDF converter emits: ATX and
setext headings, ``-``/``*``/``+`` and ``1.``/``1)`` list items (nesting from indentation),
GitHub pipe tables, HTML ``<table>`` blocks, fenced code, and inline emphasis, links,
images, code spans and HTML tags (which are stripped to their text). A bullet glyph typed
as text (``• item``) is not Markdown list syntax and is read as a paragraph.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class ListItem:
    text: str
    depth: int
    ordered: bool


@dataclass
class Parsed:
    headings: list[Heading] = field(default_factory=list)
    items: list[ListItem] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)  # plain text, in reading order

    @property
    def text(self) -> str:
        return "\n".join(self.blocks)


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HR = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ITEM = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_FENCE = re.compile(r"^[ \t]*(```+|~~~+)")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-{1,}:?[ \t]*(\|[ \t]*:?-{1,}:?[ \t]*)*\|?[ \t]*$")
_PAGE_MARK = re.compile(r"^[ \t]*<!--.*?-->[ \t]*$")


def inline_text(s: str) -> str:
    """Markdown inline syntax stripped to the text a reader sees."""
    s = re.sub(r"<br\s*/?>", " ", s, flags=re.I)
    s = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"<(https?://[^>]+)>", r"\1", s)
    s = re.sub(r"</?[A-Za-z][^>]*>", " ", s)
    s = s.replace("&nbsp;", " ").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    # Emphasis and code markers; an escaped marker keeps its character.
    s = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|~<>])", lambda m: "\x00" + m.group(1), s)
    s = re.sub(r"[*_`~]+", "", s)
    s = re.sub(r"\x00(.)", r"\1", s)
    return s.strip()


_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\u00ad": None,
        "\u200b": None,
        "\ufeff": None,
    }
)
_BULLET_GLYPHS = re.compile(r"(^|\n)[ \t]*[\u2022\u25e6\u25aa\u25cf\u2023\u2043\u00b7\u25a0\u2219][ \t]*")


def normalise(s: str) -> str:
    """Text for comparison: NFKC, typographic punctuation folded, bullet glyphs at line
    starts dropped (they are list markers, not content), whitespace collapsed."""
    s = unicodedata.normalize("NFKC", s).translate(_FOLD)
    s = _BULLET_GLYPHS.sub(r"\1", s)
    return re.sub(r"\s+", " ", s).strip()


def key(s: str) -> str:
    """Matching key for short strings (headings, items, cells): normalised, case-folded,
    without trailing punctuation."""
    return normalise(s).casefold().strip(" .:;,")


def _split_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [inline_text(c.replace("\\|", "|")) for c in cells]


class _HTMLTable(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            if not self.tables[-1]:
                self.tables[-1].append([])
            self.tables[-1][-1].append(inline_text("".join(self._cell)))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _indent(ws: str) -> int:
    return len(ws.expandtabs(4))


def parse(md: str) -> Parsed:
    out = Parsed()
    lines = md.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    para: list[str] = []
    list_stack: list[int] = []  # indents of the open list levels
    item_lines: list[str] | None = None
    item_meta: tuple[int, bool] = (0, False)
    item_column = 0  # where the open item's text starts
    blank_before = False
    i = 0

    def flush_para() -> None:
        if para:
            out.blocks.append(inline_text(" ".join(para)))
            para.clear()

    def flush_item() -> None:
        nonlocal item_lines
        if item_lines is not None:
            text = inline_text(" ".join(item_lines))
            out.items.append(ListItem(text=text, depth=item_meta[0], ordered=item_meta[1]))
            out.blocks.append(text)
            item_lines = None

    def close_list() -> None:
        flush_item()
        list_stack.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()

        if (
            item_lines is not None
            and blank_before
            and _indent(line[: len(line) - len(line.lstrip())]) >= item_column + 4
        ):
            # An indented code block inside the item (CommonMark: four columns past the
            # item's text, after a blank line): a code block, as a fence there is, not text
            # of the item.
            flush_item()
            code = []
            while i < len(lines) and (
                not lines[i].strip() or _indent(lines[i][: len(lines[i]) - len(lines[i].lstrip())]) >= item_column + 4
            ):
                code.append(lines[i].strip())
                i += 1
            out.blocks.append(" ".join(c for c in code if c))
            blank_before = True
            continue
        blank_before = not stripped

        if not stripped or _PAGE_MARK.match(line):
            flush_para()
            # A blank line ends an item's lazy continuation; the list itself goes on if
            # the next non-blank line is another item or indented content.
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            nxt = lines[j] if j < len(lines) else ""
            if item_lines is not None and not (_ITEM.match(nxt) or nxt.startswith((" ", "\t"))):
                close_list()
            i += 1
            continue

        fence = _FENCE.match(line)
        if fence:
            flush_para()
            flush_item()
            marker = fence.group(1)
            i += 1
            code: list[str] = []
            while i < len(lines) and not lines[i].strip().startswith(marker):
                code.append(lines[i].strip())
                i += 1
            out.blocks.append(" ".join(code))
            i += 1
            continue

        m = _ATX.match(line)
        if m:
            close_list()
            flush_para()
            text = inline_text(m.group(2) or "")
            if text:
                out.headings.append(Heading(level=len(m.group(1)), text=text))
                out.blocks.append(text)
            i += 1
            continue

        if para and _SETEXT.match(line) and item_lines is None:
            text = inline_text(" ".join(para))
            para.clear()
            out.headings.append(Heading(level=1 if stripped[0] == "=" else 2, text=text))
            out.blocks.append(text)
            i += 1
            continue

        if _HR.match(line):
            close_list()
            flush_para()
            i += 1
            continue

        if stripped.lower().startswith("<table"):
            close_list()
            flush_para()
            chunk = [line]
            while "</table>" not in lines[i].lower() and i + 1 < len(lines):
                i += 1
                chunk.append(lines[i])
            parser = _HTMLTable()
            parser.feed("\n".join(chunk))
            for table in parser.tables:
                out.tables.append(table)
                out.blocks.append(" ".join(" ".join(row) for row in table))
            i += 1
            continue

        is_table_start = (
            "|" in line and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]) is not None and "-" in lines[i + 1]
        )
        if is_table_start or (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1):
            close_list()
            flush_para()
            rows: list[list[str]] = []
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                if not (_TABLE_SEP.match(lines[i]) and "-" in lines[i]):
                    rows.append(_split_row(lines[i]))
                i += 1
            out.tables.append(rows)
            out.blocks.append(" ".join(" ".join(row) for row in rows))
            continue

        m = _ITEM.match(line)
        if m and not (item_lines is None and para and not m.group(3)):
            flush_para()
            flush_item()
            ind = _indent(m.group(1))
            while list_stack and ind < list_stack[-1]:
                list_stack.pop()
            if not list_stack or ind > list_stack[-1]:
                list_stack.append(ind)
            item_meta = (len(list_stack) - 1, m.group(2)[0].isdigit())
            item_lines = [m.group(3) or ""]
            item_column = (
                _indent(line[: len(line) - len(m.group(3) or "")]) if m.group(3) else ind + len(m.group(2)) + 1
            )
            i += 1
            continue

        if item_lines is not None:
            item_lines.append(stripped)  # lazy or indented continuation of the item
        else:
            para.append(stripped)
        i += 1

    close_list()
    flush_para()
    out.blocks = [b for b in out.blocks if b]
    return out
