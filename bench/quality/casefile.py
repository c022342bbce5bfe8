"""Reading a quality case: Markdown ground truth with a small front matter. Stdlib only.

A case file looks like::

    ---
    header: Northwind Trading - Annual Report
    footer: Page {page} of {pages}
    columns: 2
    ---
    # Title
    ...

Front matter keys (all optional):

- ``header`` / ``footer``: running text printed in the page margin of every page;
  ``{page}`` and ``{pages}`` are replaced by the page number and count.
- ``header_left`` / ``header_right``: a header that alternates (left = even pages).
- ``columns``: 2 sets the body (everything after the first h1) in two columns.
- ``table_style``: ``ruled`` (default) or ``unruled``.
- ``outline``: ``yes`` keeps the PDF bookmarks WeasyPrint makes from the headings (off by
  default, so that headings must be recognised from the page itself).

The running texts are never part of the ground-truth body: any of them found in a
system's output is header/footer leakage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Case:
    name: str
    body: str
    meta: dict[str, str] = field(default_factory=dict)

    def running_strings(self, pages: int) -> list[list[str]]:
        """The running header/footer strings printed on each page (index 0 = page 1)."""
        out: list[list[str]] = []
        for page in range(1, pages + 1):
            strings = []
            for key in ("header", "footer"):
                if key in self.meta:
                    strings.append(_fill(self.meta[key], page, pages))
            side = "header_left" if page % 2 == 0 else "header_right"
            if side in self.meta:
                strings.append(_fill(self.meta[side], page, pages))
            out.append(strings)
        return out


def _fill(template: str, page: int, pages: int) -> str:
    return template.replace("{page}", str(page)).replace("{pages}", str(pages))


def load_case(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    meta: dict[str, str] = {}
    if text.startswith("---\n"):
        head, _, text = text[4:].partition("\n---\n")
        for line in head.splitlines():
            if line.strip():
                key, _, value = line.partition(":")
                meta[key.strip()] = value.strip()
    return Case(name=path.stem, body=text.lstrip("\n"), meta=meta)


def load_cases(cases_dir: Path, only: list[str] | None = None) -> list[Case]:
    cases = [load_case(p) for p in sorted(cases_dir.glob("*.md"))]
    if only:
        cases = [c for c in cases if c.name in only]
    return cases
