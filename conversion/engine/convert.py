"""Public entry points: preflight, inspect, text_sample and convert."""

from __future__ import annotations

import io
import os
import time
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import pikepdf
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser

from .assembly import (
    Continuation,
    TableEdge,
    WordBreak,
    continuation,
    document_words,
    ends_in_hyphen,
    join_document,
    sentence_runs_on,
    word_break,
)
from .blocks import outline_depths_are_levels, outline_keys
from .census import census_pages, font_census
from .document import (
    MAX_PAGE_CONTENT_BYTES,
    DocumentInfo,
    OpenedDocument,
    extraction_not_permitted,
    open_document,
)
from .elements import Element, Span, elements_size
from .errors import OUT_OF_MEMORY, EngineError, foreign
from .inline import ListFrame, ListStack, PageLists, nest_continued
from .layout import (
    HIDDEN_BACKGROUND,
    HIDDEN_COVERED,
    HIDDEN_INVISIBLE,
    HIDDEN_OFF_PAGE,
    HIDDEN_TINY,
    OcrFacts,
    PageModel,
    PageParser,
    PageTooComplex,
)
from .limits import PageAborted, StreamTooLarge, polling
from .lists import attach_drawn_marks
from .ocr import OCR_OFF, OcrOptions, PageOcr, mark_elements, needs_ocr
from .pdfium_source import PdfiumPageParser, open_pdfium
from .screen import text_pages
from .stats import FIRST_SECTION_LEVEL
from .structure import DocStats, render_page
from .tags import StructureTags

__all__ = [
    "ENGINES",
    "ENGINE_ID",
    "ENGINE_VERSION",
    "PDFIUM_ENGINE_ID",
    "PDFIUM_ENGINE_VERSION",
    "ConversionResult",
    "ConvertOptions",
    "OcrPlan",
    "PageResult",
    "PageSample",
    "ParsedMismatch",
    "ParsedPages",
    "convert",
    "inspect",
    "parse_pages",
    "preflight",
    "text_sample",
]

ENGINE_ID: str = "svcx-layout"
ENGINE_VERSION: str = "1.27.2"
# The same stages fed by PDFium's text instead of pdfminer.six's layout (`pdfium_source`).
PDFIUM_ENGINE_ID: str = "svcx-layout-pdfium"
# 0.2.1: the shared stages of 1.13.2 with the budgets of the pdfminer engine, right-to-left
# glyph boxes and fewer calls per glyph (bench/results/pdfium-issue29-s37.md). 0.2.2: the
# shared stages of 1.14.0 (outline levels); 0.2.3: of 1.15.0; 0.2.4: of 1.16.0 (OCR reads a
# page in a script the requested languages do not with that script's model); 0.2.5: of 1.16.1
# (OCR lines with right-to-left letters ordered by the bidirectional algorithm); 0.2.6: of 1.16.2
# (sentence punctuation at a scanned word's edge placed by its neighbours); 0.3.0: of 1.17.0 (a
# heading a tagged PDF wraps onto a second line is one heading, and no code whatever its face);
# 0.4.0: of 1.18.0 (a cell wrapped onto a second line stays in its row; a line a tagged PDF's
# structure tree holds is never margin furniture); 0.5.0: of 1.19.0 (the document nests a list
# a page break cuts as the page before left it); 0.6.0: of 1.20.0 (a list item whose sentence
# runs on over a page break is one item in the document); 0.6.1: of 1.20.1 (an item's word
# hyphenated over the break made whole, CJK run-on joined without a space); 0.7.0: of 1.21.0
# (the rest of an item at the next page's top found from the columns' edges); 0.8.0: of 1.22.0
# (Word's built-in heading styles give their levels; a tagged PDF's non-heading text is no
# heading, its rows repeated at page tops no running lines; a code face that sets program text
# is code though it sets titles too); 0.9.0: of 1.23.0 (unruled tables whose rows padding
# parts keep cells of several lines, set at the top or the middle of their rows; a table in
# one column of two is found beside the other's prose; the document's gutter parts a page's
# columns where one of them holds short lines); 0.10.0: of 1.24.0 (a column that holds a
# paragraph of long lines is prose beside a table's or a list's short lines; a full-width table
# that the page's gutter cuts is found whole; code under an item's text is a block of the item;
# capital letter labels in a run of consecutive letters open items); 0.10.1: a right-to-left
# glyph's characters in logical order (lam-alef), characters beyond the Basic Multilingual
# Plane read whole, a glyph whose code its font maps to a control character is "(cid:N)" as
# pdfminer writes it (bench/results/pdfium-quality-s47.md); 0.10.2: slanted text (a synthetic
# oblique) is horizontal text of its drawn size, as pdfminer reads it, not turned text; 0.10.3:
# a right-to-left letter's box reaches the glyph its advance reaches past the marks drawn
# over it, and a word space after a mark is measured from its letter's end; 0.11.0: of 1.25.0
# (a column holding columns searched for tables column by column; a ruling between columns no
# edge of a table it touches; letter spacing no word space where the line draws its spaces; a
# justified heading's pieces one row; a symbol opening a run of lines at one indent a bullet;
# a glyph drawn at the origin of a space of no advance is one of its own, not a ligature's, so
# that space parts no words, nor a space object PDFium leaves out whose next glyph starts at its
# origin: Chromium's soft hyphens); 0.12.0: of 1.26.0 (a space of no advance between two Arabic
# letters is a zero-width non-joiner, U+200C, in both sources: a space object PDFium leaves out
# at the next glyph's origin is one as pdfminer sees it); 0.12.1: of 1.26.1 (a right-to-left
# line's brackets and quotation marks mirrored by L4 only where that sets them right: they pair
# and cling to their words, as the source gave them or each mirrored); 0.13.0: of 1.27.0 (an
# upright glyph's box stands a quarter of its size below its baseline, whatever its font's
# descent, in both sources: words of a font that sets its descent deep, as Arabic fonts do, on
# one line with a fallback font's Latin words and brackets, and level with their bullets);
# 0.13.1: a ligature glyph whose characters spell one of Unicode's Arabic ligatures only
# backwards is read backwards (lam with alef maksura); 0.13.2: of 1.27.1 (a space drawn twice
# slightly apart makes no line bold); 0.13.3: of 1.27.2 (a review's mends: "<" and ">" pair
# with nothing, and one bracket alone is mirrored only where that sets every one right; a
# space of no advance is a non-joiner only right between two letters that do not join across
# it, marks aside; PDFium's space object only at the next glyph's very origin; a slant is no
# turned text, so no vertical lines are looked for on its page).
PDFIUM_ENGINE_VERSION: str = "0.13.3"
# Engine id -> version; the first is the default.
ENGINES: dict[str, str] = {ENGINE_ID: ENGINE_VERSION, PDFIUM_ENGINE_ID: PDFIUM_ENGINE_VERSION}

# Pages parsed ahead of the page being rendered, so that running headers and font
# statistics see some of the following pages without holding the whole document.
LOOKAHEAD_PAGES = 8

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class ConvertOptions:
    tables: Literal["markdown", "html", "text"] = "markdown"
    fallback: Literal["empty", "error"] = "empty"
    flavor: Literal["gfm"] = "gfm"
    # Pages read from their picture: none, those without a usable text layer, or all.
    ocr: OcrOptions = OCR_OFF
    # Which text source lays out the pages (a key of ENGINES).
    engine: str = ENGINE_ID


@dataclass
class PageSample:
    page: int
    has_text_layer: bool
    chars: int
    sample: str
    # Lines of text a reader cannot see, by reason (left out of `sample` and of conversions).
    hidden_text: dict[str, int] = field(default_factory=dict)


@dataclass
class PageResult:
    page: int
    label: str | None
    markdown: str
    has_text_layer: bool
    warnings: list[str] = field(default_factory=list)
    # How the page's first table continues the previous page's last one (the document's
    # Markdown joins them; the page's own Markdown stands alone).
    table_continues: Continuation = Continuation.NONE
    width: float = 0.0  # points, as displayed
    height: float = 0.0
    # What the page holds, in reading order; `markdown` is join_elements(elements).
    elements: list[Element] = field(default_factory=list)
    ocr: OcrFacts | None = None  # how the page was read when it was read by OCR
    # The list the page starts with and the one it ends inside of: the document's Markdown
    # nests a list a page break cuts as the page before left it (the page's own Markdown
    # starts its lists at the margin).
    lists: PageLists = field(default_factory=PageLists)


@dataclass
class ConversionResult:
    page_count: int
    pages: list[PageResult]
    truncated: bool
    stopped: bool
    warnings: list[str]
    timings: dict[str, float]

    @property
    def ocr_pages(self) -> list[int]:
        """The delivered pages read by OCR."""
        return [p.page for p in self.pages if p.ocr is not None]

    @property
    def markdown(self) -> str:
        """The delivered pages' Markdown joined with a blank line, a table that runs on
        across a page break joined into one, a word hyphenated across a break made whole."""
        return self.document()[0]

    def document(self) -> tuple[str, list[list[Span | None]]]:
        """The document's Markdown (`markdown`), and for each delivered page where each of
        its elements stands in it (None for an element the Markdown does not show)."""
        words: Counter[str] | None = None
        breaks = [WordBreak.NONE] * len(self.pages)
        for i in range(1, len(self.pages)):
            before, after = self.pages[i - 1], self.pages[i]
            if after.page != before.page + 1 or after.table_continues is not Continuation.NONE:
                continue
            item = before.lists.continues_item(after.lists)
            if ends_in_hyphen(before.markdown):
                if words is None:
                    words = document_words([e.text for p in self.pages for e in p.elements if e.in_markdown])
                # A list item's word hyphenated over the break is made whole as a paragraph's.
                breaks[i] = word_break(before.elements, after.elements, words, item=item)
            if breaks[i] is WordBreak.NONE and item and sentence_runs_on(before.elements):
                breaks[i] = WordBreak.SENTENCE
        return join_document(
            [p.markdown for p in self.pages],
            [[e.md_span for e in p.elements] for p in self.pages],
            [p.table_continues for p in self.pages],
            breaks,
            self._lists_continued(breaks),
        )

    def _lists_continued(self, breaks: Sequence[WordBreak]) -> list[dict[int, str]]:
        """For each page, the Markdown its leading list items (by index among its elements)
        take in the document, where the list goes on from the page before: nested as that
        page left it, where the page alone starts at the margin."""
        out: list[dict[int, str]] = []
        open_list: ListStack = ()
        frame: ListFrame | None = None  # the frame `open_list`'s indents are measured in
        previous = 0
        for page, brk in zip(self.pages, breaks, strict=True):
            lists, again = page.lists, {}
            # A page that opens with a paragraph goes on with the list after it only where the
            # paragraph is the rest of the item (or the item's paragraph) the page before ends
            # with: joined to it.
            joined = (
                page.page == previous + 1
                and page.table_continues is Continuation.NONE
                and (brk is WordBreak.NONE) == (lists.head is None)
            )
            before = frame if joined and open_list and lists.lead else None
            shift = None if before is None or lists.lead_frame is None else lists.lead_frame.shift_to(before)
            if before is not None and shift is not None:
                spaces, after = nest_continued([entry for _, entry in lists.lead], open_list, shift)
                index = {id(e): i for i, e in enumerate(page.elements)}
                for (element, entry), n in zip(lists.lead, spaces, strict=True):
                    markdown = element.markdown
                    if n != entry.spaces and id(element) in index and markdown[: entry.spaces].strip(" ") == "":
                        again[index[id(element)]] = " " * n + markdown[entry.spaces :]
                if lists.whole:
                    # The page is all that list: it stays open, measured as before, where
                    # this page's column is.
                    open_list = after
                    if lists.end_frame is not None:
                        end = lists.end_frame
                        known = before.edge_known or end.edge_known
                        frame = ListFrame(end.left, end.right, end.origin - shift, known, end.rtl)
                else:
                    open_list, frame = lists.end, lists.end_frame
            else:
                open_list, frame = lists.end, lists.end_frame
            previous = page.page
            out.append(again)
        return out


@dataclass
class ParsedPages:
    """The layout of part of a document (`parse_pages`): each page's model in page order,
    or its number where it could not be parsed."""

    models: list[PageModel | int]
    stopped: bool
    timings: dict[str, float]


# --- opening and policy ---------------------------------------------------------------


def _check_policy(opened: OpenedDocument) -> None:
    info = opened.info
    if info.page_count == 0:
        raise EngineError(
            "pdf_no_pages",
            "The PDF is valid but has no pages. Check that the right file was sent.",
        )
    if info.extraction_allowed is False:
        raise extraction_not_permitted()
    if opened.xfa_dynamic:
        raise EngineError(
            "pdf_is_xfa",
            "The PDF is a dynamic XFA form whose pages are only produced by an XFA "
            "viewer. Print or export the filled form to a regular PDF and send that.",
        )


def _open_checked(path: PathLike, password: str | None, *, want_outline: bool) -> OpenedDocument:
    opened = open_document(path, password=password, want_outline=want_outline)
    assert isinstance(opened, OpenedDocument)
    try:
        _check_policy(opened)
    except BaseException:
        opened.close()
        raise
    return opened


def preflight(path: PathLike, *, password: str | None = None) -> DocumentInfo:
    """Open and check a document quickly (no text work).

    Returns the document's facts when it can be converted.

    Raises:
        EngineError: pdf_invalid, pdf_corrupt, pdf_read_error, pdf_encrypted,
            pdf_password_incorrect, pdf_unsupported_security, pdf_too_complex,
            pdf_no_pages, pdf_extraction_not_permitted, pdf_is_xfa.
    """
    opened = _open_checked(path, password, want_outline=True)
    opened.close()
    return opened.info


def inspect(path: PathLike, *, password: str | None = None) -> DocumentInfo:
    """Facts for /v1/inspect; an encrypted file without password is not an error.

    Without a needed password the result has `password_required=True` and no page facts.
    Zero pages, forbidden extraction and XFA are reported in the result, not raised.

    Raises:
        EngineError: pdf_invalid, pdf_corrupt, pdf_read_error, pdf_too_complex,
            pdf_unsupported_security, and pdf_password_incorrect for a wrong password.
    """
    opened = open_document(path, password=password, allow_locked=True)
    if isinstance(opened, DocumentInfo):
        return opened
    opened.close()
    return opened.info


# --- pages ----------------------------------------------------------------------------


def _pdfminer_pages(opened: OpenedDocument, selected: Sequence[int]) -> Iterator[tuple[int, PDFPage | None]]:
    """(page number, pdfminer page) for the selected pages only; None for a page that
    pdfminer cannot find in the document (a broken page object).

    With pikepdf, the selected pages are copied into a fresh unencrypted file, so pdfminer
    never sees the rest of the document, its encryption or its damaged cross-references.
    """
    if opened.pikepdf is not None:
        src = opened.pikepdf
        subset = pikepdf.new()
        for number in selected:
            source_page = src.pages[number - 1]
            if _content_bytes(source_page.obj) > MAX_PAGE_CONTENT_BYTES:
                raise EngineError(
                    "pdf_too_complex",
                    f"Page {number} has more content than is parsed. Split or simplify the document.",
                    details={"page": number},
                )
            with warnings.catch_warnings():
                # Form widgets lose their /AcroForm link in the copy; only text matters here.
                warnings.simplefilter("ignore")
                subset.pages.append(source_page)
        buffer = io.BytesIO()
        subset.save(buffer, stream_decode_level=pikepdf.StreamDecodeLevel.none)
        subset.close()
        buffer.seek(0)
        doc = PDFDocument(PDFParser(buffer))
        parsed = PDFPage.create_pages(doc)
        for number in selected:
            yield number, next(parsed, None)
        return
    wanted = set(selected)
    last = max(selected)
    found: set[int] = set()
    for index, page in enumerate(opened.pdfminer_pages(), start=1):
        if index in wanted:
            found.add(index)
            yield index, page
        if index >= last:
            break
    for number in selected:
        if number not in found:
            yield number, None


def _pdfium_pages(opened: OpenedDocument, selected: Sequence[int]) -> Iterator[tuple[int, PDFPage | bool | None]]:
    """(page number, True) for the selected pages, PDFium reading them from the file itself;
    the page content is bounded as for pdfminer."""
    for number in selected:
        if opened.pikepdf is not None and _content_bytes(opened.pikepdf.pages[number - 1].obj) > MAX_PAGE_CONTENT_BYTES:
            raise EngineError(
                "pdf_too_complex",
                f"Page {number} has more content than is parsed. Split or simplify the document.",
                details={"page": number},
            )
        yield number, True


def _content_bytes(page: pikepdf.Dictionary) -> int:
    contents = page.get("/Contents")
    streams = contents if isinstance(contents, pikepdf.Array) else [contents]
    total = 0
    for stream in streams:
        if isinstance(stream, pikepdf.Stream):
            total += int(stream.get("/Length", 0) or 0)
    return total


def _selected(pages: Sequence[int] | None, page_count: int) -> list[int]:
    if pages is None:
        return list(range(1, page_count + 1))
    chosen = sorted({p for p in pages if 1 <= p <= page_count})
    if not chosen:
        raise EngineError(
            "page_range_out_of_bounds",
            f"The document has {page_count} page(s); none of the requested pages exist.",
            details={"page_count": page_count},
            param="options.pages",
        )
    return chosen


def _parse_failed(number: int) -> EngineError:
    return EngineError(
        "pdf_parse_failed",
        f"Page {number} could not be parsed: its content uses a structure the parser "
        "does not handle. Re-export the PDF and try again.",
        details={"page": number},
    )


def _too_complex(number: int, reason: str) -> EngineError:
    return EngineError(
        "document_too_complex",
        f"Page {number} exceeds the work budget ({reason}). Convert fewer or simpler pages.",
        details={"page": number, "reason": reason},
    )


def _document_too_complex(reason: str) -> EngineError:
    return EngineError(
        "document_too_complex",
        f"The document exceeds the work budget ({reason}). Convert fewer or simpler pages.",
        details={"reason": reason},
    )


def _over_budget(exc: StreamTooLarge | MemoryError) -> EngineError:
    """document_too_complex for a stream past its decode budget or a job past its memory ceiling."""
    return _document_too_complex(exc.reason if isinstance(exc, StreamTooLarge) else OUT_OF_MEMORY)


def _page_work_error(exc: Exception, page: int) -> Exception:
    """What a failure while parsing pages leaves as: itself when it is an EngineError or
    not the document's fault (`foreign`), else the catalogue's code for it."""
    if isinstance(exc, EngineError) or foreign(exc):
        return exc
    if isinstance(exc, (StreamTooLarge, MemoryError)):
        return _over_budget(exc)
    return _parse_failed(page)


def _iter_models(
    opened: OpenedDocument,
    selected: Sequence[int],
    should_stop: Callable[[], bool] | None,
    timings: dict[str, float],
    tagged: Callable[[int], dict[int, int]] | None = None,
    ocr: PageOcr | None = None,
    pdfium: PdfiumPageParser | None = None,
) -> Iterator[PageModel | int]:
    """Page models in order; yields a failed page's number instead of its model. `tagged`:
    a tagged PDF's MCIDs of a page (`StructureTags.mcids`). With `ocr`, the pages that need
    it (or all, when forced) are read from their picture. With `pdfium`, PDFium lays out the
    pages instead of pdfminer.six.

    Stops (returns) when should_stop asks to, dropping the page in progress.

    Raises:
        EngineError: document_too_complex, pdf_too_complex, pdf_parse_failed.
    """
    parser = PageParser(should_stop)
    pages: Iterator[tuple[int, PDFPage | bool | None]]
    pages = _pdfminer_pages(opened, selected) if pdfium is None else _pdfium_pages(opened, selected)
    reached: set[int] = set()
    while True:
        if should_stop is not None and should_stop():
            return
        started = time.monotonic()
        try:
            item = next(pages, None)
        except EngineError:
            raise
        except PageAborted:
            return
        except RecursionError:
            raise EngineError(
                "pdf_too_complex",
                "The PDF's page tree is nested too deeply to be parsed. Re-export or simplify the document.",
            ) from None
        except (StreamTooLarge, MemoryError) as exc:
            raise _over_budget(exc) from None
        except Exception as exc:
            if foreign(exc):
                raise
            # The page walk itself broke: the pages it did not reach cannot be parsed.
            yield from (n for n in selected if n not in reached)
            return
        if item is None:
            return
        number, page = item
        reached.add(number)
        if page is None:
            yield number
            continue
        model: PageModel | None
        try:
            marked = tagged(number) if tagged is not None else None
            if pdfium is None:
                assert isinstance(page, PDFPage)
                model = parser.parse(page, number, marked)
            else:
                model = pdfium.parse(number, marked)
        except PageAborted:
            return
        except (PageTooComplex, StreamTooLarge) as exc:
            raise _too_complex(number, exc.reason) from None
        except RecursionError:
            raise _too_complex(number, "objects nested too deeply") from None
        except MemoryError:
            raise _too_complex(number, OUT_OF_MEMORY) from None
        except Exception as exc:
            if foreign(exc):
                raise
            # pdfminer raises many unrelated types on broken content; the page is lost,
            # the others may still convert.
            model = None
        finally:
            timings["layout"] = timings.get("layout", 0.0) + time.monotonic() - started
        if model is None:
            yield number
            continue
        # Bullets and checkboxes drawn as shapes become the glyphs of the lines they open.
        attach_drawn_marks(model)
        if ocr is not None:
            model = _read_by_ocr(ocr, model, timings)
        yield model


def _read_by_ocr(ocr: PageOcr, model: PageModel, timings: dict[str, float]) -> PageModel:
    """The page read from its picture when it needs it, else as parsed.

    Raises:
        EngineError: document_too_complex when OCR runs out of memory.
    """
    started = time.monotonic()
    try:
        return ocr.apply(model)
    except EngineError:
        raise
    except MemoryError:
        raise _too_complex(model.number, OUT_OF_MEMORY) from None
    except Exception as exc:
        if foreign(exc):
            raise
        # A page pdfium cannot render keeps what its text layer gave.
        return model
    finally:
        timings["ocr"] = timings.get("ocr", 0.0) + time.monotonic() - started


def text_sample(
    path: PathLike,
    *,
    pages: Sequence[int],
    password: str | None = None,
    max_chars: int = 300,
    should_stop: Callable[[], bool] | None = None,
) -> list[PageSample]:
    """Per-page text-layer facts and the first `max_chars` characters of text.

    Pages outside the document are ignored; once `should_stop` returns True the samples taken
    so far are returned. When the permissions forbid extraction the
    samples are empty strings (the facts are still given).

    Raises:
        EngineError: the document errors of `inspect`, pdf_encrypted,
            document_too_complex, pdf_too_complex.
    """
    with _page_walk(path, pages, password, should_stop) as walk:
        if walk is None or not walk[1]:
            return []
        opened, chosen = walk
        allowed = opened.info.extraction_allowed is not False
        samples: list[PageSample] = []
        for item in _iter_models(opened, chosen, should_stop, {}):
            if isinstance(item, int):
                samples.append(PageSample(page=item, has_text_layer=False, chars=0, sample=""))
                continue
            text = "\n".join(ln.text.strip() for ln in item.lines) if allowed else ""
            samples.append(
                PageSample(
                    page=item.number,
                    has_text_layer=item.has_text_layer,
                    chars=item.chars,
                    sample=text[:max_chars],
                    hidden_text=dict(Counter(ln.hidden for ln in item.hidden)),
                )
            )
        return samples


@dataclass(frozen=True)
class OcrPlan:
    """The pages (1-based, in order) that `ocr` "auto" reads from their picture; `parsed`: how
    many pages were parsed to decide (those the first look left in doubt); `unexamined`: how
    many of them it had no time to look at, counted as read by OCR (then `ocr_pages` is an
    upper bound)."""

    ocr_pages: list[int]
    parsed: int = 0
    unexamined: int = 0

    @property
    def upper_bound(self) -> bool:
        return self.unexamined > 0


def ocr_plan(
    path: PathLike,
    *,
    pages: Sequence[int],
    password: str | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> OcrPlan:
    """The given pages (1-based) that `ocr` "auto" would read from their picture: those whose
    text layer is unusable by the test the conversion itself applies (`ocr.needs_ocr`), in
    order. A first look with pdfium (`screen.text_pages`, under a millisecond a page) passes
    the pages that clearly have a usable text layer; only the others are parsed and tested. A
    page that fails to parse is not read by OCR either (it is delivered empty); the pages not
    reached once `should_stop` asks to stop are counted as needing it (an upper bound, never
    less than a conversion reads).

    Raises:
        EngineError: the document errors of `inspect`, pdf_encrypted,
            document_too_complex, pdf_too_complex.
    """
    with _page_walk(path, pages, password, should_stop) as walk:
        if walk is None:
            everything = sorted(set(pages))
            return OcrPlan(ocr_pages=everything, unexamined=len(everything))
        opened, chosen = walk
        clear = text_pages(path, chosen, password=password, should_stop=should_stop)
        doubtful = [p for p in chosen if p not in clear]
        needed: list[int] = []
        seen: set[int] = set()
        for item in _iter_models(opened, doubtful, should_stop, {}) if doubtful else ():
            number = item if isinstance(item, int) else item.number
            seen.add(number)
            if not isinstance(item, int) and needs_ocr(item):
                needed.append(number)
        unexamined = [p for p in doubtful if p not in seen]
        return OcrPlan(ocr_pages=sorted([*needed, *unexamined]), parsed=len(seen), unexamined=len(unexamined))


@contextmanager
def _page_walk(
    path: PathLike, pages: Sequence[int], password: str | None, should_stop: Callable[[], bool] | None
) -> Iterator[tuple[OpenedDocument, list[int]] | None]:
    """The document opened for a walk over the given pages that it has (ascending, once each);
    None when `should_stop` asked to stop while it opened. A failure of the walk leaves as the
    engine's error of page work; the document is closed after it."""
    with polling(should_stop):
        try:
            opened = open_document(path, password=password, want_outline=False)
        except PageAborted:
            yield None
            return
        assert isinstance(opened, OpenedDocument)
        try:
            count = opened.info.page_count or 0
            yield opened, sorted({p for p in pages if 1 <= p <= count})
        except Exception as exc:
            raise _page_work_error(exc, pages[0] if pages else 1) from None
        finally:
            opened.close()


# --- convert --------------------------------------------------------------------------


class _CallbackError(Exception):
    """Carries an exception of the caller's on_page through the library-error mapping."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _pages(numbers: Sequence[int]) -> str:
    """Page numbers as ascending ranges: "Page 3", "Pages 1-4, 7"."""
    ordered = sorted(set(numbers))
    runs: list[list[int]] = []
    for n in ordered:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    spans = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    return f"Page {spans}" if len(ordered) == 1 else f"Pages {spans}"


def _unparsed_warning(numbers: Sequence[int]) -> str:
    it = "it was" if len(set(numbers)) == 1 else "they were"
    return f"{_pages(numbers)} could not be parsed; {it} left empty."


def _unmapped_glyphs_warning(numbers: Sequence[int], count: int) -> str | None:
    if not count:
        return None
    return (
        f"{_pages(numbers)}: {count} character(s) use glyphs that the PDF's fonts do not map to Unicode; "
        "they were left out."
    )


def _hidden_warning(numbers: Sequence[int], hidden: dict[str, int]) -> str | None:
    if not hidden:
        return None
    reasons = ", ".join(f"{count} {_HIDDEN_REASONS[reason]}" for reason, count in sorted(hidden.items()))
    return (
        f"{_pages(numbers)}: {sum(hidden.values())} line(s) of text a reader cannot see ({reasons}) were left "
        "out of the Markdown; the JSON result lists them as hidden_text elements."
    )


_HIDDEN_REASONS = {
    HIDDEN_INVISIBLE: "invisible",
    HIDDEN_BACKGROUND: "in the background colour",
    HIDDEN_OFF_PAGE: "outside the page",
    HIDDEN_TINY: "smaller than one point",
    HIDDEN_COVERED: "covered by a shape or picture drawn over it",
}


def _no_text_warning(numbers: Sequence[int], ocr: bool = False) -> str:
    if ocr:
        it = "it was" if len(set(numbers)) == 1 else "they were"
        return f"{_pages(numbers)}: no text found, in a text layer or by OCR; {it} left empty."
    if len(set(numbers)) == 1:
        return f"{_pages(numbers)} has no text layer (scanned or image-only); it was left empty. OCR is not available."
    return f"{_pages(numbers)} have no text layer (scanned or image-only); they were left empty. OCR is not available."


def _script_found_warning(numbers: Sequence[int], found: Sequence[tuple[str, tuple[str, ...]]]) -> str:
    """`found`: the script of each page and the languages added for it."""
    scripts = " and ".join(dict.fromkeys(script for script, _ in found))
    codes = ", ".join(dict.fromkeys(code for _, added in found for code in added))
    one = len(set(numbers)) == 1
    return (
        f"{_pages(numbers)} {'is' if one else 'are'} written in {scripts} script, which the requested ocr_languages "
        f"do not read; OCR read {'it' if one else 'them'}, and the pages after, with {codes} as well. Name the "
        "documents' languages in ocr_languages to read every page with them from the start."
    )


@dataclass
class _PageNotes:
    """What the pages of a conversion warn of, by kind: a document's warnings name each
    kind once, with its pages (a scanned book's 200 empty pages are one warning)."""

    unparsed: list[int] = field(default_factory=list)
    no_text: list[int] = field(default_factory=list)
    ocr: bool = False  # OCR was on: a page left without text was read by it too
    unmapped: dict[int, int] = field(default_factory=dict)  # page -> characters left out
    hidden: dict[int, dict[str, int]] = field(default_factory=dict)  # page -> reason -> lines
    # Page -> the script OCR found it written in and the languages (ISO codes) it added.
    scripts: dict[int, tuple[str, tuple[str, ...]]] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        out: list[str] = []
        if self.unparsed:
            out.append(_unparsed_warning(self.unparsed))
        if self.no_text:
            out.append(_no_text_warning(self.no_text, self.ocr))
        unmapped = _unmapped_glyphs_warning(list(self.unmapped), sum(self.unmapped.values()))
        if unmapped:
            out.append(unmapped)
        reasons: Counter[str] = Counter()
        for per_page in self.hidden.values():
            reasons.update(per_page)
        hidden = _hidden_warning(list(self.hidden), dict(reasons))
        if hidden:
            out.append(hidden)
        if self.scripts:
            out.append(_script_found_warning(list(self.scripts), list(self.scripts.values())))
        return out


def convert(
    path: PathLike,
    *,
    pages: Sequence[int] | None = None,
    password: str | None = None,
    options: ConvertOptions = ConvertOptions(),
    result_budget_bytes: int = 8 * 1024 * 1024,
    should_stop: Callable[[], bool] | None = None,
    on_page: Callable[[PageResult], None] | None = None,
    info: DocumentInfo | None = None,
    parsed: Iterable[PageModel | int] | None = None,
) -> ConversionResult:
    """Convert the selected pages (1-based; None = all) to GitHub-flavoured Markdown.

    Runs preflight itself; a given `info` (from an earlier preflight) saves the outline
    and page-label work. Only the selected pages are parsed. `should_stop` is polled
    between pages and inside each page: when it returns True the pages completed so far
    are returned with `stopped=True`. `on_page` is called after each delivered page.
    Delivery stops once the Markdown delivered reaches `result_budget_bytes` (UTF-8):
    that page is delivered, later ones are not, and `truncated` is True.

    A page that fails to parse while others succeed is delivered empty with a warning.

    `parsed`, when given, is the selected pages' layout already parsed by `parse_pages`
    (every selected page in ascending order: the models of consecutive `parse_pages` calls
    over the selection, chained; fewer pages is a conversion stopped after them): the
    pages are rendered from it, the document opened only for its outline, labels and the
    font census of the pages not selected, and the result is the one the PDF itself gives.

    Raises:
        EngineError: the preflight errors; page_range_out_of_bounds when no requested
            page exists; document_has_no_text_layer when no selected page has a text
            layer and no other page of the document shows one (the font census of the
            pages not selected); page_has_no_text_layer (details: page) with fallback "error";
            document_too_complex when a page exhausts its work budget;
            pdf_too_complex; pdf_parse_failed when no page could be parsed.
    """
    started = time.monotonic()
    timings: dict[str, float] = {}
    with polling(should_stop):
        try:
            opened = _open_checked(path, password, want_outline=info is None)
        except PageAborted:
            # Stopped while opening: nothing delivered.
            return ConversionResult(0, [], truncated=False, stopped=True, warnings=[], timings=timings)
        ocr = None
        source = None
        try:
            if options.ocr.mode != "off" and parsed is None:
                ocr = PageOcr(path, password, options.ocr)
            if options.engine == PDFIUM_ENGINE_ID and parsed is None:
                source = open_pdfium(path, password, should_stop, opened.pikepdf)
        except BaseException:
            opened.close()
            if ocr is not None:
                ocr.close()
            raise
        try:
            return _convert_checked(
                opened,
                info,
                pages,
                options,
                result_budget_bytes,
                should_stop,
                on_page,
                timings,
                started,
                parsed,
                ocr,
                source,
            )
        finally:
            if ocr is not None:
                ocr.close()
            if source is not None:
                source.close()


def parse_pages(
    path: PathLike,
    *,
    pages: Sequence[int],
    password: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    ocr: OcrOptions = OCR_OFF,
    engine: str = ENGINE_ID,
) -> ParsedPages:
    """The layout of the given pages (1-based), for `convert(..., parsed=...)` to render later.
    With `ocr` on, the pages that need it (or all, when forced) are read from their picture.

    The costly half of a conversion (about 95% of its time on text documents), done for a
    part of a document by itself: the parts of a long document are parsed in parallel, then
    `convert(..., parsed=...)` renders the whole with the document's statistics, so that the result
    is the one `convert` gives for the same pages. A page that fails to parse is given by its
    number (it is delivered empty with a warning). `stopped` is True when should_stop asked
    to stop before every page was parsed; the pages parsed so far are given.

    Raises:
        EngineError: the preflight errors; page_range_out_of_bounds when no given page
            exists; document_too_complex, pdf_too_complex.
    """
    timings: dict[str, float] = {}
    with polling(should_stop):
        try:
            opened = _open_checked(path, password, want_outline=False)
        except PageAborted:
            return ParsedPages([], stopped=True, timings=timings)
        reader = None
        source = None
        try:
            reader = PageOcr(path, password, ocr) if ocr.mode != "off" else None
            source = open_pdfium(path, password, should_stop, opened.pikepdf) if engine == PDFIUM_ENGINE_ID else None
            selected = _selected(pages, opened.info.page_count or 0)
            models = list(_iter_models(opened, selected, should_stop, timings, _tagged_mcids(opened), reader, source))
            return ParsedPages(models, stopped=len(models) < len(selected), timings=timings)
        except Exception as exc:
            raise _page_work_error(exc, pages[0] if pages else 1) from None
        finally:
            if reader is not None:
                reader.close()
            if source is not None:
                source.close()
            opened.close()


class ParsedMismatch(Exception):
    """`convert` was given parsed pages other than the selection, or out of order: the
    caller's mistake, never the document's (not translated into a catalogue code)."""


def _in_selection(parsed: Iterable[PageModel | int], selected: Sequence[int]) -> Iterator[PageModel | int]:
    """The parsed pages, checked against the selection in order. Fewer pages than selected
    is a conversion stopped early (the pages given are delivered)."""
    expected = iter(selected)
    for item in parsed:
        number = item if isinstance(item, int) else item.number
        if number != next(expected, None):
            raise ParsedMismatch(f"page {number} is not the next selected page")
        yield item


def _tagged_mcids(opened: OpenedDocument) -> Callable[[int], dict[int, int]] | None:
    """Per page, the MCIDs a tagged PDF's structure tree holds, with the level of the heading
    each lies in (0: none); None for an untagged PDF."""
    structure = StructureTags(opened.pikepdf) if opened.pikepdf is not None else None
    return structure.mcids if structure is not None and structure.present else None


def _convert_checked(
    opened: OpenedDocument,
    info: DocumentInfo | None,
    pages: Sequence[int] | None,
    options: ConvertOptions,
    result_budget_bytes: int,
    should_stop: Callable[[], bool] | None,
    on_page: Callable[[PageResult], None] | None,
    timings: dict[str, float],
    started: float,
    parsed: Iterable[PageModel | int] | None = None,
    ocr: PageOcr | None = None,
    source: PdfiumPageParser | None = None,
) -> ConversionResult:
    try:
        doc_info = info if info is not None else opened.info
        page_count = opened.info.page_count or 0
        selected = _selected(pages, page_count)
        timings["open"] = time.monotonic() - started
        return _convert_opened(
            opened,
            doc_info,
            page_count,
            selected,
            options,
            result_budget_bytes,
            should_stop,
            on_page,
            timings,
            started,
            _in_selection(parsed, selected) if parsed is not None else None,
            ocr,
            source,
        )
    except EngineError:
        raise
    except _CallbackError as exc:
        # The caller's own callback failed: its exception is theirs, not a PDF error.
        raise exc.error from None
    except RecursionError:
        raise EngineError(
            "pdf_too_complex",
            "The PDF's objects are nested too deeply to be parsed. Re-export or simplify the document.",
        ) from None
    except StreamTooLarge as exc:
        raise _document_too_complex(exc.reason) from None
    except MemoryError:
        raise EngineError(
            "document_too_complex",
            "The document needs more memory than the work budget allows. Convert fewer pages.",
            details={"reason": OUT_OF_MEMORY},
        ) from None
    except Exception as exc:
        if foreign(exc):
            raise
        # Library failures on structures they claim to understand (pikepdf, pdfminer).
        raise EngineError(
            "pdf_parse_failed",
            "The PDF could not be parsed: part of its structure is not understood. Re-export the PDF and try again.",
        ) from None
    finally:
        opened.close()


def _convert_opened(
    opened: OpenedDocument,
    info: DocumentInfo,
    page_count: int,
    selected: list[int],
    options: ConvertOptions,
    budget: int,
    should_stop: Callable[[], bool] | None,
    on_page: Callable[[PageResult], None] | None,
    timings: dict[str, float],
    started: float,
    models: Iterable[PageModel | int] | None = None,
    ocr: PageOcr | None = None,
    source: PdfiumPageParser | None = None,
) -> ConversionResult:
    stats = DocStats()
    stats.word_processor = info.styled_outline
    if opened.pikepdf is not None:
        structure = StructureTags(opened.pikepdf)
        stats.tags_headings = structure.present and structure.names_headings()
    if opened.pikepdf is not None and len(selected) < page_count:
        # The styles of the pages not selected count too: a heading's level does not
        # depend on the selection.
        started_census = time.monotonic()
        stats.add_census(font_census(opened.pikepdf, census_pages(selected, page_count), should_stop))
        timings["census"] = time.monotonic() - started_census
    outline: dict[int, dict[str, tuple[int, int]]] = {}
    # Outline depth 1 is the first section level (`##`), unless a single root holds
    # everything else: then the root is the document's title (`#`).
    roots = sum(1 for entry in info.outline if entry.level == 1)
    shift = FIRST_SECTION_LEVEL - (2 if roots == 1 and len(info.outline) > 1 else 1)
    # Each entry's keys on its page (level, entry): every whole title's before any title's
    # key without its label ("1.1 Introduction" is "introduction" before "Chapter 1:
    # Introduction" is). A word processor's bookmark is its heading's own text: matched by
    # its whole key alone.
    for whole in (True, False):
        if not whole and info.headings_outline:
            break
        for index, entry in enumerate(info.outline):
            if entry.page is None or not entry.title:
                continue
            keys = outline_keys(entry.title)
            for key in keys[:1] if whole else keys[1:]:
                if key:
                    outline.setdefault(entry.page, {}).setdefault(key, (entry.level + shift, index))
    # Its depths are the levels where the outline is a table of contents: not a word
    # processor's (`styled_outline`), of more than one root (a single root may be a chapter
    # under a title the outline leaves out), nested as its section numbers are.
    outline_levels = not info.styled_outline and roots > 1 and outline_depths_are_levels(info.outline)
    labels = info.page_labels
    delivered: list[PageResult] = []
    # OCR was on: here, or in parse_pages when the pages come parsed.
    ocr_on = ocr is not None or options.ocr.mode != "off"
    notes = _PageNotes(ocr=ocr_on)
    pending: deque[PageModel | int] = deque()
    delivered_bytes = 0
    truncated = False
    any_text = False
    parsed_ok = 0
    structure_seconds = 0.0

    # The table the last delivered page ended with, and that page's number.
    last_table: tuple[int, TableEdge | None] = (0, None)

    def deliver(item: PageModel | int) -> bool:
        """Render and deliver one page; False once the result budget is reached."""
        nonlocal delivered_bytes, truncated, structure_seconds, last_table
        t0 = time.monotonic()
        continues = Continuation.NONE
        elements: list[Element] = []
        size = (0.0, 0.0)
        read_by_ocr: OcrFacts | None = None
        lists = PageLists()
        if isinstance(item, int):
            number, markdown, has_text = item, "", False
            page_warnings = [_unparsed_warning([item])]
            notes.unparsed.append(item)
            last_table = (number, None)
        else:
            number, has_text = item.number, item.has_text_layer
            page_warnings = []
            size = (item.width, item.height)
            read_by_ocr = item.ocr
            if has_text:
                rendered = render_page(
                    item,
                    stats,
                    tables=options.tables,
                    outline_titles=outline.get(number),
                    outline_complete=info.headings_outline,
                    outline_levels=outline_levels,
                    timings=timings,
                )
                markdown, elements, lists = rendered.markdown, rendered.elements, rendered.lists
                if read_by_ocr is not None:
                    mark_elements(elements, item.lines)
                    if read_by_ocr.script:
                        found = (read_by_ocr.script, read_by_ocr.added_languages)
                        notes.scripts[number] = found
                        page_warnings.append(_script_found_warning([number], [found]))
                before = last_table[1] if last_table[0] == number - 1 else None
                continues = continuation(before, rendered.first, item.width)
                last_table = (number, rendered.last)
                page_warnings += [
                    w
                    for w in (
                        _unmapped_glyphs_warning([number], rendered.unmapped),
                        _hidden_warning([number], rendered.hidden),
                    )
                    if w
                ]
                if rendered.unmapped:
                    notes.unmapped[number] = rendered.unmapped
                if rendered.hidden:
                    notes.hidden[number] = rendered.hidden
            else:
                markdown = ""
                page_warnings.append(_no_text_warning([number], ocr_on))
                notes.no_text.append(number)
                last_table = (number, None)
        label = labels[number - 1] if labels and number <= len(labels) else None
        # A page read by OCR has text, but no text layer of its own.
        has_text = has_text and read_by_ocr is None
        result = PageResult(
            number, label, markdown, has_text, page_warnings, continues, *size, elements, ocr=read_by_ocr, lists=lists
        )
        structure_seconds += time.monotonic() - t0
        delivered.append(result)
        if on_page is not None:
            try:
                on_page(result)
            except Exception as exc:
                raise _CallbackError(exc) from exc
        # The elements are part of the result: they count toward its budget too.
        delivered_bytes += len(markdown.encode("utf-8")) + elements_size(elements)
        if delivered_bytes >= budget:
            truncated = True
            return False
        return True

    if models is None:
        models = _iter_models(opened, selected, should_stop, timings, _tagged_mcids(opened), ocr, source)
    for item in models:
        if isinstance(item, PageModel):
            parsed_ok += 1
            if item.has_text_layer:
                any_text = True
            elif options.fallback == "error":
                raise EngineError(
                    "page_has_no_text_layer",
                    f"Page {item.number} has no text layer (scanned or image-only) and "
                    'fallback is "error". Use fallback "empty" or leave out that page.',
                    details={"page": item.number},
                )
            stats.add_page(item)
        pending.append(item)
        while len(pending) > LOOKAHEAD_PAGES:
            if not deliver(pending.popleft()):
                break
        if truncated:
            break
    # The page stream ends early only when should_stop asked it to (between pages or
    # inside one); a stop after the last page has lost nothing.
    stopped = not truncated and len(delivered) + len(pending) < len(selected)
    if not truncated:
        if parsed_ok == 0 and pending and not stopped:
            raise _parse_failed(selected[0])
        if not any_text and not stopped and parsed_ok and not stats.text_elsewhere:
            raise EngineError(
                "document_has_no_text_layer",
                "None of the selected pages has text, in a text layer or read by OCR. Check that the pages are "
                "not blank, or that ocr_languages names the documents' languages."
                if ocr_on
                else "None of the selected pages has a text layer (the document is scanned "
                "or image-only) and OCR is not available. Send a PDF with a text layer.",
                details={"pages": len(selected)},
            )
        while pending:
            if not deliver(pending.popleft()):
                break
    timings["structure"] = structure_seconds
    timings["total"] = time.monotonic() - started
    return ConversionResult(
        page_count=page_count,
        pages=delivered,
        truncated=truncated,
        stopped=stopped,
        # The document's own warnings (a repair, an unreadable outline), then one warning
        # of each kind its pages have, naming the pages.
        warnings=[*info.warnings, *notes.warnings()],
        timings=timings,
    )
