"""Mail sent to people about their keys (Django's mail backend; console by default)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.mail import send_mail

if TYPE_CHECKING:
    from accounts.models import ApiKey


def key_reveal_recipients(api_key: ApiKey) -> list[str]:
    """Who is mailed the reveal link of `api_key`'s replacement: the owners and admins of its
    organization, and the key's creator."""
    from accounts.models import Membership

    emails = set(
        Membership.objects.filter(organization_id=api_key.organization_id, role__in=["owner", "admin"])
        .exclude(user__email="")
        .values_list("user__email", flat=True)
    )
    if api_key.created_by is not None and api_key.created_by.email:
        emails.add(api_key.created_by.email)
    return sorted(emails)


def notify_key_leaked(*, api_key: ApiKey, replacement: ApiKey, reveal_url: str, recipients: list[str]) -> None:
    """Mail the reveal link to `recipients` (see key_reveal_recipients); nothing when there are none."""
    if not recipients:
        return
    send_mail(
        subject=f"svcx: API key {api_key.hint} was leaked and has been revoked",
        message=(
            f"The API key {api_key.hint} ({api_key.name or 'unnamed'}) of your organization was found "
            "exposed and has been revoked. Requests made with it are refused from now on.\n\n"
            f"A replacement with the same name, scopes and IP allowlist was created ({replacement.hint}). "
            f"Open this link to see it; it shows the key once and expires in 7 days:\n{reveal_url}\n\n"
            "Your organization was not suspended and its balance was not frozen. A 90-day report of the "
            "leaked key's activity is available from support; if you see usage you do not recognise, "
            "open a support case."
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=recipients,
    )


def notify_key_rotated(*, api_key: ApiKey, replacement: ApiKey, reveal_url: str, recipients: list[str]) -> None:
    """Mail the reveal link of a replacement made by svcx staff to `recipients`; nothing when
    there are none (staff then hand the link over)."""
    if not recipients:
        return
    until = f"{api_key.expires_at:%Y-%m-%d %H:%M} UTC" if api_key.expires_at else "now"
    send_mail(
        subject=f"svcx: API key {api_key.hint} was rotated by svcx staff",
        message=(
            f"svcx staff rotated the API key {api_key.hint} ({api_key.name or 'unnamed'}) of your "
            f"organization. The old key keeps working until {until}; replace it with the new one "
            "before then.\n\n"
            f"The replacement has the same name, scopes and IP allowlist ({replacement.hint}). "
            f"Open this link to see it; it shows the key once and expires in 7 days:\n{reveal_url}\n\n"
            "Nobody at svcx has seen the new key. If you did not expect this change, open a support case."
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=recipients,
    )
