"""The `svcx` command's own behaviour, run in-process against a scripted server on 127.0.0.1:
bounded concurrency, the progress bar, a run stopped by an error every file would get, and the
command lines it refuses. (It is run against the live service by the repository's tests/clients/.)"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from scripted_server import Scripted, envelope, markdown
from svcx_client.cli import main


class Terminal(io.StringIO):
    """Standard error as a terminal, where the progress bar shows."""

    def isatty(self) -> bool:
        return True


def pdfs(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = [folder / f"doc{n}.pdf" for n in range(count)]
    for path in made:
        path.write_bytes(b"%PDF-1.7 " + path.name.encode())
    return made


def run(*argv: object, err: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), err or io.StringIO()
    status = main([str(a) for a in argv], out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_a_folder_is_converted_at_most_concurrency_at_a_time_with_a_progress_bar(
    server: Scripted, tmp_path: Path
) -> None:
    pdfs(tmp_path / "in", 6)
    server.answers = [markdown(f"<!-- page 1 -->\n\nDoc {n}\n", delay=0.2) for n in range(6)]
    terminal = Terminal()

    status, out, err = run(
        "--api-key", "k", "--base-url", server.url, "convert", tmp_path / "in", "-o", tmp_path / "out",
        "--concurrency", "2", err=terminal,
    )  # fmt: skip

    assert status == 0, err
    assert server.most_in_flight == 2
    assert len(list((tmp_path / "out").glob("*.md"))) == 6
    assert "6/6" in err  # the bar's last state
    assert out == "svcx: 6 converted, 0 skipped (already done), 0 failed; 6 pages, 6 credits billed\n"


def test_an_error_every_file_would_get_stops_the_run(server: Scripted, tmp_path: Path) -> None:
    pdfs(tmp_path, 5)
    server.answers = [envelope(403, "account_suspended", "permission_error")]

    status, out, err = run(
        "--base-url", server.url, "convert", tmp_path, "--concurrency", "1", "--api-key", "k"
    )  # fmt: skip

    assert status == 1
    assert len(server.seen) == 1
    assert err.splitlines() == [
        f"svcx: {tmp_path / 'doc0.pdf'}: account_suspended: The account_suspended message. (HTTP 403, request req_test)"
    ]
    assert out == "svcx: 0 converted, 0 skipped (already done), 1 failed, 4 not attempted; 0 pages, 0 credits billed\n"
    assert list(tmp_path.glob("*.md")) == []


def test_two_pdfs_with_one_output_are_refused_before_any_request(server: Scripted, tmp_path: Path) -> None:
    pdfs(tmp_path / "a", 1)
    pdfs(tmp_path / "b", 1)

    status, _, err = run(
        "convert", tmp_path / "a" / "doc0.pdf", tmp_path / "b" / "doc0.pdf", "-o", tmp_path / "out",
        "--api-key", "k", "--base-url", server.url,
    )  # fmt: skip

    assert status == 2
    assert err.startswith("svcx: error: ")
    assert "would both be written to" in err
    assert server.seen == []


def test_a_missing_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SVCX_API_KEY", "SVCX_KEY"):
        monkeypatch.delenv(name, raising=False)

    assert run("account") == (2, "", "svcx: error: no API key: pass --api-key or set SVCX_API_KEY\n")
