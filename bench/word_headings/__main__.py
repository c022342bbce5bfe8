"""``python -m bench.word_headings [NAME ...]``: the engine on the LibreOffice heading documents
of ``bench/word_headings/docs/`` (made by ``generate.py``), scored by the real bench's scorer
(``bench/real/score.py``, in the bench venv). Prints per document text fidelity, heading
recall, precision, exact level and hierarchy, then the means; the full record lands in
``bench/.cache/word_headings/scores.json``. Stdlib only, like ``python -m bench``."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.paths import CACHE_DIR
from bench.word_lists.__main__ import print_scores, score

DOCS = Path(__file__).resolve().parent / "docs"
CACHE = CACHE_DIR / "word_headings"
METRICS = ("heading_recall", "heading_precision", "heading_level", "heading_hierarchy")


def main(names: list[str]) -> int:
    print_scores(score(DOCS, CACHE, "word-headings", names), "word-headings", METRICS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
