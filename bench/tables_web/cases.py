"""Development documents for tables on web pages printed by Chromium (issue 24). Stdlib only.

Each document is a list of blocks (headings, paragraphs, code, lists, tables) written twice:
as HTML shaped like pandoc's (``<table>``, ``<thead>`` with ``<th>``, ``<tbody>``, a
``<colgroup>`` for the relative widths of a grid table, ``<caption>``, ``<p>`` and ``<ul>`` in
the cells of a grid table) and as the reference Markdown the authored corpus uses (GFM pipe
tables, each cell flattened to one line, the first row as the header row, a caption as a
paragraph before its table). The tables cover what pandoc writes from GFM pipe tables and
reStructuredText simple and grid tables; their text comes from a fixed seed.

The documents are printed in the corpus's three table styles (``STYLES``): pandoc's default
rules (above and below the header, at the bottom), every cell ruled, and no rules; and in its
two page layouts (``LAYOUTS``): one serif column, two sans serif columns.
"""

from __future__ import annotations

import html
import random
import re
from dataclasses import dataclass, field

# A cell of a GFM or simple table is one inline string (`code`, *em*, **strong**, [a](u));
# a cell of a grid table may be a list of blocks: ("p", text) or ("ul", [item, ...]).
Cell = str | list[tuple[str, object]]


@dataclass
class TableSpec:
    rows: list[list[Cell]]
    header: list[Cell] | None = None
    align: list[str] | None = None  # "left", "right", "center" or "" per column
    widths: list[float] | None = None  # relative widths (grid tables): a <colgroup>
    caption: str | None = None


@dataclass
class Doc:
    name: str
    blocks: list[tuple[str, object]] = field(default_factory=list)


WORDS = [
    "the",
    "value",
    "of",
    "a",
    "type",
    "is",
    "checked",
    "at",
    "compile",
    "time",
    "when",
    "the",
    "trait",
    "bound",
    "holds",
    "for",
    "every",
    "generic",
    "parameter",
    "and",
    "the",
    "borrow",
    "ends",
    "before",
    "the",
    "mutable",
    "reference",
    "is",
    "taken",
    "again",
    "so",
    "the",
    "compiler",
    "accepts",
    "the",
    "program",
    "without",
    "an",
    "explicit",
    "lifetime",
    "annotation",
    "module",
    "crate",
    "interpreter",
    "bytecode",
    "import",
    "path",
    "package",
    "version",
    "release",
    "deprecated",
    "removed",
    "added",
    "default",
    "behaviour",
    "warning",
    "error",
    "option",
    "flag",
    "argument",
    "keyword",
    "function",
    "method",
    "attribute",
    "object",
    "class",
    "instance",
    "encoding",
    "string",
    "buffer",
    "stream",
    "socket",
    "thread",
    "lock",
    "queue",
    "event",
    "loop",
]
IDENTS = (
    "Vec::new",
    "HashMap",
    "Option<T>",
    "__init__",
    "sys.path",
    "async fn",
    "#[derive]",
    "u32",
    "PyObject",
    "str.format",
    "None",
    "Box<dyn Error>",
    "from_utf8",
    "__slots__",
    "Cargo.toml",
    "typing.Any",
    "impl Trait",
    "i64",
    "os.fspath",
    "unsafe",
)


def sentence(rng: random.Random, lo: int, hi: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    out = []
    for w in words:
        r = rng.random()
        if r < 0.08:
            out.append(f"`{rng.choice(IDENTS)}`")
        elif r < 0.11:
            out.append(f"*{w}*")
        elif r < 0.13:
            out.append(f"[{w}](https://example.org/{w})")
        else:
            out.append(w)
    text = " ".join(out)
    return text[0].upper() + text[1:]


def short(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.25:
        return f"`{rng.choice(IDENTS)}`"
    if r < 0.45:
        return str(rng.choice([rng.randint(0, 99), rng.randint(100, 99999), round(rng.uniform(0, 100), 2)]))
    if r < 0.55:
        return f"{rng.randint(1, 3)}.{rng.randint(0, 13)}"
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def _inline_html(text: str) -> str:
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"\*([^*]+)\*", r"<em>\1</em>", out)
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', out)


def _blocks_html(blocks: list[tuple[str, object]]) -> str:
    parts = []
    for kind, value in blocks:
        if kind == "p":
            parts.append(f"<p>{_inline_html(str(value))}</p>")
        elif kind == "ul":
            items = "".join(f"<li>{_inline_html(str(i))}</li>" for i in value)  # type: ignore[attr-defined]
            parts.append(f"<ul>\n{items}\n</ul>")
        elif kind == "pre":
            parts.append(f"<pre><code>{html.escape(str(value))}</code></pre>")
    return "\n".join(parts)


def _cell_html(tag: str, cell: Cell, align: str) -> str:
    style = f' style="text-align: {align};"' if align else ""
    inner = _inline_html(cell) if isinstance(cell, str) else _blocks_html(cell)
    return f"<{tag}{style}>{inner}</{tag}>"


def table_html(t: TableSpec) -> str:
    n = len(t.rows[0])
    align = t.align or [""] * n
    out = ["<table>"]
    if t.caption:
        out.append(f"<caption>{_inline_html(t.caption)}</caption>")
    if t.widths:
        total = sum(t.widths)
        out.append("<colgroup>")
        out += [f'<col style="width: {round(100 * w / total)}%" />' for w in t.widths]
        out.append("</colgroup>")
    if t.header is not None:
        out.append('<thead>\n<tr class="header">')
        out += [_cell_html("th", c, a) for c, a in zip(t.header, align, strict=True)]
        out.append("</tr>\n</thead>")
    out.append("<tbody>")
    for i, row in enumerate(t.rows):
        out.append(f'<tr class="{"odd" if i % 2 == 0 else "even"}">')
        out += [_cell_html("td", c, a) for c, a in zip(row, align, strict=True)]
        out.append("</tr>")
    out.append("</tbody>\n</table>")
    return "\n".join(out)


def _flat(cell: Cell) -> str:
    if isinstance(cell, str):
        return cell
    texts: list[str] = []
    for kind, value in cell:
        if kind == "ul":
            texts += [str(i) for i in value]  # type: ignore[attr-defined]
        elif kind == "pre":
            texts.append(f"`{' '.join(str(value).split())}`")
        else:
            texts.append(str(value))
    return " ".join(texts)


def table_md(t: TableSpec) -> str:
    rows = [t.header, *t.rows] if t.header is not None else t.rows
    n = len(rows[0])
    marks = {"left": ":---", "right": "---:", "center": ":---:"}
    align = t.align or [""] * n
    lines = [
        "| " + " | ".join(_flat(c) for c in rows[0]) + " |",
        "|" + "|".join(marks.get(a, "---") for a in align) + "|",
    ]
    lines += ["| " + " | ".join(_flat(c) for c in row) + " |" for row in rows[1:]]
    out = "\n".join(lines)
    return f"{t.caption}\n\n{out}" if t.caption else out


STYLE_SLOT = "<style></style>"


def styled(page: str, css: str) -> str:
    """The committed page `page` with the CSS of one layout and table style put in its head."""
    return page.replace(STYLE_SLOT, f"<style>\n{css}\n</style>", 1)


def doc_html(doc: Doc) -> str:
    """The page, its head holding an empty `STYLE_SLOT` for `styled`."""
    body = []
    for kind, value in doc.blocks:
        if kind.startswith("h"):
            body.append(f"<{kind}>{_inline_html(str(value))}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{_inline_html(str(value))}</p>")
        elif kind == "code":
            body.append(f"<pre><code>{html.escape(str(value))}</code></pre>")
        elif kind in ("ul", "ol"):
            items = "\n".join(f"<li>{_inline_html(str(i))}</li>" for i in value)  # type: ignore[attr-defined]
            body.append(f"<{kind}>\n{items}\n</{kind}>")
        elif kind == "table":
            body.append(table_html(value))  # type: ignore[arg-type]
    return page(doc.name, "\n".join(body))


def page(title: str, body: str) -> str:
    """An HTML page around ``body``, its head holding an empty `STYLE_SLOT` for `styled`."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>{html.escape(title)}</title>\n{STYLE_SLOT}\n</head>\n<body>\n" + body + "\n</body>\n</html>\n"
    )


def doc_md(doc: Doc) -> str:
    out = []
    for kind, value in doc.blocks:
        if kind.startswith("h"):
            out.append("#" * int(kind[1]) + " " + str(value))
        elif kind == "p":
            out.append(str(value))
        elif kind == "code":
            out.append(f"```\n{value}\n```")
        elif kind == "ul":
            out.append("\n".join(f"- {i}" for i in value))  # type: ignore[attr-defined]
        elif kind == "ol":
            out.append("\n".join(f"{n}. {i}" for n, i in enumerate(value, 1)))  # type: ignore[attr-defined]
        elif kind == "table":
            out.append(table_md(value))  # type: ignore[arg-type]
    return "\n\n".join(out) + "\n"


# Page layouts and table styles, as the corpus prints its web families (fonts and sizes read
# from the tune fold's PDFs: DejaVu Serif 11 pt in one column, Liberation Sans 9.5 pt in two).
LAYOUTS = {
    "web": (
        "@page { size: A4; margin: 20mm 22mm; }\n"
        "html { font-family: 'DejaVu Serif', serif; font-size: 11pt; line-height: 1.45; color: #1a1a1a; }\n"
        "body { margin: 0; }\n"
        "h1 { font-size: 1.8em; } h2 { font-size: 1.5em; } h3 { font-size: 1.2em; }\n"
        "code { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.88em; }\n"
        "pre { background: #f4f4f4; padding: 0.6em; font-size: 0.78em; }\n"
    ),
    "web2col": (
        "@page { size: A4; margin: 20mm 17mm; }\n"
        "html { font-family: 'Liberation Sans', sans-serif; font-size: 9.5pt; line-height: 1.4; color: #1a1a1a; }\n"
        "body { margin: 0; column-count: 2; column-gap: 2em; }\n"
        "h1 { font-size: 1.6em; } h2 { font-size: 1.37em; } h3 { font-size: 1.15em; }\n"
        "code { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.88em; }\n"
        "pre { background: #f4f4f4; padding: 0.6em; white-space: pre-wrap; }\n"
    ),
}
STYLES = {
    # pandoc's default HTML template (2.x)
    "rules": (
        "table { margin: 1em 0; border-collapse: collapse; width: 100%; overflow-x: auto; display: block;"
        " font-variant-numeric: lining-nums tabular-nums; }\n"
        "table caption { margin-bottom: 0.75em; }\n"
        "tbody { margin-top: 0.5em; border-top: 1px solid #1a1a1a; border-bottom: 1px solid #1a1a1a; }\n"
        "th { border-top: 1px solid #1a1a1a; padding: 0.25em 0.5em 0.25em 0.5em; }\n"
        "td { padding: 0.125em 0.5em 0.25em 0.5em; }\n"
    ),
    # the corpus's own (the tune fold's tables: every cell ruled in grey)
    "grid": (
        "table { margin: 1em 0; border-collapse: collapse; }\n"
        "th, td { border: 1px solid #999; padding: 0.3em 0.4em; }\n"
    ),
    "bare": (
        "table { margin: 1em 0; border-collapse: collapse; }\nth, td { padding: 0.15em 0.6em; vertical-align: top; }\n"
    ),
}


def _prose(rng: random.Random, n: int) -> list[tuple[str, object]]:
    return [("p", sentence(rng, 25, 60) + ".") for _ in range(n)]


def _pipe_table(rng: random.Random, cols: int, rows: int, *, long_col: int | None = None) -> TableSpec:
    header = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2))).capitalize() for _ in range(cols)]
    body = [[sentence(rng, 6, 22) if c == long_col else short(rng) for c in range(cols)] for _ in range(rows)]
    align = [rng.choice(["", "", "left", "right", "center"]) for _ in range(cols)]
    return TableSpec(body, header, align)


def documents(seed: int = 24) -> list[Doc]:
    """The development documents (the same ones for a given seed)."""
    rng = random.Random(seed)
    docs: list[Doc] = []

    # 1. GFM pipe tables: short cells, alignments, a numeric column, inline code and links.
    d = Doc("pipe-short")
    d.blocks += [("h1", "Release table"), *_prose(rng, 1)]
    d.blocks.append(("table", _pipe_table(rng, 3, 5)))
    d.blocks += _prose(rng, 1)
    d.blocks.append(("table", _pipe_table(rng, 4, 7)))
    d.blocks += [("h2", "Numbers"), *_prose(rng, 1)]
    num = TableSpec(
        [[f"`{rng.choice(IDENTS)}`", *(str(rng.randint(1, 9999)) for _ in range(3))] for _ in range(6)],
        ["Name", "Before", "After", "Delta"],
        ["left", "right", "right", "right"],
    )
    d.blocks.append(("table", num))
    d.blocks += _prose(rng, 2)
    docs.append(d)

    # 2. Pipe tables whose cells wrap to several lines.
    d = Doc("pipe-wrapped")
    d.blocks += [("h1", "Options and their meaning"), *_prose(rng, 1)]
    d.blocks.append(("table", _pipe_table(rng, 3, 6, long_col=2)))
    d.blocks += _prose(rng, 1)
    t = TableSpec(
        [[f"`{rng.choice(IDENTS)}`", sentence(rng, 10, 30), sentence(rng, 4, 16)] for _ in range(5)],
        ["Option", "Description", "Default"],
    )
    d.blocks.append(("table", t))
    d.blocks += [("h2", "Details"), *_prose(rng, 2)]
    docs.append(d)

    # 3. reStructuredText simple tables: without a header, empty cells, a caption.
    d = Doc("rst-simple")
    d.blocks += [("h1", "Simple tables"), *_prose(rng, 1)]
    d.blocks.append(("table", TableSpec([[short(rng), short(rng), sentence(rng, 2, 8)] for _ in range(5)])))
    d.blocks += _prose(rng, 1)
    rows = [[short(rng), "" if rng.random() < 0.3 else short(rng), short(rng), ""] for _ in range(6)]
    for row in rows:
        row[3] = "" if rng.random() < 0.4 else short(rng)
    d.blocks.append(("table", TableSpec(rows, ["Input", "Output", "Kind", "Notes"], caption="Table 1: conversions")))
    d.blocks += [("ul", [sentence(rng, 5, 15) for _ in range(3)])]
    d.blocks.append(("table", _pipe_table(rng, 2, 5, long_col=1)))
    d.blocks += _prose(rng, 1)
    docs.append(d)

    # 4. reStructuredText grid tables: multi-paragraph cells, lists in cells, relative widths.
    d = Doc("rst-grid")
    d.blocks += [("h1", "Grid tables"), *_prose(rng, 1)]
    grid_rows: list[list[Cell]] = []
    for _ in range(4):
        first: Cell = [("p", f"`{rng.choice(IDENTS)}`")]
        second: Cell = [("p", sentence(rng, 8, 20) + ".")]
        if rng.random() < 0.6:
            second.append(("p", sentence(rng, 6, 14) + "."))
        third: Cell = [("ul", [sentence(rng, 2, 6) for _ in range(rng.randint(2, 3))])]
        grid_rows.append([first, second, third])
    d.blocks.append(
        ("table", TableSpec(grid_rows, [[("p", "Name")], [("p", "Meaning")], [("p", "Uses")]], widths=[20, 45, 35]))
    )
    d.blocks += _prose(rng, 1)
    d.blocks.append(("code", "def f(x):\n    return x + 1\n"))
    grid2 = [[[("p", sentence(rng, 1, 3))], [("p", sentence(rng, 10, 25) + ".")]] for _ in range(5)]
    d.blocks.append(("table", TableSpec(grid2, [[("p", "Term")], [("p", "Definition")]], widths=[30, 70])))
    d.blocks += _prose(rng, 1)
    docs.append(d)

    # 5. Wide tables and tables next to code blocks and lists.
    d = Doc("wide-mixed")
    d.blocks += [("h1", "Comparison"), *_prose(rng, 1)]
    wide = TableSpec(
        [
            [rng.choice(IDENTS), *(rng.choice(["yes", "no", "n/a", str(rng.randint(1, 99))]) for _ in range(7))]
            for _ in range(6)
        ],
        ["Feature", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "Notes"],
    )
    d.blocks.append(("table", wide))
    d.blocks.append(("code", "fn main() {\n    let v: Vec<u32> = Vec::new();\n}\n"))
    d.blocks.append(("table", _pipe_table(rng, 3, 4)))
    d.blocks.append(("ol", [sentence(rng, 5, 15) for _ in range(3)]))
    d.blocks.append(("table", _pipe_table(rng, 5, 5)))
    d.blocks += _prose(rng, 1)
    docs.append(d)

    # 6. Grid tables with code blocks, long lists and several paragraphs in cells; no header.
    d = Doc("grid-hard")
    d.blocks += [("h1", "Hard cells"), *_prose(rng, 1)]
    hard: list[list[Cell]] = []
    for i in range(4):
        first: Cell = [("p", f"`{rng.choice(IDENTS)}`")]
        if i % 2 == 0:
            second: Cell = [("p", sentence(rng, 5, 12) + "."), ("pre", "x = f(1, 2)\nprint(x)")]
        else:
            second = [("p", sentence(rng, 8, 20) + "."), ("p", sentence(rng, 8, 20) + ".")]
        third: Cell = [("ul", [sentence(rng, 6, 14) for _ in range(2)])]
        hard.append([first, second, third])
    d.blocks.append(
        ("table", TableSpec(hard, [[("p", "Key")], [("p", "Value")], [("p", "Notes")]], widths=[20, 50, 30]))
    )
    d.blocks += _prose(rng, 1)
    headless = [
        [[("p", sentence(rng, 1, 4))], [("p", sentence(rng, 6, 18) + ".")], [("p", short(rng))]] for _ in range(5)
    ]
    d.blocks.append(("table", TableSpec(headless, widths=[25, 55, 20])))
    d.blocks += _prose(rng, 1)
    d.blocks.append(("table", TableSpec([[short(rng)] for _ in range(4)], ["Single column"])))
    d.blocks += _prose(rng, 1)
    docs.append(d)

    # 7. A wide table of longer cells: wraps everywhere, wider than a column of two.
    d = Doc("wide-long")
    d.blocks += [("h1", "Wide"), *_prose(rng, 1)]
    d.blocks.append(
        (
            "table",
            TableSpec(
                [[sentence(rng, 2, 6) for _ in range(6)] for _ in range(5)],
                [" ".join(rng.choice(WORDS) for _ in range(2)).capitalize() for _ in range(6)],
            ),
        )
    )
    d.blocks += _prose(rng, 2)
    docs.append(d)

    # 8. A long table crossing a page break.
    d = Doc("long")
    d.blocks += [("h1", "Long table"), *_prose(rng, 6)]
    d.blocks.append(("table", _pipe_table(rng, 3, 40, long_col=2)))
    d.blocks += _prose(rng, 2)
    docs.append(d)
    return docs
