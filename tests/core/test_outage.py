"""What an outage of PostgreSQL or Redis answers (core.handlers.outage_error): the errors come
from the real servers, or from a port where none listens."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from django.db import OperationalError, connection, transaction

from core.handlers import outage_error
from tests.conftest import free_port

pytestmark = [pytest.mark.django_db(transaction=True)]


def _raised(action: Any) -> BaseException:
    try:
        action()
    except Exception as exc:
        return exc
    raise AssertionError("nothing was raised")


def test_postgresql_that_cannot_be_reached_is_down() -> None:
    def connect() -> None:
        # As Django's backend reports it: psycopg's error wrapped in Django's.
        with connection.wrap_database_errors:
            psycopg.connect(host="127.0.0.1", port=free_port(), dbname="svcx", connect_timeout=2)

    exc = _raised(connect)
    assert isinstance(exc, OperationalError)
    error = outage_error(exc)
    assert error is not None
    assert (error.code, error.details) == ("service_unavailable", {"checks": {"database": "down"}})


def test_postgresql_that_answers_but_cancels_a_statement_is_busy_not_down() -> None:
    def timed_out() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout = 10")
            cursor.execute("SELECT pg_sleep(1)")

    exc = _raised(timed_out)
    assert isinstance(exc, OperationalError)
    error = outage_error(exc)
    assert error is not None
    assert error.retry_after_ms == 5000
    assert (error.code, error.details) == ("service_unavailable", {"checks": {"database": "busy"}})


def test_redis_that_cannot_be_reached_is_down() -> None:
    client = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=1)
    error = outage_error(_raised(client.ping))
    assert error is not None
    assert error.details == {"checks": {"redis": "down"}}


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[redis.Redis]:
    """A redis-server of the test's own (its settings are changed), keeping nothing on disk."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield client
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_redis_out_of_memory_is_busy_not_down(own_redis: redis.Redis) -> None:
    own_redis.config_set("maxmemory", "1")
    # Alone, and inside a pipeline as the meters send their counts (redis-py words the error
    # "Command # 1 (INCRBY ...) of pipeline caused error: ...").
    pipe = own_redis.pipeline(transaction=False)
    pipe.incrby("key", 1)
    for exc in (_raised(lambda: own_redis.set("key", "value")), _raised(pipe.execute)):
        assert isinstance(exc, redis.ResponseError)
        error = outage_error(exc)
        assert error is not None
        assert error.details == {"checks": {"redis": "busy"}}


@pytest.mark.parametrize(
    "reply",
    [
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
        "Command # 1 (INCRBY svcx:rl:1:live:pages:1 3) of pipeline caused error: MISCONF Redis is configured to save",
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    ],
)
def test_redis_that_cannot_write_for_now_is_busy(reply: str) -> None:
    # The replies redis-py raises as plain response errors (a failing snapshot, a long script).
    error = outage_error(redis.ResponseError(reply))
    assert error is not None
    assert error.details == {"checks": {"redis": "busy"}}


def test_a_replica_that_takes_no_writes_is_down(own_redis: redis.Redis) -> None:
    # After a fail-over, a client still pointed at the old primary, now a replica.
    own_redis.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))
    exc = _raised(lambda: own_redis.set("key", "value"))
    assert isinstance(exc, redis.ReadOnlyError)
    error = outage_error(exc)
    assert error is not None
    assert error.details == {"checks": {"redis": "down"}}


def test_a_redis_error_of_a_wrong_command_is_no_outage(own_redis: redis.Redis) -> None:
    # A fault of ours, logged as one (500 internal_error), not a retryable 503.
    own_redis.set("key", "value")
    exc = _raised(lambda: own_redis.lpush("key", "item"))
    assert isinstance(exc, redis.ResponseError)
    assert str(exc).startswith("WRONGTYPE")
    assert outage_error(exc) is None


def test_other_errors_are_no_outage() -> None:
    assert outage_error(ValueError("x")) is None
