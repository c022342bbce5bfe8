"""Development documents for headings, paragraphs and columns in page styles the corpus does
not print (issue 24). Stdlib only.

The web families of the authored corpus print every document in three styles, and the engine
learned their headings: a size step per level, bold, one font. Documents printed otherwise
set headings as documentation sites, books and reports do: in small capitals, in letter-spaced
capitals at the body's size, one size for two levels told apart by weight or italics, white on
a coloured band, numbered in their text; paragraphs parted by a first-line indent and no space;
three columns with a rule between them; a running header and page numbers. The documents here
are articles of a fixed seed (``documents``): a title, sections two and three levels deep, a
fourth level under some, paragraphs long and short (a one-line paragraph between headings), a
paragraph led by a bold term, bullet and numbered lists, code, a table. Each is written as
HTML and as its reference Markdown (`bench.tables_web.cases`'s blocks), and printed in every
style of ``STYLES``.
"""

from __future__ import annotations

import random

from bench.tables_web.cases import WORDS, Doc, TableSpec, sentence, short

CODE_LINES = (
    "client = Client(token)",
    "job = client.convert(path, pages=[1, 2])",
    "for page in job.pages:",
    "    print(page.markdown)",
    "retry = Retry(total=3, backoff=0.5)",
    "ledger.hold(org, credits=4)",
)


def title(rng: random.Random, lo: int = 2, hi: int = 5) -> str:
    """A heading's words: capitalised as a title, no code, no stop."""
    words = [w for w in (rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))]
    return " ".join(w.capitalize() if i == 0 or len(w) > 3 else w for i, w in enumerate(words))


# Long words with their hyphenation points (soft hyphens, U+00AD): a browser breaks such a
# word at one of them where the line is full and prints a hyphen there, as a typesetter
# hyphenates. The reference has the word whole.
LONG_WORDS = (
    "im\u00adple\u00admen\u00adta\u00adtion",
    "con\u00adfig\u00adu\u00adra\u00adtion",
    "se\u00adri\u00adal\u00adi\u00adza\u00adtion",
    "au\u00adthen\u00adti\u00adca\u00adtion",
    "doc\u00adu\u00admen\u00adta\u00adtion",
    "in\u00adter\u00adop\u00ader\u00adabil\u00adi\u00adty",
    "re\u00adspon\u00adsi\u00adbil\u00adi\u00adties",
    "ac\u00adknowl\u00adedg\u00adment",
)


def paragraph(rng: random.Random, lo: int = 2, hi: int = 4) -> str:
    sentences = []
    for _ in range(rng.randint(lo, hi)):
        words = (sentence(rng, 8, 20) + ".").split(" ")
        for _ in range(rng.randint(0, 2)):
            words.insert(rng.randint(1, len(words) - 1), rng.choice(LONG_WORDS))
        sentences.append(" ".join(words))
    return " ".join(sentences)


def _blocks(rng: random.Random, depth: int) -> list[tuple[str, object]]:
    """The body of a section: paragraphs, and now and then a list, code or a table."""
    out: list[tuple[str, object]] = [("p", paragraph(rng))]
    r = rng.random()
    if r < 0.2:
        out.append(("ul", [sentence(rng, 3, 14) for _ in range(rng.randint(3, 5))]))
    elif r < 0.35:
        out.append(("ol", [sentence(rng, 6, 20) for _ in range(rng.randint(3, 4))]))
    elif r < 0.45:
        out.append(("code", "\n".join(rng.sample(CODE_LINES, rng.randint(2, 4)))))
    elif r < 0.52 and depth <= 2:
        header = [title(rng, 1, 2) for _ in range(3)]
        out.append(("table", TableSpec([[short(rng) for _ in range(3)] for _ in range(4)], header)))
    if rng.random() < 0.25:
        # A paragraph of one short line: as wide as a heading, in the body's style.
        out.append(("p", sentence(rng, 5, 9) + "."))
    if rng.random() < 0.2:
        out.append(("p", f"**{title(rng, 1, 2)}.** " + paragraph(rng, 1, 2)))
    if rng.random() < 0.6:
        out.append(("p", paragraph(rng, 1, 3)))
    return out


def article(rng: random.Random, name: str, *, numbered: bool, sections: int) -> Doc:
    """A title, an introduction, and `sections` sections with subsections (h3, some h4)."""
    doc = Doc(name)
    doc.blocks += [("h1", title(rng, 3, 6)), ("p", paragraph(rng, 2, 3))]
    for s in range(1, sections + 1):
        label = f"{s} " if numbered else ""
        doc.blocks.append(("h2", label + title(rng)))
        doc.blocks += _blocks(rng, 2)
        for t in range(1, rng.randint(1, 3) + 1):
            label3 = f"{s}.{t} " if numbered else ""
            doc.blocks.append(("h3", label3 + title(rng)))
            doc.blocks += _blocks(rng, 3)
            if rng.random() < 0.3:
                for u in range(1, rng.randint(1, 2) + 1):
                    label4 = f"{s}.{t}.{u} " if numbered else ""
                    doc.blocks.append(("h4", label4 + title(rng, 1, 4)))
                    doc.blocks += _blocks(rng, 4)
    return doc


def documents(seed: int = 24) -> list[Doc]:
    """The development documents (the same ones for a given seed)."""
    rng = random.Random(seed)
    return [
        article(rng, f"{'numbered' if i % 2 else 'article'}-{i}", numbered=bool(i % 2), sections=rng.randint(3, 5))
        for i in range(1, 7)
    ]


_BASE = (
    "@page { size: A4; margin: 20mm 20mm; }\n"
    "body { margin: 0; }\n"
    "code { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.86em; }\n"
    "pre { background: #f4f4f4; padding: 0.6em; font-size: 0.8em; }\n"
    "table { border-collapse: collapse; margin: 0.8em 0; } th, td { border: 1px solid #999; padding: 0.2em 0.5em; }\n"
)

# Page styles unlike the corpus's (each font and size set here, none read from a corpus file).
STYLES = {
    # A humanities paper: small capitals at modest sizes, not bold; italic third level.
    "smallcaps": _BASE
    + "html { font-family: 'Liberation Serif', serif; font-size: 11.5pt; line-height: 1.4; text-align: justify; }\n"
    "h1 { font-size: 1.6em; font-variant: small-caps; font-weight: normal; text-align: center; }\n"
    "h2 { font-size: 1.25em; font-variant: small-caps; font-weight: normal; letter-spacing: 0.05em; }\n"
    "h3 { font-size: 1.05em; font-style: italic; font-weight: normal; }\n"
    "h4 { font-size: 1em; font-weight: bold; }\n",
    # A handbook: second level in letter-spaced capitals at the body's size, in a colour.
    "caps": _BASE
    + "html { font-family: 'DejaVu Sans', sans-serif; font-size: 9.5pt; line-height: 1.5; color: #222; }\n"
    "h1 { font-size: 1.6em; }\n"
    "h2 { font-size: 1em; text-transform: uppercase; letter-spacing: 0.15em; color: #0a6640; margin-top: 1.6em; }\n"
    "h3 { font-size: 1em; font-weight: bold; }\n"
    "h4 { font-size: 1em; font-weight: normal; font-style: italic; }\n",
    # Sizes close together: a step of an eighth of the body's size, the last two told by style.
    "flat": _BASE
    + "html { font-family: 'Liberation Sans', sans-serif; font-size: 10.5pt; line-height: 1.45; text-align: justify; }\n"
    "h1 { font-size: 1.3em; } h2 { font-size: 1.15em; } h3 { font-size: 1.03em; }\n"
    "h4 { font-size: 1em; font-style: italic; }\n",
    # A book: paragraphs parted by a first-line indent only, a running header and page numbers.
    "book": _BASE.replace("@page { size: A4; margin: 20mm 20mm; }", "") + "@page { size: A4; margin: 24mm 26mm;"
    " @top-center { content: 'Notes on the Service'; font: italic 9pt 'Liberation Serif'; }"
    " @bottom-center { content: counter(page); font: 9pt 'Liberation Serif'; } }\n"
    "html { font-family: 'Liberation Serif', serif; font-size: 11pt; line-height: 1.35; text-align: justify; }\n"
    "p { margin: 0; text-indent: 1.5em; } h1 + p, h2 + p, h3 + p, h4 + p { text-indent: 0; }\n"
    "h1 { font-size: 1.7em; text-align: center; font-weight: normal; }\n"
    "h2 { font-size: 1.25em; text-align: center; margin: 1.2em 0 0.6em; }\n"
    "h3 { font-size: 1.05em; font-style: italic; margin: 1em 0 0.4em; }\n"
    "h4 { font-size: 1em; font-weight: normal; font-style: italic; margin: 0.8em 0 0.3em; }\n",
    # Three narrow columns with rules between them; the title across all three.
    "threecol": _BASE + "html { font-family: 'DejaVu Sans', sans-serif; font-size: 8.5pt; line-height: 1.35; }\n"
    "body { column-count: 3; column-gap: 1.6em; column-rule: 1px solid #bbb; }\n"
    "h1 { column-span: all; font-size: 2em; } h2 { font-size: 1.35em; } h3 { font-size: 1.12em; }\n"
    "h4 { font-size: 1em; }\n"
    "pre { white-space: pre-wrap; }\n",
    # Two justified columns of a serif: lines filled by stretching their spaces, long words
    # hyphenated at the line's end.
    "justified": _BASE
    + "html { font-family: 'Liberation Serif', serif; font-size: 10pt; line-height: 1.3; text-align: justify; }\n"
    "body { column-count: 2; column-gap: 1.8em; }\n"
    "h1 { column-span: all; font-size: 1.8em; text-align: center; } h2 { font-size: 1.3em; }\n"
    "h3 { font-size: 1.1em; } h4 { font-size: 1em; font-style: italic; }\n"
    "pre { white-space: pre-wrap; }\n",
    # A report as a word processor sets it: a serif at 12 pt, bold headings a size apart and
    # the last two at the body's size (bold italic, italic), paragraphs justified and indented,
    # a running header and "Page N" in the margins.
    "report": _BASE.replace("@page { size: A4; margin: 20mm 20mm; }", "") + "@page { size: A4; margin: 25mm 25mm;"
    " @top-right { content: 'Service Notes'; font: 9pt 'Liberation Serif'; }"
    " @bottom-center { content: 'Page ' counter(page); font: 9pt 'Liberation Serif'; } }\n"
    "html { font-family: 'Liberation Serif', serif; font-size: 12pt; line-height: 1.25; text-align: justify; }\n"
    "p { margin: 0 0 0.5em; text-indent: 1.2em; }\n"
    "h1 { font-size: 1.5em; } h2 { font-size: 1.25em; } h3 { font-size: 1em; font-style: italic; }\n"
    "h4 { font-size: 1em; font-weight: normal; font-style: italic; }\n",
    # Side heads: the section headings in a margin column to the left of their text.
    "sidehead": _BASE + "html { font-family: 'DejaVu Sans', sans-serif; font-size: 9.5pt; line-height: 1.45; }\n"
    "body { padding-left: 30%; }\n"
    "h1 { margin-left: -43%; font-size: 1.8em; }\n"
    "h2 { float: left; clear: left; width: 38%; margin: 0 0 0 -43%; font-size: 1.15em; }\n"
    "h3 { float: left; clear: left; width: 38%; margin: 0 0 0 -43%; font-size: 1em; color: #555; }\n"
    "h4 { font-size: 1em; font-style: italic; }\n",
    # Headings at the body's size told by an underline and weight; arrows for bullets.
    "underlined": _BASE + "html { font-family: 'Liberation Sans', sans-serif; font-size: 10pt; line-height: 1.4; }\n"
    "h1 { font-size: 1.4em; text-decoration: underline; }\n"
    "h2 { font-size: 1em; text-decoration: underline; }\n"
    "h3 { font-size: 1em; font-weight: normal; text-decoration: underline; }\n"
    "h4 { font-size: 1em; font-weight: normal; font-style: italic; }\n"
    "ul { list-style: none; } ul > li::before { content: '\\2192'; display: inline-block; width: 1.2em;"
    " margin-left: -1.2em; }\n",
    # Two columns under section headings set across both; tables across both too.
    "spanning": _BASE + "html { font-family: 'DejaVu Serif', serif; font-size: 9.5pt; line-height: 1.4; }\n"
    "body { column-count: 2; column-gap: 2.2em; }\n"
    "h1, h2, table, pre { column-span: all; } h1 { font-size: 1.9em; } h2 { font-size: 1.4em; }\n"
    "h3 { font-size: 1.1em; } h4 { font-size: 1em; font-style: italic; }\n",
    # Dense: a small sans serif, tight leading, paragraphs parted by nothing but their short
    # last lines; headings bold at a point above the body.
    "dense": _BASE + "html { font-family: 'Liberation Sans', sans-serif; font-size: 8pt; line-height: 1.15; }\n"
    "p { margin: 0; } h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin: 0.8em 0 0.2em; }\n"
    "h3 { font-size: 1.1em; margin: 0.6em 0 0.2em; } h4 { font-size: 1em; font-style: italic; margin: 0.5em 0 0.1em; }\n",
    # Headings set off by colour: white on a band, a rule under the second level.
    "banded": _BASE + "html { font-family: 'DejaVu Serif', serif; font-size: 10pt; line-height: 1.45; }\n"
    "h1 { font-size: 1.7em; background: #1f3a5f; color: #fff; padding: 0.3em 0.5em; }\n"
    "h2 { font-size: 1.3em; color: #1f3a5f; border-bottom: 2px solid #1f3a5f; padding-bottom: 0.1em; }\n"
    "h3 { font-size: 1.1em; color: #8a2b0f; }\n"
    "h4 { font-size: 1em; color: #8a2b0f; font-style: italic; }\n",
}
