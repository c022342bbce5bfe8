"""Run the suite in parallel processes (pytest-xdist) without them seeing each other.

Loaded with ``-p tests.isolation`` (pyproject's addopts) before pytest-django reads the settings,
so each process's settings already name its own resources: pytest-django gives every xdist
process a test database of its own (``test_svcx_gw0``, ...); this gives each its own Redis
database (the broker, cache, meters and worker announcements: the workers a process starts
serve only its tests) and its own ``SVCX_VAR_DIR`` (spool and file store). Without xdist, or in
the first process, nothing changes.

Redis databases are counted down from the one ``REDIS_URL`` names: process ``gwN`` takes
database ``base - N``. ``RESERVED_ENV`` lists them all, so a test that looks for an unused
database (``tests.conftest.next_redis_database``) never takes a sibling's.

Every process, and the servers and workers its tests start, commits to PostgreSQL without
waiting for the disk (``PGOPTIONS``: ``_quick_commits``).

Loaded before the plugins that installed packages announce, this also keeps pytest from
rewriting the asserts of those packages' own modules (``_plain_plugin_packages``).
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

RESERVED_ENV = "SVCX_TEST_REDIS_DATABASES"
REDIS_DATABASES = 16


def _isolate() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    url = os.environ.get("REDIS_URL")
    if not worker.startswith("gw") or not url:
        return
    index = int(worker.removeprefix("gw"))
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    if count > REDIS_DATABASES:
        raise RuntimeError(f"{count} test processes, but Redis has {REDIS_DATABASES} databases")
    databases = [(base - i) % REDIS_DATABASES for i in range(count)]
    os.environ[RESERVED_ENV] = ",".join(map(str, databases))
    os.environ["REDIS_URL"] = parts._replace(path=f"/{databases[index]}").geturl()
    if index:
        var = os.environ.get("SVCX_VAR_DIR") or os.path.join(os.path.dirname(os.path.dirname(__file__)), "var")
        os.environ["SVCX_VAR_DIR"] = os.path.join(var, f"test-{worker}")


def _quick_commits() -> None:
    """The tests' PostgreSQL sessions, and those of the servers and workers they start (libpq reads
    PGOPTIONS), commit without waiting for the WAL to reach the disk: what a commit makes visible
    to other sessions is the same, only a crash of PostgreSQL itself (which no test causes) could
    lose the last commits. Commits waited on the disk, which the other users of this machine keep
    busy, for 20 ms and more each."""
    os.environ.setdefault("PGOPTIONS", "-c synchronous_commit=off")


def _plain_plugin_packages() -> None:
    """pytest rewrites the asserts of every module of a package that announces a pytest plugin,
    on import, in each test process: all of hypothesis, schemathesis, faker, anyio, pytest-django
    and xdist, about 400 modules and 2 s of CPU a process (of the 9 s its collection takes). Those
    packages' asserts are theirs, not the suite's: they stay plain (an AssertionError without the
    values). The suite's own modules, its test files and conftests, are rewritten as before."""
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set):
            marked.difference_update({name for name in marked if name.split(".")[0] != "tests"})


_isolate()
_quick_commits()
_plain_plugin_packages()
