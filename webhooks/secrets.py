"""Signing secrets of webhook endpoints: made here, kept sealed at rest, opened only to sign.

The database holds each secret encrypted (AES-256-GCM under a key derived from
SVCX_WEBHOOKS_SECRET_KEY, with the endpoint's id as associated data, so a sealed secret copied to
another endpoint's row does not open); a person sees it once, when it is made or rotated."""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from core.ids import random_base62

SECRET_PREFIX = "whsec_"  # noqa: S105  (the prefix of every secret, not a secret)
# 32 base62 characters: about 190 bits from the OS CSPRNG.
SECRET_LENGTH = 32


class SecretUnreadable(RuntimeError):
    """A sealed secret does not open under this key (SVCX_WEBHOOKS_SECRET_KEY changed): the
    endpoint's secret must be rotated."""


def secret_new() -> str:
    return SECRET_PREFIX + random_base62(SECRET_LENGTH)


def secret_hint(secret: str) -> str:
    """How a person tells secrets apart: the prefix and the last four characters."""
    return f"{SECRET_PREFIX}…{secret[-4:]}"


def _key() -> bytes:
    secret = str(settings.SVCX_WEBHOOKS_SECRET_KEY).encode()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"svcx webhook signing secret").derive(secret)


def secret_seal(*, secret: str, endpoint_id: str) -> bytes:
    nonce = os.urandom(12)
    return nonce + AESGCM(_key()).encrypt(nonce, secret.encode(), endpoint_id.encode())


def secret_open(*, sealed: bytes | memoryview, endpoint_id: str) -> str:
    """The secret sealed for `endpoint_id`. Raises SecretUnreadable."""
    raw = bytes(sealed)
    try:
        return AESGCM(_key()).decrypt(raw[:12], raw[12:], endpoint_id.encode()).decode()
    except (InvalidTag, ValueError, UnicodeDecodeError) as exc:
        raise SecretUnreadable(f"the signing secret of {endpoint_id} does not open under this key") from exc
