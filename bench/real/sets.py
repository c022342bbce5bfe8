"""The two document sets of the real-document bench. Stdlib only.

- ``docx``: ``../shared/corpus/docx/NAME.pdf`` (a Word document rendered by LibreOffice) with
  ``NAME.md``, the author's structure read from the Word XML by docling.
- ``docling``: the files of the real corpus that docling's own tests give a Markdown reference
  for (``groundtruth/docling__*.md``), when the manifest expects them to convert. The others
  are scanned pages whose reference came from OCR, which svcx does not do; they are listed
  as left out, with the reason.
- ``authored``: ``../shared/corpus/authored/NAME.pdf`` with its exact reference ``NAME.md``,
  documents written by people and printed by LibreOffice or Chromium, one set per family
  (``authored-word``, ``authored-web``, ``authored-web2col``, ``authored-webreport``,
  ``authored-rtl``); ``--sets authored`` means all five.

Folds: the sources in ``HELD_OUT`` are kept out of tuning. A rule goes into the engine only when
it helps the ``held`` fold (measured after the change is written, on documents nobody looked at
while writing it) and hurts no family. The split is by source, never by page or document: a
source's documents share an author's habits, and a rule learned on one of them is learned on all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bench.paths import AUTHORED_CORPUS_DIR, CORPUS_DIR, DOCX_CORPUS_DIR

SETS = ("docx", "docling", "authored")
FAMILIES = ("word", "web", "web2col", "webreport", "rtl")
# Sources held out of tuning: one in each authored family (the web families share their three
# sources: PEPs, reStructuredText, differ from the two Markdown ones), and docling's own Word
# test documents (the docx set) as a whole. What is tuned on: the other authored sources and the
# docling references of the real corpus.
HELD_OUT = frozenset({"peps", "poi", "python-docx", "react-fa", "react-he", "docling-docx"})
FOLDS = ("tune", "held")
CONVERTIBLE = ("convert", "convert_after_repair")


@dataclass(frozen=True)
class Document:
    set: str
    name: str
    pdf: Path
    reference: Path
    password: str | None = None
    source: str = ""
    # Running lines the PDF prints on every page, as (where, template) pairs ("footer",
    # "Page {page} of {pages}"), and its page count: to measure their leak into the output.
    running: tuple[tuple[str, str], ...] = ()
    pages: int = 0

    @property
    def fold(self) -> str:
        return "held" if self.source in HELD_OUT else "tune"

    @property
    def id(self) -> str:
        """Unique over the sets (corpus names already start with their source)."""
        return self.name if self.name.startswith(f"{self.set}__") else f"{self.set}__{self.name}"


def docx_set() -> tuple[list[Document], list[str]]:
    docs, left_out = [], []
    for md in sorted(DOCX_CORPUS_DIR.glob("*.md")):
        if md.name == "README.md":
            continue
        pdf = md.with_suffix(".pdf")
        if pdf.exists():
            docs.append(Document("docx", md.stem, pdf, md, source="docling-docx"))
        else:
            left_out.append(f"{md.stem}: no PDF rendering")
    return docs, left_out


def docling_set() -> tuple[list[Document], list[str]]:
    manifest = json.loads((CORPUS_DIR / "manifest.json").read_text())
    docs, left_out = [], []
    for record in manifest["files"]:
        refs = [
            g for g in record.get("groundtruth") or [] if Path(g).name.startswith("docling__") and g.endswith(".md")
        ]
        if not refs:
            continue
        name = record["file"].removesuffix(".pdf")
        if record["expected_outcome"] not in CONVERTIBLE:
            left_out.append(f"{name}: expected outcome {record['expected_outcome']}, reference {Path(refs[0]).name}")
            continue
        docs.append(
            Document(
                "docling",
                name,
                CORPUS_DIR / "files" / record["file"],
                CORPUS_DIR / refs[0],
                record.get("password"),
                source="docling-real",
            )
        )
    return sorted(docs, key=lambda d: d.name), left_out


def authored_set(family: str) -> tuple[list[Document], list[str]]:
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())
    docs, left_out = [], []
    for name, record in sorted(manifest["docs"].items()):
        if record["family"] != family:
            continue
        pdf, md = AUTHORED_CORPUS_DIR / f"{name}.pdf", AUTHORED_CORPUS_DIR / f"{name}.md"
        if pdf.exists() and md.exists():
            meta_path = AUTHORED_CORPUS_DIR / f"{name}.json"
            meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
            running = tuple(sorted((meta.get("running") or {}).items()))
            pages = int(meta.get("pages") or 0)
            docs.append(
                Document(f"authored-{family}", name, pdf, md, source=record["source"], running=running, pages=pages)
            )
        else:
            left_out.append(f"{name}: no PDF or reference")
    return docs, left_out


def expand(sets: list[str]) -> list[str]:
    """``authored`` stands for its five families."""
    out: list[str] = []
    for name in sets:
        out += [f"authored-{f}" for f in FAMILIES] if name == "authored" else [name]
    return list(dict.fromkeys(out))


def load(sets: list[str], fold: str = "all") -> tuple[list[Document], dict[str, list[str]]]:
    """The documents of ``sets`` (of ``fold``: ``tune``, ``held`` or ``all``) in order, and per
    set what was left out and why."""
    docs: list[Document] = []
    left_out: dict[str, list[str]] = {}
    for name in expand(sets):
        if name == "docx":
            got, left_out[name] = docx_set()
        elif name == "docling":
            got, left_out[name] = docling_set()
        else:
            got, left_out[name] = authored_set(name.removeprefix("authored-"))
        docs += [d for d in got if fold in ("all", d.fold)]
    return docs, left_out
