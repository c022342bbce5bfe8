"""The guides at /docs/: every bash and python example in `docs/*.md` runs against a live
server (gunicorn and a real Celery worker), so the docs cannot rot; they render as HTML."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from django.conf import settings
from django.test import Client

from svcx.guides import GUIDE_SLUGS, guides_dir
from tests.browser import screenshot
from tests.conftest import ROOT, WorkerProcess, database_url_for_children, start_worker, text_pdf
from tests.conversion.engine.pdfs import Image, Op, Text, make_pdf
from tests.factories import make_key, make_org
from webhooks.signing import signature_header

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
RUNNABLE = ("bash", "python")

# An example without an `output` block must succeed: its curl fails on an HTTP error.
BASH_PRELUDE = """set -euo pipefail
curl() { command curl --silent --show-error %s "$@"; }
"""


@dataclass(frozen=True)
class Example:
    guide: str
    number: int
    language: str
    code: str
    output: str | None  # what it prints; `...` stands for any text

    def __str__(self) -> str:
        return f"docs/{self.guide}.md example {self.number} ({self.language})"


def examples_of(slug: str) -> list[Example]:
    """The runnable blocks of a guide, each with the `output` block that follows it, if any."""
    blocks = [(m.group(1), m.group(2)) for m in FENCE.finditer((guides_dir() / f"{slug}.md").read_text())]
    found: list[Example] = []
    for index, (language, code) in enumerate(blocks):
        if language not in RUNNABLE:
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        output = following[1] if following is not None and following[0] == "output" else None
        found.append(Example(slug, len(found) + 1, language, code, output))
    return found


def matches(pattern: str, text: str) -> bool:
    def tidy(value: str) -> str:
        return "\n".join(line.rstrip() for line in value.replace("\r", "").strip().splitlines())

    regex = ".*?".join(re.escape(part) for part in tidy(pattern).split("..."))
    return re.fullmatch(regex, tidy(text), re.DOTALL) is not None


def sample_documents(folder: Path) -> None:
    """`document.pdf` (3 text pages with an outline), `locked.pdf` (password `s3cret`) and
    `figure.pdf` (a page with a figure 228 x 160 points and its caption)."""
    picture: list[Op] = [Text(72, 720, "The orchard was planted in the spring."), Image(72, 500, 300, 660)]
    make_pdf(folder / "figure.pdf", [[*picture, Text(72, 485, "Figure 1: The orchard in May", 9)]])
    document = text_pdf(folder / "plain.pdf", ["Alpha text on page one.", "Beta text on two.", "Gamma on three."])
    with pikepdf.open(document) as pdf:
        with pdf.open_outline() as outline:
            outline.root.extend(pikepdf.OutlineItem(f"Chapter {n}", n - 1) for n in (1, 2, 3))
        pdf.save(folder / "document.pdf")
        pdf.save(folder / "locked.pdf", encryption=pikepdf.Encryption(user="s3cret", owner="owner", R=6))
    document.unlink()


@pytest.fixture(scope="module")
def live_base(module_web: str) -> str:
    return module_web


@pytest.fixture
def reader(tmp_path: Path, live_base: str, session_worker: WorkerProcess) -> dict[str, Any]:
    """A newcomer's working directory and environment: the sample PDFs, the repository's
    `manage.py` and `.venv`, the service's address and a live and a test key."""
    organization = make_org("Reader", credits=1000)
    sample_documents(tmp_path)
    for name in ("manage.py", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {
        **os.environ,
        "SVCX_URL": live_base,
        "SVCX_KEY": make_key(organization).secret,
        "SVCX_TEST_KEY": make_key(organization, "test").secret,
        "DATABASE_URL": database_url_for_children(),
        "REDIS_URL": settings.REDIS_URL,
        "PYTHONDONTWRITEBYTECODE": "1",
        # The `svcx` command, as `pip install ./clients/python` puts it on a reader's PATH.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    return {"cwd": tmp_path, "env": env}


def run(example: Example, reader: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    if example.language == "bash":
        prelude = BASH_PRELUDE % ("" if example.output is not None else "--fail-with-body")
        command = ["bash", "-c", prelude + example.code]
    else:
        command = [sys.executable, "-c", example.code]
    return subprocess.run(
        command, cwd=reader["cwd"], env=reader["env"], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def jobs_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """A worker of the live keys' version 2 jobs, for the guides that run jobs. A test key's
    jobs (queue jobs_test) are left queued: the examples that cancel a job make it with a test
    key, so it is still there to cancel, never one that a worker has already finished."""
    with django_db_blocker.unblock():
        worker = start_worker(tmp_path_factory.mktemp("guide-jobs"), queues="jobs")
    yield worker
    worker.stop()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("slug", GUIDE_SLUGS)
def test_every_example_of_the_guide_runs_as_written(
    slug: str, reader: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    if slug in ("jobs", "python-sdk"):
        request.getfixturevalue("jobs_worker")
    examples = examples_of(slug)
    assert examples, f"docs/{slug}.md has no runnable example"

    for example in examples:
        result = run(example, reader)

        assert result.returncode == 0, f"{example} failed:\n{example.code}\nstdout:{result.stdout}\n{result.stderr}"
        if example.output is not None:
            assert matches(example.output, result.stdout), (
                f"{example} printed:\n{result.stdout}\nexpected:\n{example.output}"
            )


def test_the_node_check_of_the_webhooks_guide_accepts_what_the_service_signs() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the guide's JavaScript is run where it is")
    [snippet] = [m.group(2) for m in FENCE.finditer((guides_dir() / "webhooks.md").read_text()) if m.group(1) == "js"]
    body = (
        b'{"id":"evt_1","type":"job.succeeded","created":1767225600,"data":{"id":"job_1","title":"\xc3\xa9t\xc3\xa9"}}'
    )
    secret = "whsec_0123456789abcdefghijABCDEFGHIJ"
    now = int(time.time())
    driver = snippet + (
        "const [body, secret] = [Buffer.from(process.env.BODY, 'base64'), process.env.SECRET];\n"
        "for (const header of process.env.HEADERS.split('|')) {\n"
        "  try { console.log(JSON.stringify(verifySvcx(body, header, secret).data)); }\n"
        "  catch (error) { console.log('refused: ' + error.message); }\n"
        "}\n"
    )
    headers = [
        signature_header(secrets=[secret], timestamp=now, body=body),  # as the service signs it
        signature_header(secrets=["whsec_new", secret], timestamp=now, body=body),  # during a rotation
        signature_header(secrets=[secret], timestamp=now, body=body + b" "),  # another body
        signature_header(secrets=[secret], timestamp=now - 3600, body=body),  # an old one, replayed
        "t=x,v1=",
    ]
    env = {**os.environ, "BODY": base64.b64encode(body).decode(), "SECRET": secret, "HEADERS": "|".join(headers)}

    result = subprocess.run([node, "-e", driver], env=env, capture_output=True, text=True, timeout=60, check=False)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        '{"id":"job_1","title":"été"}',
        '{"id":"job_1","title":"été"}',
        "refused: no signature matches",
        "refused: signed too long ago",
        "refused: malformed Svcx-Signature",
    ]


def test_every_guide_in_docs_is_listed_and_every_listed_guide_exists() -> None:
    assert sorted(path.stem for path in guides_dir().glob("*.md")) == sorted(GUIDE_SLUGS)


def test_output_patterns_are_matched_exactly_apart_from_the_ellipsis() -> None:
    assert matches('{"id":"file_...","page_count":3}', '{"id":"file_ab12","page_count":3}\n')
    assert not matches('{"id":"file_...","page_count":3}', '{"id":"file_ab12","page_count":4}')
    assert not matches("200 True", "200 True\nmore")


def test_docs_index_links_every_guide_and_every_error_code(client: Client) -> None:
    text = client.get("/docs/").content.decode()

    for slug in GUIDE_SLUGS:
        assert f'href="/docs/{slug}"' in text


def test_a_guide_is_html_with_its_code_blocks_and_tables(client: Client) -> None:
    response = client.get("/docs/ledger")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode()
    assert "<title>The ledger and holds · svcx documentation</title>" in text
    assert '<pre><code class="language-python">' in text
    assert "<th><code>kind</code></th>" in text
    assert "```" not in text


def test_an_unknown_guide_is_the_envelope(client: Client) -> None:
    response = client.get("/docs/no-such-guide")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_endpoint"


@pytest.mark.django_db(transaction=True)
def test_the_docs_render_in_a_browser(live_server: Any, page: Any) -> None:
    page.goto(f"{live_server.url}/docs/")
    links = page.locator("ul.guides a")
    assert links.count() == len(GUIDE_SLUGS)
    assert links.first.inner_text() == "Quickstart"
    screenshot(page, "docs-index")

    links.first.click()
    page.wait_for_url("**/docs/quickstart")
    block = page.locator("pre code.language-bash").first
    assert "manage.py svcx org create" in block.inner_text()
    assert page.evaluate(
        "element => getComputedStyle(element).backgroundColor", page.locator("pre").first.element_handle()
    ) not in ("rgba(0, 0, 0, 0)", "transparent")
    assert page.locator("h1").inner_text() == "Quickstart"
    assert "`" not in page.locator("article").inner_text().replace("```", "")
    assert page.locator("article code", has_text="Accept: text/markdown").count() >= 1
    screenshot(page, "docs-quickstart")

    page.goto(f"{live_server.url}/docs/errors/insufficient_credits")  # its help names fields in backticks
    assert "`" not in page.locator("body").inner_text()
    assert page.locator("p code", has_text="credits_required").count() == 1
    screenshot(page, "docs-error-page")
