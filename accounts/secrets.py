"""Keyed hashing of API keys, and sealing of a secret under a one-time token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings


def key_hash(secret: str) -> str:
    """HMAC-SHA256 of the key under the server-side pepper: what the database stores and indexes."""
    return hmac.new(settings.SVCX_KEY_PEPPER.encode(), secret.encode(), hashlib.sha256).hexdigest()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token_key(token: str) -> bytes:
    return hashlib.sha256(b"svcx-reveal:" + token.encode()).digest()


def seal(secret: str, token: str) -> bytes:
    """`secret` encrypted with a key derived from `token` (AES-256-GCM, random nonce)."""
    nonce = os.urandom(12)
    return nonce + AESGCM(_token_key(token)).encrypt(nonce, secret.encode(), None)


def unseal(sealed: bytes, token: str) -> str:
    return AESGCM(_token_key(token)).decrypt(sealed[:12], sealed[12:], None).decode()


def urlsafe_token() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
