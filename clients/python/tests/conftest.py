"""Fixtures of the SDK's own tests: a scripted HTTP server (scripted_server.py) and a sleep that
records its waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scripted_server import Scripted, Sleeps


@pytest.fixture
def server() -> Iterator[Scripted]:
    scripted = Scripted()
    yield scripted
    scripted.close()


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
