"""The official Python SDK of svcx: PDF in, Markdown or JSON out.

from svcx_client import Client

with Client() as svcx:  # reads SVCX_API_KEY and SVCX_BASE_URL
    print(svcx.convert("report.pdf", format="md").markdown)
    job = svcx.wait_job(svcx.create_job("book.pdf").id)  # a long document, in the background
    print(svcx.job_markdown(job.id).markdown)

Webhook deliveries are checked with `svcx_client.webhooks.verify(body, signature_header, secret)`.
"""

from svcx_client import webhooks
from svcx_client.client import Client, DocumentOptions, JobInspectOptions, JobOptions, Source, __version__
from svcx_client.errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    ConfigurationError,
    DocumentError,
    InternalServerError,
    InvalidRequestError,
    JobCanceledError,
    JobFailedError,
    JobWaitTimeout,
    NotFoundError,
    OverloadedError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    ServiceTimeoutError,
    SvcxError,
    WebhookSignatureError,
)
from svcx_client.models import (
    Account,
    Answer,
    Conversion,
    ConversionOptions,
    ConversionPage,
    Engine,
    FileDeleted,
    Inspection,
    Job,
    JobEstimate,
    JobFailure,
    JobInspection,
    JobList,
    JobMarkdown,
    JobResult,
    LedgerEntry,
    ListPage,
    MarkdownConversion,
    PagePlan,
    RateLimit,
    StoredFile,
    Toc,
    Usage,
    UsageRecord,
)
from svcx_client.retry import RetryPolicy

__all__ = [
    "APIConnectionError",
    "APIError",
    "Account",
    "Answer",
    "AuthenticationError",
    "Client",
    "ConfigurationError",
    "Conversion",
    "ConversionOptions",
    "ConversionPage",
    "DocumentError",
    "DocumentOptions",
    "Engine",
    "FileDeleted",
    "Inspection",
    "InternalServerError",
    "InvalidRequestError",
    "Job",
    "JobCanceledError",
    "JobEstimate",
    "JobFailedError",
    "JobFailure",
    "JobInspectOptions",
    "JobInspection",
    "JobList",
    "JobMarkdown",
    "JobOptions",
    "JobResult",
    "JobWaitTimeout",
    "LedgerEntry",
    "ListPage",
    "MarkdownConversion",
    "NotFoundError",
    "OverloadedError",
    "PagePlan",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimit",
    "RateLimitError",
    "RetryPolicy",
    "ServiceTimeoutError",
    "Source",
    "StoredFile",
    "SvcxError",
    "Toc",
    "Usage",
    "UsageRecord",
    "WebhookSignatureError",
    "__version__",
    "webhooks",
]
