"""A worker that consumes only the version 2 jobs queues runs below the interactive pool on its
host: its processes, and its session's autogroup, at SVCX_JOB_WORKER_NICE (workers/priority.py,
svcx/celery.py); any other worker keeps its priority."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.env import ConfigError, env_int
from tests.conftest import ROOT, start_worker
from workers.priority import autogroup_nice


def _nice(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[16])  # field 19 of proc(5): nice


def _pool(pid: int, size: int) -> list[int]:
    """The worker's pool processes, once it has forked `size` of them (it may announce itself first)."""
    deadline = time.monotonic() + 30
    while len(found := _children(pid)) < size and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2 :].split()[1]) == pid:  # field 4: the parent
                found.append(int(entry.name))
    return found


@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_jobs_queues_alone_runs_its_pool_at_the_jobs_niceness(tmp_path: Path) -> None:
    own_autogroup = autogroup_nice(os.getpid())

    worker = start_worker(tmp_path, queues="jobs,jobs_test", concurrency=2)
    try:
        pool = _pool(worker.process.pid, 2)

        assert len(pool) == 2
        assert [_nice(pid) for pid in pool] == [10, 10]  # the setting's default
        assert _nice(worker.process.pid) == 10
        assert os.getsid(worker.process.pid) == worker.process.pid  # it leads its session
        if own_autogroup is not None:  # a kernel with autogroups: the worker's session's, not ours
            assert [autogroup_nice(pid) for pid in pool] == [10, 10]
            assert autogroup_nice(os.getpid()) == own_autogroup
    finally:
        worker.stop()


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_also_takes_conversions_keeps_its_priority(tmp_path: Path) -> None:
    worker = start_worker(tmp_path, queues="default,convert,jobs", env={"SVCX_JOB_WORKER_NICE": "7"})
    try:
        pool = _pool(worker.process.pid, 1)

        assert len(pool) == 1
        assert _nice(pool[0]) == _nice(worker.process.pid) == os.getpriority(os.PRIO_PROCESS, 0)
        assert autogroup_nice(pool[0]) in (None, 0)
    finally:
        worker.stop()


def test_lowering_never_raises_a_priority_an_operator_lowered_further() -> None:
    script = (
        "import os; os.setsid(); os.nice(15)\n"
        "from workers.priority import priority_lower\n"
        "print(tuple(priority_lower(niceness=5)), tuple(priority_lower(niceness=17)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")[0]

    # The session's autogroup starts at 0: raised to 5, then to 17 with the threads.
    assert out in ("(15, 5) (17, 17)", "(15, None) (17, None)")


def test_a_niceness_outside_linux_levels_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVCX_JOB_WORKER_NICE", "20")

    with pytest.raises(ConfigError, match="SVCX_JOB_WORKER_NICE must be at most 19, got 20"):
        env_int("SVCX_JOB_WORKER_NICE", 10, minimum=0, maximum=19)
