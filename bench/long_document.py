"""The long document of the jobs benches (`bench parts`, `bench jobs`, the fault suite's job
scenarios): the corpus's longest book repeated to a number of pages. Stdlib only."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.paths import CACHE_DIR, CORPUS_DIR, MAIN_PYTHON

BOOK = "pdfcpu__WaldenFull.pdf"
PARTS_CACHE = CACHE_DIR / "parts"


def long_document(pages: int) -> Path:
    """The book repeated to `pages` pages (made once; pikepdf in the service venv)."""
    out = PARTS_CACHE / f"long-{pages}.pdf"
    if out.exists():
        return out
    PARTS_CACHE.mkdir(parents=True, exist_ok=True)
    script = (
        "import sys, pikepdf\n"
        "src = pikepdf.open(sys.argv[1]); out = pikepdf.new()\n"
        "while len(out.pages) < int(sys.argv[3]):\n"
        "    for p in src.pages:\n"
        "        if len(out.pages) < int(sys.argv[3]): out.pages.append(p)\n"
        "out.save(sys.argv[2])\n"
    )
    subprocess.run([str(MAIN_PYTHON), "-c", script, str(CORPUS_DIR / "files" / BOOK), str(out), str(pages)], check=True)
    return out
