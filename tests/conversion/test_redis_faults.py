"""A Redis blip is not an outage: gunicorn and a Celery worker on a redis-server of the test's
own, which the test stops and restarts (keeping nothing, as a Redis without persistence does)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection

from billing.meters import MeterState
from billing.models import CreditHold, LedgerEntry
from billing.selectors import credits_get
from conversion import runner
from conversion.models import ConversionJob
from conversion.runner import job_run
from tests.conftest import (
    WorkerProcess,
    database_url_for_children,
    free_port,
    start_web,
    start_worker,
    text_pdf,
)
from tests.factories import make_key, make_org, make_queued_conversion
from workers.heartbeat import live_workers

pytestmark = [pytest.mark.django_db(transaction=True)]
QUEUE_WAIT_LIMIT = 5.0


class RedisServer:
    """A redis-server on a port of its own that keeps nothing on disk."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=self.directory,
            stdout=(self.directory / "redis.log").open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


@contextlib.contextmanager
def _started(tmp_path: Path, settings: Any, *, concurrency: int) -> Iterator[dict[str, Any]]:
    """Own Redis, a worker of `concurrency` processes and gunicorn on the test database; the test
    process reads the same Redis (worker announcements)."""
    state: dict[str, Any] = {"tmp": tmp_path}
    with contextlib.ExitStack() as started:
        # Whatever came up is stopped, also when a later part fails to start (a worker left
        # behind would take the next tests' jobs).
        server = RedisServer(tmp_path)
        started.callback(server.stop)
        server.start()
        settings.REDIS_URL = server.url
        state["redis"] = server
        state["worker"] = start_worker(tmp_path, concurrency=concurrency)
        started.callback(lambda: state["worker"].stop())  # the test may replace it
        web, state["base"] = start_web(tmp_path, env={"SVCX_QUEUE_WAIT_LIMIT": f"{QUEUE_WAIT_LIMIT:g}s"})
        started.callback(_stop, web)
        yield state


@pytest.fixture
def stack(tmp_path: Path, settings: Any) -> Iterator[dict[str, Any]]:
    with _started(tmp_path, settings, concurrency=1) as state:
        yield state


@pytest.fixture
def stack_of_two(tmp_path: Path, settings: Any) -> Iterator[dict[str, Any]]:
    """The stack with a worker of two processes: while one runs a job, the worker's main process
    waits on the broker for the next (a BRPOP in flight), as in production."""
    with _started(tmp_path, settings, concurrency=2) as state:
        yield state


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server; killed when it has not finished its requests within 20 s."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def convert(base: str, secret: str, pdf: Path) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        base + "/v1/convert",
        data=pdf.read_bytes(),
        headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/pdf"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def in_background(fn: Any, *args: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        started = time.monotonic()
        out["result"] = fn(*args)
        out["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def wait_for(predicate: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def job_status(org: Any) -> str | None:
    return ConversionJob.objects.filter(organization=org).values_list("status", flat=True).first()


@contextlib.contextmanager
def job_held_running(stack: dict[str, Any], org: Any, secret: str) -> Iterator[dict[str, Any]]:
    """A three-page conversion sent in the background and held running for the block: the worker
    claims the job, then waits for the organization's balance row, locked here until the block
    ends. Yields the request's outcome, there once the block ended."""
    pdf = text_pdf(stack["tmp"] / "held.pdf", ["One.", "Two.", "Three."])
    with psycopg.connect(database_url_for_children()) as lock:
        lock.execute(
            "SELECT 1 FROM billing_creditbalance WHERE organization_id = %s AND environment = 'live' FOR UPDATE",
            [org.id],
        )
        thread, out = in_background(convert, stack["base"], secret, pdf)
        wait_for(lambda: job_status(org) == ConversionJob.Status.RUNNING)
        # Running is set when the worker claims the job, before its page meters (Redis): the job
        # is held only once the worker waits for the locked row, past them.
        wait_for(lambda: _waits_for_a_lock(lock))
        yield out
        lock.rollback()
    thread.join(timeout=60)


def _waits_for_a_lock(lock: psycopg.Connection[Any]) -> bool:
    """Whether another session waits for a lock the session `lock` holds."""
    row = lock.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))"
    ).fetchone()
    return bool(row and row[0])


def assert_delivered_once(out: dict[str, Any], org: Any) -> None:
    """The held conversion answered 200 and was billed its three pages once, out of 100 credits."""
    status, body = out["result"]
    assert status == 200, body
    assert (body["pages_billed"], body["credits_billed"]) == (3, 3)
    assert sorted(LedgerEntry.objects.filter(request_id=body["request_id"]).values_list("kind", "credits")) == [
        ("capture", -3),
        ("hold", -3),
    ]
    assert credits_get(organization=org, environment="live").balance == 97
    assert not CreditHold.objects.filter(organization=org, settled_at__isnull=True).exists()


def test_a_conversion_in_flight_when_redis_goes_down_finishes_with_200(stack: dict[str, Any]) -> None:
    org = make_org(credits=100)
    key = make_key(org)
    with job_held_running(stack, org, key.secret) as out:
        stack["redis"].stop()
        time.sleep(3)  # the web thread's wait meets the dead Redis

    assert_delivered_once(out, org)

    # Redis comes back empty: the worker reconnects and announces itself, and converts again.
    stack["redis"].start()
    wait_for(lambda: stack["worker"].hostname in live_workers())
    status, body = convert(stack["base"], key.secret, text_pdf(stack["tmp"] / "b.pdf", ["Four.", "Five."]))
    assert status == 200, body
    assert credits_get(organization=org, environment="live").balance == 95


def test_requests_while_redis_is_down_answer_503_service_unavailable(stack: dict[str, Any]) -> None:
    org = make_org(credits=100)
    key = make_key(org)
    stack["redis"].stop()

    status, body = convert(stack["base"], key.secret, text_pdf(stack["tmp"] / "a.pdf", ["One."]))

    assert status == 503
    assert body["error"]["code"] == "service_unavailable"
    assert body["error"]["retryable"] is True
    assert body["error"]["details"] == {"checks": {"redis": "down"}}
    assert not LedgerEntry.objects.filter(organization=org).exclude(kind="grant").exists()


def test_a_job_lost_with_redis_answers_overloaded_within_the_queue_wait_limit(stack: dict[str, Any]) -> None:
    org = make_org(credits=100)
    key = make_key(org)
    # No worker takes the job (its announcement is still fresh), so it sits in Redis only.
    worker: WorkerProcess = stack["worker"]
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.process.pid, signal.SIGKILL)
    worker.process.wait()
    thread, out = in_background(convert, stack["base"], key.secret, text_pdf(stack["tmp"] / "a.pdf", ["One."]))
    wait_for(lambda: job_status(org) == ConversionJob.Status.QUEUED)
    time.sleep(0.5)  # published after the job row commits
    stack["redis"].stop()
    stack["redis"].start()
    stack["worker"] = start_worker(stack["tmp"])
    thread.join(timeout=60)

    status, body = out["result"]
    assert status == 503, body
    assert body["error"]["code"] == "overloaded"
    assert body["error"]["retryable"] is True
    assert body["error"]["details"]["reason"] == "queue_wait"
    assert out["seconds"] < QUEUE_WAIT_LIMIT + 5
    assert not CreditHold.objects.filter(organization=org).exists()
    assert credits_get(organization=org, environment="live").balance == 100


def test_the_worker_outlives_a_redis_restart_with_a_job_in_flight(stack_of_two: dict[str, Any]) -> None:
    stack = stack_of_two
    worker: WorkerProcess = stack["worker"]
    org = make_org(credits=100)
    key = make_key(org)
    # The job runs, its message not yet acknowledged (acks_late); the worker's other process is
    # free, so its main process waits on Redis for the next job when Redis goes.
    with job_held_running(stack, org, key.secret) as out:
        stack["redis"].stop()
        time.sleep(2)  # the worker's main process meets the closed connection
        # While Redis is down a new request answers the envelope, and takes nothing.
        status, body = convert(stack["base"], key.secret, text_pdf(stack["tmp"] / "b.pdf", ["Four."]))
        assert status == 503, body
        assert body["error"]["code"] == "service_unavailable"
        assert body["error"]["retryable"] is True
        assert body["error"]["details"] == {"checks": {"redis": "down"}}
        time.sleep(8)  # down for about ten seconds in all
        stack["redis"].start()

    # The conversion in flight is delivered and billed once.
    assert_delivered_once(out, org)
    # The same worker process reconnects, announces itself and converts again.
    wait_for(lambda: worker.hostname in live_workers() or worker.process.poll() is not None)
    assert worker.process.poll() is None, worker.log.read_text()[-3000:]
    status, body = convert(stack["base"], key.secret, text_pdf(stack["tmp"] / "c.pdf", ["Five.", "Six."]))
    assert status == 200, body
    assert credits_get(organization=org, environment="live").balance == 95
    log = worker.log.read_text()
    assert "Unrecoverable error" not in log
    assert "Couldn't ack" not in log  # the job's late acknowledgement reached the restarted Redis


def test_a_worker_that_meets_redis_down_before_its_page_meters_fails_the_conversion_503(
    tmp_path: Path, settings: Any
) -> None:
    # The worker's side of a version 1 conversion, run here: claimed while Redis was up, and
    # Redis gone when it counts the pages against the meters. The client is told what the web
    # side tells it for the same outage (503, retryable), never 500; nothing is held or billed.
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    settings.REDIS_URL = redis_server.url
    settings.STORAGES = {
        **settings.STORAGES,
        "jobs": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}},
    }
    org = make_org(credits=100)
    make_queued_conversion(org, "req_outage", text_pdf(tmp_path / "a.pdf", ["One.", "Two."]))
    redis_server.stop()

    job_run(request_id="req_outage")

    job = ConversionJob.objects.get(pk="req_outage")
    assert job.status == ConversionJob.Status.FAILED
    assert job.error["code"] == "service_unavailable", job.error
    assert (job.error["retry_after_ms"], job.error["details"]) == (5000, {"checks": {"redis": "down"}})
    assert (job.pages_billed, job.credits_billed) == (0, 0)
    assert not CreditHold.objects.filter(request_id="req_outage").exists()
    assert not LedgerEntry.objects.filter(request_id="req_outage").exists()
    assert credits_get(organization=org, environment="live").balance == 100


def test_a_worker_whose_database_connection_dies_before_its_hold_fails_the_conversion_503(
    tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker's PostgreSQL session is terminated (as a restart or a fail-over does) once it
    # has counted the pages, before it holds the credits: it reconnects to record the failure,
    # a 503 the client may retry, and nothing is held.
    settings.STORAGES = {
        **settings.STORAGES,
        "jobs": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}},
    }
    org = make_org(credits=100)
    make_queued_conversion(org, "req_db_gone", text_pdf(tmp_path / "a.pdf", ["One.", "Two."]))
    counted = runner.conversion_meters_charge

    def count_then_lose_the_database(**kwargs: Any) -> list[MeterState]:
        charged = counted(**kwargs)
        pid = connection.cursor().connection.info.backend_pid
        with psycopg.connect(database_url_for_children(), autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return charged

    monkeypatch.setattr(runner, "conversion_meters_charge", count_then_lose_the_database)

    job_run(request_id="req_db_gone")

    job = ConversionJob.objects.get(pk="req_db_gone")
    assert job.status == ConversionJob.Status.FAILED
    assert (job.error["code"], job.error["details"]) == ("service_unavailable", {"checks": {"database": "down"}})
    assert not CreditHold.objects.filter(request_id="req_db_gone", status=CreditHold.Status.HELD).exists()
    assert credits_get(organization=org, environment="live").balance == 100
