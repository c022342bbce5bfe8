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


def password_seal(*, request_id: str, password: str) -> None:
    nonce = os.urandom(12)
    sealed = nonce + AESGCM(_key()).encrypt(nonce, password.encode(), request_id.encode())
    cache.set(_cache_key(request_id), sealed, timeout=_lifetime())


def password_open(*, request_id: str) -> str:
    """The job's password. Raises 500 `internal_error` (retryable) when it expired or was lost
    (a Redis that kept nothing), or does not open under this key."""
    sealed = cache.get(_cache_key(request_id))
    if not isinstance(sealed, bytes) or len(sealed) < 13:
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "The PDF password of this job expired before a worker ran it.")
    try:
        return AESGCM(_key()).decrypt(sealed[:12], sealed[12:], request_id.encode()).decode()
    except (InvalidTag, UnicodeDecodeError) as exc:
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "The PDF password of this job could not be opened.") from exc


def password_discard(*, request_id: str) -> None:
    cache.delete(_cache_key(request_id))
