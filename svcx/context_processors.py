"""What every page a person sees may show: the support contact."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def support(request: HttpRequest) -> dict[str, str]:
    """`support_contact` (SVCX_SUPPORT_CONTACT) and `support_href`: a mailto: link for an
    address, the URL itself otherwise."""
    contact = str(settings.SVCX_SUPPORT_CONTACT)
    href = contact if "://" in contact else f"mailto:{contact}"
    return {"support_contact": contact, "support_href": href}
