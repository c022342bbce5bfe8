"""`make run` on a machine without servers: the launcher brings up web, worker and scheduler on
the embedded default (SQLite, a file-system broker) and the printed key converts a PDF."""

from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from tests.conftest import text_pdf
from tests.svcx.launcher import launched
from tests.svcx.test_static import assert_admin_static_served

LIVE_KEY = re.compile(r"live: (svcx_sk_live_\S+)")
DEMO_SIGN_IN = re.compile(r"sign in as (\S+) with the password (\S+) ")


def _console_sign_in(base: str, email: str, password: str) -> str:
    """Sign in through the console's form as a browser would (CSRF cookie and token); the page
    it lands on."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(base + "/console/sign-in/", timeout=30) as response:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.read().decode()).group(1)
    form = urllib.parse.urlencode({"email": email, "password": password, "csrfmiddlewaretoken": token}).encode()
    with opener.open(base + "/console/sign-in/", data=form, timeout=30) as response:
        return str(response.read().decode())


def _get(url: str, **headers: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_make_run_serves_conversions_on_the_embedded_default(tmp_path: Path) -> None:
    with launched(tmp_path, "launcher-") as run:
        base = run.base
        output = run.output
        status, health = _get(base + "/v1/health")
        assert status == 200
        assert health["checks"]["redis"]["embedded"] is True
        assert health["checks"]["workers"]["queues"] == {
            "default": 1,
            "launcher-convert": 1,
            "launcher-convert_test": 1,
        }

        key = LIVE_KEY.search(output)
        assert key, output[-3000:]
        assert f"{base}/v1/account" in output  # the printed hint names the address actually served
        pdf = text_pdf(tmp_path / "doc.pdf", ["Hello from the launcher test."]).read_bytes()
        request = urllib.request.Request(
            base + "/v1/convert",
            data=pdf,
            headers={"Authorization": f"Bearer {key.group(1)}", "Content-Type": "application/pdf"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            body = json.loads(response.read())
        assert "Hello from the launcher test." in body["markdown"]
        assert body["credits_billed"] == 1
        assert any(run.var_dir.glob("celerybeat-schedule*"))  # the scheduler keeps state in SVCX_VAR_DIR
        _, error = _get(base + "/v1/nothing")
        assert error["error"]["doc_url"] == f"{base}/docs/errors/unknown_endpoint"
        assert_admin_static_served(base)  # collected on start, served by the web server
        # The printed demo sign-in opens the demo organization's console.
        assert f"customer console at {base}/console/" in output
        demo = DEMO_SIGN_IN.search(output)
        assert demo, output[-3000:]
        assert demo.group(1) == "demo@svcx.local"
        console = _console_sign_in(base, demo.group(1), demo.group(2))
        assert "<h1>Spending</h1>" in console
        assert "999 credits" in console  # 1,000 granted, 1 spent on the conversion above
    assert run.returncode == 0
