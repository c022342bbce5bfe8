"""Every file of the real-world corpus converts or fails with the error its manifest implies.

Each file runs in a forked child process so that a hang is a test failure (60 s per file)
rather than a stuck suite. Skipped when the shared corpus is not checked out.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

from tests.conftest import CORPUS, CORPUS_ABSENT

MANIFEST = CORPUS / "manifest.json"
TIME_LIMIT_SECONDS = 60

ALWAYS_CONVERT = {
    "text",
    "tables",
    "multicolumn",
    "long",
    "cjk_unicode",
    "forms",
    "corrupt_recoverable",
}
COMPLEX_ERRORS = {"document_too_complex", "pdf_too_complex", "pdf_corrupt", "pdf_parse_failed"}


def _records() -> list[dict[str, Any]]:
    if not MANIFEST.exists():
        return []
    return list(json.loads(MANIFEST.read_text())["files"])


def _attempt(path: str, password: str | None) -> dict[str, Any]:
    from conversion.engine import EngineError, convert, inspect

    outcome: dict[str, Any] = {}
    try:
        info = inspect(path, password=password)
        outcome["inspect"] = {
            "page_count": info.page_count,
            "password_required": info.password_required,
        }
    except EngineError as exc:
        outcome["inspect"] = {"error": exc.code}
    started = time.monotonic()
    try:
        result = convert(path, password=password)
        outcome["convert"] = {
            "page_count": result.page_count,
            "pages": len(result.pages),
            "chars": len(result.markdown),
        }
    except EngineError as exc:
        outcome["convert"] = {"error": exc.code, "message": exc.message}
    outcome["seconds"] = time.monotonic() - started
    return outcome


def _child(conn: Any, path: str, passwords: list[str | None]) -> None:
    try:
        conn.send(("ok", [_attempt(path, pw) for pw in passwords]))
    except BaseException as exc:
        conn.send(("exception", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _run(path: Path, passwords: list[str | None]) -> list[dict[str, Any]]:
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, str(path), passwords))
    proc.start()
    child.close()
    limit = TIME_LIMIT_SECONDS * len(passwords)
    if not parent.poll(limit):
        proc.kill()
        proc.join()
        pytest.fail(f"{path.name}: no result within {limit} s")
    status, payload = parent.recv()
    proc.join()
    assert status == "ok", f"{path.name}: unexpected exception escaped: {payload}"
    return cast(list[dict[str, Any]], payload)


def _allowed(record: dict[str, Any], with_password: bool) -> set[str]:
    """Outcomes ("converted" or an error code) the manifest allows for one attempt."""
    category = record["category"]
    no_text = record["text_chars_first_pages"] == 0
    allowed: set[str]
    if category in ALWAYS_CONVERT:
        allowed = {"converted"}
    elif category == "encrypted_user":
        if not with_password:
            allowed = (
                {"pdf_unsupported_security"} if "unsupported" in str(record["likely_error_code"]) else {"pdf_encrypted"}
            )
        elif record["extraction_allowed"] is False:
            allowed = {"pdf_extraction_not_permitted"}
        else:
            allowed = {"converted"}
    elif category == "encrypted_owner_restricted":
        allowed = {"converted", "pdf_extraction_not_permitted"}
    elif category == "xfa":
        allowed = {"converted", "pdf_is_xfa"}
        if record["extraction_allowed"] is False:
            allowed.add("pdf_extraction_not_permitted")
    elif category == "complex":
        allowed = {"converted"} | COMPLEX_ERRORS
    else:
        allowed = {str(record["likely_error_code"])}
    if no_text and "converted" in allowed:
        allowed.add("document_has_no_text_layer")
    return allowed


def _or_absent(params: list[Any], width: int = 1) -> list[Any]:
    """The parameters, or one that skips with the reason when the shared corpus is absent."""
    if params:
        return params
    return [pytest.param(*([None] * width), marks=pytest.mark.skip(reason=CORPUS_ABSENT), id="corpus-absent")]


def _expected_pages(record: dict[str, Any]) -> int | None:
    if record["pages"] is not None:
        return int(record["pages"])
    if record["pdfminer_ok"]:
        return int(record["details"]["pdfminer_pages"])
    return None


@pytest.mark.parametrize("record", _or_absent(_records()), ids=lambda r: r["file"])
def test_corpus_file_converts_or_fails_with_its_expected_error(record: dict[str, Any]) -> None:
    path = CORPUS / "files" / record["file"]
    if not path.exists():
        pytest.skip(f"{path} is absent from the shared corpus")
    passwords: list[str | None] = [None]
    if record["password"] is not None:
        passwords.append(record["password"])
    for password, outcome in zip(passwords, _run(path, passwords), strict=True):
        converted = outcome["convert"]
        got = converted.get("error", "converted")
        assert got in _allowed(record, password is not None), (record["file"], password, converted)
        assert outcome["seconds"] < TIME_LIMIT_SECONDS
        if got == "converted":
            expected = _expected_pages(record)
            assert converted["page_count"] == expected
            assert converted["pages"] == expected
            if record["text_chars_first_pages"] > 0:
                assert converted["chars"] > 0
        inspected = outcome["inspect"]
        if got in {"pdf_invalid", "pdf_corrupt", "pdf_unsupported_security"}:
            assert inspected == {"error": got}
        elif got == "pdf_encrypted":
            assert inspected == {"page_count": None, "password_required": True}
        elif "error" not in inspected:
            assert inspected["page_count"] == _expected_pages(record)


def test_corpus_is_present_or_skipped() -> None:
    if not MANIFEST.exists():
        pytest.skip(CORPUS_ABSENT)
    assert len(_records()) == json.loads(MANIFEST.read_text())["count"]


def _groundtruth_pairs() -> list[tuple[str, str]]:
    pairs = []
    for record in _records():
        for truth in record["groundtruth"] or []:
            # OCR references describe text the PDF does not carry; JSON is metadata.
            if "ocr" in truth or truth.endswith(".json"):
                continue
            pairs.append((record["file"], truth))
    return pairs


def _words(text: str) -> Counter[str]:
    text = re.sub(r"[#*_`|\\-]+", " ", text)
    return Counter(word.casefold() for word in re.findall(r"\w+", text))


@pytest.mark.parametrize(("name", "truth"), _or_absent(_groundtruth_pairs(), width=2), ids=lambda v: str(v))
def test_corpus_text_matches_reference_extractions(name: str, truth: str) -> None:
    from conversion.engine import convert

    ours = _words(convert(CORPUS / "files" / name).markdown)
    reference = _words((CORPUS / truth).read_text(errors="replace"))
    common = sum((ours & reference).values())
    # Loose: docling and PDFBox make their own choices (headers, hyphens, cid glyphs).
    assert common / sum(reference.values()) >= 0.95
    assert common / sum(ours.values()) >= 0.8
