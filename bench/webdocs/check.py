"""The authored corpus's checks on each printed part (bench venv: PyMuPDF reads the PDFs).

    python -m bench.webdocs.check CACHE   # -> CACHE/checked.json

A part is kept when its PDF has 1 to 30 pages, its reference at least 100 characters of text,
and the reference and the PDF's text agree on at least 80% of their word sets both ways (words
of two or more letters, lower-cased; digits and the running footer's "Page" left out; link
targets are not on the page and are left out of the reference's words). The corpus reads the
PDF's text with ``pdftotext``, not installed here: PyMuPDF's plain text stands in for it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

MIN_PAGES, MAX_PAGES = 1, 30
MIN_REFERENCE_CHARS = 100  # characters of reference text
MIN_WORD_SHARE = 0.80  # of either side's word set found in the other's
_WORD = re.compile(r"[^\W\d_]{2,}")
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_RUNNING_WORDS = frozenset({"page", "of"})
# `webreport`'s running header names the source and the part's title, as the corpus's does
# ("The Rust Book · Data Types"); its footer is "Page N of M".
RUNNING_SOURCE = "Node.js API"
RUNNING_FOOTER = "Page {page} of {pages}"


def running_header(title: str) -> str:
    return f"{RUNNING_SOURCE} · {title}"


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def reference_words(md: str) -> set[str]:
    return words(_LINK_TARGET.sub("]", md))


def share(a: set[str], b: set[str]) -> float:
    """The share of ``a`` found in ``b`` (1 for an empty ``a``)."""
    return len(a & b) / len(a) if a else 1.0


def verdict(
    pages: int, reference: str, page_text: str, running: frozenset[str] = frozenset()
) -> tuple[bool, str, float, float]:
    """Whether a part is kept, why not, and the two word-set shares (reference in page, page
    in reference); ``running`` the words of the running lines, which the reference lacks."""
    ref = reference_words(reference)
    pdf = words(page_text) - (running - ref)
    in_pdf, in_ref = share(ref, pdf), share(pdf, ref)
    if not MIN_PAGES <= pages <= MAX_PAGES:
        return False, f"{pages} pages", in_pdf, in_ref
    if len(reference.strip()) < MIN_REFERENCE_CHARS:
        return False, "reference under 100 characters", in_pdf, in_ref
    if min(in_pdf, in_ref) < MIN_WORD_SHARE:
        return False, f"word sets {in_pdf:.2f} / {in_ref:.2f}", in_pdf, in_ref
    return True, "", in_pdf, in_ref


def main(cache: Path) -> int:
    import pymupdf

    manifest = json.loads((cache / "manifest.json").read_text())
    rows = []
    for name, record in manifest.items():
        reference_path = cache / "ref" / f"{name}.md"
        reference = reference_path.read_text()
        for family in record["families"]:
            pdf = cache / "pdf" / family / f"{name}.pdf"
            if not pdf.exists():
                rows.append({"name": name, "family": family, "kept": False, "reason": "not printed"})
                continue
            with pymupdf.open(pdf) as doc:
                pages = len(doc)
                text = "\n".join(p.get_text() for p in doc)
            header = running_header(record["title"]) if family == "webreport" else ""
            running = frozenset(words(header) | _RUNNING_WORDS) if header else frozenset()
            kept, reason, in_pdf, in_ref = verdict(pages, reference, text, running)
            rows.append(
                {
                    "name": name,
                    "family": family,
                    "pdf": str(pdf),
                    "reference": str(reference_path),
                    "pages": pages,
                    "kept": kept,
                    "reason": reason,
                    "words_found_on_page": round(in_pdf, 3),
                    "page_words_in_reference": round(in_ref, 3),
                    "running": {"header": header, "footer": RUNNING_FOOTER} if header else {},
                }
            )
    (cache / "checked.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    kept = [r for r in rows if r["kept"]]
    print(f"{len(kept)} of {len(rows)} printed parts kept, {sum(r['pages'] for r in kept)} pages", file=sys.stderr)
    for r in rows:
        if not r["kept"]:
            print(f"  left out {r['family']}/{r['name']}: {r['reason']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
