"""The verdicts of the jobs bench and of the fault suite's job scenarios (`bench/jobs.py`,
`bench/faults.py`), and how a run of the jobs bench merges into its results: pure functions,
stdlib only, tested in tests/bench/test_jobs.py."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

GOAL_SPEEDUP_1_TO_2 = 1.6
GOAL_LATENCY_RATIO = 1.2


def percentile(values: list[float], q: float) -> float | None:
    """Percentile q (0-100) by linear interpolation between closest ranks; None when empty."""
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def speedups(seconds: dict[int, float]) -> dict[int, float]:
    """Speed-up of each setting over the smallest one (its seconds / each one's)."""
    if not seconds:
        return {}
    base = seconds[min(seconds)]
    return {n: base / s for n, s in sorted(seconds.items()) if s > 0}


def ledger_verdict(entries: list[tuple[str, int]], *, status: str, pages: int) -> tuple[bool, str]:
    """Whether a job's ledger entries (kind, credits) are exactly one hold of its pages and then
    one capture of them (a succeeded job) or one release (a failed or canceled one)."""
    kinds = sorted(kind for kind, _ in entries)
    detail = ", ".join(f"{kind} {credits}" for kind, credits in sorted(entries)) or "none"
    holds = [credits for kind, credits in entries if kind == "hold"]
    if status == "succeeded":
        captures = [credits for kind, credits in entries if kind == "capture"]
        ok = kinds == ["capture", "hold"] and abs(holds[0]) == pages and abs(captures[0]) == pages
    elif status in ("failed", "canceled"):
        ok = kinds == ["hold", "release"] and abs(holds[0]) == pages
    else:
        ok = False
    return ok, detail


def latency_verdict(idle_p95_ms: float | None, busy_p95_ms: float | None) -> tuple[bool, float | None]:
    """Whether the p95 with a job running is within GOAL_LATENCY_RATIO of the idle one, and the ratio."""
    if not idle_p95_ms or busy_p95_ms is None:
        return False, None
    ratio = busy_p95_ms / idle_p95_ms
    return ratio <= GOAL_LATENCY_RATIO, ratio


def engine_fingerprint(root: Path) -> str:
    """SHA-256 over the engine's source files: the key under which its reference output is kept."""
    digest = hashlib.sha256()
    for path in sorted((root / "conversion" / "engine").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def sections_merged(record: dict[str, Any], sections: dict[str, Any]) -> dict[str, Any]:
    """The jobs bench's results record (`bench/results/jobs.json`) with `sections` replacing the
    ones of the same name and the others kept. A record written before sections carried their
    own provenance (one run for every section) has its top-level one copied into each."""
    kept = dict(record.get("sections", {}))
    if "command" in record:
        legacy = {k: record.get(k) for k in ("command", "date", "machine", "code", "seconds", "error")}
        legacy["load_average_at_start"] = record.get("load_average_at_start")
        legacy["load_average_at_end"] = record.get("load_average_at_end")
        for name, section in kept.items():
            section.setdefault("provenance", legacy)
            section.setdefault("pages", record.get("pages"))
            if name.startswith("scaling"):
                section.setdefault("reference", record.get("reference"))
                section.setdefault("part_pages", record.get("part_pages"))
                section.setdefault("nice", 0)
    return {"sections": {**kept, **sections}, "notes": record.get("notes", [])}
