"""One OCR system over every scan of the manifest, in this child process.

    python -m bench.ocr.systems SYSTEM MANIFEST OUT_JSON [--pages N]

SYSTEM: ``tesseract`` (Tesseract 5 through tesserocr, page segmentation with orientation and
script detection, Debian's traineddata; bench or service venv), ``rapidocr`` (RapidOCR's
ONNX models from its wheel; bench venv), ``engine`` (svcx's conversion with ``ocr="force"``;
service venv), ``ocrmypdf`` (Debian's ``ocrmypdf`` command with its defaults, text from its
``--sidecar``; its CPU time is its children's). ``--pages N``: only the first N pages of the
manifest (a slow system measured on a part).

Writes per page: its text, CPU seconds (``time.process_time``: every thread of this process;
the children's for ocrmypdf) and, for the run, the peak memory (``ru_maxrss``) and that
after the imports and models loaded.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TESSDATA = os.environ.get("TESSDATA_PREFIX", "/usr/share/tesseract-ocr/5/tessdata")

PageReader = Callable[[dict[str, Any]], list[dict[str, Any]]]


def _render(pdf: str, dpi: int) -> list[Any]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        return [page.render(scale=dpi / 72.0, grayscale=True).to_pil().convert("L") for page in doc]
    finally:
        doc.close()


def _tesseract() -> PageReader:
    import tesserocr

    apis: dict[str, Any] = {}

    def read(scan: dict[str, Any]) -> list[dict[str, Any]]:
        langs = "+".join(scan["languages"])
        if langs not in apis:
            apis[langs] = tesserocr.PyTessBaseAPI(path=TESSDATA, lang=langs, psm=tesserocr.PSM.AUTO_OSD)
        api = apis[langs]
        out = []
        for image in _render(scan["pdf"], scan["dpi"]):
            started = time.process_time()
            api.SetImage(image)
            api.SetSourceResolution(scan["dpi"])
            text = api.GetUTF8Text()
            out.append({"text": text, "cpu_s": time.process_time() - started})
        return out

    return read


def _rapidocr() -> PageReader:
    import numpy as np
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def read(scan: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for image in _render(scan["pdf"], scan["dpi"]):
            started = time.process_time()
            result, _ = engine(np.array(image.convert("RGB")))
            # Lines top to bottom, then left to right within a band of half a line.
            boxes = [(min(p[1] for p in box), min(p[0] for p in box), text) for box, text, _ in result or []]
            boxes.sort()
            text = "\n".join(t for _, _, t in boxes)
            out.append({"text": text, "cpu_s": time.process_time() - started})
        return out

    return read


def _engine() -> PageReader:
    from conversion.engine import ConvertOptions, convert
    from conversion.engine.elements import ElementType
    from conversion.engine.ocr import ISO_TO_TESSERACT, OcrOptions

    iso = {name: code for code, name in ISO_TO_TESSERACT.items()}

    def read(scan: dict[str, Any]) -> list[dict[str, Any]]:
        started = time.process_time()
        languages = tuple(iso[name] for name in scan["languages"])
        options = ConvertOptions(ocr=OcrOptions(mode="force", languages=languages))
        result = convert(scan["pdf"], options=options)
        cpu = (time.process_time() - started) / max(1, len(result.pages))
        out = []
        for page in result.pages:
            text = "\n".join(e.text for e in page.elements if e.type is not ElementType.HIDDEN_TEXT and e.text.strip())
            out.append({"text": text, "cpu_s": cpu, "markdown": page.markdown})
        if out:
            out[0]["document_markdown"] = result.markdown
        return out

    return read


def _ocrmypdf() -> PageReader:
    def read(scan: dict[str, Any]) -> list[dict[str, Any]]:
        with tempfile.TemporaryDirectory() as tmp:
            sidecar = Path(tmp) / "text.txt"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            cmd = [
                "ocrmypdf",
                "--quiet",
                "--jobs",
                "1",
                "--output-type",
                "pdf",  # not PDF/A: Ghostscript's conversion would be timed, not OCR
                "-l",
                "+".join(scan["languages"]),
                "--sidecar",
                str(sidecar),
                scan["pdf"],
                str(Path(tmp) / "out.pdf"),
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"})
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode:
                raise RuntimeError(f"ocrmypdf exit {proc.returncode}: {proc.stderr[-300:]}")
            pages = sidecar.read_text().split("\f")
        cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / len(scan["pages"])
        return [{"text": pages[i] if i < len(pages) else "", "cpu_s": cpu} for i in range(len(scan["pages"]))]

    return read


SYSTEMS: dict[str, Callable[[], PageReader]] = {
    "tesseract": _tesseract,
    "rapidocr": _rapidocr,
    "engine": _engine,
    "ocrmypdf": _ocrmypdf,
}


def _rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    limit = None
    if "--pages" in args:
        i = args.index("--pages")
        limit = int(args[i + 1])
        del args[i : i + 2]
    system, manifest_path, out_path = args
    scans = json.loads(Path(manifest_path).read_text())["scans"]
    read = SYSTEMS[system]()
    rows: list[dict[str, Any]] = []
    loaded: float | None = None
    done = 0
    for scan in scans:
        if limit is not None and done >= limit:
            break
        try:
            pages = read(scan)
            error = None
        except Exception as exc:  # a system's failure on one scan is a result, not a crash
            pages, error = [], f"{type(exc).__name__}: {exc}"[:300]
        if loaded is None:
            # The first scan loaded the models; what the process held then is its floor.
            loaded = _rss_mib()
        rows.append({"id": scan["id"], "pages": pages, "error": error})
        done += len(scan["pages"])
    peak = _rss_mib(resource.RUSAGE_CHILDREN if system == "ocrmypdf" else resource.RUSAGE_SELF)
    Path(out_path).write_text(
        json.dumps({"system": system, "scans": rows, "peak_rss_mib": peak, "rss_after_first_mib": loaded})
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
