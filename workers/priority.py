"""A worker's CPU priority: a pool that does background work (version 2 jobs) runs below the
interactive one on a host they share.

Linux orders runnable threads by their nice level (0 to 19 here; each level is about 1.25 times
less weight: nice 10 weighs 110 against nice 0's 1024), but with autogrouping
(`/proc/sys/kernel/sched_autogroup_enabled`, on in most distributions) it first shares the CPU
equally between sessions, and a nice level counts only against the other threads of its own
session (sched(7), "The autogroup feature"). A worker started as a service of its own leads its
session, so its niceness alone would change nothing against the interactive worker's session:
the session's autogroup is given the same niceness. Between containers (cgroups) neither counts;
their CPU shares do.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import NamedTuple

logger = logging.getLogger("svcx.worker")

_AUTOGROUP = Path("/proc/self/autogroup")  # "/autogroup-157 nice 0"; absent without autogrouping


class Priority(NamedTuple):
    nice: int  # the calling thread's nice level
    autogroup_nice: int | None  # its session's autogroup's, when the kernel has autogroups


def priority_get() -> Priority:
    return Priority(os.getpriority(os.PRIO_PROCESS, 0), autogroup_nice())


def priority_lower(*, niceness: int) -> Priority:
    """Run the calling process at a nice level of at least `niceness` (0-19): every thread it
    has (Linux keeps one per thread) and so the processes it forks from now on; and, when it
    leads its session, the session's autogroup too (only its own children share that session).
    Never raises a priority an operator lowered further (`nice -n 15 celery ...` stays at 15).
    Returns the priority it ends with; a refusal by the kernel is logged and leaves it as it was."""
    try:
        for tid in _threads():
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
                    os.setpriority(os.PRIO_PROCESS, tid, niceness)
        if os.getsid(0) == os.getpid():
            current = autogroup_nice()
            if current is not None and current < niceness:
                _AUTOGROUP.write_text(str(niceness))
    except OSError:
        logger.warning("could not lower the worker's CPU priority to nice %s", niceness, exc_info=True)
    return priority_get()


def _threads() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except FileNotFoundError:  # no /proc: this thread alone
        return [0]


def autogroup_nice(pid: int | None = None) -> int | None:
    """The niceness of the autogroup of process `pid` (this one by default), or None where the
    kernel has no autogroups or shows none (an empty file in some containers)."""
    path = _AUTOGROUP if pid is None else Path(f"/proc/{pid}/autogroup")
    try:
        return int(path.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None
