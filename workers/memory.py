"""A memory ceiling for one job in a worker process, enforced while the job runs.

Celery's `worker_max_memory_per_child` looks at a pool process only after its task: a job that
grows by gigabytes has done its harm by then. The ceiling is the kernel's data limit
(`RLIMIT_DATA`): private writable memory, which is what the heap, Python's arenas, and the large
allocations of zlib, qpdf and pdfminer take. Address space (`RLIMIT_AS`) would also count what
glibc merely reserves for each thread's malloc arena (64 MiB apiece, never touched), so a
ceiling on it says little about memory; the data limit leaves those reservations out and takes
the pages as they become writable. Past the ceiling an allocation fails, and Python raises
MemoryError where it happens, inside the job.

A MemoryError can leave a library's state half built, so the process that saw one is suspect:
`heap_suspect` tells the task to hand its process back to the pool for a fresh one.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["data_bytes", "heap_suspect", "mark_heap_suspect", "memory_ceiling"]

_suspect = False


def data_bytes() -> int:
    """The process's data memory as the kernel counts it against RLIMIT_DATA (VmData), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024
    raise OSError("VmData not in /proc/self/status")


@contextmanager
def memory_ceiling(limit_bytes: int) -> Iterator[None]:
    """Let the block take at most `limit_bytes` of data memory beyond what the process holds
    now; the limit before it is restored afterwards. A limit of 0 sets no ceiling."""
    if limit_bytes <= 0:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    ceiling = data_bytes() + limit_bytes
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (ceiling, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def mark_heap_suspect() -> None:
    """The process ran out of memory during a job: replace it once the job has answered."""
    global _suspect
    _suspect = True


def heap_suspect() -> bool:
    return _suspect
