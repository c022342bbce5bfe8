"""State changes the console makes beyond the shared account services (accounts.services):
invitations, a person's password and ending their sessions, canceling a job. Every change is
audited with its actor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import Membership, Organization
from accounts.secrets import token_hash, urlsafe_token
from accounts.services import AccountError, audit_record, membership_add, membership_remove, membership_set_role
from console.models import ConsoleSession, Invitation
from console.permissions import grants_role, manages_organization
from conversion.async_jobs import async_job_cancel
from conversion.files import file_delete
from conversion.models import Job, StoredFile
from core.errors import ErrorCode, ServiceError


@dataclass(frozen=True)
class SentInvitation:
    invitation: Invitation
    url: str


def invitation_create(*, actor_membership: Membership, email: str, role: str) -> SentInvitation:
    """Invite `email` to the actor's organization with `role` and mail the single-use link
    (after commit).

    Raises AccountError for an unknown role, an inviter who is not an owner or admin, an owner
    invitation by a non-owner, or an address that already belongs to a member."""
    organization, actor = actor_membership.organization, actor_membership.user
    email = email.strip()
    if role not in Membership.Role.values:
        raise AccountError(f"unknown role {role!r}; roles are {', '.join(Membership.Role.values)}")
    if not manages_organization(actor_membership):
        raise AccountError("only owners and admins invite people")
    if not grants_role(actor_membership, role):
        raise AccountError("only an owner can invite an owner")
    if Membership.objects.filter(organization=organization, user__email__iexact=email).exists():
        raise AccountError(f"{email} is already a member of {organization.name}")
    token = urlsafe_token()
    url = f"{settings.SVCX_PUBLIC_URL}/console/invitations/{token}"
    lifetime = timedelta(seconds=float(settings.SVCX_INVITATION_LIFETIME))
    with transaction.atomic():
        invitation = Invitation.objects.create(
            organization=organization,
            email=email,
            role=role,
            token_hash=token_hash(token),
            invited_by=actor,
            expires_at=timezone.now() + lifetime,
        )
        audit_record(actor=actor, action="invitation.create", organization=organization, target=email, role=role)
        transaction.on_commit(lambda: _mail_invitation(invitation=invitation, url=url, inviter=actor))
    return SentInvitation(invitation=invitation, url=url)


def invitation_lifetime_text() -> str:
    """How long an invitation link works, in words ("7 days", "12 hours")."""
    seconds = float(settings.SVCX_INVITATION_LIFETIME)
    if seconds >= 86400 and seconds % 86400 == 0:
        count, unit = int(seconds // 86400), "day"
    else:
        count, unit = max(1, round(seconds / 3600)), "hour"
    return f"{count} {unit}{'s' if count != 1 else ''}"


def _mail_invitation(*, invitation: Invitation, url: str, inviter: Any) -> None:
    send_mail(
        subject=f"svcx: {inviter.get_username()} invites you to {invitation.organization.name}",
        message=(
            f"{inviter.get_username()} invites you to join {invitation.organization.name} on svcx as "
            f"{invitation.role}.\n\nOpen this link to accept; it works once and expires in "
            f"{invitation_lifetime_text()}:\n{url}\n"
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[invitation.email],
    )


def _open_invitations(token: str) -> Any:
    return Invitation.objects.select_related("organization").filter(
        token_hash=token_hash(token), accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    )


def invitation_get(*, token: str) -> Invitation | None:
    """The open invitation of a link, or None when it is unknown, used, withdrawn or expired."""
    return _open_invitations(token).first()


def invitation_has_account(*, invitation: Invitation) -> bool:
    """Whether the invited address already has an account (which then signs in to accept)."""
    return bool(get_user_model().objects.filter(email__iexact=invitation.email).exists())


def invitation_accept(*, token: str, user: Any | None = None, password: str = "") -> Membership:
    """Use the link once: `user` (signed in, with the invited address) joins, or, with no user,
    an account for the invited address is created with `password`.

    Raises AccountError when the link is unknown, used, withdrawn or expired, when `user` has
    another address, or when an account already exists for the address (sign in first)."""
    with transaction.atomic():
        invitation = _open_invitations(token).select_for_update(of=("self",)).first()
        if invitation is None:
            raise AccountError("this invitation link has been used, withdrawn or has expired")
        users = get_user_model().objects
        if user is None:
            if users.filter(Q(email__iexact=invitation.email) | Q(username__iexact=invitation.email)).exists():
                raise AccountError(f"an account for {invitation.email} exists: sign in to accept")
            user = users.create_user(username=invitation.email, email=invitation.email, password=password)
            audit_record(actor=user, action="user.create", organization=None, target=invitation.email)
        elif user.email.lower() != invitation.email.lower():
            raise AccountError(
                f"this invitation is for {invitation.email}; you are signed in as {user.email or user.get_username()}"
            )
        membership = membership_add(organization=invitation.organization, user=user, role=invitation.role, actor=user)
        Invitation.objects.filter(pk=invitation.pk).update(accepted_at=timezone.now(), accepted_by=user)
        audit_record(
            actor=user,
            action="invitation.accept",
            organization=invitation.organization,
            target=invitation.email,
            role=invitation.role,
        )
    return membership


def invitation_revoke(*, invitation: Invitation, actor: Any) -> Invitation:
    """Withdraw an open invitation (its link stops working)."""
    with transaction.atomic():
        Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        audit_record(
            actor=actor, action="invitation.revoke", organization=invitation.organization, target=invitation.email
        )
    invitation.refresh_from_db()
    return invitation


def _sessions_delete(*, user: Any, keep_session_key: str | None = None) -> int:
    sessions = ConsoleSession.objects.filter(user=user)
    if keep_session_key:
        sessions = sessions.exclude(session_key=keep_session_key)
    ended, _ = sessions.delete()
    return ended


def console_sessions_end(*, user: Any) -> int:
    """Sign `user` out of every browser (sign out everywhere). Returns how many sessions ended."""
    with transaction.atomic():
        ended = _sessions_delete(user=user)
        audit_record(actor=user, action="session.end_all", organization=None, target=user.get_username(), ended=ended)
    return ended


def user_password_change(*, user: Any, password: str, keep_session_key: str | None) -> int:
    """Set `user`'s password (already checked by the form: current password, validators) and
    end every other console session of theirs; the session keyed `keep_session_key`, the browser
    that made the change, stays. Returns how many sessions ended."""
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        ended = _sessions_delete(user=user, keep_session_key=keep_session_key)
        audit_record(
            actor=user, action="user.password_change", organization=None, target=user.get_username(), ended=ended
        )
    return ended


def member_set_role(*, actor_membership: Membership, membership: Membership, role: str) -> Membership:
    """A console member changes another's role through the shared rules (accounts.services),
    after the console's own: only owners and admins change roles, and only an owner grants or
    takes away the owner role. Raises AccountError."""
    if not manages_organization(actor_membership):
        raise AccountError("only owners and admins change roles")
    if not (grants_role(actor_membership, role) and grants_role(actor_membership, membership.role)):
        raise AccountError("only an owner grants or takes away the owner role")
    return membership_set_role(
        organization=membership.organization, user=membership.user, role=role, actor=actor_membership.user
    )


def member_remove(*, actor_membership: Membership, membership: Membership) -> None:
    """Remove a member (anyone may leave; owners and admins remove others, only an owner removes
    an owner), through the shared rules. Raises AccountError."""
    leaving = membership.pk == actor_membership.pk
    if not leaving and not (manages_organization(actor_membership) and grants_role(actor_membership, membership.role)):
        raise AccountError("only owners and admins remove members, and only an owner removes an owner")
    membership_remove(organization=membership.organization, user=membership.user, actor=actor_membership.user)


def stored_file_remove(*, organization: Organization, file_id: str, actor: Any) -> StoredFile:
    """Delete a stored file of either environment of the organization (conversion.files rules)
    and audit it. Raises ServiceError `file_not_found` for a file that is not the organization's."""
    record = StoredFile.objects.filter(organization=organization, pk=file_id).first()
    if record is None:
        raise ServiceError(ErrorCode.FILE_NOT_FOUND, f"No file {file_id!r} exists for this organization.")
    with transaction.atomic():
        deleted = file_delete(organization=organization, environment=record.environment, file_id=record.id)
        audit_record(actor=actor, action="file.delete", organization=organization, target=record.id)
    return deleted


def job_cancel(*, job: Job, actor: Any) -> Job:
    """Cancel a queued or running job through the jobs' own rule (conversion.async_jobs: its hold
    released, no result kept, its `job.canceled` event sent) and audit it. A job that had ended
    meanwhile is returned as it is, and nothing is audited."""
    with transaction.atomic():
        # The row locked first: the audit names the cancel this call made, not a concurrent one's.
        was = Job.objects.select_for_update().filter(pk=job.pk).values_list("status", flat=True).first()
        job = async_job_cancel(job=job)
        if was not in Job.ENDED and job.status == Job.Status.CANCELED:
            audit_record(
                actor=actor, action="job.cancel", organization=job.organization, target=job.id, credits=job.credits_held
            )
    return job
