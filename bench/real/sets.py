"""The two document sets of the real-document bench. Stdlib only.

- ``docx``: ``../shared/corpus/docx/NAME.pdf`` (a Word document rendered by LibreOffice) with
  ``NAME.md``, the author's structure read from the Word XML by docling.
- ``docling``: the files of the real corpus that docling's own tests give a Markdown reference
  for (``groundtruth/docling__*.md``), when the manifest expects them to convert. The others
  are scanned pages whose reference came from OCR, which svcx does not do; they are listed
  as left out, with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bench.paths import CORPUS_DIR, DOCX_CORPUS_DIR

SETS = ("docx", "docling")
CONVERTIBLE = ("convert", "convert_after_repair")


@dataclass(frozen=True)
class Document:
    set: str
    name: str
    pdf: Path
    reference: Path
    password: str | None = None

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
            docs.append(Document("docx", md.stem, pdf, md))
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
                "docling", name, CORPUS_DIR / "files" / record["file"], CORPUS_DIR / refs[0], record.get("password")
            )
        )
    return sorted(docs, key=lambda d: d.name), left_out


def load(sets: list[str]) -> tuple[list[Document], dict[str, list[str]]]:
    """The documents of ``sets`` in order, and per set what was left out and why."""
    docs: list[Document] = []
    left_out: dict[str, list[str]] = {}
    for name in sets:
        got, left_out[name] = docx_set() if name == "docx" else docling_set()
        docs += got
    return docs, left_out
