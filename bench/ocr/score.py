"""Score the OCR systems' outputs (bench venv: rapidfuzz).

    bench/.venv/bin/python -m bench.ocr.score MANIFEST OUT_DIR SCORES_JSON

Per page: text fidelity against the page's truth with the measure of ``bench/real/score.py``
(``bench.quality.score.text_fidelity``: character-level Levenshtein similarity of the
normalised plain texts; order matters), and word recall (the share of the truth's words,
as a multiset, found in the output; order does not matter, so it separates misread words
from a different reading order). Per document (systems that write Markdown, on scans of
whole documents with a reference): heading recall against the reference
(``bench.real.score.structure``), beside the engine's text-layer conversion of the original.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.quality.mdparse import Parsed, normalise
from bench.quality.score import text_fidelity
from bench.real.score import clean_reference, structure

# Groups of the report: a variant's pages by what was done to them.
GROUPS = {
    "300": "clean, 300 dpi",
    "150": "clean, 150 dpi",
    "300-noisy": "noise + JPEG, 300 dpi",
    "150-noisy": "noise + JPEG, 150 dpi",
    "300-skew": "skew 1-3 deg, 300 dpi",
    "300-rot90": "first page turned 90 deg, 300 dpi",
}
DEGRADED = ("300-noisy", "150-noisy", "300-skew", "300-rot90")


def _words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", normalise(text).casefold()))


def word_recall(truth: str, text: str) -> float:
    want = _words(truth)
    if not want:
        return 1.0
    got = _words(text)
    return sum(min(n, got[w]) for w, n in want.items()) / sum(want.values())


def fidelity(truth: str, text: str) -> float:
    # Both sides are plain text, its lines the blocks: no line is read as Markdown syntax (a
    # "1." or "-" that opens a line is text here).
    def plain(s: str) -> Parsed:
        return Parsed(blocks=[ln for ln in s.splitlines() if ln.strip()])

    return text_fidelity(plain(truth), plain(text))


def score(manifest: dict[str, Any], outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    scans = {s["id"]: s for s in manifest["scans"]}
    systems: dict[str, Any] = {}
    for system, data in outputs.items():
        pages: list[dict[str, Any]] = []
        documents: list[dict[str, Any]] = []
        for row in data["scans"]:
            scan = scans[row["id"]]
            for fact, got in zip(scan["pages"], row["pages"], strict=False):
                pages.append(
                    {
                        "id": row["id"],
                        "page": fact["page"],
                        "variant": scan["variant"],
                        "family": scan["family"],
                        "fold": scan.get("fold", "tune"),
                        "dpi": scan["dpi"],
                        "degradation": fact["degradation"],
                        "text_fidelity": fidelity(fact["truth"], got["text"]),
                        "word_recall": word_recall(fact["truth"], got["text"]),
                        "cpu_s": got["cpu_s"],
                    }
                )
            if row["error"]:
                pages.extend(
                    {
                        "id": row["id"],
                        "page": fact["page"],
                        "variant": scan["variant"],
                        "family": scan["family"],
                        "fold": scan.get("fold", "tune"),
                        "dpi": scan["dpi"],
                        "degradation": fact["degradation"],
                        "text_fidelity": 0.0,
                        "word_recall": 0.0,
                        "cpu_s": None,
                        "error": row["error"],
                    }
                    for fact in scan["pages"]
                )
            md = row["pages"][0].get("document_markdown") if row["pages"] else None
            if md is not None and scan["reference"] and scan["whole_document"]:
                reference = clean_reference(Path(scan["reference"]).read_text())
                ocr = structure(reference, md)["heading_recall"]
                layer = structure(reference, scan["text_layer_markdown"])["heading_recall"]
                documents.append(
                    {
                        "id": row["id"],
                        "variant": scan["variant"],
                        "fold": scan.get("fold", "tune"),
                        "headings": ocr.total,
                        "found_ocr": ocr.hit,
                        "found_text_layer": layer.hit,
                    }
                )
        systems[system] = {
            "pages": pages,
            "documents": documents,
            "peak_rss_mib": data["peak_rss_mib"],
            "rss_after_first_mib": data["rss_after_first_mib"],
        }
    return {"systems": systems}


def main(argv: list[str] | None = None) -> int:
    manifest_path, out_dir, scores_path = sys.argv[1:] if argv is None else argv
    manifest = json.loads(Path(manifest_path).read_text())
    outputs = {p.stem: json.loads(p.read_text()) for p in sorted(Path(out_dir).glob("*.json"))}
    Path(scores_path).write_text(json.dumps(score(manifest, outputs), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
