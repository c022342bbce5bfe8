"""Where webhooks may go (SSRF): with SVCX_WEBHOOKS_ALLOW_PRIVATE off, as in production, an
endpoint is refused on save, and an attempt refused when it is made, for a URL that is not https
or whose host resolves to a loopback, private, link-local, multicast, reserved or unspecified
address (IPv4 or IPv6, IPv4-mapped included); an attempt connects to the address that was checked,
never to a second resolution of the name."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from django.utils import timezone

from tests.webhooks.receiver import Receiver
from webhooks.delivery import webhook_delivery_attempt
from webhooks.errors import WebhookUrlRefused
from webhooks.guard import address_refusal, endpoint_url_check, target_resolve
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create, webhook_event_emit

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def production(settings: Any) -> None:
    settings.SVCX_WEBHOOKS_ALLOW_PRIVATE = False


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("https://127.0.0.1/hooks", "127.0.0.1 is a loopback address"),
        ("https://127.8.9.10/", "127.8.9.10 is a loopback address"),
        ("https://10.1.2.3/hooks", "10.1.2.3 is a private address"),
        ("https://172.16.5.4/", "172.16.5.4 is a private address"),
        ("https://192.168.0.10:8443/x", "192.168.0.10 is a private address"),
        ("https://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("https://0.0.0.0/", "0.0.0.0 is the unspecified address"),
        ("https://224.0.0.1/", "224.0.0.1 is a multicast address"),
        ("https://100.64.0.1/", "100.64.0.1 is not a public address"),
        ("https://240.0.0.1/", "240.0.0.1 is a private address"),
        ("https://[::1]/hooks", "::1 is a loopback address"),
        ("https://[::]/", ":: is the unspecified address"),
        ("https://[::ffff:127.0.0.1]/hooks", "::ffff:127.0.0.1 is a loopback address"),
        ("https://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1 is a private address"),
        ("https://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 is a link-local address"),
        ("https://[2002:7f00:1::]/", "2002:7f00:1:: is a loopback address"),  # 6to4 of 127.0.0.1
        ("https://[fe80::1]/", "fe80::1 is a link-local address"),
        ("https://[fc00::1]/", "fc00::1 is a private address"),
        ("https://[ff02::1]/", "ff02::1 is a multicast address"),
        ("https://localhost/hooks", "localhost resolves to 127.0.0.1, which is a loopback address"),
        # Other spellings of 127.0.0.1: judged by the address they resolve to, not by their text.
        ("https://2130706433/", "2130706433 resolves to 127.0.0.1, which is a loopback address"),
        ("https://0x7f.0.0.1/", "0x7f.0.0.1 resolves to 127.0.0.1, which is a loopback address"),
        ("https://127.1/", "127.1 resolves to 127.0.0.1, which is a loopback address"),
    ],
)
def test_an_address_that_is_not_public_is_refused_on_save(production: None, url: str, refusal: str) -> None:
    with pytest.raises(WebhookUrlRefused) as refused:
        endpoint_url_check(url)

    assert str(refused.value) == f"Webhooks cannot be sent there: {refusal}."


def test_a_name_that_resolves_to_loopback_is_refused_whichever_address_it_has(production: None) -> None:
    # localhost has 127.0.0.1 and, on most machines, ::1: one non-public address refuses the name.
    with pytest.raises(WebhookUrlRefused, match=r"localhost resolves to (127\.0\.0\.1|::1), which is a loopback"):
        target_resolve("https://localhost:8443/hooks")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://203.0.113.7/hooks", "The URL must use https."),
        ("ftp://hooks.example.com/", "The URL must start with https://."),
        ("https://user:pw@93.184.216.34/", "The URL may not contain a user name or password."),
        ("https:///hooks", "The URL has no host."),
        ("https://93.184.216.34:99999/", "The URL is not valid (Port out of range 0-65535)."),
        ("https://93.184.216.34/a b", "The URL contains spaces or control characters."),
        ("https://" + "a" * 2050 + ".com/", "The URL is longer than 2048 characters."),
    ],
)
def test_a_url_that_is_not_https_or_carries_credentials_is_refused(production: None, url: str, message: str) -> None:
    with pytest.raises(WebhookUrlRefused) as refused:
        endpoint_url_check(url)

    assert str(refused.value) == message


def test_public_addresses_are_accepted_with_the_path_and_query_kept(production: None) -> None:
    target = target_resolve("https://93.184.216.34/svcx/hooks?source=svcx")
    six = target_resolve("https://[2606:4700:4700::1111]:8443/")

    assert (target.scheme, target.host, target.port, target.path, target.addresses) == (
        "https",
        "93.184.216.34",
        443,
        "/svcx/hooks?source=svcx",
        ("93.184.216.34",),
    )
    assert (six.host, six.port, six.path, six.addresses) == (
        "2606:4700:4700::1111",
        8443,
        "/",
        ("2606:4700:4700::1111",),
    )
    assert address_refusal("8.8.8.8") is None


def test_the_setting_lets_http_and_loopback_through_for_local_testing(settings: Any) -> None:
    settings.SVCX_WEBHOOKS_ALLOW_PRIVATE = True

    assert target_resolve("http://127.0.0.1:8080/hooks").addresses == ("127.0.0.1",)
    assert target_resolve("https://[::1]/").addresses == ("::1",)


def test_an_endpoint_refused_on_save_is_not_created(production: None, acme: Any) -> None:
    with pytest.raises(WebhookUrlRefused, match=r"169\.254\.169\.254 is a link-local address"):
        webhook_endpoint_create(organization=acme, url="https://169.254.169.254/", events=["job.succeeded"])

    assert not WebhookEndpoint.objects.exists()


def test_an_attempt_to_an_address_no_longer_allowed_is_refused_and_nothing_is_sent(
    settings: Any, acme: Any, receiver: Receiver
) -> None:
    # Saved while local addresses were allowed; the attempt is made under production's rule.
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.succeeded"]).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1"})
    settings.SVCX_WEBHOOKS_ALLOW_PRIVATE = False

    attempt = webhook_delivery_attempt(delivery_id=WebhookDelivery.objects.get(endpoint=endpoint).pk)

    assert attempt is not None
    assert (attempt.outcome, attempt.response_code, attempt.error) == (
        "failed",
        None,
        "The URL must use https.",
    )
    assert receiver.seen == []


def fake_resolver(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> list[str]:
    """Resolve each name of `answers` to its next address in turn (the last one from then on);
    numeric hosts as the system does. Returns the names asked for, in order."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in answers:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        queue = answers[host]
        address = queue.pop(0) if len(queue) > 1 else queue[0]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port or 0)))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return asked


def test_dns_rebinding_a_name_that_resolves_elsewhere_when_sent_is_refused_then(
    settings: Any, acme: Any, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SVCX_WEBHOOKS_ALLOW_PRIVATE = False
    # Public when the endpoint is saved, loopback by the time an attempt resolves it.
    asked = fake_resolver(monkeypatch, {"hooks.rebind.test": ["93.184.216.34", "127.0.0.1"]})
    endpoint = webhook_endpoint_create(
        organization=acme, url="https://hooks.rebind.test/svcx", events=["job.failed"]
    ).endpoint
    webhook_event_emit(organization=acme, type="job.failed", data={"id": "job_1"})

    attempt = webhook_delivery_attempt(delivery_id=WebhookDelivery.objects.get(endpoint=endpoint).pk)

    assert attempt is not None
    assert attempt.error == (
        "Webhooks cannot be sent there: hooks.rebind.test resolves to 127.0.0.1, which is a loopback address."
    )
    assert asked == ["hooks.rebind.test", "hooks.rebind.test"]  # checked on save, and again when sent
    assert receiver.seen == []


def test_an_attempt_connects_to_the_address_it_checked_never_resolving_the_name_again(
    acme: Any, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = int(receiver.url.split(":")[2].split("/")[0])
    # The check on save and the attempt's own check get 127.0.0.1; any later resolution would get
    # an address where nothing listens, so a connection made by name would fail.
    asked = fake_resolver(monkeypatch, {"hooks.pinned.test": ["127.0.0.1", "127.0.0.1", "192.0.2.1"]})
    endpoint = webhook_endpoint_create(
        organization=acme, url=f"http://hooks.pinned.test:{port}/hooks", events=["job.succeeded"]
    ).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1"})

    attempt = webhook_delivery_attempt(delivery_id=WebhookDelivery.objects.get(endpoint=endpoint).pk)

    assert attempt is not None
    assert (attempt.outcome, attempt.response_code) == ("succeeded", 200)
    assert asked == ["hooks.pinned.test", "hooks.pinned.test"]  # on save, then once for the attempt
    assert receiver.seen[0].headers["host"] == f"hooks.pinned.test:{port}"  # the name, as the URL says
    assert WebhookAttempt.objects.count() == 1
    assert WebhookDelivery.objects.get(endpoint=endpoint).delivered_at <= timezone.now()
