"""Console sessions (so a person can sign out everywhere) and invitations to an organization."""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models

from accounts.models import Membership, Organization


class ConsoleSession(AbstractBaseSession):
    """A signed-in browser. The key is a console session token (`svcx_cs_...`, interface.md
    2.1); the user column lets every session of a person be ended at once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    @classmethod
    def get_session_store_class(cls) -> type:
        from console.sessions import SessionStore

        return SessionStore


class Invitation(models.Model):
    """A single-use, expiring invitation to join an organization with a role. Only a hash of
    the link's token is stored."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=10, choices=Membership.Role.choices, default=Membership.Role.MEMBER)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation of {self.email} to {self.organization_id} as {self.role}"
