"""The jobs bench's verdicts (bench/job_checks.py): percentiles, speed-ups, a job's ledger, the
latency goal, the key its engine reference is kept under, how a run merges into the results
file, and which namespaces a later run may remove."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.job_checks import (
    engine_fingerprint,
    latency_verdict,
    ledger_verdict,
    percentile,
    sections_merged,
    speedups,
)


def test_percentile_interpolates_between_closest_ranks() -> None:
    assert percentile([], 95) is None
    assert percentile([7.0], 95) == 7.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([float(x) for x in range(1, 21)], 95) == pytest.approx(19.05)


def test_speedups_are_over_the_smallest_pool() -> None:
    assert speedups({}) == {}
    assert speedups({4: 50.0, 1: 100.0, 2: 62.5}) == {1: 1.0, 2: 1.6, 4: 2.0}


def test_a_succeeded_job_holds_and_captures_its_pages_once() -> None:
    assert ledger_verdict([("hold", -1000), ("capture", -1000)], status="succeeded", pages=1000) == (
        True,
        "capture -1000, hold -1000",
    )


def test_a_second_capture_or_a_short_one_is_wrong() -> None:
    twice = [("hold", -300), ("capture", -300), ("capture", -300)]
    assert ledger_verdict(twice, status="succeeded", pages=300)[0] is False
    assert ledger_verdict([("hold", -300), ("capture", -299)], status="succeeded", pages=300)[0] is False
    assert ledger_verdict([("hold", -300)], status="succeeded", pages=300)[0] is False


def test_a_failed_job_releases_its_hold_and_captures_nothing() -> None:
    assert ledger_verdict([("hold", -300), ("release", 300)], status="failed", pages=300)[0] is True
    assert ledger_verdict([("hold", -300), ("release", 300), ("capture", -300)], status="failed", pages=300)[0] is False
    assert ledger_verdict([("hold", -300)], status="running", pages=300) == (False, "hold -300")
    assert ledger_verdict([], status="failed", pages=300) == (False, "none")


def test_latency_goal_is_a_p95_within_a_fifth_of_the_idle_one() -> None:
    assert latency_verdict(100.0, 120.0) == (True, 1.2)
    assert latency_verdict(100.0, 121.0) == (False, 1.21)
    assert latency_verdict(None, 50.0) == (False, None)
    assert latency_verdict(100.0, None) == (False, None)


def test_engine_fingerprint_changes_with_an_engine_source_only(tmp_path: Path) -> None:
    engine = tmp_path / "conversion" / "engine"
    engine.mkdir(parents=True)
    (engine / "convert.py").write_text("A = 1\n")
    (tmp_path / "conversion" / "api.py").write_text("B = 1\n")
    before = engine_fingerprint(tmp_path)

    (tmp_path / "conversion" / "api.py").write_text("B = 2\n")
    assert engine_fingerprint(tmp_path) == before
    (engine / "convert.py").write_text("A = 2\n")
    assert engine_fingerprint(tmp_path) != before


def test_a_run_replaces_the_sections_it_measured_and_keeps_the_others_with_their_provenance() -> None:
    earlier = {
        "command": "python -m bench jobs",
        "date": "2026-11-27 06:15 UTC",
        "machine": "x86_64, 2 cores",
        "code": "c634532",
        "load_average_at_start": [1.0, 2.0, 3.0],
        "load_average_at_end": [1.5, 2.0, 3.0],
        "seconds": 276,
        "error": None,
        "pages": 1000,
        "part_pages": 25,
        "reference": {"sha256": "99", "pages": 1000, "seconds": 200.9},
        "sections": {"scaling": {"runs": []}, "latency": {"runs": []}},
        "notes": ["kept"],
    }
    record = sections_merged(
        json.loads(json.dumps(earlier)), {"latency": {"runs": [1], "provenance": {"command": "new"}}}
    )

    assert set(record["sections"]) == {"scaling", "latency"}
    assert record["sections"]["latency"] == {"runs": [1], "provenance": {"command": "new"}}
    scaling = record["sections"]["scaling"]
    assert scaling["provenance"]["command"] == "python -m bench jobs"
    assert scaling["provenance"]["load_average_at_start"] == [1.0, 2.0, 3.0]
    assert (scaling["pages"], scaling["part_pages"], scaling["nice"]) == (1000, 25, 0)
    assert scaling["reference"]["sha256"] == "99"
    assert record["notes"] == ["kept"]
    # Written and merged again: nothing is lost or nested.
    assert sections_merged(json.loads(json.dumps(record)), {}) == record


def test_only_the_namespaces_and_links_of_runs_that_died_are_stale() -> None:
    from bench.netns import _TAG

    assert _TAG.match("sxb1234w0")
    assert _TAG.match("sxb1234br")
    assert _TAG.match("sxb1234h0") is None  # a veth end goes with its namespace
    assert _TAG.match("svcxtest0") is None
    assert _TAG.match("sxb12x4w0") is None
