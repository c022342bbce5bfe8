"""An https endpoint: the attempt connects to the checked address, names the URL's host in the TLS
handshake (SNI) and verifies the certificate for it; a certificate for another name, or from an
authority nobody trusts, fails the attempt and nothing is sent. A receiver on 127.0.0.1 with a
certificate made by the test, trusted through SSL_CERT_FILE."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.webhooks.test_guard import fake_resolver
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create, webhook_event_emit

pytestmark = [pytest.mark.django_db]


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(subject: str, issuer: str, key: Any, signer: Any, *, ca: bool, dns: str | None = None) -> Any:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if dns is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _pem(item: Any) -> bytes:
    if hasattr(item, "private_bytes"):
        return bytes(
            item.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return bytes(item.public_bytes(serialization.Encoding.PEM))


@pytest.fixture
def tls_receiver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """An https receiver on 127.0.0.1 whose certificate names hooks.tls.test, issued by an
    authority this process trusts (SSL_CERT_FILE); it records the SNI name of each handshake."""
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("svcx test CA", "svcx test CA", ca_key, ca_key, ca=True)
    leaf = _certificate("hooks.tls.test", "svcx test CA", leaf_key, ca_key, ca=False, dns="hooks.tls.test")
    (tmp_path / "ca.pem").write_bytes(_pem(ca))
    (tmp_path / "leaf.pem").write_bytes(_pem(leaf) + _pem(leaf_key))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    seen: dict[str, Any] = {"sni": [], "bodies": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the name http.server calls
            seen["bodies"].append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "leaf.pem")
    context.sni_callback = lambda sock, name, ctx: seen["sni"].append(name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    seen["port"] = server.server_port
    yield seen
    server.shutdown()
    server.server_close()


def attempt_to(acme: Any, url: str) -> Any:
    endpoint = webhook_endpoint_create(organization=acme, url=url, events=["job.succeeded"]).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1"})
    return webhook_delivery_attempt(delivery_id=WebhookDelivery.objects.get(endpoint=endpoint).pk)


def test_an_https_attempt_verifies_the_certificate_for_the_urls_host_at_the_checked_address(
    acme: Any, tls_receiver: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_resolver(monkeypatch, {"hooks.tls.test": ["127.0.0.1"]})

    attempt = attempt_to(acme, f"https://hooks.tls.test:{tls_receiver['port']}/hooks")

    assert (attempt.outcome, attempt.response_code, attempt.error) == ("succeeded", 204, "")
    assert tls_receiver["sni"] == ["hooks.tls.test"]
    assert len(tls_receiver["bodies"]) == 1


def test_a_certificate_for_another_name_fails_the_attempt_and_nothing_is_sent(
    acme: Any, tls_receiver: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_resolver(monkeypatch, {"other.tls.test": ["127.0.0.1"]})

    attempt = attempt_to(acme, f"https://other.tls.test:{tls_receiver['port']}/hooks")

    assert (attempt.outcome, attempt.response_code) == ("failed", None)
    assert attempt.error.startswith("TLS certificate not valid: Hostname mismatch")
    assert tls_receiver["bodies"] == []


def test_a_certificate_from_an_authority_nobody_trusts_fails_the_attempt(
    acme: Any, tls_receiver: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_resolver(monkeypatch, {"hooks.tls.test": ["127.0.0.1"]})
    (tmp_path / "empty.pem").write_text("")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "empty.pem"))

    attempt = attempt_to(acme, f"https://hooks.tls.test:{tls_receiver['port']}/hooks")

    assert attempt.error.startswith("TLS certificate not valid: unable to get local issuer certificate")
    assert tls_receiver["bodies"] == []
