"""What every authenticated request passes once it is known not to be a replay: the requests
meter, then a test key's simulated error."""

from __future__ import annotations

from django.http import HttpRequest

from accounts.authentication import Caller
from billing.limits import MeterName
from billing.meters import meter_consume, record
from svcx.simulation import simulate


def request_gate(raw: HttpRequest, caller: Caller) -> None:
    record(raw, meter_consume(caller, MeterName.REQUESTS))
    simulate(raw, caller)
