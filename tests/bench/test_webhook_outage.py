"""The fault suite's webhook scenario (bench/webhook_outage.py, bench/webhook_receiver.py): the
receiver's phases, which request counts as a delivery, and the verdicts."""

from __future__ import annotations

from typing import Any

from bench.webhook_outage import WebhookScenarioResult, _checks, _delivered
from bench.webhook_receiver import phases_parse


def test_the_outage_is_cut_into_its_phases_by_their_shares() -> None:
    assert phases_parse("500:0.4,hang:0.2,refuse:0.2,500:0.2", 600, 1000.0) == [
        ("500", 1000.0, 1240.0),
        ("hang", 1240.0, 1360.0),
        ("refuse", 1360.0, 1480.0),
        ("500", 1480.0, 1600.0),
    ]


def test_an_event_is_delivered_by_its_first_204_with_a_signature_that_verified() -> None:
    records = [
        {"at": 1.0, "event": "evt_a", "answer": 500, "verified": True},
        {"at": 2.0, "event": "evt_a", "answer": 204, "verified": True},
        {"at": 3.0, "event": "evt_a", "answer": 204, "verified": True},
        {"at": 4.0, "event": "evt_b", "answer": 400, "verified": False},
        {"at": 5.0, "event": "evt_c", "answer": "none", "verified": True},
    ]
    assert _delivered(records) == {"evt_a": 2.0}


def scenario(**changes: Any) -> WebhookScenarioResult:
    """Two jobs that ended as meant, each event delivered 30 s after a 600 s outage."""
    result = WebhookScenarioResult("w", "", 600.0, "500:1")
    result.endpoint = {"enabled": True, "failed_events": 0, "disabled_reason": ""}
    result.jobs = [
        {"id": "job_1", "meant": "succeeded", "status": "succeeded", "pages": 3, "markdown_ok": True},
        {"id": "job_2", "meant": "canceled", "status": "canceled", "pages": 2},
    ]
    for job in result.jobs:
        job.update(ledger_ok=True, ledger="", error=None)
    result.events = [
        {"id": "evt_1", "type": "job.succeeded", "job": "job_1", "attempts": 5, "delivered_after_recovery_s": 30.0},
        {"id": "evt_2", "type": "job.canceled", "job": "job_2", "attempts": 5, "delivered_after_recovery_s": 20.0},
    ]
    result.recovery_to_last_delivery_s = 30.0
    for name, value in changes.items():
        setattr(result, name, value)
    return result


SIGNED = [{"at": 1.0, "event": "evt_1", "answer": 204, "verified": True}]


def failing(result: WebhookScenarioResult, records: list[dict[str, Any]] = SIGNED, balance: int = 97) -> list[str]:
    return sorted(name for name, c in _checks(result, records, 100, balance, 0).items() if not c["pass"])


def test_a_clean_scenario_passes_every_check() -> None:
    assert failing(scenario()) == []


def test_a_missing_event_a_bad_signature_a_wrong_end_or_a_disabled_endpoint_fail_their_checks() -> None:
    missing = scenario()
    missing.events[1]["delivered_after_recovery_s"] = None
    assert failing(missing) == ["delivered soon after the recovery", "every event delivered, signed"]
    assert failing(scenario(), [*SIGNED, {"at": 2.0, "event": "evt_2", "verified": False}]) == [
        "every event delivered, signed"
    ]
    wrong = scenario()
    wrong.jobs[1]["status"] = "succeeded"
    assert "each job ended as meant, one event each" in failing(wrong)
    assert failing(scenario(endpoint={"enabled": False, "disabled_reason": "x"})) == ["the endpoint stays enabled"]
    assert failing(scenario(), balance=100) == ["billed once, released otherwise"]


def test_the_last_delivery_must_come_within_a_quarter_of_the_outage_and_a_slack() -> None:
    assert failing(scenario(recovery_to_last_delivery_s=180.0)) == []
    assert failing(scenario(recovery_to_last_delivery_s=181.0)) == ["delivered soon after the recovery"]
