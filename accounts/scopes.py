"""Scopes of interface.md 5.4: the five issued in v1, the reserved ones never issued, presets."""

from __future__ import annotations

CONVERT = "convert"
FILES_WRITE = "files:write"
FILES_READ = "files:read"
INSPECT = "inspect"
ACCOUNT_READ = "account:read"

ISSUED_SCOPES: tuple[str, ...] = (CONVERT, FILES_WRITE, FILES_READ, INSPECT, ACCOUNT_READ)
RESERVED_SCOPES: frozenset[str] = frozenset(
    {
        "jobs:read",
        "jobs:write",
        "keys:read",
        "keys:write",
        "billing:read",
        "billing:write",
        "webhooks:write",
        "org:admin",
    }
)
READ_SCOPES: tuple[str, ...] = (FILES_READ, ACCOUNT_READ)

PRESETS: dict[str, tuple[str, ...]] = {
    "full": ISSUED_SCOPES,
    "restricted": tuple(s for s in ISSUED_SCOPES if s != ACCOUNT_READ),
    "read_only": READ_SCOPES,
}


class ScopeError(ValueError):
    """A scope that may not be issued was asked for."""


def validate_scopes(scopes: list[str] | tuple[str, ...]) -> list[str]:
    """The scopes to store, in canonical order. Raises ScopeError for reserved or unknown ones."""
    requested = [s.strip() for s in scopes if s.strip()]
    reserved = sorted(set(requested) & RESERVED_SCOPES)
    if reserved:
        raise ScopeError(f"reserved scopes are never issued in v1: {', '.join(reserved)}")
    unknown = sorted(set(requested) - set(ISSUED_SCOPES))
    if unknown:
        raise ScopeError(f"unknown scopes: {', '.join(unknown)}; issued scopes are {', '.join(ISSUED_SCOPES)}")
    if not requested:
        raise ScopeError("a key needs at least one scope")
    return [s for s in ISSUED_SCOPES if s in requested]


def effective_scopes(stored: object) -> frozenset[str]:
    """The scopes a stored record grants. Unknown strings are ignored, never an error."""
    if not isinstance(stored, list):
        return frozenset()
    return frozenset(s for s in stored if isinstance(s, str) and s in ISSUED_SCOPES)
