"""The API key format of interface.md 2.1 and decisions.md 8, generated and checked offline.

    svcx_sk_live_<43 base62 random>_<6 base62 checksum>      63 characters

The checksum is CRC-32/ISO-HDLC over everything before the final underscore, written in base62
and left-padded with "0" to 6 characters. The environment is inside the checksummed part, so a
live key edited into a test key (or the reverse) fails validation without a database lookup.
"""

from __future__ import annotations

import re
import secrets
import zlib
from dataclasses import dataclass
from enum import StrEnum


class Environment(StrEnum):
    """Where a key works: live keys spend credits, test keys bill nothing and see their own data."""

    LIVE = "live"
    TEST = "test"


ENVIRONMENTS: tuple[Environment, ...] = tuple(Environment)

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE62_SET = frozenset(BASE62)
ISSUER = "svcx_"
SECRET_TYPE = "sk_"  # noqa: S105  # a prefix, not a secret
CONSOLE_TOKEN_PREFIX = "svcx_cs_"  # noqa: S105  # a prefix, not a secret
RANDOM_LENGTH = 43
CHECKSUM_LENGTH = 6
KEY_LENGTH = 63
# A secret in text (a URL path, a log line): from its prefix to the next separator, whether or
# not the rest is well formed (a mistyped or cut key is still mostly secret).
_SECRET_IN_TEXT = re.compile(rf"({re.escape(ISSUER + SECRET_TYPE)}|{re.escape(CONSOLE_TOKEN_PREFIX)})[^/?#\s]*")


class KeyFormatError(ValueError):
    """The string is not a well-formed API key; `console_token` says it is a console token."""

    def __init__(self, reason: str, *, console_token: bool = False) -> None:
        super().__init__(reason)
        self.console_token = console_token


@dataclass(frozen=True)
class ParsedKey:
    environment: Environment
    random: str

    @property
    def hint(self) -> str:
        """What identifies a key to people without revealing it: `svcx_sk_live_...a9Zq`."""
        return f"{ISSUER}{SECRET_TYPE}{self.environment}_...{self.random[-4:]}"


def base62(number: int, width: int) -> str:
    digits = []
    while number:
        number, remainder = divmod(number, 62)
        digits.append(BASE62[remainder])
    return "".join(reversed(digits)).rjust(width, "0")


def checksum(body: str) -> str:
    return base62(zlib.crc32(body.encode("ascii")) & 0xFFFFFFFF, CHECKSUM_LENGTH)


def compose(environment: Environment, random: str) -> str:
    body = f"{ISSUER}{SECRET_TYPE}{environment}_{random}"
    return f"{body}_{checksum(body)}"


def generate(environment: Environment) -> str:
    """A new key with 43 random base62 characters from the OS CSPRNG (about 256 bits)."""
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment must be live or test, got {environment!r}")
    return compose(environment, "".join(secrets.choice(BASE62) for _ in range(RANDOM_LENGTH)))


def parse(key: str) -> ParsedKey:
    """Validate `key` offline. Raises KeyFormatError saying what is wrong (never echoing the key)."""
    if key.startswith(CONSOLE_TOKEN_PREFIX):
        raise KeyFormatError("console session tokens are not API keys", console_token=True)
    if len(key) != KEY_LENGTH:
        raise KeyFormatError(f"an API key is {KEY_LENGTH} characters long")
    if not key.startswith(ISSUER + SECRET_TYPE):
        raise KeyFormatError(f"an API key starts with {ISSUER}{SECRET_TYPE}")
    body, _, given_checksum = key.rpartition("_")
    environment, _, random = body[len(ISSUER + SECRET_TYPE) :].partition("_")
    if environment not in ENVIRONMENTS:
        raise KeyFormatError("the environment segment must be live_ or test_")
    if len(random) != RANDOM_LENGTH or not _BASE62_SET.issuperset(random):
        raise KeyFormatError("the random part must be 43 base62 characters")
    if not secrets.compare_digest(given_checksum, checksum(body)):
        raise KeyFormatError("the checksum does not match; the key was mistyped or altered")
    return ParsedKey(environment=Environment(environment), random=random)


def redacted(text: str) -> str:
    """`text` with every API key or console session token in it cut to its prefix:
    `/v1/files/svcx_sk_live_...` -> `/v1/files/svcx_sk_[redacted]`."""
    if ISSUER not in text:  # the common case, without the expression
        return text
    return _SECRET_IN_TEXT.sub(r"\1[redacted]", text)
