"""Reads of the console, every one scoped to an organization the caller passes in."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from accounts.keyformat import Environment
from accounts.models import ApiKey, AuditEvent, Membership, Organization
from billing.ledger import ledger_entry_changes
from billing.models import LedgerEntry, RequestLog, UsageRecord
from console.models import Invitation
from conversion.models import ConversionJob, Job, StoredFile
from conversion.selectors import jobs_kept
from core.ids import is_id

CHART_DAYS = 30


def membership_get(*, user: Any, organization_id: str) -> Membership | None:
    """The user's membership of the organization, or None (then the organization is not theirs)."""
    if not user.is_authenticated:
        return None
    return Membership.objects.select_related("organization").filter(user=user, organization_id=organization_id).first()


def membership_list(*, user: Any) -> QuerySet[Membership]:
    return Membership.objects.select_related("organization").filter(user=user).order_by("organization__name")


def organization_members(*, organization: Organization) -> QuerySet[Membership]:
    return Membership.objects.select_related("user").filter(organization=organization).order_by("user__email")


def invitation_list_open(*, organization: Organization) -> QuerySet[Invitation]:
    return Invitation.objects.filter(
        organization=organization, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    )


def api_key_list(*, organization: Organization) -> QuerySet[ApiKey]:
    return ApiKey.objects.select_related("created_by", "replaced_by").filter(organization=organization)


def api_key_get(*, organization: Organization, key_id: str) -> ApiKey | None:
    return (
        ApiKey.objects.select_related("created_by", "replaced_by", "replaced_by__reveal")
        .filter(organization=organization, pk=key_id)
        .first()
    )


def audit_list(*, organization: Organization) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(organization=organization)


def stored_file_list(*, organization: Organization) -> QuerySet[StoredFile]:
    return StoredFile.objects.filter(organization=organization, deleted_at__isnull=True, purged_at__isnull=True)


@dataclass(frozen=True)
class StatementFilter:
    environment: str = Environment.LIVE
    kind: str = ""
    api_key_id: str = ""
    start: date | None = None
    end: date | None = None


@dataclass
class RequestRecord:
    """One request of an organization as the console shows it: its line of the request log,
    the job that ran it (None for a request that queued none: a refusal, a cache hit, a read),
    and its ledger entries with their changes, oldest first."""

    request_id: str
    log: RequestLog | None  # None while the request is still being answered
    job: ConversionJob | None
    ledger: list[tuple[LedgerEntry, int, int]]

    @property
    def api_key_id(self) -> str:
        for source in (self.log, self.job, *(entry for entry, _, _ in self.ledger)):
            if source is not None and source.api_key_id:
                return str(source.api_key_id)
        return ""


def request_get(*, organization: Organization, request_id: str) -> RequestRecord | None:
    """The request `request_id` of `organization`, or None when it made none (another
    organization's request is none of this one's). The request log has its line once the
    answer is written; a conversion still running has its job and its hold already."""
    log = RequestLog.objects.filter(organization=organization, request_id=request_id).first()
    job = ConversionJob.objects.filter(organization=organization, request_id=request_id).first()
    ledger = request_ledger(organization=organization, request_id=request_id)
    if log is None and job is None and not ledger:
        return None
    return RequestRecord(request_id, log, job, ledger)


def request_ledger(*, organization: Organization, request_id: str) -> list[tuple[LedgerEntry, int, int]]:
    """The ledger entries of a request (or of a version 2 job, by its id) with their changes
    (balance, available), oldest first."""
    entries = LedgerEntry.objects.filter(organization=organization, request_id=request_id).order_by("created_at", "id")
    return [(entry, *ledger_entry_changes(entry)) for entry in entries]


# --- version 2 jobs ------------------------------------------------------------------------

# The path of a request about one job: /v2/jobs/{id}, its result, its cancel.
JOB_PATH = re.compile(r"/v2/jobs/(job_[0-9A-Za-z]+)(?:/|$)")


def job_get(*, organization: Organization, job_id: str) -> Job | None:
    """The organization's job `job_id` (either environment), or None when it has none that has
    not expired (another organization's job is none of this one's)."""
    if not is_id(job_id, "job"):
        return None
    return jobs_kept(organization=organization).filter(pk=job_id).first()


def jobs_kept_ids(*, organization: Organization, job_ids: set[str]) -> set[str]:
    """Those of `job_ids` that name a job of the organization that has not expired (a ledger
    entry outlives its job: its line links to the job only while the job is there)."""
    ids = [job_id for job_id in job_ids if is_id(job_id, "job")]
    if not ids:
        return set()
    return set(jobs_kept(organization=organization).filter(pk__in=ids).values_list("pk", flat=True))


def request_jobs(*, organization: Organization, requests: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The job each request of `requests` ((request id, path) pairs of the request log) is about,
    by request id, for jobs that have not expired: the job a POST /v2/jobs created, or the job
    its path names (reading it, its result, canceling it)."""
    named = {request_id: match.group(1) for request_id, path in requests if (match := JOB_PATH.match(path))}
    created = dict(
        jobs_kept(organization=organization)
        .filter(request_id__in=[request_id for request_id, _ in requests])
        .values_list("request_id", "pk")
    )
    about = {**named, **created}
    kept = jobs_kept_ids(organization=organization, job_ids=set(about.values()))
    return {request_id: job_id for request_id, job_id in about.items() if job_id in kept}


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def ledger_statement(*, organization: Organization, filters: StatementFilter) -> QuerySet[LedgerEntry]:
    """Ledger rows of one environment, newest first; `end` is inclusive (a whole day)."""
    rows = LedgerEntry.objects.filter(organization=organization, environment=filters.environment)
    if filters.kind:
        rows = rows.filter(kind=filters.kind)
    if filters.api_key_id:
        rows = rows.filter(api_key_id=filters.api_key_id)
    if filters.start is not None:
        rows = rows.filter(created_at__gte=_day_start(filters.start))
    if filters.end is not None:
        rows = rows.filter(created_at__lt=_day_start(filters.end + timedelta(days=1)))
    return rows.order_by("-created_at", "-id")


@dataclass
class StatementLine:
    """One line of the statement: the ledger entries of one request folded together (a
    conversion's hold, then its capture or release), or an entry of no request (a grant, an
    adjustment). Its changes are the net of its entries; the entries are its detail."""

    entries: list[LedgerEntry]  # newest first
    changes: list[tuple[int, int]]  # (balance_change, available_change) of each entry

    @property
    def newest(self) -> LedgerEntry:
        return self.entries[0]

    @property
    def what(self) -> str:
        """Its entries' kinds in the order they happened: "hold → capture"."""
        return " → ".join(entry.kind for entry in reversed(self.entries))

    @property
    def balance_change(self) -> int:
        return sum(balance for balance, _ in self.changes)

    @property
    def available_change(self) -> int:
        return sum(available for _, available in self.changes)

    @property
    def pages(self) -> int:
        return max(entry.pages for entry in self.entries)

    @property
    def detail(self) -> list[tuple[LedgerEntry, int, int]]:
        """Each entry with its changes, oldest first."""
        return [(entry, *change) for entry, change in reversed(list(zip(self.entries, self.changes, strict=True)))]


def statement_lines(rows: QuerySet[LedgerEntry], page: Sequence[LedgerEntry]) -> list[StatementLine]:
    """The statement's lines for one page of `rows` (the filtered ledger, newest first): a
    request's line stands where its newest entry does, with all of its entries (also those on
    the next page); a request whose newest entry is on an earlier page is not repeated."""
    requests = {entry.request_id for entry in page if entry.request_id}
    of_request: dict[str, list[LedgerEntry]] = {}
    for entry in rows.filter(request_id__in=requests):
        of_request.setdefault(entry.request_id, []).append(entry)
    lines: list[StatementLine] = []
    shown: set[str] = set()
    for entry in page:
        if not entry.request_id:
            lines.append(StatementLine([entry], [ledger_entry_changes(entry)]))
            continue
        group = of_request[entry.request_id]
        if entry.request_id in shown or group[0].pk != entry.pk:
            continue
        shown.add(entry.request_id)
        lines.append(StatementLine(group, [ledger_entry_changes(e) for e in group]))
    return lines


@dataclass
class DailySeries:
    """Per-day values of one series (a key or an environment) over the chart's days."""

    label: str
    values: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.values)


def usage_by_day(
    *, organization: Organization, metric: str, by: str, today: date | None = None, days: int = CHART_DAYS
) -> tuple[list[date], list[DailySeries]]:
    """`metric` (pages or credits) per day for the last `days` days up to `today`, one series per
    key (`by="key"`, labelled by hint and name) or per environment, from the usage records."""
    if metric not in ("pages", "credits") or by not in ("key", "environment"):
        raise ValueError("metric is pages or credits, by is key or environment")
    last = today or timezone.localdate()
    first = last - timedelta(days=days - 1)
    day_list = [first + timedelta(days=i) for i in range(days)]
    group = "api_key_id" if by == "key" else "environment"
    rows = (
        UsageRecord.objects.filter(organization=organization, created_at__gte=_day_start(first))
        .filter(created_at__lt=_day_start(last + timedelta(days=1)))
        .annotate(day=TruncDate("created_at"))
        .values("day", group)
        .annotate(total=Sum(metric), n=Count("id"))
        .order_by()
    )
    index = {day: i for i, day in enumerate(day_list)}
    series: dict[str, DailySeries] = {}
    for row in rows:
        name = row[group]
        entry = series.setdefault(name, DailySeries(label=name, values=[0] * days))
        entry.values[index[row["day"]]] += int(row["total"] or 0)
    if by == "key":
        keys = ApiKey.objects.filter(organization=organization, pk__in=list(series)).values_list("pk", "hint", "name")
        for pk, hint, name in keys:
            series[pk].label = f"{hint} {name}".strip()
    ordered = sorted(series.values(), key=lambda s: (-s.total, s.label))
    return day_list, ordered
