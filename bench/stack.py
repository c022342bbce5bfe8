"""The svcx service stack a benchmark runs against: a scratch PostgreSQL database and Redis DB,
gunicorn and a Celery worker, all on loopback, all started and stopped here.

    stack = Stack(workdir=..., database_url=..., redis_url=..., db_prefix="svcx_load", ...)
    try:
        stack.setup(org_name="Load", credits=100_000, limits={"requests": 600})
        stack.start_web()
        stack.start_worker(2)
        stack.wait_healthy()
        ...  # requests to 127.0.0.1:stack.port with stack.key
    finally:
        stack.close(keep=False)

Stdlib only: the orchestration runs in whichever interpreter started the benchmark; the children
(manage.py, gunicorn, celery) run with the service venv (`SVCX_PYTHON`).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple
from urllib.parse import urlparse

from bench.paths import MAIN_PYTHON, REPO_DIR

BIN = MAIN_PYTHON.parent
# What `Stack.setup(limits=None)` sets every limit to: high enough that no limit ever answers.
LIFTED_LIMIT = 1_000_000_000


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process_group(proc: subprocess.Popen[Any] | None, grace: float) -> None:
    """Stop a child started in its own session: SIGTERM to its process group, then SIGKILL after
    `grace` seconds. Does nothing for None or a child that has exited."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


class RedisConnection:
    """A few Redis commands over RESP on one socket, for the DB named in the URL's path.

    Raises OSError when the connection fails and RuntimeError on an error reply."""

    def __init__(self, url: str) -> None:
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 6379), timeout=5)
        self.file = self.sock.makefile("rb")
        self.call("SELECT", (u.path or "/0").lstrip("/") or "0")

    def call(self, *args: str) -> Any:
        payload = f"*{len(args)}\r\n".encode() + b"".join(
            f"${len(a.encode())}\r\n".encode() + a.encode() + b"\r\n" for a in args
        )
        self.sock.sendall(payload)
        return self._read()

    def _read(self) -> Any:
        line = self.file.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(f"redis: {rest.decode()}")
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2]
        if kind == b"*":
            return [self._read() for _ in range(int(rest))]
        raise RuntimeError(f"redis: unexpected reply {line!r}")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
            self.sock.close()


def redis_flush(url: str) -> None:
    """FLUSHDB on the Redis DB named in the URL."""
    r = RedisConnection(url)
    try:
        r.call("FLUSHDB")
    finally:
        r.close()


class Database(NamedTuple):
    host: str
    port: str
    user: str
    name: str

    @classmethod
    def from_url(cls, url: str) -> Database:
        u = urlparse(url)
        return cls(u.hostname or "127.0.0.1", str(u.port or 5432), u.username or "postgres", u.path.lstrip("/"))


@dataclass
class Stack:
    """PostgreSQL database, Redis DB, gunicorn and a Celery worker for one benchmark run.

    The database is dropped and recreated and the Redis DB flushed, so the database's name must
    start with one of `db_prefixes` (SystemExit on construction otherwise). `label` names the
    Celery worker node; `log_level` is the service's LOG_LEVEL. Logs land in `workdir`."""

    workdir: Path
    database_url: str
    redis_url: str
    db_prefixes: tuple[str, ...]
    label: str
    web_concurrency: int
    web_threads: int
    log_level: str = "WARNING"
    port: int = field(default_factory=free_port)
    db: Database = field(init=False)
    web: subprocess.Popen[Any] | None = None
    worker: subprocess.Popen[Any] | None = None
    worker_concurrency: int = 0
    # The version 2 jobs pool (queues jobs, jobs_test) and beat, when a benchmark starts them.
    jobs_worker: subprocess.Popen[Any] | None = None
    jobs_concurrency: int = 0
    webhooks_worker: subprocess.Popen[Any] | None = None
    beat: subprocess.Popen[Any] | None = None
    org: str = ""
    key: str = ""
    logs: list[IO[bytes]] = field(default_factory=list)
    # Settings of the children beyond the ones env() sets (SVCX_QUEUE_WAIT_LIMIT, ...).
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.db = Database.from_url(self.database_url)
        if not self.db.name.startswith(self.db_prefixes):
            raise SystemExit(
                f"refusing to drop database {self.db.name!r}: its name must start with {self.db_prefixes[0]}"
            )

    def env(self) -> dict[str, str]:
        """The environment of every child: the scratch backends, this port, nothing inherited
        from an svcx, gunicorn or Celery configuration of the caller."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SVCX_", "WEB_", "CELERY_"))}
        env.update(
            {
                "DATABASE_URL": self.database_url,
                "REDIS_URL": self.redis_url,
                "SVCX_VAR_DIR": str(self.workdir / "var"),
                "SVCX_BIND": f"127.0.0.1:{self.port}",
                "SVCX_PUBLIC_URL": f"http://127.0.0.1:{self.port}",
                "WEB_CONCURRENCY": str(self.web_concurrency),
                "WEB_THREADS": str(self.web_threads),
                "LOG_LEVEL": self.log_level,
                "DEBUG": "false",
                "PYTHONUNBUFFERED": "1",
                **self.extra_env,
            }
        )
        return env

    # ----------------------------------------------------------------------------------------
    # Backends

    def _pg(self, tool: str, *args: str) -> str:
        d = self.db
        return subprocess.run(
            [tool, "-h", d.host, "-p", d.port, "-U", d.user, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout

    def psql(self, sql: str) -> list[list[str]]:
        """The rows of one SQL statement on the scratch database, each a list of text fields.
        Raises subprocess.CalledProcessError when psql fails."""
        out = self._pg("psql", "-d", self.db.name, "-AtF", "\t", "-c", sql)
        return [line.split("\t") for line in out.splitlines() if line]

    def reset_backends(self) -> None:
        """Drop and recreate the database, flush the Redis DB."""
        self._pg("dropdb", "--if-exists", "--force", self.db.name)
        self._pg("createdb", self.db.name)
        redis_flush(self.redis_url)

    def drop_backends(self) -> None:
        """Flush the Redis DB and drop the database, ignoring failures (used on the way out)."""
        with contextlib.suppress(Exception):
            redis_flush(self.redis_url)
        with contextlib.suppress(Exception):
            self._pg("dropdb", "--if-exists", "--force", self.db.name)

    def manage(self, *args: str) -> dict[str, Any]:
        """Run `manage.py ARGS`; the JSON object on the last line of its output, or {}.
        Raises RuntimeError when it fails."""
        proc = subprocess.run(
            [str(MAIN_PYTHON), "manage.py", *args],
            cwd=REPO_DIR,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=180,
        )
        if proc.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {proc.stderr.strip()[-800:]}")
        lines = proc.stdout.strip().splitlines()
        return dict(json.loads(lines[-1])) if lines and lines[-1].startswith("{") else {}

    def setup(self, *, org_name: str, credits: int, limits: Mapping[str, int] | None) -> list[str]:
        """Fresh backends, migrated, with one organization (`org`) holding `credits` and one live
        key (`key`). `limits` sets the organization's limits by name; None lifts every limit to
        LIFTED_LIMIT. Returns the names of the limits set."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.reset_backends()
        self.manage("migrate", "--no-input", "-v", "0")
        chosen = (
            f"[(name, {LIFTED_LIMIT}) for name in sorted(LIMIT_NAMES)]"
            if limits is None
            else repr(sorted(limits.items()))
        )
        # One process for the operator commands (each manage.py start costs a second or two).
        script = (
            "import io, json\n"
            "from django.core.management import call_command\n"
            "from billing.limits import LIMIT_NAMES\n"
            "def svcx(*a):\n"
            "    out = io.StringIO(); call_command('svcx', *a, stdout=out); return json.loads(out.getvalue())\n"
            f"org = svcx('org', 'create', '--name', {org_name!r}, '--credits', '{credits}')['id']\n"
            f"limits = {chosen}\n"
            "for name, value in limits:\n"
            "    svcx('org', 'set-limit', org, name, str(value))\n"
            "key = svcx('key', 'create', '--org', org)['key']\n"
            "print(json.dumps({'org': org, 'key': key, 'limits': [name for name, _ in limits]}))\n"
        )
        made = self.manage("shell", "-c", script)
        self.org, self.key = str(made["org"]), str(made["key"])
        return [str(name) for name in made["limits"]]

    def set_limit(self, meter: str, value: int) -> None:
        self.manage("svcx", "org", "set-limit", self.org, meter, str(value))

    # ----------------------------------------------------------------------------------------
    # Processes

    def _spawn(self, name: str, cmd: list[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[Any]:
        """`cmd` in its own session with `env()` (and `env` over it), logging to `name`.log."""
        log = (self.workdir / f"{name}.log").open("ab")
        self.logs.append(log)
        return subprocess.Popen(
            cmd,
            cwd=REPO_DIR,
            env={**self.env(), **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start_web(self) -> None:
        """gunicorn with the deployed configuration, in its own session (log: web.log)."""
        self.web = self._spawn(
            "web", [str(BIN / "gunicorn"), "-c", "python:svcx.gunicorn_conf", "svcx.wsgi:application"]
        )

    def start_worker(self, concurrency: int) -> None:
        """One Celery prefork worker with `concurrency` processes on every queue, in its own
        session (log: worker<concurrency>.log)."""
        self.worker_concurrency = concurrency
        self.worker = self._spawn(
            f"worker{concurrency}",
            [
                str(BIN / "celery"),
                "-A",
                "svcx",
                "worker",
                "-Q",
                "default,convert,convert_test",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "WARNING",
                "-n",
                f"{self.label}{concurrency}-{os.getpid()}@%h",
            ],
        )

    def stop_worker(self) -> None:
        # SIGTERM: Celery's warm shutdown (finishes the running task, clears its heartbeat).
        stop_process_group(self.worker, 20)
        self.worker = None

    def start_jobs_worker(self, concurrency: int) -> None:
        """One Celery prefork worker with `concurrency` processes on the version 2 jobs queues
        (`jobs,jobs_test`, as docker-compose's worker-jobs), in its own session (log:
        jobs<concurrency>.log)."""
        self.jobs_concurrency = concurrency
        self.jobs_worker = self._spawn(
            f"jobs{concurrency}", self.jobs_worker_command(concurrency, f"jobs{concurrency}")
        )

    def jobs_worker_command(self, concurrency: int, node: str) -> list[str]:
        """`celery worker` on the version 2 jobs queues with `concurrency` processes; `node`
        names it (made unique per start)."""
        return [
            str(BIN / "celery"),
            "-A",
            "svcx",
            "worker",
            "-Q",
            "jobs,jobs_test",
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "WARNING",
            "-n",
            f"{self.label}-{node}-{os.getpid()}-{time.monotonic_ns()}@%h",
        ]

    def jobs_sessions(self) -> list[int]:
        """Session ids of the jobs pool's processes (each worker leads its own session)."""
        return [self.jobs_worker.pid] if self.jobs_worker is not None else []

    def stop_jobs_worker(self) -> None:
        # A warm shutdown waits for the running task: a job's lead can run for minutes.
        stop_process_group(self.jobs_worker, 5)
        self.jobs_worker = None

    def start_webhooks_worker(self, concurrency: int) -> None:
        """One Celery prefork worker with `concurrency` processes on the webhooks queue (as
        docker-compose's worker-webhooks), in its own session (log: webhooks.log)."""
        self.webhooks_worker = self._spawn(
            "webhooks",
            [
                str(BIN / "celery"),
                "-A",
                "svcx",
                "worker",
                "-Q",
                "webhooks",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "WARNING",
                "-n",
                f"{self.label}-webhooks-{os.getpid()}@%h",
            ],
        )

    def stop_webhooks_worker(self) -> None:
        stop_process_group(self.webhooks_worker, 5)
        self.webhooks_worker = None

    def start_beat(self) -> None:
        """Celery beat (the sweepers, among them version 2 jobs'), in its own session (log: beat.log)."""
        self.beat = self._spawn(
            "beat",
            [
                str(BIN / "celery"),
                "-A",
                "svcx",
                "beat",
                "--loglevel",
                "WARNING",
                "-s",
                str(self.workdir / "beat-schedule"),
            ],
        )

    def stop_beat(self) -> None:
        stop_process_group(self.beat, 10)
        self.beat = None

    def stop_web(self) -> None:
        # SIGTERM: gunicorn's graceful shutdown (fast once no request is running).
        stop_process_group(self.web, 15)
        self.web = None

    def wait_healthy(self, timeout: float = 90.0) -> float:
        """Seconds until `GET /v1/health` answers 200. Raises RuntimeError when the web or the
        worker process exits meanwhile, or after `timeout` seconds."""
        t0 = time.monotonic()
        last = ""
        while time.monotonic() < t0 + timeout:
            for name, proc in (("web", self.web), ("worker", self.worker), ("jobs", self.jobs_worker)):
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}; see {self.workdir}/{name}*.log")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/v1/health")
                resp = conn.getresponse()
                body = resp.read()
                conn.close()
                if resp.status == 200:
                    return time.monotonic() - t0
                last = f"{resp.status} {body[:200]!r}"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.25)
        raise RuntimeError(f"service not healthy after {timeout:.0f} s: {last}")

    def close(self, *, keep: bool) -> None:
        """Stop beat, the workers, then the web (each only if still running), close the logs and, unless
        `keep`, flush the Redis DB and drop the database."""
        self.stop_beat()
        self.stop_webhooks_worker()
        self.stop_jobs_worker()
        self.stop_worker()
        self.stop_web()
        for log in self.logs:
            with contextlib.suppress(OSError):
                log.close()
        if not keep:
            self.drop_backends()
