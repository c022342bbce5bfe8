"""Where the benchmark keeps things. Stdlib only: imported by every interpreter involved."""

from __future__ import annotations

import os
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
CASES_DIR = BENCH_DIR / "quality" / "cases"
CACHE_DIR = BENCH_DIR / ".cache"
QUALITY_CACHE = CACHE_DIR / "quality"
PDF_DIR = QUALITY_CACHE / "pdf"
OUTPUT_DIR = QUALITY_CACHE / "out"
RESULTS_DIR = BENCH_DIR / "results"
ANCHOR_REQUIREMENTS = BENCH_DIR / "requirements-anchors.txt"

# The engine runs in the service's own venv; generation, anchors and scoring in the bench venv.
MAIN_PYTHON = Path(os.environ.get("SVCX_PYTHON", REPO_DIR / ".venv" / "bin" / "python"))
BENCH_VENV = Path(os.environ.get("SVCX_BENCH_VENV", BENCH_DIR / ".venv"))
BENCH_PYTHON = BENCH_VENV / "bin" / "python"

CORPUS_DIR = Path(os.environ.get("SVCX_CORPUS", REPO_DIR.parent / "shared" / "corpus" / "real"))
# The real-document bench (``python -m bench real``): Word documents rendered by LibreOffice
# with their authored structure, and the docling references of the real corpus.
DOCX_CORPUS_DIR = Path(os.environ.get("SVCX_DOCX_CORPUS", REPO_DIR.parent / "shared" / "corpus" / "docx"))
# Documents written by people, printed by LibreOffice or Chromium, with exact references.
AUTHORED_CORPUS_DIR = Path(os.environ.get("SVCX_AUTHORED_CORPUS", REPO_DIR.parent / "shared" / "corpus" / "authored"))
REAL_CACHE = CACHE_DIR / "real"
