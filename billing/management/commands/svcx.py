"""The operator command of decisions.md section 9.

    python manage.py svcx org create --name NAME [--credits N] [--debug-policy enabled|disabled]
    python manage.py svcx org set-engine ORG ENGINE|default
    python manage.py svcx key create --org ORG [--env live|test] [--preset full|restricted|read_only] ...
    python manage.py svcx member add ORG USER [--role owner|admin|member] [--email EMAIL]

Prints one JSON object on stdout and exits 0, or prints an error on stderr and exits non-zero.
It lives in billing, the lowest app that sees both what it changes: organizations, keys and
members (accounts) and credits and limits (billing).
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.dateparse import parse_datetime

from accounts import services
from accounts.keyformat import Environment
from accounts.models import ApiKey, Membership, Organization
from accounts.scopes import ScopeError
from accounts.serializers import api_key_dict, membership_dict, organization_dict
from billing.ledger import credits_grant
from billing.limits import limits_of
from billing.serializers import LedgerEntrySerializer
from core.formats import iso

DEMO_EMAIL = "demo@svcx.local"


def _org(org_id: str) -> Organization:
    organization = Organization.objects.filter(pk=org_id).first()
    if organization is None:
        raise CommandError(f"no organization {org_id!r}")
    return organization


def _key(key_id: str) -> ApiKey:
    api_key = ApiKey.objects.select_related("organization").filter(pk=key_id).first()
    if api_key is None:
        raise CommandError(f"no key {key_id!r}")
    return api_key


def _when(value: str | None) -> Any:
    if value is None:
        return None
    parsed = parse_datetime(value)
    if parsed is None or parsed.tzinfo is None:
        raise CommandError(f"not an ISO 8601 timestamp with a time zone: {value!r}")
    return parsed


def _scopes(value: str | None) -> list[str] | None:
    return None if value is None else [s for s in value.split(",") if s.strip()]


class Command(BaseCommand):
    help = "Operate svcx: organizations, credits and API keys. Prints JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        groups = parser.add_subparsers(dest="group", required=True)

        org = groups.add_parser("org").add_subparsers(dest="action", required=True)
        create = org.add_parser("create")
        create.add_argument("--name", required=True)
        create.add_argument("--credits", type=int, default=0)
        create.add_argument("--debug-policy", choices=["enabled", "disabled"], default="enabled")
        for action in ("suspend", "unsuspend", "clear-delinquent"):
            org.add_parser(action).add_argument("org")
        delinquent = org.add_parser("delinquent")
        delinquent.add_argument("org")
        delinquent.add_argument("--debt", type=int, required=True)
        set_engine = org.add_parser("set-engine", help='ENGINE: an engine id (GET /v1/engines), or "default"')
        set_engine.add_argument("org")
        set_engine.add_argument("engine")
        set_limit = org.add_parser("set-limit")
        set_limit.add_argument("org")
        set_limit.add_argument("meter")
        set_limit.add_argument("value", type=int)

        credits = groups.add_parser("credits").add_subparsers(dest="action", required=True)
        grant = credits.add_parser("grant")
        grant.add_argument("org")
        grant.add_argument("credits", type=int)
        grant.add_argument("--reason", default="")

        key = groups.add_parser("key").add_subparsers(dest="action", required=True)
        key_create = key.add_parser("create")
        key_create.add_argument("--org", required=True)
        key_create.add_argument("--env", choices=[e.value for e in Environment], default=Environment.LIVE.value)
        key_create.add_argument("--name", default="")
        key_create.add_argument("--project", default="")
        key_create.add_argument("--preset", choices=["full", "restricted", "read_only"])
        key_create.add_argument("--scopes")
        key_create.add_argument("--ip", action="append", default=[])
        key_create.add_argument("--expires-at")
        update = key.add_parser("update")
        update.add_argument("key_id")
        update.add_argument("--scopes")
        update.add_argument("--ip", action="append")
        update.add_argument("--clear-ips", action="store_true")
        update.add_argument("--expires-at")
        rotate = key.add_parser("rotate")
        rotate.add_argument("key_id")
        rotate.add_argument("--overlap", choices=list(services.OVERLAPS), default=services.DEFAULT_OVERLAP)
        key.add_parser("revoke").add_argument("key_id")
        key.add_parser("confirm-leak").add_argument("key_id")
        key.add_parser("list").add_argument("--org", required=True)

        member = groups.add_parser("member").add_subparsers(dest="action", required=True)
        roles = list(Membership.Role.values)
        member_add = member.add_parser("add", help="USER is a username or an e-mail address")
        member_add.add_argument("org")
        member_add.add_argument("user")
        member_add.add_argument("--role", choices=roles, default=Membership.Role.MEMBER)
        member_add.add_argument("--email", default="", help="create the user with this address when missing")
        member.add_parser("list").add_argument("org")
        set_role = member.add_parser("set-role")
        set_role.add_argument("org")
        set_role.add_argument("user")
        set_role.add_argument("role", choices=roles)
        member_remove = member.add_parser("remove")
        member_remove.add_argument("org")
        member_remove.add_argument("user")

        groups.add_parser("demo", help="used by `make run`: a demo organization with fresh live and test keys")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = self._dispatch(options)
        except (services.AccountError, ScopeError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if options["group"] == "demo":
            self._print_demo(result)
            return
        self.stdout.write(json.dumps(result))

    def _dispatch(self, o: dict[str, Any]) -> Any:
        group, action = o["group"], str(o.get("action"))
        if group == "org":
            return self._org(action, o)
        if group == "credits":
            row = credits_grant(
                organization=_org(o["org"]), credits=o["credits"], actor_label="operator", reason=o["reason"]
            )
            services.audit_record(
                actor=None, action="credits.grant", organization=row.organization, target=row.id, credits=o["credits"]
            )
            return dict(LedgerEntrySerializer(row).data)
        if group == "key":
            return self._key(action, o)
        if group == "member":
            return self._member(action, o)
        return self._demo()

    def _org(self, action: str, o: dict[str, Any]) -> dict[str, Any]:
        if action == "create":
            organization = services.organization_create(name=o["name"], debug_policy=o["debug_policy"])
            if o["credits"] > 0:
                credits_grant(
                    organization=organization, credits=o["credits"], actor_label="operator", reason="initial credits"
                )
            return {"id": organization.id}
        organization = _org(o["org"])
        if action == "suspend":
            organization = services.organization_suspend(organization=organization)
        elif action == "unsuspend":
            organization = services.organization_unsuspend(organization=organization)
        elif action == "delinquent":
            organization = services.organization_mark_delinquent(organization=organization, debt=o["debt"])
        elif action == "clear-delinquent":
            organization = services.organization_clear_delinquent(organization=organization)
        elif action == "set-engine":
            chosen = "" if o["engine"] == "default" else o["engine"]
            organization = services.organization_set_default_engine(organization=organization, engine=chosen)
        else:  # set-limit
            organization = services.organization_set_limit(
                organization=organization, meter=o["meter"], value=o["value"]
            )
            return {"id": organization.id, "limits": limits_of(organization), "overrides": organization.limits}
        return organization_dict(organization)

    def _key(self, action: str, o: dict[str, Any]) -> dict[str, Any]:
        if action == "create":
            minted = services.api_key_create(
                organization=_org(o["org"]),
                environment=o["env"],
                name=o["name"],
                project=o["project"],
                preset=o["preset"],
                scopes=_scopes(o["scopes"]),
                ip_allowlist=o["ip"],
                expires_at=_when(o["expires_at"]),
            )
            return {"id": minted.api_key.id, "key": minted.secret, "hint": minted.api_key.hint}
        if action == "list":
            keys = ApiKey.objects.filter(organization=_org(o["org"])).order_by("-created_at")
            return {"data": [api_key_dict(k) for k in keys]}
        api_key = _key(o["key_id"])
        if action == "update":
            ips = [] if o["clear_ips"] else o["ip"]
            kwargs: dict[str, Any] = {"scopes": _scopes(o["scopes"]), "ip_allowlist": ips}
            if o["expires_at"] is not None:
                kwargs["expires_at"] = _when(o["expires_at"])
            return api_key_dict(services.api_key_update(api_key=api_key, **kwargs))
        if action == "rotate":
            minted = services.api_key_rotate(api_key=api_key, overlap=o["overlap"])
            return {
                "id": minted.api_key.id,
                "key": minted.secret,
                "hint": minted.api_key.hint,
                "replaces": api_key.id,
                "old_key_expires_at": iso(api_key.expires_at),
            }
        if action == "revoke":
            return api_key_dict(services.api_key_revoke(api_key=api_key))
        leak = services.api_key_confirm_leak(api_key=api_key)
        return {"revoked": leak.old.id, "replacement_id": leak.replacement.id, "reveal_url": leak.reveal_url}

    def _member(self, action: str, o: dict[str, Any]) -> dict[str, Any]:
        organization = _org(o["org"])
        if action == "list":
            members = Membership.objects.filter(organization=organization).select_related("user")
            return {"data": [membership_dict(m) for m in members.order_by("created_at", "pk")]}
        if action == "add":
            user = services.user_for_membership(identifier=o["user"], email=o["email"])
            return membership_dict(services.membership_add(organization=organization, user=user, role=o["role"]))
        user = services.user_for_membership(identifier=o["user"])
        if action == "set-role":
            return membership_dict(services.membership_set_role(organization=organization, user=user, role=o["role"]))
        services.membership_remove(organization=organization, user=user)
        return {"organization": organization.id, "user": user.get_username(), "removed": True}

    def _demo(self) -> dict[str, Any]:
        organization = Organization.objects.filter(name="Demo organization").order_by("created_at").first()
        if organization is None:
            organization = services.organization_create(name="Demo organization")
            credits_grant(organization=organization, credits=1000, actor_label="operator", reason="demo credits")
        for old in services.active_keys(organization).filter(name="demo"):
            services.api_key_revoke(api_key=old, reason="replaced by a new `make run`")
        live = services.api_key_create(organization=organization, environment=Environment.LIVE, name="demo")
        test = services.api_key_create(organization=organization, environment=Environment.TEST, name="demo")
        password = services.demo_person_ensure(organization=organization, email=DEMO_EMAIL)
        return {
            "org": organization.id,
            "live": live.secret,
            "test": test.secret,
            "email": DEMO_EMAIL,
            "password": password,
        }

    def _print_demo(self, demo: dict[str, Any]) -> None:
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"svcx: demo organization {demo['org']} (1,000 credits on first run). Fresh keys, shown once:",
                    f"  live: {demo['live']}",
                    f"  test: {demo['test']}",
                    f'  try:  curl -H "Authorization: Bearer <key>" {settings.SVCX_PUBLIC_URL}/v1/account',
                    '  more: make manage ARGS="svcx key create --org ORG [--env test] ..."  (see README)',
                    f"svcx: customer console at {settings.SVCX_PUBLIC_URL}/console/",
                    f"  sign in as {demo['email']} with the password {demo['password']} (new on every run), owner",
                    "",
                ]
            )
        )
