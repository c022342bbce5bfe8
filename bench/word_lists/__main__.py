"""``python -m bench.word_lists [NAME ...]``: the engine on the Word list documents of
``bench/word_lists/docs/`` (made by ``generate.py``), scored by the real bench's scorer
(``bench/real/score.py``, in the bench venv). Prints per document text fidelity, list item
recall, nesting and table cells, then the means; the full record lands in
``bench/.cache/word_lists/scores.json``. Stdlib only, like ``python -m bench``."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.paths import BENCH_PYTHON, CACHE_DIR, REPO_DIR
from bench.quality.run import convert_in_child

DOCS = Path(__file__).resolve().parent / "docs"
CACHE = CACHE_DIR / "word_lists"
TIME_LIMIT_S = 120.0


def main(names: list[str]) -> int:
    pdfs = [p for p in sorted(DOCS.glob("*.pdf")) if not names or p.stem in names]
    out_dir = CACHE / "out"
    (out_dir / "engine").mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda p: convert_in_child("engine", p, out_dir / "engine" / f"{p.stem}.md", TIME_LIMIT_S), pdfs))
    plan = {
        "output_dir": str(out_dir),
        "systems": ["engine"],
        "documents": [
            {"id": p.stem, "set": "word-lists", "name": p.stem, "fold": "tune", "reference": str(p.with_suffix(".md"))}
            for p in pdfs
        ],
    }
    plan_path, scores = CACHE / "plan.json", CACHE / "scores.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    subprocess.run(
        [str(BENCH_PYTHON), "-m", "bench.real.score", str(plan_path), "--out", str(scores)], cwd=REPO_DIR, check=True
    )
    data = json.loads(scores.read_text())
    print(f"{'document':24s} {'text':>5s} {'lists':>7s} {'nest':>7s} {'cells':>7s}")
    for name, row in data["documents"].items():
        e = row["engine"]
        c = e["counts"]
        cols = [f"{c[m][0]}/{c[m][1]}" for m in ("list_recall", "list_depth_correct", "table_cells")]
        print(f"{name:24s} {e['text_fidelity']:5.2f} {cols[0]:>7s} {cols[1]:>7s} {cols[2]:>7s}")
    mean = data["sets"]["word-lists"]["engine"]["mean"]
    print("mean: " + ", ".join(f"{k} {v:.3f}" for k, v in mean.items() if v is not None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
