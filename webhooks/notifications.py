"""Mail to people about their webhook endpoints (Django's mail backend; console by default)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail

from accounts.models import Membership
from webhooks.models import WebhookEndpoint

logger = logging.getLogger("svcx.webhooks")


def endpoint_disabled_recipients(endpoint: WebhookEndpoint) -> list[str]:
    """Who is told that `endpoint` was disabled: the owners of its organization."""
    return sorted(
        set(
            Membership.objects.filter(organization_id=endpoint.organization_id, role=Membership.Role.OWNER)
            .exclude(user__email="")
            .values_list("user__email", flat=True)
        )
    )


def notify_endpoint_disabled(*, endpoint: WebhookEndpoint, reason: str, recipients: list[str]) -> None:
    """Mail `recipients` that svcx stopped sending to `endpoint`, why, and where to turn it back
    on; nothing when there are none. A mail server that refuses is logged, not raised: the
    endpoint is disabled either way, and its page says so."""
    if not recipients:
        return
    page = f"{settings.SVCX_PUBLIC_URL}/console/{endpoint.organization_id}/webhooks/{endpoint.id}/"
    try:
        send_mail(
            subject=f"svcx: webhook endpoint {endpoint.url} was disabled",
            message=(
                f"svcx stopped sending events to the webhook endpoint {endpoint.url} ({endpoint.id}) of your "
                f"organization: {reason}.\n\n"
                "Events that happen while it is disabled are not sent to it. Once the receiver answers "
                "2xx again, enable the endpoint on its page; deliveries still within their retry window "
                f"are then attempted again, and any event in its delivery log can be resent:\n{page}\n"
            ),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=recipients,
        )
    except Exception:
        logger.exception("mail about a disabled webhook endpoint failed", extra={"endpoint": endpoint.id})
