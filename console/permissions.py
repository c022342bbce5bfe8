"""What each membership role may do in the console (the roles are accounts.Membership's).

Owners and admins manage keys, members, files and webhooks and read the audit log; members create
keys for themselves, manage the keys they created, and read usage, the statement, jobs and files.
A job is canceled by whoever manages the key that created it: owners and admins any job, a member
the jobs of the keys they created (who could revoke the key can stop what it spends)."""

from __future__ import annotations

from accounts.models import ApiKey, Membership

MANAGERS = (Membership.Role.OWNER, Membership.Role.ADMIN)


def manages_organization(membership: Membership) -> bool:
    return membership.role in MANAGERS


def manages_key(membership: Membership, api_key: ApiKey) -> bool:
    return manages_organization(membership) or api_key.created_by_id == membership.user_id


def grants_role(membership: Membership, role: str) -> bool:
    """Owners grant any role; admins every role but owner."""
    return membership.role == Membership.Role.OWNER or (
        membership.role == Membership.Role.ADMIN and role != Membership.Role.OWNER
    )


def cancels_job(membership: Membership, api_key: ApiKey | None) -> bool:
    """Whether the person may cancel a job made with `api_key` (None: a key that is gone)."""
    return manages_organization(membership) or (api_key is not None and manages_key(membership, api_key))
