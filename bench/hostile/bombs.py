"""Decompression bombs: small PDFs whose page content, form XObject or /ToUnicode CMap inflates
to hundreds of megabytes or more, sent through the running stack one after the other. Each must
end within 10 s in a 422 whose code is in the catalogue, the worker's resident memory (the
worker and its pool children, sampled from /proc during the request) never above 600 MB, and
the worker still converting afterwards.

The builders are stdlib only (the tests make the same files with them): a deflate stream of a
repeated part is that part's compressed block repeated, so a 1 GiB bomb takes a millisecond
and a megabyte to make.
"""

from __future__ import annotations

import threading
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from bench.hostile import HostileResult

if TYPE_CHECKING:
    from bench.faults import Suite

MiB = 1024 * 1024
GOAL_SECONDS = 10.0
GOAL_RSS_MB = 600.0
CMAP_LINE = b"<0001> <0041>\n"


def deflate_repeated(head: bytes, body: bytes, times: int, tail: bytes = b"") -> bytes:
    """zlib data that inflates to head + body * times + tail, about len(compressed body) * times long."""
    compressor = zlib.compressobj(9)
    start = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    # After a full flush no block looks back past it, so the body's block stands repeated.
    block = compressor.compress(body) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.compress(tail) + compressor.flush()
    # Adler-32 of the body repeated: from zero, one body adds S to a and W to b; from (a, b)
    # it adds S to a and len(body) * a + W to b.
    modulus = 65521
    weights = zlib.adler32(body, 0)
    s, w = weights & 0xFFFF, weights >> 16
    checksum = zlib.adler32(head)
    a, b = checksum & 0xFFFF, checksum >> 16
    for _ in range(times):
        a, b = (a + s) % modulus, (b + len(body) * a + w) % modulus
    checksum = zlib.adler32(tail, (b << 16) | a)
    return start + block * times + end[:-4] + checksum.to_bytes(4, "big")


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (1 is the catalog), numbered from 1, with its cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(data: bytes, entries: bytes = b"") -> bytes:
    return b"<< %s /Length %d /Filter /FlateDecode >>\nstream\n" % (entries, len(data)) + data + b"\nendstream"


def _page(resources: bytes, contents: bytes = b"4 0 R") -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
        + resources
        + b" /Contents "
        + contents
        + b" >>",
    ]


_HELVETICA = b"/Type /Font /Subtype /Type1 /BaseFont /Helvetica"


def many_fonts(fonts: int, mib: int) -> bytes:
    """One page with `fonts` Type1 fonts, each embedding a font program of `mib` MiB (each
    under the stream budget, decoded when the page starts and kept while the page is read)."""
    program = _stream(deflate_repeated(b"", b"\0" * MiB, mib), b"/Length1 16 /Length2 0 /Length3 0")
    names = b" ".join(b"/F%d %d 0 R" % (i, 5 + 3 * i) for i in range(fonts))
    objects = [*_page(b"<< /Font << %s >> >>" % names), _stream(zlib.compress(b"BT /F0 12 Tf 72 720 Td (A) Tj ET"))]
    for i in range(fonts):
        objects.append(
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Bomb%d /FirstChar 65 /LastChar 65 /Widths [600]"
            b" /FontDescriptor %d 0 R >>" % (i, 6 + 3 * i)
        )
        objects.append(
            b"<< /Type /FontDescriptor /FontName /Bomb%d /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0"
            b" /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile %d 0 R >>" % (i, 7 + 3 * i)
        )
        objects.append(program)
    return _pdf(objects)


def content_bomb(mib: int = 1024) -> bytes:
    """One page whose content stream inflates to `mib` MiB (spaces after one line of text)."""
    text = b"BT /F1 12 Tf 72 720 Td (Bomb) Tj ET\n"
    data = deflate_repeated(text, b" " * MiB, mib)
    return _pdf([*_page(b"<< /Font << /F1 5 0 R >> >>"), _stream(data), b"<< " + _HELVETICA + b" >>"])


def xobject_bomb(mib: int = 1024) -> bytes:
    """One page that draws a form XObject whose content inflates to `mib` MiB."""
    page = _stream(zlib.compress(b"BT /F1 12 Tf 72 720 Td (Bomb) Tj ET\n/X0 Do\n"))
    form = _stream(deflate_repeated(b"", b" " * MiB, mib), b"/Type /XObject /Subtype /Form /BBox [0 0 612 792]")
    return _pdf(
        [
            *_page(b"<< /Font << /F1 5 0 R >> /XObject << /X0 6 0 R >> >>"),
            page,
            b"<< " + _HELVETICA + b" >>",
            form,
        ]
    )


def cmap_bomb(mib: int = 256, pages: int = 1) -> bytes:
    """`pages` pages; the last one's font has a /ToUnicode CMap of about `mib` MiB of bfchar lines."""
    head = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        b"/CMapName /Bomb def /CMapType 2 def\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
        b"100 beginbfchar\n"
    )
    lines = MiB // len(CMAP_LINE)
    body = CMAP_LINE * lines
    tail = b"endbfchar\nendcmap CMapName currentdict /CMap defineresource pop end end\n"
    cmap = _stream(deflate_repeated(head, body, mib, tail))
    text = _stream(zlib.compress(b"BT /F1 12 Tf 72 720 Td (Page) Tj ET\n"))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(pages))
    objects.append(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages))
    first_free = 3 + pages
    # objects: pages..., then text content, plain font, bomb font, cmap
    content, plain, bomb, cmap_number = first_free, first_free + 1, first_free + 2, first_free + 3
    for i in range(pages):
        font = bomb if i == pages - 1 else plain
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >>"
            b" /Contents %d 0 R >>" % (font, content)
        )
    objects += [text, b"<< " + _HELVETICA + b" >>", b"<< %s /ToUnicode %d 0 R >>" % (_HELVETICA, cmap_number), cmap]
    return _pdf(objects)


# --- the scenario ---------------------------------------------------------------------------


def rss_mb(root: int) -> float:
    """Resident memory of `root` and each of its children, the largest one, in MB."""
    largest = 0.0
    for pid in [root, *_children(root)]:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    largest = max(largest, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return largest


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(p) for p in (task / "children").read_text().split()]
    except OSError:
        return found
    return found + [grandchild for child in found for grandchild in _children(child)]


class RssSampler(threading.Thread):
    """The largest resident memory of a process tree, sampled every 20 ms until stopped, in MB."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, rss_mb(self.root))
            self.done.wait(0.02)

    def stop(self) -> float:
        self.done.set()
        self.join()
        return self.peak


def run(suite: Suite) -> HostileResult:
    from bench.faults import make_pdf, post_convert

    result = HostileResult(
        "bombs",
        "a 1 GiB page content stream, a 1 GiB form XObject and a 256 MiB /ToUnicode CMap, each in a PDF "
        "of about a megabyte, sent one after the other",
    )
    account = suite.account(credits=100)
    worker = suite.s.worker
    assert worker is not None
    bombs = {
        "content_1gib": content_bomb(1024),
        "xobject_1gib": xobject_bomb(1024),
        "cmap_256mib": cmap_bomb(256),
    }
    for name, pdf in bombs.items():
        sampler = RssSampler(worker.pid)
        sampler.start()
        started = time.monotonic()
        out = post_convert(suite.s.port, account.key, pdf)
        seconds = time.monotonic() - started
        peak = sampler.stop()
        result.figures[f"{name}_upload_kb"] = round(len(pdf) / 1024)
        result.figures[f"{name}_seconds"] = round(seconds, 2)
        result.figures[f"{name}_status"] = out.status
        result.figures[f"{name}_code"] = out.code
        result.figures[f"{name}_worker_rss_max_mb"] = round(peak)
        result.checks[f"{name}: 422 with a catalogue code within {GOAL_SECONDS:.0f} s"] = {
            "pass": out.status == 422 and bool(out.code) and seconds <= GOAL_SECONDS,
            "detail": f"{out.status} {out.code or out.error} after {seconds:.2f} s",
        }
        result.checks[f"{name}: worker resident memory never above {GOAL_RSS_MB:.0f} MB"] = {
            "pass": 0 < peak <= GOAL_RSS_MB,
            "detail": f"peak {peak:.0f} MB (largest process of the worker, sampled every 20 ms)",
        }
    after = post_convert(suite.s.port, account.key, make_pdf("after-bombs", 1))
    result.checks["the worker converts a normal PDF afterwards"] = {
        "pass": after.status == 200,
        "detail": f"{after.status} {after.code or after.error}",
    }
    captures = suite.sql(
        f"SELECT count(*) FROM billing_ledgerentry WHERE organization_id = '{account.org}' AND kind = 'capture'"
    )
    count = int(captures[0][0]) if captures else -1
    result.figures["captures"] = count
    result.checks["only the normal PDF is billed (one capture)"] = {"pass": count == 1, "detail": f"{count} capture(s)"}
    return result
