"""Settings: every variable is documented, and bad values fail loudly."""

from __future__ import annotations

import re

import pytest

from core.env import ConfigError, env_bool, env_choice, env_duration, env_int, env_required, parse_database_url
from tests.conftest import ROOT


def test_every_environment_variable_is_in_env_example() -> None:
    read = set()
    for name in ("svcx/settings.py", "svcx/gunicorn_conf.py"):
        read |= set(
            re.findall(r'env_(?:str|int|bool|list|duration|choice|required)\("([A-Z_0-9]+)"', (ROOT / name).read_text())
        )
    documented = set(re.findall(r"^([A-Z_0-9]+)=", (ROOT / ".env.example").read_text(), flags=re.M))

    assert read - documented == set()


@pytest.mark.parametrize(("reader", "value"), [(env_int, "ten"), (env_bool, "maybe"), (env_duration, "5 weeks")])
def test_bad_values_fail_naming_the_variable(monkeypatch: pytest.MonkeyPatch, reader: object, value: str) -> None:
    monkeypatch.setenv("SVCX_SOMETHING", value)

    with pytest.raises(ConfigError, match="SVCX_SOMETHING"):
        reader("SVCX_SOMETHING", "1")


def test_the_store_is_one_of_its_kinds_and_s3_needs_a_bucket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVCX_STORE", "nfs")
    monkeypatch.setenv("SVCX_S3_BUCKET", " ")

    with pytest.raises(ConfigError, match="SVCX_STORE must be one of fs, s3"):
        env_choice("SVCX_STORE", "fs", ("fs", "s3"))
    with pytest.raises(ConfigError, match="SVCX_S3_BUCKET must be set"):
        env_required("SVCX_S3_BUCKET")
    monkeypatch.setenv("SVCX_STORE", "S3")
    assert env_choice("SVCX_STORE", "fs", ("fs", "s3")) == "s3"


def test_durations_and_database_urls() -> None:
    assert env_duration("SVCX_UNSET_X", "7d") == 7 * 86400
    assert parse_database_url("postgresql://u:p%40ss@db:6543/name")["PASSWORD"] == "p@ss"
    assert parse_database_url("sqlite:///tmp/x.sqlite3")["NAME"] == "tmp/x.sqlite3"
    with pytest.raises(ConfigError):
        parse_database_url("mysql://x/y")


def test_a_heartbeat_slower_than_half_the_lost_worker_time_is_refused_at_start() -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "SVCX_WORKER_HEARTBEAT_INTERVAL": "15s", "SVCX_WORKER_LOST_AFTER": "20s"}
    check = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "svcx.settings"},
        capture_output=True,
        text=True,
    )

    assert check.returncode != 0
    assert "SVCX_WORKER_HEARTBEAT_INTERVAL must be at most half" in check.stderr


@pytest.mark.parametrize(
    ("variables", "refusal"),
    [
        (
            {"SVCX_WEBHOOKS_RETRY_FIRST": "3h"},
            "SVCX_WEBHOOKS_RETRY_FIRST must be above 0 and at most SVCX_WEBHOOKS_RETRY_MAX",
        ),
        ({"SVCX_WEBHOOKS_RETENTION": "12h"}, "SVCX_WEBHOOKS_RETENTION must be longer than SVCX_WEBHOOKS_RETRY_WINDOW"),
        (
            {"SVCX_WEBHOOKS_READ_TIMEOUT": "0s"},
            "SVCX_WEBHOOKS_CONNECT_TIMEOUT and SVCX_WEBHOOKS_READ_TIMEOUT must be above 0",
        ),
        ({"SVCX_WEBHOOKS_ALLOW_PRIVATE": "maybe"}, "SVCX_WEBHOOKS_ALLOW_PRIVATE must be true or false"),
    ],
)
def test_webhook_settings_that_cannot_work_are_refused_at_start(variables: dict[str, str], refusal: str) -> None:
    import os
    import subprocess
    import sys

    check = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**os.environ, **variables, "DJANGO_SETTINGS_MODULE": "svcx.settings"},
        capture_output=True,
        text=True,
    )

    assert check.returncode != 0
    assert refusal in check.stderr
