"""``python -m bench parts``: a long document parsed in parts by several processes, then
rendered whole (what version 2 jobs do over the worker pool), against one conversion.

The document: the corpus's longest book (``pdfcpu__WaldenFull.pdf``, 249 pages) repeated
until it has ``--pages`` pages (1,000 by default), written once to ``bench/.cache/parts/``.
For each process count P, a child of the service venv parses the pages in parts of
``--part-pages`` pages over a pool of P processes (each part's layout goes through the bytes
a task would store: ``parsed_encode`` / ``parsed_decode``), then renders the whole in one
process (``convert(..., parsed=...)``). The baseline is one ``convert`` of the whole
document in one process. Reported: wall-clock seconds of each phase, speed-up over the
baseline, bytes stored per page, and whether the Markdown is byte for byte the baseline's.
Times are wall-clock on a machine that may be doing other work: the command line and the
load average at the start are written with them.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.long_document import BOOK, long_document
from bench.paths import CORPUS_DIR, MAIN_PYTHON, REPO_DIR, RESULTS_DIR

# --- the child (service venv) ------------------------------------------------------------


def _parse_part(args: tuple[str, list[int]]) -> bytes:
    from conversion.engine.convert import parse_pages
    from conversion.engine.parsed import parsed_encode

    path, pages = args
    return parsed_encode(parse_pages(path, pages=pages).models)


def _child(path: str, processes: int, part_pages: int) -> dict[str, object]:
    from multiprocessing import get_context

    from conversion.engine import convert
    from conversion.engine.parsed import parsed_decode

    if processes == 0:
        started = time.monotonic()
        result = convert(path, result_budget_bytes=1 << 40)
        return {"total": time.monotonic() - started, "markdown": result.markdown, "pages": len(result.pages)}
    from conversion.engine import preflight

    count = preflight(path).page_count or 0
    numbers = list(range(1, count + 1))
    parts = [(path, numbers[i : i + part_pages]) for i in range(0, count, part_pages)]
    started = time.monotonic()
    with get_context("fork").Pool(processes) as pool:
        stored = pool.map(_parse_part, parts, chunksize=1)
    parsed_at = time.monotonic()
    models = [m for blob in stored for m in parsed_decode(blob)]
    result = convert(path, parsed=models, result_budget_bytes=1 << 40)
    done = time.monotonic()
    return {
        "parse": parsed_at - started,
        "render": done - parsed_at,
        "total": done - started,
        "stored_bytes": sum(len(b) for b in stored),
        "markdown": result.markdown,
        "pages": len(result.pages),
    }


# --- the parent ----------------------------------------------------------------------------


def _run_child(path: Path, processes: int, part_pages: int) -> dict[str, object]:
    proc = subprocess.run(
        [str(MAIN_PYTHON), "-m", "bench.parts", "--child", str(path), str(processes), str(part_pages)],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        raise SystemExit(f"child failed ({processes} processes): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def run(pages: int, processes: list[int], part_pages: int, argv: list[str]) -> int:
    if not (CORPUS_DIR / "files" / BOOK).exists():
        print(f"parts: {CORPUS_DIR / 'files' / BOOK} is absent; this bench needs the real corpus", file=sys.stderr)
        return 2
    path = long_document(pages)
    load = os.getloadavg()
    base = _run_child(path, 0, part_pages)
    print(f"one conversion: {base['total']:.1f} s for {base['pages']} pages", file=sys.stderr)
    rows = []
    for p in processes:
        r = _run_child(path, p, part_pages)
        same = r["markdown"] == base["markdown"]
        rows.append({k: v for k, v in r.items() if k != "markdown"} | {"processes": p, "same_markdown": same})
        print(
            f"{p} process(es): {r['total']:.1f} s (parse {r['parse']:.1f}, render {r['render']:.1f}), same: {same}",
            file=sys.stderr,
        )
    record = {
        "command": "python -m bench parts " + shlex.join(argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_at_start": [round(x, 2) for x in load],
        "pages": pages,
        "part_pages": part_pages,
        "baseline_seconds": base["total"],
        "runs": rows,
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "parts.json").write_text(json.dumps(record, indent=2) + "\n")
    (RESULTS_DIR / "parts.md").write_text(_report(record))
    return 0 if all(r["same_markdown"] for r in rows) else 1


def _report(record: dict[str, object]) -> str:
    base = float(record["baseline_seconds"])  # type: ignore[arg-type]
    lines = [
        "# A long document parsed in parts over processes, rendered whole",
        "",
        f"Produced by `{record['command']}` on {record['date']} ({record['machine']}; load average at the start "
        f"{record['load_average_at_start']}).",
        "",
        f"{record['pages']} pages ({BOOK} repeated), parts of {record['part_pages']} pages. Baseline: one "
        f"`convert` of the whole document in one process, {base:.1f} s. Wall-clock seconds; see `bench/parts.py`.",
        "",
        "| processes | parse | render | total | speed-up over one conversion | stored per page | Markdown as one conversion |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in record["runs"]:  # type: ignore[attr-defined]
        lines.append(
            f"| {r['processes']} | {r['parse']:.1f} | {r['render']:.1f} | {r['total']:.1f} | {base / r['total']:.2f}x | "
            f"{r['stored_bytes'] / r['pages'] / 1024:.0f} KiB | {'yes' if r['same_markdown'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        print(json.dumps(_child(argv[1], int(argv[2]), int(argv[3]))))
        return 0
    from bench.__main__ import main as bench_main

    return bench_main(["parts", *argv])


if __name__ == "__main__":
    sys.exit(main())
