"""Shared fixtures. Tests run on the real PostgreSQL and Redis named by DATABASE_URL and
REDIS_URL (the Makefile points them at this machine's servers) and start real Celery workers."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import hypothesis
import pikepdf
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from tests import isolation, openapi_bodies, quick
from tests.browser import browser, page  # noqa: F401  (one Chromium per test process, for every UI test)
from tests.conversion.engine.pdfs import Text, make_pdf

ROOT = Path(__file__).resolve().parent.parent
# The specification and the few real-world PDFs the tests use live in the repository: a clone
# with nothing beside it passes `make test`.
SPEC_DIR = ROOT / "spec"
REAL_PDFS = ROOT / "tests" / "data" / "real"
# The whole real-world corpus, an extra that runs only where it is checked out beside the
# repository (CI has it); its tests are skipped with this reason elsewhere.
CORPUS = ROOT.parent / "shared" / "corpus" / "real"
CORPUS_ABSENT = f"the shared corpus ({CORPUS}) is not beside the repository; CI runs it where it is"

# The property tests check correctness, not speed: a busy CI machine must not fail them on time.
hypothesis.settings.register_profile("svcx", deadline=None, print_blob=True)
hypothesis.settings.load_profile("svcx")


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin("django"):
        return  # `-p no:django`: pure tests only (engine, key format)
    engine = str(settings.DATABASES["default"]["ENGINE"])
    if not engine.endswith("postgresql") or not settings.REDIS_URL:
        pytest.exit(
            "The tests run on PostgreSQL and Redis: use `make test`, or set DATABASE_URL and REDIS_URL.",
            returncode=2,
        )
    quick.flush_by_delete()
    quick.password_hashes()


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` with the files that start processes handed out first and the corpus in
    parts (tests/schedule.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.schedule import HeavyFilesFirst

    return HeavyFilesFirst(config, log)


# What a test needs beyond this process, read off the fixtures it uses and the helpers its
# module calls, so that `-m "not worker and not browser and not slow"` (`make test-fast`) runs
# the engine and the unit tests alone, and no test has to remember to mark itself.
_MARKS = {
    "worker": ("celery_worker", "session_worker", "start_worker(", "WorkerProcess"),
    "browser": ("browser", "page", "tests.browser"),
    "slow": ("web_process", "module_web", "start_web(", "start_s3(", "subprocess.", "Popen("),
}
_module_text: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.path)
        if path not in _module_text:
            _module_text[path] = item.path.read_text(encoding="utf-8") if item.path.suffix == ".py" else ""
        text = _module_text[path]
        fixtures = set(getattr(item, "fixturenames", ()))
        for mark, needs in _MARKS.items():
            if any(need in fixtures or (not need.isidentifier() and need in text) for need in needs):
                item.add_marker(getattr(pytest.mark, mark))


@pytest.fixture
def one_window() -> None:
    """The page meters count in one-minute windows: a test's counts must fall in one (a
    window that ends under the test would reset what it counts)."""
    if 60 - time.time() % 60 < 10:
        time.sleep(60 - time.time() % 60 + 0.1)


@pytest.fixture(autouse=True)
def _test_settings(request: pytest.FixtureRequest) -> None:
    if not request.config.pluginmanager.hasplugin("django"):
        return
    settings = request.getfixturevalue("settings")
    settings.SVCX_DOCS_URL = "https://svcx.test/docs"
    # Webhooks go to receivers the tests start on 127.0.0.1 (the SSRF tests turn this off).
    settings.SVCX_WEBHOOKS_ALLOW_PRIVATE = True


@pytest.fixture
def client() -> Client:
    return Client()


_received: list[tuple[str, str, int, Any]] = []


@pytest.fixture(scope="session", autouse=True)
def _record_bodies(request: pytest.FixtureRequest) -> Iterator[None]:
    """Keep every 2xx JSON body a test client receives, for `_bodies_match_openapi`."""
    if not request.config.pluginmanager.hasplugin("django"):
        yield
        return
    from django.test.client import Client as DjangoClient

    original = DjangoClient.request

    def recording(self: DjangoClient, **request_args: Any) -> Any:
        response = original(self, **request_args)
        if 200 <= response.status_code < 300:
            body = openapi_bodies.json_body(response)
            if body is not None:
                method, path = request_args["REQUEST_METHOD"], request_args["PATH_INFO"]
                _received.append((method, path, response.status_code, body))
        return response

    DjangoClient.request = recording  # type: ignore[method-assign]  # the suite's own recording
    yield
    DjangoClient.request = original  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _bodies_match_openapi(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test whose 2xx JSON answers differ from what the OpenAPI description says."""
    _received.clear()
    yield
    if not request.config.pluginmanager.hasplugin("django"):
        return
    if not _received:
        return
    if not openapi_bodies.loaded():
        from drf_spectacular.generators import SchemaGenerator

        # The service's own routes, whatever urlconf the test that got here first ran under.
        openapi_bodies.load(SchemaGenerator(urlconf="svcx.urls").get_schema(request=None, public=True))
    found = [p for method, path, status, body in _received for p in openapi_bodies.problems(method, path, status, body)]
    _received.clear()
    if found:
        pytest.fail("2xx bodies that the OpenAPI description does not describe:\n" + "\n".join(found[:20]))


def next_redis_database(url: str) -> str:
    """The same Redis server, another database: one no worker announces itself in.

    Several checkouts may share one Redis server, each on its own database, so the next number
    may be another suite's: an empty database is preferred, then one without announcements."""
    import redis

    parts = urlsplit(url)
    current = int(parts.path.strip("/") or 0)
    siblings = {int(n) for n in os.environ.get(isolation.RESERVED_ENV, "").split(",") if n}  # parallel processes'
    numbers = [(current + step) % 16 for step in range(1, 16)]
    candidates = [parts._replace(path=f"/{n}").geturl() for n in numbers if n not in siblings]
    for wanted in ("empty", "no workers"):
        for candidate in candidates:
            client = redis.Redis.from_url(candidate)
            try:
                if client.dbsize() == 0 or (
                    wanted == "no workers" and next(client.scan_iter("svcx:workers*", count=1000), None) is None
                ):
                    return candidate
            finally:
                client.close()
    raise RuntimeError("every database of the Redis server has workers announcing themselves")


def database_url_for_children() -> str:
    """DATABASE_URL naming the test database, for worker processes started by a test."""
    db = connection.settings_dict
    user = quote(db.get("USER") or "")
    password = quote(db.get("PASSWORD") or "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgresql://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


class WorkerProcess:
    def __init__(self, process: subprocess.Popen[bytes], hostname: str, log: Path) -> None:
        self.process = process
        self.hostname = hostname
        self.log = log

    def stop(self) -> None:
        """Stop the worker and every process it started (pool children hold DB connections)."""
        if self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def start_worker(
    tmp_path: Path,
    *,
    queues: str = "default,convert,convert_test",
    env: dict[str, str] | None = None,
    beat: bool = False,
    concurrency: int = 1,
) -> WorkerProcess:
    """Start a real `celery worker` on the test database and Redis; wait until it heartbeats."""
    from workers.heartbeat import live_workers

    hostname = f"test-{os.getpid()}-{time.monotonic_ns()}@localhost"
    log = tmp_path / "worker.log"
    child_env = {
        **os.environ,
        "DATABASE_URL": database_url_for_children(),
        "REDIS_URL": settings.REDIS_URL,
        "SVCX_WORKER_HEARTBEAT_INTERVAL": "1s",
        "SVCX_WEBHOOKS_ALLOW_PRIVATE": "true",
        # Workers offer the PDFium engine: whether a request may choose it is the web side's
        # settings, per test. Tests of an engine withdrawn while work waited start theirs without.
        "SVCX_PDFIUM_ENGINE": "true",
        **(env or {}),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "svcx",
            "worker",
            "-Q",
            queues,
            "-n",
            hostname,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--without-mingle",
            "--without-gossip",
            *(["-B", "--schedule", str(tmp_path / "beat-schedule")] if beat else []),
        ],
        cwd=ROOT,
        env=child_env,
        start_new_session=True,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    worker = WorkerProcess(process, hostname, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"worker exited early:\n{log.read_text()[-3000:]}")
        if hostname in live_workers():
            return worker
        time.sleep(0.2)
    worker.stop()
    raise RuntimeError(f"worker did not come up:\n{log.read_text()[-3000:]}")


@pytest.fixture
def celery_worker(transactional_db: None, tmp_path: Path) -> Iterator[WorkerProcess]:
    worker = start_worker(tmp_path)
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def session_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """One real worker for the whole session (tests using it need committed data:
    `django_db(transaction=True)`)."""
    with django_db_blocker.unblock():
        worker = start_worker(tmp_path_factory.mktemp("session-worker"))
    yield worker
    worker.stop()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_web(tmp_path: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A real gunicorn serving the app on the test database; returns (process, base URL)."""
    import urllib.request

    port = free_port()
    child_env = {
        **os.environ,
        "DATABASE_URL": database_url_for_children(),
        "REDIS_URL": settings.REDIS_URL,
        "SVCX_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "WEB_THREADS": "4",
        **(env or {}),
    }
    log = (tmp_path / "web.log").open("wb")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-c", "python:svcx.gunicorn_conf", "svcx.wsgi:application"],
        cwd=ROOT,
        env=child_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/docs/", timeout=1)
            return process, base
        except OSError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError("web server did not come up")


class S3Server:
    """moto's standalone S3 API server in a subprocess, with one bucket."""

    def __init__(self, process: subprocess.Popen[bytes], endpoint: str, bucket: str) -> None:
        import boto3

        self.process = process
        self.endpoint = endpoint
        self.bucket = bucket
        self.client = boto3.client(
            "s3", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
        )

    def env(self) -> dict[str, str]:
        """What a web or worker process needs to use this server as its store."""
        return {
            "SVCX_STORE": "s3",
            "SVCX_S3_BUCKET": self.bucket,
            "SVCX_S3_ENDPOINT_URL": self.endpoint,
            "SVCX_S3_REGION": "us-east-1",
            "SVCX_S3_ACCESS_KEY_ID": "test",
            "SVCX_S3_SECRET_ACCESS_KEY": "test",
        }

    def keys(self, prefix: str = "") -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def read(self, key: str) -> bytes:
        return bytes(self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


def start_s3(tmp_path: Path, bucket: str = "svcx") -> S3Server:
    """Start moto's S3 server on a free port and create the bucket."""
    import urllib.request

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=(tmp_path / "s3.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"S3 server exited early:\n{(tmp_path / 's3.log').read_text()[-3000:]}")
        try:
            urllib.request.urlopen(endpoint + "/", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    else:
        process.terminate()
        raise RuntimeError("S3 server did not come up")
    server = S3Server(process, endpoint, bucket)
    server.client.create_bucket(Bucket=bucket)
    return server


@pytest.fixture
def web_process(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    process, base = start_web(tmp_path)
    yield base
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture(scope="module")
def module_web(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A real gunicorn for every test of a module (tests using it need committed data:
    `django_db(transaction=True)`); its base URL."""
    with django_db_blocker.unblock():
        process, base = start_web(tmp_path_factory.mktemp("module-web"))
    yield base
    process.terminate()
    process.wait(timeout=20)


# PDFs made in the tests ------------------------------------------------------------------


def text_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF with one line of Helvetica text (a heading-sized title and a sentence) per page."""
    return make_pdf(
        path,
        [
            [Text(72, 700, f"Chapter {i}", size=20, font="B"), Text(72, 660, body)]
            for i, body in enumerate(pages, start=1)
        ],
    )


@pytest.fixture
def three_pages(tmp_path: Path) -> Path:
    return text_pdf(
        tmp_path / "three.pdf", ["Alpha text on the first page.", "Beta text on page two.", "Gamma on three."]
    )


@pytest.fixture
def encrypted(tmp_path: Path, three_pages: Path) -> Path:
    target = tmp_path / "locked.pdf"
    with pikepdf.open(three_pages) as pdf:
        pdf.save(target, encryption=pikepdf.Encryption(user="s3cret", owner="owner-pw", R=6))
    return target
