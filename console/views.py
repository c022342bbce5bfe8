"""The customer console: server-rendered pages for the members of an organization.

Every page under /console/<org_id>/ first finds the signed-in person's membership of that
organization (a 404 when there is none) and reads only that organization's rows: another
organization's ids are 404, never 403. State changes go through the services the admin and the
operator command use (accounts.services, conversion.files, webhooks.services), with the person as
the audited actor.
"""

from __future__ import annotations

import csv
import io
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.renderers import JSONRenderer

from accounts.guards import per_address, sign_in_failures_clear
from accounts.keyformat import Environment
from accounts.models import ApiKey, Membership
from accounts.scopes import ScopeError
from accounts.serializers import key_status
from accounts.services import (
    AccountError,
    MintedKey,
    api_key_confirm_leak,
    api_key_create,
    api_key_revoke,
    api_key_rotate,
    api_key_update,
    audit_record,
)
from billing.reports import REPORT_DAYS, key_activity_csv
from billing.selectors import allowance_get, credits_get, request_error_codes, usage_as_of, usage_records_list
from billing.serializers import LedgerEntrySerializer
from console import charts, forms, selectors, services
from console.permissions import cancels_job, manages_key, manages_organization
from conversion import selectors as conversion_selectors
from conversion.models import Job
from core.errors import ServiceError
from core.ids import is_id
from webhooks.errors import WebhookError, WebhookUrlRefused
from webhooks.selectors import (
    webhook_attempt_list,
    webhook_delivery_get,
    webhook_delivery_list,
    webhook_delivery_list_of_object,
    webhook_endpoint_get,
    webhook_endpoint_list,
)
from webhooks.services import (
    MintedSecret,
    webhook_delivery_resend,
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_disable,
    webhook_endpoint_enable,
    webhook_endpoint_rotate_secret,
)
from webhooks.signing import event_body

View = Callable[..., HttpResponse]


def member_view(*, manager: bool = False) -> Callable[[View], View]:
    """Resolve `org_id` to the signed-in person's membership (404 when they have none) and pass
    it on; with `manager`, only owners and admins get through (403 for members)."""

    def decorate(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, org_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
            membership = selectors.membership_get(user=request.user, organization_id=org_id)
            if membership is None:
                raise Http404("no such organization")
            if manager and not manages_organization(membership):
                raise PermissionDenied(f"your role ({membership.role}) cannot do this")
            return view(request, membership, *args, **kwargs)

        return wrapped

    return decorate


def _page(request: HttpRequest, membership: Membership, template: str, **context: Any) -> HttpResponse:
    return render(
        request,
        f"console/{template}",
        {
            "membership": membership,
            "organization": membership.organization,
            "manager": manages_organization(membership),
            "memberships": selectors.membership_list(user=request.user),
            **context,
        },
    )


def _person(user: Any) -> str:
    """How a person is named on a page: their address, else their username."""
    return str(user.email or user.get_username())


def _creator(api_key: Any) -> str:
    return _person(api_key.created_by) if api_key.created_by is not None else "staff or the operator"


def _key_or_404(membership: Membership, key_id: str) -> Any:
    api_key = selectors.api_key_get(organization=membership.organization, key_id=key_id)
    if api_key is None:
        raise Http404("no such key")
    return api_key


def _org_url(name: str, membership: Membership, *args: Any) -> str:
    return reverse(f"console:{name}", args=[membership.organization_id, *args])


# --- signing in and out ------------------------------------------------------------------


@never_cache
@require_http_methods(["GET", "POST"])
@per_address("SVCX_LOGIN_ATTEMPTS_PER_MINUTE")
def sign_in(request: HttpRequest) -> HttpResponse:
    form = forms.SignInForm(request.POST or None, request=request)
    if request.method == "POST" and form.is_valid():
        login(request, form.user)
        next_url = request.POST.get("next", "")
        return redirect(next_url if next_url.startswith("/console/") else "console:home")
    return render(request, "console/sign_in.html", {"form": form, "next": request.GET.get("next", "")})


@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    logout(request)
    messages.info(request, "You are signed out.")
    return redirect("console:sign-in")


@require_POST
@login_required
def sign_out_everywhere(request: HttpRequest) -> HttpResponse:
    ended = services.console_sessions_end(user=request.user)
    logout(request)
    messages.info(request, f"You are signed out everywhere ({ended} session{'s' if ended != 1 else ''} ended).")
    return redirect("console:sign-in")


@never_cache
@require_http_methods(["GET", "POST"])
@per_address("SVCX_LOGIN_ATTEMPTS_PER_MINUTE")  # a borrowed session must not guess the password at speed
@member_view()
def password_change(request: HttpRequest, membership: Membership) -> HttpResponse:
    """The current password and a new one twice (Django's validators); this browser stays
    signed in, every other session of the person ends."""
    form = PasswordChangeForm(membership.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        ended = services.user_password_change(
            user=form.user, password=form.cleaned_data["new_password1"], keep_session_key=request.session.session_key
        )
        update_session_auth_hash(request, form.user)  # a new key for this session, with the new hash
        messages.success(
            request,
            f"Your password is changed. {ended} other session{'s' if ended != 1 else ''} signed out; "
            "this one stays signed in.",
        )
        return redirect(_org_url("password-change", membership))
    return _page(request, membership, "password_change.html", form=form)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect("console:sign-in")
    memberships = list(selectors.membership_list(user=request.user))
    if len(memberships) == 1:
        return redirect("console:spending", memberships[0].organization_id)
    return render(request, "console/home.html", {"memberships": memberships})


@never_cache
@require_http_methods(["GET", "POST"])
@per_address("SVCX_LOGIN_ATTEMPTS_PER_MINUTE")
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """The single-use link of an invitation: an account is created for a new address; an
    existing account signs in first, then accepts."""
    pending = services.invitation_get(token=token)
    if pending is None:
        return render(request, "console/invitation.html", {"state": "gone"}, status=404)
    user = request.user if request.user.is_authenticated else None
    has_account = services.invitation_has_account(invitation=pending)
    form = forms.AcceptNewAccountForm(request.POST or None) if user is None and not has_account else None
    if request.method == "POST" and (user is not None or (form is not None and form.is_valid())):
        try:
            membership = services.invitation_accept(
                token=token, user=user, password=form.cleaned_data["password"] if form else ""
            )
        except AccountError as exc:
            messages.error(request, str(exc))
        else:
            if user is None:
                login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome to {membership.organization.name}: you joined as {membership.role}.")
            return redirect("console:spending", membership.organization_id)
    return render(
        request,
        "console/invitation.html",
        {"state": "open", "invitation": pending, "form": form, "has_account": has_account, "user": user},
    )


# --- spending ----------------------------------------------------------------------------


@require_GET
@member_view()
def spending(request: HttpRequest, membership: Membership) -> HttpResponse:
    organization = membership.organization
    metric = request.GET.get("metric", "pages")
    by = request.GET.get("by", "key")
    if metric not in ("pages", "credits") or by not in ("key", "environment"):
        metric, by = "pages", "key"
    days, series = selectors.usage_by_day(organization=organization, metric=metric, by=by)
    return _page(
        request,
        membership,
        "spending.html",
        live=credits_get(organization=organization, environment=Environment.LIVE),
        test=credits_get(organization=organization, environment=Environment.TEST),
        allowance=allowance_get(organization=organization),
        chart=charts.stacked_bars(days=days, series=series, unit=metric),
        metric=metric,
        by=by,
        first_day=days[0],
        last_day=days[-1],
        as_of=usage_as_of(),
    )


def _keys_of_environment(keys: list[ApiKey], request: HttpRequest) -> list[ApiKey]:
    """The keys a filter of the environment the page shows (live unless asked) can pick."""
    environment = request.GET.get("environment") or Environment.LIVE
    return [key for key in keys if key.environment == environment]


def _key_names(keys: list[ApiKey]) -> dict[str, str]:
    """Each key's name (or "(unnamed)") by its id: tables name keys, not only their ids."""
    return {key.id: key.name or "(unnamed)" for key in keys}


def _statement_filter(form: forms.StatementForm) -> selectors.StatementFilter:
    data = form.cleaned_data if form.is_valid() else {}
    return selectors.StatementFilter(
        environment=data.get("environment") or Environment.LIVE,
        kind=data.get("kind") or "",
        api_key_id=(data.get("api_key_id") or "").strip(),
        start=data.get("start"),
        end=data.get("end"),
    )


@require_GET
@member_view()
def statement(request: HttpRequest, membership: Membership) -> HttpResponse:
    keys = list(selectors.api_key_list(organization=membership.organization))
    form = forms.StatementForm(request.GET, keys=_keys_of_environment(keys, request))
    rows = selectors.ledger_statement(organization=membership.organization, filters=_statement_filter(form))
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    names = _key_names(keys)
    lines = selectors.statement_lines(rows, list(page))
    jobs = selectors.jobs_kept_ids(
        organization=membership.organization, job_ids={line.newest.request_id for line in lines}
    )
    entries = [
        (line, names.get(line.newest.api_key_id, ""), _reference_url(membership, line.newest.request_id, jobs))
        for line in lines
    ]
    query = request.GET.copy()
    query.pop("page", None)
    return _page(request, membership, "statement.html", form=form, page=page, entries=entries, query=query.urlencode())


def _reference_url(membership: Membership, reference: str, kept_jobs: set[str]) -> str:
    """The page a ledger entry's reference opens: its version 2 job's while the job is kept, its
    request's for a request; "" for a job that has expired (its entries outlive it)."""
    if not reference:
        return ""
    if is_id(reference, "job"):
        return _org_url("job", membership, reference) if reference in kept_jobs else ""
    return _org_url("request", membership, reference)


# The fields of the API's ledger entries (GET /v1/credits/ledger), with the environment.
STATEMENT_COLUMNS = [
    "created_at",
    "id",
    "environment",
    "kind",
    "credits",
    "balance_change",
    "available_change",
    "pages",
    "balance_after",
    "request_id",
    "api_key_id",
    "reason",
]


@require_GET
@member_view()
def statement_csv(request: HttpRequest, membership: Membership) -> HttpResponse:
    filters = _statement_filter(forms.StatementForm(request.GET))
    out = io.StringIO()
    writer = csv.DictWriter(out, STATEMENT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for entry in selectors.ledger_statement(organization=membership.organization, filters=filters).iterator():
        writer.writerow({**LedgerEntrySerializer(entry).data, "environment": entry.environment})
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    name = f"{membership.organization_id}-statement-{filters.environment}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@dataclass(frozen=True)
class CursorPage:
    """One page of a list read a page at a time after a cursor, as the API's lists are."""

    rows: list[Any]
    has_more: bool
    error: str  # what is wrong with the filters or the cursor, said to the person
    next_query: str  # the query of the next (older) page
    first_query: str | None  # the query of the first page, when this is not it


def _cursor_page(
    request: HttpRequest, form: Any, read: Callable[[dict[str, Any], str | None], tuple[list[Any], bool]]
) -> CursorPage:
    """`read(filters, starting_after)` for a valid filter form (`starting_after` one of its fields)."""
    rows: list[Any] = []
    has_more, error = False, ""
    if form.is_valid():
        try:
            rows, has_more = read(form.cleaned_data, form.cleaned_data["starting_after"] or None)
        except ServiceError as exc:
            error = exc.message
    next_query = request.GET.copy()
    if rows:
        next_query["starting_after"] = rows[-1].id
    first_query = request.GET.copy()
    first_query.pop("starting_after", None)
    first = first_query.urlencode() if "starting_after" in request.GET else None
    return CursorPage(rows, has_more, error, next_query.urlencode(), first)


@require_GET
@member_view()
def usage_records(request: HttpRequest, membership: Membership) -> HttpResponse:
    keys = list(selectors.api_key_list(organization=membership.organization))
    form = forms.UsageRecordsForm(request.GET, keys=_keys_of_environment(keys, request))
    listed = _cursor_page(
        request,
        form,
        lambda data, cursor: usage_records_list(
            organization=membership.organization,
            environment=data["environment"] or Environment.LIVE,
            limit=50,
            starting_after=cursor,
            start=data["start"],
            end=data["end"],
            api_key_id=data["api_key_id"].strip() or None,
        ),
    )
    rows = listed.rows
    codes = request_error_codes(organization=membership.organization, request_ids=[row.request_id for row in rows])
    names = _key_names(keys)
    jobs = selectors.request_jobs(
        organization=membership.organization, requests=[(row.request_id, row.endpoint) for row in rows]
    )
    return _page(
        request,
        membership,
        "usage_records.html",
        form=form,
        rows=[
            (row, codes.get(row.request_id, ""), names.get(row.api_key_id, ""), jobs.get(row.request_id, ""))
            for row in rows
        ],
        listed=listed,
        as_of=usage_as_of(),
    )


@require_GET
@member_view()
def request_detail(request: HttpRequest, membership: Membership, request_id: str) -> HttpResponse:
    """One request of the request log: what it asked, how it answered, what it cost. A version 2
    job's id (the reference of its ledger entries) opens the job's page while the job is kept."""
    organization = membership.organization
    if selectors.job_get(organization=organization, job_id=request_id) is not None:
        return redirect(_org_url("job", membership, request_id))
    record = selectors.request_get(organization=organization, request_id=request_id)
    if record is None:
        raise Http404("no such request")
    api_key = selectors.api_key_get(organization=organization, key_id=record.api_key_id)
    about = selectors.request_jobs(
        organization=organization, requests=[(request_id, record.log.endpoint if record.log else "")]
    )
    return _page(
        request, membership, "request_detail.html", record=record, api_key=api_key, v2_job=about.get(request_id, "")
    )


# --- version 2 jobs ------------------------------------------------------------------------

JOBS_PER_PAGE = 50


@require_GET
@member_view()
def job_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    """The organization's jobs of one environment, newest first, by status (GET /v2/jobs)."""
    form = forms.JobsForm(request.GET)
    listed = _cursor_page(
        request,
        form,
        lambda data, cursor: conversion_selectors.job_list(
            organization=membership.organization,
            environment=data["environment"] or Environment.LIVE,
            limit=JOBS_PER_PAGE,
            starting_after=cursor,
            status=data["status"] or None,
        ),
    )
    return _page(
        request,
        membership,
        "jobs.html",
        form=form,
        listed=listed,
        retention_hours=_retention_hours(),
    )


def _retention_hours() -> int:
    return round(float(settings.SVCX_JOB_RETENTION) / 3600)


def _job_or_404(membership: Membership, job_id: str) -> Job:
    """The organization's job, kept until it expires: an expired job, a mistyped id or another
    organization's job is the console's 404 page."""
    job = selectors.job_get(organization=membership.organization, job_id=job_id)
    if job is None:
        raise Http404("no such job")
    return job


def _job_key(membership: Membership, job: Job) -> ApiKey | None:
    return selectors.api_key_get(organization=membership.organization, key_id=job.api_key_id)


@require_GET
@member_view()
def job_detail(request: HttpRequest, membership: Membership, job_id: str) -> HttpResponse:
    """One job: its state and progress, options, webhook metadata, error, the ledger entries it
    moved, its result while it is kept, its webhook deliveries (owners and admins, who see the
    delivery log) and, while it runs, Cancel."""
    job = _job_or_404(membership, job_id)
    organization = membership.organization
    api_key = _job_key(membership, job)
    deliveries = (
        webhook_delivery_list_of_object(organization=organization, object_id=job.id, since=job.created_at)
        if manages_organization(membership)
        else None
    )
    return _page(
        request,
        membership,
        "job_detail.html",
        job=job,
        api_key=api_key,
        running=job.status not in Job.ENDED,
        may_cancel=job.status not in Job.ENDED and cancels_job(membership, api_key),
        ledger=selectors.request_ledger(organization=organization, request_id=job.id),
        deliveries=deliveries,
        webhook_metadata=json.dumps(job.webhook_metadata, indent=2) if job.webhook_metadata is not None else "",
        retention_hours=_retention_hours(),
    )


@require_http_methods(["GET", "POST"])
@member_view()
def job_cancel(request: HttpRequest, membership: Membership, job_id: str) -> HttpResponse:
    """Cancel a queued or running job after a confirmation: its hold is released, it bills
    nothing and keeps no result. Owners and admins cancel any job; a member the jobs of the keys
    they created (403 otherwise)."""
    job = _job_or_404(membership, job_id)
    if not cancels_job(membership, _job_key(membership, job)):
        raise PermissionDenied("members cancel only the jobs of the keys they created")
    back = _org_url("job", membership, job.id)
    if job.status in Job.ENDED:
        messages.error(request, f"The job has ended ({job.status}); only a queued or running job can be canceled.")
        return redirect(back)
    if request.method == "POST":
        job = services.job_cancel(job=job, actor=request.user)
        if job.status == Job.Status.CANCELED:
            messages.success(request, f"Canceled {job.id}: its {job.credits_held} held credits are released.")
        else:
            messages.error(request, f"The job ended meanwhile ({job.status}); it was not canceled.")
        return redirect(back)
    return _page(request, membership, "job_confirm.html", job=job)


RESULT_FORMATS = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


@require_GET
@member_view()
def job_result(request: HttpRequest, membership: Membership, job_id: str, fmt: str) -> HttpResponse:
    """A succeeded job's result, the bytes GET /v2/jobs/{id}/result answers (Markdown or JSON),
    with the person's session instead of an API key; 404 once the job has no result."""
    job = _job_or_404(membership, job_id)
    if job.status != Job.Status.SUCCEEDED:
        raise Http404("the job has no result")
    try:
        result = conversion_selectors.job_result_get(job=job)
    except FileNotFoundError as exc:  # the store lost it: the job expires soon, say it is gone
        raise Http404("the job's result is gone") from exc
    body = result.markdown().encode() if fmt == "md" else JSONRenderer().render(result.body())
    response = HttpResponse(body, content_type=RESULT_FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="{job.id}.{fmt}"'
    return response


# --- keys --------------------------------------------------------------------------------

# States of a key that no request gets past again.
RETIRED_KEY_STATES = ("revoked", "expired")


@require_GET
@member_view()
def key_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    keys = [
        (key, key_status(key), _creator(key)) for key in selectors.api_key_list(organization=membership.organization)
    ]
    # Keys that are refused for good fold away below the ones in use.
    retired = [row for row in keys if row[1] in RETIRED_KEY_STATES]
    in_use = [row for row in keys if row[1] not in RETIRED_KEY_STATES]
    return _page(request, membership, "keys.html", keys=in_use, retired=retired)


def _secret_page(request: HttpRequest, membership: Membership, template: str, **context: Any) -> HttpResponse:
    """A page that shows a secret once: no browser or proxy may keep a copy."""
    response = _page(request, membership, template, **context)
    response["Cache-Control"] = "no-store"
    return response


def _show_secret(request: HttpRequest, membership: Membership, minted: MintedKey, title: str) -> HttpResponse:
    return _secret_page(request, membership, "key_secret.html", minted=minted, title=title)


USED_NONCES = "console_key_create_nonces"


@never_cache
@require_http_methods(["GET", "POST"])
@member_view()
def key_create(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = forms.KeyCreateForm(request.POST or None, initial={"nonce": secrets.token_urlsafe(16)})
    used: list[str] = request.session.get(USED_NONCES, [])
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["nonce"] in used:
            messages.info(request, "That key was already created; its secret was shown once and is not kept.")
            return redirect(_org_url("keys", membership))
        try:
            minted = api_key_create(
                organization=membership.organization, actor=request.user, **form.service_arguments()
            )
        except (AccountError, ScopeError) as exc:
            form.add_error(None, str(exc))
        else:
            request.session[USED_NONCES] = [*used[-19:], form.cleaned_data["nonce"]]
            return _show_secret(request, membership, minted, "Key created")
    return _page(request, membership, "key_create.html", form=form)


@require_GET
@member_view()
def key_detail(request: HttpRequest, membership: Membership, key_id: str) -> HttpResponse:
    return _key_page(request, membership, _key_or_404(membership, key_id))


def _key_page(
    request: HttpRequest, membership: Membership, api_key: Any, update_form: forms.KeyUpdateForm | None = None
) -> HttpResponse:
    replacement = api_key.replaced_by
    return _page(
        request,
        membership,
        "key_detail.html",
        key=api_key,
        status=key_status(api_key),
        creator=_creator(api_key),
        may_manage=manages_key(membership, api_key),
        replacement=replacement,
        reveal=getattr(replacement, "reveal", None) if replacement is not None else None,
        replaces=selectors.api_key_list(organization=membership.organization).filter(replaced_by=api_key).first(),
        report_days=REPORT_DAYS,
        rotate_form=forms.RotateForm(),
        update_form=update_form or forms.KeyUpdateForm.of(api_key),
    )


def _managed_key(membership: Membership, key_id: str) -> Any:
    api_key = _key_or_404(membership, key_id)
    if not manages_key(membership, api_key):
        raise PermissionDenied("members manage only the keys they created")
    return api_key


@require_POST
@member_view()
def key_update(request: HttpRequest, membership: Membership, key_id: str) -> HttpResponse:
    """Change scopes, allowlist or expiry: authentication reads them on every request, so the
    change applies from the next one."""
    api_key = _managed_key(membership, key_id)
    form = forms.KeyUpdateForm(request.POST)
    if form.is_valid():
        try:
            if api_key.replaced_by_id is not None:
                raise AccountError("a rotated key cannot be changed; change its replacement")
            api_key_update(api_key=api_key, actor=request.user, **form.service_arguments())
        except (AccountError, ScopeError) as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Updated {api_key.hint}: the change applies from the next request.")
            return redirect(_org_url("key", membership, api_key.pk))
    return _key_page(request, membership, api_key, update_form=form)


@never_cache
@require_POST
@member_view()
def key_rotate(request: HttpRequest, membership: Membership, key_id: str) -> HttpResponse:
    api_key = _managed_key(membership, key_id)
    form = forms.RotateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose when the old key stops working.")
        return redirect(_org_url("key", membership, api_key.pk))
    try:
        minted = api_key_rotate(api_key=api_key, overlap=form.cleaned_data["overlap"], actor=request.user)
    except AccountError as exc:
        messages.error(request, f"{api_key.hint}: {exc}")
        return redirect(_org_url("key", membership, api_key.pk))
    return _show_secret(request, membership, minted, f"Key {api_key.hint} rotated")


@require_http_methods(["GET", "POST"])
@member_view()
def key_revoke(request: HttpRequest, membership: Membership, key_id: str) -> HttpResponse:
    api_key = _managed_key(membership, key_id)
    if api_key.revoked_at is not None:
        messages.error(request, f"{api_key.hint} is already revoked.")
        return redirect(_org_url("key", membership, api_key.pk))
    if request.method == "POST":
        api_key_revoke(
            api_key=api_key, reason=f"revoked in the console by {request.user.get_username()}", actor=request.user
        )
        messages.success(request, f"Revoked {api_key.hint}: it is refused from the next request.")
        return redirect(_org_url("key", membership, api_key.pk))
    return _page(request, membership, "key_confirm.html", key=api_key, action="revoke")


@require_http_methods(["GET", "POST"])
@member_view(manager=True)
def key_confirm_leak(request: HttpRequest, membership: Membership, key_id: str) -> HttpResponse:
    api_key = _key_or_404(membership, key_id)
    if api_key.revoked_at is not None:
        # A revoked key is refused already; its replacement, if any, is where a leak now matters.
        messages.error(request, f"{api_key.hint} is already revoked ({api_key.revoked_reason}).")
        return redirect(_org_url("key", membership, api_key.pk))
    if request.method == "POST":
        leak = api_key_confirm_leak(api_key=api_key, actor=request.user)
        mailed = ", ".join(leak.recipients) or "nobody (no owner, admin or creator has an address)"
        messages.success(
            request,
            f"Leak confirmed: {api_key.hint} revoked; its replacement {leak.replacement.hint} goes into a "
            f"single-use reveal link mailed to {mailed}.",
        )
        return redirect(_org_url("key", membership, api_key.pk))
    return _page(request, membership, "key_confirm.html", key=api_key, action="leak")


@require_GET
@member_view()
def key_activity_report(request: HttpRequest, membership: Membership, key_id: str) -> HttpResponse:
    api_key = _managed_key(membership, key_id)
    audit_record(
        actor=request.user, action="key.activity_report", organization=membership.organization, target=api_key.id
    )
    response = HttpResponse(key_activity_csv(api_key=api_key), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{api_key.id}-activity-{REPORT_DAYS}d.csv"'
    return response


# --- members -----------------------------------------------------------------------------


@require_GET
@member_view()
def member_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    organization = membership.organization
    return _page(
        request,
        membership,
        "members.html",
        members=selectors.organization_members(organization=organization),
        invitations=selectors.invitation_list_open(organization=organization),
        invite_form=forms.InviteForm(),
        roles=Membership.Role.choices,
    )


@require_POST
@member_view(manager=True)
def member_invite(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = forms.InviteForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give an e-mail address and a role.")
        return redirect(_org_url("members", membership))
    try:
        sent = services.invitation_create(
            actor_membership=membership, email=form.cleaned_data["email"], role=form.cleaned_data["role"]
        )
    except AccountError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Invitation mailed to {sent.invitation.email} as {sent.invitation.role}; the link works once and "
            f"expires in {services.invitation_lifetime_text()}.",
        )
    return redirect(_org_url("members", membership))


def _member_or_404(membership: Membership, member_id: int) -> Membership:
    other = selectors.organization_members(organization=membership.organization).filter(pk=member_id).first()
    if other is None:
        raise Http404("no such member")
    return other


@require_POST
@member_view(manager=True)
def member_set_role(request: HttpRequest, membership: Membership, member_id: int) -> HttpResponse:
    other = _member_or_404(membership, member_id)
    form = forms.RoleForm(request.POST)
    if form.is_valid():
        try:
            services.member_set_role(actor_membership=membership, membership=other, role=form.cleaned_data["role"])
        except AccountError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request, f"{other.user.email or other.user.get_username()} is now {form.cleaned_data['role']}."
            )
    return redirect(_org_url("members", membership))


@require_POST
@member_view()
def member_remove(request: HttpRequest, membership: Membership, member_id: int) -> HttpResponse:
    other = _member_or_404(membership, member_id)
    try:
        services.member_remove(actor_membership=membership, membership=other)
    except AccountError as exc:
        messages.error(request, str(exc))
        return redirect(_org_url("members", membership))
    if other.pk == membership.pk:
        messages.success(request, f"You left {membership.organization.name}.")
        return redirect("console:home")
    messages.success(request, f"Removed {_person(other.user)}.")
    return redirect(_org_url("members", membership))


@require_POST
@member_view(manager=True)
def invitation_revoke(request: HttpRequest, membership: Membership, invitation_id: int) -> HttpResponse:
    pending = selectors.invitation_list_open(organization=membership.organization).filter(pk=invitation_id).first()
    if pending is None:
        raise Http404("no such invitation")
    services.invitation_revoke(invitation=pending, actor=request.user)
    messages.success(request, f"Invitation of {pending.email} withdrawn.")
    return redirect(_org_url("members", membership))


# --- files and the audit log -------------------------------------------------------------


@require_GET
@member_view()
def file_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    files = selectors.stored_file_list(organization=membership.organization).order_by("-created_at")
    page = Paginator(files, 50).get_page(request.GET.get("page"))
    return _page(request, membership, "files.html", page=page, now=timezone.now())


@require_POST
@member_view(manager=True)
def file_remove(request: HttpRequest, membership: Membership, file_id: str) -> HttpResponse:
    if not selectors.stored_file_list(organization=membership.organization).filter(pk=file_id).exists():
        raise Http404("no such file")
    try:
        record = services.stored_file_remove(organization=membership.organization, file_id=file_id, actor=request.user)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Deleted {record.filename or record.id}.")
    return redirect(_org_url("files", membership))


@require_GET
@member_view(manager=True)
def audit_log(request: HttpRequest, membership: Membership) -> HttpResponse:
    page = Paginator(selectors.audit_list(organization=membership.organization), 50).get_page(request.GET.get("page"))
    return _page(request, membership, "audit.html", page=page)


# --- webhooks ----------------------------------------------------------------------------


def _endpoint_or_404(membership: Membership, endpoint_id: str) -> Any:
    endpoint = webhook_endpoint_get(organization=membership.organization, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404("no such webhook endpoint")
    return endpoint


def _endpoint_url(membership: Membership, endpoint: Any) -> str:
    return _org_url("webhook", membership, endpoint.pk)


@require_GET
@member_view(manager=True)
def webhook_list(request: HttpRequest, membership: Membership) -> HttpResponse:
    return _page(
        request, membership, "webhooks.html", endpoints=webhook_endpoint_list(organization=membership.organization)
    )


def _show_webhook_secret(
    request: HttpRequest, membership: Membership, minted: MintedSecret, title: str
) -> HttpResponse:
    return _secret_page(request, membership, "webhook_secret.html", minted=minted, title=title)


USED_WEBHOOK_NONCES = "console_webhook_create_nonces"


@never_cache
@require_http_methods(["GET", "POST"])
@member_view(manager=True)
def webhook_create(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = forms.WebhookEndpointForm(request.POST or None, initial={"nonce": secrets.token_urlsafe(16)})
    used: list[str] = request.session.get(USED_WEBHOOK_NONCES, [])
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data["nonce"] in used:
            messages.info(request, "That endpoint was already created; its signing secret was shown once.")
            return redirect(_org_url("webhooks", membership))
        try:
            minted = webhook_endpoint_create(
                organization=membership.organization,
                url=data["url"],
                events=data["events"],
                description=data["description"],
                actor=request.user,
            )
        except WebhookUrlRefused as exc:
            form.add_error("url", str(exc))
        except WebhookError as exc:
            form.add_error(None, _sentence(exc))
        else:
            request.session[USED_WEBHOOK_NONCES] = [*used[-19:], data["nonce"]]
            return _show_webhook_secret(request, membership, minted, "Endpoint created")
    return _page(request, membership, "webhook_create.html", form=form)


@require_GET
@member_view(manager=True)
def webhook_detail(request: HttpRequest, membership: Membership, endpoint_id: str) -> HttpResponse:
    endpoint = _endpoint_or_404(membership, endpoint_id)
    page = Paginator(webhook_delivery_list(endpoint=endpoint), 50).get_page(request.GET.get("page"))
    previous_counts = endpoint.previous_secret_expires_at is not None and endpoint.previous_secret_expires_at > (
        timezone.now()
    )
    return _page(
        request,
        membership,
        "webhook_detail.html",
        endpoint=endpoint,
        page=page,
        previous_counts=previous_counts,
        rotate_form=forms.WebhookRotateForm(),
    )


def _sentence(exc: Exception) -> str:
    text = str(exc)
    return f"{text[:1].upper()}{text[1:]}."


def _endpoint_change(
    request: HttpRequest, membership: Membership, endpoint_id: str, change: Callable[..., Any], done: str
) -> HttpResponse:
    """Apply a service to the endpoint with the person as actor; its refusal, or `done` (with
    `{url}`), is the message on the endpoint's page."""
    endpoint = _endpoint_or_404(membership, endpoint_id)
    try:
        change(endpoint=endpoint, actor=request.user)
    except WebhookError as exc:
        messages.error(request, _sentence(exc))
    else:
        messages.success(request, done.format(url=endpoint.url))
    return redirect(_endpoint_url(membership, endpoint))


@require_POST
@member_view(manager=True)
def webhook_disable(request: HttpRequest, membership: Membership, endpoint_id: str) -> HttpResponse:
    return _endpoint_change(
        request,
        membership,
        endpoint_id,
        webhook_endpoint_disable,
        "Disabled {url}: no events are sent to it until it is enabled.",
    )


@require_POST
@member_view(manager=True)
def webhook_enable(request: HttpRequest, membership: Membership, endpoint_id: str) -> HttpResponse:
    return _endpoint_change(
        request,
        membership,
        endpoint_id,
        webhook_endpoint_enable,
        "Enabled {url}: new events are sent to it, and deliveries still due are attempted now.",
    )


@never_cache
@require_POST
@member_view(manager=True)
def webhook_rotate(request: HttpRequest, membership: Membership, endpoint_id: str) -> HttpResponse:
    endpoint = _endpoint_or_404(membership, endpoint_id)
    form = forms.WebhookRotateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose when the old secret stops signing.")
        return redirect(_endpoint_url(membership, endpoint))
    minted = webhook_endpoint_rotate_secret(endpoint=endpoint, overlap=form.cleaned_data["overlap"], actor=request.user)
    return _show_webhook_secret(request, membership, minted, "Signing secret rotated")


@require_http_methods(["GET", "POST"])
@member_view(manager=True)
def webhook_delete(request: HttpRequest, membership: Membership, endpoint_id: str) -> HttpResponse:
    endpoint = _endpoint_or_404(membership, endpoint_id)
    if request.method == "POST":
        webhook_endpoint_delete(endpoint=endpoint, actor=request.user)
        messages.success(request, f"Deleted the endpoint {endpoint.url} and its delivery log.")
        return redirect(_org_url("webhooks", membership))
    return _page(request, membership, "webhook_confirm.html", endpoint=endpoint)


def _delivery_or_404(endpoint: Any, delivery_id: int) -> Any:
    delivery = webhook_delivery_get(endpoint=endpoint, delivery_id=delivery_id)
    if delivery is None:
        raise Http404("no such delivery")
    return delivery


@require_GET
@member_view(manager=True)
def webhook_delivery(request: HttpRequest, membership: Membership, endpoint_id: str, delivery_id: int) -> HttpResponse:
    """One event sent to one endpoint: every attempt, and the body as it is sent."""
    endpoint = _endpoint_or_404(membership, endpoint_id)
    delivery = _delivery_or_404(endpoint, delivery_id)
    body = json.dumps(json.loads(event_body(delivery.event)), indent=2)
    return _page(
        request,
        membership,
        "webhook_delivery.html",
        endpoint=endpoint,
        delivery=delivery,
        attempts=webhook_attempt_list(delivery=delivery),
        body=body,
    )


@require_POST
@member_view(manager=True)
def webhook_resend(request: HttpRequest, membership: Membership, endpoint_id: str, delivery_id: int) -> HttpResponse:
    endpoint = _endpoint_or_404(membership, endpoint_id)
    delivery = _delivery_or_404(endpoint, delivery_id)
    try:
        webhook_delivery_resend(delivery=delivery, actor=request.user)
    except WebhookError as exc:
        messages.error(request, _sentence(exc))
    else:
        messages.success(
            request, f"Sending {delivery.event_id} again: the attempt shows in the log once it is made (seconds)."
        )
    if request.POST.get("back") == "delivery":
        return redirect(_org_url("webhook-delivery", membership, endpoint.pk, delivery.pk))
    return redirect(_endpoint_url(membership, endpoint))


# Django's reset views, with the console's templates and mail, limited per client address (a
# reset mails whoever owns the address, so it must not be a way to flood a mailbox).
class _PasswordResetView(auth_views.PasswordResetView):
    template_name = "console/password_reset.html"
    email_template_name = "console/emails/password_reset.txt"
    subject_template_name = "console/emails/password_reset_subject.txt"
    success_url = reverse_lazy("console:password-reset-sent")

    def form_valid(self, form: Any) -> HttpResponse:
        # Links name the service's public address, never the Host header the request came with.
        self.extra_email_context = {"public_url": settings.SVCX_PUBLIC_URL}
        return super().form_valid(form)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """The new password from a reset link. The reset proves the e-mail address, so the failed
    sign-ins counted against it are forgotten: a stranger who ran them up cannot keep its owner
    out of the console (accounts.guards)."""

    template_name = "console/password_reset_confirm.html"
    success_url = reverse_lazy("console:password-reset-complete")

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        sign_in_failures_clear(email=form.user.email)
        return response


password_reset = per_address("SVCX_LOGIN_ATTEMPTS_PER_MINUTE")(
    _PasswordResetView.as_view()  # type: ignore[arg-type]  # as_view() is typed HttpResponseBase; it renders HttpResponse
)
