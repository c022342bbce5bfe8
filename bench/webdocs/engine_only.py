"""The engine of this tree alone on the webdocs set, for comparing two engine versions.

    .venv/bin/python -m bench.webdocs.engine_only OUT   # in a tree with the cache built (or linked)

Converts every kept part (``bench/.cache/webdocs/checked.json``) in one process with the engine
of the tree on the path (``tables: markdown``, as ``bench real``), writes ``OUT/engine/ID.md``,
and scores them with ``bench.real.score`` into ``OUT/score.json`` (bench venv). Nothing in
``bench/results`` is touched and pymupdf4llm is not run, so two trees' outputs (say main and a
branch) can be compared in ten minutes each; ``python -m bench.webdocs score`` is the report.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from bench.paths import BENCH_PYTHON, REPO_DIR
from conversion.engine import ConvertOptions, convert

CACHE = REPO_DIR / "bench" / ".cache" / "webdocs"


def main(out: Path) -> int:
    (out / "engine").mkdir(parents=True, exist_ok=True)
    docs = [d for d in json.loads((CACHE / "checked.json").read_text()) if d["kept"]]
    for d in docs:
        doc_id = f"{d['family']}__{d['name']}"
        started = time.process_time()
        markdown = convert(d["pdf"], options=ConvertOptions(tables="markdown")).markdown
        (out / "engine" / f"{doc_id}.md").write_text(markdown)
        run = {"ok": True, "process_s": time.process_time() - started}
        (out / "engine" / f"{doc_id}.json").write_text(json.dumps(run))
    plan = {
        "output_dir": str(out),
        "systems": ["engine"],
        "documents": [
            {
                "id": f"{d['family']}__{d['name']}",
                "set": f"webdocs-{d['family']}",
                "name": d["name"],
                "fold": "tune",
                "reference": d["reference"],
                "running": d["running"],
                "pages": d["pages"],
            }
            for d in docs
        ],
    }
    (out / "plan.json").write_text(json.dumps(plan))
    score = [str(BENCH_PYTHON), "-m", "bench.real.score", str(out / "plan.json"), "--out", str(out / "score.json")]
    subprocess.run(score, cwd=REPO_DIR, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
