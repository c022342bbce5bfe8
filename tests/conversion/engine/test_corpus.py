"""Every file of the real-world corpus converts or fails with the error its manifest implies,
and what it converts to keeps the element layer's promises (boxes, Markdown spans).

Each file runs in a forked child process so that a hang is a test failure (the service's
conversion time limit, 120 s, per file) rather than a stuck suite. Skipped when the shared corpus is not checked out.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

from tests.conftest import CORPUS, CORPUS_ABSENT
from tests.conversion.engine.spans import span_faults

MANIFEST = CORPUS / "manifest.json"
# The service's conversion time limit (SVCX_CONVERSION_TIME_LIMIT's default): the longest file
# takes about 20 s alone, 60 s and more on a machine other work keeps busy.
TIME_LIMIT_SECONDS = 120

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


def _check_elements(found: Counter[str]) -> Any:
    """A wrapper of the engine's page renderer that counts, per page, what breaks the
    element layer's promises: the Markdown is its shown elements joined; every line of text
    (visible or hidden) lies inside the box of an element that carries text (a figure's box
    does not count); boxes lie within the page."""
    from conversion.engine.elements import GLYPH_GARBAGE, join_elements

    # The module, not the package's function of the same name.
    engine_convert = importlib.import_module("conversion.engine.convert")
    render = getattr(engine_convert.render_page, "original", engine_convert.render_page)

    def checked(page: Any, *args: Any, **kwargs: Any) -> Any:
        rendered = render(page, *args, **kwargs)
        found["pages"] += 1
        if rendered.markdown != join_elements(rendered.elements):
            found["markdown_not_joined_elements"] += 1
        # A line must lie in the box of an element that carries text, not only in a picture's.
        boxes = [e.bbox for e in rendered.elements if e.type != "figure"]
        for ln in [*page.lines, *page.hidden]:
            if not GLYPH_GARBAGE.sub("", ln.text).strip():
                continue  # unmapped glyphs only: left out with a warning
            found["lines"] += 1
            x0, top, x1, bottom = _glyph_box(ln, page)
            if not any(b[0] - 1 <= x0 and x1 <= b[2] + 1 and b[1] - 1 <= top and bottom <= b[3] + 1 for b in boxes):
                found["line_outside_every_element"] += 1
        for e in rendered.elements:
            if e.reason == "off_page":
                continue
            x0, y0, x1, y1 = e.bbox
            if x0 < -2 or y0 < -2 or x1 > page.width + 2 or y1 > page.height + 2 or x0 > x1 or y0 > y1:
                found[f"{e.type}_outside_the_page"] += 1
        return rendered

    checked.original = render  # type: ignore[attr-defined]  # unwrapped on the next attempt
    setattr(engine_convert, "render_page", checked)  # noqa: B010  (the child process's own copy)
    return checked


def _glyph_box(line: Any, page: Any) -> tuple[float, float, float, float]:
    """The box of a line's visible glyphs (spaces at its ends left out), on the page (what
    reaches past the edge cut off) unless the whole line lies off it."""
    xs = [x for i, t in enumerate(line.glyph_text) if not t.isspace() for x in line.glyph_x[2 * i : 2 * i + 2]]
    x0, x1 = (min(xs), max(xs)) if xs else (line.x0, line.x1)
    if line.hidden == "off_page":
        return x0, line.top, x1, line.bottom
    return max(x0, 0), max(line.top, 0), min(x1, page.width), min(line.bottom, page.height)


def _attempt(path: str, password: str | None) -> dict[str, Any]:
    from conversion.engine import EngineError, convert, inspect

    outcome: dict[str, Any] = {}
    checks: Counter[str] = Counter()
    _check_elements(checks)
    outcome["elements"] = checks
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
        outcome["spans"] = dict(span_faults(result))
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
            problems = {k: v for k, v in outcome["elements"].items() if k not in ("pages", "lines")}
            assert problems == {}, (record["file"], dict(outcome["elements"]))
            assert outcome["spans"] == {}, (record["file"], outcome["spans"])
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
