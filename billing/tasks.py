"""Celery tasks of billing (found by autodiscovery). Each takes plain values, calls one service,
and is safe to run twice."""

from __future__ import annotations

from celery import shared_task

from billing.ledger import captures_reconcile, holds_sweep
from billing.usage import usage_copy


@shared_task(name="billing.holds_sweep", ignore_result=True)
def holds_sweep_task() -> int:
    """Release holds whose request died (lease lapsed), and refund captures that never
    reached a 200."""
    return holds_sweep() + captures_reconcile()


@shared_task(name="billing.usage_copy", ignore_result=True)
def usage_copy_task() -> int:
    """Bring the usage reporting copy up to date with the request log."""
    return usage_copy()
