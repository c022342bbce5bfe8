"""One-to-one matching of reference items (headings, list items, table cells) to a system's
items, by normalised text. Stdlib only: used by both quality benchmarks and their tests.

Matching is exact on a key first, then, for what is left, the most similar key at or above
a threshold. The similarity is a parameter: ``bench.quality.score`` keeps rapidfuzz's ratio
(its published figures were made with it); ``bench.real`` uses ``loose_similarity``, which
forgives nothing in short strings (``Section 1.1`` is not ``Section 1.2``) and a stray
character or two in long ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from typing import TypeVar

from bench.quality.mdparse import normalise

T = TypeVar("T")
Similarity = Callable[[str, str], float]

_NOT_WORD = re.compile(r"[\W_]+")
# Below this many key characters two strings match only when their keys are equal.
FUZZY_MIN_CHARS = 20


def loose_key(s: str) -> str:
    """Key that ignores whitespace, punctuation and case: ``"1.2  Scope:"`` -> ``"12scope"``.
    Letters and digits of every script are kept, after NFKC and typographic folding."""
    return _NOT_WORD.sub("", normalise(s).casefold())


def loose_similarity(a: str, b: str) -> float:
    """0..1; 0 unless both keys are long enough for a near miss to still be the same text."""
    if min(len(a), len(b)) < FUZZY_MIN_CHARS:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def match(
    gt: Sequence[T],
    out: Sequence[T],
    key_of: Callable[[T], str],
    ok: Callable[[T, T], bool] = lambda a, b: True,
    *,
    similarity: Similarity = loose_similarity,
    threshold: float = 0.9,
) -> list[tuple[T, T | None]]:
    """Pairs ``(g, o)`` for every reference item ``g`` in order; ``o`` is None when no output
    item is left whose key is equal or at least ``threshold`` similar (and ``ok(g, o)``).
    Each output item is used at most once."""
    free = list(range(len(out)))
    keys = [key_of(o) for o in out]
    pairs: list[tuple[T, T | None]] = []
    pending: list[int] = []
    for n, g in enumerate(gt):
        kg = key_of(g)
        hit = next((j for j in free if keys[j] == kg and ok(g, out[j])), None)
        pairs.append((g, None if hit is None else out[hit]))
        if hit is None:
            pending.append(n)
        else:
            free.remove(hit)
    for n in pending:
        g = gt[n]
        kg = key_of(g)
        best, best_score = None, threshold
        for j in free:
            if ok(g, out[j]):
                score = similarity(kg, keys[j])
                if score >= best_score:
                    best, best_score = j, score
        if best is not None:
            free.remove(best)
            pairs[n] = (g, out[best])
    return pairs
