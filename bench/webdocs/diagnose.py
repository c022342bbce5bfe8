"""The engine's losses on the webdocs set, sorted by kind (bench venv: the scorer's parser).

    python -m bench.webdocs.diagnose [SYSTEM [PLAN]]   # after `python -m bench.webdocs score`

Reads the plan ``score`` wrote (``bench/.cache/webdocs/plan.json``) and, per family, counts each
kind of failure over the whole set with the cells, items or headings it costs, and one example:

- tables (a reference table whose cells are not all in place, matched to the output's tables as
  ``bench/real/score.py`` does): no output table; split over several output tables; fewer columns
  than the reference (cells merged across columns); more columns; more rows (a wrapped cell read
  as new rows); fewer rows (rows merged); the header row not the first output row; and, per
  missed cell, whether its text is inside a longer output cell (merged), spread over several
  output cells (split), elsewhere in the table (misplaced) or absent from every table;
- list items: not a list item, its text inside a paragraph (the list read as prose), inside a
  longer item (items merged) or missing; found at the wrong depth;
- headings: missed (its text not a heading), at the wrong level (per reference -> output level),
  output headings that are none of the reference's;
- reading order: reference blocks missing from the output, and found but out of order.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from bench.paths import REPO_DIR
from bench.quality.matching import loose_key, match
from bench.quality.mdparse import Parsed, parse
from bench.quality.score import assign_tables, joined_table
from bench.real.score import _pair_by_overlap, clean_reference, locate_blocks, longest_increasing, text_blocks

CACHE = REPO_DIR / "bench" / ".cache" / "webdocs"


def _shape(t: list[list[str]]) -> tuple[int, int]:
    return len(t), max((len(r) for r in t), default=0)


def table_failures(ref: Parsed, out: Parsed, tops: set[str] = frozenset()) -> list[dict[str, object]]:  # type: ignore[assignment]
    """One record per reference table with cells out of place: its kinds and lost cells."""
    records = []
    for g, (_hits, total, js) in zip(ref.tables, assign_tables(ref, out, loose_key), strict=True):
        g_keys = [[loose_key(c) for c in row] for row in g]
        kinds: list[str] = []
        if not js:
            in_text = sum(1 for row in g_keys for k in row if k and k in loose_key(out.text))
            kinds.append("no output table" + (" (cells read as text)" if in_text > total / 2 else ""))
            records.append({"kinds": kinds, "lost": total, "total": total, "cells": {}, "example": " | ".join(g[0])})
            continue
        o = joined_table(out, js, loose_key)
        o_keys = [[loose_key(c) for c in row] for row in o]
        (gr, gc), (orows, ocols) = _shape(g), _shape(o)
        if len(js) > 1:
            kinds.append("split over several output tables")
        if ocols < gc:
            kinds.append("fewer columns")
        elif ocols > gc:
            kinds.append("more columns")
        if orows > gr:
            kinds.append("more rows")
        elif orows < gr:
            kinds.append("fewer rows")
        if o_keys and [k for k in g_keys[0] if k] != [k for k in o_keys[0] if k]:
            top = ": it is a page or column's first line" if _at_top(" ".join(g[0]), tops) else ""
            kinds.append("header row not the first output row" + top)
        row_of = _pair_by_overlap(
            [Counter(k for k in r if k) for r in g_keys], [Counter(k for k in r if k) for r in o_keys]
        )
        width = max(gc, ocols)

        def columns(rows: list[list[str]], n: int = width) -> list[Counter[str]]:
            return [Counter(r[c] for r in rows if c < len(r) and r[c]) for c in range(n)]

        col_of = _pair_by_overlap(columns(g_keys), columns(o_keys))
        o_cells = [k for row in o_keys for k in row if k]
        cells: Counter[str] = Counter()
        example = ""
        for i, row in enumerate(g_keys):
            for c, k in enumerate(row):
                if not k:
                    continue
                j, d = row_of.get(i), col_of.get(c)
                if j is not None and d is not None and d < len(o_keys[j]) and o_keys[j][d] == k:
                    continue
                if k in o_cells:
                    why = "misplaced (in the table, another row or column)"
                elif any(k in x for x in o_cells if len(x) > len(k)):
                    why = "merged into a longer output cell"
                elif sum(1 for x in o_cells if x and x in k) >= 2:
                    why = "spread over several output cells"
                else:
                    why = "absent from the output table"
                cells[why] += 1
                if not example:
                    example = f"{g[i][c]!r} ({why})"
        records.append(
            {
                "kinds": kinds or ["cells only"],
                "lost": sum(cells.values()),
                "total": total,
                "cells": dict(cells),
                "shape": f"{gr}x{gc} -> {orows}x{ocols} in {len(js)} table(s)",
                "example": example,
            }
        )
    return [r for r in records if r["lost"]]


_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_PAGE_NUMBER = re.compile(r"^Page \d+ of \d+$")
TOP_KEY_CHARS = 24  # characters of a line's loose key compared with a block's start
MIN_CUT_KEY_CHARS = 20  # characters of an output item that may be the start of a reference item


def page_tops(pdf: Path, columns: int, running: set[str]) -> set[str]:
    """The loose keys (first characters) of the first line of each page, or of each column of
    a page printed in two, the running lines left out."""
    import pymupdf

    tops: set[str] = set()
    with pymupdf.open(pdf) as doc:
        for page in doc:
            mid = page.rect.width / 2
            first: dict[int, tuple[float, str]] = {}
            for block in page.get_text("dict")["blocks"]:
                for line in block.get("lines", []):
                    text = "".join(span["text"] for span in line["spans"]).strip()
                    if not text or text in running or _PAGE_NUMBER.match(text):
                        continue
                    col = int(columns == 2 and line["bbox"][0] >= mid)
                    if col not in first or line["bbox"][1] < first[col][0]:
                        first[col] = (line["bbox"][1], text)
            tops |= {loose_key(text)[:TOP_KEY_CHARS] for _, text in first.values()}
    return {t for t in tops if t}


def _at_top(text: str, tops: set[str]) -> bool:
    k = loose_key(text)
    return any(k.startswith(t) or t.startswith(k[:TOP_KEY_CHARS]) for t in tops) if k else False


def list_failures(ref: Parsed, out: Parsed, tops: set[str] = frozenset()) -> list[tuple[str, str]]:  # type: ignore[assignment]
    fails = []
    out_blocks = [loose_key(b) for b in out.blocks]
    out_items = [loose_key(i.text) for i in out.items]
    run_at_top = False  # the current run of items at a wrong depth began at a page or column top
    for item, got in match(ref.items, out.items, lambda it: loose_key(it.text)):
        k = loose_key(item.text)
        if got is not None:
            if got.depth != item.depth:
                run_at_top = run_at_top or _at_top(item.text, tops)
                where = ", in a run begun at a page or column top" if run_at_top else ""
                fails.append((f"wrong depth ({item.depth} -> {got.depth}){where}", item.text))
            else:
                run_at_top = False
            continue
        if not k:
            continue
        if _at_top(item.text, tops) and k not in loose_key(out.text):
            fails.append(("text dropped: first line of a page or column", item.text))
        elif any(k in x and len(x) > len(k) for x in out_items):
            fails.append(("merged into another item", item.text))
        elif any(len(x) >= MIN_CUT_KEY_CHARS and k.startswith(x) for x in out_items):
            fails.append(("cut: only its first lines an item, the rest a separate block", item.text))
        elif any(k in b for b in out_blocks):
            fails.append(("text kept, not a list item", item.text))
        else:
            fails.append(("text not found", item.text))
    return fails


def heading_failures(
    ref: Parsed,
    out: Parsed,
    tops: set[str] = frozenset(),  # type: ignore[assignment]
    out_md: str = "",
) -> list[tuple[str, str]]:
    fails = []
    text = loose_key(out.text)
    code = [loose_key(c) for c in _FENCED.findall(out_md)]
    spurious = [h for h, in_ref in match(out.headings, ref.headings, lambda x: loose_key(x.text)) if in_ref is None]
    cut = set()
    for h, got in match(ref.headings, out.headings, lambda x: loose_key(x.text)):
        if got is None:
            k = loose_key(h.text)
            first = [o for o in spurious if loose_key(o.text) and k.startswith(loose_key(o.text))]
            if first:
                kind = "missed: wrapped, only its first line a heading (the rest a heading or paragraph)"
                cut |= {id(o) for o in first}
            elif any(k in c for c in code):
                kind = "missed, read as (part of) a code block"
            elif k in text:
                kind = "missed, text kept as body text"
            elif _at_top(h.text, tops):
                kind = "missed, text dropped: first line of a page or column"
            else:
                kind = "missed, text not found"
            fails.append((f"h{h.level} {kind}", h.text))
        elif got.level != h.level:
            fails.append((f"h{h.level} as h{got.level}", h.text))
    for h in spurious:
        if id(h) not in cut:
            fails.append((f"spurious h{h.level}", h.text))
    return fails


def order_failures(ref: Parsed, out: Parsed, tops: set[str] = frozenset()) -> Counter[str]:  # type: ignore[assignment]
    blocks = text_blocks(ref)
    places = locate_blocks(blocks, out.text)
    found = [p for p in places if p is not None]
    missing = [b for b, p in zip(blocks, places, strict=True) if p is None]
    at_top = sum(1 for b in missing if _at_top(b, tops))
    return Counter(
        {
            "blocks missing, first line of a page or column": at_top,
            "blocks missing, elsewhere": len(missing) - at_top,
            "blocks out of order": len(found) - longest_increasing(found),
        }
    )


def main(system: str = "engine", plan_path: str = str(CACHE / "plan.json")) -> int:
    plan = json.loads(Path(plan_path).read_text())
    out_dir = Path(plan["output_dir"]) / system
    report: dict[str, dict[str, object]] = {}
    for d in plan["documents"]:
        fam = str(d["set"]).removeprefix("webdocs-")
        ref = parse(clean_reference(Path(d["reference"]).read_text()))
        md_path = out_dir / f"{d['id']}.md"
        out = parse(md_path.read_text() if md_path.exists() else "")
        running = set((d.get("running") or {}).values())
        pdf = CACHE / "pdf" / fam / f"{d['name']}.pdf"
        tops = page_tops(pdf, 2 if fam == "web2col" else 1, running) if pdf.exists() else set()
        r = report.setdefault(
            fam,
            {
                "tables": defaultdict(list),
                "cells": Counter(),
                "lists": defaultdict(list),
                "headings": defaultdict(list),
                "order": Counter(),
            },
        )
        for t in table_failures(ref, out, tops):
            r["cells"].update(t["cells"])  # type: ignore[attr-defined]
            for kind in t["kinds"]:  # type: ignore[attr-defined]
                r["tables"][kind].append((d["name"], t))  # type: ignore[index]
        for kind, text in list_failures(ref, out, tops):
            r["lists"][kind].append((d["name"], text))  # type: ignore[index]
        for kind, text in heading_failures(ref, out, tops, md_path.read_text() if md_path.exists() else ""):
            r["headings"][kind].append((d["name"], text))  # type: ignore[index]
        r["order"].update(order_failures(ref, out, tops))  # type: ignore[attr-defined]
    for fam, r in report.items():
        print(f"\n== {fam} ({system})")
        print("tables (a table may have several kinds; cells lost in those tables):")
        for kind, ts in sorted(r["tables"].items(), key=lambda kv: -sum(t["lost"] for _, t in kv[1])):  # type: ignore[attr-defined]
            lost = sum(t["lost"] for _, t in ts)
            name, t = ts[0]
            print(
                f"  {kind}: {len(ts)} tables, {lost} cells lost; e.g. {name}: {t.get('shape', '')} {t['example'][:90]}"
            )
        print("  missed cells by cause:", dict(r["cells"].most_common()))  # type: ignore[attr-defined]
        for part in ("lists", "headings"):
            print(f"{part}:")
            for kind, xs in sorted(r[part].items(), key=lambda kv: -len(kv[1])):  # type: ignore[attr-defined]
                name, text = xs[0]
                docs = len({n for n, _ in xs})
                print(f"  {kind}: {len(xs)} in {docs} docs; e.g. {name}: {text[:80]!r}")
        print("order:", dict(r["order"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
