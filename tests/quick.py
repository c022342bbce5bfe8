"""What makes the suite's own bookkeeping cheap, without changing what any test exercises
(installed by tests/conftest.py's pytest_configure; tests/isolation.py sets PGOPTIONS).

- After a `transaction=True` test, Django empties every table with TRUNCATE, which gives each
  of the ~35 tables and their indexes new files (0.3 s a test on a quiet machine, 2 to 5 s while
  others write to the disk), then its post_migrate writes the content types and permissions
  again (about 20 commits). Here the tables are emptied with DELETE (milliseconds for the few
  rows a test makes; the constraints, deferrable as Django makes them, are checked at the
  flush's commit; sequences are reset by neither), and the content types and permissions, which
  only migrations make, are kept: post_migrate runs again only when a test changed their number.
- Passwords are hashed with Django's PBKDF2 at one iteration instead of 1,000,000 (0.3 s of CPU
  a hash; the suite signs people in hundreds of times). The hashes are the service's format
  (`pbkdf2_sha256$1$...`): a server the tests start checks them and re-hashes them at the full
  count on sign-in. tests/accounts/test_passwords.py checks the service's own hasher.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher

KEPT_TABLES = ("django_content_type", "auth_permission")


def flush_by_delete() -> None:
    from django.core.management.commands import flush
    from django.core.management.sql import emit_post_migrate_signal as emit
    from django.db import connections
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(
        self: DatabaseOperations, style: Any, tables: Any, *, reset_sequences: bool = False, allow_cascade: bool = False
    ) -> list[str]:
        if not tables or reset_sequences or allow_cascade:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        emptied = [f"DELETE FROM {self.quote_name(table)}" for table in tables if table not in KEPT_TABLES]
        return ["SET CONSTRAINTS ALL DEFERRED", *emptied]

    kept: dict[str, tuple[int, ...]] = {}

    def kept_rows(database: str) -> tuple[int, ...]:
        with connections[database].cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(f"(SELECT count(*) FROM {table})" for table in KEPT_TABLES))
            return tuple(cursor.fetchone() or ())

    def emit_when_changed(verbosity: int, interactive: bool, db: str, **kwargs: Any) -> None:
        if kept.get(db) == kept_rows(db):
            return
        emit(verbosity, interactive, db, **kwargs)
        kept[db] = kept_rows(db)

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign,assignment]  # the suite's own flush
    flush.emit_post_migrate_signal = emit_when_changed  # type: ignore[attr-defined]  # flush's own import of it


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Django's PBKDF2, the same algorithm and format, at one iteration."""

    iterations = 1


def password_hashes() -> None:
    settings.PASSWORD_HASHERS = [f"{__name__}.QuickPBKDF2PasswordHasher", *settings.PASSWORD_HASHERS]
