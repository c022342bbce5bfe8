"""What the webhook services refuse, in words for a person (the console shows the message)."""

from __future__ import annotations


class WebhookError(ValueError):
    """A webhook operation that cannot be done as asked (bad input, limits, state)."""


class WebhookUrlRefused(WebhookError):
    """The URL may not be sent webhooks (webhooks.guard)."""
