"""The element spans keep their promises on every document of the authored corpus (Word
documents rendered by LibreOffice, web pages printed by Chromium in one and two columns and
as reports, right-to-left documents): each span of a page's Markdown is its element's
Markdown, in reading order, covering the page with the joins; the document's spans agree
with the pages' away from the joins of pages. Skipped when the corpus is not beside the
repository.

Converted by the PDFium engine: the spans are made by the stages both engines share, from
lines that PDFium reads about five times faster than pdfminer.six does from these printed
pages (a suite's worth of CPU). The default engine's spans are checked on every file of the
real corpus (`test_corpus.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.conversion.engine.spans import span_faults

AUTHORED = ROOT.parent / "shared" / "corpus" / "authored"
MANIFEST = AUTHORED / "manifest.json"


def _names() -> list[object]:
    if not MANIFEST.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"the authored corpus ({AUTHORED}) is absent"))]
    return sorted(json.loads(MANIFEST.read_text())["docs"])


@pytest.mark.slow
@pytest.mark.parametrize("name", _names())
def test_spans_of_an_authored_document(name: str) -> None:
    from conversion.engine import PDFIUM_ENGINE_ID, ConvertOptions, convert

    result = convert(Path(AUTHORED / f"{name}.pdf"), options=ConvertOptions(engine=PDFIUM_ENGINE_ID))
    assert result.pages
    assert span_faults(result) == {}
