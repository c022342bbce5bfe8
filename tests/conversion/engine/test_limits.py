"""Decoded streams stop at their budget while they decode, pdfminer's parsing sees the
caller's clock, and an exception the engine does not translate (a time limit raised by a
signal handler) passes through it unchanged."""

from __future__ import annotations

import dataclasses
import gc
import resource
import signal
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pdfminer.pdftypes import PDFStream
from pdfminer.psparser import LIT, PSLiteral

from bench.hostile.bombs import cmap_bomb, content_bomb, deflate_repeated, xobject_bomb
from conversion.engine import EngineError, convert, limits
from conversion.engine.limits import LIMITS, StreamTooLarge, decode_budget

MiB = 1024 * 1024


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize(
    ("bomb", "limit"),
    [
        (lambda: content_bomb(256), LIMITS.max_decoded_bytes),
        (lambda: xobject_bomb(256), LIMITS.max_decoded_bytes),
        (lambda: cmap_bomb(64), LIMITS.max_cmap_bytes),
    ],
    ids=["content", "form_xobject", "tounicode_cmap"],
)
def test_a_stream_that_inflates_past_its_budget_is_refused_at_the_budget(
    tmp_path: Path, bomb: Callable[[], bytes], limit: int
) -> None:
    path = _write(tmp_path, "bomb.pdf", bomb())
    rss_before = _peak_rss_mib()
    started = time.monotonic()

    with pytest.raises(EngineError) as caught:
        convert(path)

    assert caught.value.code == "document_too_complex"
    assert caught.value.details == {"page": 1, "reason": f"a stream decodes to more than {limit // MiB} MiB"}
    assert time.monotonic() - started < 5
    # The decode held at most the budget (and one join of it), never the whole stream.
    assert _peak_rss_mib() - rss_before < 3 * LIMITS.max_decoded_bytes / MiB


@pytest.mark.parametrize("filter_name", ["FlateDecode", "LZWDecode", "RunLengthDecode"])
def test_every_expanding_filter_stops_at_the_budget(filter_name: str) -> None:
    size = 4 * MiB
    if filter_name == "FlateDecode":
        encoded = deflate_repeated(b"", b"\0" * MiB, 4)
    elif filter_name == "LZWDecode":
        encoded = _lzw_zeros(size)
    else:
        encoded = bytes([129, 0]) * (size // 128)  # each run: one byte repeated 128 times
    stream = PDFStream({"Filter": _literal(filter_name), "Length": len(encoded)}, encoded)

    with decode_budget(MiB), pytest.raises(StreamTooLarge):
        stream.get_data()
    stream = PDFStream({"Filter": _literal(filter_name), "Length": len(encoded)}, encoded)
    with decode_budget(2 * size):
        data = stream.get_data()
    assert len(data) >= size
    assert data == b"\0" * len(data)


def _literal(name: str) -> PSLiteral:
    return LIT(name)


def _lzw_zeros(size: int) -> bytes:
    """LZW data (early change, as PDF's) for at least `size` zero bytes: after the first code,
    each code names the entry it creates, one zero longer than the last."""
    codes = [(256, 9), (0, 9)]
    made, width, table, run = 1, 9, 258, 1
    while made < size:
        run += 1
        codes.append((table, width))
        table += 1
        made += run
        width = 12 if table >= 2047 else 11 if table >= 1023 else 10 if table >= 511 else 9
    codes.append((257, width))
    bits = "".join(format(code, f"0{w}b") for code, w in codes)
    bits += "0" * (-len(bits) % 8)
    return int(bits, 2).to_bytes(len(bits) // 8, "big")


def _as_pdfminer_reads(data: bytes) -> bytes:
    """pdfminer's own reading of a deflate stream: whole, else byte by byte, keeping the
    output when the error lies in the last three bytes, else nothing."""
    try:
        return zlib.decompress(data)
    except zlib.error:
        inflater, out = zlib.decompressobj(), []
        for index in range(len(data)):
            try:
                out.append(inflater.decompress(data[index : index + 1]))
            except zlib.error:
                if index < len(data) - 3:
                    return b""
                break
        return b"".join(out)


def test_damaged_deflate_streams_read_as_pdfminer_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    # Small steps, so that damage falls in every position relative to a step.
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(LIMITS, decode_step_bytes=4096))
    rng = random.Random(23)
    text = b"".join(b"BT /F1 %d Tf (line %d) Tj ET\n" % (rng.randint(6, 30), i) for i in range(3000))
    whole = zlib.compress(text)
    cases = [whole, whole[:-4] + b"\0\0\0\0", whole[:-2], whole[: len(whole) // 2], whole + b"junk", b"", b"x"]
    for _ in range(200):
        damaged = bytearray(whole)
        damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        cases.append(bytes(damaged[: rng.choice([len(damaged), rng.randrange(1, len(damaged))])]))
    for encoded in cases:
        stream = PDFStream({"Filter": _literal("FlateDecode"), "Length": len(encoded)}, encoded)
        assert stream.get_data() == _as_pdfminer_reads(encoded)


def test_should_stop_is_polled_inside_a_long_cmap_parse(tmp_path: Path) -> None:
    # Page 2's CMap is under its budget but takes pdfminer many seconds to parse.
    path = _write(tmp_path, "slow.pdf", cmap_bomb(6, pages=2))
    started = time.monotonic()

    result = convert(path, should_stop=lambda: time.monotonic() - started > 0.5)

    assert result.stopped
    assert [p.page for p in result.pages] == [1]
    assert time.monotonic() - started < 1.5


class _TimeLimit(Exception):
    """What Celery's soft time limit is to the engine: an Exception that no library raises."""


@pytest.fixture
def alarm() -> Iterator[None]:
    def fire(signum: int, frame: object) -> None:
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, fire)
    # A signal handler that raises inside a garbage-collector callback is swallowed ("exception
    # ignored"); hypothesis installs one in any process that ran one of its tests before.
    callbacks = gc.callbacks[:]
    gc.callbacks.clear()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        gc.callbacks[:] = callbacks


@pytest.mark.usefixtures("alarm")
def test_a_time_limit_raised_inside_a_page_is_not_swallowed(tmp_path: Path) -> None:
    path = _write(tmp_path, "slow.pdf", cmap_bomb(6, pages=2))
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    started = time.monotonic()

    with pytest.raises(_TimeLimit):
        convert(path)

    assert time.monotonic() - started < 2
