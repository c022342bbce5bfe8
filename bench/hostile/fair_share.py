"""One organization floods the worker pool with long conversions; another's one-page conversions
keep their latency (issue 23, item 4: fair sharing of the pool)."""

from __future__ import annotations

import statistics
import threading
import time
from typing import TYPE_CHECKING

from bench.hostile import HostileResult

if TYPE_CHECKING:
    from bench.faults import Suite

FLOOD_CLIENTS = 6  # the flooding organization's client threads, each sending one request after another
FLOOD_PAGES = 200  # pages of each flooding conversion (the most one request may convert)
PROBES = 10  # one-page conversions of the other organization, before and during the flood
PROBE_GAP_S = 1.0  # seconds between two of them
# Goal: during the flood the other organization's median stays within this of its median alone (s).
LATENCY_SLACK_S = 0.5


def _probe(suite: Suite, key: str, tag: str) -> tuple[list[float], list[str]]:
    from bench.faults import make_pdf, post_convert

    seconds, answers = [], []
    for n in range(PROBES):
        out = post_convert(suite.s.port, key, make_pdf(f"{tag}-{n}-{time.time_ns()}", 1))
        seconds.append(out.t_end - out.t_start)
        answers.append(str(out.status) + (f" {out.code}" if out.code else ""))
        time.sleep(PROBE_GAP_S)
    return seconds, answers


def run(suite: Suite) -> HostileResult:
    from bench.faults import make_pdf, post_convert

    result = HostileResult("fair_share", "one organization floods the pool; another's one-page conversions")
    flood_acct, other_acct = suite.account(1_000_000), suite.account(1_000)
    alone, alone_answers = _probe(suite, other_acct.key, "alone")
    stop = threading.Event()
    flood_answers: list[str] = []

    def flood() -> None:
        while not stop.is_set():
            out = post_convert(suite.s.port, flood_acct.key, make_pdf(f"flood-{time.time_ns()}", FLOOD_PAGES))
            flood_answers.append(str(out.status) + (f" {out.code}" if out.code else ""))

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(FLOOD_CLIENTS)]
    for thread in threads:
        thread.start()
    suite.wait_for("the flood's first job to run", lambda: bool(suite.jobs(flood_acct.org, "AND status = 'running'")))
    running_before = len(suite.jobs(flood_acct.org, "AND status IN ('queued', 'running')"))
    during, during_answers = _probe(suite, other_acct.key, "during")
    running_after = len(suite.jobs(flood_acct.org, "AND status IN ('queued', 'running')"))
    stop.set()
    for thread in threads:
        thread.join(timeout=600)
    median_alone, median_during = statistics.median(alone), statistics.median(during)
    result.figures = {
        "alone_p50_s": round(median_alone, 3),
        "alone_max_s": round(max(alone), 3),
        "during_flood_p50_s": round(median_during, 3),
        "during_flood_max_s": round(max(during), 3),
        "flood_jobs_in_pool_at_start_and_end": f"{running_before}, {running_after}",
        "flood_answers": ", ".join(f"{flood_answers.count(a)} x {a}" for a in sorted(set(flood_answers))),
    }
    ok = all(a == "200" for a in alone_answers + during_answers)
    result.checks["every conversion of the other organization answers 200"] = {
        "pass": ok,
        "detail": ", ".join(sorted(set(alone_answers + during_answers))),
    }
    result.checks[f"median during the flood within {LATENCY_SLACK_S} s of alone"] = {
        "pass": median_during <= median_alone + LATENCY_SLACK_S,
        "detail": f"{median_during:.2f} s vs {median_alone:.2f} s",
    }
    result.checks["the flooding organization holds at most its share (1 of 2 slots)"] = {
        "pass": max(running_before, running_after) <= 1,
        "detail": f"{running_before} and {running_after} jobs submitted",
    }
    return result
