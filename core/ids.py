"""Prefixed public identifiers (`org_`, `key_`, `file_`, `req_`, `led_`, `use_`, `we_`, `evt_`):
the prefix and 24 base62 characters from the OS CSPRNG."""

from __future__ import annotations

import re
import secrets

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


_ID = re.compile(r"[a-z]+_[0-9A-Za-z]{1,64}")


def is_id(value: str, prefix: str) -> bool:
    """Whether `value` has the shape of a `prefix_...` identifier. Anything else names nothing
    and need not reach the database (which refuses some characters, such as NUL, outright)."""
    return value.startswith(prefix + "_") and _ID.fullmatch(value) is not None


def random_base62(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def new_id(prefix: str) -> str:
    return f"{prefix}_{random_base62(24)}"


def new_request_id() -> str:
    return new_id("req")


def new_org_id() -> str:
    return new_id("org")


def new_key_id() -> str:
    return new_id("key")


def new_file_id() -> str:
    return new_id("file")


def new_ledger_id() -> str:
    return new_id("led")


def new_usage_id() -> str:
    return new_id("use")


def new_webhook_endpoint_id() -> str:
    return new_id("we")


def new_event_id() -> str:
    return new_id("evt")
