"""Hostile-client scenarios of the fault suite (`python -m bench faults`): what a stranger or a
hostile customer does to the service (slow clients, decompression bombs, one organization
flooding the worker pool), run on the suite's own stack after the fault scenarios.

Each scenario is a function `run(suite) -> HostileResult` in a module of this package, listed
in `SCENARIOS` below. It measures figures (seconds, bytes, counts: each named with its unit)
and checks them against the goal it states; the report prints both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.faults import Suite


@dataclass
class HostileResult:
    name: str
    description: str
    # goal -> {"pass": bool, "detail": str}: what was checked, as in the fault scenarios
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # measured figures, each key naming its unit ("health_p99_s", "worker_rss_max_mb")
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c["pass"] for c in self.checks.values())


# name, description, function: each scenario module is imported below and adds its line here
SCENARIOS: list[tuple[str, str, Callable[[Suite], HostileResult]]] = []

# The scenarios, in the order the suite runs them (each module: `from bench.hostile import x`, then
# `SCENARIOS.append(("x", "what it does", x.run))`).
from bench.hostile import bombs, fair_share, slow_clients  # noqa: E402  (they use HostileResult above)

SCENARIOS.append(("slow_clients", "500 trickling connections vs health and conversions", slow_clients.run))
SCENARIOS.append(("bombs", "decompression bombs: 1 GiB content and form XObject, 256 MiB CMap", bombs.run))
SCENARIOS.append(("fair_share", "one organization floods the worker pool with long conversions", fair_share.run))
