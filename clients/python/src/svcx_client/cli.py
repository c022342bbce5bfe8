"""The `svcx` command: convert PDFs and folders of them, inspect one, read the account.

    svcx convert FILE_OR_DIR... [-o DIR] [--format md|json] [--pages P] [--concurrency N]
    svcx inspect FILE [--json]
    svcx account [--json]

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
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from svcx_client.client import DEFAULT_TIMEOUT, Client, __version__, environment_key
from svcx_client.errors import APIConnectionError, APIError, ConfigurationError, SvcxError
from svcx_client.models import Conversion, MarkdownConversion
from svcx_client.retry import RetryPolicy

# Errors that every other file of the run would get too: the run stops at the first.
_FATAL_TYPES = frozenset({"authentication_error"})
_FATAL_CODES = frozenset({"insufficient_scope", "ip_not_allowed", "account_suspended", "account_delinquent"})
SUFFIXES = {"md": ".md", "json": ".json"}


class UsageError(Exception):
    """A command line that cannot run: exit status 2."""


@dataclass(frozen=True)
class Job:
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


def plan(paths: Sequence[Path], out_dir: Path | None, fmt: str) -> list[Job]:
    """The conversions a run makes: each PDF named, and every *.pdf under each folder named
    (its path below the folder kept under `out_dir`). Without `out_dir` each output is written
    beside its PDF. Raises UsageError for a missing path or two PDFs with one output."""
    jobs: list[Job] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")
            jobs += [Job(pdf, (out_dir / pdf.relative_to(path) if out_dir else pdf)) for pdf in found]
        elif path.is_file():
            jobs.append(Job(path, out_dir / path.name if out_dir else path))
        else:
            raise UsageError(f"{path}: no such file or folder")
    jobs = [Job(job.source, job.output.with_suffix(SUFFIXES[fmt])) for job in jobs]
    seen: dict[Path, Path] = {}
    for job in jobs:
        other = seen.setdefault(job.output.resolve(), job.source)
        if other != job.source:
            raise UsageError(f"{other} and {job.source} would both be written to {job.output}; use -o per folder")
    return jobs


def is_done(job: Job) -> bool:
    """Skip-if-done: the output exists and is not older than its PDF. Outputs are written
    whole (a temporary file renamed) and only after a successful conversion, so one that exists
    is complete; a PDF changed since is converted again; `--force` converts everything."""
    try:
        return job.output.stat().st_mtime >= job.source.stat().st_mtime
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
    jobs = plan([Path(p) for p in args.paths], Path(args.output) if args.output else None, args.format)
    tally = Tally()
    todo = []
    for job in jobs:
        if not args.force and is_done(job):
            tally.skipped += 1
        else:
            todo.append(job)
    options: dict[str, Any] = {
        name: getattr(args, name) for name in ("pages", "tables", "password") if getattr(args, name) is not None
    }

    def convert(job: Job) -> Conversion | MarkdownConversion:
        if args.format == "md":
            result: Conversion | MarkdownConversion = client.convert(job.source, format="md", **options)
            write_whole(job.output, result.markdown)
        else:
            result = client.convert(job.source, format="json", **options)
            write_whole(job.output, json.dumps(result.raw, ensure_ascii=False, indent=2) + "\n")
        return result

    stop = threading.Event()
    progress = tqdm(total=len(todo), unit="file", file=err, disable=True if args.no_progress else None)
    try:
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            pending: dict[Future[Conversion | MarkdownConversion], Job] = {}
            queue = list(reversed(todo))
            while queue or pending:
                while queue and len(pending) < args.concurrency and not stop.is_set():
                    job = queue.pop()
                    pending[pool.submit(convert, job)] = job
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    job = pending.pop(future)
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
                        tally.failed.append(str(job.source))
                        progress.write(f"svcx: {job.source}: {describe(error)}", file=err)
                        if _is_fatal(error):
                            stop.set()
                    progress.update(1)
                    progress.set_postfix(pages=tally.pages, credits=tally.credits, refresh=False)
            tally.not_attempted = len(queue)
    finally:
        progress.close()
    print(f"svcx: {tally.line()}", file=out)
    return 1 if tally.failed or tally.not_attempted else 0


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def run_inspect(args: argparse.Namespace, client: Client, out: TextIO, err: TextIO) -> int:
    options = {name: getattr(args, name) for name in ("pages", "password") if getattr(args, name) is not None}
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
    convert.set_defaults(run=run_convert)

    inspect = commands.add_parser("inspect", help="what a PDF is, before converting it (free)")
    inspect.add_argument("file", metavar="FILE")
    inspect.add_argument("--pages", help="the pages to sample")
    inspect.add_argument("--password")
    inspect.add_argument("--json", action="store_true", help="the answer as JSON")
    inspect.set_defaults(run=run_inspect)

    account = commands.add_parser("account", help="the organization, its credits and allowance")
    account.add_argument("--json", action="store_true", help="the answer as JSON")
    account.set_defaults(run=run_account)

    for command in (convert, inspect, account):
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
