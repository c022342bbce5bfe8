"""Score Markdown outputs against the ground truth; identical code for every system.

Runs in the bench venv (needs rapidfuzz)::

    bench/.venv/bin/python -m bench.quality.score --systems engine markitdown pymupdf4llm

Metrics per document (ground truth G, output O, both read by ``mdparse.parse``):

- text fidelity: 1 - Levenshtein(plain(G), plain(O)) / max(len): character-level, on the
  normalised plain text (Markdown syntax stripped, NFKC, whitespace collapsed). Reading
  order matters; leaked headers/footers and dropped text both cost.
- heading recall: share of G's headings found among O's headings with the same text
  (fuzzy ratio >= 90 on the key) at the same level; also reported at any level, and
  heading precision (share of O's headings that match some G heading at any level).
- list recall: share of G's list items found among O's Markdown list items; also the share
  of those found items whose nesting depth is right.
- table cell recall: for each G table, the O table sharing most cells; share of G's
  non-empty cells present in it. Also the share at the same (row, column).
- header/footer leakage: share of the running header/footer strings printed on the pages
  (one per page and position) that occur in O, minus any occurrence in G.

Overall: text fidelity is the mean over documents; the other scores pool the counts of all
documents (a document without lists adds nothing to list recall).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench.paths import CASES_DIR, OUTPUT_DIR, PDF_DIR
from bench.quality import matching
from bench.quality.casefile import Case, load_cases
from bench.quality.mdparse import Parsed, key, normalise, parse

FUZZY = 90.0
T = TypeVar("T")


@dataclass
class Counts:
    hit: int = 0
    total: int = 0

    @property
    def ratio(self) -> float | None:
        return self.hit / self.total if self.total else None

    def add(self, other: Counts) -> None:
        self.hit += other.hit
        self.total += other.total


def _ratio(a: str, b: str) -> float:
    from rapidfuzz import fuzz  # bench venv only

    return float(fuzz.ratio(a, b)) / 100.0


def match(
    gt: Sequence[T], out: Sequence[T], key_of: Callable[[T], str], ok: Callable[[T, T], bool] = lambda a, b: True
) -> list[tuple[T, T | None]]:
    """One-to-one matching of G to O items: exact key first, then the best fuzzy key
    (rapidfuzz ratio >= 90)."""
    return matching.match(gt, out, key_of, ok, similarity=_ratio, threshold=FUZZY / 100)


def text_fidelity(gt: Parsed, out: Parsed) -> float:
    from rapidfuzz.distance import Levenshtein  # bench venv only

    a, b = normalise(gt.text), normalise(out.text)
    if not a and not b:
        return 1.0
    return float(Levenshtein.normalized_similarity(a, b))


def headings(gt: Parsed, out: Parsed) -> dict[str, Counts]:
    same = match(gt.headings, out.headings, lambda h: key(h.text), lambda g, o: g.level == o.level)
    anyl = match(gt.headings, out.headings, lambda h: key(h.text))
    rev = match(out.headings, gt.headings, lambda h: key(h.text))
    return {
        "heading_recall": Counts(sum(o is not None for _, o in same), len(gt.headings)),
        "heading_recall_any_level": Counts(sum(o is not None for _, o in anyl), len(gt.headings)),
        "heading_precision": Counts(sum(g is not None for _, g in rev), len(out.headings)),
    }


def lists(
    gt: Parsed, out: Parsed, key_of: Callable[[str], str] = key, similarity: matching.Similarity = _ratio
) -> dict[str, Counts]:
    pairs = matching.match(
        gt.items, out.items, lambda it: key_of(it.text), similarity=similarity, threshold=FUZZY / 100
    )
    found = [(g, o) for g, o in pairs if o is not None]
    return {
        "list_recall": Counts(len(found), len(gt.items)),
        "list_depth_correct": Counts(sum(g.depth == o.depth for g, o in found), len(found)),
    }


def _bag(t: list[list[str]], key_of: Callable[[str], str] = key) -> Counter[str]:
    return Counter(key_of(c) for row in t for c in row if key_of(c))


def assign_tables(gt: Parsed, out: Parsed, key_of: Callable[[str], str] = key) -> list[tuple[int, int, list[int]]]:
    """Per G table: (cells found, non-empty cells, indexes of the O tables given to it).

    Each O table is given to the G table it shares most cells with, so a G table that a
    page break split into two O tables still counts all its cells."""
    g_bags = [_bag(g, key_of) for g in gt.tables]
    o_bags = [_bag(o, key_of) for o in out.tables]
    assigned: list[list[int]] = [[] for _ in gt.tables]
    # Cells of each G table not yet found: an O table goes where it finds most new cells,
    # so two identical G tables each get their own O table.
    residual = [Counter(b) for b in g_bags]
    for j, o_bag in enumerate(o_bags):
        gains = [sum((r & o_bag).values()) for r in residual]
        if gains and max(gains) > 0:
            i = gains.index(max(gains))
            assigned[i].append(j)
            residual[i] -= o_bag
    return [
        (sum(g_bag.values()) - sum(r.values()), sum(g_bag.values()), js)
        for g_bag, r, js in zip(g_bags, residual, assigned, strict=True)
    ]


def joined_table(out: Parsed, js: list[int], key_of: Callable[[str], str] = key) -> list[list[str]]:
    """O's tables ``js`` joined in order, each repeat of the first one's header row dropped
    (a table continued over a page break)."""
    o = list(out.tables[js[0]])
    head = [key_of(c) for c in o[0]] if o else []
    for j in js[1:]:
        o += [row for row in out.tables[j] if [key_of(c) for c in row] != head]
    return o


def tables(gt: Parsed, out: Parsed) -> dict[str, Counts]:
    """Cell recall over the O tables given to each G table. Positions are checked in those
    O tables joined in order, a repeat of the first table's header row dropped (a table
    continued over a page break)."""
    cells, placed = Counts(), Counts()
    for g, (hits, total, js) in zip(gt.tables, assign_tables(gt, out), strict=True):
        cells.add(Counts(hits, total))
        if not js:
            placed.add(Counts(0, total))
            continue
        o = joined_table(out, js)
        at = sum(
            1
            for r, row in enumerate(g)
            for c, cell in enumerate(row)
            if key(cell) and r < len(o) and c < len(o[r]) and key(o[r][c]) == key(cell)
        )
        placed.add(Counts(at, total))
    return {"table_cell_recall": cells, "table_cell_position": placed}


def leakage(case_meta: dict[str, object], gt: Parsed, out: Parsed) -> dict[str, Counts]:
    per_page: list[list[str]] = case_meta["running"]  # type: ignore[assignment]
    instances = Counter(normalise(s) for strings in per_page for s in strings)
    gt_text, out_text = normalise(gt.text), normalise(out.text)
    leaked = 0
    for s, n in instances.items():
        pattern = re.compile(r"(?<!\w)" + re.escape(s) + r"(?!\w)")
        extra = len(pattern.findall(out_text)) - len(pattern.findall(gt_text))
        leaked += min(n, max(0, extra))
    return {"header_footer_leakage": Counts(leaked, sum(instances.values()))}


def score_document(case: Case, meta: dict[str, object], md: str) -> dict[str, object]:
    gt, out = parse(case.body), parse(md)
    counts: dict[str, Counts] = {}
    counts.update(headings(gt, out))
    counts.update(lists(gt, out))
    counts.update(tables(gt, out))
    counts.update(leakage(meta, gt, out))
    return {
        "text_fidelity": text_fidelity(gt, out),
        "counts": {k: [v.hit, v.total] for k, v in counts.items()},
    }


def text_diffs(gt: Parsed, out: Parsed, limit: int = 6) -> list[str]:
    """The first few character edits between the normalised texts, with context."""
    from rapidfuzz.distance import Levenshtein  # bench venv only

    a, b = normalise(gt.text), normalise(out.text)
    if a == b:
        return []
    diffs = []
    for op in Levenshtein.opcodes(a, b):
        if op.tag == "equal":
            continue
        ctx = a[max(0, op.src_start - 25) : op.src_start]
        diffs.append(f"...{ctx}[{a[op.src_start : op.src_end][:60]!r} -> {b[op.dest_start : op.dest_end][:60]!r}]")
        if len(diffs) >= limit:
            break
    return diffs


def missed(case: Case, meta: dict[str, object], md: str) -> dict[str, list[str]]:
    """Examples of what a system got wrong, for the report."""
    gt, out = parse(case.body), parse(md)
    ex: dict[str, list[str]] = {}
    ex["text"] = text_diffs(gt, out)
    for g, (hits, total, js) in zip(gt.tables, assign_tables(gt, out), strict=True):
        if hits < total:
            ex.setdefault("tables", []).append(
                f"table starting {' | '.join(g[0])[:70]!r}: {hits}/{total} cells found in {len(js)} output table(s)"
            )
    out_text = normalise(out.text)
    seen = sorted({normalise(x) for strings in meta["running"] for x in strings})  # type: ignore[attr-defined]
    ex["leaked"] = [
        x
        for x in seen
        if re.search(r"(?<!\w)" + re.escape(x) + r"(?!\w)", out_text)
        and not re.search(r"(?<!\w)" + re.escape(x) + r"(?!\w)", normalise(gt.text))
    ]
    same = match(gt.headings, out.headings, lambda h: key(h.text), lambda g, o: g.level == o.level)
    anyl = dict((id(g), o) for g, o in match(gt.headings, out.headings, lambda h: key(h.text)))
    ex["headings"] = [
        f"h{g.level} {g.text!r} -> " + (f"found as h{found.level}" if found else "not a heading")
        for g, o in same
        if o is None
        for found in [anyl.get(id(g))]
    ]
    ex["list_items"] = [
        f"{'  ' * g.depth}{g.text!r}" for g, o in match(gt.items, out.items, lambda it: key(it.text)) if o is None
    ]
    ex["spurious_headings"] = [
        f"h{o.level} {o.text[:80]!r}" for o, g in match(out.headings, gt.headings, lambda h: key(h.text)) if g is None
    ]
    return ex


def _check_perfect(case: Case, meta: dict[str, object]) -> None:
    """The ground truth scored against itself must be perfect, or the scorer is wrong."""
    own = score_document(case, meta, case.body)
    for name, (hit, total) in own["counts"].items():  # type: ignore[attr-defined]
        if hit != (0 if name == "header_footer_leakage" else total):
            raise SystemExit(f"scorer self-check failed on {case.name}: {name} {hit}/{total}")
    if own["text_fidelity"] != 1.0:
        raise SystemExit(f"scorer self-check failed on {case.name}: text fidelity")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--systems", nargs="+", required=True)
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args(argv)

    docs: dict[str, dict[str, object]] = {}
    for case in load_cases(CASES_DIR, args.cases or None):
        meta = json.loads((PDF_DIR / f"{case.name}.json").read_text())
        _check_perfect(case, meta)
        row: dict[str, object] = {"pages": meta["pages"]}
        for system in args.systems:
            md_path = OUTPUT_DIR / system / f"{case.name}.md"
            run_path = OUTPUT_DIR / system / f"{case.name}.json"
            run = json.loads(run_path.read_text()) if run_path.exists() else {"ok": False}
            # A failed conversion scores zero; it is not skipped.
            md = md_path.read_text(encoding="utf-8") if run.get("ok") and md_path.exists() else ""
            scored = score_document(case, meta, md)
            scored["ok"] = bool(run.get("ok"))
            scored["error"] = run.get("error")
            scored["seconds"] = run.get("wall_s")
            scored["missed"] = missed(case, meta, md)
            row[system] = scored
        docs[case.name] = row

    overall: dict[str, dict[str, object]] = {}
    for system in args.systems:
        fids = [d[system]["text_fidelity"] for d in docs.values()]  # type: ignore[index]
        pooled: dict[str, Counts] = {}
        for d in docs.values():
            for k, (hit, total) in d[system]["counts"].items():  # type: ignore[index]
                pooled.setdefault(k, Counts()).add(Counts(hit, total))
        overall[system] = {
            "text_fidelity": sum(fids) / len(fids) if fids else None,
            "text_fidelity_min": min(fids) if fids else None,
            **{k: v.ratio for k, v in pooled.items()},
            "counts": {k: [v.hit, v.total] for k, v in pooled.items()},
            "failed_documents": [n for n, d in docs.items() if not d[system]["ok"]],  # type: ignore[index]
            "seconds": sum(float(d[system]["seconds"] or 0) for d in docs.values()),  # type: ignore[index, misc]
        }
    Path(args.out).write_text(json.dumps({"overall": overall, "documents": docs}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
