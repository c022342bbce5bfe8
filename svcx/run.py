"""`make run`: migrate, make sure a demo organization with keys exists, then run the web server,
a Celery worker (conversions, webhook deliveries) and the Celery scheduler until interrupted.

Without DATABASE_URL / REDIS_URL it all runs on the embedded default (SQLite and a file-system
broker under var/), so a fresh machine needs no server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _metrics_envs(var_dir: Path) -> dict[str, dict[str, str]]:
    """With SVCX_METRICS_PORT set: web metrics on that port, the worker's on the next one, each
    process group counting in a directory of its own."""
    port = int(os.environ.get("SVCX_METRICS_PORT") or 0)
    if not port:
        return {}
    return {
        name: {
            **os.environ,
            "SVCX_METRICS_PORT": str(port + offset),
            "PROMETHEUS_MULTIPROC_DIR": str(var_dir / "metrics" / name),
        }
        for offset, name in enumerate(("web", "worker"))
    }


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "svcx.settings")
    # A local run may send webhooks to a receiver on this machine (http, loopback addresses).
    os.environ.setdefault("SVCX_WEBHOOKS_ALLOW_PRIVATE", "true")
    os.chdir(ROOT)
    # The same settings the children read: the var directory, and the queues the web side submits to.
    django.setup()
    from django.conf import settings

    from conversion.async_jobs import job_queues
    from conversion.jobs import conversion_queues
    from webhooks.delivery import webhooks_queue

    var_dir = Path(settings.VAR_DIR).resolve()
    var_dir.mkdir(parents=True, exist_ok=True)
    # One worker for everything on one machine: scheduled work, v1 conversions, v2 jobs, webhooks.
    queues = ",".join([settings.CELERY_TASK_DEFAULT_QUEUE, *conversion_queues(), *job_queues(), webhooks_queue()])
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--no-input", "-v", "0"], check=True)
    # The admin's CSS and JavaScript, served by the web server itself (WhiteNoise) from STATIC_ROOT.
    subprocess.run([python, "manage.py", "collectstatic", "--no-input", "-v", "0"], check=True)
    subprocess.run([python, "manage.py", "svcx", "demo"], check=True)

    bind = os.environ.setdefault("SVCX_BIND", "127.0.0.1:8000")
    commands = {
        "web": [_bin("gunicorn"), "-c", "python:svcx.gunicorn_conf", "svcx.wsgi:application"],
        "worker": [
            _bin("celery"),
            "-A",
            "svcx",
            "worker",
            "-Q",
            queues,
            "--concurrency",
            os.environ.get("WORKER_CONCURRENCY", "2"),
            "--loglevel",
            "INFO",
        ],
        "beat": [
            _bin("celery"),
            "-A",
            "svcx",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(var_dir / "celerybeat-schedule"),
        ],
    }
    envs = _metrics_envs(var_dir)
    children = {name: subprocess.Popen(cmd, env=envs.get(name)) for name, cmd in commands.items()}
    print(
        f"svcx: web on http://{bind} (health: http://{bind}/v1/health, console: http://{bind}/console/); "
        "Ctrl-C stops everything.",
        flush=True,
    )

    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    while not stopping:
        for name, child in children.items():
            if child.poll() is not None:
                print(f"svcx: {name} exited with {child.returncode}; stopping the rest.", file=sys.stderr, flush=True)
                exit_code = child.returncode or 1
                stopping = True
        time.sleep(0.5)
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
