"""`svcx convert --async` and the job commands, run in-process against a scripted jobs service on
127.0.0.1: a job per PDF, the progress bar of pages, outputs written as the synchronous mode
writes them, a failed job, Ctrl-C leaving the jobs running, and `svcx jobs`, `job`, `cancel`.
(They are run against the live service by the repository's tests/clients/.)"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from scripted_server import Canned, Scripted, Seen, envelope, job, job_body
from svcx_client import cli
from test_cli import Terminal, pdfs, run


class Jobs:
    """A jobs service in a few lines: a job per PDF named `job_<stem>` with `pages` pages, which
    converts one more page each time it is read; `failing` jobs fail at their first page."""

    def __init__(self, pages: dict[str, int], failing: frozenset[str] = frozenset()) -> None:
        self.pages, self.failing = pages, failing
        self.completed: dict[str, int] = {}
        self.reads = 0
        self.lock = threading.Lock()

    def status(self, job_id: str) -> tuple[str, int]:
        done, total = self.completed[job_id], self.pages[job_id]
        if job_id in self.failing and done:
            return "failed", 0
        return ("succeeded" if done == total else "running" if done else "queued"), done

    def __call__(self, seen: Seen) -> Canned | None:
        if (seen.method, seen.path) == ("POST", "/v2/jobs"):
            found = re.search(rb'filename="(\w+)\.pdf"', seen.body)
            assert found is not None
            job_id = f"job_{found.group(1).decode()}"
            self.completed[job_id] = 0
            return job(job_id, http_status=202, total=self.pages[job_id])
        job_id = seen.path.split("/")[3]
        status, done = self.status(job_id)
        if seen.path.endswith("/result"):
            text = "\n\n".join(f"<!-- page {n} -->\n\n{job_id} page {n}" for n in range(1, done + 1)) + "\n"
            return Canned(body=text.encode(), headers={"Content-Type": "text/markdown", "X-Svcx-Job-Status": status})
        if status in ("queued", "running"):
            self.completed[job_id] = done + 1
        with self.lock:
            self.reads += 1
        error: dict[str, Any] = {
            "code": "pdf_too_complex",
            "message": "Page 1 is too complex.",
            "param": None,
            "details": {},
        }
        extra: dict[str, Any] = {"error": error} if status == "failed" else {}
        return job(job_id, status, total=self.pages[job_id], completed=done, **extra)


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "POLL_SECONDS", 0.01)


def test_async_makes_a_job_per_pdf_waits_with_a_bar_of_pages_and_writes_each_output(
    server: Scripted, tmp_path: Path
) -> None:
    pdfs(tmp_path / "in", 3)
    server.route = Jobs({"job_doc0": 1, "job_doc1": 2, "job_doc2": 3})
    terminal = Terminal()

    status, out, err = run(
        "--api-key", "k", "--base-url", server.url, "convert", "--async", tmp_path / "in", "-o", tmp_path / "out",
        err=terminal,
    )  # fmt: skip

    assert status == 0, err
    assert (tmp_path / "out" / "doc2.md").read_text() == (
        "<!-- page 1 -->\n\njob_doc2 page 1\n\n<!-- page 2 -->\n\njob_doc2 page 2\n\n<!-- page 3 -->\n\njob_doc2 page 3\n"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["doc0.md", "doc1.md", "doc2.md"]
    assert "6/6" in err  # the bar's pages, summed over the jobs
    assert "page" in err
    assert out == "svcx: 3 converted, 0 skipped (already done), 0 failed; 6 pages, 6 credits billed\n"
    assert [s.path for s in server.seen if s.method == "POST"] == ["/v2/jobs"] * 3
    seen = len(server.seen)

    again = run(
        "--api-key", "k", "--base-url", server.url, "convert", "--async", tmp_path / "in", "-o", tmp_path / "out"
    )

    assert again[:2] == (0, "svcx: 0 converted, 3 skipped (already done), 0 failed; 0 pages, 0 credits billed\n")
    assert len(server.seen) == seen


def test_a_job_that_fails_is_one_line_and_the_others_are_written(server: Scripted, tmp_path: Path) -> None:
    pdfs(tmp_path, 2)
    server.route = Jobs({"job_doc0": 2, "job_doc1": 2}, failing=frozenset({"job_doc1"}))

    status, out, err = run(
        "convert", tmp_path, "--async", "--pages", "1-2", "--api-key", "k", "--base-url", server.url
    )  # fmt: skip

    assert status == 1
    assert err.splitlines() == [
        f"svcx: {tmp_path / 'doc1.pdf'}: pdf_too_complex: Page 1 is too complex. (job job_doc1 failed)"
    ]
    assert out == "svcx: 1 converted, 0 skipped (already done), 1 failed; 2 pages, 2 credits billed\n"
    assert [p.name for p in tmp_path.glob("*.md")] == ["doc0.md"]
    assert all(b'name="options"\r\n\r\n{"pages": "1-2"}' in s.body for s in server.seen if s.method == "POST")


def test_ctrl_c_leaves_the_jobs_running_and_names_them(
    server: Scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pdfs(tmp_path, 2)
    jobs = Jobs({"job_doc0": 50, "job_doc1": 50})
    server.route = jobs

    def pause(seconds: float) -> None:
        if jobs.reads >= 2:  # each job was created and read
            raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_pause", pause)

    status, out, err = run("convert", tmp_path, "--async", "--api-key", "k", "--base-url", server.url)

    assert (status, out) == (130, "")
    assert err.splitlines() == [
        "svcx: 2 jobs left running: job_doc0 job_doc1",
        "svcx: they go on and bill when they succeed; to cancel them: svcx cancel job_doc0 job_doc1",
        "svcx: interrupted",
    ]
    assert not any(s.path.endswith("/cancel") for s in server.seen)
    assert list(tmp_path.glob("*.md")) == []


def test_jobs_job_and_cancel(server: Scripted) -> None:
    listed = {"object": "list", "data": [job_body("job_2", "running", completed=1), job_body("job_1", "succeeded")]}
    failure: dict[str, Any] = {"code": "conversion_timeout", "message": "Too slow.", "param": None, "details": {}}
    server.answers = [
        Canned(body=json.dumps({**listed, "has_more": True}).encode()),
        Canned(body=json.dumps({**listed, "has_more": False}).encode()),
        job("job_3", "failed", error=failure),
        job("job_2", "canceled"),
        envelope(409, "job_not_cancelable", "invalid_request_error", details={"status": "succeeded"}),
    ]
    connection = ("--api-key", "k", "--base-url", server.url)

    listing = run("jobs", "--limit", "2", *connection)
    as_json = run("jobs", "--status", "running", "--json", *connection)
    one = run("job", "job_3", *connection)
    canceled = run("cancel", "job_2", "job_1", *connection)

    assert listing[0] == 0
    assert listing[1].splitlines() == [
        "job_2  running    1/3 pages  3 credits held  2026-11-27 05:40:12  book.pdf",
        "job_1  succeeded  0/3 pages  3 credits billed  2026-11-27 05:40:12  book.pdf",
    ]
    assert listing[2] == "svcx: there are more jobs than these 2: --limit 4 lists more\n"
    assert [j["id"] for j in json.loads(as_json[1])] == ["job_2", "job_1"]
    assert server.seen[1].query == {"limit": ["20"], "status": ["running"]}
    assert one[1].splitlines() == [
        "job_3: failed, 0 of 3 pages converted",
        "file: book.pdf; pages: all, tables: markdown",
        "credits: 0 held, 0 billed",
        "created 2026-11-27 05:40:12, started 2026-11-27 05:40:13, finished 2026-11-27 05:40:20",
        "error: conversion_timeout: Too slow.",
    ]
    assert canceled[:2] == (1, "job_2: canceled, nothing billed\n")
    assert canceled[2].startswith("svcx: job_1: job_not_cancelable: ")
    assert [s.path for s in server.seen[-2:]] == ["/v2/jobs/job_2/cancel", "/v2/jobs/job_1/cancel"]
