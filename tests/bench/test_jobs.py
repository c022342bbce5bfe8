"""The jobs bench's verdicts (bench/job_checks.py): percentiles, speed-ups, a job's ledger, the
latency goal, and the key its engine reference is kept under."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.job_checks import engine_fingerprint, latency_verdict, ledger_verdict, percentile, speedups


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
