"""Hostile document structure: nesting past what the readers parse answers `pdf_too_complex`
(not `pdf_no_pages` or `pdf_corrupt`), and the trailer's /Size is a claim, not a fact: the file is
judged on the objects it really holds. The files are written byte by byte here, since no PDF
library writes them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conversion.engine import EngineError, convert, inspect, preflight
from conversion.engine import document as engine_document

DEPTH = 100_000
PAGE = b"<< /Type /Page /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>"
CONTENT = b"BT /F1 12 Tf 72 700 Td (Hello world) Tj ET"
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def written(path: Path, objects: list[bytes], *, size: int | None = None) -> Path:
    """`objects` as 1 0 obj, 2 0 obj, ... with a classic cross-reference table; the trailer
    claims `size` objects (the true count by default); object 1 is the catalogue."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    claimed = len(objects) + 1 if size is None else size
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (claimed, xref)
    path.write_bytes(bytes(out))
    return path


def stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(data), data)


def one_page(path: Path, *, size: int | None = None, page: bytes = PAGE) -> Path:
    catalogue = b"<< /Type /Catalog /Pages 2 0 R >>"
    tree = b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>"
    return written(path, [catalogue, tree, stream(CONTENT), FONT, page[:-2] + b" /Parent 2 0 R >>"], size=size)


def error_of(call: Callable[..., object], path: Path) -> EngineError:
    with pytest.raises(EngineError) as info:
        call(path)
    return info.value


def test_page_dictionary_nested_100000_deep_is_too_complex_not_an_empty_document(tmp_path: Path) -> None:
    # qpdf reads an object nested past its limit as null: the page would vanish from the tree.
    nested = b"<< /A " * DEPTH + b"1" + b" >>" * DEPTH
    path = one_page(tmp_path / "nested-page.pdf", page=PAGE[:-2] + b" /Nested " + nested + b" >>")

    for call in (preflight, inspect, convert):
        error = error_of(call, path)
        assert (error.code, error.details) == ("pdf_too_complex", {"reason": "objects nested too deeply"})


def test_page_tree_of_direct_nodes_nested_100000_deep_is_too_complex_not_corrupt(tmp_path: Path) -> None:
    # The root of the page tree itself is past qpdf's limit, so qpdf cannot open the file at all.
    nodes = b"<< /Type /Pages /Kids [" * DEPTH + b"3 0 R" + b"] /Count 1 >>" * DEPTH
    catalogue = b"<< /Type /Catalog /Pages 2 0 R >>"
    path = written(
        tmp_path / "deep-direct.pdf", [catalogue, b"<< /Type /Pages /Kids [" + nodes + b"] /Count 1 >>", PAGE]
    )

    error = error_of(preflight, path)

    assert (error.code, error.details) == ("pdf_too_complex", {"reason": "objects nested too deeply"})


def test_page_tree_of_indirect_nodes_nested_100000_deep_is_too_complex(tmp_path: Path) -> None:
    catalogue = b"<< /Type /Catalog /Pages 2 0 R >>"
    nodes = [
        b"<< /Type /Pages %s/Kids [%d 0 R] /Count 1 >>" % (b"/Parent %d 0 R " % (n - 1) if n > 2 else b"", n + 1)
        for n in range(2, DEPTH + 2)
    ]
    leaf = b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] >>" % (DEPTH + 1)
    path = written(tmp_path / "deep-indirect.pdf", [catalogue, *nodes, leaf])

    error = error_of(preflight, path)

    assert (error.code, error.details) == ("pdf_too_complex", {"reason": "objects nested too deeply"})


def test_trailer_claiming_50_million_objects_is_judged_on_what_the_file_holds(tmp_path: Path) -> None:
    path = one_page(tmp_path / "claims.pdf", size=50_000_000)
    assert path.stat().st_size < 1024

    info = preflight(path)
    result = convert(path)

    assert info.page_count == 1
    assert info.repaired  # the wrong /Size is damage qpdf repaired
    assert result.markdown == "Hello world"


def test_file_holding_more_objects_than_the_bound_is_too_complex(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_document, "MAX_OBJECTS", 4)
    honest = one_page(tmp_path / "honest.pdf")  # 5 objects, /Size 6
    over = one_page(tmp_path / "over.pdf", size=50_000_000)  # 5 objects behind an inflated claim
    bare_page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
    tree = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", bare_page]
    within = written(tmp_path / "within.pdf", tree, size=50_000_000)  # 3 objects behind the same claim

    for path in (honest, over):
        error = error_of(preflight, path)
        assert (error.code, error.details) == ("pdf_too_complex", {"reason": "more than 4 objects"})
    assert preflight(within).page_count == 1


def test_nesting_that_costs_no_page_is_repaired_not_refused(tmp_path: Path) -> None:
    # A deep value in the trailer, which no page needs (as real damaged files have): qpdf drops
    # it and says so; the page is still there, so the document converts with the repair noted.
    path = one_page(tmp_path / "nested-trailer.pdf")
    nested = b"<< /A " * DEPTH + b"1" + b" >>" * DEPTH
    path.write_bytes(path.read_bytes().replace(b"trailer\n<< ", b"trailer\n<< /Extra " + nested + b" "))

    info = inspect(path)
    result = convert(path)

    assert (info.page_count, info.repaired) == (1, True)
    assert "Hello world" in result.markdown
