"""The one settings module of svcx, driven by environment variables (see .env.example).

With neither DATABASE_URL nor REDIS_URL set, the service runs on an embedded default that
needs no server: SQLite, a file-system Celery broker and a file-based cache under `SVCX_VAR_DIR`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from core.env import (
    env_bool,
    env_choice,
    env_duration,
    env_int,
    env_list,
    env_required,
    env_str,
    parse_database_url,
    trusted_proxies,
)
from core.redis import reconnecting

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("SVCX_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("SECRET_KEY", "dev-insecure-secret-key-change-me")
# Server-side secret mixed into the stored hash of every API key. Changing it invalidates all keys.
SVCX_KEY_PEPPER = env_str("SVCX_KEY_PEPPER", "dev-insecure-key-pepper-change-me")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["*"])

# The public address of the service, used for absolute links (doc_url, top-up, reveal links);
# by default the address the web server binds (SVCX_BIND), a wildcard host read as loopback.
SVCX_BIND = env_str("SVCX_BIND", "127.0.0.1:8000")
_bind_host, _, _bind_port = SVCX_BIND.rpartition(":")
if _bind_host in ("", "0.0.0.0", "::", "[::]"):  # noqa: S104  # a wildcard bind, read, not bound
    _bind_host = "127.0.0.1"
SVCX_PUBLIC_URL = env_str("SVCX_PUBLIC_URL", f"http://{_bind_host}:{_bind_port}").rstrip("/")
SVCX_DOCS_URL = env_str("SVCX_DOCS_URL", f"{SVCX_PUBLIC_URL}/docs").rstrip("/")
# Where customers reach support: an e-mail address or a URL, named in the errors that say to
# contact support, at the foot of the docs and in the console.
SVCX_SUPPORT_CONTACT = env_str("SVCX_SUPPORT_CONTACT", "support@svcx.local")

INSTALLED_APPS = [
    # Before the admin: its templates/admin/base_site.html brands the admin (name, icon, styles).
    "svcx",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_ratelimit",
    "accounts",
    "billing",
    "webhooks",
    "conversion",
    "workers",
    "console",
]

MIDDLEWARE = [
    # Outermost: it sees every answer, the access log's own error envelope included.
    "svcx.middleware.PageSecurityMiddleware",
    "svcx.middleware.RequestIdMiddleware",
    "svcx.middleware.CorsMiddleware",
    "svcx.middleware.ApiCompressionMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's CSS and JavaScript) from STATIC_ROOT, in every topology: gunicorn
    # alone serves them, no separate file server is needed.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "svcx.middleware.ErrorEnvelopeMiddleware",
]

ROOT_URLCONF = "svcx.urls"
APPEND_SLASH = False
WSGI_APPLICATION = "svcx.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "svcx.context_processors.support",
            ],
        },
    },
]

_database_url = env_str("DATABASE_URL", "")
_database: dict[str, Any] = (
    parse_database_url(_database_url)
    if _database_url
    else {"ENGINE": "django.db.backends.sqlite3", "NAME": str(VAR_DIR / "svcx.sqlite3")}
)
_database["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0)
_database["CONN_HEALTH_CHECKS"] = True
if _database["ENGINE"].endswith("sqlite3"):
    # Web threads and workers share one file: wait for the write lock instead of failing.
    _database["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    _database["CONN_MAX_AGE"] = 0
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("SVCX_CACHE_PREFIX", "svcx"),
            # Reconnects by itself after a Redis restart (core.redis.reconnecting).
            "OPTIONS": reconnecting(2.0),
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# Filled by `manage.py collectstatic` (`make run` does it on start, the image at build time).
STATIC_ROOT = Path(env_str("SVCX_STATIC_ROOT", "") or VAR_DIR / "static")

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.negotiation.JsonOnlyNegotiation",
    # No `?format=` override: `Accept` alone chooses between JSON and Markdown (decisions.md 3).
    "URL_FORMAT_OVERRIDE": None,
    # The API key and the caller's scopes, for every core.api.ApiView (health and the OpenAPI
    # document opt out).
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.authentication.CallerPolicy"],
    "DEFAULT_THROTTLE_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "core.handlers.drf_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "svcx.openapi.SvcxAutoSchema",
}

# What every authenticated API request passes, in order (core.api.ApiStep): the meters and their
# RateLimit headers, then storing the answer under its Idempotency-Key.
SVCX_API_STEPS = ["billing.gate.MeterStep", "conversion.idempotency.IdempotencyStep"]

SPECTACULAR_SETTINGS = {
    "TITLE": "svcx API",
    "DESCRIPTION": (
        "Convert PDF documents to Markdown or JSON. Every non-2xx response carries the error "
        "envelope `{error: {type, code, message, param, retryable, retry_after_ms, doc_url, "
        "request_id, details}}`; see the documentation pages under /docs/errors/."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["svcx.openapi.only_public_api"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "svcx.openapi.add_envelope",
        "svcx.openapi.close_request_bodies",
        "svcx.openapi.add_request_id",
        "svcx.openapi.offered_engines_only",
    ],
    "AUTHENTICATION_WHITELIST": [],
    "SERVERS": [{"url": SVCX_PUBLIC_URL}],
    # Version 2's `ocr` (a job's options, its request, the raw query string): one enum.
    "ENUM_NAME_OVERRIDES": {"OcrModeEnum": "conversion.options.OCR_MODES"},
}

# Celery: Redis when REDIS_URL names one, else a broker on the file system that needs no server.
if REDIS_URL:
    CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
    CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", REDIS_URL)
    if CELERY_BROKER_URL.startswith("redis://"):
        # kombu's Redis transport, corrected: it made the worker exit when Redis restarted with a
        # job in flight (svcx.broker). Other schemes (rediss, sentinel) keep kombu's own.
        CELERY_BROKER_TRANSPORT = "svcx.broker:Transport"
    # A Redis restart is a blip: workers and beat reconnect for as long as it takes, a publish
    # is retried for about two seconds before the request answers 503 `service_unavailable`,
    # and dead sockets are noticed within seconds, not at the kernel's TCP timeout.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "socket_timeout": 5,
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        "retry_on_timeout": True,
        "health_check_interval": 10,
    }
    CELERY_REDIS_SOCKET_TIMEOUT = 5
    CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 5
    CELERY_REDIS_RETRY_ON_TIMEOUT = True
    CELERY_REDIS_BACKEND_HEALTH_CHECK_INTERVAL = 10
    CELERY_TASK_PUBLISH_RETRY = True
    CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 4, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
else:
    _broker_dir = VAR_DIR / "broker"
    for _folder in (_broker_dir / "queue", _broker_dir / "processed", _broker_dir / "control", VAR_DIR / "results"):
        _folder.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{VAR_DIR / 'results'}"

CELERY_TASK_DEFAULT_QUEUE = "default"
# A conversion is acknowledged when it finishes, one at a time per worker process, so a lost
# worker loses only its own job (which the web side then reports as 500 internal_error).
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_REJECT_ON_WORKER_LOST = False
# Kilobytes: a worker child that grew past this is replaced after its task.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("SVCX_WORKER_MAX_MEMORY_KB", 1_500_000, minimum=100_000)
# MiB of memory one job may take beyond what its worker process holds when it starts, enforced
# while it runs (RLIMIT_DATA, workers/memory.py): past it 422 document_too_complex, and the
# process is replaced. The largest real document takes under 100 MiB (bench speed: 82 MiB peak,
# interpreter included). 0: no ceiling.
SVCX_CONVERSION_MEMORY_LIMIT_MB = env_int("SVCX_CONVERSION_MEMORY_LIMIT_MB", 512, minimum=0)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None  # forever: a worker outlives a Redis restart
# A running conversion finishes when the broker goes away; its late ack may then be redelivered,
# which the job's claim (queued -> running) turns into a no-op.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "holds-sweep": {"task": "billing.holds_sweep", "schedule": env_duration("SVCX_HOLD_SWEEP_INTERVAL", "10s")},
    "usage-copy": {"task": "billing.usage_copy", "schedule": env_duration("SVCX_USAGE_COPY_INTERVAL", "10s")},
    "conversion-housekeeping": {"task": "conversion.housekeeping", "schedule": 3600},
    "files-purge": {"task": "conversion.files_purge", "schedule": env_duration("SVCX_FILES_PURGE_INTERVAL", "5m")},
    # Job uploads left in the store by a web process and a worker that both died.
    "inputs-sweep": {"task": "conversion.inputs_sweep", "schedule": env_duration("SVCX_SPOOL_SWEEP_INTERVAL", "5m")},
    # Version 2 jobs: lost parts and leads to other workers, jobs past their limit or retention.
    "jobs-sweep": {"task": "conversion.jobs_sweep", "schedule": env_duration("SVCX_JOB_SWEEP_INTERVAL", "10s")},
}

# Seconds a worker's heartbeat stays valid; health counts a worker alive while it is fresh.
SVCX_WORKER_HEARTBEAT_INTERVAL = env_duration("SVCX_WORKER_HEARTBEAT_INTERVAL", "5s")
SVCX_WORKER_HEARTBEAT_TTL = env_duration("SVCX_WORKER_HEARTBEAT_TTL", "15s")
SVCX_HEALTH_TIMEOUT = env_duration("SVCX_HEALTH_TIMEOUT", "2s")

# Conversion (decisions.md 3 and 5).
SVCX_CONVERSION_TIME_LIMIT = int(env_duration("SVCX_CONVERSION_TIME_LIMIT", "120s"))
# How long past the limit the web side waits for a worker's own timeout report.
SVCX_CONVERSION_GRACE = env_duration("SVCX_CONVERSION_GRACE", "30s")
# A job not started by a worker within this long is answered 503 overloaded.
SVCX_QUEUE_WAIT_LIMIT = env_duration("SVCX_QUEUE_WAIT_LIMIT", "30s")
# One organization's share of the worker pool of a queue (conversion/share.py): at most this
# percentage of the live workers' slots (at least one), or more while that leaves
# SVCX_POOL_RESERVE slots free for other organizations. Past it a job waits for a slot.
SVCX_POOL_SHARE_PERCENT = env_int("SVCX_POOL_SHARE_PERCENT", 50, minimum=1)
if SVCX_POOL_SHARE_PERCENT > 100:
    raise ImproperlyConfigured("SVCX_POOL_SHARE_PERCENT must be at most 100")
SVCX_POOL_RESERVE = env_int("SVCX_POOL_RESERVE", 1, minimum=0)
# A running job whose worker has not reported for this long is lost (500, hold released).
SVCX_WORKER_LOST_AFTER = env_duration("SVCX_WORKER_LOST_AFTER", "20s")
# Prefix of the queue names (conversion, webhooks), for deployments that share one Redis.
SVCX_QUEUE_PREFIX = env_str("SVCX_QUEUE_PREFIX", "")
SVCX_QUEUE_MAX_DEPTH = env_int("SVCX_QUEUE_MAX_DEPTH", 200, minimum=1)
SVCX_OVERLOAD_RETRY_AFTER = env_duration("SVCX_OVERLOAD_RETRY_AFTER", "5s")
SVCX_RESULT_BUDGET_BYTES = env_int("SVCX_RESULT_BUDGET_BYTES", 8 * 1024 * 1024, minimum=1024)

# Version 2 jobs (conversion/async_jobs.py): at most SVCX_JOB_MAX_PAGES selected pages, cut into
# parts of SVCX_JOB_PART_PAGES pages that any worker of the jobs queue parses; a part not parsed
# within SVCX_JOB_PART_TIME_LIMIT fails its job, a job not done within SVCX_JOB_TIME_LIMIT of its
# creation fails; a part or lead whose worker has not beaten for SVCX_JOB_LOST_AFTER is given to
# another, or once it has not beaten for SVCX_WORKER_HEARTBEAT_TTL when its worker is gone as a
# whole (no longer announces itself). A task whose part or lead still waits SVCX_JOB_RESEND_AFTER
# after it was sent is sent again when the queue holds fewer tasks than there is work waiting
# (the broker lost them). Pages are written for readers of a running job every
# SVCX_JOB_FLUSH_PAGES pages. A job, its result and its input are deleted SVCX_JOB_RETENTION
# after it ends.
SVCX_JOB_MAX_PAGES = env_int("SVCX_JOB_MAX_PAGES", 5000, minimum=1)
SVCX_JOB_PART_PAGES = env_int("SVCX_JOB_PART_PAGES", 25, minimum=1)
SVCX_JOB_PART_TIME_LIMIT = env_duration("SVCX_JOB_PART_TIME_LIMIT", "10m")
SVCX_JOB_TIME_LIMIT = env_duration("SVCX_JOB_TIME_LIMIT", "1h")
SVCX_JOB_LOST_AFTER = env_duration("SVCX_JOB_LOST_AFTER", "30s")
SVCX_JOB_RESEND_AFTER = env_duration("SVCX_JOB_RESEND_AFTER", "10s")
SVCX_JOB_FLUSH_PAGES = env_int("SVCX_JOB_FLUSH_PAGES", 10, minimum=1)
SVCX_JOB_RETENTION = env_duration("SVCX_JOB_RETENTION", "24h")
# A client reading a job's pages as a stream (application/x-ndjson) is answered this long at most.
SVCX_JOB_STREAM_SECONDS = env_duration("SVCX_JOB_STREAM_SECONDS", "60s")
SVCX_JOB_RESULT_BUDGET_BYTES = env_int("SVCX_JOB_RESULT_BUDGET_BYTES", 512 * 1024 * 1024, minimum=1024)
# The scheduling priority of a worker that consumes only the jobs queues (svcx/celery.py): its
# processes run at least at this niceness (0-19, Linux nice levels: 10 weighs 110 against nice
# 0's 1024 when both want a core), so on a host it shares with the interactive worker or the web
# tier a running job takes the CPU they leave, never the time of a one-page conversion. 0 leaves
# the priority alone; it decides nothing between containers (their CPU shares do) or hosts.
SVCX_JOB_WORKER_NICE = env_int("SVCX_JOB_WORKER_NICE", 10, minimum=0, maximum=19)
SVCX_METADATA_LIMIT_BYTES = env_int("SVCX_METADATA_LIMIT_BYTES", 4096, minimum=0)
SVCX_CONVERT_UPLOAD_LIMIT = env_int("SVCX_CONVERT_UPLOAD_LIMIT", 32 * 1024 * 1024, minimum=1)
SVCX_FILES_UPLOAD_LIMIT = env_int("SVCX_FILES_UPLOAD_LIMIT", 128 * 1024 * 1024, minimum=1)
SVCX_UPLOAD_DEADLINE_SECONDS = env_duration("SVCX_UPLOAD_DEADLINE", "20s")
# The web worker's event loop reads each request whole before a thread serves it: the request
# line and headers must arrive within this of their first byte (408 otherwise), and all the
# bodies one web process holds meanwhile (memory and unlinked temporary files) within this many
# bytes (503 `overloaded` beyond).
SVCX_HEADER_DEADLINE_SECONDS = env_duration("SVCX_HEADER_DEADLINE", "10s")
SVCX_EDGE_BUFFER_BYTES = env_int("SVCX_EDGE_BUFFER_BYTES", 1024**3, minimum=1024 * 1024)
# Request bodies are spooled here, on this host only: what a worker needs goes through the store.
SVCX_SPOOL_DIR = Path(env_str("SVCX_SPOOL_DIR", str(VAR_DIR / "spool")))
SVCX_SPOOL_DIR.mkdir(parents=True, exist_ok=True)
FILE_UPLOAD_TEMP_DIR = str(SVCX_SPOOL_DIR)
# A spooled body or a fetched job input lives only as long as its request or job: each web and
# worker process group sweeps its host's spool every SVCX_SPOOL_SWEEP_INTERVAL of what is older
# than SVCX_SPOOL_MAX_AGE (what a process killed mid-request left); the beat sweeps job uploads
# older than that from the store. No request lasts that long: the age is at least the upload
# deadline, the queue wait, the wall-clock limit and its grace together.
SVCX_SPOOL_SWEEP_INTERVAL = env_duration("SVCX_SPOOL_SWEEP_INTERVAL", "5m")
SVCX_SPOOL_MAX_AGE = env_duration("SVCX_SPOOL_MAX_AGE", "1h")
# (the queue wait twice: for the organization's share of the pool, then in the queue)
_LONGEST_REQUEST = (
    SVCX_UPLOAD_DEADLINE_SECONDS + 2 * SVCX_QUEUE_WAIT_LIMIT + SVCX_CONVERSION_TIME_LIMIT + SVCX_CONVERSION_GRACE
)
if SVCX_SPOOL_MAX_AGE < _LONGEST_REQUEST:
    raise ImproperlyConfigured(
        f"SVCX_SPOOL_MAX_AGE must be at least {_LONGEST_REQUEST:.0f}s (upload deadline, twice the queue wait, "
        "wall-clock limit and grace): a younger file may still belong to a request"
    )
if SVCX_SPOOL_MAX_AGE < SVCX_JOB_TIME_LIMIT:
    raise ImproperlyConfigured(
        f"SVCX_SPOOL_MAX_AGE must be at least SVCX_JOB_TIME_LIMIT ({SVCX_JOB_TIME_LIMIT:.0f}s): a version 2 job's "
        "lead keeps its PDF in the spool while it runs"
    )
FILE_UPLOAD_HANDLERS = ["django.core.files.uploadhandler.TemporaryFileUploadHandler"]
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# The store: the only thing besides PostgreSQL and Redis that web and workers share. "files" holds
# stored files, "jobs" the PDF of each job while it runs (a worker fetches it by key). The embedded
# default is the file system under SVCX_VAR_DIR (one machine); production is S3-compatible object
# storage (SVCX_STORE=s3: AWS S3, MinIO, ...), one bucket with a prefix per alias.
SVCX_FILE_RETENTION = env_duration("SVCX_FILE_RETENTION", "7d")
SVCX_STORE = env_choice("SVCX_STORE", "fs", ("fs", "s3"))
SVCX_FILES_DIR = Path(env_str("SVCX_FILES_DIR", str(VAR_DIR / "files")))
SVCX_JOBS_DIR = Path(env_str("SVCX_JOBS_DIR", str(VAR_DIR / "jobs")))
# Version 2 jobs: their uploads, the parsed layout of their parts, their pages and results.
SVCX_ASYNC_DIR = Path(env_str("SVCX_ASYNC_DIR", str(VAR_DIR / "async")))


def _s3_store(prefix: str) -> dict[str, Any]:
    endpoint = env_str("SVCX_S3_ENDPOINT_URL", "")
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_required("SVCX_S3_BUCKET"),
            "endpoint_url": endpoint or None,
            "region_name": env_str("SVCX_S3_REGION", "us-east-1"),
            # Empty: boto3's own chain (AWS_* variables, instance role, ...).
            "access_key": env_str("SVCX_S3_ACCESS_KEY_ID", "") or None,
            "secret_key": env_str("SVCX_S3_SECRET_ACCESS_KEY", "") or None,
            "location": prefix,
            # Names are chosen by svcx (content hashes, request ids): never renamed on save.
            "file_overwrite": True,
            "default_acl": None,
            "querystring_auth": False,
            # MinIO and other self-hosted stores answer on one host name: path-style addressing.
            "addressing_style": "path" if endpoint else None,
        },
    }


def _fs_store(location: Path) -> dict[str, Any]:
    return {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(location)}}


STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Gzip copies beside the originals; names stay unhashed so that a page rendered before
    # collectstatic (tests, a first start) never fails on a missing manifest entry.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
    "files": _s3_store("files") if SVCX_STORE == "s3" else _fs_store(SVCX_FILES_DIR),
    "jobs": _s3_store("jobs") if SVCX_STORE == "s3" else _fs_store(SVCX_JOBS_DIR),
    "async": _s3_store("async") if SVCX_STORE == "s3" else _fs_store(SVCX_ASYNC_DIR),
}
# The key that seals a job's PDF password while it waits in Redis (only web and workers have it).
SVCX_JOB_SECRET = env_str("SVCX_JOB_SECRET", "") or SECRET_KEY
# Pages of the text-layer sample /v1/inspect returns (each counts against the daily budget).
SVCX_INSPECT_SAMPLE_PAGES = env_int("SVCX_INSPECT_SAMPLE_PAGES", 3, minimum=0)

# Rate limits and quotas (decisions.md 6); organizations can have their own (admin, operator command).
SVCX_LIMIT_REQUESTS_PER_MINUTE = env_int("SVCX_LIMIT_REQUESTS_PER_MINUTE", 600, minimum=0)
SVCX_LIMIT_PAGES_PER_MINUTE = env_int("SVCX_LIMIT_PAGES_PER_MINUTE", 6000, minimum=0)
SVCX_LIMIT_CONCURRENCY = env_int("SVCX_LIMIT_CONCURRENCY", 8, minimum=0)
SVCX_LIMIT_UPLOAD_BYTES_PER_MINUTE = env_int("SVCX_LIMIT_UPLOAD_BYTES_PER_MINUTE", 1024**3, minimum=0)
SVCX_LIMIT_INSPECT_PER_MINUTE = env_int("SVCX_LIMIT_INSPECT_PER_MINUTE", 60, minimum=0)
SVCX_LIMIT_INSPECT_SAMPLE_PAGES_PER_DAY = env_int("SVCX_LIMIT_INSPECT_SAMPLE_PAGES_PER_DAY", 1000, minimum=0)
SVCX_LIMIT_TOC_PER_MINUTE = env_int("SVCX_LIMIT_TOC_PER_MINUTE", 60, minimum=0)
SVCX_LIMIT_NO_VALUE_CONVERSIONS_PER_HOUR = env_int("SVCX_LIMIT_NO_VALUE_CONVERSIONS_PER_HOUR", 100, minimum=0)
SVCX_LIMIT_UNBILLED_WORK_SECONDS_PER_HOUR = env_int("SVCX_LIMIT_UNBILLED_WORK_SECONDS_PER_HOUR", 600, minimum=0)
SVCX_LIMIT_NEW_ACCOUNT_PAGES_PER_DAY = env_int("SVCX_LIMIT_NEW_ACCOUNT_PAGES_PER_DAY", 2000, minimum=0)
SVCX_STORAGE_QUOTA_BYTES = env_int("SVCX_STORAGE_QUOTA_BYTES", 1024**3, minimum=0)

# Client address: the socket peer, unless a trusted proxy in front sets this header (for example
# X-Forwarded-For); then the address that many hops from the right of the header is used.
# The header is believed only on a connection from one of SVCX_TRUSTED_PROXIES (addresses or
# networks; gunicorn reads the same list for X-Forwarded-Proto, see svcx/gunicorn_conf.py).
SVCX_TRUSTED_PROXY_HEADER = env_str("SVCX_TRUSTED_PROXY_HEADER", "")
SVCX_TRUSTED_PROXY_COUNT = env_int("SVCX_TRUSTED_PROXY_COUNT", 1, minimum=1)
SVCX_TRUSTED_PROXIES = trusted_proxies()

# TLS. The service answers over TLS itself (gunicorn with a certificate) or behind a proxy that
# terminates it; such a proxy must set this header (nginx: X-Forwarded-Proto $scheme), overwriting
# what a client sent, for the service to know a request came over https. Empty: no proxy says so.
SVCX_TRUSTED_PROTO_HEADER = env_str("SVCX_TRUSTED_PROTO_HEADER", "")
if SVCX_TRUSTED_PROTO_HEADER:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + SVCX_TRUSTED_PROTO_HEADER.upper().replace("-", "_"), "https")
# Strict-Transport-Security on every answer that came over https (Django's SecurityMiddleware);
# never over plain http, where browsers ignore it. 0 turns it off.
SECURE_HSTS_SECONDS = int(env_duration("SVCX_HSTS_MAX_AGE", "365d"))
# Pages may not be framed (svcx.middleware.PageSecurityMiddleware, with the CSP's frame-ancestors).
X_FRAME_OPTIONS = "DENY"

# Pages outside the API that take a secret without an API key (the admin login, the single-use
# key reveal) are limited per client address; API traffic has its own per-organization meters.
SVCX_LOGIN_ATTEMPTS_PER_MINUTE = env_int("SVCX_LOGIN_ATTEMPTS_PER_MINUTE", 10, minimum=1)
SVCX_REVEAL_ATTEMPTS_PER_MINUTE = env_int("SVCX_REVEAL_ATTEMPTS_PER_MINUTE", 20, minimum=1)
# Failed console sign-ins per e-mail address (case and spaces ignored) in fixed windows: past the
# limit the address is refused without a password check until its window ends, from any address.
SVCX_LOGIN_FAILURES_PER_EMAIL = env_int("SVCX_LOGIN_FAILURES_PER_EMAIL", 10, minimum=1)
SVCX_LOGIN_FAILURES_WINDOW = int(env_duration("SVCX_LOGIN_FAILURES_WINDOW", "15m"))
if SVCX_LOGIN_FAILURES_WINDOW < 1:
    raise ImproperlyConfigured("SVCX_LOGIN_FAILURES_WINDOW must be at least 1s")
RATELIMIT_EXCEPTION_CLASS = "accounts.guards.TooManyAttempts"
# Django's own RedisCache increments atomically (INCRBY), which is what django-ratelimit needs; it
# only lists django-redis by name. The embedded default's file cache does not increment atomically,
# so there the per-address limits are approximate (one machine, development use).
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"] + ([] if REDIS_URL else ["django_ratelimit.E003"])

# A credit hold's lease: renewed while its request runs; the sweeper releases lapsed ones, so
# lease + sweep interval stays under the 60 seconds the specification allows.
SVCX_HOLD_LEASE_SECONDS = env_int("SVCX_HOLD_LEASE_SECONDS", 30, minimum=5)
# Credits a page read by OCR costs (a version 2 job's `ocr`), instead of a text page's one: the
# recognition takes about 1.2 CPU seconds a page at 300 dpi (bench/results/ocr.md), several times
# a text page's parse.
SVCX_OCR_PAGE_CREDITS = env_int("SVCX_OCR_PAGE_CREDITS", 3, minimum=1, maximum=100)
# Whether the PDFium engine (svcx-layout-pdfium, issue 29) is offered: listed by GET /v1/engines
# and chosen by the option `engine`. Off by default: it lacks the pdfminer engine's budgets on
# decoding hostile streams (PDFium decodes content, forms and CMaps itself), so a stranger could
# choose it to get around them. Jobs made while it was on still run on it.
SVCX_PDFIUM_ENGINE = env_bool("SVCX_PDFIUM_ENGINE", False)
# Figures' pictures one conversion stores at most (option `figures: "crop"`); the others keep
# their comment and the result says so.
SVCX_FIGURES_MAX = env_int("SVCX_FIGURES_MAX", 500, minimum=0)
# A running job beats every heartbeat interval (heartbeat row, hold lease): a beat must come well
# within the time after which the web side calls the worker lost and the lease lapses.
if min(SVCX_WORKER_LOST_AFTER, SVCX_HOLD_LEASE_SECONDS) < SVCX_WORKER_HEARTBEAT_INTERVAL * 2:
    raise ImproperlyConfigured(
        "SVCX_WORKER_HEARTBEAT_INTERVAL must be at most half of SVCX_WORKER_LOST_AFTER and of SVCX_HOLD_LEASE_SECONDS"
    )

# The customer console (/console/): database sessions whose key is a console session token
# (svcx_cs_..., refused on the API). Cookies are Secure unless the service's public address is a
# plain-http loopback one (local development); SVCX_SECURE_COOKIES=true|false overrides "auto".
SESSION_ENGINE = "console.sessions"
_secure_cookies = env_choice("SVCX_SECURE_COOKIES", "auto", ("auto", "true", "false"))
_local_http = SVCX_PUBLIC_URL.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]"))
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not _local_http if _secure_cookies == "auto" else _secure_cookies == "true"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = int(env_duration("SVCX_SESSION_AGE", "14d"))
LOGIN_URL = "/console/sign-in/"
# Paths for people, not programs: their errors are HTML pages, not the API's JSON envelope.
SVCX_PERSON_PATH_PREFIXES = ("/console/",)
SVCX_PERSON_ERROR_TEMPLATE = "console/error.html"
# How long an invitation link to an organization works (it works once).
SVCX_INVITATION_LIFETIME = env_duration("SVCX_INVITATION_LIFETIME", "7d")

# Webhooks (webhooks/): events sent to the organizations' endpoints, signed, at least once.
# Production sends only to https URLs whose host resolves to public addresses; true allows http
# and loopback, private and link-local addresses, for a receiver on this machine (`make run` and
# the tests set it).
SVCX_WEBHOOKS_ALLOW_PRIVATE = env_bool("SVCX_WEBHOOKS_ALLOW_PRIVATE", False)
# The key that seals the endpoints' signing secrets in the database. Empty: derived from SECRET_KEY.
# Changing it leaves every stored secret unreadable (deliveries fail until each is rotated).
SVCX_WEBHOOKS_SECRET_KEY = env_str("SVCX_WEBHOOKS_SECRET_KEY", "") or SECRET_KEY
# One attempt: connecting, then the whole answer; past them the attempt failed ("timed out").
SVCX_WEBHOOKS_CONNECT_TIMEOUT = env_duration("SVCX_WEBHOOKS_CONNECT_TIMEOUT", "5s")
SVCX_WEBHOOKS_READ_TIMEOUT = env_duration("SVCX_WEBHOOKS_READ_TIMEOUT", "10s")
# Retries: each wait is SVCX_WEBHOOKS_RETRY_AGE_PERCENT of the event's age (of which a random half
# to all: jitter), at least SVCX_WEBHOOKS_RETRY_FIRST and at most SVCX_WEBHOOKS_RETRY_MAX, until
# SVCX_WEBHOOKS_RETRY_WINDOW after the event; then the delivery has failed and the endpoint is
# disabled (its owners mailed). The waits grow exponentially, and a receiver back after an outage
# gets its events within that share of the outage (webhooks.delivery).
SVCX_WEBHOOKS_RETRY_FIRST = env_duration("SVCX_WEBHOOKS_RETRY_FIRST", "30s")
SVCX_WEBHOOKS_RETRY_MAX = env_duration("SVCX_WEBHOOKS_RETRY_MAX", "2h")
SVCX_WEBHOOKS_RETRY_AGE_PERCENT = env_int("SVCX_WEBHOOKS_RETRY_AGE_PERCENT", 25, minimum=1)
SVCX_WEBHOOKS_RETRY_WINDOW = env_duration("SVCX_WEBHOOKS_RETRY_WINDOW", "24h")
# An endpoint is also disabled when this many events in a row failed their first attempt with no
# 2xx between (a receiver gone for good, at a volume that would retry thousands of events a day),
# and the first of them failed at least SVCX_WEBHOOKS_DISABLE_FAILING_FOR ago: a busy endpoint's
# outage of minutes (thousands of events) is retried, not disabled.
SVCX_WEBHOOKS_DISABLE_AFTER = env_int("SVCX_WEBHOOKS_DISABLE_AFTER", 1000, minimum=1)
SVCX_WEBHOOKS_DISABLE_FAILING_FOR = env_duration("SVCX_WEBHOOKS_DISABLE_FAILING_FOR", "1h")
# Events (with their delivery logs) are kept this long.
SVCX_WEBHOOKS_RETENTION = env_duration("SVCX_WEBHOOKS_RETENTION", "30d")
if not 0 < SVCX_WEBHOOKS_RETRY_FIRST <= SVCX_WEBHOOKS_RETRY_MAX:
    raise ImproperlyConfigured("SVCX_WEBHOOKS_RETRY_FIRST must be above 0 and at most SVCX_WEBHOOKS_RETRY_MAX")
if SVCX_WEBHOOKS_RETRY_AGE_PERCENT > 100:
    raise ImproperlyConfigured("SVCX_WEBHOOKS_RETRY_AGE_PERCENT must be from 1 to 100")
if SVCX_WEBHOOKS_RETENTION <= SVCX_WEBHOOKS_RETRY_WINDOW:
    raise ImproperlyConfigured("SVCX_WEBHOOKS_RETENTION must be longer than SVCX_WEBHOOKS_RETRY_WINDOW")
if min(SVCX_WEBHOOKS_CONNECT_TIMEOUT, SVCX_WEBHOOKS_READ_TIMEOUT) <= 0:
    raise ImproperlyConfigured("SVCX_WEBHOOKS_CONNECT_TIMEOUT and SVCX_WEBHOOKS_READ_TIMEOUT must be above 0")
# The scheduler queues the deliveries whose attempt is due (first attempts lost on the way,
# retries, a worker that died mid-attempt) and purges old events, on the webhooks' own queue,
# whose workers make the attempts (webhooks.delivery.webhooks_queue).
_webhooks_queue = {"queue": SVCX_QUEUE_PREFIX + "webhooks"}
CELERY_BEAT_SCHEDULE["webhooks-sweep"] = {
    "task": "webhooks.sweep",
    "schedule": env_duration("SVCX_WEBHOOKS_SWEEP_INTERVAL", "5s"),
    "options": _webhooks_queue,
}
CELERY_BEAT_SCHEDULE["webhooks-purge"] = {"task": "webhooks.purge", "schedule": 3600, "options": _webhooks_queue}

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "svcx <no-reply@svcx.local>")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "svcx.logging.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # The request middleware writes the one access line; Django's own would repeat the path.
        "django.request": {"level": "CRITICAL", "propagate": True},
        "django.server": {"level": "CRITICAL", "propagate": True},
        "pikepdf": {"level": "WARNING", "propagate": True},
        "pdfminer": {"level": "WARNING", "propagate": True},
    },
}
