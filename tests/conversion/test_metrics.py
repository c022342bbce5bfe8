"""Operators see when to scale: the metrics a real gunicorn and a real Celery worker serve on their
own ports move with real requests and conversions."""

from __future__ import annotations

import functools
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from billing.ledger import CREDITS_PER_PAGE
from billing.models import CreditHold
from core.redis import redis_client
from tests.conftest import REAL_PDFS, WorkerProcess, free_port, start_web, start_worker
from tests.factories import make_key, make_org
from workers.heartbeat import worker_heartbeat, worker_heartbeat_clear

pytestmark = [pytest.mark.django_db(transaction=True)]
LONG_BOOK = REAL_PDFS / "pdfjs__freeculture.pdf"
QUEUE_WAIT_LIMIT = 8

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass
class Stack:
    base: str
    web_metrics: str
    worker_metrics: str
    prefix: str
    worker: WorkerProcess
    web_spool: Path
    worker_spool: Path


@pytest.fixture(scope="module")
def stack(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """gunicorn (two processes) and a worker on queues of their own, each serving metrics."""
    tmp = tmp_path_factory.mktemp("metrics")
    prefix = f"metrics{time.monotonic_ns()}-"
    web_port, worker_port = free_port(), free_port()
    web_spool, worker_spool = tmp / "web-spool", tmp / "worker-spool"
    with django_db_blocker.unblock():
        worker = start_worker(
            tmp,
            queues=f"{prefix}convert",
            env={
                "SVCX_QUEUE_PREFIX": prefix,
                "SVCX_METRICS_PORT": str(worker_port),
                "PROMETHEUS_MULTIPROC_DIR": str(tmp / "worker-metrics"),
                "SVCX_SPOOL_DIR": str(worker_spool),
                "SVCX_SPOOL_SWEEP_INTERVAL": "1s",
            },
        )
        process, base = start_web(
            tmp,
            env={
                "SVCX_QUEUE_PREFIX": prefix,
                "SVCX_QUEUE_WAIT_LIMIT": f"{QUEUE_WAIT_LIMIT}s",
                "SVCX_METRICS_PORT": str(web_port),
                "PROMETHEUS_MULTIPROC_DIR": str(tmp / "web-metrics"),
                "SVCX_SPOOL_DIR": str(web_spool),
                "SVCX_SPOOL_SWEEP_INTERVAL": "1s",
            },
        )
    web_metrics = f"http://127.0.0.1:{web_port}/metrics"

    # start_web's probes may still be answered (one that timed out while the web process loaded):
    # the tests count from a quiet web tier.
    def answers() -> Samples:
        return {key: count for key, count in scrape(web_metrics).items() if key[0] == "svcx_answers_total"}

    previous: Samples = {}
    while (current := answers()) != previous:
        previous = current
        time.sleep(1.5)
    try:
        yield Stack(
            base, web_metrics, f"http://127.0.0.1:{worker_port}/metrics", prefix, worker, web_spool, worker_spool
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        finally:
            worker.stop()  # also when gunicorn was slow to stop: no worker left behind


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def wait_for(condition: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def call(base: str, method: str, path: str, body: bytes | None = None, secret: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/pdf"} if body is not None else {}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    request = urllib.request.Request(base + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def in_background(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(fn())
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_answers_cache_lookups_and_conversion_time_are_counted(stack: Stack, three_pages: Path) -> None:
    minted = make_key(make_org(credits=100))
    web_before, worker_before = scrape(stack.web_metrics), scrape(stack.worker_metrics)
    queue = f"{stack.prefix}convert"

    unauthenticated = call(stack.base, "POST", "/v1/convert", three_pages.read_bytes())
    unknown = call(stack.base, "GET", "/v1/nowhere", secret=minted.secret)
    first = call(stack.base, "POST", "/v1/convert", three_pages.read_bytes(), minted.secret)
    again = call(stack.base, "POST", "/v1/convert", three_pages.read_bytes(), minted.secret)

    assert (unauthenticated[0], unauthenticated[1]["error"]["code"]) == (401, "missing_api_key")
    assert (unknown[0], unknown[1]["error"]["code"]) == (404, "unknown_endpoint")
    assert (first[0], first[1]["cached"], again[0], again[1]["cached"]) == (200, False, 200, True)
    web = scrape(stack.web_metrics)

    def moved(samples: Samples, name: str, **labels: str) -> float:
        return value(samples, name, **labels) - value(web_before, name, **labels)

    assert moved(web, "svcx_answers_total", status="200", code="none") == 2
    assert moved(web, "svcx_answers_total", status="401", code="missing_api_key") == 1
    assert moved(web, "svcx_answers_total", status="404", code="unknown_endpoint") == 1
    assert moved(web, "svcx_result_cache_lookups_total", outcome="hit") == 1
    assert moved(web, "svcx_result_cache_lookups_total", outcome="miss") == 1
    # The worker counts the job just after it reports it done.
    timing = {"queue": queue, "kind": "convert", "outcome": "succeeded"}
    wait_for(
        lambda: (
            value(scrape(stack.worker_metrics), "svcx_conversion_seconds_count", **timing)
            > value(worker_before, "svcx_conversion_seconds_count", **timing)
        ),
        seconds=10,
    )
    worker = scrape(stack.worker_metrics)
    assert (
        value(worker, "svcx_conversion_seconds_count", **timing)
        - value(worker_before, "svcx_conversion_seconds_count", **timing)
        == 1
    )
    assert value(worker, "svcx_conversion_seconds_sum", **timing) > value(
        worker_before, "svcx_conversion_seconds_sum", **timing
    )
    assert (
        value(worker, "svcx_conversion_pages_total", queue=queue)
        - value(worker_before, "svcx_conversion_pages_total", queue=queue)
        == 3
    )
    assert (
        value(worker, "svcx_conversion_pages_per_second_count", queue=queue)
        - value(worker_before, "svcx_conversion_pages_per_second_count", queue=queue)
        == 1
    )


def test_a_job_no_worker_takes_shows_depth_and_age_until_its_request_gives_up(stack: Stack, three_pages: Path) -> None:
    # Test keys use the test queue, which no worker of this stack consumes; one that announces
    # it but never takes from it (busy with other work) lets the job be queued.
    queue = f"{stack.prefix}convert_test"
    worker_heartbeat(hostname="busy@localhost", queues=[queue])
    minted = make_key(make_org(), environment="test")
    before = scrape(stack.web_metrics)
    assert value(before, "svcx_queue_depth", queue=queue) == 0
    try:
        sender, outcome = in_background(
            lambda: call(stack.base, "POST", "/v1/convert", three_pages.read_bytes(), minted.secret)
        )
        wait_for(lambda: value(scrape(stack.web_metrics), "svcx_queue_depth", queue=queue) == 1, seconds=10)
        time.sleep(1)
        waiting = scrape(stack.web_metrics)
        sender.join(timeout=60)
        after = scrape(stack.web_metrics)
    finally:
        worker_heartbeat_clear(hostname="busy@localhost", queues=[queue])
        client = redis_client()
        assert client is not None
        client.delete(queue)

    assert value(waiting, "svcx_queue_depth", queue=queue) == 1
    assert value(waiting, "svcx_jobs_queued", queue=queue) == 1
    assert 1 <= value(waiting, "svcx_queue_oldest_job_age_seconds", queue=queue) < QUEUE_WAIT_LIMIT
    assert value(waiting, "svcx_queue_wait_limit_seconds") == QUEUE_WAIT_LIMIT
    assert value(waiting, "svcx_workers_live", queue=queue) == 1
    assert value(waiting, "svcx_workers_live", queue=f"{stack.prefix}convert") == 1
    assert value(waiting, "svcx_jobs_running", queue=queue) == 0
    status, body = outcome[0]
    assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (503, "overloaded", "queue_wait")
    # The request gave up: the job is abandoned, no longer waiting (its message stays in the broker).
    assert value(after, "svcx_jobs_queued", queue=queue) == 0
    assert value(after, "svcx_queue_oldest_job_age_seconds", queue=queue) == 0
    answers = ("svcx_answers_total", frozenset({("status", "503"), ("code", "overloaded")}))
    assert after.get(answers, 0) - before.get(answers, 0) == 1


def test_holds_and_running_jobs_are_outstanding_while_a_conversion_runs(stack: Stack) -> None:
    org = make_org(credits=500)
    minted = make_key(org)
    queue = f"{stack.prefix}convert"
    seen: list[Samples] = []

    def held() -> bool:
        samples = scrape(stack.web_metrics)
        seen.append(samples)
        return value(samples, "svcx_holds_outstanding", environment="live") == 1

    sender, outcome = in_background(
        lambda: call(stack.base, "POST", "/v1/convert?pages=1-60", LONG_BOOK.read_bytes(), minted.secret)
    )
    wait_for(held)
    sender.join(timeout=120)
    after = scrape(stack.web_metrics)

    during = seen[-1]
    assert value(during, "svcx_holds_outstanding_credits", environment="live") == 60 * CREDITS_PER_PAGE
    assert value(during, "svcx_jobs_running", queue=queue) == 1
    assert value(during, "svcx_queue_depth", queue=queue) == 0
    assert outcome[0][0] == 200
    assert not CreditHold.objects.filter(status="held").exists()
    assert value(after, "svcx_holds_outstanding", environment="live") == 0
    assert value(after, "svcx_holds_outstanding_credits", environment="live") == 0
    assert value(after, "svcx_jobs_running", queue=queue) == 0
    assert value(after, "svcx_metrics_source_up", source="broker") == 1
    assert value(after, "svcx_metrics_source_up", source="database") == 1


def test_a_metrics_port_without_a_multiprocess_directory_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.metrics import exporter_prepare

    monkeypatch.setenv("SVCX_METRICS_PORT", "9100")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)

    with pytest.raises(RuntimeError, match="PROMETHEUS_MULTIPROC_DIR"):
        exporter_prepare()


def test_web_and_worker_sweep_their_spool_of_what_killed_requests_left_and_gauge_it(stack: Stack) -> None:
    # What a process killed mid-request leaves: files older than any request lives.
    then = time.time() - 2 * 3600
    for spool, metrics in ((stack.web_spool, stack.web_metrics), (stack.worker_spool, stack.worker_metrics)):
        left, live = spool / "body-left", spool / "body-live"
        left.write_bytes(b"x" * 5000)
        os.utime(left, (then, then))
        live.write_bytes(b"y" * 1234)

        wait_for(functools.partial(lambda path: not path.exists(), left), seconds=15)
        samples = scrape(metrics)

        assert live.read_bytes() == b"y" * 1234
        assert (value(samples, "svcx_spool_bytes"), value(samples, "svcx_spool_files")) == (1234, 1)
        live.unlink()
