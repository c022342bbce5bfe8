"""Gunicorn settings for the web tier (`gunicorn -c python:svcx.gunicorn_conf svcx.wsgi`).

Threads, not processes: a conversion request mostly waits for a Celery worker, so each web
process holds many waiting requests, one thread each, instead of one OS process per request.
"""

from core.env import env_int, env_str, trusted_proxies

bind = env_str("SVCX_BIND", "127.0.0.1:8000")
worker_class = "svcx.gunicorn_worker.JsonErrorThreadWorker"
workers = env_int("WEB_CONCURRENCY", 2, minimum=1)
threads = env_int("WEB_THREADS", 32, minimum=1)
# Connections per process: a slow or idle client costs one of these and no thread (the worker's
# event loop reads whole requests before a thread serves them; see svcx.gunicorn_worker).
worker_connections = env_int("WEB_MAX_CONNECTIONS", 1000, minimum=1)
# Longer than the conversion wall-clock limit (120 s by default), so a waiting request is never
# killed by the web tier before the worker reports a timeout.
timeout = env_int("WEB_TIMEOUT", 180, minimum=1)
graceful_timeout = 30
keepalive = 5
# X-Forwarded-Proto is believed from these peers only (the proxy in front, deploy/nginx.conf); the
# application reads the client address under the same rule (accounts.authentication.client_ip).
forwarded_allow_ips = ",".join(trusted_proxies())
# The access line is written by the request middleware as JSON, without query strings.
accesslog = None
errorlog = "-"
loglevel = env_str("LOG_LEVEL", "info").lower()


def post_worker_init(worker: object) -> None:
    """Keep the loaded application out of the garbage collector's reach (see svcx.celery), and
    sweep this host's spool of what killed requests left."""
    import gc

    gc.freeze()
    from conversion.spool import spool_sweeper_start

    spool_sweeper_start()


def on_starting(server: object) -> None:
    """Metrics: check the configuration and start the web tier's count afresh."""
    from core.metrics import exporter_prepare

    exporter_prepare()


def when_ready(server: object) -> None:
    """Metrics, when SVCX_METRICS_PORT is set: served by this (the master) process, summing the
    answers its workers counted, with the fleet's queue state read at scrape time."""
    import os

    from core.metrics import exporter_start, metrics_port

    if not metrics_port():
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "svcx.settings")
    import django

    django.setup()
    from conversion.metrics import FleetCollector, SpoolCollector

    exporter_start(FleetCollector(), SpoolCollector())


def child_exit(server: object, worker: object) -> None:
    from core.metrics import process_dead

    process_dead(worker.pid)  # type: ignore[attr-defined]  # a gunicorn Worker
