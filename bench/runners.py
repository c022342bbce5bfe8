"""One conversion in a child process; prints one JSON line on stdout. Stdlib only at import.

    python -m bench.runners convert SYSTEM PDF OUT_MD   # quality: write the Markdown
    python -m bench.runners speed SYSTEM PDF [--password PW] [--engine ID]  # speed: time and memory only

SYSTEM is ``engine`` (svcx, run with the service venv; ``--engine`` picks the engine id, default
the service's default), ``engine-pdfium`` (svcx with the engine ``svcx-layout-pdfium``), ``pdfminer`` (raw
``pdfminer.high_level.extract_text``, default LAParams, service venv), ``markitdown`` or
``pymupdf4llm`` (anchors, bench venv only). Each run is its own process so that a crash,
a hang (the parent's timeout) or memory growth in one file cannot affect another, and
``ru_maxrss`` is the peak of that one conversion.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

# The engine id `engine` converts with (``--engine``); None: the service's default.
_ENGINE_ID: str | None = None


def _engine(path: str, password: str | None) -> tuple[str, int, dict[str, object]]:
    from conversion.engine import ENGINE_ID, ENGINES, ConvertOptions, convert

    engine_id = _ENGINE_ID or ENGINE_ID
    res = convert(path, pages=None, password=password, options=ConvertOptions(tables="markdown", engine=engine_id))
    warnings = sorted({w for p in res.pages for w in (getattr(p, "warnings", None) or [])})
    extra = {
        "version": f"{engine_id} {ENGINES[engine_id]}",
        "engine_timings": dict(res.timings),
        "warnings": [str(w) for w in warnings][:20],
    }
    return res.markdown, len(res.pages), extra


def _pdfminer(path: str, password: str | None) -> tuple[str, int, dict[str, object]]:
    from importlib.metadata import version

    from pdfminer.high_level import extract_text
    from pdfminer.layout import LAParams

    text = extract_text(path, password=password or "", laparams=LAParams())
    return text, -1, {"version": f"pdfminer.six {version('pdfminer.six')}"}


def _markitdown(path: str, password: str | None) -> tuple[str, int, dict[str, object]]:
    from importlib.metadata import version

    from markitdown import MarkItDown

    text = MarkItDown(enable_plugins=False).convert(path).text_content
    return text, -1, {"version": f"markitdown {version('markitdown')}"}


def _pymupdf4llm(path: str, password: str | None) -> tuple[str, int, dict[str, object]]:
    import pymupdf4llm  # type: ignore[import-untyped]  # bench venv only

    # header/footer=False asks pymupdf4llm to drop running headers and footers, which is
    # what this benchmark scores; everything else stays at its defaults.
    text = pymupdf4llm.to_markdown(path, header=False, footer=False, show_progress=False)
    return text, -1, {"version": f"pymupdf4llm {pymupdf4llm.__version__}"}


def _engine_pdfium(path: str, password: str | None) -> tuple[str, int, dict[str, object]]:
    global _ENGINE_ID
    _ENGINE_ID = "svcx-layout-pdfium"
    return _engine(path, password)


SYSTEMS: dict[str, Callable[[str, str | None], tuple[str, int, dict[str, object]]]] = {
    "engine": _engine,
    "engine-pdfium": _engine_pdfium,
    "pdfminer": _pdfminer,
    "markitdown": _markitdown,
    "pymupdf4llm": _pymupdf4llm,
}


def _count_pages(path: str, password: str | None) -> int:
    """Pages pdfminer lays out (not timed): the denominator for the pdfminer baseline."""
    from pdfminer.pdfpage import PDFPage

    with open(path, "rb") as fh:
        return sum(1 for _ in PDFPage.get_pages(fh, password=password or ""))


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["convert", "speed"])
    parser.add_argument("system", choices=sorted(SYSTEMS))
    parser.add_argument("pdf")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--password")
    parser.add_argument("--engine", help="engine id for SYSTEM engine (default: the service's default)")
    args = parser.parse_args(argv)
    global _ENGINE_ID
    _ENGINE_ID = args.engine

    fn = SYSTEMS[args.system]
    result: dict[str, object] = {"system": args.system, "file": Path(args.pdf).name}
    try:
        # Import cost is paid before timing starts, like a long-running worker would.
        _warm_imports(args.system)
        result["rss_before_kib"] = _rss_kib()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        text, pages, extra = fn(args.pdf, args.password)
        result["wall_s"] = time.perf_counter() - wall0
        result["cpu_s"] = time.process_time() - cpu0
        result["maxrss_kib"] = _rss_kib()
        if pages < 0 and args.mode == "speed":
            pages = _count_pages(args.pdf, args.password)
        result["pages"] = pages
        result["chars"] = len(text)
        result.update(extra)
        if args.mode == "convert" and args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        result["ok"] = True
    except Exception as exc:  # the benchmark records every failure
        result["ok"] = False
        result["error"] = f"{type(exc).__name__}: {exc}"[:500]
        result["error_code"] = getattr(exc, "code", None)
        result["traceback"] = traceback.format_exc()[-2000:]
        result["maxrss_kib"] = _rss_kib()
    print(json.dumps(result, default=str))
    return 0


def _warm_imports(system: str) -> None:
    if system.startswith("engine"):
        import conversion.engine  # noqa: F401
    elif system == "pdfminer":
        import pdfminer.high_level  # noqa: F401
    elif system == "markitdown":
        import markitdown  # noqa: F401
    elif system == "pymupdf4llm":
        import pymupdf4llm  # noqa: F401


if __name__ == "__main__":
    sys.exit(main())
