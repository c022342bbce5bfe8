"""What an outage of PostgreSQL or Redis answers (core.handlers.outage_error): the errors come
from the real servers, or from a port where none listens."""

from __future__ import annotations

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


def test_other_errors_are_no_outage() -> None:
    assert outage_error(ValueError("x")) is None
