"""GET /v1/health against the real database, Redis and a real Celery worker."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from tests.conftest import WorkerProcess, next_redis_database
from tests.svcx.test_envelope import assert_envelope
from workers.heartbeat import live_workers, worker_heartbeat


@pytest.mark.django_db
def test_health_is_200_when_database_redis_and_a_worker_answer(client: Client, session_worker: WorkerProcess) -> None:
    response = client.get("/v1/health")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["redis"] == {"ok": True, "embedded": False}
    assert body["checks"]["workers"]["live"] >= 1
    assert body["request_id"] == response["X-Request-Id"]


@pytest.mark.django_db
def test_health_ignores_any_authorization_header(client: Client, session_worker: WorkerProcess) -> None:
    response = client.get("/v1/health", HTTP_AUTHORIZATION="Bearer svcx_sk_live_garbage")

    assert response.status_code == 200


def test_a_stopped_worker_stops_counting(client: Client, celery_worker: WorkerProcess) -> None:
    # A worker of the test's own: the session's keeps serving the other tests.
    assert celery_worker.hostname in live_workers()

    celery_worker.stop()

    assert celery_worker.hostname not in live_workers()


@pytest.mark.django_db
def test_health_is_503_naming_workers_when_none_runs(client: Client, settings: Any) -> None:
    settings.REDIS_URL = next_redis_database(settings.REDIS_URL)  # a real Redis database no worker uses

    response = client.get("/v1/health")

    error = assert_envelope(response, 503, "service_unavailable")
    assert error["retryable"] is True
    assert "workers" in error["message"]
    assert error["details"]["checks"]["workers"] == {
        "ok": False,
        "live": 0,
        "queues": {"default": 0, "convert": 0, "convert_test": 0},
    }
    assert error["details"]["checks"]["database"]["ok"] is True
    assert int(response["Retry-After"]) >= 1


@pytest.mark.django_db
def test_health_is_503_naming_redis_when_it_is_unreachable(client: Client, settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    error = assert_envelope(client.get("/v1/health"), 503, "service_unavailable")

    assert error["details"]["checks"]["redis"]["ok"] is False
    assert "redis" in error["message"]
    assert "127.0.0.1" not in error["message"]


@pytest.mark.django_db
def test_health_needs_live_conversions_and_scheduled_work_served_not_the_test_queue(
    client: Client, settings: Any
) -> None:
    prefix = f"health{time.monotonic_ns()}-"
    settings.SVCX_QUEUE_PREFIX = prefix  # queues of this test alone
    worker_heartbeat(hostname=f"{prefix}tests-only@x", queues=["default", f"{prefix}convert_test"])
    assert client.get("/v1/health").status_code == 503

    worker_heartbeat(hostname=f"{prefix}live@x", queues=["default", f"{prefix}convert"])
    response = client.get("/v1/health")

    assert response.status_code == 200
    queues = response.json()["checks"]["workers"]["queues"]
    assert (queues[f"{prefix}convert"], queues[f"{prefix}convert_test"]) == (1, 1)
    assert queues["default"] >= 2
