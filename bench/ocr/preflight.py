"""The CPU time of the `ocr` "auto" pre-flight (`engine.ocr_plan`) over every page of each PDF.

    python -m bench.ocr.preflight PDF [PDF ...] [--runs N]

Prints per file: its pages, the pages the plan reads by OCR, how many it parsed (those the
first look left in doubt), and the CPU seconds (`time.process_time`) and wall seconds of the
fastest of N runs (default 3). Service venv (it imports the engine).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from conversion.engine import ocr_plan, preflight


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ocr.preflight")
    parser.add_argument("pdfs", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    for path in args.pdfs:
        count = preflight(path).page_count or 0
        best: tuple[float, float] | None = None
        for _ in range(max(1, args.runs)):
            wall, cpu = time.monotonic(), time.process_time()
            plan = ocr_plan(path, pages=range(1, count + 1))
            took = (time.process_time() - cpu, time.monotonic() - wall)
            best = took if best is None or took < best else best
        assert best is not None
        print(
            f"{path.name}: {count} pages, OCR {len(plan.ocr_pages)} {plan.ocr_pages[:10]}, parsed {plan.parsed}, "
            f"upper bound {plan.upper_bound}; {best[0]:.2f} CPU s, {best[1]:.2f} s wall"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
