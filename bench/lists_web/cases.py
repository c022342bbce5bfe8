"""Development documents for lists on web pages printed by Chromium (issue 24). Stdlib only.

Each document is reStructuredText written from a fixed seed, covering the lists the web
families' sources hold: bullets of every marker, enumerations of every style (arabic,
auto-numbered, letters, roman numerals, in parentheses, starting past one), nesting three
deep, loose items of several paragraphs, items holding a literal block, lists inside a block
quote, definition and field lists, long items that wrap, and lists set straight after a
paragraph. pandoc makes both the page (HTML) and the reference (GFM) from it, as the authored
corpus was made (`__main__.build`), so the reference follows the corpus's conventions.
"""

from __future__ import annotations

import random

WORDS = [
    "the",
    "queue",
    "holds",
    "every",
    "request",
    "until",
    "a",
    "worker",
    "takes",
    "it",
    "and",
    "the",
    "result",
    "is",
    "stored",
    "for",
    "the",
    "client",
    "who",
    "asked",
    "so",
    "the",
    "answer",
    "waits",
    "in",
    "the",
    "store",
    "while",
    "the",
    "page",
    "is",
    "parsed",
    "again",
    "by",
    "another",
    "worker",
    "when",
    "a",
    "limit",
    "is",
    "reached",
    "the",
    "job",
    "stops",
    "and",
    "reports",
    "what",
    "it",
    "finished",
    "before",
    "the",
    "time",
    "ran",
    "out",
    "each",
    "page",
    "costs",
    "one",
    "credit",
    "and",
    "a",
    "failed",
    "page",
    "costs",
    "nothing",
    "the",
    "ledger",
    "keeps",
    "every",
    "hold",
    "open",
]
NAMES = ("queue", "worker", "ledger", "store", "page", "limit", "credit", "hold", "job", "client", "token", "batch")
CODE = ("client.convert(path)", "retry = 3", "pages = [1, 2]", "job.wait(timeout=30)", "ledger.hold(org, 4)")


def words(rng: random.Random, lo: int, hi: int) -> str:
    """A phrase of lo..hi words, its first letter capital, no closing stop."""
    out = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    if rng.random() < 0.3:
        out[rng.randrange(len(out))] = f"``{rng.choice(NAMES)}``"
    elif rng.random() < 0.2:
        out[rng.randrange(len(out))] = f"*{rng.choice(NAMES)}*"
    text = " ".join(out)
    return text[0].upper() + text[1:]


def sentence(rng: random.Random, lo: int = 8, hi: int = 18) -> str:
    return words(rng, lo, hi) + "."


def paragraph(rng: random.Random, n: int = 3) -> str:
    return " ".join(sentence(rng) for _ in range(n))


def _indent(text: str, width: int) -> str:
    return "\n".join((" " * width + ln) if ln else ln for ln in text.split("\n"))


def _item(marker: str, body: str) -> str:
    """A list item: `marker`, a space, `body` indented under its first line."""
    lead = marker + " "
    first, _, rest = body.partition("\n")
    return lead + first + ("\n" + _indent(rest, len(lead)) if rest else "")


def bullets(rng: random.Random, n: int, *, char: str = "-", lo: int = 2, hi: int = 8, loose: bool = False) -> str:
    sep = "\n\n" if loose else "\n"
    return sep.join(_item(char, words(rng, lo, hi)) for _ in range(n))


# Enumerators: (marker for item k, first item number).
ENUMS = {
    "arabic": lambda k: f"{k}.",
    "auto": lambda k: "#.",
    "paren-alpha": lambda k: f"({'abcdefghij'[k - 1]})",
    "upper-alpha": lambda k: f"{'ABCDEFGHIJ'[k - 1]}.",
    "roman": lambda k: f"{['i', 'ii', 'iii', 'iv', 'v', 'vi', 'vii', 'viii'][k - 1]}.",
    "arabic-paren": lambda k: f"{k})",
}


def enumerated(rng: random.Random, n: int, style: str, *, start: int = 1, lo: int = 3, hi: int = 10) -> str:
    mark = ENUMS[style]
    return "\n".join(_item(mark(k), words(rng, lo, hi)) for k in range(start, start + n))


def nested(rng: random.Random, depth: int, *, chars: str = "-*+", ordered_top: bool = False) -> str:
    """A list three levels deep at most: items with sub-lists after their text."""

    def level(d: int, n: int) -> list[str]:
        out = []
        for k in range(1, n + 1):
            marker = f"{k}." if ordered_top and d == 0 else chars[d % len(chars)]
            body = words(rng, 2, 7)
            if d + 1 < depth and rng.random() < 0.6:
                body += "\n\n" + _joined(level(d + 1, rng.randint(2, 3)))
            out.append(_item(marker, body))
        return out

    return _joined(level(0, rng.randint(3, 4)))


def _joined(items: list[str]) -> str:
    """Items one per line, or blank lines between where one of them holds a sub-list."""
    return ("\n\n" if any("\n\n" in i for i in items) else "\n").join(items)


def loose_items(rng: random.Random, n: int) -> str:
    """Items of two paragraphs each, blank lines between."""
    return "\n\n".join(_item("-", sentence(rng, 10, 20) + "\n\n" + sentence(rng, 8, 14)) for _ in range(n))


def items_with_code(rng: random.Random, n: int) -> str:
    out = []
    for k in range(1, n + 1):
        lines = [rng.choice(CODE) for _ in range(rng.randint(1, 4))]
        if len(lines) > 2:
            lines[1:-1] = ["    " + ln for ln in lines[1:-1]]  # a program's own indent
        code = "\n".join("    " + ln for ln in lines)
        out.append(_item(f"{k}.", words(rng, 4, 9) + "::\n\n" + code))
    return "\n\n".join(out)


def definitions(rng: random.Random, n: int) -> str:
    return "\n\n".join(
        f"{rng.choice(NAMES)} {rng.choice(NAMES)}\n" + _indent(sentence(rng, 8, 20), 4) for _ in range(n)
    )


def fields(rng: random.Random, n: int) -> str:
    return "\n".join(f":{rng.choice(NAMES).title()}: {words(rng, 1, 5)}" for _ in range(n))


def heading(title: str, char: str) -> str:
    return f"{title}\n{char * len(title)}"


def document(rng: random.Random, title: str, parts: list[str]) -> str:
    return heading(title, "=") + "\n\n" + "\n\n".join(parts) + "\n"


def section(rng: random.Random, title: str, *blocks: str) -> str:
    return heading(title, "-") + "\n\n" + "\n\n".join(blocks)


def documents(seed: int = 24) -> dict[str, str]:
    """Name -> reStructuredText."""
    rng = random.Random(seed)
    docs: dict[str, str] = {}
    docs["bullets"] = document(
        rng,
        "Bullet lists",
        [
            section(rng, "Short items", paragraph(rng, 2), bullets(rng, 5, char="-")),
            section(rng, "Stars", paragraph(rng, 1) + " The options are:", bullets(rng, 4, char="*", lo=1, hi=3)),
            section(rng, "Long items", paragraph(rng, 2), bullets(rng, 4, char="+", lo=25, hi=45)),
            section(rng, "Loose items", paragraph(rng, 1), bullets(rng, 4, lo=6, hi=14, loose=True), paragraph(rng, 2)),
        ],
    )
    docs["enumerations"] = document(
        rng,
        "Enumerated lists",
        [
            section(rng, "Arabic", paragraph(rng, 2), enumerated(rng, 5, "arabic")),
            section(rng, "Auto numbered", paragraph(rng, 1), enumerated(rng, 4, "auto")),
            section(rng, "Letters in parentheses", paragraph(rng, 1), enumerated(rng, 4, "paren-alpha")),
            section(rng, "Capital letters", paragraph(rng, 1), enumerated(rng, 3, "upper-alpha", lo=10, hi=30)),
            section(rng, "Roman numerals", paragraph(rng, 1), enumerated(rng, 5, "roman")),
            section(rng, "Starting at three", paragraph(rng, 1), enumerated(rng, 4, "arabic", start=3)),
            section(rng, "Closing parenthesis", paragraph(rng, 1), enumerated(rng, 4, "arabic-paren", lo=20, hi=40)),
        ],
    )
    docs["nested"] = document(
        rng,
        "Nested lists",
        [
            section(rng, "Two levels", paragraph(rng, 2), nested(rng, 2)),
            section(rng, "Three levels", paragraph(rng, 1), nested(rng, 3)),
            section(rng, "Numbers over bullets", paragraph(rng, 1), nested(rng, 2, ordered_top=True)),
            section(rng, "Long nested items", paragraph(rng, 1), nested(rng, 3)),
        ],
    )
    docs["blocks"] = document(
        rng,
        "Items that hold blocks",
        [
            section(rng, "Paragraphs", paragraph(rng, 2), loose_items(rng, 3)),
            section(rng, "Literal blocks", paragraph(rng, 1), items_with_code(rng, 4)),
            section(rng, "In a block quote", paragraph(rng, 1), _indent(bullets(rng, 4, lo=4, hi=12), 4)),
            section(
                rng, "After a colon", sentence(rng) + " These are the steps:", enumerated(rng, 4, "arabic", lo=6, hi=16)
            ),
        ],
    )
    docs["definitions"] = document(
        rng,
        "Definitions and fields",
        [
            section(rng, "Definition list", paragraph(rng, 2), definitions(rng, 4)),
            section(rng, "Field list", paragraph(rng, 1), fields(rng, 4)),
            section(rng, "Between lists", bullets(rng, 3), paragraph(rng, 2), enumerated(rng, 3, "arabic")),
        ],
    )
    rng2 = random.Random(seed + 1)
    docs["mixed"] = document(
        rng2,
        "A page of everything",
        [
            paragraph(rng2, 3),
            bullets(rng2, 6, lo=8, hi=30),
            section(rng2, "Steps", paragraph(rng2, 2), nested(rng2, 2, ordered_top=True), paragraph(rng2, 3)),
            section(rng2, "Notes", bullets(rng2, 3, char="*", lo=1, hi=2), paragraph(rng2, 4)),
            section(rng2, "Options", enumerated(rng2, 6, "paren-alpha", lo=8, hi=26), paragraph(rng2, 2)),
        ],
    )
    return docs
