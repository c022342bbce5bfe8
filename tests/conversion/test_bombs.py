"""Decompression bombs, a conversion past its memory ceiling and a slow hostile document,
through a real worker: each ends in its catalogue error within seconds, bills nothing, and the
worker goes on converting."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from bench.hostile.bombs import RssSampler, cmap_bomb, content_bomb, many_fonts, xobject_bomb
from billing.models import CreditHold, LedgerEntry
from billing.selectors import credits_get
from tests.conftest import WorkerProcess, start_worker, text_pdf
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]

PREFIX = f"bombs{time.monotonic_ns()}-"
TIME_LIMIT_SECONDS = 3
MEMORY_LIMIT_MB = 160


@pytest.fixture(scope="module")
def worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """A worker of its own, on queues no other worker reads, with a short wall-clock limit and
    a small memory ceiling (a bomb must be stopped by its stream budget well inside both)."""
    with django_db_blocker.unblock():
        started = start_worker(
            tmp_path_factory.mktemp("bombs-worker"),
            queues=f"{PREFIX}convert,{PREFIX}convert_test",
            env={
                "SVCX_CONVERSION_TIME_LIMIT": f"{TIME_LIMIT_SECONDS}s",
                "SVCX_CONVERSION_MEMORY_LIMIT_MB": str(MEMORY_LIMIT_MB),
            },
        )
    yield started
    started.stop()


@pytest.fixture(autouse=True)
def _queues(settings: Any) -> None:
    settings.SVCX_QUEUE_PREFIX = PREFIX
    settings.SVCX_CONVERSION_TIME_LIMIT = TIME_LIMIT_SECONDS


def _post(secret: str, pdf: bytes) -> Any:
    return Client().post("/v1/convert", data=pdf, content_type="application/pdf", **bearer(secret))


def _pool(worker: WorkerProcess) -> list[int]:
    root = worker.process.pid
    return sorted(
        int(p) for task in Path(f"/proc/{root}/task").iterdir() for p in (task / "children").read_text().split()
    )


def _converts(secret: str, tmp_path: Path) -> None:
    response = _post(secret, text_pdf(tmp_path / "after.pdf", ["Still converting after the bomb."]).read_bytes())
    assert response.status_code == 200, response.content
    assert "Still converting" in response.json()["markdown"]


@pytest.mark.parametrize(
    ("bomb", "reason"),
    [
        (lambda: content_bomb(1024), "a stream decodes to more than 64 MiB"),
        (lambda: xobject_bomb(1024), "a stream decodes to more than 64 MiB"),
        (lambda: cmap_bomb(256), "a stream decodes to more than 8 MiB"),
    ],
    ids=["content_1gib", "form_xobject_1gib", "tounicode_cmap_256mib"],
)
def test_a_decompression_bomb_is_422_within_seconds_and_the_worker_carries_on(
    worker: WorkerProcess, tmp_path: Path, bomb: Any, reason: str
) -> None:
    org = make_org(credits=500)
    minted = make_key(org)
    pdf = bomb()
    assert len(pdf) < 1_100_000
    sampler = RssSampler(worker.process.pid)
    sampler.start()
    started = time.monotonic()

    response = _post(minted.secret, pdf)

    seconds = time.monotonic() - started
    peak_mb = sampler.stop()
    error = assert_envelope(response, 422, "document_too_complex")
    assert error["details"] == {"page": 1, "reason": reason}
    assert seconds < 10
    assert 0 < peak_mb < 600
    assert credits_get(organization=org, environment="live").balance == 500
    assert not CreditHold.objects.filter(status="held").exists()
    assert not LedgerEntry.objects.filter(kind="capture").exists()
    _converts(minted.secret, tmp_path)


def test_a_conversion_past_the_memory_ceiling_is_422_and_its_process_is_replaced(
    worker: WorkerProcess, tmp_path: Path
) -> None:
    org = make_org(credits=500)
    minted = make_key(org)
    pool_before = _pool(worker)
    # Four embedded font programs of 48 MiB: each under the stream budget, together past the ceiling.
    pdf = many_fonts(4, 48)

    response = _post(minted.secret, pdf)

    error = assert_envelope(response, 422, "document_too_complex")
    assert error["details"]["reason"] == "out of memory"
    assert not LedgerEntry.objects.filter(kind="capture").exists()
    assert credits_get(organization=org, environment="live").balance == 500
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not _pool(worker) or _pool(worker) == pool_before):
        time.sleep(0.1)
    assert _pool(worker)
    assert set(_pool(worker)).isdisjoint(pool_before)
    _converts(minted.secret, tmp_path)


def test_a_slow_hostile_page_is_504_with_the_pages_completed(worker: WorkerProcess, tmp_path: Path) -> None:
    org = make_org(credits=500)
    minted = make_key(org)
    # Page 2's CMap is under its budget, and pdfminer takes far longer than the limit to parse it.
    pdf = cmap_bomb(7, pages=2)
    started = time.monotonic()

    response = _post(minted.secret, pdf)

    error = assert_envelope(response, 504, "conversion_timeout")
    assert error["details"]["pages_completed"] == 1
    assert time.monotonic() - started < TIME_LIMIT_SECONDS + 5
    assert not LedgerEntry.objects.filter(kind="capture").exists()
    assert credits_get(organization=org, environment="live").balance == 500
    _converts(minted.secret, tmp_path)
