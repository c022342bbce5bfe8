"""``python -m bench chunks``: chunks measured against the structure of the authored corpus.

Each document of ``../shared/corpus/authored`` is converted once by a child process in the
service's venv (``bench/chunk_measure.py``), then chunked at each budget. Measured (issue 28's
goals): chunks within the budget (goal >= 99%), table rows cut (0), sentences cut where the
sentence fits the budget (0), top-level sections crossed without need (a chunk holding a
top-level heading after its start but not the whole section it opens: 0), heading paths equal
to the reference's (the reference Markdown's headings above the chunk's first text: >= 90% of
the chunks whose text is found in the reference), and the CPU time chunking adds to the
conversion (<= 5%). The held-out sources (``bench/real/sets.py`` HELD_OUT) are reported apart.
"""

from __future__ import annotations

import itertools
import json
import platform
import shlex
import subprocess
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from bench.paths import CACHE_DIR, MAIN_PYTHON, REPO_DIR, RESULTS_DIR
from bench.real.sets import load

CACHE = CACHE_DIR / "chunks.jsonl"
COUNTS = (
    "chunks",
    "within_budget",
    "oversize_single",
    "table_cuts",
    "table_rows_cut",
    "prose_cuts",
    "sentences_cut",
    "sentences_cut_avoidable",
    "top_crossings",
    "top_crossings_bad",
    "located",
    "path_match",
    "heading_last",
)


def run(budgets: list[int], limit: int, argv: list[str], fresh: bool = False) -> int:
    docs, _ = load(["authored"])
    # The families interleaved, so that a run stopped early has measured each of them.
    by_set: dict[str, list[Any]] = defaultdict(list)
    for d in docs:
        by_set[d.set].append(d)
    docs = [d for group in itertools.zip_longest(*by_set.values()) for d in group if d is not None]
    if limit:
        docs = docs[:limit]
    by_id = {d.id: d for d in docs}
    # Each document's measures are kept as they come (a long run can be resumed).
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    if fresh and CACHE.exists():
        CACHE.unlink()
    done: dict[str, dict[str, Any]] = {}
    if CACHE.exists():
        for line in CACHE.read_text().splitlines():
            row = json.loads(line)
            if row.get("budgets_asked") == budgets or "tokenizer_load_seconds" in row:
                done[row.get("id", "")] = row
    todo = [d for d in docs if d.id not in done]
    payload = [{"id": d.id, "pdf": str(d.pdf), "reference": str(d.reference), "budgets": budgets} for d in todo]
    if payload:
        with CACHE.open("a") as cache:
            child = subprocess.Popen(
                [str(MAIN_PYTHON), "-m", "bench.chunk_measure"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=REPO_DIR,
                text=True,
            )
            assert child.stdin is not None
            assert child.stdout is not None
            child.stdin.write(json.dumps(payload))
            child.stdin.close()
            for line in child.stdout:
                row = {**json.loads(line), "budgets_asked": budgets}
                done[row.get("id", "")] = row
                cache.write(json.dumps(row) + "\n")
                cache.flush()
            child.wait()
    rows = [done.get("", {"tokenizer_load_seconds": 0.0})] + [done[d.id] for d in docs if d.id in done]
    load_seconds = rows[0]["tokenizer_load_seconds"]
    rows = rows[1:]
    groups: dict[tuple[str, str, int], dict[str, Any]] = defaultdict(
        lambda: {**dict.fromkeys(COUNTS, 0), "docs": 0, "pages": 0, "convert": 0.0, "chunk": 0.0, "worst_ratio": 0.0}
    )
    errors = []
    for row in rows:
        if "error" in row:
            errors.append(f"{row['id']}: {row['error']}")
            continue
        doc = by_id[row["id"]]
        for budget, m in row["budgets"].items():
            added = m["seconds"] + row["prepare_seconds"]
            for key in ((doc.fold, doc.set, int(budget)), (doc.fold, "all", int(budget))):
                g = groups[key]
                for name in COUNTS:
                    g[name] += m[name]
                g["docs"] += 1
                g["pages"] += row["pages"]
                g["convert"] += row["convert_seconds"]
                g["chunk"] += added
                g["worst_ratio"] = max(g["worst_ratio"], added / max(row["convert_seconds"], 1e-9))
    data = {
        "command": " ".join(["python -m bench", *(shlex.quote(a) for a in argv)]),
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "tokenizer_load_seconds": load_seconds,
        "measured": f"{len(rows)} of {len(docs)} documents",
        "errors": errors,
        "groups": [{"fold": f, "set": s, "budget": b, **g} for (f, s, b), g in sorted(groups.items())],
        # Per document for the development sources only: held-out documents are read as sets.
        "documents": [r for r in rows if "error" in r or by_id[r["id"]].fold == "tune"],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "chunks.json").write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS_DIR / "chunks.md").write_text(report(data))
    print(report(data))
    return 0


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def report(data: dict[str, Any]) -> str:
    lines = [
        "# Chunks against the authored corpus's structure (issue 28 item 2)",
        "",
        f"Produced by `{data['command']}` on {data['generated_at']} ({data['machine']}), {data['measured']}"
        " of the authored corpus (the families interleaved); times are CPU",
        "seconds (process time) of one process on a 2-core machine shared with other agents, so",
        "they are noisy. Tokens are cl100k_base's (tiktoken, rank file vendored); building the",
        f"tokenizer takes {data['tokenizer_load_seconds']:.2f} s once per process (not counted below).",
        "",
        "Columns: **within** chunks with `token_count <= max_tokens` (goal >= 99%; `single`: over",
        "the budget because they hold one word or one table row larger than it); **rows cut** chunk",
        "ends inside a table row (goal 0) of all chunk ends inside a table; **sentences cut** chunk",
        "ends inside a sentence that fits the budget (goal 0; of all ends inside a paragraph or a list",
        "item, and all ends inside a sentence); **top crossed** chunks that hold a top-level heading",
        "after their start without the whole section it opens (goal 0; of all that hold one);",
        "**path** chunks whose `heading_path` equals the reference's headings above their first",
        "text (goal >= 90%), of the chunks whose first words are found in the reference; **heading",
        "last** chunks ending in a heading; **time** the CPU time chunking adds (the document's",
        "blocks and the chunks) over the conversion's (goal <= 5%), in total and for the worst",
        "document.",
        "",
    ]
    for fold, title in (("tune", "Development sources"), ("held", "Held-out sources (not tuned on)")):
        lines += [
            f"## {title}",
            "",
            "| set | max_tokens | docs | pages | chunks | within (single) | rows cut | sentences cut "
            "| top crossed | path | heading last | time | worst doc |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for g in data["groups"]:
            if g["fold"] != fold:
                continue
            lines.append(
                f"| {g['set']} | {g['budget']} | {g['docs']} | {g['pages']} | {g['chunks']} | "
                f"{_pct(g['within_budget'], g['chunks'])} ({g['oversize_single']}) | "
                f"{g['table_rows_cut']} of {g['table_cuts']} | "
                f"{g['sentences_cut_avoidable']} ({g['sentences_cut']}) of {g['prose_cuts']} | "
                f"{g['top_crossings_bad']} of {g['top_crossings']} | "
                f"{_pct(g['path_match'], g['located'])} of {g['located']} | {g['heading_last']} | "
                f"{_pct(g['chunk'], g['convert'])} | {100 * g['worst_ratio']:.1f}% |"
            )
        lines.append("")
    if data["errors"]:
        lines += ["Not converted: " + "; ".join(data["errors"]), ""]
    return "\n".join(lines)
