"""The real-document bench's sets and folds (bench/real/sets.py) on the shared corpora: every
authored family is there, the held-out fold is a set of whole sources, and the two folds
partition each set. The tests that read a corpus skip, naming it, where ``../shared`` lacks it."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from bench.paths import AUTHORED_CORPUS_DIR, CORPUS_DIR, DOCX_CORPUS_DIR
from bench.real.sets import FAMILIES, HELD_OUT, expand, load

_AUTHORED = (AUTHORED_CORPUS_DIR / "manifest.json").exists()
needs_authored = pytest.mark.skipif(not _AUTHORED, reason=f"the authored corpus ({AUTHORED_CORPUS_DIR}) is absent")
_ABSENT = [
    str(p)
    for p, present in (
        (AUTHORED_CORPUS_DIR, _AUTHORED),
        (CORPUS_DIR, (CORPUS_DIR / "manifest.json").exists()),
        (DOCX_CORPUS_DIR, any(DOCX_CORPUS_DIR.glob("*.md"))),
    )
    if not present
]
needs_every_set = pytest.mark.skipif(bool(_ABSENT), reason=f"corpora absent: {', '.join(_ABSENT)}")


def test_authored_stands_for_its_five_families() -> None:
    assert expand(["docx", "authored"]) == ["docx", *(f"authored-{f}" for f in FAMILIES)]


@needs_authored
def test_every_authored_document_is_in_its_family_set() -> None:
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    docs, left_out = load(["authored"])
    assert not any(left_out.values())
    assert {d.name: d.set for d in docs} == {n: f"authored-{r['family']}" for n, r in manifest.items()}


@needs_every_set
def test_folds_split_by_source_and_partition_every_set() -> None:
    everything, _ = load(["docx", "docling", "authored"])
    tune, _ = load(["docx", "docling", "authored"], "tune")
    held, _ = load(["docx", "docling", "authored"], "held")
    assert sorted(d.id for d in tune + held) == sorted(d.id for d in everything)
    sources: dict[str, set[str]] = defaultdict(set)
    for d in everything:
        sources[d.source].add(d.fold)
    assert all(len(folds) == 1 for folds in sources.values())  # a source is never split
    assert {d.source for d in held} == HELD_OUT
    for family in FAMILIES:  # every authored family has documents on both sides
        assert {d.fold for d in everything if d.set == f"authored-{family}"} == {"tune", "held"}
