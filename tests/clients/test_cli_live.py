"""The `svcx` command (clients/python, installed by requirements-dev.txt) run as a user runs it,
a subprocess, against a live service: gunicorn and a real Celery worker.

A folder is converted with bounded concurrency and a summary whose pages and credits are the
ledger's; a second run converts nothing (the server sees no request); a PDF changed since is
converted again; a failure is one line with its code and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accounts.models import Organization
from billing.models import LedgerEntry, RequestLog
from tests.conftest import WorkerProcess, text_pdf
from tests.factories import make_key, make_org

pytestmark = pytest.mark.django_db(transaction=True)

SVCX = Path(sys.executable).parent / "svcx"


def svcx(*args: object, key: str, base: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if k not in ("SVCX_KEY", "SVCX_URL")}
    env = {**inherited, "SVCX_API_KEY": key, "SVCX_BASE_URL": base}
    return subprocess.run(
        [str(SVCX), *map(str, args)], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def conversions(org: Organization) -> int:
    """Conversion requests the server answered for `org` (its request log, written before each answer)."""
    return RequestLog.objects.filter(organization=org, endpoint="/v1/convert/raw").count()


def spent(org: Organization) -> int:
    return -sum(
        LedgerEntry.objects.filter(organization=org, kind=LedgerEntry.Kind.CAPTURE).values_list("credits", flat=True)
    )


def test_a_folder_is_converted_then_resumed_and_the_summary_matches_the_ledger(
    module_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    org = make_org(credits=100)
    key = make_key(org).secret
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    text_pdf(folder / "a.pdf", ["A first page.", "A second page."])
    text_pdf(folder / "sub" / "b.pdf", ["B only page."])
    changed = text_pdf(folder / "c.pdf", ["C one.", "C two.", "C three."])
    (folder / "notes.txt").write_text("not a PDF")
    out = tmp_path / "out"

    first = svcx("convert", folder, "-o", out, "--concurrency", "2", key=key, base=module_web)

    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == ["a.md", "c.md", "sub/b.md"]
    a = (out / "a.md").read_text()
    assert a.startswith("<!-- page 1 -->")
    assert "A second page." in a
    assert first.stdout.strip() == "svcx: 3 converted, 0 skipped (already done), 0 failed; 6 pages, 6 credits billed"
    assert (spent(org), conversions(org)) == (6, 3)

    again = svcx("convert", folder, "-o", out, key=key, base=module_web)

    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "svcx: 0 converted, 3 skipped (already done), 0 failed; 0 pages, 0 credits billed"
    assert conversions(org) == 3

    later = time.time() + 5
    os.utime(changed, (later, later))  # the PDF changed after its output was written
    third = svcx("convert", folder, "-o", out, "--format", "md", key=key, base=module_web)

    assert third.returncode == 0, third.stderr
    assert third.stdout.strip() == (
        "svcx: 1 converted (1 from cache), 2 skipped (already done), 0 failed; 0 pages, 0 credits billed"
    )
    assert (spent(org), conversions(org)) == (6, 4)


def test_json_output_and_a_failure_are_reported_and_exit_non_zero(
    module_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    org = make_org(credits=100)
    key = make_key(org).secret
    good = text_pdf(tmp_path / "good.pdf", ["Good one.", "Good two."])
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"this is not a PDF")

    run = svcx("convert", good, bad, "--format", "json", "--pages", "2", "--no-progress", key=key, base=module_web)

    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    [failure] = [line for line in run.stderr.splitlines() if line.strip()]
    assert failure.startswith(f"svcx: {bad}: pdf_invalid: ")
    assert "(HTTP 422, request req_" in failure
    result = json.loads((tmp_path / "good.json").read_text())
    assert ([p["page"] for p in result["pages"]], result["credits_billed"]) == ([2], 1)
    assert not (tmp_path / "bad.json").exists()
    assert run.stdout.strip() == "svcx: 1 converted, 0 skipped (already done), 1 failed; 1 page, 1 credit billed"
    assert spent(org) == 1


def test_inspect_and_account(module_web: str, session_worker: WorkerProcess, tmp_path: Path) -> None:
    org = make_org("Inspecting", credits=40)
    minted = make_key(org)
    key = minted.secret
    pdf = text_pdf(tmp_path / "two.pdf", ["First page text.", "Second page text."])

    inspected = svcx("inspect", pdf, key=key, base=module_web)
    as_json = svcx("inspect", pdf, "--json", key=key, base=module_web)
    for_job = svcx("inspect", pdf, "--ocr", "force", "--ocr-languages", "en", "--pages", "2", key=key, base=module_web)
    account = svcx("account", key=key, base=module_web)

    assert inspected.returncode == 0, inspected.stderr
    assert inspected.stdout.splitlines()[0].startswith(f"{pdf}: 2 pages, PDF ")
    assert "page 2: text layer" in inspected.stdout
    assert json.loads(as_json.stdout)["page_count"] == 2
    assert for_job.returncode == 0, for_job.stderr
    assert "a job of 1 page(s): read by OCR 2; 3 credits (1 a page, 3 a page read by OCR)" in for_job.stdout
    assert account.returncode == 0, account.stderr
    assert account.stdout.splitlines()[:2] == [
        f"Inspecting ({org.id}), active; live key {minted.api_key.id}",
        "credits: 40 available (40 balance, 0 held)",
    ]
    assert spent(org) == 0


def test_an_error_is_one_line_with_its_code(module_web: str, tmp_path: Path) -> None:
    bad_key = svcx("account", key="svcx_sk_live_" + "0" * 43 + "_000000", base=module_web)
    no_key = svcx("account", key="", base=module_web)
    missing = svcx("convert", tmp_path / "absent.pdf", key="svcx_sk_live_x", base=module_web)

    assert bad_key.returncode == 1
    assert bad_key.stderr.startswith("svcx: error: invalid_api_key: ")
    assert len(bad_key.stderr.splitlines()) == 1
    assert (no_key.returncode, no_key.stderr) == (2, "svcx: error: no API key: pass --api-key or set SVCX_API_KEY\n")
    assert (missing.returncode, missing.stderr) == (
        2,
        f"svcx: error: {tmp_path / 'absent.pdf'}: no such file or folder\n",
    )
