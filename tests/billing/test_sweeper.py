"""A hold whose request died is released by the sweeper within 60 seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from billing.models import CreditHold, LedgerEntry
from billing.selectors import credits_get
from tests.conftest import ROOT, database_url_for_children, start_worker
from tests.factories import make_org

pytestmark = [pytest.mark.django_db(transaction=True)]

HOLD_AND_HANG = """
import django, os, sys, time
django.setup()
from accounts.models import Organization
from billing.ledger import credits_hold
credits_hold(organization=Organization.objects.get(pk=sys.argv[1]), environment="live", api_key_id="key_x", request_id="req_orphan", pages=7)
print("held", flush=True)
time.sleep(600)
"""


def test_hold_of_a_killed_process_is_released_within_60_seconds(tmp_path: Path) -> None:
    org = make_org(credits=10)
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_children(),
        "REDIS_URL": settings.REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "svcx.settings",
        "SVCX_HOLD_LEASE_SECONDS": "5",
        "SVCX_WORKER_HEARTBEAT_INTERVAL": "1s",  # at most half the lease, as settings require
    }
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_HANG, org.id], cwd=ROOT, env=env, stdout=subprocess.PIPE)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == b"held"
    assert credits_get(organization=org, environment="live").held == 7

    holder.send_signal(signal.SIGKILL)
    holder.wait()
    killed_at = time.monotonic()
    # A real worker with its embedded beat scheduler runs the sweeper every second.
    worker = start_worker(tmp_path, env={"SVCX_HOLD_SWEEP_INTERVAL": "1s"}, beat=True)
    try:
        while time.monotonic() - killed_at < 60:
            if CreditHold.objects.get(request_id="req_orphan").status == "released":
                break
            time.sleep(0.5)
        released_after = time.monotonic() - killed_at
    finally:
        worker.stop()

    assert CreditHold.objects.get(request_id="req_orphan").status == "released"
    assert released_after < 60
    credits = credits_get(organization=org, environment="live")
    assert (credits.balance, credits.held) == (10, 0)
    assert LedgerEntry.objects.get(request_id="req_orphan", kind="release").credits == 7
