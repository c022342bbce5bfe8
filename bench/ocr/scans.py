"""Make the OCR bench's scans (service venv: pypdfium2, Pillow, pikepdf, the engine).

    .venv/bin/python -m bench.ocr.scans OUT_DIR

Writes ``OUT_DIR/<variant>/<document>.pdf`` (image-only PDFs) and ``OUT_DIR/manifest.json``:
per scan its document, variant, resolution, languages and, per page, the truth text (the
engine's text-layer conversion of the original page: every element's text but hidden text,
in the engine's order) and the page's degradation. Deterministic: the same corpus gives the
same scans (noise from a fixed seed).
"""

from __future__ import annotations

import io
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.paths import AUTHORED_CORPUS_DIR, CORPUS_DIR, DOCX_CORPUS_DIR
from bench.real.sets import HELD_OUT

# Documents per authored family (short ones: the whole document is scanned, so its
# reference Markdown is the truth of its structure).
PER_FAMILY = 4
MAX_PAGES = 2
FAMILIES = ("word", "web", "web2col", "webreport")
# Longer documents, by one rule for both folds (fixed before any figure of theirs was seen): the
# short documents are first pages and short notes, while the body of a document (two columns of
# text and code in the web2col family) runs on its middle pages, and the held web sources (PEPs)
# have few short documents. Per authored family and fold, LONG_PER_FAMILY of its documents longer
# than MAX_PAGES, every so many by name (as the short ones), each scanned on LONG_PAGES pages from
# its middle one (page ceil(n / 2) of n on): past the title page, before the end matter.
LONG_PER_FAMILY = 4
LONG_PAGES = 2
# Right-to-left documents of the tune fold in Arabic (installed language `ara`).
RTL_SOURCE = "react-ar"
RTL_DOCUMENTS = 2
# The held fold's right-to-left sources and their models (`tesseract-ocr-heb`, `-fas`), one
# document of each, as many in all as the tune fold's Arabic ones (session 39: before, these
# models were not installed and the held fold had no right-to-left scans).
HELD_RTL_SOURCES = {"react-he": "heb", "react-fa": "fas"}
# Documents of the real corpus (single-column text from other producers), with the
# reference Markdown docling's tests give where there is one.
REAL_DOCUMENTS = ("samplefiles__google-doc-document.pdf", "pdfplumber__scotus-transcript-p1.pdf")
DOCLING_DOCUMENTS = ("docling__code_and_formula.pdf",)

CLEAN = "300"
# One degraded variant per document, in turn.
DEGRADED = ("150", "300-noisy", "300-skew", "150-noisy")
ROTATED = "300-rot90"  # the first page turned 90 degrees clockwise, every seventh document
ROTATE_EVERY = 7
SKEW_DEGREES = (1.0, -2.0, 3.0, -1.5, 2.5)
NOISE_SIGMA = 24.0  # grey levels (0-255) of the Gaussian noise
JPEG_QUALITY = 30  # JPEG artefacts of a cheap scanner or a phone photo


@dataclass(frozen=True)
class Source:
    name: str
    pdf: Path
    family: str
    languages: tuple[str, ...]
    reference: Path | None
    fold: str = "tune"
    # The pages scanned (1-based), or None for the whole document.
    pages: tuple[int, ...] | None = None


def _authored(manifest: dict[str, Any], family: str, held: bool, long: bool = False) -> list[str]:
    """The short (or, with ``long``, the longer) documents of an authored family in one fold,
    every so many by name."""
    names = sorted(
        n
        for n, d in manifest.items()
        if d["family"] == family and (d["source"] in HELD_OUT) == held and (d["pages"] > MAX_PAGES) == long
    )
    count = LONG_PER_FAMILY if long else PER_FAMILY
    step = max(1, len(names) // count)
    return names[::step][:count]


def middle_pages(pages: int) -> tuple[int, ...]:
    """The LONG_PAGES pages scanned of a document of ``pages`` pages: from its middle one on."""
    first = (pages + 1) // 2
    return tuple(range(first, min(pages, first + LONG_PAGES - 1) + 1))


def long_sources(fold: str) -> list[Source]:
    """The longer documents of a fold (``tune`` or ``held``), by the same rule for both: each
    authored family's documents longer than MAX_PAGES, a few of them on their middle pages."""
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    out: list[Source] = []
    for family in FAMILIES:
        for n in _authored(manifest, family, held=fold == "held", long=True):
            pdf, ref = AUTHORED_CORPUS_DIR / f"{n}.pdf", AUTHORED_CORPUS_DIR / f"{n}.md"
            out.append(Source(n, pdf, family, ("eng",), ref, fold, middle_pages(manifest[n]["pages"])))
    return out


def sources() -> list[Source]:
    """The documents of the ``tune`` fold (those OCR rules are developed on)."""
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    out: list[Source] = []
    for family in FAMILIES:
        for n in _authored(manifest, family, held=False):
            out.append(Source(n, AUTHORED_CORPUS_DIR / f"{n}.pdf", family, ("eng",), AUTHORED_CORPUS_DIR / f"{n}.md"))
    out += _rtl(manifest, RTL_SOURCE, "ara", RTL_DOCUMENTS, "tune")
    for f in REAL_DOCUMENTS:
        out.append(Source(Path(f).stem, CORPUS_DIR / "files" / f, "real", ("eng",), None))
    for f in DOCLING_DOCUMENTS:
        stem = Path(f).stem
        ref = CORPUS_DIR / "groundtruth" / f"{stem}__{stem.split('__', 1)[1]}.md"
        out.append(Source(Path(f).stem, CORPUS_DIR / "files" / f, "real", ("eng",), ref if ref.exists() else None))
    return out


def _rtl(manifest: dict[str, Any], source: str, model: str, count: int, fold: str) -> list[Source]:
    """The first `count` short documents (by name) of a right-to-left source, read with its
    model and English."""
    names = sorted(n for n, d in manifest.items() if d["source"] == source and d["pages"] <= MAX_PAGES)
    return [
        Source(n, AUTHORED_CORPUS_DIR / f"{n}.pdf", "rtl", (model, "eng"), AUTHORED_CORPUS_DIR / f"{n}.md", fold)
        for n in names[:count]
    ]


def held_rtl_sources() -> list[Source]:
    """The held fold's right-to-left documents: the shortest document (by pages, then name) of
    each held right-to-left source, Hebrew and Persian, as many in all as the tune fold's
    Arabic ones; scanned whole when short, else on its middle pages (react-fa has no short
    document). Scanned after every other document, so the scans made before stay."""
    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    out: list[Source] = []
    for source, model in HELD_RTL_SOURCES.items():
        pages, name = min((d["pages"], n) for n, d in manifest.items() if d["source"] == source)
        out.append(
            Source(
                name,
                AUTHORED_CORPUS_DIR / f"{name}.pdf",
                "rtl",
                (model, "eng"),
                AUTHORED_CORPUS_DIR / f"{name}.md",
                "held",
                None if pages <= MAX_PAGES else middle_pages(pages),
            )
        )
    return out


def held_sources() -> list[Source]:
    """The documents of the ``held`` fold, chosen by the same rules: short documents of each
    authored family from the held-out sources (the web family's held source, PEPs, has none
    of two pages or fewer; the right-to-left ones are `held_rtl_sources`), and short Word documents of docling's tests (the ``docx``
    set, with docling's reading of the Word XML as reference) for the real documents."""
    import pypdfium2 as pdfium

    manifest = json.loads((AUTHORED_CORPUS_DIR / "manifest.json").read_text())["docs"]
    out: list[Source] = []
    for family in FAMILIES:
        for n in _authored(manifest, family, held=True):
            pdf = AUTHORED_CORPUS_DIR / f"{n}.pdf"
            out.append(Source(n, pdf, family, ("eng",), AUTHORED_CORPUS_DIR / f"{n}.md", "held"))
    short: list[Path] = []
    for md in sorted(DOCX_CORPUS_DIR.glob("*.md")):
        pdf = md.with_suffix(".pdf")
        if md.name == "README.md" or not pdf.exists():
            continue
        doc = pdfium.PdfDocument(pdf)
        try:
            if len(doc) <= MAX_PAGES:
                short.append(pdf)
        finally:
            doc.close()
    step = max(1, len(short) // PER_FAMILY)
    for pdf in short[::step][:PER_FAMILY]:
        out.append(Source(f"docx__{pdf.stem}", pdf, "real", ("eng",), pdf.with_suffix(".md"), "held"))
    return out


def truth(pdf: Path) -> tuple[list[str], str]:
    """Each page's text as the engine reads its text layer, and the document's Markdown."""
    from conversion.engine import ConvertOptions, convert
    from conversion.engine.elements import ElementType

    result = convert(pdf, options=ConvertOptions())
    pages = [
        "\n".join(e.text for e in p.elements if e.type is not ElementType.HIDDEN_TEXT and e.text.strip())
        for p in result.pages
    ]
    return pages, result.markdown


def degrade(image: object, kind: str, index: int, rng: random.Random) -> tuple[object, str]:
    """The page image as the variant scans it, and a word for what was done."""
    from PIL import Image, ImageChops, ImageFilter

    assert isinstance(image, Image.Image)
    done: list[str] = []
    if "noisy" in kind:
        noise = Image.effect_noise(image.size, NOISE_SIGMA)
        # A noise image is centred on grey 128: adding it less 128 leaves the mean alone.
        image = ImageChops.add(image, noise, scale=1.0, offset=-128)
        image = image.filter(ImageFilter.GaussianBlur(0.6))
        done.append(f"noise sigma {NOISE_SIGMA:g}, JPEG q{JPEG_QUALITY}")
    if "skew" in kind:
        angle = SKEW_DEGREES[(index + rng.randrange(len(SKEW_DEGREES))) % len(SKEW_DEGREES)]
        image = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
        done.append(f"skew {angle:+g} deg")
    return image, ", ".join(done) or "clean"


def wrap(pages: list[tuple[object, int, bool]], out: Path) -> None:
    """Image-only PDF: one image per page at its resolution (Flate, or DCT for JPEG)."""
    import pikepdf
    from PIL import Image

    pdf = pikepdf.new()
    for image, dpi, jpeg in pages:
        assert isinstance(image, Image.Image)
        width, height = image.size
        if jpeg:
            buf = io.BytesIO()
            image.save(buf, format="JPEG", quality=JPEG_QUALITY)
            data, flt = buf.getvalue(), pikepdf.Name.DCTDecode
        else:
            import zlib

            data, flt = zlib.compress(image.tobytes(), 6), pikepdf.Name.FlateDecode
        xobject = pikepdf.Stream(pdf, data)
        xobject.Type, xobject.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        xobject.Width, xobject.Height = width, height
        xobject.ColorSpace, xobject.BitsPerComponent, xobject.Filter = pikepdf.Name.DeviceGray, 8, flt
        w, h = width * 72.0 / dpi, height * 72.0 / dpi
        content = pikepdf.Stream(pdf, f"q {w:.3f} 0 0 {h:.3f} 0 0 cm /Im0 Do Q".encode())
        page = pikepdf.Dictionary(
            Type=pikepdf.Name.Page,
            MediaBox=[0, 0, w, h],
            Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=xobject)),
            Contents=content,
        )
        pdf.pages.append(pikepdf.Page(page))
    out.parent.mkdir(parents=True, exist_ok=True)
    pdf.save(out)


def make(out_dir: Path) -> dict[str, object]:
    import pypdfium2 as pdfium
    from PIL import Image

    rng = random.Random(27)
    scans: list[dict[str, object]] = []
    tune, held = sources(), held_sources()
    tune_long, held_long = long_sources("tune"), long_sources("held")
    held_rtl = held_rtl_sources()
    chosen = [*tune, *held, *tune_long, *held_long, *held_rtl]
    # The held documents after the tune ones, the longer documents after both, the held
    # right-to-left ones last (the scans made before stay as they were, byte for byte), each
    # list's variants dealt in turn from the first again.
    for index, src in [
        *enumerate(tune),
        *enumerate(held),
        *enumerate(tune_long),
        *enumerate(held_long),
        *enumerate(held_rtl),
    ]:
        texts, markdown = truth(src.pdf)
        variants = [CLEAN, DEGRADED[index % len(DEGRADED)]]
        if index % ROTATE_EVERY == 0:
            variants.append(ROTATED)
        doc = pdfium.PdfDocument(src.pdf)
        try:
            numbers = list(src.pages or range(1, min(len(doc), MAX_PAGES) + 1))
            whole = src.pages is None and len(doc) <= MAX_PAGES
            for variant in variants:
                dpi = int(variant.split("-")[0])
                pages: list[tuple[object, int, bool]] = []
                facts: list[dict[str, object]] = []
                for number in numbers:
                    image = doc[number - 1].render(scale=dpi / 72.0, grayscale=True).to_pil().convert("L")
                    image, what = degrade(image, variant, index + number, rng)
                    if variant == ROTATED and number == numbers[0]:
                        image = image.transpose(Image.Transpose.ROTATE_270)
                        what = "turned 90 deg clockwise"
                    pages.append((image, dpi, "noisy" in variant))
                    facts.append({"page": number, "truth": texts[number - 1], "degradation": what})
                pdf = out_dir / variant / f"{src.name}.pdf"
                wrap(pages, pdf)
                scans.append(
                    {
                        "id": f"{variant}/{src.name}",
                        "document": src.name,
                        "family": src.family,
                        "fold": src.fold,
                        "variant": variant,
                        "dpi": dpi,
                        "pdf": str(pdf),
                        "languages": list(src.languages),
                        "reference": str(src.reference) if src.reference else None,
                        "whole_document": whole,
                        "text_layer_markdown": markdown if whole else None,
                        "pages": facts,
                    }
                )
        finally:
            doc.close()
    by_fold = {"tune": len(tune) + len(tune_long), "held": len(held) + len(held_long) + len(held_rtl)}
    manifest = {"documents": len(chosen), "documents_by_fold": by_fold, "scans": scans}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1))
    return manifest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    manifest = make(Path(args[0]))
    pages = sum(len(s["pages"]) for s in manifest["scans"])  # type: ignore[arg-type,misc]
    print(json.dumps({"documents": manifest["documents"], "scans": len(manifest["scans"]), "pages": pages}))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
