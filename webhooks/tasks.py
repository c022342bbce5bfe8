"""Celery tasks of webhooks (found by autodiscovery). Each takes plain values, calls one service,
and is safe to run twice. Services queue an attempt by the task's name
(`webhooks.delivery.DELIVER_TASK`) on the webhooks queue."""

from __future__ import annotations

from celery import shared_task

from webhooks.delivery import (
    DELIVER_TASK,
    attempt_time_limit,
    webhook_deliveries_sweep,
    webhook_delivery_attempt,
    webhook_events_purge,
)


@shared_task(name=DELIVER_TASK, ignore_result=True, acks_late=True, time_limit=attempt_time_limit())
def deliver_task(delivery_id: int) -> None:
    """One attempt of a due delivery (nothing when it is not due or another attempt has it)."""
    webhook_delivery_attempt(delivery_id=delivery_id)


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep_task() -> int:
    """Queue the pending deliveries whose next attempt is due."""
    return webhook_deliveries_sweep()


@shared_task(name="webhooks.purge", ignore_result=True)
def purge_task() -> int:
    """Delete events past their retention, with their deliveries."""
    return webhook_events_purge()
