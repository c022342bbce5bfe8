"""Webhooks in the console: owners and admins add endpoints (the signing secret shown once),
disable, enable, rotate, delete and resend, each audited with the person; members are refused;
another organization's endpoints are not found; a URL the SSRF guard refuses is a form error."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from accounts.models import AuditEvent
from tests.accounts.test_guards import _address
from tests.console.conftest import make_person, signed_in
from tests.factories import make_org
from tests.webhooks.receiver import Receiver, running
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.secrets import secret_open
from webhooks.services import webhook_endpoint_create, webhook_event_emit

pytestmark = [pytest.mark.django_db]
SECRET = re.compile(r"whsec_[0-9A-Za-z]{32}")


@pytest.fixture
def receiver() -> Any:
    yield from running(Receiver())


def add(client: Client, org: Any, **fields: Any) -> Any:
    page = client.get(f"/console/{org.id}/webhooks/new/").content.decode()
    nonce = re.search(r'name="nonce" value="([^"]+)"', page).group(1)
    data = {"url": "http://127.0.0.1:9/hooks", "events": ["job.succeeded", "job.failed"], "nonce": nonce, **fields}
    return client.post(f"/console/{org.id}/webhooks/new/", data)


def test_an_owner_adds_an_endpoint_and_sees_its_secret_once(acme: Any, owner: Any) -> None:
    client = signed_in(owner, _address())

    response = add(client, acme, description="orders service")

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    [secret] = SECRET.findall(response.content.decode())
    endpoint = WebhookEndpoint.objects.get(organization=acme)
    assert (endpoint.url, endpoint.events, endpoint.description, endpoint.created_by) == (
        "http://127.0.0.1:9/hooks",
        ["job.succeeded", "job.failed"],
        "orders service",
        owner,
    )
    assert secret_open(sealed=endpoint.secret_sealed, endpoint_id=endpoint.id) == secret
    assert list(AuditEvent.objects.filter(action="webhook.create").values_list("actor", "target")) == [
        (owner.pk, endpoint.id)
    ]
    listing = client.get(f"/console/{acme.id}/webhooks/").content.decode()
    detail = client.get(f"/console/{acme.id}/webhooks/{endpoint.id}/").content.decode()
    assert SECRET.findall(listing) == SECRET.findall(detail) == []  # never shown again
    assert endpoint.secret_hint in listing
    assert endpoint.secret_hint in detail
    assert "orders service" in listing


def test_sending_the_add_form_again_adds_no_second_endpoint(acme: Any, owner: Any) -> None:
    client = signed_in(owner, _address())
    page = client.get(f"/console/{acme.id}/webhooks/new/").content.decode()
    form = {
        "url": "http://127.0.0.1:9/hooks",
        "events": ["job.failed"],
        "nonce": re.search(r'name="nonce" value="([^"]+)"', page).group(1),
    }

    client.post(f"/console/{acme.id}/webhooks/new/", form)
    again = client.post(f"/console/{acme.id}/webhooks/new/", form, follow=True)

    assert WebhookEndpoint.objects.count() == 1
    assert "That endpoint was already created; its signing secret was shown once." in again.content.decode()
    assert SECRET.findall(again.content.decode()) == []


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("https://127.0.0.1/hooks", "Webhooks cannot be sent there: 127.0.0.1 is a loopback address."),
        ("https://10.0.0.7/hooks", "Webhooks cannot be sent there: 10.0.0.7 is a private address."),
        ("https://[::ffff:127.0.0.1]/", "Webhooks cannot be sent there: ::ffff:127.0.0.1 is a loopback address."),
        ("https://localhost/hooks", "Webhooks cannot be sent there: localhost resolves to"),
        ("http://93.184.216.34/hooks", "The URL must use https."),
    ],
)
def test_a_url_the_guard_refuses_is_an_error_on_the_url_field_and_nothing_is_added(
    acme: Any, owner: Any, settings: Any, url: str, error: str
) -> None:
    settings.SVCX_WEBHOOKS_ALLOW_PRIVATE = False
    client = signed_in(owner, _address())

    response = add(client, acme, url=url)

    assert response.status_code == 200
    text = response.content.decode().replace("&#x27;", "'")
    assert re.search(r'<ul class="errorlist" id="id_url_error"><li>' + re.escape(error), text)
    assert not WebhookEndpoint.objects.exists()
    assert not AuditEvent.objects.filter(action="webhook.create").exists()


def test_an_endpoint_needs_an_event(acme: Any, owner: Any) -> None:
    response = add(signed_in(owner, _address()), acme, events=[])

    assert "Choose at least one event." in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_members_are_refused_every_webhook_page_and_see_no_link_to_them(acme: Any, member: Any) -> None:
    endpoint = webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/x", events=["job.failed"]).endpoint
    webhook_event_emit(organization=acme, type="job.failed", data={})
    delivery = WebhookDelivery.objects.get()
    client = signed_in(member, _address())
    base = f"/console/{acme.id}/webhooks"

    gets = [f"{base}/", f"{base}/new/", f"{base}/{endpoint.id}/", f"{base}/{endpoint.id}/delete/"]
    gets.append(f"{base}/{endpoint.id}/deliveries/{delivery.pk}/")
    posts = [f"{base}/new/", *(f"{base}/{endpoint.id}/{action}/" for action in ("disable", "rotate", "delete"))]
    posts.append(f"{base}/{endpoint.id}/deliveries/{delivery.pk}/resend/")

    for url in gets:
        response = client.get(url)
        assert response.status_code == 403, url
        assert "your role (member) cannot do this" in response.content.decode()
    for url in posts:
        assert (
            client.post(
                url, {"overlap": "immediate", "url": "http://127.0.0.1:9/y", "events": "job.failed"}
            ).status_code
            == 403
        ), url
    assert f'href="{base}/"' not in client.get(f"/console/{acme.id}/").content.decode()
    endpoint.refresh_from_db()
    assert endpoint.enabled
    assert WebhookEndpoint.objects.count() == 1
    assert not WebhookDelivery.objects.filter(resend_requested=True).exists()
    assert not AuditEvent.objects.filter(action__startswith="webhook.", actor=member).exists()


def test_another_organizations_endpoints_are_not_found(acme: Any, owner: Any) -> None:
    globex = make_org("Globex")
    theirs = webhook_endpoint_create(organization=globex, url="http://127.0.0.1:9/g", events=["job.failed"]).endpoint
    client = signed_in(owner, _address())

    for url in (
        f"/console/{acme.id}/webhooks/{theirs.id}/",
        f"/console/{acme.id}/webhooks/{theirs.id}/delete/",
        f"/console/{globex.id}/webhooks/",
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(f"/console/{acme.id}/webhooks/{theirs.id}/disable/").status_code == 404
    assert WebhookEndpoint.objects.get(pk=theirs.pk).enabled
    # Their delivery under an endpoint of Acme's is no more found.
    mine = webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/a", events=["job.failed"]).endpoint
    webhook_event_emit(organization=globex, type="job.failed", data={})
    their_delivery = WebhookDelivery.objects.get(endpoint=theirs)
    deliveries = f"/console/{acme.id}/webhooks/{mine.id}/deliveries/{their_delivery.pk}/"
    assert client.get(deliveries).status_code == 404
    assert client.post(f"{deliveries}resend/").status_code == 404
    assert not WebhookDelivery.objects.get(pk=their_delivery.pk).resend_requested


def test_an_admin_disables_enables_rotates_and_deletes_each_audited(acme: Any) -> None:
    admin = make_person(acme, "ada@acme.test", "admin")
    endpoint = webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/x", events=["job.failed"]).endpoint
    client = signed_in(admin, _address())
    page = f"/console/{acme.id}/webhooks/{endpoint.id}/"

    disabled = client.post(f"{page}disable/", follow=True).content.decode()
    assert "Disabled http://127.0.0.1:9/x: no events are sent to it until it is enabled." in disabled
    assert "disabled by ada@acme.test" in disabled
    assert "Disable</button>" not in disabled
    enabled = client.post(f"{page}enable/", follow=True).content.decode()
    assert "Enabled http://127.0.0.1:9/x" in enabled
    again = client.post(f"{page}enable/", follow=True).content.decode()
    assert "The endpoint is enabled already." in again

    rotated = client.post(f"{page}rotate/", {"overlap": "24h"})
    [secret] = SECRET.findall(rotated.content.decode())
    assert "no-store" in rotated["Cache-Control"]
    endpoint.refresh_from_db()
    assert secret_open(sealed=endpoint.secret_sealed, endpoint_id=endpoint.id) == secret
    assert endpoint.previous_secret_expires_at is not None
    assert "The previous secret also signs each delivery until" in rotated.content.decode()

    confirm = client.get(f"{page}delete/")
    assert "Delete the webhook endpoint?" in confirm.content.decode()
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()  # asking changed nothing
    deleted = client.post(f"{page}delete/", follow=True).content.decode()
    assert "Deleted the endpoint http://127.0.0.1:9/x and its delivery log." in deleted
    assert not WebhookEndpoint.objects.exists()
    assert list(
        AuditEvent.objects.filter(action__startswith="webhook.", actor=admin)
        .order_by("pk")
        .values_list("action", flat=True)
    ) == ["webhook.disable", "webhook.enable", "webhook.rotate_secret", "webhook.delete"]


def test_the_delivery_log_shows_each_event_and_a_resend_makes_a_new_attempt(
    acme: Any, owner: Any, receiver: Receiver
) -> None:
    receiver.answers = [500]
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.failed"]).endpoint
    event = webhook_event_emit(organization=acme, type="job.failed", data={"id": "job_7"})
    delivery = WebhookDelivery.objects.get()
    webhook_delivery_attempt(delivery_id=delivery.pk)  # 500: retried later
    client = signed_in(owner, _address())

    log = client.get(f"/console/{acme.id}/webhooks/{endpoint.id}/").content.decode()
    row = re.search(rf'<tr data-event="{event.id}">(.*?)</tr>', log, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", " ", cell).split() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[0] == [event.id]
    assert cells[1] == ["job.failed"]
    assert cells[2] == ["pending"]
    assert cells[3:6] == [["1"], ["500"], [str(WebhookDelivery.objects.get().last_duration_ms), "ms"]]
    assert cells[7] != ["–"]  # the next attempt's time

    resent = client.post(
        f"/console/{acme.id}/webhooks/{endpoint.id}/deliveries/{delivery.pk}/resend/", {"back": "delivery"}
    )
    assert resent["Location"] == f"/console/{acme.id}/webhooks/{endpoint.id}/deliveries/{delivery.pk}/"
    assert webhook_delivery_attempt(delivery_id=delivery.pk) is not None  # what the queued task does

    page = client.get(resent["Location"]).content.decode()
    assert re.search(r'<tr data-attempt="2">\s*<td class="num">2 \(resend\)</td>', page)
    assert re.search(r'<tr data-attempt="1">\s*<td class="num">1</td>', page)
    assert "job_7" in page  # the body as sent
    assert [(a.number, a.manual, a.response_code) for a in WebhookAttempt.objects.order_by("number")] == [
        (1, False, 500),
        (2, True, 200),
    ]
    assert list(AuditEvent.objects.filter(action="webhook.resend").values_list("actor", "target")) == [
        (owner.pk, event.id)
    ]
