"""Benchmarks of the conversion engine. Stdlib only; see bench/README.md.

python -m bench setup      # create bench/.venv with the pinned anchors and renderer
python -m bench quality    # structure/fidelity vs markitdown and pymupdf4llm
python -m bench real       # the same on documents others wrote (Word via LibreOffice, docling refs)
python -m bench speed      # pages/s and memory vs raw pdfminer.six on the real corpus
python -m bench parts      # a long document parsed in parts over processes, rendered whole
python -m bench service    # the running service: cache-hit latency, throughput, overhead
python -m bench jobs       # version 2 jobs on the service: 1,000 pages over 1/2/4 processes, latency
python -m bench faults     # processes killed, backends restarted: answers and money checked
python -m bench elements   # what the element layer adds to the JSON result
python -m bench chunks     # chunks against the authored corpus's structure, and their cost
python -m bench instructions  # CPU instructions per cache hit (callgrind), against other checkouts
python -m bench ocr        # OCR engines on scans of documents whose text is known
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from bench.paths import ANCHOR_REQUIREMENTS, BENCH_PYTHON, BENCH_VENV
from bench.quality.run import PYTHON_FOR
from bench.real.sets import FAMILIES, FOLDS


def setup() -> int:
    if not BENCH_PYTHON.exists():
        # The bench venv uses the same interpreter version as the service venv.
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
    subprocess.run([str(BENCH_PYTHON), "-m", "pip", "install", "-q", "-r", str(ANCHOR_REQUIREMENTS)], check=True)
    probe = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True)
    if not probe.stdout.strip():
        print(
            "warning: no CJK font; the CJK case renders as boxes. Install one: apt-get install fonts-wqy-microhei",
            file=sys.stderr,
        )
    return 0


def scratch_backends(command: argparse.ArgumentParser, database: str, redis_db: int, note: str = "") -> None:
    """--database-url and --redis-url of a command that starts the service on scratch backends."""
    command.add_argument(
        "--database-url",
        default=f"postgresql://postgres@127.0.0.1:5432/{database}",
        help=f"scratch database, dropped and recreated (its name must start with svcx_bench){note}",
    )
    command.add_argument("--redis-url", default=f"redis://127.0.0.1:6379/{redis_db}", help="scratch Redis DB, flushed")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("setup", help="create bench/.venv (pinned, from requirements-anchors.txt)")

    q = sub.add_parser("quality", help="quality benchmark on generated PDFs")
    q.add_argument(
        "--systems",
        nargs="+",
        default=["engine", "markitdown", "pymupdf4llm"],
        choices=list(PYTHON_FOR),
    )
    q.add_argument("--jobs", type=int, default=1, help="conversions run at once (default 1)")
    q.add_argument("--timeout", type=float, default=300.0, help="seconds per conversion")
    q.add_argument("cases", nargs="*", help="case names (default: all in bench/quality/cases)")
    sub.add_parser("quality-report", help="re-render quality.md from quality.json")

    r = sub.add_parser("real", help="quality benchmark on documents others wrote (docx, docling references, authored)")
    r.add_argument("--systems", nargs="+", default=["engine", "markitdown", "pymupdf4llm"], choices=list(PYTHON_FOR))
    r.add_argument(
        "--sets",
        nargs="+",
        default=["docx", "docling", "authored"],
        choices=["docx", "docling", "authored", *(f"authored-{f}" for f in FAMILIES)],
    )
    r.add_argument(
        "--convert",
        nargs="+",
        choices=list(PYTHON_FOR),
        help="convert only these systems; the others are scored on their outputs of the last run",
    )
    r.add_argument(
        "--fold", default="all", choices=["all", *FOLDS], help="only the sources tuned on, or only those held out"
    )
    r.add_argument("--jobs", type=int, default=1, help="conversions run at once (default 1)")
    r.add_argument(
        "--timeout", type=float, help="seconds per conversion (default: the service's SVCX_CONVERSION_TIME_LIMIT)"
    )
    r.add_argument("documents", nargs="*", help="document names (default: all of the sets)")
    rr = sub.add_parser("real-report", help="re-render real.md from real.json")
    rr.add_argument("--partial", action="store_true", help="real-partial.md from real-partial.json")

    s = sub.add_parser("speed", help="speed benchmark on the real corpus")
    s.add_argument("--repeat", type=int, default=1, help="runs per file and system; the fastest counts")
    s.add_argument("--timeout", type=float, default=300.0, help="seconds per conversion")
    s.add_argument("--files", nargs="*", help="only these corpus file names")
    s.add_argument(
        "--engines",
        nargs=2,
        metavar=("BASE", "OTHER"),
        help="compare two engine ids (GET /v1/engines) instead of the engine and pdfminer: speed-engines.md",
    )
    s.add_argument("--category", help="only the corpus files of this manifest category (long: the long documents)")

    pt = sub.add_parser("parts", help="a long document parsed in parts over processes, rendered whole")
    pt.add_argument("--pages", type=int, default=1000, help="pages of the long document")
    pt.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4], help="process counts to run")
    pt.add_argument("--part-pages", type=int, default=25, help="pages of one part")

    v = sub.add_parser("service", help="service benchmark: gunicorn + Celery + PostgreSQL + Redis on loopback")
    v.add_argument("--only", nargs="+", choices=["cache-hit", "throughput", "latency-200", "overhead-20"])
    scratch_backends(v, "svcx_bench", 12)
    v.add_argument("--web-concurrency", type=int, default=2, help="gunicorn processes (default 2, as deployed)")
    v.add_argument("--web-threads", type=int, default=32, help="threads per gunicorn process (default 32)")
    v.add_argument("--cache-requests", type=int, default=500, help="sequential cache hits timed")
    v.add_argument("--cache-clients", type=int, default=8, help="concurrent clients for the cache-hit run")
    v.add_argument("--cache-large-requests", type=int, default=50, help="cache hits of the 3.5 MB upload")
    v.add_argument("--throughput-requests", type=int, default=120, help="distinct one-page PDFs per run")
    v.add_argument("--throughput-clients", type=int, default=4, help="concurrent clients in the throughput runs")
    v.add_argument("--throughput-cap", type=float, default=60.0, help="seconds at most per throughput run")
    v.add_argument("--reps-20", type=int, default=9, help="repetitions of the 20-page comparison")
    v.add_argument("--reps-200", type=int, default=2, help="repetitions of the 200-page comparison")
    v.add_argument("--keep", action="store_true", help="keep the scratch database and Redis DB afterwards")

    j = sub.add_parser("jobs", help="version 2 jobs on the running service: scaling over the jobs pool, latency")
    j.add_argument("--only", nargs="+", choices=["scaling", "latency"])
    j.add_argument("--pages", type=int, default=1000, help="pages of the long document (default 1000)")
    j.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="processes of the jobs pool, one run each")
    j.add_argument("--latency-workers", type=int, default=2, help="jobs pool processes while latency is measured")
    j.add_argument("--latency-requests", type=int, default=60, help="one-page conversions per latency series")
    j.add_argument(
        "--latency-nice", type=int, nargs="+", default=[0, 10], help="SVCX_JOB_WORKER_NICE values, one latency run each"
    )
    j.add_argument(
        "--latency-background",
        type=int,
        nargs="+",
        default=[0, 2],
        help="CPU-bound background processes (other tenants), one latency run each",
    )
    j.add_argument("--scaling-nice", type=int, default=0, help="SVCX_JOB_WORKER_NICE of the scaling runs (default 0)")
    j.add_argument(
        "--netns",
        action="store_true",
        help="jobs workers in network namespaces of their own, on the bench's own PostgreSQL, Redis and S3 (root)",
    )
    j.add_argument(
        "--own-backends",
        action="store_true",
        help="a PostgreSQL cluster and redis-server of the bench's own on 127.0.0.1 (root), not --database-url/--redis-url",
    )
    j.add_argument("--netns-rate", help="with --netns: cap each worker's link (tc tbf rate, e.g. 1gbit)")
    scratch_backends(j, "svcx_bench_jobs", 2)
    j.add_argument("--keep", action="store_true", help="keep the scratch database and Redis DB afterwards")

    f = sub.add_parser("faults", help="fault suite: processes killed and backends restarted, money checked")
    f.add_argument("--only", nargs="+", help="scenario names (results then go to faults-partial.md)")
    f.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="service settings for this run, e.g. SVCX_POOL_SHARE_PERCENT=100 (the report states them)",
    )
    f.add_argument(
        "--webhook-outage",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long the webhook receiver of job_webhook_receiver_down is out of order (default 600: issue 26's 10 minutes)",
    )
    sub.add_parser("elements", help="size of the JSON result with the element layer")
    c = sub.add_parser("chunks", help="chunks against the authored corpus's structure")
    c.add_argument("--budgets", nargs="+", type=int, default=[128, 256, 512], help="max_tokens to measure")
    c.add_argument("--limit", type=int, default=0, help="only the first N documents (0: all)")
    i = sub.add_parser("instructions", help="CPU instructions per cache hit in the web tier (valgrind callgrind)")
    i.add_argument("--compare", nargs="*", default=[], help="other checkouts (git worktrees) measured the same way")
    scratch_backends(i, "svcx_bench_instr", 11, "; a suffix is added per run")
    i.add_argument("--warm", type=int, default=20, help="cache hits before counting (default 20)")
    i.add_argument("--hits", type=int, default=100, help="cache hits counted (default 100)")
    i.add_argument("--runs", type=int, default=1, help="measurements per checkout (default 1)")
    o = sub.add_parser("ocr", help="OCR systems on scans made from documents whose text is known")
    o.add_argument("--systems", nargs="+", default=["engine", "tesseract", "ocrmypdf", "rapidocr"])
    o.add_argument("--rapidocr-pages", type=int, default=12, help="pages RapidOCR reads (0: all; ~15 CPU s each)")
    o.add_argument("--reuse-scans", action="store_true", help="keep the scans of the last run")
    o.add_argument("--reuse-outputs", nargs="*", default=[], help="systems whose last outputs are scored again")
    sub.add_parser("ocr-report", help="re-render ocr.md from ocr.json")
    args = parser.parse_args(argv)

    if args.command == "setup":
        return setup()
    if args.command == "quality":
        from bench.quality.run import run

        return run(args.systems, args.cases, args.jobs, args.timeout, argv)
    if args.command == "quality-report":
        from bench.quality.run import rerender

        return rerender()
    if args.command == "real":
        from bench.real.run import run as run_real

        return run_real(args.systems, args.sets, args.documents, args.jobs, args.timeout, argv, args.fold, args.convert)
    if args.command == "real-report":
        from bench.real.run import rerender as rerender_real

        return rerender_real("real-partial" if args.partial else "real")
    if args.command == "faults":
        from bench.faults import run as run_faults

        return run_faults(args, argv)
    if args.command == "chunks":
        from bench.chunks import run as run_chunks

        return run_chunks(args.budgets, args.limit, argv)
    if args.command == "elements":
        from bench.elements import run as run_elements

        return run_elements(argv[1:])
    if args.command == "instructions":
        from bench.instructions import run as run_instructions

        return run_instructions(args, argv)
    if args.command == "ocr":
        from bench.ocr.run import run as run_ocr

        return run_ocr(args.systems, args.rapidocr_pages, args.reuse_scans, argv, args.reuse_outputs)
    if args.command == "ocr-report":
        from bench.ocr.run import rerender as rerender_ocr

        return rerender_ocr()
    if args.command == "parts":
        from bench.parts import run as run_parts

        return run_parts(args.pages, args.processes, args.part_pages, argv[1:])
    if args.command == "jobs":
        from bench.jobs import run as run_jobs

        return run_jobs(args, argv)
    if args.command == "service":
        from bench.service import run as run_service

        return run_service(args, argv)
    if args.engines:
        from bench.speed import run_engines

        return run_engines(args.engines, args.repeat, args.timeout, args.files, args.category, argv)
    from bench.speed import run as run_speed

    return run_speed(args.repeat, args.timeout, args.files, argv)


if __name__ == "__main__":
    raise SystemExit(main())
