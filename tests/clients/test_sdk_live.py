"""The Python SDK (clients/python) against a live service: gunicorn and a real Celery worker.

Every operation answers its typed result; Markdown comes back as text; errors are raised with the
code of their envelope and bill nothing; and a conversion whose answer is lost on the way is
retried with the same Idempotency-Key, answered from the stored result and billed once."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from svcx_client import (
    AuthenticationError,
    Client,
    Conversion,
    DocumentError,
    InvalidRequestError,
    MarkdownConversion,
    NotFoundError,
    PaymentRequiredError,
)

from billing.models import LedgerEntry
from billing.usage import usage_copy
from tests.conftest import WorkerProcess, text_pdf
from tests.conversion.engine.pdfs import Image, Text, make_pdf
from tests.factories import make_key, make_org

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def three(tmp_path: Path) -> Path:
    return text_pdf(
        tmp_path / "three.pdf", ["Alpha text on the first page.", "Beta text on page two.", "Gamma on three."]
    )


def test_every_operation_answers_its_typed_result(module_web: str, session_worker: WorkerProcess, three: Path) -> None:
    org = make_org(credits=100)

    with Client(make_key(org).secret, base_url=module_web) as svcx:
        markdown = svcx.convert(three, format="md", pages="1-2")
        stored = svcx.upload(three)
        read = svcx.get_file(stored.id)
        content = svcx.file_content(stored.id)
        by_id = svcx.convert(file_id=stored.id, pages="3", metadata={"job": "j-1"})
        again = svcx.convert(three.read_bytes(), format="markdown", pages="1-2")
        inspection = svcx.inspect(three)
        toc = svcx.toc(file_id=stored.id)
        engines = svcx.engines()
        engine = svcx.engine(engines.data[0].id)
        account = svcx.account()
        ledger = list(svcx.iter_ledger(page_size=2))  # five rows: three pages of two
        deleted = svcx.delete_file(stored.id)
        with pytest.raises(NotFoundError) as gone:
            svcx.get_file(stored.id)
        usage_copy()
        records = list(svcx.iter_usage_records())
        usage = svcx.usage()
        health = svcx.health()

    assert isinstance(markdown, MarkdownConversion)
    assert markdown.markdown.startswith("<!-- page 1 -->")
    assert "Alpha text on the first page." in markdown.markdown
    assert "Beta text on page two." in markdown.markdown
    assert "Gamma" not in markdown.markdown
    assert (markdown.pages_billed, markdown.credits_billed, markdown.cached) == (2, 2, False)
    assert markdown.request_id
    assert markdown.request_id.startswith("req_")
    assert markdown.answer.rate_limits["requests"].limit > 0
    assert (stored.filename, stored.page_count, stored.size) == ("three.pdf", 3, three.stat().st_size)
    assert read.sha256 == stored.sha256
    assert content == three.read_bytes()
    assert isinstance(by_id, Conversion)
    assert [p.page for p in by_id.pages] == [3]
    assert "Gamma on three." in by_id.markdown
    assert (by_id.credits_billed, by_id.cached, by_id.metadata, by_id.page_count) == (1, False, {"job": "j-1"}, 3)
    assert (again.markdown, again.cached, again.credits_billed) == (markdown.markdown, True, 0)
    assert (inspection.page_count, inspection.password_required, inspection.encrypted) == (3, False, False)
    assert [p.has_text_layer for p in inspection.pages] == [True, True, True]
    assert (toc.entries, toc.page_count) == ([], 3)
    assert engine == engines.data[0]
    assert engine.default
    assert (account.id, account.environment) == (org.id, "live")
    assert (account.credits.balance, account.credits.held, account.credits.available) == (97, 0, 97)
    assert sorted(e.kind for e in ledger) == ["capture", "capture", "grant", "hold", "hold"]
    assert sum(e.balance_change for e in ledger) == 97
    assert (deleted.id, deleted.deleted) == (stored.id, True)
    assert (gone.value.status, gone.value.code) == (404, "file_not_found")
    assert sum(r.credits for r in records) == 3
    assert {"/v1/convert/raw", "/v1/convert", "/v1/files/raw", "/v1/inspect/raw", "/v1/toc"} <= {
        r.endpoint for r in records
    }
    assert sum(day.credits for day in usage.days) == 3
    assert health["status"] == "ok"


def test_figures_are_cropped_and_downloaded(module_web: str, session_worker: WorkerProcess, tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "atlas.pdf", [[Text(72, 720, "An orchard in spring."), Image(72, 500, 300, 660)]])
    with Client(make_key(make_org(credits=10)).secret, base_url=module_web) as svcx:
        result = svcx.convert(pdf, figures="crop")
        (figure,) = [e for e in result.pages[0].elements if e["type"] == "figure"]
        picture = svcx.file_content(figure["image"]["file_id"])
        stored = svcx.get_file(figure["image"]["file_id"])

    assert f"![]({figure['image']['file_id']})" in result.markdown
    assert picture[:8] == b"\x89PNG\r\n\x1a\n"
    assert (stored.filename, stored.size, stored.page_count) == (
        "document-p1-fig1.png",
        len(picture),
        None,
    )  # sent raw: no name


def test_errors_are_raised_with_their_envelope_and_bill_nothing(
    module_web: str, session_worker: WorkerProcess, three: Path
) -> None:
    poor, rich = make_org("Poor"), make_org("Rich", credits=10)

    with Client(make_key(poor).secret, base_url=module_web) as svcx, pytest.raises(PaymentRequiredError) as unpaid:
        svcx.convert(three)
    with Client(make_key(rich).secret, base_url=module_web) as svcx:
        with pytest.raises(InvalidRequestError) as beyond:
            svcx.convert(three, pages="9")
        with pytest.raises(DocumentError) as not_pdf:
            svcx.convert(b"this is not a PDF at all")
        with pytest.raises(NotFoundError) as no_engine:
            svcx.engine("no-such-engine")
    with (
        Client("svcx_sk_live_" + "0" * 43 + "_000000", base_url=module_web) as svcx,
        pytest.raises(AuthenticationError) as bad_key,
    ):
        svcx.account()

    error = unpaid.value
    assert (error.status, error.type, error.code) == (402, "payment_required_error", "insufficient_credits")
    assert error.details["credits_required"] == 3
    assert error.details["credits_available"] == 0
    assert error.request_id
    assert error.request_id.startswith("req_")
    assert error.doc_url
    assert error.doc_url.endswith("/errors/insufficient_credits")
    assert (beyond.value.status, beyond.value.code) == (422, "page_range_out_of_bounds")
    assert (not_pdf.value.status, not_pdf.value.type, not_pdf.value.code) == (422, "document_error", "pdf_invalid")
    assert (no_engine.value.code, no_engine.value.param) == ("engine_not_found", "engine_id")
    assert (bad_key.value.status, bad_key.value.code) == (401, "invalid_api_key")
    assert not any(e.attempts > 1 for e in (error, beyond.value, not_pdf.value, no_engine.value, bad_key.value))
    assert list(LedgerEntry.objects.filter(organization=poor).values_list("kind", flat=True)) == []
    assert list(LedgerEntry.objects.filter(organization=rich).values_list("kind", flat=True)) == ["grant"]


@dataclass
class Forwarded:
    idempotency_key: str | None
    status: int
    replayed: bool


class LosingProxy:
    """Forwards each request to the service and, for the first `lose` of them, drops the
    service's answer: the connection closes as if the network failed after the work was done."""

    def __init__(self, upstream: str, *, lose: int) -> None:
        self.lose = lose
        self.forwarded: list[Forwarded] = []
        target = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                connection = http.client.HTTPConnection(target.hostname or "", target.port, timeout=130)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                connection.request("POST", self.path, body=body, headers=headers)
                answer = connection.getresponse()
                content = answer.read()
                connection.close()
                proxy.forwarded.append(
                    Forwarded(
                        self.headers.get("Idempotency-Key"),
                        answer.status,
                        answer.getheader("Idempotent-Replayed") == "true",
                    )
                )
                if proxy.lose > 0:
                    proxy.lose -= 1
                    self.close_connection = True
                    return
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def losing_proxy(module_web: str) -> Iterator[LosingProxy]:
    proxy = LosingProxy(module_web, lose=1)
    yield proxy
    proxy.close()


def test_a_conversion_whose_answer_was_lost_is_retried_and_billed_once(
    module_web: str, losing_proxy: LosingProxy, session_worker: WorkerProcess, three: Path
) -> None:
    org = make_org(credits=50)

    with Client(make_key(org).secret, base_url=losing_proxy.url) as svcx:
        result = svcx.convert(three, pages="1-2")

    first, retry = losing_proxy.forwarded
    assert first.idempotency_key
    assert first.idempotency_key == retry.idempotency_key
    assert (first.status, first.replayed) == (200, False)
    assert (retry.status, retry.replayed) == (200, True)
    # The stored answer of the first attempt, not a second conversion (nor a free cache hit).
    assert (result.answer.idempotent_replayed, result.cached, result.credits_billed) == (True, False, 2)
    captures = LedgerEntry.objects.filter(organization=org, kind=LedgerEntry.Kind.CAPTURE)
    assert [c.credits for c in captures] == [-2]
    with Client(make_key(org).secret, base_url=module_web) as direct:
        assert direct.account().credits.balance == 48
