"""``python -m bench elements``: how much the element layer adds to a JSON result.

For the long files of the real corpus (their first 200 pages, the most one conversion takes),
a child process of the service venv converts and writes the two bodies the API writes: the
JSON result (pages with their elements, and the document's Markdown) and the Markdown answer
(``Accept: text/markdown``, a page marker before each page). Reported: both sizes, their
ratio, the same ratio without the elements (what the result weighed before them), and the
elements by type. The engine's speed with the elements is measured by ``python -m bench speed``.
"""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
from datetime import UTC, datetime

from bench.paths import CORPUS_DIR, MAIN_PYTHON, REPO_DIR, RESULTS_DIR

FILES = ("pdfjs__freeculture.pdf", "pdfcpu__WaldenFull.pdf", "samplefiles__GeoTopo-komprimiert.pdf")
MAX_PAGES = 200

_CHILD = r"""
import collections, gzip, json, sys
from conversion.engine import convert
r = convert(sys.argv[1], pages=list(range(1, int(sys.argv[2]) + 1)))
markdown, doc_spans = r.document()
pages = [
    {"page": p.page, "label": p.label, "markdown": p.markdown, "has_text_layer": p.has_text_layer,
     "warnings": p.warnings, "width": p.width, "height": p.height,
     "elements": [e.as_dict(span) for e, span in zip(p.elements, spans)]}
    for p, spans in zip(r.pages, doc_spans)
]
# As DRF's JSON renderer writes it: UTF-8, compact separators.
dump = lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))
body = dump({"object": "conversion", "pages": pages, "markdown": markdown, "warnings": r.warnings})
for page in pages:
    page["elements"] = []
bare = dump({"object": "conversion", "pages": pages, "markdown": markdown, "warnings": r.warnings})
text = "\n\n".join(f"<!-- page {p.page} -->\n\n{p.markdown}".rstrip() for p in r.pages) + "\n"
types = collections.Counter(str(e.type) for p in r.pages for e in p.elements)
# On the wire, as ApiCompressionMiddleware sends both to a client that accepts gzip.
packed = lambda value: len(gzip.compress(value.encode(), 6, mtime=0))
print(json.dumps({"pages": len(r.pages), "json": len(body.encode()), "json_without_elements": len(bare.encode()),
                  "markdown": len(text.encode()), "json_gzip": packed(body), "markdown_gzip": packed(text),
                  "elements": dict(types.most_common())}))
"""


def run(argv: list[str]) -> int:
    rows = []
    for name in FILES:
        path = CORPUS_DIR / "files" / name
        if not path.exists():
            print(f"{name}: not in the corpus, left out", file=sys.stderr)
            continue
        proc = subprocess.run(
            [str(MAIN_PYTHON), "-c", _CHILD, str(path), str(MAX_PAGES)],
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        row = {"file": name, **json.loads(proc.stdout.strip().splitlines()[-1])}
        rows.append(row)
        print(f"  {name}: JSON {row['json'] / row['markdown']:.2f}x the Markdown", file=sys.stderr)
    data = {
        "command": " ".join(["python -m bench elements", *(shlex.quote(a) for a in argv)]),
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "files": rows,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "elements.json").write_text(json.dumps(data, indent=1) + "\n")
    lines = [
        "# Element layer: size of the JSON result",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} ({data['machine']}). The first "
        f"{MAX_PAGES} pages of each file; sizes in bytes of the bodies the API writes.",
        "",
        "| file | pages | Markdown answer | JSON | JSON / Markdown | JSON without elements / Markdown "
        "| gzip: JSON / Markdown | JSON gzip / Markdown | elements |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in r["elements"].items())
        lines.append(
            f"| {r['file']} | {r['pages']} | {r['markdown']:,} | {r['json']:,} | {r['json'] / r['markdown']:.2f} | "
            f"{r['json_without_elements'] / r['markdown']:.2f} | {r['json_gzip']:,} / {r['markdown_gzip']:,} = "
            f"{r['json_gzip'] / r['markdown_gzip']:.2f} | {r['json_gzip'] / r['markdown']:.2f} | {kinds} |"
        )
    lines += [
        "",
        "The JSON result carries the page's Markdown and the document's Markdown (decisions.md 3) and each",
        "element's `text` (issue 14); since engine 1.12.0 (issue 28) an element no longer copies its Markdown",
        "but points into both with `md_span` and `doc_span`. Three copies of the text are a floor of about",
        "2.9x before any box, type or span; tables weigh most (each cell has its text and box). Issue 28's",
        "goals are 3.5x uncompressed and 1.0x gzipped against the uncompressed Markdown. On the wire, to a",
        "client that accepts gzip (requests, httpx, browsers, `curl --compressed`), /v1 answers of 8 KiB and",
        "more are compressed (last column). Spans are numbers, which gzip packs less well than the repeated",
        "Markdown they replace: uncompressed sizes fall, gzipped ones move little.",
        "",
    ]
    (RESULTS_DIR / "elements.md").write_text("\n".join(lines))
    return 0
