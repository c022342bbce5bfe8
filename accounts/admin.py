"""The Django admin for staff: organizations, members, keys and the audit log.

Every change goes through a service, which writes the audit log; the admin never edits a row
directly and never shows or stores a key's secret (a new secret is rendered once, in the
response of the action that made it). billing.admin registers the organization and key admins
again with the money side added: credits and the actions on them, a key's activity report.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from accounts import services
from accounts.limits import LIMIT_NAMES
from accounts.models import ApiKey, AuditEvent, Membership, Organization
from accounts.scopes import ISSUED_SCOPES, PRESETS
from accounts.serializers import key_status
from core.admin import ReadOnlyAdmin


class ActionForm(forms.Form):
    """Fields an admin action asks for on an intermediate page."""


class DebtForm(ActionForm):
    debt = forms.IntegerField(min_value=0, help_text="Credits owed under the open dispute or chargeback.")


def ask(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet, form_class: type[ActionForm], title: str
) -> ActionForm | HttpResponse:
    """The bound, valid form when the intermediate page was submitted, else the page."""
    form = form_class(request.POST) if "apply" in request.POST else form_class()
    if "apply" in request.POST and form.is_valid():
        return form
    return render(
        request,
        "admin/svcx_action_form.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "form": form,
            "queryset": queryset,
            "action": request.POST.get("action"),
            "opts": modeladmin.model._meta,
        },
    )


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
class OrganizationAdmin(admin.ModelAdmin):
    form = OrganizationForm
    list_display = ["id", "name", "status", "debug_policy", "created_at"]
    search_fields = ["id", "name"]
    readonly_fields = ["id", "status", "suspended_at", "delinquent_debt", "created_at"]
    detail_fields = ["records"]  # shown on the change page
    inlines = [MembershipInline]
    actions = ["suspend", "unsuspend", "mark_delinquent", "clear_delinquent"]

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
                (_changelist_link("conversion_storedfile", "stored files", **org),),
                (_changelist_link("billing_usagerecord", "usage records", **org),),
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

    @admin.action(description="Suspend (from the next request)")
    def suspend(self, request: HttpRequest, queryset: QuerySet[Organization]) -> None:
        for organization in queryset:
            services.organization_suspend(organization=organization, actor=request.user)
        self.message_user(request, f"Suspended {_names(queryset)}: their requests are refused from the next one.")

    @admin.action(description="Lift suspension")
    def unsuspend(self, request: HttpRequest, queryset: QuerySet[Organization]) -> None:
        for organization in queryset:
            services.organization_unsuspend(organization=organization, actor=request.user)
        self.message_user(request, f"Lifted the suspension of {_names(queryset)}.")

    @admin.action(description="Mark delinquent (freeze spending)")
    def mark_delinquent(self, request: HttpRequest, queryset: QuerySet[Organization]) -> HttpResponse | None:
        form = ask(self, request, queryset, DebtForm, "Mark delinquent")
        if isinstance(form, HttpResponse):
            return form
        for organization in queryset:
            services.organization_mark_delinquent(
                organization=organization, debt=form.cleaned_data["debt"], actor=request.user
            )
        self.message_user(
            request, f"Spending frozen for {_names(queryset)} (debt {form.cleaned_data['debt']:,} credits)."
        )
        return None

    @admin.action(description="Clear delinquency")
    def clear_delinquent(self, request: HttpRequest, queryset: QuerySet[Organization]) -> None:
        for organization in queryset:
            services.organization_clear_delinquent(organization=organization, actor=request.user)
        self.message_user(request, f"Delinquency cleared for {_names(queryset)}: spending allowed again.")


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


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
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
        "leak",
    ]
    actions = ["rotate_7d", "rotate_24h", "rotate_1h", "rotate_immediate", "revoke", "confirm_leak"]
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

    @admin.display(description="status")
    def status(self, obj: ApiKey) -> str:
        return key_status(obj)

    @admin.display(description="leak")
    def leak(self, obj: ApiKey) -> str:
        if obj.revoked_reason != "leak confirmed":
            return "-"
        replacement = obj.replaced_by
        reveal = getattr(replacement, "reveal", None) if replacement is not None else None
        state = ""
        if reveal is not None:
            state = (
                f"; its reveal link was used at {reveal.revealed_at:%Y-%m-%d %H:%M} UTC"
                if reveal.revealed_at
                else f"; its reveal link is unused, valid until {reveal.expires_at:%Y-%m-%d %H:%M} UTC"
            )
        hint = replacement.hint if replacement is not None else "none"
        return f"confirmed {obj.revoked_at:%Y-%m-%d %H:%M} UTC; replacement {hint}{state}"

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
        return self._show_secrets(request, minted, "API key created")

    def _show_secrets(self, request: HttpRequest, minted: list[services.MintedKey], title: str) -> HttpResponse:
        return self._once(request, "admin/svcx_key_secrets.html", title, minted=minted)

    def _once(self, request: HttpRequest, template: str, title: str, **context: Any) -> HttpResponse:
        """A page with something shown this once (a secret, a reveal link): never cached."""
        response = render(
            request,
            template,
            {**self.admin_site.each_context(request), "title": title, "opts": self.model._meta, **context},
        )
        response["Cache-Control"] = "no-store"
        return response

    def _rotate(self, request: HttpRequest, queryset: QuerySet[ApiKey], overlap: str) -> HttpResponse | None:
        minted = []
        for api_key in queryset:
            try:
                minted.append(services.api_key_rotate(api_key=api_key, overlap=overlap, actor=request.user))
            except services.AccountError as exc:
                self.message_user(request, f"{api_key.hint}: {exc}", level=messages.ERROR)
                continue
            self.message_user(
                request,
                f"Rotated {api_key.hint}: replacement {minted[-1].api_key.hint}; the old key works until "
                f"{api_key.expires_at:%Y-%m-%d %H:%M} UTC.",
            )
        return self._show_secrets(request, minted, f"Rotated (overlap {overlap})") if minted else None

    @admin.action(description="Rotate, old key works 7 more days")
    def rotate_7d(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        return self._rotate(request, queryset, "7d")

    @admin.action(description="Rotate, old key works 24 more hours")
    def rotate_24h(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        return self._rotate(request, queryset, "24h")

    @admin.action(description="Rotate, old key works 1 more hour")
    def rotate_1h(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        return self._rotate(request, queryset, "1h")

    @admin.action(description="Rotate, old key stops now")
    def rotate_immediate(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        return self._rotate(request, queryset, "immediate")

    @admin.action(description="Revoke (irreversible)")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        hints = []
        for api_key in queryset:
            services.api_key_revoke(
                api_key=api_key, reason=f"revoked by staff ({request.user.get_username()})", actor=request.user
            )
            hints.append(api_key.hint)
        self.message_user(request, f"Revoked {', '.join(hints)}: refused from the next request.")

    @admin.action(description="Confirm leak: revoke, issue replacement by reveal link, notify owners")
    def confirm_leak(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse:
        leaks = []
        for api_key in queryset:
            leak = services.api_key_confirm_leak(api_key=api_key, actor=request.user)
            leaks.append(leak)
            told = (
                f"the reveal link was mailed to {', '.join(leak.recipients)}"
                if leak.recipients
                else "nobody to mail: hand over the reveal link below yourself"
            )
            self.message_user(
                request,
                f"Leak confirmed: {api_key.hint} revoked; replacement {leak.replacement.hint} issued; {told}.",
                level=messages.SUCCESS if leak.recipients else messages.WARNING,
            )
        # The link exists only now (the database keeps its hash): shown once, never cached.
        return self._once(request, "admin/svcx_leaks.html", "Leak confirmed", leaks=leaks, report_days=self.report_days)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor_label", "action", "organization", "target"]
    list_filter = ["action"]
    search_fields = ["target", "actor_label", "organization__id"]
