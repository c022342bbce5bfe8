"""A web page printed to PDF as the authored corpus prints its web families. Stdlib only.

Debian's Chromium, headless, A4 (the page's ``@page`` rule), without the browser's own date,
title and URL lines (``--no-pdf-header-footer``); a running header or footer comes from the
page's CSS (``@page`` margin boxes). Used by ``bench.tables_web`` and ``bench.webdocs``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def print_to_pdf(page: Path, out: Path) -> None:
    """`page` (an HTML file) printed to `out`."""
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={out}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
    )
