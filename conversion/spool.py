"""This host's spool directory (SVCX_SPOOL_DIR): request bodies being received and job inputs a
worker fetched from the store. Each belongs to one request or job, whose code deletes it; one
older than SVCX_SPOOL_MAX_AGE belongs to none (its process was killed first) and is swept by
every web and worker process group, on its own timer. Imports no model: the Celery app and the
gunicorn hooks load it before Django's apps are ready."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import bootsteps
from django.conf import settings

logger = logging.getLogger("svcx.conversion")


@dataclass(frozen=True)
class SpoolUsage:
    files: int
    bytes: int


def _spooled() -> Iterator[tuple[Path, os.stat_result]]:
    """Each file of this host's spool directory with its status; one deleted meanwhile is skipped."""
    with contextlib.suppress(FileNotFoundError), os.scandir(settings.SVCX_SPOOL_DIR) as entries:
        for entry in entries:
            with contextlib.suppress(FileNotFoundError):
                if entry.is_file(follow_symlinks=False):
                    yield Path(entry.path), entry.stat(follow_symlinks=False)


def spool_usage() -> SpoolUsage:
    """The files in this host's spool directory and their size (the metrics' gauge)."""
    sizes = [stat.st_size for _, stat in _spooled()]
    return SpoolUsage(files=len(sizes), bytes=sum(sizes))


def spool_sweep() -> SpoolUsage:
    """Delete the files of this host's spool directory older than SVCX_SPOOL_MAX_AGE; returns
    what was deleted."""
    cutoff = time.time() - float(settings.SVCX_SPOOL_MAX_AGE)
    deleted = []
    for path, stat in _spooled():
        if stat.st_mtime < cutoff:
            path.unlink()
            deleted.append(stat.st_size)
    if deleted:
        logger.warning("spool sweep deleted %d files (%d bytes) left by ended requests", len(deleted), sum(deleted))
    return SpoolUsage(files=len(deleted), bytes=sum(deleted))


def _sweep_quietly() -> None:
    try:
        spool_sweep()
    except OSError:
        logger.warning("spool sweep failed", exc_info=True)


class SpoolSweepStep(bootsteps.StartStopStep):
    """Celery worker bootstep: sweep this host's spool on the worker's own timer."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        self.tref: Any = None

    def start(self, worker: Any) -> None:
        _sweep_quietly()
        self.tref = worker.timer.call_repeatedly(float(settings.SVCX_SPOOL_SWEEP_INTERVAL), _sweep_quietly, priority=20)

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()


def spool_sweeper_start() -> None:
    """In a web process: sweep this host's spool from a daemon thread, every
    SVCX_SPOOL_SWEEP_INTERVAL (each web process sweeps; deleting twice is harmless)."""
    interval = float(settings.SVCX_SPOOL_SWEEP_INTERVAL)

    def loop() -> None:
        while True:
            _sweep_quietly()
            time.sleep(interval)

    threading.Thread(target=loop, name="spool-sweep", daemon=True).start()
