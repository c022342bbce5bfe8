"""The admin's CSS and JavaScript are served by the web server itself (WhiteNoise) after
`collectstatic`, as in the image and the docker-compose topology; `make run` is checked in
tests/svcx/test_run.py with the same helper."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, start_web


def assert_admin_static_served(base: str) -> None:
    """The admin login page's stylesheets and scripts answer 200 with their content types."""
    with urllib.request.urlopen(f"{base}/admin/login/", timeout=30) as response:
        html = response.read().decode()
    stylesheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert any(s.endswith("admin/css/base.css") for s in stylesheets), stylesheets
    assert scripts, html[:2000]
    for paths, content_type in ((stylesheets, "text/css"), (scripts, "text/javascript")):
        for path in paths:
            with urllib.request.urlopen(base + path, timeout=30) as asset:
                body = asset.read()
                assert asset.status == 200, path
                assert asset.headers["Content-Type"].split(";")[0] == content_type, path
                assert body, path


@pytest.mark.django_db(transaction=True)
def test_gunicorn_serves_the_admin_css_and_javascript_after_collectstatic(tmp_path: Path) -> None:
    # As the image does it: collectstatic into SVCX_STATIC_ROOT, then gunicorn alone.
    static_root = tmp_path / "static"
    env = {**os.environ, "SVCX_STATIC_ROOT": str(static_root)}
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    assert (static_root / "admin" / "css" / "base.css").exists()
    process, base = start_web(tmp_path, env={"SVCX_STATIC_ROOT": str(static_root)})
    try:
        assert_admin_static_served(base)
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{base}/static/admin/css/nothing.css", timeout=30)
        assert missing.value.code == 404
    finally:
        process.terminate()
        process.wait(timeout=20)
