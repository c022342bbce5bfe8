"""What bounds one conversion inside pdfminer.six: the size of each decoded stream, and the
caller's clock inside long parsing steps.

pdfminer decodes every stream it reads for us (page content, form XObjects, fonts, CMaps,
object and cross-reference streams) in one method, `PDFStream.decode`, in one go: a 1 MB file
can hold a stream that inflates to gigabytes. The engine replaces that method (once, when the
engine is imported) with one that decodes the filters pdfminer implements in Python under a
budget and stops as soon as the output passes it, so a bomb costs at most the budget in
memory and a fraction of a second.

Parsing a decoded stream (a CMap of millions of lines, a page's content, an object stream)
is one long call that never reaches the layout's own polls. Every parser pdfminer builds on
a decoded stream reads it through a `BytesIO` of the modules below; the engine gives them one
that polls `should_stop` every so many buffer refills, so the wall-clock limit also holds
inside them. `polling(should_stop)` sets what is polled for the duration of a conversion.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pdfminer.pdffont
import pdfminer.pdfinterp
import pdfminer.pdfparser
import pdfminer.pdftypes
from pdfminer.lzw import LZWDecoder
from pdfminer.pdftypes import PDFStream

__all__ = ["LIMITS", "PageAborted", "StreamLimits", "StreamTooLarge", "checkpoint", "decode_budget", "polling"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class StreamLimits:
    # Bytes one stream may decode to. The largest stream (images aside, which the engine never
    # decodes) in the real, docx and authored corpora decodes to 12.4 MiB; 64 MiB is five times
    # that, yet keeps what a bomb costs (the bytes, then one parse) far below a worker's ceiling.
    max_decoded_bytes: int = 64 * MiB
    # Bytes a font's CMap (/ToUnicode, a Type0 font's embedded /Encoding) may decode to.
    # pdfminer parses a CMap token by token at under 1 MB/s, holding each entry of a block
    # until the block ends: 64 MiB of it would take minutes and gigabytes. The largest
    # /ToUnicode in the corpora is 13 KB; 8 MiB keeps a hostile one to seconds and tens of MB.
    max_cmap_bytes: int = 8 * MiB
    # Bytes inflated between two checks of the budget and the clock: small enough that a
    # bomb overshoots the budget by little, large enough that the checks cost nothing.
    decode_step_bytes: int = 1 * MiB
    # Reads of pdfminer's 4 KiB parser buffer between two polls of should_stop: every 64 KiB
    # parsed, a tenth of a second of a CMap at the slowest, so the clock is seen at once.
    poll_every_reads: int = 16


LIMITS = StreamLimits()


class StreamTooLarge(Exception):
    """A stream decodes to more than `StreamLimits.max_decoded_bytes`."""

    def __init__(self, limit: int) -> None:
        self.reason = f"a stream decodes to more than {limit // MiB} MiB"
        super().__init__(self.reason)


class PageAborted(BaseException):
    """should_stop asked to stop while a page (or a step inside it) was in progress.

    A BaseException, like asyncio's CancelledError: no `except Exception` of pdfminer's or of
    the engine's own turns a stop into a broken page.
    """


_budget: ContextVar[int | None] = ContextVar("svcx_engine_decode_budget", default=None)
_should_stop: ContextVar[Callable[[], bool] | None] = ContextVar("svcx_engine_should_stop", default=None)


@contextmanager
def polling(should_stop: Callable[[], bool] | None) -> Iterator[None]:
    """Poll `should_stop` inside pdfminer's parsing and decoding while the block runs."""
    token = _should_stop.set(should_stop)
    try:
        yield
    finally:
        _should_stop.reset(token)


@contextmanager
def decode_budget(limit: int) -> Iterator[None]:
    """Decode the streams first read inside the block under `limit` bytes instead of
    `StreamLimits.max_decoded_bytes` (a decoded stream keeps its data: read it here first)."""
    token = _budget.set(limit)
    try:
        yield
    finally:
        _budget.reset(token)


def _limit() -> int:
    return _budget.get() or LIMITS.max_decoded_bytes


def checkpoint() -> None:
    """Raise PageAborted when the conversion under way was asked to stop."""
    should_stop = _should_stop.get()
    if should_stop is not None and should_stop():
        raise PageAborted()


class _PolledBytesIO(io.BytesIO):
    """The buffer pdfminer's parsers read decoded streams from; polls the clock now and then."""

    _reads = 0

    def read(self, size: int | None = -1, /) -> bytes:
        self._reads += 1
        if self._reads % LIMITS.poll_every_reads == 0:
            checkpoint()
        return super().read(size)


# --- decoding under the budget --------------------------------------------------------


def _inflate(data: bytes, limit: int) -> bytes:
    """zlib/deflate data, at most `limit` bytes of it. Damage is read as pdfminer reads it:
    a stream cut short gives what it holds; one whose error lies in the last three bytes
    (the checksum) gives its data.

    Raises:
        StreamTooLarge: the output passes `limit`.
        zlib.error: the data is damaged before its checksum.
    """
    step = LIMITS.decode_step_bytes
    inflater = zlib.decompressobj()
    out: list[bytes] = []
    size = 0
    pending = data
    while True:
        before = inflater.copy()
        try:
            chunk = inflater.decompress(pending, step)
        except zlib.error:
            # Replay the failed step a byte at a time to find where the damage lies; it
            # produces less than one step.
            offset = len(data) - len(pending)
            for index in range(len(pending)):
                try:
                    out.append(before.decompress(pending[index : index + 1]))
                except zlib.error:
                    if offset + index < len(data) - 3:
                        raise
                    break
            return b"".join(out)
        size += len(chunk)
        if size > limit:
            raise StreamTooLarge(limit)
        out.append(chunk)
        pending = inflater.unconsumed_tail
        if inflater.eof or (not pending and len(chunk) < step):
            return b"".join(out)
        checkpoint()


def _unlzw(data: bytes, limit: int) -> bytes:
    """LZW data (pdfminer's own decoder), at most `limit` bytes of it."""
    out: list[bytes] = []
    size = 0
    for piece in LZWDecoder(io.BytesIO(data)).run():
        size += len(piece)
        if size > limit:
            raise StreamTooLarge(limit)
        out.append(piece)
    return b"".join(out)


def _unrunlength(data: bytes, limit: int) -> bytes:
    """RunLength data (PDF 32000-1 7.4.5), at most `limit` bytes of it; a run cut short by the
    end of the data ends the output."""
    out = bytearray()
    index, end = 0, len(data)
    while index < end:
        length = data[index]
        if length == 128:
            break
        if length < 128:
            out += data[index + 1 : index + 2 + length]
            index += 2 + length
        else:
            out += data[index + 1 : index + 2] * (257 - length)
            index += 2
        if len(out) > limit:
            raise StreamTooLarge(limit)
    return bytes(out)


class _Budgeted:
    """Stand-ins for the expanding decoders pdfminer.pdftypes calls by module name.

    pdfminer's own `PDFStream.decode` still walks the filter chain, decrypts and applies the
    predictors; only the steps whose output can grow without bound are swapped. ASCII85 and
    ASCIIHex shrink their input; image filters (DCT, JPX, JBIG2, CCITT) are never decoded for
    the engine, which reads no image data.
    """

    error = zlib.error

    @staticmethod
    def decompress(data: bytes) -> bytes:
        return _inflate(data, _limit())

    @staticmethod
    def decompressobj(*args: Any, **kwargs: Any) -> Any:
        return zlib.decompressobj(*args, **kwargs)


def _decompress_corrupted(data: bytes) -> bytes:
    # pdfminer's byte-wise repair, called when decompress fails: _inflate already kept what
    # a repair keeps, so the stream is damaged beyond it (pdfminer then reads it as empty).
    raise zlib.error("damaged deflate stream")


def _install() -> None:
    if getattr(PDFStream.decode, "svcx_budgeted", False):
        return
    pdftypes: Any = pdfminer.pdftypes
    pdftypes.zlib = _Budgeted
    pdftypes.decompress_corrupted = _decompress_corrupted
    pdftypes.lzwdecode = lambda data: _unlzw(data, _limit())
    pdftypes.rldecode = lambda data: _unrunlength(data, _limit())
    for module in (pdfminer.pdfinterp, pdfminer.pdffont, pdfminer.pdfparser):
        module.BytesIO = _PolledBytesIO  # type: ignore[attr-defined]  # the name each module reads its streams through
    PDFStream.decode.svcx_budgeted = True  # type: ignore[attr-defined]  # marks the install done


_install()
