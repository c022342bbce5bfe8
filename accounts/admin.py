"""The Django admin for staff: organizations, members, keys and the audit log.

Every change goes through a service, which writes the audit log; the admin never edits a row
directly. Every action that changes state asks first: a confirmation page lists what it will act
on and takes a reason, which the service writes into the audit log (ConfirmingAdmin); the same
actions are on an object's change page. A replacement key made by staff (rotation, leak) is
never shown to staff: it goes into a single-use reveal link mailed to the organization's people
(only a key staff create themselves is shown, once). billing.admin registers the organization and
key admins again with the money side added: credits and the actions on them, a key's activity
report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from accounts import services
from accounts.limits import LIMIT_NAMES
from accounts.models import ApiKey, AuditEvent, Membership, Organization
from accounts.scopes import ISSUED_SCOPES, PRESETS
from accounts.serializers import key_status
from core.admin import PastedIdAdmin, ReadOnlyAdmin


class ActionForm(forms.Form):
    """What a confirmation page asks for: the reason, always, and any fields an action adds."""

    reason = forms.CharField(
        max_length=160,
        help_text="Why: recorded in the audit log with your name.",
        widget=forms.TextInput(attrs={"size": 60}),
    )


class DebtForm(ActionForm):
    debt = forms.IntegerField(min_value=0, help_text="Credits owed under the open dispute or chargeback.")
    field_order = ["debt", "reason"]


def confirm(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    *,
    title: str,
    consequence: str,
    form_class: type[ActionForm] = ActionForm,
) -> ActionForm | HttpResponse:
    """The bound, valid form once staff confirmed on the page that lists `queryset`, says what
    will happen and asks the reason; until then (first request, or no reason), that page: the
    caller acts only on a form. Cancel goes back where staff came from (the list or the object)."""
    submitted = "apply" in request.POST
    form = form_class(request.POST if submitted else None)
    if submitted and form.is_valid():
        return form
    opts = modeladmin.model._meta
    changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    first = queryset.first()
    if request.path == changelist or first is None:
        back = request.get_full_path()
    else:
        back = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[quote(first.pk)])
    match = request.resolver_match
    return render(
        request,
        "admin/svcx_confirm.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "consequence": consequence,
            "form": form,
            "queryset": queryset,
            "action": (match.kwargs.get("action") if match else None) or request.POST.get("action", ""),
            "opts": opts,
            "back": back,
        },
    )


# What a confirmed action does once staff confirmed: (model admin, request, queryset, the form's
# cleaned data, the reason among them) -> a page to show, or None for the list or object page.
Perform = Callable[[Any, HttpRequest, QuerySet, dict[str, Any]], HttpResponse | None]


def confirmed_action(
    *,
    description: str,
    consequence: str,
    title: str = "",
    form_class: type[ActionForm] = ActionForm,
    permissions: tuple[str, ...] = ("change",),
) -> Callable[[Perform], Callable[[Any, HttpRequest, QuerySet], HttpResponse | None]]:
    """An admin action that first shows its confirmation page (`confirm`) and performs only with
    the confirmed form's data; offered only to users with `permissions` on the model."""

    def decorate(perform: Perform) -> Callable[[Any, HttpRequest, QuerySet], HttpResponse | None]:
        @admin.action(description=description, permissions=list(permissions))
        @functools.wraps(perform)
        def action(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
            form = confirm(
                modeladmin,
                request,
                queryset,
                title=title or description,
                consequence=consequence,
                form_class=form_class,
            )
            if isinstance(form, HttpResponse):
                return form
            return perform(modeladmin, request, queryset, form.cleaned_data)

        return action

    return decorate


class ConfirmingAdmin(PastedIdAdmin):
    """A model admin whose actions are also buttons on an object's change page (`object_actions`,
    those that apply to the object, `action_applies`, and that the user may perform: the actions'
    `permissions`). Each button opens the action's own confirmation page for that one object."""

    object_actions: list[str] = []
    change_form_template = "admin/svcx_change_form.html"

    def action_applies(self, action: str, obj: Any) -> bool:
        """Whether `action` makes sense for `obj` in its present state (offered on its page)."""
        return True

    def _url(self, name: str, pk: Any, *args: str) -> str:
        opts = self.model._meta
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_{name}", args=[quote(pk), *args])

    def _allowed(self, request: HttpRequest) -> dict[str, tuple[Any, str, str]]:
        """The actions `request`'s user may perform (Django filters them by their `permissions`)."""
        return {name: action for name, action in self.get_actions(request).items() if action is not None}

    def object_tools(self, request: HttpRequest, obj: Any) -> list[tuple[str, str]]:
        """(url, label) of the actions offered on `obj`'s page."""
        allowed = self._allowed(request)
        return [
            (self._url("action", obj.pk, name), str(allowed[name][2]))
            for name in self.object_actions
            if name in allowed and self.action_applies(name, obj)
        ]

    def get_urls(self) -> list[URLPattern]:
        opts = self.model._meta
        action = path(
            "<path:object_id>/actions/<str:action>/",
            self.admin_site.admin_view(self.object_action_view),
            name=f"{opts.app_label}_{opts.model_name}_action",
        )
        return [action, *super().get_urls()]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id))
        tools = self.object_tools(request, obj) if obj is not None else []
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "object_actions": tools})

    def object_action_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        """One action on one object, through the action itself (its confirmation page first).
        404 for an unknown object or action, 403 for an action the user may not perform."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None or action not in self.object_actions:
            raise Http404("no such object or action")
        allowed = self._allowed(request)
        if action not in allowed:
            raise PermissionDenied
        func, _, description = allowed[action]
        change = self._url("change", obj.pk)
        if not self.action_applies(action, obj):
            self.message_user(request, f"{obj}: “{description}” does not apply now.", level=messages.ERROR)
            return HttpResponseRedirect(change)
        response: HttpResponse | None = func(self, request, self.get_queryset(request).filter(pk=obj.pk))
        return response if response is not None else HttpResponseRedirect(change)


class MembershipFormSet(forms.BaseInlineFormSet):
    """The members as a whole: an organization that has an owner keeps one (the services' rule)."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors) or self.instance._state.adding:
            return
        owners_after = sum(
            1
            for form in self.forms
            if form.cleaned_data
            and not form.cleaned_data.get("DELETE")
            and form.cleaned_data.get("role") == Membership.Role.OWNER
        )
        try:
            services.membership_owners_check(organization=self.instance, owners_after=owners_after)
        except services.AccountError as exc:
            raise forms.ValidationError(str(exc)) from exc


class MembershipInline(admin.TabularInline):
    """Members and their roles; saved through the membership services (OrganizationAdmin.save_formset)."""

    model = Membership
    formset = MembershipFormSet
    extra = 0
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]
    autocomplete_fields = ["user"]


def _changelist_link(model: str, label: str, **filters: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in filters.items())
    return format_html('<a href="{}?{}">{}</a>', reverse(f"admin:{model}_changelist"), query, label)


def org_label(organization: Organization) -> str:
    return f"{organization.name} ({organization.id})"


class OrganizationForm(forms.ModelForm):
    class Meta:
        model = Organization
        fields = ["name", "debug_policy", "limits"]
        help_texts = {"limits": f'Overrides, e.g. {{"requests": 1200}}. Meters: {", ".join(sorted(LIMIT_NAMES))}.'}

    def clean_limits(self) -> dict[str, int]:
        limits = self.cleaned_data["limits"] or {}
        if not isinstance(limits, dict):
            raise forms.ValidationError("limits is a JSON object")
        for meter, value in limits.items():
            if meter not in LIMIT_NAMES or not isinstance(value, int) or value < 0:
                raise forms.ValidationError(f"bad limit {meter!r}: {value!r}")
        return limits


@admin.register(Organization)
class OrganizationAdmin(ConfirmingAdmin):
    form = OrganizationForm
    list_display = ["id", "name", "status", "debug_policy", "created_at"]
    search_fields = ["id", "name"]
    readonly_fields = ["id", "status", "suspended_at", "delinquent_debt", "created_at"]
    detail_fields = ["records"]  # shown on the change page
    inlines = [MembershipInline]
    actions = ["suspend", "unsuspend", "mark_delinquent", "clear_delinquent"]
    object_actions = ["suspend", "unsuspend", "mark_delinquent", "clear_delinquent"]

    def has_delete_permission(self, request: HttpRequest, obj: Organization | None = None) -> bool:
        return False  # an organization's ledger and audit log stay: suspend it instead

    def action_applies(self, action: str, obj: Organization) -> bool:
        if action == "suspend":
            return obj.suspended_at is None
        if action == "unsuspend":
            return obj.suspended_at is not None
        if action == "clear_delinquent":
            return obj.delinquent_debt is not None
        return True

    def get_readonly_fields(self, request: HttpRequest, obj: Organization | None = None) -> list[str]:
        return [*self.readonly_fields, *self.detail_fields] if obj is not None else self.readonly_fields

    @admin.display(description="records")
    def records(self, obj: Organization) -> SafeString:
        org = {"organization__id__exact": obj.id}
        return format_html_join(
            " · ",
            "{}",
            [
                (_changelist_link("accounts_apikey", "API keys", **org),),
                (_changelist_link("billing_ledgerentry", "ledger", **org),),
                (_changelist_link("billing_credithold", "holds", **org),),
                (_changelist_link("conversion_conversionjob", "conversion jobs", **org),),
                (_changelist_link("conversion_job", "version 2 jobs", **org),),
                (_changelist_link("conversion_storedfile", "stored files", **org),),
                (_changelist_link("billing_usagerecord", "usage records", **org),),
                (_changelist_link("webhooks_webhookendpoint", "webhook endpoints", **org),),
                (_changelist_link("accounts_auditevent", "audit log", **org),),
            ],
        )

    def save_formset(self, request: HttpRequest, form: forms.ModelForm, formset: Any, change: bool) -> None:
        if formset.model is not Membership:
            super().save_formset(request, form, formset, change)
            return
        organization = form.instance
        formset.save(commit=False)
        done: list[str] = []
        rows = Membership.objects.select_related("user")
        changed = [(obj, rows.get(pk=obj.pk)) for obj, _ in formset.changed_objects]
        try:
            # Additions and promotions first, removals last: handing over ownership in one save
            # never passes through a state without an owner.
            for new in formset.new_objects:
                services.membership_add(organization=organization, user=new.user, role=new.role, actor=request.user)
                done.append(f"added {new.user.get_username()} as {new.role}")
            for obj, before in sorted(changed, key=lambda pair: pair[0].role != Membership.Role.OWNER):
                if obj.user_id != before.user_id:
                    # The newcomer first: replacing the only owner keeps an owner throughout.
                    services.membership_add(organization=organization, user=obj.user, role=obj.role, actor=request.user)
                    services.membership_remove(organization=organization, user=before.user, actor=request.user)
                    done.append(f"replaced {before.user.get_username()} by {obj.user.get_username()} as {obj.role}")
                elif obj.role != before.role:
                    services.membership_set_role(
                        organization=organization, user=obj.user, role=obj.role, actor=request.user
                    )
                    done.append(f"{obj.user.get_username()} is now {obj.role} (was {before.role})")
            for obj in formset.deleted_objects:
                before = rows.get(pk=obj.pk)
                services.membership_remove(organization=organization, user=before.user, actor=request.user)
                done.append(f"removed {before.user.get_username()}")
        except services.AccountError as exc:
            self.message_user(request, f"Members of {org_label(organization)}: {exc}", level=messages.ERROR)
        if done:
            self.message_user(request, f"Members of {org_label(organization)}: {'; '.join(done)}.")

    def save_model(self, request: HttpRequest, obj: Organization, form: forms.ModelForm, change: bool) -> None:
        if not change:
            created = services.organization_create(name=obj.name, debug_policy=obj.debug_policy, actor=request.user)
            obj.pk = created.pk
            obj.refresh_from_db()
        else:
            Organization.objects.filter(pk=obj.pk).update(name=obj.name, debug_policy=obj.debug_policy)
            services.audit_record(
                actor=request.user,
                action="organization.update",
                organization=obj,
                target=obj.id,
                name=obj.name,
                debug_policy=obj.debug_policy,
            )
        current = Organization.objects.get(pk=obj.pk).limits
        for meter, value in (form.cleaned_data.get("limits") or {}).items():
            if current.get(meter) != value:
                services.organization_set_limit(organization=obj, meter=meter, value=value, actor=request.user)
        removed = set(current) - set(form.cleaned_data.get("limits") or {})
        if removed:
            Organization.objects.filter(pk=obj.pk).update(limits={k: v for k, v in current.items() if k not in removed})
            services.audit_record(
                actor=request.user,
                action="organization.clear_limits",
                organization=obj,
                target=obj.id,
                meters=sorted(removed),
            )

    @confirmed_action(
        description="Suspend",
        consequence="Every request of these organizations is refused from the next one, until the "
        "suspension is lifted. Their keys, balances and members stay as they are.",
    )
    def suspend(
        self, request: HttpRequest, queryset: QuerySet[Organization], data: dict[str, Any]
    ) -> HttpResponse | None:
        for organization in queryset:
            services.organization_suspend(organization=organization, reason=data["reason"], actor=request.user)
        self.message_user(request, f"Suspended {_names(queryset)}: their requests are refused from the next one.")
        return None

    @confirmed_action(
        description="Lift suspension",
        consequence="These organizations' requests are served again from the next one.",
    )
    def unsuspend(
        self, request: HttpRequest, queryset: QuerySet[Organization], data: dict[str, Any]
    ) -> HttpResponse | None:
        for organization in queryset:
            services.organization_unsuspend(organization=organization, reason=data["reason"], actor=request.user)
        self.message_user(request, f"Lifted the suspension of {_names(queryset)}.")
        return None

    @confirmed_action(
        description="Mark delinquent (freeze spending)",
        title="Mark delinquent",
        consequence="Spending is frozen: requests that cost credits are refused until the delinquency is cleared.",
        form_class=DebtForm,
    )
    def mark_delinquent(
        self, request: HttpRequest, queryset: QuerySet[Organization], data: dict[str, Any]
    ) -> HttpResponse | None:
        for organization in queryset:
            services.organization_mark_delinquent(
                organization=organization,
                debt=data["debt"],
                reason=data["reason"],
                actor=request.user,
            )
        self.message_user(request, f"Spending frozen for {_names(queryset)} (debt {data['debt']:,} credits).")
        return None

    @confirmed_action(
        description="Clear delinquency",
        consequence="Spending is allowed again from the next request.",
    )
    def clear_delinquent(
        self, request: HttpRequest, queryset: QuerySet[Organization], data: dict[str, Any]
    ) -> HttpResponse | None:
        for organization in queryset:
            services.organization_clear_delinquent(organization=organization, reason=data["reason"], actor=request.user)
        self.message_user(request, f"Delinquency cleared for {_names(queryset)}: spending allowed again.")
        return None


def _names(queryset: QuerySet[Organization]) -> str:
    return ", ".join(org_label(o) for o in queryset)


class ApiKeyCreateForm(forms.ModelForm):
    preset = forms.ChoiceField(choices=[(p, p) for p in PRESETS] + [("custom", "custom")], initial="full")
    custom_scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in ISSUED_SCOPES], required=False, widget=forms.CheckboxSelectMultiple
    )
    allowlist = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One IP or CIDR per line; empty: any address.",
    )

    class Meta:
        model = ApiKey
        fields = ["organization", "environment", "name", "project", "expires_at"]


class ApiKeyChangeForm(forms.ModelForm):
    custom_scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in ISSUED_SCOPES], widget=forms.CheckboxSelectMultiple, label="Scopes"
    )
    allowlist = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One IP or CIDR per line; empty: any address.",
    )

    class Meta:
        model = ApiKey
        fields = ["expires_at"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["custom_scopes"].initial = [s for s in self.instance.scopes if s in ISSUED_SCOPES]
            self.fields["allowlist"].initial = "\n".join(self.instance.ip_allowlist)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class RotateForm(ActionForm):
    overlap = forms.ChoiceField(
        choices=[
            ("7d", "7 more days"),
            ("24h", "24 more hours"),
            ("1h", "1 more hour"),
            ("immediate", "stops now"),
        ],
        initial="24h",
        label="The old key works",
        widget=forms.RadioSelect,
    )
    field_order = ["overlap", "reason"]


REVEAL_DELIVERY = (
    "The replacement is not shown here: it goes into a single-use reveal link (valid 7 days) mailed to "
    "the organization's owners and admins and the key's creator; when there is nobody to mail, the next "
    "page shows you that link once, to hand over."
)


@admin.register(ApiKey)
class ApiKeyAdmin(ConfirmingAdmin):
    list_display = ["id", "hint", "name", "organization", "environment", "status", "expires_at", "last_used_at"]
    list_filter = ["environment", "revoked_at"]
    search_fields = ["id", "hint", "name", "organization__id", "organization__name"]
    readonly_fields = [
        "id",
        "organization",
        "environment",
        "name",
        "project",
        "hint",
        "scopes",
        "ip_allowlist",
        "revoked_at",
        "revoked_reason",
        "replaced_by",
        "created_by",
        "last_used_at",
        "created_at",
        "replacement",
    ]
    actions = ["rotate", "revoke", "confirm_leak"]
    object_actions = ["rotate", "revoke", "confirm_leak"]
    report_days: int | None = None  # the days of the activity report linked beside a confirmed leak, if any

    def get_form(self, request: HttpRequest, obj: ApiKey | None = None, change: bool = False, **kwargs: Any) -> Any:
        kwargs["form"] = ApiKeyChangeForm if obj is not None else ApiKeyCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return self.readonly_fields if obj is not None else []

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> Any:
        if obj is None:
            return [
                "organization",
                "environment",
                "name",
                "project",
                "preset",
                "custom_scopes",
                "allowlist",
                "expires_at",
            ]
        return [*self.readonly_fields, "custom_scopes", "allowlist", "expires_at"]

    def action_applies(self, action: str, obj: ApiKey) -> bool:
        if action == "rotate":
            return obj.revoked_at is None and obj.replaced_by_id is None
        return obj.revoked_at is None

    @admin.display(description="status")
    def status(self, obj: ApiKey) -> str:
        return key_status(obj)

    @admin.display(description="replacement")
    def replacement(self, obj: ApiKey) -> str:
        replacement = obj.replaced_by
        if replacement is None:
            return "-"
        reveal = getattr(replacement, "reveal", None)
        state = ""
        if reveal is not None:
            state = (
                f"; its reveal link was used at {reveal.revealed_at:%Y-%m-%d %H:%M} UTC"
                if reveal.revealed_at
                else f"; its reveal link is unused, valid until {reveal.expires_at:%Y-%m-%d %H:%M} UTC"
            )
        why = f"leak confirmed {obj.revoked_at:%Y-%m-%d %H:%M} UTC; " if obj.revoked_reason == "leak confirmed" else ""
        return f"{why}replacement {replacement.hint}{state}"

    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False  # keys are revoked, never deleted: their history stays

    def save_model(self, request: HttpRequest, obj: ApiKey, form: forms.ModelForm, change: bool) -> None:
        data = form.cleaned_data
        try:
            if change:
                services.api_key_update(
                    api_key=obj,
                    scopes=data["custom_scopes"],
                    ip_allowlist=_lines(data["allowlist"]),
                    expires_at=data["expires_at"],
                    actor=request.user,
                )
                obj.refresh_from_db()
                return
            preset = data["preset"]
            minted = services.api_key_create(
                organization=data["organization"],
                environment=data["environment"],
                name=data["name"],
                project=data["project"],
                preset=None if preset == "custom" else preset,
                scopes=data["custom_scopes"] if preset == "custom" else None,
                ip_allowlist=_lines(data["allowlist"]),
                expires_at=data["expires_at"],
                actor=request.user,
            )
        except (services.AccountError, ValueError) as exc:
            raise forms.ValidationError(str(exc)) from exc
        obj.pk = minted.api_key.pk
        request._svcx_minted = [minted]  # type: ignore[attr-defined]  # shown once by response_add

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None) -> HttpResponse:
        minted = getattr(request, "_svcx_minted", [])
        for m in minted:
            self.message_user(request, f"Created the {m.api_key.environment} key {m.api_key.hint} ({m.api_key.id}).")
        return self._once(request, "admin/svcx_key_secrets.html", "API key created", minted=minted)

    def _once(self, request: HttpRequest, template: str, title: str, **context: Any) -> HttpResponse:
        """A page with something shown this once (a secret, a reveal link): never cached."""
        response = render(
            request,
            template,
            {**self.admin_site.each_context(request), "title": title, "opts": self.model._meta, **context},
        )
        response["Cache-Control"] = "no-store"
        return response

    def _delivered(
        self,
        request: HttpRequest,
        replacements: list[services.KeyReplacement],
        title: str,
        report_days: int | None = None,
    ) -> HttpResponse:
        """Where each replacement's reveal link went; the link itself only when nobody was mailed
        (it exists only now: the database keeps its hash)."""
        return self._once(
            request, "admin/svcx_replacements.html", title, replacements=replacements, report_days=report_days
        )

    @staticmethod
    def _told(replacement: services.KeyReplacement) -> str:
        if replacement.recipients:
            return f"the reveal link was mailed to {', '.join(replacement.recipients)}"
        return "nobody to mail: hand over the reveal link below yourself"

    @confirmed_action(
        description="Rotate (replacement by reveal link)",
        title="Rotate",
        consequence="Each key gets a replacement with the same name, scopes and IP allowlist; the old "
        "key keeps working for the time you choose. " + REVEAL_DELIVERY,
        form_class=RotateForm,
    )
    def rotate(self, request: HttpRequest, queryset: QuerySet[ApiKey], data: dict[str, Any]) -> HttpResponse | None:
        overlap, done = data["overlap"], []
        for api_key in queryset:
            try:
                rotated = services.api_key_rotate_by_reveal(
                    api_key=api_key, overlap=overlap, reason=data["reason"], actor=request.user
                )
            except services.AccountError as exc:
                self.message_user(request, f"{api_key.hint}: {exc}", level=messages.ERROR)
                continue
            done.append(rotated)
            self.message_user(
                request,
                f"Rotated {api_key.hint}: replacement {rotated.replacement.hint}; the old key works until "
                f"{rotated.old.expires_at:%Y-%m-%d %H:%M} UTC; {self._told(rotated)}.",
                level=messages.SUCCESS if rotated.recipients else messages.WARNING,
            )
        return self._delivered(request, done, f"Rotated (overlap {overlap})") if done else None

    @confirmed_action(
        description="Revoke (irreversible)",
        title="Revoke",
        consequence="Requests with these keys are refused from the next one. A revoked key cannot be "
        "restored; its organization gets no replacement.",
    )
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey], data: dict[str, Any]) -> HttpResponse | None:
        hints = []
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key, reason=f"revoked by staff: {data['reason']}", actor=request.user)
            hints.append(api_key.hint)
        self.message_user(request, f"Revoked {', '.join(hints)}: refused from the next request.")
        return None

    @confirmed_action(
        description="Confirm leak (revoke, replacement by reveal link)",
        title="Confirm leak",
        consequence="Each key is revoked now and gets a replacement with the same name, scopes and IP "
        "allowlist; the organization is neither suspended nor frozen. " + REVEAL_DELIVERY,
    )
    def confirm_leak(
        self, request: HttpRequest, queryset: QuerySet[ApiKey], data: dict[str, Any]
    ) -> HttpResponse | None:
        leaks = []
        for api_key in queryset:
            if api_key.revoked_at is not None:
                # Refused already; its replacement, if any, is where a leak now matters.
                self.message_user(
                    request, f"{api_key.hint} is already revoked ({api_key.revoked_reason}).", level=messages.ERROR
                )
                continue
            leak = services.api_key_confirm_leak(api_key=api_key, reason=data["reason"], actor=request.user)
            leaks.append(leak)
            self.message_user(
                request,
                f"Leak confirmed: {api_key.hint} revoked; replacement {leak.replacement.hint} issued; "
                f"{self._told(leak)}.",
                level=messages.SUCCESS if leak.recipients else messages.WARNING,
            )
        return self._delivered(request, leaks, "Leak confirmed", self.report_days) if leaks else None


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor_label", "action", "organization", "target", "reason"]
    list_filter = ["action"]
    search_fields = ["target", "actor_label", "organization__id"]

    @admin.display(description="reason")
    def reason(self, obj: AuditEvent) -> str:
        return str(obj.details.get("reason", "")) if isinstance(obj.details, dict) else ""
