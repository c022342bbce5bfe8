"""Opening a PDF: classification of what is wrong with it, and document-level facts.

pikepdf (qpdf) is the primary reader: it repairs damaged cross-reference tables, decrypts,
and lets `convert` copy just the selected pages into a fresh unencrypted file for
pdfminer. A few files only pdfminer.six can read (page-tree loops, page trees nested
deeper than qpdf accepts, a missing /Kids that pdfminer tolerates); for those the
document is opened with pdfminer directly and `OpenedDocument.pikepdf` is None.
"""

from __future__ import annotations

import io
import logging
import os
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import pikepdf
from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser

from .errors import OUT_OF_MEMORY, EngineError, foreign
from .limits import StreamTooLarge

__all__ = ["DocumentInfo", "OpenedDocument", "OutlineEntry", "open_document"]

# Structural bounds (pdf_too_complex). Chosen far above anything a normal document
# needs: the largest corpus file has ~65,000 objects and 352 pages.
MAX_OBJECTS = 5_000_000
MAX_PAGES = 100_000
MAX_OUTLINE_ENTRIES = 10_000
MAX_OUTLINE_DEPTH = 64
# Raw (encoded) content-stream bytes of one page; checked for the selected pages only.
MAX_PAGE_CONTENT_BYTES = 256 * 1024 * 1024

_OBJ_TOKEN = re.compile(rb"\d+\s+\d+\s+obj\b")
# What qpdf's warning says when it drops an object nested deeper than its parser's limit (500).
_QPDF_NESTING_LIMIT = "parser-max-nesting"
_NESTED_TOO_DEEPLY = "objects nested too deeply"
# qpdf's refusals of a file whose catalogue or page tree it could not read.
_QPDF_LOST_STRUCTURE = ("unable to find page tree", "unable to find /Root")


@dataclass
class OutlineEntry:
    """One bookmark. `level` is 1-based; `page` is None when the target is not a page."""

    level: int
    title: str
    page: int | None


@dataclass
class DocumentInfo:
    """Facts about a document, as `inspect` and `preflight` report them."""

    page_count: int | None
    pdf_version: str | None
    encrypted: bool
    password_required: bool
    extraction_allowed: bool | None
    xfa: bool
    outline: list[OutlineEntry] = field(default_factory=list)
    page_labels: list[str] | None = None
    # The producer writes the outline from the heading paragraphs, by default (see
    # `HEADINGS_OUTLINE_PRODUCERS`): the outline, or its absence, lists the headings.
    headings_outline: bool = False
    # A word processor wrote the outline from its Heading paragraphs (LibreOffice's Writer,
    # Microsoft Word): it nests them, skipping no depth where the styles skip a level.
    styled_outline: bool = False
    repaired: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class OpenedDocument:
    """An open document. Exactly one of `pikepdf` / `pdfminer` is set.

    The caller must `close()` it; the pdfminer backend keeps the file open.
    """

    info: DocumentInfo
    pikepdf: pikepdf.Pdf | None = None
    pdfminer: PDFDocument | None = None
    xfa_dynamic: bool = False
    _fp: io.BufferedReader | None = None

    def close(self) -> None:
        if self.pikepdf is not None:
            self.pikepdf.close()
        if self._fp is not None:
            self._fp.close()

    def pdfminer_pages(self) -> Iterator[PDFPage]:
        """Pages of the pdfminer backend, in document order."""
        assert self.pdfminer is not None
        return PDFPage.create_pages(self.pdfminer)


# --- errors ---------------------------------------------------------------------------


def _err_invalid() -> EngineError:
    return EngineError(
        "pdf_invalid",
        "The file is not a PDF (it has no PDF header or objects). Send the PDF itself, "
        "not another format renamed to .pdf.",
    )


def _err_corrupt() -> EngineError:
    return EngineError(
        "pdf_corrupt",
        "The PDF is damaged beyond repair: its cross-reference data, trailer or page "
        "tree cannot be reconstructed. Re-export or re-download the document.",
    )


def _err_read() -> EngineError:
    return EngineError(
        "pdf_read_error",
        "The file could not be read to completion. Upload it again.",
    )


def _err_encrypted() -> EngineError:
    return EngineError(
        "pdf_encrypted",
        "The PDF is encrypted and needs a password to open. Send the document's password with the request.",
    )


def _err_password() -> EngineError:
    return EngineError(
        "pdf_password_incorrect",
        "The password does not open this PDF. Check the password and try again.",
    )


def _err_security() -> EngineError:
    return EngineError(
        "pdf_unsupported_security",
        "The PDF uses a security handler that is not supported (for example "
        "certificate-based encryption). Remove the encryption and send it again.",
    )


def _err_too_complex(what: str) -> EngineError:
    return EngineError(
        "pdf_too_complex",
        f"The PDF's structure exceeds what is parsed ({what}). Split or simplify the document.",
        details={"reason": what},
    )


def extraction_not_permitted() -> EngineError:
    return EngineError(
        "pdf_extraction_not_permitted",
        "The document's permissions forbid text extraction. Ask its owner for a copy "
        "without this restriction, or send the owner password.",
    )


# --- helpers --------------------------------------------------------------------------


def _saslprep(password: str) -> str:
    """RFC 4013 mapping and normalisation (AES-256 R6 passwords), without the checks.

    qpdf only accepts the prepared form; pdf.js and pdfminer accept the raw one.
    """
    import stringprep

    mapped = []
    for ch in password:
        if stringprep.in_table_b1(ch):
            continue
        mapped.append(" " if stringprep.in_table_c12(ch) else ch)
    return unicodedata.normalize("NFKC", "".join(mapped))


def _looks_like_pdf(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as fp:
        head = fp.read(8192)
        if b"%PDF-" in head[:1024]:
            return True
        # A missing header is recoverable when the body still has PDF objects.
        return bool(_OBJ_TOKEN.search(head)) or b"endobj" in fp.read(1 << 20)


def _clean_title(value: object) -> str:
    text = str(value)
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    return " ".join(text.split())


# --- pikepdf backend ------------------------------------------------------------------


def _open_pikepdf(path: str | os.PathLike[str], password: str | None) -> tuple[pikepdf.Pdf, bool, bool]:
    """Open with qpdf; return (pdf, password_required, opened with the given password).

    The empty password is tried first so that a needless or wrong password on an
    owner-restricted file still opens it; the given password is then tried because an
    owner password lifts the permission restrictions.
    """
    path = os.fspath(path)
    try:
        pdf = pikepdf.open(path, password="")
    except pikepdf.PasswordError:
        if not password:
            raise
        for candidate in dict.fromkeys([password, _saslprep(password)]):
            try:
                return pikepdf.open(path, password=candidate), True, True
            except pikepdf.PasswordError:
                continue
        raise
    if password and pdf.is_encrypted:
        try:
            owner = pikepdf.open(path, password=password)
        except pikepdf.PasswordError:
            return pdf, False, False
        pdf.close()
        return owner, False, True
    return pdf, False, False


def _walk_outline(first: Any, resolve: Any) -> list[OutlineEntry]:
    """Depth-first walk of /First and /Next; a node seen before ends its chain (cycles)."""
    entries: list[OutlineEntry] = []
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Any, int]] = [(first, 1)]
    while stack and len(entries) < MAX_OUTLINE_ENTRIES:
        node, level = stack.pop()
        if not isinstance(node, pikepdf.Dictionary):
            continue
        key = node.objgen
        if key != (0, 0):
            # Direct objects cannot form a cycle; indirect ones can.
            if key in seen:
                continue
            seen.add(key)
        entries.append(OutlineEntry(level=level, title=_clean_title(node.get("/Title", "")), page=resolve(node)))
        stack.append((node.get("/Next"), level))
        if level < MAX_OUTLINE_DEPTH:
            stack.append((node.get("/First"), level + 1))
    return entries


# Producers (the start of the Info dictionary's /Producer) whose PDF export writes every
# paragraph with an outline level (Heading 1-10) as a bookmark unless told not to:
# LibreOffice's "Export outlines" is on by default. Their outline is the list of headings.
HEADINGS_OUTLINE_PRODUCERS = ("LibreOffice",)
# The application of such a producer (the start of /Creator) whose outline is its paragraphs'
# outline levels: LibreOffice's word processor. Its other applications write other outlines
# (Impress the slides' names, "Slide 1" unless renamed; Calc the sheets' names), which list
# no headings.
HEADINGS_OUTLINE_CREATORS = ("Writer",)


# The start of /Creator (or /Producer) of a word processor whose bookmarks are its Heading
# paragraphs, nested (a Heading 3 right under a Heading 1 at depth 2), when it writes them.
STYLED_OUTLINE_CREATORS = ("Microsoft\u00ae Word", "Microsoft Word", "Microsoft\u00ae Office Word")


def _producer_creator(pdf: pikepdf.Pdf) -> tuple[str, str]:
    try:
        return str(pdf.docinfo.get("/Producer", "")), str(pdf.docinfo.get("/Creator", ""))
    except (pikepdf.PdfError, ValueError, TypeError, KeyError):
        return "", ""


def _headings_outline(pdf: pikepdf.Pdf) -> bool:
    producer, creator = _producer_creator(pdf)
    return producer.startswith(HEADINGS_OUTLINE_PRODUCERS) and creator.startswith(HEADINGS_OUTLINE_CREATORS)


def _styled_outline(pdf: pikepdf.Pdf) -> bool:
    producer, creator = _producer_creator(pdf)
    return (
        _headings_outline(pdf)
        or creator.startswith(STYLED_OUTLINE_CREATORS)
        or producer.startswith(STYLED_OUTLINE_CREATORS)
    )


def _outline(pdf: pikepdf.Pdf) -> list[OutlineEntry]:
    root = pdf.Root
    outlines = root.get("/Outlines")
    if not isinstance(outlines, pikepdf.Dictionary):
        return []
    first = outlines.get("/First")
    if not isinstance(first, pikepdf.Dictionary):
        return []
    page_numbers: dict[tuple[int, int], int] = {page.obj.objgen: i + 1 for i, page in enumerate(pdf.pages)}
    dests = root.get("/Dests")
    names = root.get("/Names")
    name_tree = None
    if isinstance(names, pikepdf.Dictionary) and isinstance(names.get("/Dests"), pikepdf.Dictionary):
        name_tree = pikepdf.NameTree(names.Dests)

    def target(dest: Any, depth: int = 0) -> int | None:
        if depth > 4:
            return None
        if isinstance(dest, (pikepdf.Name, pikepdf.String)):
            named = None
            if isinstance(dests, pikepdf.Dictionary):
                named = dests.get(str(dest) if isinstance(dest, pikepdf.Name) else "/" + str(dest))
            if named is None and name_tree is not None:
                key = str(dest)[1:] if isinstance(dest, pikepdf.Name) else str(dest)
                if key in name_tree:
                    named = name_tree[key]
            return target(named, depth + 1) if named is not None else None
        if isinstance(dest, pikepdf.Dictionary):
            return target(dest.get("/D"), depth + 1)
        if isinstance(dest, pikepdf.Array) and len(dest) > 0:
            page = dest[0]
            if isinstance(page, pikepdf.Dictionary):
                return page_numbers.get(page.objgen)
            if isinstance(page, int) and 0 <= page < len(page_numbers):
                return page + 1
        return None

    def resolve(item: pikepdf.Dictionary) -> int | None:
        try:
            dest = item.get("/Dest")
            if dest is None:
                action = item.get("/A")
                if isinstance(action, pikepdf.Dictionary) and action.get("/S") == "/GoTo":
                    dest = action.get("/D")
            return target(dest) if dest is not None else None
        except (pikepdf.PdfError, ValueError, TypeError, KeyError, RecursionError):
            return None

    return _walk_outline(first, resolve)


def _page_labels(pdf: pikepdf.Pdf) -> list[str] | None:
    if "/PageLabels" not in pdf.Root:
        return None
    # The stubs declare Page.label a method; at runtime it is a str property.
    return [cast(str, pikepdf.Page(page).label) for page in pdf.pages]


def _xfa_of(acroform: Any) -> bool:
    return isinstance(acroform, pikepdf.Dictionary) and "/XFA" in acroform


def _nested_too_deeply(warnings: list[str]) -> bool:
    """Whether qpdf dropped an object it read for being nested deeper than it parses (it reads
    such an object as null: a page or a page-tree node would silently vanish)."""
    return any(_QPDF_NESTING_LIMIT in warning for warning in warnings)


def _pages_lost(pdf: pikepdf.Pdf, page_count: int) -> bool:
    """Whether qpdf found fewer pages than the page tree says it holds (or none at all)."""
    try:
        claimed = int(pdf.Root.Pages.get("/Count", 0))
    except (AttributeError, KeyError, TypeError, ValueError, pikepdf.PdfError):
        claimed = 0
    return page_count == 0 or page_count < claimed


class _NestingLimitSeen(logging.Handler):
    """Notes a qpdf nesting-limit warning logged by this thread (pikepdf logs qpdf's warnings
    when they are not suppressed)."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread and _QPDF_NESTING_LIMIT in record.getMessage():
            self.seen = True


def _lost_structure(exc: Exception) -> bool:
    """Whether qpdf refused the file for lacking its catalogue or page tree (which an object
    dropped for its nesting leaves it without), not for damage of another kind."""
    return isinstance(exc, pikepdf.PdfError) and any(what in str(exc) for what in _QPDF_LOST_STRUCTURE)


def _open_fails_on_nesting(path: str | os.PathLike[str], password: str | None) -> bool:
    """Whether qpdf could not open the file because an object it needed (the catalogue, the
    root of the page tree) is nested deeper than it parses. An opened file keeps its warnings;
    a refused one only logs them, so the file is opened once more with them logged."""
    watcher = _NestingLimitSeen()
    log = logging.getLogger("pikepdf._core")
    log.addHandler(watcher)
    try:
        pikepdf.open(os.fspath(path), password=password or "", suppress_warnings=False).close()
    except Exception:  # noqa: S110  # the first open already failed; only its warnings matter here
        pass
    finally:
        log.removeHandler(watcher)
    return watcher.seen


def _object_count(pdf: pikepdf.Pdf) -> int:
    """The number of objects the file holds. The trailer's /Size is a claim, read first because
    it is free; only a claim over the bound is checked against the cross-reference table."""
    claimed = int(pdf.trailer.get("/Size", 0) or 0)
    return claimed if claimed <= MAX_OBJECTS else len(pdf.get_xref_table())


def _from_pikepdf(
    pdf: pikepdf.Pdf, password_required: bool, *, want_outline: bool, owner_given: bool
) -> OpenedDocument:
    if _object_count(pdf) > MAX_OBJECTS:
        raise _err_too_complex(f"more than {MAX_OBJECTS:,} objects")
    page_count = len(pdf.pages)
    qpdf_warnings = pdf.get_warnings()  # read once: qpdf hands them over and forgets them
    if _nested_too_deeply(qpdf_warnings) and _pages_lost(pdf, page_count):
        # Only when the nesting cost pages: one deep in a trailer or an annotation is repaired.
        raise _err_too_complex(_NESTED_TOO_DEEPLY)
    if page_count > MAX_PAGES:
        raise _err_too_complex(f"more than {MAX_PAGES:,} pages")
    warnings: list[str] = []
    repaired = bool(qpdf_warnings)
    if repaired:
        warnings.append("The PDF was damaged and has been repaired; some content may be missing.")
    root = pdf.Root
    xfa = _xfa_of(root.get("/AcroForm"))
    needs_rendering = bool(root.get("/NeedsRendering", False))
    outline: list[OutlineEntry] = []
    labels: list[str] | None = None
    if want_outline:
        try:
            outline = _outline(pdf)
        except (pikepdf.PdfError, ValueError, TypeError, KeyError, RecursionError):
            warnings.append("The document outline could not be read.")
        try:
            labels = _page_labels(pdf)
        except (pikepdf.PdfError, ValueError, TypeError, KeyError, RecursionError):
            warnings.append("The page labels could not be read.")
    info = DocumentInfo(
        page_count=page_count,
        pdf_version=pdf.pdf_version,
        encrypted=pdf.is_encrypted,
        password_required=password_required,
        # An owner password the caller knows grants every permission; an empty owner
        # password that merely happens to match does not lift the author's restriction.
        extraction_allowed=(
            bool(pdf.allow.extract or (owner_given and pdf.owner_password_matched)) if pdf.is_encrypted else True
        ),
        xfa=xfa,
        outline=outline,
        page_labels=labels,
        headings_outline=want_outline and _headings_outline(pdf),
        styled_outline=want_outline and _styled_outline(pdf),
        repaired=repaired,
        warnings=warnings,
    )
    return OpenedDocument(info=info, pikepdf=pdf, xfa_dynamic=xfa and needs_rendering)


# --- pdfminer backend -----------------------------------------------------------------


def _open_pdfminer(path: str | os.PathLike[str], password: str | None) -> OpenedDocument:
    # The file stays open for the document's lifetime; OpenedDocument.close() closes it.
    fp = open(path, "rb")  # noqa: SIM115
    try:
        parser = PDFParser(fp)
        doc = PDFDocument(parser, password=password or "")
        encrypted = doc.encryption is not None
        pages = 0
        for _ in PDFPage.create_pages(doc):
            pages += 1
            if pages > MAX_PAGES:
                raise _err_too_complex(f"more than {MAX_PAGES:,} pages")
        acroform = doc.catalog.get("AcroForm")
        xfa = False
        needs_rendering = False
        from pdfminer.pdftypes import resolve1

        acroform = resolve1(acroform)
        if isinstance(acroform, dict):
            xfa = "XFA" in acroform
        needs_rendering = bool(resolve1(doc.catalog.get("NeedsRendering", False)) is True)
        info = DocumentInfo(
            page_count=pages,
            pdf_version=None,
            encrypted=encrypted,
            password_required=encrypted and bool(password),
            extraction_allowed=bool(doc.is_extractable),
            xfa=xfa,
            repaired=True,
            warnings=["The PDF has structural damage and was read by the fallback parser."],
        )
        return OpenedDocument(info=info, pdfminer=doc, xfa_dynamic=xfa and needs_rendering, _fp=fp)
    except BaseException:
        fp.close()
        raise


# --- public entry ---------------------------------------------------------------------


def open_document(
    path: str | os.PathLike[str],
    *,
    password: str | None,
    allow_locked: bool = False,
    want_outline: bool = True,
) -> OpenedDocument | DocumentInfo:
    """Open `path` and classify what is wrong with it; see `_open_document`.

    Raises:
        EngineError: as `_open_document`, and pdf_parse_failed for any failure the
            readers do not classify themselves.
    """
    try:
        return _open_document(path, password=password, allow_locked=allow_locked, want_outline=want_outline)
    except EngineError:
        raise
    except RecursionError:
        raise _err_too_complex(_NESTED_TOO_DEEPLY) from None
    except (StreamTooLarge, MemoryError) as exc:
        reason = exc.reason if isinstance(exc, StreamTooLarge) else OUT_OF_MEMORY
        raise EngineError(
            "document_too_complex",
            f"The document exceeds the work budget ({reason}). Simplify or split it.",
            details={"reason": reason},
        ) from None
    except Exception as exc:
        if foreign(exc):
            raise
        raise EngineError(
            "pdf_parse_failed",
            "The PDF could not be parsed: part of its structure is not understood. Re-export the PDF and try again.",
        ) from None


def _open_document(
    path: str | os.PathLike[str],
    *,
    password: str | None,
    allow_locked: bool,
    want_outline: bool,
) -> OpenedDocument | DocumentInfo:
    """Open `path` and classify what is wrong with it.

    Returns an `OpenedDocument`, or, when `allow_locked` and the file needs a password
    that was not given, a `DocumentInfo` with `password_required=True` and no page facts.
    Permission, XFA and page-count policy are left to the caller.

    Raises:
        EngineError: pdf_read_error, pdf_invalid, pdf_corrupt, pdf_encrypted,
            pdf_password_incorrect, pdf_unsupported_security, pdf_too_complex.
    """
    try:
        looks_like_pdf = _looks_like_pdf(path)
    except OSError:
        raise _err_read() from None
    if not looks_like_pdf:
        raise _err_invalid()
    pike_failure: Exception
    try:
        pdf, password_required, with_password = _open_pikepdf(path, password)
    except pikepdf.PasswordError as exc:
        if not password:
            if allow_locked:
                return DocumentInfo(
                    page_count=None,
                    pdf_version=None,
                    encrypted=True,
                    password_required=True,
                    extraction_allowed=None,
                    xfa=False,
                )
            raise _err_encrypted() from None
        pike_failure = exc
    except OSError:
        raise _err_read() from None
    except (pikepdf.PdfError, RecursionError, ValueError, RuntimeError) as exc:
        if "encrypt" in str(exc).lower():
            raise _err_security() from None
        if _lost_structure(exc) and _open_fails_on_nesting(path, password):
            # pdfminer would spend seconds on the same nesting, then call the file corrupt.
            raise _err_too_complex(_NESTED_TOO_DEEPLY) from None
        pike_failure = exc
    else:
        try:
            return _from_pikepdf(pdf, password_required, want_outline=want_outline, owner_given=with_password)
        except EngineError:
            pdf.close()
            raise
        except (
            pikepdf.PdfError,
            RecursionError,
            ValueError,
            RuntimeError,
            KeyError,
            TypeError,
        ) as exc:
            # qpdf refuses page-tree loops and over-deep page trees; pdfminer may not.
            pdf.close()
            pike_failure = exc
    try:
        return _open_pdfminer(path, password)
    except EngineError:
        raise
    except PDFPasswordIncorrect:
        if isinstance(pike_failure, pikepdf.PasswordError) or password:
            raise _err_password() from None
        raise _err_encrypted() from None
    except PDFEncryptionError:
        raise _err_security() from None
    except OSError:
        raise _err_read() from None
    except RecursionError:
        raise _err_too_complex(_NESTED_TOO_DEEPLY) from None
    except (StreamTooLarge, MemoryError):
        raise
    except Exception as exc:
        if foreign(exc):
            raise
        if isinstance(pike_failure, pikepdf.PasswordError):
            raise _err_password() from None
        raise _err_corrupt() from None
