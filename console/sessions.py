"""The session engine (SESSION_ENGINE = "console.sessions"): database sessions whose key is a
console session token of interface.md 2.1, `svcx_cs_` and 32 base62 characters (about 190
bits), and whose row names the signed-in user."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.sessions.backends.db import SessionStore as DbSessionStore

from accounts.keyformat import BASE62, CONSOLE_TOKEN_PREFIX

TOKEN_RANDOM_LENGTH = 32  # the prefix and this fill Django's 40-character session key column


def new_console_token() -> str:
    return CONSOLE_TOKEN_PREFIX + "".join(secrets.choice(BASE62) for _ in range(TOKEN_RANDOM_LENGTH))


class SessionStore(DbSessionStore):
    @classmethod
    def get_model_class(cls) -> Any:
        from console.models import ConsoleSession

        return ConsoleSession

    def _get_new_session_key(self) -> str:
        while True:
            key = new_console_token()
            if not self.exists(key):
                return key

    def create_model_instance(self, data: dict[str, Any]) -> Any:
        instance: Any = super().create_model_instance(data)
        user_id = data.get("_auth_user_id")
        instance.user_id = int(user_id) if user_id is not None else None
        return instance
