"""Webhook services on real PostgreSQL, with attempts made in this process to a receiver on
127.0.0.1: events and their deliveries, the signature the SDK verifies, retries on a schedule
kept in PostgreSQL, disabling an endpoint that keeps failing (its owners mailed), resends,
rotation, the sweeper and the secrets at rest. The same through a real Celery worker:
test_worker.py."""

from __future__ import annotations

import json
import logging
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from svcx_client import WebhookSignatureError
from svcx_client.webhooks import verify

from svcx.logging import JsonFormatter
from tests.accounts.test_secrets_at_rest import _dump
from tests.webhooks.receiver import HANG, Receiver
from webhooks.delivery import retry_delay, webhook_deliveries_sweep, webhook_delivery_attempt, webhook_events_purge
from webhooks.errors import WebhookError
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.secrets import SecretUnreadable, secret_open
from webhooks.services import (
    MAX_ENDPOINTS,
    webhook_delivery_resend,
    webhook_endpoint_create,
    webhook_endpoint_disable,
    webhook_endpoint_enable,
    webhook_endpoint_rotate_secret,
    webhook_event_emit,
)

pytestmark = [pytest.mark.django_db]
EVERY = ["job.succeeded", "job.failed", "job.canceled"]


def delivery_of(endpoint: WebhookEndpoint, event: WebhookEvent | None = None) -> WebhookDelivery:
    deliveries = WebhookDelivery.objects.filter(endpoint=endpoint)
    return deliveries.get(event=event) if event is not None else deliveries.get()


def attempt_now(delivery: WebhookDelivery) -> WebhookAttempt | None:
    """Make the delivery due and attempt it here, as a worker would."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    return webhook_delivery_attempt(delivery_id=delivery.pk)


def test_an_event_is_recorded_and_delivered_to_each_enabled_endpoint_subscribed_to_its_type(
    acme: Any, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    succeeded = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.succeeded"]).endpoint
    every = webhook_endpoint_create(organization=acme, url=receiver.url + "/all", events=EVERY).endpoint
    failed_only = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.failed"]).endpoint
    off = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_endpoint_disable(endpoint=off)

    with django_capture_on_commit_callbacks() as queued:
        event = webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1", "pages": 3})

    assert event.id.startswith("evt_")
    assert len(event.id) == 28
    assert (event.type, event.data, event.organization_id) == ("job.succeeded", {"id": "job_1", "pages": 3}, acme.id)
    deliveries = WebhookDelivery.objects.filter(event=event)
    assert sorted(deliveries.values_list("endpoint_id", flat=True)) == sorted([succeeded.id, every.id])
    assert not WebhookDelivery.objects.filter(endpoint__in=[failed_only, off]).exists()
    for delivery in deliveries:
        assert (delivery.status, delivery.attempts) == ("pending", 0)
        assert delivery.give_up_at == event.created_at + timedelta(hours=24)
    assert len(queued) == 1  # the first attempts are queued once the transaction commits


def test_an_unknown_type_or_data_that_is_no_json_object_is_refused_and_nothing_recorded(acme: Any) -> None:
    with pytest.raises(WebhookError, match=r"unknown event type 'job\.started'"):
        webhook_event_emit(organization=acme, type="job.started", data={})
    with pytest.raises(WebhookError, match="data is a JSON object"):
        webhook_event_emit(organization=acme, type="job.failed", data=["x"])
    with pytest.raises(WebhookError, match="must be JSON"):
        webhook_event_emit(organization=acme, type="job.failed", data={"when": timezone.now()})

    assert not WebhookEvent.objects.exists()


def test_a_delivery_is_signed_as_documented_and_the_sdk_verifies_it(acme: Any, receiver: Receiver) -> None:
    minted = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.failed"])
    event = webhook_event_emit(organization=acme, type="job.failed", data={"id": "job_9", "error": {"code": "x"}})

    attempt = attempt_now(delivery_of(minted.endpoint))

    got = receiver.seen[0]
    assert verify(got.body, got.headers["svcx-signature"], minted.secret) == {
        "id": event.id,
        "type": "job.failed",
        "created": int(event.created_at.timestamp()),
        "data": {"id": "job_9", "error": {"code": "x"}},
    }
    assert got.path == "/hooks"
    assert got.headers["content-type"] == "application/json"
    assert got.headers["user-agent"] == "svcx-webhooks/1.0"
    assert got.headers["svcx-event-id"] == event.id
    assert got.headers["svcx-delivery-attempt"] == "1"
    t = int(got.headers["svcx-signature"].split(",")[0].removeprefix("t="))
    assert abs(time.time() - t) < 60  # signed when sent
    with pytest.raises(WebhookSignatureError):
        verify(got.body, got.headers["svcx-signature"], "whsec_another")
    assert attempt is not None
    assert (attempt.number, attempt.outcome, attempt.response_code, attempt.response_prefix) == (
        1,
        "succeeded",
        200,
        '{"ok": true}',
    )
    assert attempt.duration_ms is not None
    assert attempt.duration_ms >= 0
    delivery = delivery_of(minted.endpoint)
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at, delivery.last_response_code) == (
        "succeeded",
        1,
        None,
        200,
    )


def test_a_failed_attempt_is_retried_with_backoff_until_the_receiver_answers_2xx(acme: Any, receiver: Receiver) -> None:
    receiver.answers = [500, 502]
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.canceled", data={"id": "job_1"})
    delivery = delivery_of(endpoint)

    first = webhook_delivery_attempt(delivery_id=delivery.pk)
    assert first is not None
    pending = delivery_of(endpoint)
    # Retried after a random half of 30 s to all of it (SVCX_WEBHOOKS_RETRY_FIRST), not before.
    wait = (pending.next_attempt_at - first.created_at).total_seconds()
    assert 14 <= wait <= 30.5, wait
    assert (pending.status, pending.attempts, pending.last_response_code) == ("pending", 1, 500)
    assert webhook_delivery_attempt(delivery_id=delivery.pk) is None  # not due yet: nothing sent
    assert len(receiver.seen) == 1

    second = attempt_now(delivery)
    third = attempt_now(delivery)

    assert [(a.number, a.outcome, a.response_code) for a in WebhookAttempt.objects.order_by("number")] == [
        (1, "failed", 500),
        (2, "failed", 502),
        (3, "succeeded", 200),
    ]
    assert second is not None
    assert second.next_attempt_at is not None
    assert third is not None
    assert third.next_attempt_at is None
    assert first.response_prefix == "no"
    done = delivery_of(endpoint)
    assert (done.status, done.attempts, done.next_attempt_at) == ("succeeded", 3, None)
    assert [r.headers["svcx-delivery-attempt"] for r in receiver.seen] == ["1", "2", "3"]
    assert len({r.body for r in receiver.seen}) == 1  # the same event each time


def test_each_wait_is_a_quarter_of_the_events_age_within_its_floor_and_ceiling_with_jitter(settings: Any) -> None:
    settings.SVCX_WEBHOOKS_RETRY_FIRST = 30
    settings.SVCX_WEBHOOKS_RETRY_MAX = 7200

    # (the event's age at the failed attempt, the longest wait): 25% of the age, from 30 s to 2 h.
    for age, full in [(0, 30), (60, 30), (120, 30), (600, 150), (3600, 900), (28800, 7200), (86400, 7200)]:
        delays = [retry_delay(age) for _ in range(200)]
        assert all(full / 2 <= d <= full for d in delays), (age, min(delays), max(delays))
        assert max(delays) - min(delays) > full / 10  # spread, not one instant for every delivery


def first_attempt_after(outage: float, emitted: float) -> tuple[float, int]:
    """When an event emitted `emitted` s into an outage of `outage` s is first attempted after
    the outage (the schedule of retry_delay, each attempt failing while the outage lasts), and
    how many attempts it took."""
    at, attempts = emitted, 1
    while at < outage:
        at += retry_delay(at - emitted)
        attempts += 1
    return at, attempts


def test_after_an_outage_every_event_is_attempted_within_a_quarter_of_it_and_a_day_makes_about_50_attempts(
    settings: Any,
) -> None:
    settings.SVCX_WEBHOOKS_RETRY_FIRST = 30
    settings.SVCX_WEBHOOKS_RETRY_MAX = 7200

    for outage in (600, 3600, 6 * 3600):
        for emitted in (0, 5, 60, outage / 2, outage - 1):
            for _ in range(50):
                at, _attempts = first_attempt_after(outage, emitted)
                # docs/webhooks.md: within a quarter of the outage (at least the 30 s floor).
                assert at - outage <= max(30, (outage - emitted) / 4), (outage, emitted, at - outage)
    # A receiver down for the whole 24 hours: the waits grow exponentially, about 50 attempts.
    attempts = [first_attempt_after(86400, 0)[1] for _ in range(50)]
    assert min(attempts) >= 40, min(attempts)
    assert max(attempts) <= 60, max(attempts)


def test_a_retry_waits_a_share_of_the_events_age(acme: Any, receiver: Receiver) -> None:
    receiver.then = 503
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    event = webhook_event_emit(organization=acme, type="job.failed", data={"id": "job_1"})
    # An event an hour old (its receiver down since): its window is still open.
    WebhookEvent.objects.filter(pk=event.pk).update(created_at=timezone.now() - timedelta(hours=1))

    attempt = attempt_now(delivery_of(endpoint))

    assert attempt is not None
    wait = (delivery_of(endpoint).next_attempt_at - attempt.started_at).total_seconds()
    assert 450 <= wait <= 901, wait  # a random half to all of 25% of 3,600 s


def test_no_redirect_is_followed_and_only_a_prefix_of_the_answer_is_kept(acme: Any, receiver: Receiver) -> None:
    receiver.answers = [302]
    receiver.reply = b"x" * 5000
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.failed", data={})

    attempt = attempt_now(delivery_of(endpoint))

    assert attempt is not None
    assert (attempt.outcome, attempt.response_code, attempt.response_prefix) == ("failed", 302, "x" * 256)
    assert len(receiver.seen) == 1


def test_a_receiver_that_never_answers_is_cut_off_at_the_timeouts(settings: Any, acme: Any, receiver: Receiver) -> None:
    settings.SVCX_WEBHOOKS_CONNECT_TIMEOUT = 1
    settings.SVCX_WEBHOOKS_READ_TIMEOUT = 1
    receiver.answers = [HANG]
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.failed", data={})

    started = time.monotonic()
    attempt = attempt_now(delivery_of(endpoint))

    assert time.monotonic() - started < 2.5
    assert attempt is not None
    assert (attempt.outcome, attempt.response_code, attempt.error) == ("failed", None, "timed out")
    assert delivery_of(endpoint).status == "pending"


def test_a_delivery_failing_for_its_whole_window_disables_the_endpoint_and_mails_the_owners(
    acme: Any, receiver: Receiver, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    receiver.then = 503
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={})
    delivery = delivery_of(endpoint)
    attempt_now(delivery)
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).enabled
    # The event's 24 hours have passed: the next failure is the last.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(give_up_at=timezone.now())

    with django_capture_on_commit_callbacks(execute=True):
        last = attempt_now(delivery)

    assert last is not None
    assert last.next_attempt_at is None
    assert delivery_of(endpoint).status == "failed"
    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.disabled_reason) == (False, "an event could not be delivered for 24 hours")
    assert endpoint.disabled_at is not None
    assert len(mailoutbox) == 1
    mail = mailoutbox[0]
    assert sorted(mail.to) == ["olga@acme.test", "otto@acme.test"]  # the owners: not the admin, not members
    assert mail.subject == f"svcx: webhook endpoint {endpoint.url} was disabled"
    assert "an event could not be delivered for 24 hours" in mail.body
    assert f"/console/{acme.id}/webhooks/{endpoint.id}/" in mail.body
    # Disabled: a new event is not sent to it, and the sweeper leaves it alone.
    webhook_event_emit(organization=acme, type="job.succeeded", data={})
    assert WebhookDelivery.objects.filter(endpoint=endpoint).count() == 1


def test_too_many_events_in_a_row_failing_for_an_hour_disable_the_endpoint_unless_one_succeeds_between(
    settings: Any, acme: Any, receiver: Receiver, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SVCX_WEBHOOKS_DISABLE_AFTER = 3  # SVCX_WEBHOOKS_DISABLE_FAILING_FOR: its default, 1 h
    receiver.answers = [500, 500, 200, 500, 500]
    receiver.then = 500
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint

    def one_event() -> None:
        event = webhook_event_emit(organization=acme, type="job.failed", data={})
        with django_capture_on_commit_callbacks(execute=True):
            attempt_now(delivery_of(endpoint, event))

    started = timezone.now()
    for _ in range(5):  # 2 failures, a success, 2 failures: never 3 in a row
        one_event()
    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.failed_events) == (True, 2)
    assert endpoint.failing_since is not None
    assert endpoint.failing_since >= started
    assert mailoutbox == []

    for _ in range(2):  # 4 in a row, but over seconds: a busy endpoint's short outage is retried
        one_event()
    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.failed_events) == (True, 4)
    assert mailoutbox == []

    # The run began an hour ago: the next failure disables it.
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=timezone.now() - timedelta(minutes=61))
    one_event()

    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.disabled_reason) == (
        False,
        "3 events in a row failed over 60 minutes with no successful delivery between",
    )
    assert len(mailoutbox) == 1

    webhook_endpoint_enable(endpoint=endpoint)  # enabling starts a new run
    endpoint.refresh_from_db()
    assert (endpoint.failed_events, endpoint.failing_since) == (0, None)


def test_a_disabled_endpoint_waits_and_enabling_it_resumes_what_is_still_within_its_window(
    acme: Any, receiver: Receiver
) -> None:
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    fresh = webhook_event_emit(organization=acme, type="job.failed", data={"n": 1})
    stale = webhook_event_emit(organization=acme, type="job.failed", data={"n": 2})
    WebhookDelivery.objects.filter(event=stale).update(give_up_at=timezone.now() - timedelta(seconds=1))
    webhook_endpoint_disable(endpoint=endpoint)

    assert attempt_now(delivery_of(endpoint, fresh)) is None
    assert receiver.seen == []

    webhook_endpoint_enable(endpoint=endpoint)

    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.disabled_at, endpoint.failed_events) == (True, None, 0)
    assert delivery_of(endpoint, stale).status == "failed"
    assert delivery_of(endpoint, stale).last_error == "the retry window ended while the endpoint was disabled"
    assert webhook_delivery_attempt(delivery_id=delivery_of(endpoint, fresh).pk) is not None  # due at once
    assert json.loads(receiver.seen[0].body)["data"] == {"n": 1}
    with pytest.raises(WebhookError, match="enabled already"):
        webhook_endpoint_enable(endpoint=endpoint)


def test_a_resend_is_a_new_attempt_marked_as_such(acme: Any, receiver: Receiver, mailoutbox: Any) -> None:
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={})
    delivery = delivery_of(endpoint)
    attempt_now(delivery)

    resent = webhook_delivery_resend(delivery=delivery)
    again = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert (resent.status, resent.resend_requested) == ("pending", True)
    assert again is not None
    assert [(a.number, a.manual, a.outcome) for a in WebhookAttempt.objects.order_by("number")] == [
        (1, False, "succeeded"),
        (2, True, "succeeded"),
    ]
    assert [r.headers["svcx-event-id"] for r in receiver.seen] == [delivery.event_id] * 2
    assert delivery_of(endpoint).resend_requested is False


def test_a_failed_resend_after_the_window_ends_the_delivery_without_disabling_the_endpoint(
    acme: Any, receiver: Receiver, mailoutbox: Any
) -> None:
    receiver.then = 500
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={})
    delivery = delivery_of(endpoint)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status="failed", give_up_at=timezone.now(), next_attempt_at=None
    )

    webhook_delivery_resend(delivery=delivery)
    attempt = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert attempt is not None
    assert (attempt.manual, attempt.outcome) == (True, "failed")
    assert delivery_of(endpoint).status == "failed"
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).enabled
    assert mailoutbox == []
    webhook_endpoint_disable(endpoint=endpoint)
    with pytest.raises(WebhookError, match="the endpoint is disabled: enable it to resend"):
        webhook_delivery_resend(delivery=delivery)


def test_a_rotation_with_an_overlap_signs_with_both_secrets_then_only_the_new_one(
    acme: Any, receiver: Receiver
) -> None:
    minted = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY)
    rotated = webhook_endpoint_rotate_secret(endpoint=minted.endpoint, overlap="24h")
    webhook_event_emit(organization=acme, type="job.succeeded", data={})
    attempt_now(delivery_of(minted.endpoint))

    got = receiver.seen[0]
    assert rotated.secret != minted.secret
    assert got.headers["svcx-signature"].count("v1=") == 2
    assert verify(got.body, got.headers["svcx-signature"], rotated.secret)
    assert verify(got.body, got.headers["svcx-signature"], minted.secret)  # the receiver may not have changed yet

    final = webhook_endpoint_rotate_secret(endpoint=minted.endpoint, overlap="immediate")
    delivery = delivery_of(minted.endpoint)
    webhook_delivery_resend(delivery=delivery)
    webhook_delivery_attempt(delivery_id=delivery.pk)

    latest = receiver.seen[1]
    assert latest.headers["svcx-signature"].count("v1=") == 1
    assert verify(latest.body, latest.headers["svcx-signature"], final.secret)
    with pytest.raises(WebhookSignatureError):
        verify(latest.body, latest.headers["svcx-signature"], rotated.secret)
    assert final.endpoint.secret_hint == f"whsec_…{final.secret[-4:]}"


def test_the_secret_is_sealed_at_rest_and_opens_only_for_its_own_endpoint(acme: Any) -> None:
    one = webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/a", events=EVERY)
    two = webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/b", events=EVERY)
    row = WebhookEndpoint.objects.get(pk=one.endpoint.pk)

    assert one.secret.startswith("whsec_")
    assert len(one.secret) == 38
    assert one.secret.encode() not in bytes(row.secret_sealed)
    assert one.secret not in json.dumps(list(WebhookEndpoint.objects.filter(pk=row.pk).values()), default=str)
    assert secret_open(sealed=row.secret_sealed, endpoint_id=row.id) == one.secret
    with pytest.raises(SecretUnreadable):
        secret_open(sealed=row.secret_sealed, endpoint_id=two.endpoint.id)


def test_a_secret_sealed_under_another_key_fails_the_attempt_saying_to_rotate(
    settings: Any, acme: Any, receiver: Receiver
) -> None:
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.succeeded", data={})
    settings.SVCX_WEBHOOKS_SECRET_KEY = "another key"

    attempt = attempt_now(delivery_of(endpoint))

    assert attempt is not None
    assert attempt.error == "The signing secret cannot be read: rotate it."
    assert receiver.seen == []


def test_an_organization_has_a_limited_number_of_endpoints_each_with_known_events(acme: Any) -> None:
    for n in range(MAX_ENDPOINTS):
        webhook_endpoint_create(organization=acme, url=f"http://127.0.0.1:9/{n}", events=["job.failed"])

    with pytest.raises(WebhookError, match=f"at most {MAX_ENDPOINTS} webhook endpoints"):
        webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/x", events=["job.failed"])
    with pytest.raises(WebhookError, match=r"unknown event types: job\.started"):
        webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/x", events=["job.started"])
    with pytest.raises(WebhookError, match="choose at least one event"):
        webhook_endpoint_create(organization=acme, url="http://127.0.0.1:9/x", events=[])
    assert WebhookEndpoint.objects.count() == MAX_ENDPOINTS


def test_one_claim_per_due_delivery_and_the_sweeper_queues_each_due_one_once(
    acme: Any, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    webhook_event_emit(organization=acme, type="job.failed", data={})
    later = webhook_event_emit(organization=acme, type="job.failed", data={})
    due = WebhookDelivery.objects.exclude(event=later).get()
    WebhookDelivery.objects.update(queued_at=None)
    WebhookDelivery.objects.filter(event=later).update(next_attempt_at=timezone.now() + timedelta(minutes=5))

    with django_capture_on_commit_callbacks() as queued:
        assert webhook_deliveries_sweep() == 1  # the due one, not the one due later
        assert webhook_deliveries_sweep() == 0  # queued just now: not again until its lease ends
    assert len(queued) == 1
    WebhookDelivery.objects.filter(pk=due.pk).update(queued_at=timezone.now() - timedelta(minutes=1))
    assert webhook_deliveries_sweep() == 1  # queued a while ago and still due: the task was lost

    # Two tasks for one delivery: the first claims it (its lease moves the next attempt on).
    WebhookDelivery.objects.filter(pk=due.pk).update(next_attempt_at=timezone.now())
    assert webhook_delivery_attempt(delivery_id=due.pk) is not None
    assert webhook_delivery_attempt(delivery_id=due.pk) is None
    assert len(receiver.seen) == 1
    assert endpoint.deliveries.count() == 2


def test_events_past_their_retention_are_purged_with_their_deliveries(acme: Any, receiver: Receiver) -> None:
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY).endpoint
    old = webhook_event_emit(organization=acme, type="job.failed", data={})
    attempt_now(delivery_of(endpoint, old))
    recent = webhook_event_emit(organization=acme, type="job.failed", data={})
    WebhookEvent.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))

    assert webhook_events_purge() == 1

    assert list(WebhookEvent.objects.values_list("pk", flat=True)) == [recent.pk]
    assert list(WebhookDelivery.objects.values_list("event_id", flat=True)) == [recent.pk]
    assert not WebhookAttempt.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_no_signing_secret_is_in_the_database_dump_or_the_logs(
    acme: Any, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    minted = webhook_endpoint_create(organization=acme, url=receiver.url, events=EVERY)
    rotated = webhook_endpoint_rotate_secret(endpoint=minted.endpoint, overlap="24h")  # both sign for now
    webhook_event_emit(organization=acme, type="job.failed", data={})
    attempt_now(delivery_of(minted.endpoint))

    dump = _dump()
    logs = "\n".join(JsonFormatter().format(r) for r in caplog.records)

    assert minted.endpoint.id in dump  # the dump is real and holds the endpoint's row
    assert len(receiver.seen) == 1
    for secret in (minted.secret, rotated.secret):
        assert secret.removeprefix("whsec_") not in dump
        assert secret not in logs
