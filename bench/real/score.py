"""Score a system's Markdown against a reference written by someone else (a Word document's
own structure, or docling's Markdown); identical code for every system.

Both sides are read by ``bench.quality.mdparse.parse``; headings, list items and table cells
are matched by ``bench.quality.matching`` (whitespace, punctuation and case ignored; long
strings may differ by a stray character). Docling writes ``<!-- image -->`` (and other
comments) for pictures and ``$...$`` / ``$$...$$`` for formulas: they are removed from the
reference first, as noise, not text to find.

Per document (reference R, output O), each a ratio hit/total:

- text fidelity: character-level Levenshtein similarity of the normalised plain texts
  (``bench.quality.score.text_fidelity``; needs rapidfuzz, the only part that does).
- reading order: R's text blocks (headings, paragraphs, list items, code; tables are scored
  as tables) located in O by their word 4-grams; the longest run of them that O has in R's
  order, over all of R's blocks, so a missing block costs like a misplaced one.
- heading recall: R's headings found among O's headings (any level); heading precision: O's
  headings that are one of R's.
- exact heading level: R's headings found at exactly R's level, over all of R's headings.
- heading hierarchy: for consecutive headings matched in both, whether O steps deeper, stays
  or goes shallower where R does.
- list item recall: R's list items among O's Markdown list items; list nesting: of those
  found, the share at R's depth.
- table cell recall: R's non-empty cells found in the O table(s) matched to R's table, in the
  right row and column (R's rows and columns are paired with O's by the cells they share,
  so an extra or missing row or column moves nothing else); also reported at any position.
- furniture leaked (lower is better): of the running lines the PDF prints (a header and a
  footer on each page, known where the corpus records them), those O keeps beyond what R has
  of the same text; a numbered one ("Page 3 of 8") counts once per page number. Undefined
  where the running lines are not known.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench.quality.matching import loose_key, loose_similarity, match
from bench.quality.mdparse import Heading, Parsed, normalise, parse
from bench.quality.score import Counts, assign_tables, joined_table
from bench.quality.score import lists as quality_lists

# Metric name -> label, in report order. Every one is a ratio hit/total except text fidelity.
METRICS = {
    "text_fidelity": "text fidelity",
    "reading_order": "reading order",
    "heading_recall": "heading recall",
    "heading_precision": "heading precision",
    "heading_level": "exact heading level",
    "heading_hierarchy": "heading hierarchy",
    "list_recall": "list item recall",
    "list_depth_correct": "list nesting (of found items)",
    "table_cells": "table cells, right row and column",
    "table_cells_any_position": "table cells, any position",
    "furniture_leaked": "furniture leaked (lower is better)",
}

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
# `$...$` opening and closing next to non-blank characters, as LaTeX inline math is written;
# "costs $5 or $6" has a blank before its second `$` and is kept.
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?!\$)")
SHINGLE = 4  # words per anchor when locating a block


def clean_reference(md: str) -> str:
    """The reference without docling's noise: comments (`<!-- image -->`) and math."""
    md = _COMMENT.sub("", md)
    md = _DISPLAY_MATH.sub("", md)
    return _INLINE_MATH.sub("", md)


def _heading_key(h: Heading) -> str:
    return loose_key(h.text)


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def headings(ref: Parsed, out: Parsed) -> dict[str, Counts]:
    pairs = match(ref.headings, out.headings, _heading_key)
    found = [(g, o) for g, o in pairs if o is not None]
    rev = match(out.headings, ref.headings, _heading_key)
    steps = list(pairwise(found))
    return {
        "heading_recall": Counts(len(found), len(ref.headings)),
        "heading_precision": Counts(sum(g is not None for _, g in rev), len(out.headings)),
        "heading_level": Counts(sum(g.level == o.level for g, o in found), len(ref.headings)),
        "heading_hierarchy": Counts(
            sum(_sign(g2.level - g1.level) == _sign(o2.level - o1.level) for (g1, o1), (g2, o2) in steps),
            len(steps),
        ),
    }


def lists(ref: Parsed, out: Parsed) -> dict[str, Counts]:
    return quality_lists(ref, out, loose_key, loose_similarity)


def _pair_by_overlap(ref: Sequence[Counter[str]], out: Sequence[Counter[str]]) -> dict[int, int]:
    """One-to-one pairing of R's rows (or columns) with O's, the pairs sharing most cells first."""
    scored = sorted(
        ((sum((a & b).values()), i, j) for i, a in enumerate(ref) for j, b in enumerate(out)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for shared, i, j in scored:
        if shared and i not in pairs and j not in taken:
            pairs[i] = j
            taken.add(j)
    return pairs


def cells_in_place(ref: list[list[str]], out: list[list[str]]) -> int:
    """How many of R's non-empty cells O has in the row and column paired with R's."""
    r_keys = [[loose_key(c) for c in row] for row in ref]
    o_keys = [[loose_key(c) for c in row] for row in out]

    def columns(rows: list[list[str]]) -> list[Counter[str]]:
        width = max((len(r) for r in rows), default=0)
        return [Counter(r[c] for r in rows if c < len(r) and r[c]) for c in range(width)]

    row_of = _pair_by_overlap(
        [Counter(k for k in r if k) for r in r_keys], [Counter(k for k in r if k) for r in o_keys]
    )
    col_of = _pair_by_overlap(columns(r_keys), columns(o_keys))
    hits = 0
    for i, row in enumerate(r_keys):
        for c, k in enumerate(row):
            j, d = row_of.get(i), col_of.get(c)
            if k and j is not None and d is not None and d < len(o_keys[j]) and o_keys[j][d] == k:
                hits += 1
    return hits


def tables(ref: Parsed, out: Parsed) -> dict[str, Counts]:
    placed, anywhere = Counts(), Counts()
    for g, (hits, total, js) in zip(ref.tables, assign_tables(ref, out, loose_key), strict=True):
        anywhere.add(Counts(hits, total))
        placed.add(Counts(cells_in_place(g, joined_table(out, js, loose_key)) if js else 0, total))
    return {"table_cells": placed, "table_cells_any_position": anywhere}


# Words for locating blocks: runs of letters and digits, so `add(a, b)` and `add (a , b )` are
# the same words; each Han or kana character is a word of its own (those scripts use no spaces).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(normalise(text).casefold())


def text_blocks(p: Parsed) -> list[str]:
    """Blocks in reading order, tables left out (they are scored as tables)."""
    table_blocks = Counter(" ".join(" ".join(row) for row in t) for t in p.tables)
    blocks = []
    for b in p.blocks:
        if table_blocks[b]:
            table_blocks[b] -= 1
        elif _tokens(b):
            blocks.append(b)
    return blocks


def locate_blocks(blocks: Sequence[str], text: str) -> list[int | None]:
    """Word offset in ``text`` where each block starts, None where it is not found.

    A block is found where at least half of its word 4-grams (the whole block if shorter)
    line up, give or take a fifth of its length, at one place of ``text``. A block that occurs more
    than once (a repeated paragraph) takes the first unused occurrence at or after the
    previous block's, so repeats are not read as disorder."""
    words = _tokens(text)
    index: dict[int, dict[tuple[str, ...], list[int]]] = {}
    cursor, used = -1, set[int]()
    found: list[int | None] = []
    for block in blocks:
        toks = _tokens(block)
        n = min(SHINGLE, len(toks))
        if n not in index:
            grams: dict[tuple[str, ...], list[int]] = {}
            for p in range(len(words) - n + 1):
                grams.setdefault(tuple(words[p : p + n]), []).append(p)
            index[n] = grams
        count = len(toks) - n + 1
        starts = sorted((p - i, i) for i in range(count) for p in index[n].get(tuple(toks[i : i + n]), ()))
        need, slack = math.ceil(count / 2), len(toks) // 5
        places, g = [], 0
        while g < len(starts):
            h = g
            while h < len(starts) and starts[h][0] - starts[g][0] <= slack:
                h += 1
            if len({i for _, i in starts[g:h]}) >= need:
                # The start most 4-grams agree on; a phrase the block repeats votes elsewhere.
                votes = Counter(s for s, _ in starts[g:h])
                at = max(votes, key=lambda s: (votes[s], -s))
                if at not in used:
                    places.append(at)
            g = h
        if not places:
            found.append(None)
            continue
        places.sort()
        at = next((p for p in places if p >= cursor), places[0])
        used.add(at)
        found.append(at)
        cursor = at
    return found


def longest_increasing(seq: Sequence[int]) -> int:
    """Length of the longest strictly increasing subsequence (patience sorting)."""
    tails: list[int] = []
    for x in seq:
        k = bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
        else:
            tails[k] = x
    return len(tails)


def reading_order(ref: Parsed, out: Parsed) -> dict[str, Counts]:
    blocks = text_blocks(ref)
    places = [p for p in locate_blocks(blocks, out.text) if p is not None]
    return {"reading_order": Counts(longest_increasing(places), len(blocks))}


def furniture_leaked(reference_md: str, output_md: str, running: dict[str, str], pages: int) -> Counts:
    """Running lines printed (``running``: where -> text, ``{page}`` and ``{pages}`` standing for
    the numbers) that the output keeps and the reference does not: leaked over printed.

    Texts are compared by their loose keys (whitespace, punctuation and case ignored) anywhere
    in the whole text, so a running line split over two lines or run into a paragraph counts.
    """
    if not running or pages <= 0:
        return Counts()
    ref_key, out_key = loose_key(reference_md), loose_key(output_md)
    leaked = printed = 0
    for template in running.values():
        numbered = "{page}" in template
        texts = [template.replace("{pages}", str(pages)).replace("{page}", str(n)) for n in range(1, pages + 1)]
        for text in texts if numbered else texts[:1]:
            key = loose_key(text)
            once = 1 if numbered else pages
            printed += once
            if key:
                leaked += min(once, max(0, out_key.count(key) - ref_key.count(key)))
    return Counts(leaked, printed)


def text_fidelity(ref: Parsed, out: Parsed) -> float:
    from bench.quality.score import text_fidelity as levenshtein_fidelity

    return levenshtein_fidelity(ref, out)


def structure(reference_md: str, output_md: str) -> dict[str, Counts]:
    """Every ratio metric of one document (all but text fidelity, which needs rapidfuzz)."""
    ref, out = parse(clean_reference(reference_md)), parse(output_md)
    counts: dict[str, Counts] = {}
    for part in (reading_order, headings, lists, tables):
        counts.update(part(ref, out))
    return counts


def missed(reference_md: str, output_md: str, limit: int = 5) -> dict[str, list[str]]:
    """Examples of what a system got wrong, for the report."""
    ref, out = parse(clean_reference(reference_md)), parse(output_md)
    ex: dict[str, list[str]] = {}
    for h, as_h in match(ref.headings, out.headings, _heading_key):
        if as_h is None:
            ex.setdefault("headings", []).append(f"h{h.level} {h.text[:60]!r} not a heading")
        elif as_h.level != h.level:
            ex.setdefault("heading levels", []).append(f"h{h.level} {h.text[:60]!r} as h{as_h.level}")
    for extra, in_ref in match(out.headings, ref.headings, _heading_key):
        if in_ref is None:
            ex.setdefault("spurious headings", []).append(f"h{extra.level} {extra.text[:60]!r}")
    for item, as_item in match(ref.items, out.items, lambda it: loose_key(it.text)):
        if as_item is None:
            ex.setdefault("list items", []).append(f"{item.text[:60]!r}")
    blocks = text_blocks(ref)
    for block, at in zip(blocks, locate_blocks(blocks, out.text), strict=True):
        if at is None:
            ex.setdefault("blocks not found", []).append(f"{block[:60]!r}")
    for table, (hits, total, js) in zip(ref.tables, assign_tables(ref, out, loose_key), strict=True):
        placed = cells_in_place(table, joined_table(out, js, loose_key)) if js else 0
        if placed < total:
            ex.setdefault("tables", []).append(
                f"{' | '.join(table[0])[:50]!r}: {placed}/{total} in place, {hits} anywhere, {len(js)} output table(s)"
            )
    return {k: v[:limit] + ([f"... ({len(v)} in all)"] if len(v) > limit else []) for k, v in ex.items()}


def score_document(
    reference_md: str, output_md: str, running: dict[str, str] | None = None, pages: int = 0
) -> dict[str, object]:
    ref, out = parse(clean_reference(reference_md)), parse(output_md)
    counts = structure(reference_md, output_md)
    counts["furniture_leaked"] = furniture_leaked(clean_reference(reference_md), output_md, running or {}, pages)
    return {
        "text_fidelity": text_fidelity(ref, out),
        "counts": {k: [v.hit, v.total] for k, v in counts.items()},
        "missed": missed(reference_md, output_md),
    }


def summarise(rows: Sequence[dict[str, object]]) -> dict[str, object]:
    """Set figures of one system: each metric the mean over the documents where it is
    defined (a document without tables says nothing about tables), with that number of
    documents, and the pooled counts."""
    means: dict[str, float | None] = {}
    n_docs: dict[str, int] = {}
    pooled: dict[str, Counts] = {}
    for metric in METRICS:
        if metric == "text_fidelity":
            values = [float(r["text_fidelity"]) for r in rows]  # type: ignore[arg-type]
        else:
            values = []
            for r in rows:
                hit, total = r["counts"][metric]  # type: ignore[index]
                pooled.setdefault(metric, Counts()).add(Counts(hit, total))
                if total:
                    values.append(hit / total)
        means[metric] = sum(values) / len(values) if values else None
        n_docs[metric] = len(values)
    return {
        "mean": means,
        "documents_scored": n_docs,
        "pooled": {k: [v.hit, v.total] for k, v in pooled.items()},
    }


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plan", help="JSON written by bench.real.run: documents, systems, output folder")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    plan = json.loads(Path(args.plan).read_text())
    out_dir = Path(plan["output_dir"])
    documents: dict[str, dict[str, object]] = {}
    for doc in plan["documents"]:
        reference = Path(doc["reference"]).read_text(encoding="utf-8")
        own = structure(reference, clean_reference(reference))
        bad = {k: v for k, v in own.items() if v.hit != v.total}
        if bad:  # the reference scored against itself must be perfect, or the scorer is wrong
            raise SystemExit(f"scorer self-check failed on {doc['id']}: {bad}")
        row: dict[str, object] = {"set": doc["set"], "name": doc["name"], "fold": doc.get("fold", "tune")}
        for system in plan["systems"]:
            run_log = out_dir / system / f"{doc['id']}.json"
            run: dict[str, Any] = (
                json.loads(run_log.read_text()) if run_log.exists() else {"ok": False, "error": "not run"}
            )
            # A failed conversion scores as empty output: it counts, it is not skipped.
            md = _read(out_dir / system / f"{doc['id']}.md") if run.get("ok") else ""
            scored = score_document(reference, md, doc.get("running"), int(doc.get("pages") or 0))
            scored.update(ok=bool(run.get("ok")), error=run.get("error"), seconds=run.get("wall_s"))
            row[system] = scored
            if int(run.get("pages") or 0) > 0:  # only the engine reports its page count
                row["pages"] = run["pages"]
        documents[doc["id"]] = row
    sets: dict[str, dict[str, object]] = {}
    for set_name in dict.fromkeys(d["set"] for d in plan["documents"]):
        in_set = [d for d in documents.values() if d["set"] == set_name]
        sets[set_name] = {s: summarise([d[s] for d in in_set]) for s in plan["systems"]}  # type: ignore[misc]
    # The same per fold (the sources tuned on, and those held out of tuning).
    folds: dict[str, dict[str, dict[str, object]]] = {}
    for set_name in sets:
        for fold in ("tune", "held"):
            in_fold = [d for d in documents.values() if d["set"] == set_name and d["fold"] == fold]
            if in_fold:
                folds.setdefault(set_name, {})[fold] = {s: summarise([d[s] for d in in_fold]) for s in plan["systems"]}  # type: ignore[misc]
    out = {"sets": sets, "folds": folds, "documents": documents}
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
