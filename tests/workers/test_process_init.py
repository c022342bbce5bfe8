"""Worker and web processes keep their start-up heap out of the garbage collector's reach."""

from __future__ import annotations

import gc

from celery.signals import worker_process_init

from svcx import celery as celery_module
from svcx import gunicorn_conf


def test_every_worker_child_freezes_its_start_up_heap() -> None:
    receivers = [ref() if callable(ref) else ref for _, ref in worker_process_init.receivers]
    assert celery_module._freeze_startup_heap in receivers

    try:
        celery_module._freeze_startup_heap()
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()


def test_every_web_worker_freezes_its_start_up_heap() -> None:
    try:
        gunicorn_conf.post_worker_init(object())
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
