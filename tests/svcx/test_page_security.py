"""Framing and transport headers: every HTML page refuses to be framed and carries the strict
Content-Security-Policy (no inline script, event handler or style in the page itself); API
answers carry neither; Strict-Transport-Security goes out only over https, which a trusted proxy
can vouch for with its header."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import pytest
from django.test import Client

from svcx.middleware import PAGE_CONTENT_SECURITY_POLICY
from tests.conftest import ROOT
from tests.console.conftest import make_person, signed_in
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db]

PAGES = [
    "/console/sign-in/",
    "/console/password-reset/",
    "/console/no-such-page",  # the console's HTML error page
    "/docs/",
    "/docs/quickstart",
    "/docs/errors/invalid_api_key",
    "/admin/login/",
    "/reveal/a-token-that-was-never-issued",
]
INLINE = {
    "inline script": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),
    "event-handler attribute": re.compile(r"<[^>]+\son[a-z]+\s*=", re.I),
    "style element": re.compile(r"<style\b", re.I),
    "style attribute": re.compile(r"<[^>]+\sstyle\s*=", re.I),
}


def assert_a_guarded_page(response: Any) -> None:
    assert response["Content-Type"].startswith("text/html")
    assert response["X-Frame-Options"] == "DENY"
    policy = response["Content-Security-Policy"]
    assert policy == PAGE_CONTENT_SECURITY_POLICY
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["frame-ancestors"] == "'none'"
    assert directives["script-src"] == directives["style-src"] == "'self'"
    page = response.content.decode()
    for what, pattern in INLINE.items():
        assert not pattern.search(page), f"{what} in {response.request['PATH_INFO']}: {pattern.search(page)}"


@pytest.mark.parametrize("path", PAGES)
def test_every_page_refuses_framing_and_inline_code(client: Client, path: str) -> None:
    assert_a_guarded_page(client.get(path))


def test_signed_in_console_pages_refuse_framing_and_inline_code() -> None:
    org = make_org("Acme", credits=100)
    client = signed_in(make_person(org, "olga@acme.test", "owner"))
    key = make_key(org).api_key.id
    pages = ["", "statement/", "usage/", "keys/", "keys/new/", f"keys/{key}/", f"keys/{key}/revoke/", "members/"]
    pages += ["files/", "audit/", "password/"]

    for page in pages:
        response = client.get(f"/console/{org.id}/{page}")
        assert response.status_code == 200, page
        assert_a_guarded_page(response)


@pytest.mark.parametrize("path", ["/v1/health", "/v1/openapi.json", "/v1/account", "/v1/nowhere", "/docs/nowhere"])
def test_api_answers_carry_no_page_headers(client: Client, path: str) -> None:
    response = client.get(path)

    assert response["Content-Type"].startswith("application/json")
    assert not response.has_header("X-Frame-Options")
    assert not response.has_header("Content-Security-Policy")


def test_hsts_only_over_https_or_where_the_trusted_proxy_says_so(client: Client, settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31536000

    behind_tls_proxy = client.get("/console/sign-in/", HTTP_X_FORWARDED_PROTO="https")
    plain = client.get("/console/sign-in/", HTTP_X_FORWARDED_PROTO="http")
    direct_tls = Client().get("/v1/health", secure=True)

    assert behind_tls_proxy["Strict-Transport-Security"] == "max-age=31536000"
    assert not plain.has_header("Strict-Transport-Security")
    assert direct_tls["Strict-Transport-Security"] == "max-age=31536000"


def test_the_trusted_proto_header_and_hsts_age_come_from_the_environment() -> None:
    code = "from django.conf import settings as s; print(getattr(s, 'SECURE_PROXY_SSL_HEADER', None), s.SECURE_HSTS_SECONDS)"
    base = {k: v for k, v in os.environ.items() if k not in ("SVCX_TRUSTED_PROTO_HEADER", "SVCX_HSTS_MAX_AGE")}
    runs = [
        {},
        {"SVCX_TRUSTED_PROTO_HEADER": "X-Forwarded-Proto", "SVCX_HSTS_MAX_AGE": "1h"},
    ]

    printed = [
        subprocess.run(
            [sys.executable, "-c", "import django; django.setup(); " + code],
            cwd=ROOT,
            env={**base, "DJANGO_SETTINGS_MODULE": "svcx.settings", **extra},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for extra in runs
    ]

    assert printed == ["None 31536000", "('HTTP_X_FORWARDED_PROTO', 'https') 3600"]
