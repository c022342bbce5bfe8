"""Typed readers for environment variables that fail loudly on a bad value.

Every variable the service reads goes through one of these, so a typo in a deployment is a
start-up error naming the variable, never a silently wrong default.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote, urlsplit


class ConfigError(RuntimeError):
    """A variable is set to a value its reader cannot accept."""


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_required(name: str) -> str:
    """A variable that has no default: unset or empty is a start-up error."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigError(f"{name} must be set")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, "").strip().lower() or default
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError as exc:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be at most {maximum}, got {value}")
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def trusted_proxies() -> list[str]:
    """SVCX_TRUSTED_PROXIES: the peers (addresses or networks, comma-separated) whose forwarded
    headers are believed; read by the settings and by gunicorn's configuration alike."""
    return env_list("SVCX_TRUSTED_PROXIES", ["127.0.0.1", "::1"])


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def parse_duration(raw: str) -> float:
    """Seconds in `raw`: a number with an optional unit ms, s, m, h or d (`7d`, `120`, `90s`)."""
    match = _DURATION.match(raw)
    if not match:
        raise ValueError(raw)
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def env_duration(name: str, default: str) -> float:
    raw = os.environ.get(name) or default
    try:
        return parse_duration(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a duration such as 120s, 7d or 90, got {raw!r}") from exc


_DB_ENGINES = {
    "postgres": "django.db.backends.postgresql",
    "postgresql": "django.db.backends.postgresql",
    "sqlite": "django.db.backends.sqlite3",
}


def parse_database_url(url: str) -> dict[str, Any]:
    """A Django DATABASES entry for `postgresql://user:pw@host:port/name` or `sqlite:///path`."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+")[0]
    if scheme not in _DB_ENGINES:
        raise ConfigError(f"DATABASE_URL scheme must be postgresql or sqlite, got {parts.scheme!r}")
    if scheme == "sqlite":
        return {"ENGINE": _DB_ENGINES[scheme], "NAME": unquote(parts.path[1:] or ":memory:")}
    return {
        "ENGINE": _DB_ENGINES[scheme],
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }
