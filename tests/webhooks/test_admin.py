"""Webhooks in the admin: staff read endpoints, events and the delivery log with its attempts;
nothing there adds, changes or deletes them, and a signing secret is never shown (its hint is)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.factories import admin_url
from tests.webhooks.receiver import Receiver
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create, webhook_event_emit

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def staff(client: Client) -> Client:
    client.force_login(get_user_model().objects.create_superuser("staff", "staff@example.com", "pw"))
    return client


def test_staff_read_endpoints_events_and_attempts_without_any_secret_or_change(
    staff: Client, acme: Any, receiver: Receiver
) -> None:
    minted = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.succeeded"])
    event = webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1"})
    delivery = WebhookDelivery.objects.get()
    webhook_delivery_attempt(delivery_id=delivery.pk)
    endpoint = minted.endpoint

    pages = {
        "endpoints": staff.get("/admin/webhooks/webhookendpoint/"),
        "endpoint": staff.get(admin_url("webhooks_webhookendpoint", endpoint.id)),
        "events": staff.get("/admin/webhooks/webhookevent/"),
        "event": staff.get(admin_url("webhooks_webhookevent", event.id)),
        "deliveries": staff.get(f"/admin/webhooks/webhookdelivery/?endpoint__id__exact={endpoint.id}"),
        "delivery": staff.get(admin_url("webhooks_webhookdelivery", delivery.pk)),
        "organization": staff.get(admin_url("accounts_organization", acme.id)),
    }

    assert {name: page.status_code for name, page in pages.items()} == dict.fromkeys(pages, 200)
    text = {name: page.content.decode() for name, page in pages.items()}
    assert endpoint.url in text["endpoints"]
    assert endpoint.secret_hint in text["endpoint"]
    assert all(minted.secret not in body for body in text.values())
    assert "secret_sealed" not in text["endpoint"]
    assert event.id in text["events"]
    assert "job_1" in text["event"]
    assert "1 webhook delivery" in text["deliveries"]
    assert re.search(r'<td class="field-response_code">\s*<p>200</p>', text["delivery"])  # the attempt, inline
    assert f"/admin/webhooks/webhookendpoint/?organization__id__exact={acme.id}" in text["organization"]
    for model in ("webhookendpoint", "webhookevent", "webhookdelivery"):
        assert staff.get(f"/admin/webhooks/{model}/add/").status_code == 403
    assert 'name="_save"' not in text["endpoint"]
    assert 'value="delete_selected"' not in text["endpoints"]
    assert staff.post(admin_url("webhooks_webhookendpoint", endpoint.id, "delete")).status_code == 403
