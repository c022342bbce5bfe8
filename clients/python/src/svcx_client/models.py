"""What the service answers, as typed, read-only dataclasses.

Each is built from the JSON body by `from_json`, which reads the members it names and keeps the
whole body in `raw`: members the service adds later are there, never an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Any, Generic, Self, TypeVar

Row = TypeVar("Row")
Model = TypeVar("Model")


def _time(value: Any) -> datetime | None:
    """An ISO 8601 timestamp of the service (`...Z`), or None."""
    return datetime.fromisoformat(value) if value else None


def _build(cls: type[Model], body: Mapping[str, Any], **given: Any) -> Model:
    """`cls` from the members of `body` named as its fields, `given` instead where named there;
    a member the body lacks is None (the service leaves out `metadata` it was not sent)."""
    values = {f.name: given[f.name] if f.name in given else body.get(f.name) for f in fields(cls)}  # type: ignore[arg-type]  # every caller's cls is a dataclass
    return cls(**values)


@dataclass(frozen=True)
class RateLimit:
    """One meter's `x-ratelimit-*` headers: its limit, what is left, seconds until it resets."""

    limit: int
    remaining: int
    reset_seconds: float


def rate_limits_of(headers: Mapping[str, str]) -> dict[str, RateLimit]:
    """The meters an answer reported, by name (`requests`, `pages`, ...)."""
    found: dict[str, RateLimit] = {}
    prefix = "x-ratelimit-limit-"
    for name, value in headers.items():
        lowered = name.lower()
        if not lowered.startswith(prefix):
            continue
        meter = lowered[len(prefix) :]
        try:
            found[meter] = RateLimit(
                limit=int(value),
                remaining=int(headers.get(f"x-ratelimit-remaining-{meter}", value)),
                reset_seconds=float(headers.get(f"x-ratelimit-reset-{meter}", 0)),
            )
        except ValueError:
            continue  # a header the SDK cannot read is not worth failing an answer for
    return found


@dataclass(frozen=True)
class Answer:
    """What every answer carries besides its body: the request id, whether it is a replay of an
    earlier request with the same Idempotency-Key, and the rate-limit headers."""

    request_id: str | None
    idempotent_replayed: bool
    rate_limits: dict[str, RateLimit]

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> Answer:
        return cls(
            request_id=headers.get("x-request-id"),
            idempotent_replayed=headers.get("idempotent-replayed", "").lower() == "true",
            rate_limits=rate_limits_of(headers),
        )


@dataclass(frozen=True)
class ConversionPage:
    page: int
    label: str | None
    markdown: str
    has_text_layer: bool
    warnings: list[str]
    width: float | None
    height: float | None
    elements: list[dict[str, Any]]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> ConversionPage:
        return _build(cls, body, elements=list(body.get("elements", [])))


@dataclass(frozen=True)
class Conversion:
    """A conversion answered in JSON (`format="json"`): every page, and what was billed."""

    request_id: str
    engine_id: str
    engine_version: str
    page_count: int
    sha256: str
    pages: list[ConversionPage]
    markdown: str
    result_truncated: bool
    pages_billed: int
    credits_billed: int
    cached: bool
    warnings: list[str]
    metadata: dict[str, Any] | None
    debug: dict[str, Any] | None
    answer: Answer
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> Self:
        return _build(
            cls,
            body,
            engine_id=body["engine"]["id"],
            engine_version=body["engine"]["version"],
            page_count=body["document"]["page_count"],
            sha256=body["document"]["sha256"],
            pages=[ConversionPage.from_json(p) for p in body["pages"]],
            answer=answer,
            raw=dict(body),
        )


@dataclass(frozen=True)
class MarkdownConversion:
    """A conversion answered in Markdown (`format="md"`): the text, `<!-- page N -->` before each
    page, and what was billed (from the `X-Svcx-*` headers). `str(result)` is the Markdown."""

    markdown: str
    pages_billed: int
    credits_billed: int
    result_truncated: bool
    cached: bool
    answer: Answer

    @property
    def request_id(self) -> str | None:
        return self.answer.request_id

    def __str__(self) -> str:
        return self.markdown

    @classmethod
    def from_text(cls, text: str, headers: Mapping[str, str], **more: Any) -> Self:
        """`more`: the members a subclass adds."""
        return cls(
            markdown=text,
            pages_billed=int(headers.get("x-svcx-pages-billed", 0)),
            credits_billed=int(headers.get("x-svcx-credits-billed", 0)),
            result_truncated=headers.get("x-svcx-result-truncated", "false").lower() == "true",
            cached=headers.get("x-svcx-cached", "false").lower() == "true",
            answer=Answer.of(headers),
            **more,
        )


@dataclass(frozen=True)
class StoredFile:
    """A file stored with POST /v1/files, converted afterwards by its `id`."""

    id: str
    filename: str
    size: int  # the body's `bytes`
    sha256: str
    page_count: int | None
    created_at: datetime | None
    expires_at: datetime | None
    answer: Answer
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> StoredFile:
        times = {name: _time(body.get(name)) for name in ("created_at", "expires_at")}
        return _build(cls, body, size=body["bytes"], **times, answer=answer, raw=dict(body))


@dataclass(frozen=True)
class FileDeleted:
    id: str
    deleted: bool
    answer: Answer

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> FileDeleted:
        return _build(cls, body, answer=answer)


@dataclass(frozen=True)
class PageSample:
    page: int
    chars: int
    sample: str
    has_text_layer: bool
    hidden_text: dict[str, int]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> PageSample:
        return _build(cls, body, hidden_text=dict(body.get("hidden_text", {})))


@dataclass(frozen=True)
class Inspection:
    """POST /v1/inspect: what the document is, before paying to convert it (bills nothing)."""

    # In the order of the answer's members.
    xfa: bool
    pages: list[PageSample]
    repaired: bool
    warnings: list[str]
    encrypted: bool
    page_count: int | None
    page_labels: list[str | None] | None
    pdf_version: str | None
    outline_items: int
    password_required: bool
    extraction_allowed: bool | None
    metadata: dict[str, Any] | None
    answer: Answer
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> Inspection:
        pages = [PageSample.from_json(p) for p in body.get("pages", [])]
        return _build(cls, body, pages=pages, answer=answer, raw=dict(body))


@dataclass(frozen=True)
class PagePlan:
    page: int
    ocr: bool  # whether the job reads the page by OCR


@dataclass(frozen=True)
class JobEstimate:
    """What a job with the document and options would read by OCR and cost."""

    pages: int
    ocr_pages: int
    credits: int
    credits_per_page: int
    credits_per_ocr_page: int
    plan: list[PagePlan]
    # True when the service's pre-flight ran out of time: the pages it did not look at are
    # counted in `ocr_pages` (a job bills what its result reads by OCR, never more than held).
    upper_bound: bool = False

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> JobEstimate:
        plan = [_build(PagePlan, p) for p in body.get("plan", [])]
        return _build(cls, body, plan=plan, upper_bound=bool(body.get("upper_bound")))


@dataclass(frozen=True)
class JobInspection(Inspection):
    """POST /v2/inspect: what POST /v1/inspect says, and the `estimate` of a job (None when the
    document was not opened, or the selection is longer than a job converts)."""

    estimate: JobEstimate | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> JobInspection:
        pages = [PageSample.from_json(p) for p in body.get("pages", [])]
        found = body.get("estimate")
        estimate = JobEstimate.from_json(found) if found else None
        return _build(cls, body, pages=pages, estimate=estimate, answer=answer, raw=dict(body))


@dataclass(frozen=True)
class TocEntry:
    level: int
    title: str
    page: int | None


@dataclass(frozen=True)
class Toc:
    """POST /v1/toc: the document's outline (bookmarks); empty when it has none."""

    entries: list[TocEntry]
    page_count: int
    metadata: dict[str, Any] | None
    answer: Answer
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> Toc:
        entries = [_build(TocEntry, e) for e in body["entries"]]
        return _build(cls, body, entries=entries, answer=answer, raw=dict(body))


@dataclass(frozen=True)
class Engine:
    id: str
    version: str
    default: bool
    description: str
    ocr: bool
    tables: list[str]
    flavors: list[str]
    ocr_languages: list[str]  # ISO codes OCR reads in version 2 jobs (None from an older server)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Engine:
        return _build(cls, body)


@dataclass(frozen=True)
class Credits:
    balance: int
    held: int
    available: int


@dataclass(frozen=True)
class TestAllowance:
    __test__ = False  # a model, not a test class for pytest

    limit: int
    used: int
    held: int
    resets_at: datetime | None


@dataclass(frozen=True)
class Account:
    """GET /v1/account: the calling key's organization, its credits in the key's environment,
    the test allowance and the limits in force."""

    id: str
    name: str
    status: str
    environment: str
    api_key_id: str
    credits: Credits
    test_allowance: TestAllowance
    limits: dict[str, int]
    debug_policy: str
    created_at: datetime | None
    answer: Answer
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> Account:
        allowance = body["test_allowance"]
        return _build(
            cls,
            body,
            credits=_build(Credits, body["credits"]),
            test_allowance=_build(TestAllowance, allowance, resets_at=_time(allowance.get("resets_at"))),
            created_at=_time(body.get("created_at")),
            answer=answer,
            raw=dict(body),
        )


@dataclass(frozen=True)
class LedgerEntry:
    """One movement of credits. Sum `balance_change` (not `credits`) for what was spent."""

    id: str
    created_at: datetime | None
    kind: str
    credits: int
    balance_change: int
    available_change: int
    pages: int
    balance_after: int
    request_id: str | None
    api_key_id: str | None
    reason: str | None
    # A hold or capture of pages read by OCR: `ocr_pages` and `ocr_page_credits`.
    details: dict[str, int]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> LedgerEntry:
        return _build(cls, body, created_at=_time(body.get("created_at")), details=dict(body.get("details") or {}))


@dataclass(frozen=True)
class UsageRecord:
    id: str
    request_id: str
    api_key_id: str
    endpoint: str
    status: int
    pages: int
    credits: int
    created_at: datetime | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> UsageRecord:
        return _build(cls, body, created_at=_time(body.get("created_at")))


@dataclass(frozen=True)
class UsageDay:
    date: date
    requests: int
    pages: int
    credits: int


@dataclass(frozen=True)
class Usage:
    """GET /v1/usage: daily totals of the reporting copy (which can lag the ledger)."""

    as_of: datetime | None
    days: list[UsageDay]
    answer: Answer

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> Usage:
        days = [_build(UsageDay, d, date=date.fromisoformat(d["date"])) for d in body["data"]]
        return cls(as_of=_time(body.get("as_of")), days=days, answer=answer)


# -- version 2 jobs -------------------------------------------------------------------------------

JOB_ENDED = frozenset({"succeeded", "failed", "canceled"})


@dataclass(frozen=True)
class ConversionOptions:
    """The options a job converts with, as it echoes them (`pages` None: every page)."""

    pages: str | None
    tables: str
    fallback: str
    flavor: str
    ocr: str | None  # "off", "auto", "force" (None from an older server)
    ocr_languages: list[str] | None


@dataclass(frozen=True)
class JobFailure:
    """Why a job failed: the error a conversion would have answered (`code`, `message`, ...)."""

    code: str
    message: str
    param: str | None
    details: dict[str, Any]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> JobFailure:
        return _build(cls, body, details=dict(body.get("details") or {}))


@dataclass(frozen=True)
class Job:
    """A version 2 job: a conversion of up to 5,000 pages in the background. `status` goes
    `queued`, `running`, then `succeeded`, `failed` (see `error`) or `canceled`."""

    id: str
    status: str
    filename: str
    options: ConversionOptions
    pages_total: int
    pages_completed: int
    credits_held: int
    credits_billed: int
    pages_billed: int
    # Pages read by OCR: those held for while the job runs, those billed once it succeeded.
    ocr_pages: int | None
    error: JobFailure | None
    warnings: list[str]
    webhook_metadata: dict[str, Any] | None
    request_id: str
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    expires_at: datetime | None
    answer: Answer
    raw: dict[str, Any] = field(repr=False)

    @property
    def ended(self) -> bool:
        """Whether the job has succeeded, failed or been canceled (it changes no more)."""
        return self.status in JOB_ENDED

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> Job:
        times = {name: _time(body.get(name)) for name in ("created_at", "started_at", "finished_at", "expires_at")}
        error = body.get("error")
        return _build(
            cls,
            body,
            options=_build(ConversionOptions, body.get("options") or {}),
            error=JobFailure.from_json(error) if error else None,
            warnings=list(body.get("warnings") or []),
            **times,
            answer=answer,
            raw=dict(body),
        )


@dataclass(frozen=True)
class JobResult(Conversion):
    """GET /v2/jobs/{id}/result: the conversion result, with the job's id and status. While the
    job is `queued` or `running`, the pages converted so far."""

    job_id: str
    status: str


@dataclass(frozen=True)
class JobMarkdown(MarkdownConversion):
    """GET /v2/jobs/{id}/result as Markdown, with the job's id and status (from the answer's
    `X-Svcx-Job-Status`): while the job runs, the pages converted so far."""

    job_id: str
    status: str | None


@dataclass(frozen=True)
class ListPage(Generic[Row]):
    """One page of a list, newest first; pass the last row's id as `starting_after` for the next."""

    data: list[Row]
    has_more: bool
    answer: Answer

    def __iter__(self) -> Iterator[Row]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class JobList(ListPage[Job]):
    """One page of GET /v2/jobs, newest first."""

    @classmethod
    def from_json(cls, body: Mapping[str, Any], answer: Answer) -> JobList:
        return cls([Job.from_json(row, answer) for row in body["data"]], body["has_more"], answer)
