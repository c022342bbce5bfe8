"""The console's forms: what a person types, checked before a service is called."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time
from typing import Any

from django import forms
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.utils import timezone

from accounts.guards import sign_in_failure_record, sign_in_failures_check
from accounts.keyformat import Environment
from accounts.models import ENVIRONMENT_CHOICES, ApiKey, Membership
from accounts.scopes import ISSUED_SCOPES, PRESETS
from accounts.services import OVERLAPS
from billing.models import LedgerEntry
from conversion.models import Job
from webhooks.guard import MAX_URL_LENGTH
from webhooks.models import EventType
from webhooks.services import MAX_DESCRIPTION, ROTATION_OVERLAPS

PRESET_CHOICES = [
    ("full", "Full access (every scope)"),
    ("restricted", "Restricted (everything but account:read)"),
    ("read_only", "Read only (files:read, account:read)"),
    ("custom", "Custom: choose the scopes"),
]
OVERLAP_CHOICES = [
    ("immediate", "Immediately: the old key stops now"),
    ("1h", "After 1 hour"),
    ("24h", "After 24 hours"),
    ("7d", "After 7 days"),
]
WEBHOOK_OVERLAP_CHOICES = [
    ("24h", "After 24 hours: both secrets sign until then"),
    ("immediate", "Immediately: only the new secret signs from now"),
]
assert {c for c, _ in PRESET_CHOICES} == {*PRESETS, "custom"}
assert {c for c, _ in OVERLAP_CHOICES} == set(OVERLAPS)
assert {c for c, _ in WEBHOOK_OVERLAP_CHOICES} == set(ROTATION_OVERLAPS)


class SignInForm(forms.Form):
    email = forms.EmailField(widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}))
    password = forms.CharField(strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))

    def __init__(self, *args: Any, request: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.user: Any = None

    def clean(self) -> dict[str, Any]:
        """Authenticate, unless the address has too many failed sign-ins (then TooManyAttempts
        is raised before the password is checked, whether or not the account exists)."""
        data = super().clean() or {}
        email, password = data.get("email"), data.get("password")
        if email and password:
            sign_in_failures_check(self.request, email=email)
            account = get_user_model().objects.filter(email__iexact=email, is_active=True).order_by("pk").first()
            user = authenticate(self.request, username=account.get_username(), password=password) if account else None
            if user is None:
                sign_in_failure_record(self.request, email=email)
                raise forms.ValidationError("The e-mail address or the password is wrong.")
            self.user = user
        return data


class InviteForm(forms.Form):
    email = forms.EmailField()
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class AcceptNewAccountForm(forms.Form):
    password = forms.CharField(strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password_again = forms.CharField(strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password") and data.get("password") != data.get("password_again"):
            raise forms.ValidationError("The two passwords differ.")
        if data.get("password"):
            validate_password(data["password"])
        return data


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace(",", "\n").splitlines() if line.strip()]


def _end_of(day: date | None) -> datetime | None:
    return datetime.combine(day, time.max, tzinfo=timezone.get_current_timezone()) if day else None


class _KeySettingsForm(forms.Form):
    """What a key's creator decides and may change later: scopes, IP allowlist, expiry."""

    scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in ISSUED_SCOPES], required=False, widget=forms.CheckboxSelectMultiple
    )
    ip_allowlist = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "203.0.113.0/24, one per line; empty: any address"}),
        label="IP allowlist",
    )
    expires_on = forms.DateField(
        required=False, widget=forms.DateInput(attrs={"type": "date"}), label="Expires (end of day, UTC)"
    )

    def clean_expires_on(self) -> date | None:
        day: date | None = self.cleaned_data.get("expires_on")
        if day is not None and day < timezone.localdate():
            raise forms.ValidationError("The expiry date is in the past.")
        return day


class KeyCreateForm(_KeySettingsForm):
    # One per rendered form: a reload of the page that showed the secret re-sends the form, and
    # must not create a second key.
    nonce = forms.CharField(widget=forms.HiddenInput, max_length=64)
    name = forms.CharField(max_length=200, required=False)
    project = forms.CharField(max_length=200, required=False)
    environment = forms.ChoiceField(choices=ENVIRONMENT_CHOICES, initial=Environment.LIVE.value)
    preset = forms.ChoiceField(choices=PRESET_CHOICES, initial="full", widget=forms.RadioSelect)
    field_order = ["name", "project", "environment", "preset", "scopes", "ip_allowlist", "expires_on", "nonce"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("preset") == "custom" and not data.get("scopes"):
            self.add_error("scopes", "Choose at least one scope for a custom key.")
        return data

    def service_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        custom = data["preset"] == "custom"
        return {
            "environment": data["environment"],
            "name": data["name"],
            "project": data["project"],
            "preset": None if custom else data["preset"],
            "scopes": list(data["scopes"]) if custom else None,
            "ip_allowlist": _lines(data["ip_allowlist"]),
            "expires_at": _end_of(data["expires_on"]),
        }


class KeyUpdateForm(_KeySettingsForm):
    @classmethod
    def of(cls, api_key: Any) -> KeyUpdateForm:
        expires = timezone.localtime(api_key.expires_at).date() if api_key.expires_at else None
        return cls(
            initial={
                "scopes": list(api_key.scopes),
                "ip_allowlist": "\n".join(api_key.ip_allowlist),
                "expires_on": expires,
            }
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("scopes"):
            self.add_error("scopes", "A key needs at least one scope.")
        return data

    def service_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "scopes": list(data["scopes"]),
            "ip_allowlist": _lines(data["ip_allowlist"]),
            "expires_at": _end_of(data["expires_on"]),
        }


class RotateForm(forms.Form):
    overlap = forms.ChoiceField(choices=OVERLAP_CHOICES, initial="24h", widget=forms.RadioSelect)


def key_label(key: ApiKey) -> str:
    """How a person tells a key: its name, environment and hint."""
    return f"{key.name or '(unnamed)'} · {key.environment} · {key.hint}"


class KeyPickerForm(forms.Form):
    """A filter form whose `api_key_id` is picked from the organization's keys by name (the
    value stays the key's id: a link may name any id, and the filter says when it is none)."""

    def __init__(self, *args: Any, keys: Iterable[ApiKey] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "every key"), *((key.id, key_label(key)) for key in keys)]
        self.fields["api_key_id"].widget = forms.Select(choices=choices)


class StatementForm(KeyPickerForm):
    environment = forms.ChoiceField(choices=ENVIRONMENT_CHOICES, required=False)
    kind = forms.ChoiceField(choices=[("", "every kind"), *LedgerEntry.Kind.choices], required=False)
    api_key_id = forms.CharField(required=False, max_length=40, label="Key")
    start = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label="From")
    end = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}), label="To (inclusive)")


class UsageRecordsForm(KeyPickerForm):
    """The filters of GET /v1/usage/records: environment (the key's, there), start, end, key."""

    environment = forms.ChoiceField(choices=ENVIRONMENT_CHOICES, required=False)
    start = forms.DateTimeField(required=False, label="Start (UTC)")
    end = forms.DateTimeField(required=False, label="End (UTC, exclusive)")
    api_key_id = forms.CharField(required=False, max_length=40, label="Key")
    starting_after = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)


class JobsForm(forms.Form):
    """The filters of GET /v2/jobs, with the environment (the key's, there)."""

    environment = forms.ChoiceField(choices=ENVIRONMENT_CHOICES, required=False)
    status = forms.ChoiceField(choices=[("", "every status"), *Job.Status.choices], required=False)
    starting_after = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)


class WebhookEndpointForm(forms.Form):
    """A new endpoint: where events go and which ones. The URL's own checks (https, a public
    address) are the service's (webhooks.guard), shown on the URL field."""

    # One per rendered form: a reload of the page that showed the secret re-sends the form, and
    # must not create a second endpoint.
    nonce = forms.CharField(widget=forms.HiddenInput, max_length=64)
    url = forms.CharField(
        max_length=MAX_URL_LENGTH,
        label="URL",
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/svcx/webhooks"}),
    )
    description = forms.CharField(max_length=MAX_DESCRIPTION, required=False)
    events = forms.MultipleChoiceField(
        choices=[(value, value) for value in EventType.values],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one event."},
    )
    field_order = ["url", "description", "events", "nonce"]


class WebhookRotateForm(forms.Form):
    overlap = forms.ChoiceField(choices=WEBHOOK_OVERLAP_CHOICES, initial="24h", widget=forms.RadioSelect)
