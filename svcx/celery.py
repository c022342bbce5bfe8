"""The Celery application. Workers run `celery -A svcx worker`; the scheduler `celery -A svcx beat`."""

from __future__ import annotations

import gc
import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_process_init, worker_process_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "svcx.settings")

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
