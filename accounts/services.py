"""State changes of organizations and API keys. Every staff or operator action is audited."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts import keyformat
from accounts.engines import engines_known
from accounts.keyformat import Environment
from accounts.limits import LIMIT_NAMES
from accounts.models import ApiKey, AuditEvent, KeyReveal, Membership, Organization
from accounts.notifications import key_reveal_recipients, notify_key_leaked, notify_key_rotated
from accounts.scopes import PRESETS, validate_scopes
from accounts.secrets import key_hash, seal, token_hash, unseal, urlsafe_token

MAX_ACTIVE_KEYS = 100
MAX_LIFETIME_KEYS = 1000
REVEAL_LIFETIME = timedelta(days=7)
OVERLAPS: dict[str, timedelta] = {
    "7d": timedelta(days=7),
    "24h": timedelta(hours=24),
    "1h": timedelta(hours=1),
    "immediate": timedelta(0),
}
DEFAULT_OVERLAP = "7d"


class AccountError(ValueError):
    """An account or key operation that cannot be done as asked (limits, bad input, state)."""


# Who acts: a staff user (admin), or None for the operator command.
Actor = AbstractBaseUser | AnonymousUser | None


def _user(actor: Actor) -> Any:
    """The user to record (a saved user), or None for the operator."""
    return actor if isinstance(actor, AbstractBaseUser) and actor.pk else None


def _actor_label(actor: Actor) -> str:
    user = _user(actor)
    return user.get_username() if user is not None else "operator"


def audit_record(
    *, actor: Actor, action: str, organization: Organization | None, target: str = "", **details: Any
) -> None:
    AuditEvent.objects.create(
        actor=_user(actor),
        actor_label=_actor_label(actor),
        action=action,
        organization=organization,
        target=target,
        details=details,
    )


# --- organizations -------------------------------------------------------------------------


def organization_create(*, name: str, debug_policy: str = "enabled", actor: Actor = None) -> Organization:
    if debug_policy not in Organization.DebugPolicy.values:
        raise AccountError("debug policy must be enabled or disabled")
    with transaction.atomic():
        organization = Organization.objects.create(name=name, debug_policy=debug_policy)
        audit_record(
            actor=actor, action="organization.create", organization=organization, target=organization.id, name=name
        )
    return organization


def _why(reason: str) -> dict[str, str]:
    """The audit details of a reason given (staff give one for every action; the operator may not)."""
    return {"reason": reason} if reason else {}


def organization_suspend(*, organization: Organization, reason: str = "", actor: Actor = None) -> Organization:
    """Suspend from the very next request (authentication reads the state on every request)."""
    with transaction.atomic():
        Organization.objects.filter(pk=organization.pk, suspended_at__isnull=True).update(suspended_at=timezone.now())
        audit_record(
            actor=actor,
            action="organization.suspend",
            organization=organization,
            target=organization.id,
            **_why(reason),
        )
    organization.refresh_from_db()
    return organization


def organization_unsuspend(*, organization: Organization, reason: str = "", actor: Actor = None) -> Organization:
    with transaction.atomic():
        Organization.objects.filter(pk=organization.pk).update(suspended_at=None)
        audit_record(
            actor=actor,
            action="organization.unsuspend",
            organization=organization,
            target=organization.id,
            **_why(reason),
        )
    organization.refresh_from_db()
    return organization


def organization_mark_delinquent(
    *, organization: Organization, debt: int, reason: str = "", actor: Actor = None
) -> Organization:
    if debt < 0:
        raise AccountError("debt must be zero or more credits")
    with transaction.atomic():
        Organization.objects.filter(pk=organization.pk).update(delinquent_debt=debt)
        audit_record(
            actor=actor,
            action="organization.delinquent",
            organization=organization,
            target=organization.id,
            debt=debt,
            **_why(reason),
        )
    organization.refresh_from_db()
    return organization


def organization_clear_delinquent(*, organization: Organization, reason: str = "", actor: Actor = None) -> Organization:
    with transaction.atomic():
        Organization.objects.filter(pk=organization.pk).update(delinquent_debt=None)
        audit_record(
            actor=actor,
            action="organization.clear_delinquent",
            organization=organization,
            target=organization.id,
            **_why(reason),
        )
    organization.refresh_from_db()
    return organization


def organization_set_limit(*, organization: Organization, meter: str, value: int, actor: Actor = None) -> Organization:
    if meter not in LIMIT_NAMES:
        raise AccountError(f"unknown meter {meter!r}; meters are {', '.join(sorted(LIMIT_NAMES))}")
    if value < 0:
        raise AccountError("a limit is zero or more")
    with transaction.atomic():
        locked = Organization.objects.select_for_update().get(pk=organization.pk)
        locked.limits = {**locked.limits, meter: value}
        locked.save(update_fields=["limits"])
        audit_record(
            actor=actor,
            action="organization.set_limit",
            organization=organization,
            target=organization.id,
            meter=meter,
            value=value,
        )
    organization.refresh_from_db()
    return organization


def organization_set_default_engine(*, organization: Organization, engine: str, actor: Actor = None) -> Organization:
    """The engine that converts the organization's requests that choose none (their `engine`
    option overrides it); "" for the service's default."""
    known = engines_known()
    if engine and engine not in known:
        raise AccountError(f"unknown engine {engine!r}; engines are {', '.join(known)}")
    with transaction.atomic():
        locked = Organization.objects.select_for_update().get(pk=organization.pk)
        locked.default_engine = engine
        locked.save(update_fields=["default_engine"])
        audit_record(
            actor=actor,
            action="organization.set_default_engine",
            organization=organization,
            target=organization.id,
            engine=engine,
        )
    organization.refresh_from_db()
    return organization


# --- members -------------------------------------------------------------------------------
# One home for the rules of membership, used by the admin and the operator command alike: a
# user is a member of an organization at most once, with a known role, and an organization that
# has an owner keeps one (its last owner is neither removed nor demoted).


def _role(role: str) -> str:
    if role not in Membership.Role.values:
        raise AccountError(f"unknown role {role!r}; roles are {', '.join(Membership.Role.values)}")
    return role


def membership_owners_check(*, organization: Organization, owners_after: int) -> None:
    """Raise AccountError when a change would leave an organization that has an owner without one."""
    if owners_after == 0 and Membership.objects.filter(organization=organization, role=Membership.Role.OWNER).exists():
        raise AccountError(f"{organization} would have no owner left; make someone else owner first")


def _owners_without(organization: Organization, user: Any) -> int:
    """How many owners the organization has besides `user`."""
    return Membership.objects.filter(organization=organization, role=Membership.Role.OWNER).exclude(user=user).count()


def membership_add(*, organization: Organization, user: Any, role: str = "member", actor: Actor = None) -> Membership:
    """Make `user` a member with `role`. Raises AccountError for an unknown role or a user who
    already is a member."""
    _role(role)
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=organization.pk)
        if Membership.objects.filter(organization=organization, user=user).exists():
            raise AccountError(f"{user.get_username()} is already a member of {organization}")
        membership = Membership.objects.create(organization=organization, user=user, role=role)
        audit_record(
            actor=actor,
            action="member.add",
            organization=organization,
            target=user.get_username(),
            role=role,
        )
    return membership


def membership_set_role(*, organization: Organization, user: Any, role: str, actor: Actor = None) -> Membership:
    """Change a member's role. Raises AccountError for an unknown role, a user who is not a
    member, or demoting the last owner."""
    _role(role)
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=organization.pk)
        membership = Membership.objects.filter(organization=organization, user=user).first()
        if membership is None:
            raise AccountError(f"{user.get_username()} is not a member of {organization}")
        if role != Membership.Role.OWNER:
            membership_owners_check(organization=organization, owners_after=_owners_without(organization, user))
        previous = membership.role
        Membership.objects.filter(pk=membership.pk).update(role=role)
        audit_record(
            actor=actor,
            action="member.set_role",
            organization=organization,
            target=user.get_username(),
            role=role,
            previous=previous,
        )
    membership.refresh_from_db()
    return membership


def membership_remove(*, organization: Organization, user: Any, actor: Actor = None) -> None:
    """Remove a member. Raises AccountError for a user who is not a member or the last owner."""
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=organization.pk)
        membership = Membership.objects.filter(organization=organization, user=user).first()
        if membership is None:
            raise AccountError(f"{user.get_username()} is not a member of {organization}")
        membership_owners_check(organization=organization, owners_after=_owners_without(organization, user))
        membership.delete()
        audit_record(
            actor=actor,
            action="member.remove",
            organization=organization,
            target=user.get_username(),
            role=membership.role,
        )


def user_for_membership(*, identifier: str, email: str = "", actor: Actor = None) -> Any:
    """The user named by username or e-mail address; with `email`, a missing user is created
    (without a usable password: they sign in once staff set one). Raises AccountError otherwise."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    user = users.filter(username=identifier).first() or users.filter(email__iexact=identifier).order_by("pk").first()
    if user is not None:
        return user
    if not email:
        raise AccountError(f"no user {identifier!r}; give --email to create one")
    with transaction.atomic():
        user = users.create_user(username=identifier, email=email)
        audit_record(actor=actor, action="user.create", organization=None, target=identifier, email=email)
    return user


def demo_person_ensure(*, organization: Organization, email: str) -> str:
    """`make run`'s demo sign-in: the user `email`, owner of `organization`, with a fresh random
    password (returned; only its hash is kept), so that no fixed password ever opens a console."""
    from django.contrib.auth import get_user_model

    password = urlsafe_token()[:20]
    with transaction.atomic():
        user = get_user_model().objects.filter(username=email).first() or get_user_model().objects.create_user(
            username=email, email=email
        )
        user.set_password(password)
        user.save(update_fields=["password"])
        if not Membership.objects.filter(organization=organization, user=user).exists():
            membership_add(organization=organization, user=user, role=Membership.Role.OWNER)
        audit_record(actor=None, action="user.demo_password", organization=organization, target=email)
    return password


# --- keys ----------------------------------------------------------------------------------


def normalise_ip_allowlist(entries: list[str]) -> list[str]:
    """CIDRs in canonical form (`10.0.0.7` -> `10.0.0.7/32`). Raises AccountError for a bad one."""
    networks = []
    for entry in entries:
        try:
            networks.append(str(ipaddress.ip_network(entry.strip(), strict=False)))
        except ValueError as exc:
            raise AccountError(f"not an IP address or CIDR range: {entry!r}") from exc
    return sorted(set(networks))


def resolve_scopes(*, preset: str | None, scopes: list[str] | None) -> list[str]:
    """Scopes from a preset name (full, restricted, read_only) or an explicit (custom) list."""
    if scopes is not None:
        return validate_scopes(scopes)
    preset = preset or "full"
    if preset not in PRESETS:
        raise AccountError(f"unknown preset {preset!r}; presets are {', '.join(PRESETS)} or custom scopes")
    return list(PRESETS[preset])


def active_keys(organization: Organization) -> Any:
    now = timezone.now()
    return ApiKey.objects.filter(organization=organization, revoked_at__isnull=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )


@dataclass(frozen=True)
class MintedKey:
    api_key: ApiKey
    secret: str


def _mint(
    *,
    organization: Organization,
    environment: Environment,
    name: str,
    project: str,
    scopes: list[str],
    ip_allowlist: list[str],
    expires_at: datetime | None,
    created_by: Actor,
) -> MintedKey:
    """Insert a key under the organization's row lock (the caller holds it), checking limits."""
    if ApiKey.objects.filter(organization=organization).count() >= MAX_LIFETIME_KEYS:
        raise AccountError(f"the organization has created {MAX_LIFETIME_KEYS} keys, the lifetime limit")
    if active_keys(organization).count() >= MAX_ACTIVE_KEYS:
        raise AccountError(f"the organization has {MAX_ACTIVE_KEYS} active keys, the limit; revoke one first")
    secret = keyformat.generate(environment)
    api_key = ApiKey.objects.create(
        organization=organization,
        environment=environment,
        name=name,
        project=project,
        scopes=scopes,
        ip_allowlist=ip_allowlist,
        expires_at=expires_at,
        hint=keyformat.parse(secret).hint,
        key_hash=key_hash(secret),
        created_by=_user(created_by),
    )
    return MintedKey(api_key=api_key, secret=secret)


def _mint_twin(old: ApiKey, *, created_by: Actor) -> MintedKey:
    """A replacement of `old`: same organization, environment, name, project, scopes and allowlist."""
    return _mint(
        organization=old.organization,
        environment=old.environment,  # type: ignore[arg-type]  # a stored key's environment is live or test
        name=old.name,
        project=old.project,
        scopes=list(old.scopes),
        ip_allowlist=list(old.ip_allowlist),
        expires_at=None,
        created_by=created_by,
    )


def api_key_create(
    *,
    organization: Organization,
    environment: Environment = Environment.LIVE,
    name: str = "",
    project: str = "",
    preset: str | None = None,
    scopes: list[str] | None = None,
    ip_allowlist: list[str] | None = None,
    expires_at: datetime | None = None,
    actor: Actor = None,
) -> MintedKey:
    """Create a key. The secret in the result is the only copy there will ever be.

    Raises AccountError for a reserved or unknown scope, a bad CIDR, or a reached key limit.
    """
    if environment not in keyformat.ENVIRONMENTS:
        raise AccountError("environment must be live or test")
    resolved = resolve_scopes(preset=preset, scopes=scopes)
    allowlist = normalise_ip_allowlist(ip_allowlist or [])
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=organization.pk)
        minted = _mint(
            organization=organization,
            environment=environment,
            name=name,
            project=project,
            scopes=resolved,
            ip_allowlist=allowlist,
            expires_at=expires_at,
            created_by=actor,
        )
        audit_record(
            actor=actor, action="key.create", organization=organization, target=minted.api_key.id, scopes=resolved
        )
    return minted


_UNSET: Any = object()


def api_key_update(
    *,
    api_key: ApiKey,
    scopes: list[str] | None = None,
    ip_allowlist: list[str] | None = None,
    expires_at: datetime | None = _UNSET,
    actor: Actor = None,
) -> ApiKey:
    """Change scopes, allowlist or expiry (seen by authentication from the next request)."""
    changes: dict[str, Any] = {}
    if scopes is not None:
        changes["scopes"] = validate_scopes(scopes)
    if ip_allowlist is not None:
        changes["ip_allowlist"] = normalise_ip_allowlist(ip_allowlist)
    if expires_at is not _UNSET:
        changes["expires_at"] = expires_at
    if api_key.revoked_at is not None and changes:
        raise AccountError("a revoked key cannot be changed")
    with transaction.atomic():
        ApiKey.objects.filter(pk=api_key.pk).update(**changes)
        audit_record(
            actor=actor,
            action="key.update",
            organization=api_key.organization,
            target=api_key.id,
            **{k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in changes.items()},
        )
    api_key.refresh_from_db()
    return api_key


def _rotate(
    *, api_key: ApiKey, overlap: str, reason: str, actor: Actor, created_by: Actor, **audit: str
) -> tuple[ApiKey, MintedKey]:
    """Inside the caller's transaction: lock the key and its organization, mint the replacement
    (created by `created_by`), make the old key work until now + overlap (or its own expiry if
    sooner) and audit. Returns the old key, locked, and the replacement. Raises AccountError."""
    if overlap not in OVERLAPS:
        raise AccountError(f"overlap must be one of {', '.join(OVERLAPS)}")
    Organization.objects.select_for_update().get(pk=api_key.organization_id)
    old = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    if old.revoked_at is not None:
        raise AccountError("a revoked key cannot be rotated")
    if old.replaced_by_id is not None:
        raise AccountError("this key was already rotated; rotate its replacement instead")
    minted = _mint_twin(old, created_by=created_by)
    new_expiry = timezone.now() + OVERLAPS[overlap]
    if old.expires_at is not None and old.expires_at < new_expiry:
        new_expiry = old.expires_at
    ApiKey.objects.filter(pk=old.pk).update(expires_at=new_expiry, replaced_by=minted.api_key)
    audit_record(
        actor=actor,
        action="key.rotate",
        organization=old.organization,
        target=old.id,
        replacement=minted.api_key.id,
        overlap=overlap,
        **audit,
        **_why(reason),
    )
    return old, minted


def api_key_rotate(
    *, api_key: ApiKey, overlap: str = DEFAULT_OVERLAP, reason: str = "", actor: Actor = None
) -> MintedKey:
    """Mint a replacement with the same name, project, scopes and allowlist; the old key keeps
    working until now + overlap (7d, 24h, 1h or immediate). The result holds the new secret:
    for the key's own people (console, operator), never for staff (api_key_rotate_by_reveal)."""
    with transaction.atomic():
        _, minted = _rotate(api_key=api_key, overlap=overlap, reason=reason, actor=actor, created_by=actor)
    api_key.refresh_from_db()
    return minted


def api_key_revoke(*, api_key: ApiKey, reason: str = "revoked by owner", actor: Actor = None) -> ApiKey:
    """Revoke now, irreversibly; also from expired. Revoking twice keeps the first revocation."""
    with transaction.atomic():
        ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now(), revoked_reason=reason
        )
        audit_record(
            actor=actor, action="key.revoke", organization=api_key.organization, target=api_key.id, reason=reason
        )
    api_key.refresh_from_db()
    return api_key


@dataclass(frozen=True)
class KeyReplacement:
    """A replacement key that nobody at svcx sees: sealed into a single-use reveal link (valid
    REVEAL_LIFETIME) mailed to `recipients` after commit; when there is nobody to mail, staff must
    hand `reveal_url` over themselves. The secret itself is in no field."""

    old: ApiKey
    replacement: ApiKey
    reveal_url: str
    recipients: list[str]


def _reveal_deliver(*, old: ApiKey, minted: MintedKey, notify: Callable[..., None]) -> KeyReplacement:
    """Seal `minted` (the replacement of `old`) under a fresh token and have `notify` mail the
    reveal link after commit. Inside the caller's transaction. The database keeps only the
    token's hash: the link exists only in the result and the mail."""
    token = urlsafe_token()
    KeyReveal.objects.create(
        api_key=minted.api_key,
        token_hash=token_hash(token),
        ciphertext=seal(minted.secret, token),
        expires_at=timezone.now() + REVEAL_LIFETIME,
    )
    reveal_url = f"{settings.SVCX_PUBLIC_URL}/reveal/{token}"
    old.refresh_from_db()
    recipients = key_reveal_recipients(old)
    transaction.on_commit(
        lambda: notify(api_key=old, replacement=minted.api_key, reveal_url=reveal_url, recipients=recipients)
    )
    return KeyReplacement(old=old, replacement=minted.api_key, reveal_url=reveal_url, recipients=recipients)


def api_key_confirm_leak(*, api_key: ApiKey, reason: str = "", actor: Actor = None) -> KeyReplacement:
    """Interface.md 5.8: revoke now; no suspension, no freeze, no refund; a replacement with the
    same name, scopes and allowlist goes into a single-use reveal link valid 7 days; owners,
    admins and the key's creator are told (after commit)."""
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=api_key.organization_id)
        old = ApiKey.objects.select_for_update().get(pk=api_key.pk)
        ApiKey.objects.filter(pk=old.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now(), revoked_reason="leak confirmed"
        )
        minted = _mint_twin(old, created_by=old.created_by)
        ApiKey.objects.filter(pk=old.pk).update(replaced_by=minted.api_key)
        audit_record(
            actor=actor,
            action="key.confirm_leak",
            organization=old.organization,
            target=old.id,
            replacement=minted.api_key.id,
            **_why(reason),
        )
        return _reveal_deliver(old=old, minted=minted, notify=notify_key_leaked)


def api_key_rotate_by_reveal(*, api_key: ApiKey, overlap: str, reason: str = "", actor: Actor = None) -> KeyReplacement:
    """Rotate as api_key_rotate does, for staff: the replacement's secret is sealed into a
    single-use reveal link mailed (after commit) to the owners, admins and the key's creator, as
    after a leak, so that no staff page ever holds it. Raises AccountError as api_key_rotate."""
    with transaction.atomic():
        # The replacement is the key creator's, as the old key was: members manage the keys they created.
        old, minted = _rotate(
            api_key=api_key,
            overlap=overlap,
            reason=reason,
            actor=actor,
            created_by=api_key.created_by,
            delivery="reveal link",
        )
        delivered = _reveal_deliver(old=old, minted=minted, notify=notify_key_rotated)
    api_key.refresh_from_db()
    return delivered


def key_reveal_consume(*, token: str) -> tuple[ApiKey, str] | None:
    """Show the sealed key once: returns (key, secret) and destroys the sealed copy, or None when
    the link is unknown, used or expired."""
    with transaction.atomic():
        reveal = (
            KeyReveal.objects.select_for_update()
            .select_related("api_key")
            .filter(token_hash=token_hash(token), revealed_at__isnull=True, expires_at__gt=timezone.now())
            .first()
        )
        if reveal is None or reveal.ciphertext is None:
            return None
        secret = unseal(bytes(reveal.ciphertext), token)
        reveal.revealed_at = timezone.now()
        reveal.ciphertext = None
        reveal.save(update_fields=["revealed_at", "ciphertext"])
    return reveal.api_key, secret
