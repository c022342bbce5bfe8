"""Prometheus metrics: the instruments the request path and the workers count with, and the
exporter each process group (the gunicorn web tier, a Celery worker) serves them from on a port
of its own, `SVCX_METRICS_PORT`, never on the public API's.

gunicorn and Celery's prefork pool run several processes that count separately, so metrics use
prometheus_client's multiprocess mode: every process writes its counters to files in
`PROMETHEUS_MULTIPROC_DIR` (one directory per process group, emptied when the group starts) and
the exporter, in the group's parent process, sums them at scrape time. The variable must be set
in the environment before the processes start: prometheus_client reads it once, on import.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

from core.env import env_int, env_str

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

ANSWERS = Counter(
    "svcx_answers",
    "HTTP answers by status and error code (code `none` for an answer without an error).",
    ["status", "code"],
)
RESULT_CACHE_LOOKUPS = Counter(
    "svcx_result_cache_lookups", "Result cache lookups of conversions, by outcome (hit or miss).", ["outcome"]
)
CONVERSION_SECONDS = Histogram(
    "svcx_conversion_seconds",
    "Worker time of a job from its claim to its end, by queue, kind and outcome.",
    ["queue", "kind", "outcome"],
    buckets=(0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 90, 120, 180),
)
CONVERSION_PAGES = Counter("svcx_conversion_pages", "Pages converted by successful conversions, by queue.", ["queue"])
PAGES_PER_SECOND = Histogram(
    "svcx_conversion_pages_per_second",
    "Pages per second of worker time of each successful conversion, by queue.",
    ["queue"],
    buckets=(0.5, 1, 2, 5, 10, 20, 50, 100, 200),
)


def answer_count(*, status: int, code: str | None) -> None:
    ANSWERS.labels(status=str(status), code=code or "none").inc()


def result_cache_count(*, hit: bool) -> None:
    RESULT_CACHE_LOOKUPS.labels(outcome="hit" if hit else "miss").inc()


def conversion_observe(*, queue: str, kind: str, outcome: str, seconds: float, pages: int) -> None:
    CONVERSION_SECONDS.labels(queue=queue, kind=kind, outcome=outcome).observe(seconds)
    if pages and outcome == "succeeded":
        CONVERSION_PAGES.labels(queue=queue).inc(pages)
        PAGES_PER_SECOND.labels(queue=queue).observe(pages / max(seconds, 0.001))


def metrics_port() -> int:
    """The exporter's port; 0 (the default) serves no metrics."""
    return env_int("SVCX_METRICS_PORT", 0, minimum=0)


def exporter_prepare() -> None:
    """In the parent of a process group, before any child starts: check the configuration and
    empty the multiprocess directory, so that counters of an earlier run do not carry over.

    Raises RuntimeError when SVCX_METRICS_PORT is set without PROMETHEUS_MULTIPROC_DIR (the
    processes' counts could not be summed).
    """
    if not metrics_port():
        return
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        raise RuntimeError(f"SVCX_METRICS_PORT is set but {MULTIPROC_ENV} is not: set it to a directory of its own.")
    path = Path(directory)
    if path.is_dir():
        shutil.rmtree(path)
    path.mkdir(parents=True)


def exporter_start(*collectors: Collector) -> None:
    """Serve the summed counters of this process group, and `collectors`, on SVCX_METRICS_PORT
    (address SVCX_METRICS_ADDR), from a thread of this process; nothing when the port is 0."""
    port = metrics_port()
    if not port:
        return
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    for collector in collectors:
        registry.register(collector)
    start_http_server(port, addr=env_str("SVCX_METRICS_ADDR", "127.0.0.1"), registry=registry)


def process_dead(pid: int) -> None:
    """Bookkeeping for a child of the group that exited (its live gauges stop counting)."""
    if metrics_port() and os.environ.get(MULTIPROC_ENV):
        mark_process_dead(pid)
