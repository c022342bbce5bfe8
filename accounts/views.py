"""The single-use page that shows a replacement key after a confirmed leak.

GET shows a button; only the POST reveals, so a link preview or a mail scanner that fetches the
URL cannot use up the one view.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.guards import per_address
from accounts.services import key_reveal_consume


@never_cache
@require_http_methods(["GET", "POST"])
@per_address("SVCX_REVEAL_ATTEMPTS_PER_MINUTE")
def key_reveal(request: HttpRequest, token: str) -> HttpResponse:
    if request.method == "GET":
        return render(request, "accounts/reveal.html", {"state": "ready"})
    revealed = key_reveal_consume(token=token)
    if revealed is None:
        return render(request, "accounts/reveal.html", {"state": "gone"}, status=200)
    api_key, secret = revealed
    response = render(request, "accounts/reveal.html", {"state": "shown", "api_key": api_key, "secret": secret})
    response["Cache-Control"] = "no-store"
    return response
