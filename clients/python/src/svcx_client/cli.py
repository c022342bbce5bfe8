"""The `svcx` command: convert PDFs and folders of them, inspect one, read the account, follow
and cancel jobs.

    svcx convert FILE_OR_DIR... [-o DIR] [--format md|json] [--pages P] [--concurrency N] [--async]
    svcx inspect FILE [--pages P] [--ocr off|auto|force [--ocr-languages en,de]] [--json]
    svcx account [--json]
    svcx jobs [--status S] [--limit N] [--json]
    svcx job ID [--json]
    svcx cancel ID...

The key comes from --api-key or SVCX_API_KEY (or SVCX_KEY), the address from --base-url or
SVCX_BASE_URL (or SVCX_URL).
Exit status: 0 when everything succeeded, 1 when a conversion or a request failed, 2 for a
wrong command line (or a missing key), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from svcx_client.client import DEFAULT_TIMEOUT, Client, __version__, environment_key
from svcx_client.errors import APIConnectionError, APIError, ConfigurationError, SvcxError
from svcx_client.models import Conversion, Inspection, Job, JobEstimate, MarkdownConversion
from svcx_client.retry import RetryPolicy

# Errors that every other file of the run would get too: the run stops at the first.
_FATAL_TYPES = frozenset({"authentication_error"})
_FATAL_CODES = frozenset({"insufficient_scope", "ip_not_allowed", "account_suspended", "account_delinquent"})
SUFFIXES = {"md": ".md", "json": ".json"}
# Between two readings of the running jobs of `convert --async`.
POLL_SECONDS = 1.0


class UsageError(Exception):
    """A command line that cannot run: exit status 2."""


@dataclass(frozen=True)
class Target:
    """A PDF to convert and the file its output goes to."""

    source: Path
    output: Path


@dataclass
class Tally:
    """What a `convert` run did, for its summary."""

    converted: int = 0
    cached: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    not_attempted: int = 0
    pages: int = 0
    credits: int = 0

    def line(self) -> str:
        parts = [f"{self.converted} converted" + (f" ({self.cached} from cache)" if self.cached else "")]
        parts.append(f"{self.skipped} skipped (already done)")
        parts.append(f"{len(self.failed)} failed")
        if self.not_attempted:
            parts.append(f"{self.not_attempted} not attempted")
        return f"{', '.join(parts)}; {_count(self.pages, 'page')}, {_count(self.credits, 'credit')} billed"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def plan(paths: Sequence[Path], out_dir: Path | None, fmt: str) -> list[Target]:
    """The conversions a run makes: each PDF named, and every *.pdf under each folder named
    (its path below the folder kept under `out_dir`). Without `out_dir` each output is written
    beside its PDF. Raises UsageError for a missing path or two PDFs with one output."""
    targets: list[Target] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")
            targets += [Target(pdf, (out_dir / pdf.relative_to(path) if out_dir else pdf)) for pdf in found]
        elif path.is_file():
            targets.append(Target(path, out_dir / path.name if out_dir else path))
        else:
            raise UsageError(f"{path}: no such file or folder")
    targets = [Target(t.source, t.output.with_suffix(SUFFIXES[fmt])) for t in targets]
    seen: dict[Path, Path] = {}
    for target in targets:
        other = seen.setdefault(target.output.resolve(), target.source)
        if other != target.source:
            raise UsageError(f"{other} and {target.source} would both be written to {target.output}; use -o per folder")
    return targets


def is_done(target: Target) -> bool:
    """Skip-if-done: the output exists and is not older than its PDF. Outputs are written
    whole (a temporary file renamed) and only after a successful conversion, so one that exists
    is complete; a PDF changed since is converted again; `--force` converts everything."""
    try:
        return target.output.stat().st_mtime >= target.source.stat().st_mtime
    except FileNotFoundError:
        return False


def write_whole(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def describe(error: BaseException) -> str:
    """An error as one line: the code and the message (and the status and request id)."""
    if isinstance(error, APIError):
        return error.summary()
    if isinstance(error, APIConnectionError):
        return f"connection_error: {error.message}"
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {error.strerror or error} ({error.filename})"
    return f"{type(error).__name__}: {error}"


def _is_fatal(error: BaseException) -> bool:
    return isinstance(error, APIError) and (error.type in _FATAL_TYPES or error.code in _FATAL_CODES)


def run_convert(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    targets = plan([Path(p) for p in args.paths], Path(args.output) if args.output else None, args.format)
    tally = Tally()
    todo = []
    for target in targets:
        if not args.force and is_done(target):
            tally.skipped += 1
        else:
            todo.append(target)
    options: dict[str, Any] = {
        name: getattr(args, name) for name in ("pages", "tables", "password") if getattr(args, name) is not None
    }
    progress = tqdm(
        total=0 if args.use_jobs else len(todo),
        unit="page" if args.use_jobs else "file",
        file=err,
        disable=True if args.no_progress else None,
    )
    run = Converting(args, client, err, progress, options, tally)
    try:
        if args.use_jobs:
            JobsRun(run).run(todo)
        else:
            _convert_now(run, todo)
    finally:
        progress.close()
    print(f"svcx: {tally.line()}", file=out)
    return 1 if tally.failed or tally.not_attempted else 0


@dataclass
class Converting:
    """What a `convert` run works with, and counts in."""

    args: argparse.Namespace
    client: Client
    err: TextIO
    progress: tqdm[Any]
    options: dict[str, Any]
    tally: Tally

    def fail(self, source: Path, line: str) -> None:
        """A PDF that failed: one line on standard error."""
        self.tally.failed.append(str(source))
        self.progress.write(f"svcx: {source}: {line}", file=self.err)

    def output(self, target: Target, result: Conversion | MarkdownConversion) -> None:
        """Write a result as the command's `--format` has it."""
        if isinstance(result, MarkdownConversion):
            write_whole(target.output, result.markdown)
        else:
            write_whole(target.output, json.dumps(result.raw, ensure_ascii=False, indent=2) + "\n")


def _convert_now(run: Converting, todo: list[Target]) -> None:
    """Each PDF converted by POST /v1/convert, `--concurrency` at a time."""
    args, tally, progress = run.args, run.tally, run.progress

    def convert(target: Target) -> Conversion | MarkdownConversion:
        if args.format == "md":
            result: Conversion | MarkdownConversion = run.client.convert(target.source, format="md", **run.options)
        else:
            result = run.client.convert(target.source, format="json", **run.options)
        run.output(target, result)
        return result

    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        pending: dict[Future[Conversion | MarkdownConversion], Target] = {}
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < args.concurrency and not stop.is_set():
                target = queue.pop()
                pending[pool.submit(convert, target)] = target
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                target = pending.pop(future)
                error = future.exception()
                if error is None:
                    result = future.result()
                    tally.converted += 1
                    tally.cached += result.cached
                    tally.pages += result.pages_billed
                    tally.credits += result.credits_billed
                else:
                    if not isinstance(error, SvcxError | OSError):
                        raise error
                    run.fail(target.source, describe(error))
                    if _is_fatal(error):
                        stop.set()
                progress.update(1)
                progress.set_postfix(pages=tally.pages, credits=tally.credits, refresh=False)
        tally.not_attempted = len(queue)


def _pause(seconds: float) -> None:
    time.sleep(seconds)


@dataclass
class Tracked:
    """A job of `convert --async`, as last read, and the PDF it converts."""

    target: Target
    job: Job


class JobsRun:
    """`convert --async`: a job per PDF (created `--concurrency` at a time), read every
    POLL_SECONDS until each ends, the result of each that succeeded written as the
    synchronous mode writes it. The progress bar counts the pages of every job: those converted
    of those selected. Interrupted (Ctrl-C), the jobs go on: their ids are printed."""

    def __init__(self, run: Converting) -> None:
        self.converting = run
        self.client, self.tally, self.progress = run.client, run.tally, run.progress
        self.creating: dict[Future[Job], Target] = {}
        self.running: dict[str, Tracked] = {}
        self.writing: dict[Future[None], Tracked] = {}
        self.ended: list[Tracked] = []

    def run(self, todo: list[Target]) -> None:
        pool = ThreadPoolExecutor(max_workers=self.converting.args.concurrency)
        try:
            for target in todo:
                self.creating[pool.submit(self.client.create_job, target.source, **self.converting.options)] = target
            while self.creating or self.running or self.writing:
                self._created()
                self._poll(pool)
                self._written()
                self._show()
                if self.creating or self.running or self.writing:
                    _pause(POLL_SECONDS)
        except KeyboardInterrupt:
            self._interrupted(pool)
            raise
        finally:
            pool.shutdown(wait=True)

    def _created(self) -> None:
        for future in [f for f in self.creating if f.done()]:
            target = self.creating.pop(future)
            if future.cancelled():
                self.tally.not_attempted += 1
                continue
            error = future.exception()
            if error is None:
                job = future.result()
                self.running[job.id] = Tracked(target, job)
                self.progress.total += job.pages_total
                continue
            if not isinstance(error, SvcxError | OSError):
                raise error
            self.converting.fail(target.source, describe(error))
            if _is_fatal(error):
                for other in self.creating:
                    other.cancel()

    def _poll(self, pool: ThreadPoolExecutor) -> None:
        for tracked in list(self.running.values()):
            job_id = tracked.job.id
            try:
                tracked.job = self.client.get_job(job_id)
            except SvcxError as error:
                del self.running[job_id]
                self.converting.fail(tracked.target.source, f"{describe(error)} (job {job_id})")
                continue
            if not tracked.job.ended:
                continue
            del self.running[job_id]
            self.ended.append(tracked)
            if tracked.job.status == "succeeded":
                # Billed now, whether or not its output can be written: the summary is the ledger's.
                self.tally.pages += tracked.job.pages_billed
                self.tally.credits += tracked.job.credits_billed
                self.writing[pool.submit(self._write, tracked)] = tracked
            else:
                self.converting.fail(tracked.target.source, _job_failure(tracked.job))

    def _write(self, tracked: Tracked) -> None:
        job_id = tracked.job.id
        result = (
            self.client.job_markdown(job_id) if self.converting.args.format == "md" else self.client.job_result(job_id)
        )
        self.converting.output(tracked.target, result)

    def _written(self) -> None:
        for future in [f for f in self.writing if f.done()]:
            tracked = self.writing.pop(future)
            error = future.exception()
            if error is None:
                self.tally.converted += 1
            elif isinstance(error, SvcxError | OSError):
                self.converting.fail(
                    tracked.target.source, f"{describe(error)} (job {tracked.job.id}, which succeeded)"
                )
            else:
                raise error

    def _show(self) -> None:
        jobs = [t.job for t in (*self.running.values(), *self.ended)]
        self.progress.n = sum(job.pages_total if job.ended else job.pages_completed for job in jobs)
        self.progress.set_postfix(running=len(self.running), refresh=False)
        self.progress.refresh()

    def _interrupted(self, pool: ThreadPoolExecutor) -> None:
        """The jobs not created yet are not; those being created, and the results being
        written, are waited for (a second Ctrl-C stops waiting); the jobs left running are named."""
        for future in self.creating:
            future.cancel()
        try:
            pool.shutdown(wait=True)
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
        self._created()
        self._written()
        self.progress.close()
        left = sorted(self.running)
        if left:
            ids = " ".join(left)
            err = self.converting.err
            print(f"svcx: {_count(len(left), 'job')} left running: {ids}", file=err)
            print(f"svcx: they go on and bill when they succeed; to cancel them: svcx cancel {ids}", file=err)


def _job_failure(job: Job) -> str:
    if job.status == "canceled":
        return f"job_canceled: the job {job.id} was canceled"
    if job.error is None:
        return f"job_failed: the job {job.id} failed"
    return f"{job.error.code}: {job.error.message} (job {job.id} failed)"


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def run_inspect(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    options = {name: getattr(args, name) for name in ("pages", "password") if getattr(args, name) is not None}
    found: Inspection
    estimate: JobEstimate | None = None
    if args.ocr is not None or args.ocr_languages is not None:
        # A job's pre-flight (POST /v2/inspect): what the job would read by OCR and cost.
        scan: dict[str, Any] = {"ocr": args.ocr or "off", **options}
        if args.ocr_languages is not None:
            scan["ocr_languages"] = [code.strip() for code in args.ocr_languages.split(",") if code.strip()]
        for_job = client.inspect_job(Path(args.file), **scan)
        found, estimate = for_job, for_job.estimate
    else:
        found = client.inspect(Path(args.file), **options)
    if args.json:
        print(json.dumps(found.raw, ensure_ascii=False, indent=2), file=out)
        return 0
    lines = [
        f"{args.file}: {found.page_count} pages, PDF {found.pdf_version}",
        f"encrypted: {_yes(found.encrypted)}, password required: {_yes(found.password_required)}, "
        f"extraction allowed: {_yes(found.extraction_allowed)}",
        f"XFA: {_yes(found.xfa)}, outline items: {found.outline_items}, repaired: {_yes(found.repaired)}",
    ]
    for page in found.pages:
        layer = "text layer" if page.has_text_layer else "no text layer"
        sample = " ".join(page.sample.split())[:60]
        lines.append(f"page {page.page}: {layer}, {page.chars} characters: {sample!r}")
    if estimate is not None:
        read = [str(p.page) for p in estimate.plan if p.ocr]
        lines.append(
            f"a job of {estimate.pages} page(s): read by OCR {', '.join(read) or 'none'}; {estimate.credits} credits "
            f"({estimate.credits_per_page} a page, {estimate.credits_per_ocr_page} a page read by OCR)"
        )
    lines += [f"warning: {w}" for w in found.warnings]
    print("\n".join(lines), file=out)
    return 0


def run_account(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    account = client.account()
    if args.json:
        print(json.dumps(account.raw, ensure_ascii=False, indent=2), file=out)
        return 0
    credits, allowance = account.credits, account.test_allowance
    resets = allowance.resets_at.date().isoformat() if allowance.resets_at else "unknown"
    print(
        f"{account.name} ({account.id}), {account.status}; {account.environment} key {account.api_key_id}\n"
        f"credits: {credits.available} available ({credits.balance} balance, {credits.held} held)\n"
        f"test allowance: {allowance.used} of {allowance.limit} pages used, resets {resets}",
        file=out,
    )
    return 0


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def _job_line(job: Job) -> str:
    """A job in `svcx jobs`: id, status, pages, credits, creation time (UTC), file."""
    if job.status == "succeeded":
        credits = f"{_count(job.credits_billed, 'credit')} billed"
    elif job.ended:
        credits = "0 credits billed"
    else:
        credits = f"{_count(job.credits_held, 'credit')} held"
    pages = f"{job.pages_completed}/{job.pages_total} pages"
    return f"{job.id}  {job.status:<9}  {pages}  {credits}  {_when(job.created_at)}  {job.filename or '-'}"


def run_jobs(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    page = client.jobs(limit=args.limit, status=args.status)
    if args.json:
        print(json.dumps([job.raw for job in page], ensure_ascii=False, indent=2), file=out)
    elif not page.data:
        print("no jobs" + (f" {args.status}" if args.status else ""), file=out)
    else:
        print("\n".join(_job_line(job) for job in page), file=out)
    if page.has_more:
        print(f"svcx: there are more jobs than these {len(page)}: --limit {2 * args.limit} lists more", file=err)
    return 0


def run_job(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    job = client.get_job(args.id)
    if args.json:
        print(json.dumps(job.raw, ensure_ascii=False, indent=2), file=out)
        return 0
    options = job.options
    lines = [
        f"{job.id}: {job.status}, {job.pages_completed} of {_count(job.pages_total, 'page')} converted",
        f"file: {job.filename or '-'}; pages: {options.pages or 'all'}, tables: {options.tables}",
        f"credits: {job.credits_held} held, {job.credits_billed} billed",
        f"created {_when(job.created_at)}, started {_when(job.started_at)}, finished {_when(job.finished_at)}",
    ]
    if job.error is not None:
        lines.append(f"error: {job.error.code}: {job.error.message}")
    lines += [f"warning: {w}" for w in job.warnings]
    print("\n".join(lines), file=out)
    return 0


def run_cancel(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    failed = False
    for job_id in args.ids:
        try:
            job = client.cancel_job(job_id)
        except SvcxError as error:
            failed = True
            print(f"svcx: {job_id}: {describe(error)}", file=err)
            if _is_fatal(error):
                break
            continue
        print(f"{job.id}: {job.status}, nothing billed", file=out)
    return 1 if failed else 0


def _connection_options(parser: argparse.ArgumentParser, default: Any) -> None:
    """The options every command takes, before or after its name (`default`: SUPPRESS on the
    commands, so that one given before the name is not overwritten)."""
    parser.add_argument("--api-key", default=default, help="the API key (default: $SVCX_API_KEY)")
    parser.add_argument("--base-url", default=default, help="the service (default: $SVCX_BASE_URL)")
    parser.add_argument("--timeout", type=float, default=default, help="seconds per attempt (default: 150)")
    parser.add_argument("--max-retries", type=int, default=default, help="retries of a retryable error (default: 4)")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="svcx", description="Convert PDFs to Markdown or JSON with svcx.")
    root.add_argument("--version", action="version", version=f"svcx-client {__version__}")
    _connection_options(root, None)
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    convert = commands.add_parser(
        "convert",
        help="convert PDFs, and every PDF under folders",
        description="Convert PDFs (every *.pdf under a folder). An output that exists and is not older than its "
        "PDF is skipped, so an interrupted run resumes where it stopped; --force converts again.",
    )
    convert.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    convert.add_argument("-o", "--output", metavar="DIR", help="write outputs here (default: beside each PDF)")
    convert.add_argument("--format", choices=("md", "json"), default="md", help="output format (default: md)")
    convert.add_argument("--pages", help='pages of each PDF, e.g. "1-3,7,10-" (default: all)')
    convert.add_argument("--tables", choices=("markdown", "html", "text"))
    convert.add_argument("--password", help="the PDFs' password")
    convert.add_argument("--concurrency", type=_positive, default=4, help="conversions at once (default: 4)")
    convert.add_argument("--force", action="store_true", help="convert also what is already done")
    convert.add_argument("--no-progress", action="store_true", help="no progress bar")
    convert.add_argument(
        "--async",
        dest="use_jobs",
        action="store_true",
        help="convert each PDF as a job in the background (up to 5,000 pages) and wait for them all with a progress "
        "bar of pages; interrupted, the jobs go on",
    )
    convert.set_defaults(run=run_convert)

    inspect = commands.add_parser("inspect", help="what a PDF is, before converting it (free)")
    inspect.add_argument("file", metavar="FILE")
    inspect.add_argument("--pages", help="the pages to sample")
    inspect.add_argument("--password")
    inspect.add_argument(
        "--ocr",
        choices=("off", "auto", "force"),
        help="also estimate a job with this OCR option: which pages it reads by OCR and its credits",
    )
    inspect.add_argument("--ocr-languages", metavar="CODES", help='with --ocr: ISO 639-1 codes, e.g. "en,de"')
    inspect.add_argument("--json", action="store_true", help="the answer as JSON")
    inspect.set_defaults(run=run_inspect)

    account = commands.add_parser("account", help="the organization, its credits and allowance")
    account.add_argument("--json", action="store_true", help="the answer as JSON")
    account.set_defaults(run=run_account)

    jobs = commands.add_parser("jobs", help="the jobs, newest first")
    jobs.add_argument("--status", choices=("queued", "running", "succeeded", "failed", "canceled"))
    jobs.add_argument("--limit", type=_positive, default=20, help="at most this many (default: 20)")
    jobs.add_argument("--json", action="store_true", help="the jobs as JSON")
    jobs.set_defaults(run=run_jobs)

    job = commands.add_parser("job", help="one job: its status, pages and credits")
    job.add_argument("id", metavar="ID")
    job.add_argument("--json", action="store_true", help="the answer as JSON")
    job.set_defaults(run=run_job)

    cancel = commands.add_parser("cancel", help="cancel queued or running jobs: they bill nothing")
    cancel.add_argument("ids", nargs="+", metavar="ID")
    cancel.set_defaults(run=run_cancel)

    for command in (convert, inspect, account, jobs, job, cancel):
        _connection_options(command, argparse.SUPPRESS)
    return root


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line; returns the exit status. Errors are one line on stderr, never a
    traceback."""
    out, err = out or sys.stdout, err or sys.stderr
    args = parser().parse_args(argv)
    defaults = RetryPolicy()
    run: Callable[[argparse.Namespace, Client, TextIO, TextIO], int] = args.run
    try:
        if not (args.api_key or environment_key()):
            raise UsageError("no API key: pass --api-key or set SVCX_API_KEY")
        retry = RetryPolicy(max_retries=args.max_retries if args.max_retries is not None else defaults.max_retries)
        with Client(
            args.api_key, base_url=args.base_url, timeout=args.timeout or DEFAULT_TIMEOUT, retry=retry
        ) as client:
            return run(args, client, out, err)
    except (ConfigurationError, UsageError) as error:
        print(f"svcx: error: {error}", file=err)
        return 2
    except (SvcxError, OSError) as error:
        print(f"svcx: error: {describe(error)}", file=err)
        return 1
    except KeyboardInterrupt:
        print("svcx: interrupted", file=err)
        return 130
