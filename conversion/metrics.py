"""What operators scale on: the fleet's queue state, read from Redis and PostgreSQL when
Prometheus scrapes (so the numbers are right whichever process serves the scrape), and the
worker's timing of each job it ran."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from datetime import timedelta

from django.conf import settings
from django.db import connections
from django.db.models import Count, F, Min, Sum
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from accounts.keyformat import Environment
from billing.models import CreditHold
from conversion.async_jobs import job_queues
from conversion.jobs import conversion_queues, queue_depth
from conversion.models import ConversionJob, Job
from conversion.spool import spool_usage
from core.metrics import conversion_observe
from workers.heartbeat import live_workers

logger = logging.getLogger("svcx.metrics")


def _queue_of(environment: str) -> str:
    live, test = conversion_queues()
    return test if environment == Environment.TEST else live


def job_observe(*, request_id: str) -> None:
    """Count a job this worker ran: its worker time, and its pages when it converted."""
    fields = ("kind", "environment", "status", "pages_completed", "started_at", "finished_at")
    job = ConversionJob.objects.filter(pk=request_id).only(*fields).first()
    if job is None or job.started_at is None or job.finished_at is None:
        return
    conversion_observe(
        queue=_queue_of(job.environment),
        kind=job.kind,
        outcome=job.status,
        seconds=(job.finished_at - job.started_at).total_seconds(),
        pages=job.pages_completed if job.kind == ConversionJob.Kind.CONVERT else 0,
    )


def _source(name: str, metrics: Iterator[Metric], up: GaugeMetricFamily) -> Iterator[Metric]:
    """The metrics read from one source, and whether it could be read in `up`."""
    try:
        yield from metrics
        up.add_metric([name], 1)
    except Exception:
        logger.warning("metrics: the %s could not be read", name, exc_info=True)
        up.add_metric([name], 0)


class FleetCollector(Collector):
    """Queue depth, the age of the oldest queued job, jobs running and live workers per queue,
    and holds outstanding; `svcx_metrics_source_up` says which source could not be read."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("svcx_metrics_source_up", "Whether the source could be read.", labels=["source"])
        queues = [settings.CELERY_TASK_DEFAULT_QUEUE, *conversion_queues()]
        yield from _source("broker", self._broker([*queues, *job_queues()]), up)
        try:
            yield from _source("database", self._database(queues), up)
            yield from _source("database", self._jobs(), up)
        finally:
            # Each scrape runs in a thread of its own: its connection must not outlive it.
            connections.close_all()
        yield up

    def _broker(self, queues: list[str]) -> Iterator[Metric]:
        depth = GaugeMetricFamily("svcx_queue_depth", "Jobs waiting in the broker, per queue.", labels=["queue"])
        workers = GaugeMetricFamily(
            "svcx_workers_live", "Workers whose heartbeat is fresh, per queue they consume.", labels=["queue"]
        )
        for queue in queues:
            depth.add_metric([queue], queue_depth(queue))
            workers.add_metric([queue], len(live_workers(queue)))
        yield depth
        yield workers

    def _database(self, queues: list[str]) -> Iterator[Metric]:
        now = timezone.now()
        wait_limit = float(settings.SVCX_QUEUE_WAIT_LIMIT)
        # A job still queued long after its wait limit lost its web thread (which abandons it at
        # the limit); counting it would make the age grow forever.
        rows = (
            ConversionJob.objects.filter(
                status__in=[ConversionJob.Status.QUEUED, ConversionJob.Status.RUNNING],
                created_at__gt=now - timedelta(seconds=2 * wait_limit + 60),
            )
            .values("environment", "status")
            .annotate(jobs=Count("pk"), oldest=Min("created_at"))
            .order_by()
        )
        queued = dict.fromkeys(queues[1:], 0)
        running = dict.fromkeys(queues[1:], 0)
        age = dict.fromkeys(queues[1:], 0.0)
        for row in rows:
            queue = _queue_of(row["environment"])
            if row["status"] == ConversionJob.Status.QUEUED:
                queued[queue] += row["jobs"]
                age[queue] = max(age[queue], (now - row["oldest"]).total_seconds())
            else:
                running[queue] += row["jobs"]
        holds = (
            CreditHold.objects.filter(status=CreditHold.Status.HELD)
            .values("environment")
            .annotate(holds=Count("pk"), credits=Sum("credits"))
            .order_by()
        )
        held: dict[str, tuple[int, int]] = {env.value: (0, 0) for env in Environment}
        for hold in holds:
            held[hold["environment"]] = (hold["holds"], int(hold["credits"] or 0))
        yield _per_queue("svcx_jobs_queued", "Conversion jobs recorded as queued, per queue.", queued)
        yield _per_queue("svcx_jobs_running", "Conversion jobs running, per queue.", running)
        yield _per_queue(
            "svcx_queue_oldest_job_age_seconds", "Age of the oldest queued conversion job, per queue (0: none).", age
        )
        limit = GaugeMetricFamily(
            "svcx_queue_wait_limit_seconds", "How long a job may wait before its request answers 503 overloaded."
        )
        limit.add_metric([], wait_limit)
        yield limit
        count = GaugeMetricFamily("svcx_holds_outstanding", "Credit holds not yet settled.", labels=["environment"])
        credits = GaugeMetricFamily(
            "svcx_holds_outstanding_credits", "Credits held by unsettled holds.", labels=["environment"]
        )
        for env, (holds_count, holds_credits) in held.items():
            count.add_metric([env], holds_count)
            credits.add_metric([env], holds_credits)
        yield count
        yield credits

    def _jobs(self) -> Iterator[Metric]:
        """Version 2 jobs per queue: queued and running, the pages they still have to convert,
        and the age of the oldest queued one (the jobs pool's scaling signals)."""
        now = timezone.now()
        live, test = job_queues()
        names = {Environment.LIVE.value: live, Environment.TEST.value: test}
        jobs = GaugeMetricFamily("svcx_v2_jobs", "Version 2 jobs queued or running.", labels=["queue", "status"])
        pending = GaugeMetricFamily(
            "svcx_v2_job_pages_pending", "Pages version 2 jobs still have to convert.", labels=["queue"]
        )
        oldest = GaugeMetricFamily(
            "svcx_v2_job_oldest_queued_seconds", "Age of the oldest queued version 2 job (0: none).", labels=["queue"]
        )
        counts: dict[tuple[str, str], int] = {
            (queue, str(status)): 0 for queue in names.values() for status in (Job.Status.QUEUED, Job.Status.RUNNING)
        }
        pages = dict.fromkeys(names.values(), 0)
        ages = dict.fromkeys(names.values(), 0.0)
        rows = (
            Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
            .values("environment", "status")
            .annotate(jobs=Count("pk"), left=Sum(F("pages_total") - F("pages_completed")), first=Min("created_at"))
            .order_by()
        )
        for row in rows:
            queue = names[row["environment"]]
            counts[(queue, str(row["status"]))] += row["jobs"]
            pages[queue] += int(row["left"] or 0)
            if row["status"] == Job.Status.QUEUED:
                ages[queue] = max(ages[queue], (now - row["first"]).total_seconds())
        for (queue, status), value in counts.items():
            jobs.add_metric([queue, status], value)
        for queue in names.values():
            pending.add_metric([queue], pages[queue])
            oldest.add_metric([queue], ages[queue])
        yield jobs
        yield pending
        yield oldest


class SpoolCollector(Collector):
    """What this host's spool directory holds (request bodies and fetched job inputs): it grows
    only with requests in flight; growth beyond them is a leak the sweep will remove."""

    def collect(self) -> Iterator[Metric]:
        usage = spool_usage()
        size = GaugeMetricFamily("svcx_spool_bytes", "Bytes in this host's spool directory.")
        size.add_metric([], usage.bytes)
        files = GaugeMetricFamily("svcx_spool_files", "Files in this host's spool directory.")
        files.add_metric([], usage.files)
        yield size
        yield files


def _per_queue(name: str, documentation: str, values: Mapping[str, float]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["queue"])
    for queue, value in values.items():
        family.add_metric([queue], value)
    return family
