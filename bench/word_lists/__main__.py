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
from typing import Any

from bench.paths import BENCH_PYTHON, CACHE_DIR, REPO_DIR
from bench.quality.run import convert_in_child

DOCS = Path(__file__).resolve().parent / "docs"
CACHE = CACHE_DIR / "word_lists"
TIME_LIMIT_S = 120.0


def score(docs: Path, cache: Path, set_name: str, names: list[str]) -> dict[str, Any]:
    """Convert the PDFs of `docs` (those named, or all) with the engine and score them against
    their ``NAME.md`` with the real bench's scorer; the record lands in ``cache/scores.json``."""
    pdfs = [p for p in sorted(docs.glob("*.pdf")) if not names or p.stem in names]
    out_dir = cache / "out"
    (out_dir / "engine").mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda p: convert_in_child("engine", p, out_dir / "engine" / f"{p.stem}.md", TIME_LIMIT_S), pdfs))
    plan = {
        "output_dir": str(out_dir),
        "systems": ["engine"],
        "documents": [
            {"id": p.stem, "set": set_name, "name": p.stem, "fold": "tune", "reference": str(p.with_suffix(".md"))}
            for p in pdfs
        ],
    }
    plan_path, scores = cache / "plan.json", cache / "scores.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    subprocess.run(
        [str(BENCH_PYTHON), "-m", "bench.real.score", str(plan_path), "--out", str(scores)], cwd=REPO_DIR, check=True
    )
    data: dict[str, Any] = json.loads(scores.read_text())
    return data


def print_scores(data: dict[str, Any], set_name: str, metrics: tuple[str, ...]) -> None:
    """Per document text fidelity and each of `metrics` as hit/total, then the set's means."""
    print(f"{'document':24s} {'text':>5s} " + " ".join(f"{m[:7]:>7s}" for m in metrics))
    for name, row in data["documents"].items():
        e = row["engine"]
        c = e["counts"]
        cols = [f"{c[m][0]}/{c[m][1]}" if c.get(m) else "-" for m in metrics]
        print(f"{name:24s} {e['text_fidelity']:5.2f} " + " ".join(f"{col:>7s}" for col in cols))
    mean = data["sets"][set_name]["engine"]["mean"]
    print("mean: " + ", ".join(f"{k} {v:.3f}" for k, v in mean.items() if v is not None))


def main(names: list[str]) -> int:
    data = score(DOCS, CACHE, "word-lists", names)
    print_scores(data, "word-lists", ("list_recall", "list_depth_correct", "table_cells"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
