"""The service stores passwords with Django's PBKDF2 at its full iteration count. The suite hashes
at one iteration (tests/quick.py, for speed): these tests check what the service itself runs
with, and that what the suite stores is a hash the service reads."""

from __future__ import annotations

from django.conf import global_settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher, check_password, make_password

import svcx.settings as service

SERVICE_HASHERS = getattr(service, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)


def test_the_service_hashes_new_passwords_with_pbkdf2_at_a_million_iterations_or_more() -> None:
    assert SERVICE_HASHERS[0] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"
    algorithm, iterations, _salt, _hash = PBKDF2PasswordHasher().encode("a-long-enough-password-1", "salt").split("$")

    assert (algorithm, int(iterations) >= 1_000_000) == ("pbkdf2_sha256", True)


def test_a_password_the_suite_stores_is_checked_by_the_service_s_hasher_and_upgraded() -> None:
    stored = make_password("a-long-enough-password-1")  # the suite's quick hasher
    real = PBKDF2PasswordHasher()

    assert stored.startswith("pbkdf2_sha256$1$")
    assert real.verify("a-long-enough-password-1", stored)
    assert not real.verify("another-password", stored)
    assert real.must_update(stored)  # a server signing the person in re-hashes at the full count
    assert check_password("a-long-enough-password-1", stored)
