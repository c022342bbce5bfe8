"""The OCR bench's folds (bench/ocr/scans.py, bench/ocr/run.py): its held scans come from the
sources kept out of tuning, the tune scans are the ones they were, and the report gives each
fold its own column. The tests that read a corpus skip, naming it, where ``../shared`` lacks it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.ocr.run import render, summarise
from bench.ocr.scans import (
    HELD_RTL_SOURCES,
    LONG_PAGES,
    MAX_PAGES,
    RTL_DOCUMENTS,
    held_rtl_sources,
    held_sources,
    long_sources,
    middle_pages,
    sources,
)
from bench.paths import AUTHORED_CORPUS_DIR, CORPUS_DIR, DOCX_CORPUS_DIR
from bench.real.sets import HELD_OUT

_ABSENT = [
    str(p)
    for p, present in (
        (AUTHORED_CORPUS_DIR, (AUTHORED_CORPUS_DIR / "manifest.json").exists()),
        (CORPUS_DIR, (CORPUS_DIR / "manifest.json").exists()),
        (DOCX_CORPUS_DIR, any(DOCX_CORPUS_DIR.glob("*.md"))),
    )
    if not present
]
needs_corpora = pytest.mark.skipif(bool(_ABSENT), reason=f"corpora absent: {', '.join(_ABSENT)}")


@needs_corpora
def test_held_scans_come_from_the_held_sources_only_and_the_tune_scans_stay() -> None:
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    tune, held = sources(), held_sources()

    assert {s.fold for s in tune} == {"tune"}
    assert {s.fold for s in held} == {"held"}
    assert not {s.name for s in tune} & {s.name for s in held}
    for src in held:
        if src.pdf.parent == DOCX_CORPUS_DIR:
            continue  # docling's Word documents: the held source docling-docx as a whole
        assert manifest[src.name]["source"] in HELD_OUT
    assert not any(manifest.get(s.name, {}).get("source") in HELD_OUT for s in tune)
    # The families the tune fold has, where the held sources have short documents.
    assert {s.family for s in held} == {"word", "web2col", "webreport", "real"}
    assert all(src.reference is not None and src.reference.exists() for src in held)
    # The tune fold as it was before the held fold came (its scans are not made again).
    assert len(tune) == 21


@needs_corpora
def test_both_folds_take_longer_documents_by_one_rule_on_their_middle_pages() -> None:
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    tune, held = long_sources("tune"), long_sources("held")
    short = {s.name for s in [*sources(), *held_sources()]}

    for fold, chosen in (("tune", tune), ("held", held)):
        assert {s.fold for s in chosen} == {fold}
        assert all((manifest[s.name]["source"] in HELD_OUT) == (fold == "held") for s in chosen)
        assert all(manifest[s.name]["pages"] > MAX_PAGES for s in chosen)
        assert all(s.pages == middle_pages(manifest[s.name]["pages"]) for s in chosen)
        assert not {s.name for s in chosen} & short
    # Both folds have two-column bodies to judge a rule for columns on.
    assert "web2col" in {s.family for s in tune} & {s.family for s in held}


@needs_corpora
def test_the_held_fold_has_right_to_left_scans_one_of_each_held_source() -> None:
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    tune_rtl = [s for s in sources() if s.family == "rtl"]
    held_rtl = held_rtl_sources()

    assert len(held_rtl) == len(tune_rtl) == RTL_DOCUMENTS
    assert {manifest[s.name]["source"] for s in held_rtl} == set(HELD_RTL_SOURCES) <= HELD_OUT
    assert {s.fold for s in held_rtl} == {"held"}
    for src in held_rtl:
        assert src.languages == (HELD_RTL_SOURCES[manifest[src.name]["source"]], "eng")
        # Its source's shortest document, whole when short, else on its middle pages.
        shortest = min(d["pages"] for d in manifest.values() if d["source"] == manifest[src.name]["source"])
        assert manifest[src.name]["pages"] == shortest
        assert src.pages == (None if shortest <= MAX_PAGES else middle_pages(shortest))
        assert src.reference is not None
        assert src.reference.exists()
    assert not {s.name for s in held_rtl} & {s.name for s in [*sources(), *held_sources(), *long_sources("held")]}


def test_middle_pages_are_the_middle_one_and_the_next() -> None:
    assert LONG_PAGES == 2
    assert middle_pages(3) == (2, 3)
    assert middle_pages(4) == (2, 3)
    assert middle_pages(5) == (3, 4)
    assert middle_pages(24) == (12, 13)


def _page(id_: str, fold: str, fidelity: float) -> dict[str, Any]:
    return {
        "id": id_,
        "page": 1,
        "variant": "300",
        "family": "word",
        "fold": fold,
        "dpi": 300,
        "degradation": "clean",
        "text_fidelity": fidelity,
        "word_recall": fidelity,
        "cpu_s": 1.0,
    }


def test_the_report_gives_the_held_scans_a_column_of_their_own() -> None:
    scores = {
        "systems": {
            "engine": {
                "pages": [_page("300/a", "tune", 0.9), _page("300/b", "tune", 0.8), _page("300/c", "held", 0.5)],
                "documents": [
                    {
                        "id": "300/a",
                        "variant": "300",
                        "fold": "tune",
                        "headings": 2,
                        "found_ocr": 2,
                        "found_text_layer": 2,
                    },
                    {
                        "id": "300/c",
                        "variant": "300",
                        "fold": "held",
                        "headings": 4,
                        "found_ocr": 1,
                        "found_text_layer": 4,
                    },
                ],
                "peak_rss_mib": 100.0,
                "rss_after_first_mib": 50.0,
            }
        }
    }

    summary = summarise(scores, {})

    assert summary["engine"]["pages"] == 2
    assert summary["engine held"]["pages"] == 1
    assert summary["engine"]["clean_300"] == pytest.approx(0.85)
    assert summary["engine held"]["clean_300"] == pytest.approx(0.5)
    assert summary["engine"]["heading_recall_ocr"] == 1.0
    assert summary["engine held"]["heading_recall_ocr"] == 0.25
    record = {
        "command": "python -m bench ocr",
        "generated_at": "now",
        "machine": "test",
        "load": "0",
        "documents": 3,
        "documents_by_fold": {"tune": 2, "held": 1},
        "pages": 3,
        "summary": summary,
        "reused_outputs": [],
    }
    text = render(record)
    assert "| | engine | engine held | goal |" in text
    assert "| text fidelity, clean 300 dpi | 0.850 | 0.500 | >= 0.95 |" in text
