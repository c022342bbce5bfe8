"""The webdocs set's normalisation (bench/webdocs/normalise.py): what the page shows is what the
reference says. The tests that run pandoc skip where it is absent; the one on Node's own pages
skips where Debian's nodejs documentation (/usr/share/doc/nodejs) is absent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.webdocs.check import verdict
from bench.webdocs.normalise import blocks, pandoc_json, pandoc_write, split

needs_pandoc = pytest.mark.skipif(shutil.which("pandoc") is None, reason="pandoc is not installed")
NODE_DOCS = Path("/usr/share/doc/nodejs/api")
needs_node_docs = pytest.mark.skipif(
    not (NODE_DOCS / "os.md").exists(), reason=f"Debian's nodejs documentation ({NODE_DOCS}) is absent"
)


def _reference(source: str) -> str:
    ast = pandoc_json(source, "gfm")
    return pandoc_write({**ast, "blocks": blocks(ast["blocks"])}, ["-t", "gfm", "--wrap=none"])


@needs_pandoc
def test_comments_and_raw_html_go_and_an_html_table_becomes_a_pipe_table() -> None:
    source = (
        "# Title\n\n<!-- YAML\nadded: v0.1.0\n-->\n\nText with <br> a break.\n\n"
        "<table>\n  <tr><th>Constant</th><th>Description</th></tr>\n"
        "  <tr><td><code>SIGHUP</code></td><td>Sent when a terminal\n  closes.</td></tr>\n</table>\n"
    )
    ref = _reference(source)
    for raw in ("<!--", "YAML", "<br", "<table"):
        assert raw not in ref
    rows = [line for line in ref.splitlines() if line.startswith("|")]
    assert [c.strip() for c in rows[0].strip("|").split("|")] == ["Constant", "Description"]
    assert [c.strip() for c in rows[2].strip("|").split("|")] == ["`SIGHUP`", "Sent when a terminal closes."]


@needs_pandoc
def test_a_cell_of_several_blocks_is_one_line_and_a_span_is_repeated() -> None:
    source = (
        '<table><tr><td rowspan="2">A</td><td><p>one</p><p>two</p></td></tr>'
        "<tr><td><ul><li>x</li><li>y</li></ul></td></tr></table>\n"
    )
    ref = _reference(source)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in ref.splitlines() if line.startswith("|")]
    assert rows[0] == ["A", "one two"]  # the first row is the header row
    assert rows[2] == ["A", "x y"]


def test_a_long_page_is_cut_at_its_sections_each_part_titled() -> None:
    def header(level: int, text: str) -> dict[str, object]:
        return {"t": "Header", "c": [level, ["", [], []], [{"t": "Str", "c": text}]]}

    para = {"t": "Para", "c": [{"t": "Str", "c": "x" * 400}]}
    page = [header(1, "T"), para, header(2, "A"), para, para, header(2, "B"), para, header(3, "B1"), para, para]
    parts = split(page, max_size=1400)
    assert len(parts) > 1
    assert all(p[0] == page[0] for p in parts)
    assert [b for p in parts for b in p[1:]] == page[1:]  # nothing lost, nothing repeated but the title
    assert split(page, max_size=10**6) == [page]


def test_the_word_set_check() -> None:
    ref = "# Title\n\nSome words here, and a [link](https://example.org/hidden) too.\n" * 3
    assert verdict(2, ref, "Title Some words here and link too Page of")[0] is False  # page words not in ref
    kept, reason, in_pdf, in_ref = verdict(2, ref, "Title\nSome words here, and a link too.", frozenset())
    assert kept, reason
    assert in_pdf == in_ref == 1.0
    assert verdict(2, ref, "Title Some words here and link too Page of", frozenset({"page", "of"}))[0]
    assert verdict(31, ref, "Title Some words here and link too")[1] == "31 pages"


@needs_pandoc
@needs_node_docs
def test_nodes_os_page_keeps_its_constant_tables() -> None:
    ref = _reference((NODE_DOCS / "os.md").read_text())
    assert "<!--" not in ref
    assert sum(1 for line in ref.splitlines() if line.startswith("|--") or line.startswith("| --")) >= 5
    assert "| `SIGHUP`" in ref
