"""What every authenticated request passes once it is known not to be a replay: the requests
meter, then a test key's simulated error."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request

from accounts.authentication import Caller, caller_of
from billing.limits import MeterName
from billing.meters import meter_consume, rate_limit_headers, record
from billing.simulation import simulate


def request_gate(raw: HttpRequest, caller: Caller) -> None:
    record(raw, meter_consume(caller, MeterName.REQUESTS))
    simulate(raw, caller)


class MeterStep:
    """The API base view's metering step (settings.SVCX_API_STEPS): a request without a body
    passes the gate once authenticated; every answer carries the RateLimit headers of the
    meters the request touched."""

    def admit(self, request: Request) -> None:
        request_gate(request._request, caller_of(request))

    def finish(self, request: Request, response: HttpResponse) -> None:
        for name, value in rate_limit_headers(request._request).items():
            if not response.has_header(name):
                response[name] = value
