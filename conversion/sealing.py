"""A job's PDF password between the web side and its worker: never in the Celery message and
never in clear in Redis. The web side seals it (AES-256-GCM under a key derived from
SVCX_JOB_SECRET, bound to the request id) into the cache for the job's lifetime at most; the
worker opens it, and it is deleted when the job ends."""

from __future__ import annotations

import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.cache import cache

from core.errors import ErrorCode, ServiceError


def _key() -> bytes:
    secret = str(settings.SVCX_JOB_SECRET).encode()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"svcx job password").derive(secret)


def _cache_key(request_id: str) -> str:
    # The request id is not secret, but a key name needs no readable link to it either.
    return "svcx:job-password:" + hashlib.sha256(request_id.encode()).hexdigest()


def _lifetime() -> int:
    """Seconds a job can live: its wait in the queue, its run, and the grace after it."""
    return int(
        float(settings.SVCX_QUEUE_WAIT_LIMIT)
        + float(settings.SVCX_CONVERSION_TIME_LIMIT)
        + float(settings.SVCX_CONVERSION_GRACE)
        + 60
    )


def password_sealed(*, bound_to: str, password: str) -> bytes:
    """The password sealed to one job (its id is the associated data): a nonce and the
    ciphertext. Version 2 jobs keep it on their row until they end."""
    nonce = os.urandom(12)
    return nonce + AESGCM(_key()).encrypt(nonce, password.encode(), bound_to.encode())


def password_unsealed(*, bound_to: str, sealed: bytes | None) -> str:
    """The password `password_sealed` sealed to `bound_to`. Raises 500 `internal_error`
    (retryable) when it is missing (expired, or a Redis that kept nothing) or does not open
    under this key."""
    if not isinstance(sealed, bytes) or len(sealed) < 13:
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "The PDF password of this job expired before a worker ran it.")
    try:
        return AESGCM(_key()).decrypt(sealed[:12], sealed[12:], bound_to.encode()).decode()
    except (InvalidTag, UnicodeDecodeError) as exc:
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "The PDF password of this job could not be opened.") from exc


def password_seal(*, request_id: str, password: str) -> None:
    cache.set(_cache_key(request_id), password_sealed(bound_to=request_id, password=password), timeout=_lifetime())


def password_open(*, request_id: str) -> str:
    """The job's password (see `password_unsealed`)."""
    sealed = cache.get(_cache_key(request_id))
    return password_unsealed(bound_to=request_id, sealed=sealed if isinstance(sealed, bytes) else None)


def password_discard(*, request_id: str) -> None:
    cache.delete(_cache_key(request_id))
