"""The order in which `--dist loadfile` hands test files to the parallel processes
(tests/conftest.py's pytest_xdist_make_scheduler).

pytest-xdist hands out whole files, the one with the most tests first. The wall time of the
suite is the busiest process's: a long file handed out last, such as one that starts a server
for its single test, runs alone at the end while the other processes are idle (a run handed out
tests/conversion/test_corpus_http.py, one test of 390 s on a loaded machine, after 1,230 s of
a 1,620 s run). Here the files of the real-world corpus go first (test_corpus_http.py, which
cannot be split, before the others), then the files that start processes (servers, workers,
browsers, commands), then the others, each group the one with the most tests first; and
test_corpus.py and test_authored_spans.py, a hundred and 242 independent conversions, are dealt
out in six parts each, small enough that the processes end the corpus together (in three parts
of a hundred and ten tests, one process had two parts of test_corpus.py and ended the corpus 40 s
after the others).
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from functools import cache
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadFileScheduling

# Files whose tests are independent conversions of the shared corpus: dealt out in this many parts.
SPLIT = {"tests/conversion/engine/test_corpus.py": 6, "tests/conversion/engine/test_authored_spans.py": 6}
# What in a file's text says that its tests start processes or drive a browser (the suite's
# own markers read the same names: tests/conftest.py's _MARKS).
HEAVY = (
    "start_worker(",
    "celery_worker",
    "session_worker",
    "WorkerProcess",
    "start_web(",
    "module_web",
    "web_process",
    "start_s3(",
    "subprocess.",
    "Popen(",
    "launched(",
    "live_server",
    "tests.browser",
    "page: ",
)


@cache
def _weight(root: Path, file: str) -> int:
    """3 for a corpus file that is not split (test_corpus_http.py: two tests of a hundred
    conversions over HTTP each, the longest file of the suite), 2 for the parts of the split
    ones, 1 for the other files that start processes, 0 for the rest."""
    if file in SPLIT:
        return 2
    try:
        text = (root / file).read_text(encoding="utf-8")
    except OSError:
        return 0
    if "CORPUS" in text:
        return 3
    return int(any(need in text for need in HEAVY))


class _HeaviestFirst(OrderedDict[str, dict[str, bool]]):
    """The scheduler's queue of files: the next one handed out is the heaviest left."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def popitem(self, last: bool = True) -> tuple[str, dict[str, bool]]:
        if last:
            return super().popitem(last=True)
        scope = max(self, key=lambda s: (_weight(self.root, s.split("::", 1)[0]), len(self[s])))
        return scope, self.pop(scope)


class HeavyFilesFirst(LoadFileScheduling):
    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self.workqueue = _HeaviestFirst(Path(config.rootpath))

    def _split_scope(self, nodeid: str) -> str:
        file = super()._split_scope(nodeid)
        parts = SPLIT.get(file)
        if parts is None:
            return file
        return f"{file}::part{zlib.crc32(nodeid.encode()) % parts}"
