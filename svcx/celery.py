"""The Celery application. Workers run `celery -A svcx worker`; the scheduler `celery -A svcx beat`."""

from __future__ import annotations

import gc
import logging
import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_process_init, worker_process_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "svcx.settings")

logger = logging.getLogger("svcx.worker")

app = Celery("svcx")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each app's tasks.py


def _install_worker_steps() -> None:
    from conversion.spool import SpoolSweepStep
    from workers.heartbeat import HeartbeatStep

    app.steps["worker"].add(HeartbeatStep)
    app.steps["worker"].add(SpoolSweepStep)


_install_worker_steps()


@worker_process_init.connect
def _freeze_startup_heap(**_: Any) -> None:
    """Move everything loaded at start-up (Django, Celery, the engine's modules) out of the
    garbage collector's reach. The engine allocates millions of short-lived objects; without
    this every full collection also walks the ~100,000 start-up objects, which made a
    conversion about a third slower in a worker than in a bare process."""
    gc.freeze()


# Connected before the metrics exporter's receiver: its thread starts at the lowered priority.
@worker_init.connect
def _background_priority(sender: Any = None, **_: Any) -> None:
    """A worker that consumes only the version 2 jobs queues runs at SVCX_JOB_WORKER_NICE, its
    main process before the pool forks (the pool's processes inherit it): on a host it shares
    with the interactive worker, a long job takes only the CPU that one-page conversions leave.
    A worker on any other queue (`make run`'s, which takes everything) keeps its priority."""
    from django.conf import settings

    from conversion.async_jobs import job_queues
    from workers.heartbeat import consumed_queues
    from workers.priority import priority_lower

    niceness = int(settings.SVCX_JOB_WORKER_NICE)
    if sender is None or not niceness or not set(consumed_queues(sender)) <= set(job_queues()):
        return
    lowered = priority_lower(niceness=niceness)
    logger.info("jobs worker at nice %s (session autogroup: %s)", lowered.nice, lowered.autogroup_nice)


@worker_init.connect
def _serve_metrics(**_: Any) -> None:
    """The worker's metrics (its pool processes' job timings, summed) on SVCX_METRICS_PORT, served
    by the worker's main process; started before the pool, so the count starts afresh."""
    from conversion.metrics import SpoolCollector
    from core.metrics import exporter_prepare, exporter_start

    exporter_prepare()
    exporter_start(SpoolCollector())


@worker_process_shutdown.connect
def _pool_process_gone(pid: int | None = None, **_: Any) -> None:
    from core.metrics import process_dead

    process_dead(pid or os.getpid())
