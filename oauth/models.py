"""What django-oauth-toolkit has no place for (notes/oauth.md §3.3).

DOT keeps clients (Application), codes (Grant) and tokens. Kenfold adds the owner's password and its
lockout, and one `OAuthGrant` per approved consent: the agent the client's writes are attributed to, the
access the owner chose, the code's checksum (DOT deletes its own Grant row when the code is redeemed, so a
replayed code would otherwise be indistinguishable from an unknown one), the refresh-token family the
code became, and the owner's "disconnect" switch. Everything lives in PostgreSQL, so any worker of any
replica sharing the database sees the same state.
"""

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from oauth2_provider.settings import oauth2_settings


class Owner(models.Model):
    """The one owner of this Kenfold (a single row, id 1): the consent page's and the dashboard's password."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    # Argon2id in PHC form ($argon2id$v=19$m=…,t=…,p=…$salt$hash): the parameters travel with the hash.
    password_hash = models.TextField(blank=True, default="")
    password_changed_at = models.DateTimeField(null=True, blank=True)
    # The consent page's wrong passwords and lock.
    failures = models.PositiveIntegerField(default=0)
    locked_until = models.DateTimeField(null=True, blank=True)
    # The dashboard's, counted apart: the consent page is public, and guesses there must not lock the
    # owner out of the local dashboard.
    dashboard_failures = models.PositiveIntegerField(default=0)
    dashboard_locked_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oauth_owner"
        constraints = [models.CheckConstraint(condition=models.Q(id=1), name="oauth_owner_single_row")]


class OAuthGrant(models.Model):
    """One owner consent: created with its authorization code, bound to a token family when redeemed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    application = models.ForeignKey(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="kenfold_grants"
    )
    agent = models.CharField(max_length=64)
    scope = models.CharField(max_length=64)
    resource = models.TextField()
    code_checksum = models.CharField(max_length=64, unique=True)
    # Kept after DOT deletes its Grant, so that a replayed code is revoked only when its presenter also
    # proves possession (client, redirect URI and PKCE verifier): a stolen code alone revokes nothing.
    code_challenge = models.CharField(max_length=128)
    redirect_uri = models.TextField(blank=True, default="")
    code_redeemed_at = models.DateTimeField(null=True, blank=True)
    token_family = models.UUIDField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoke_reason = models.CharField(max_length=100, blank=True, default="")
    # The owner's choice on the consent page, as for API keys (access.models.ApiKey): the projects the
    # client may read and write (NULL: every project) and whether it reads user-wide memories.
    projects = ArrayField(models.TextField(), null=True, blank=True)
    user_memories = models.BooleanField(default=True, db_default=True)

    class Meta:
        db_table = "oauth_grant"
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(projects__isnull=True) | ~models.Q(projects=[]),
                name="oauth_grant_projects_not_empty",
            )
        ]

    @property
    def read_only(self) -> bool:
        return "memory:write" not in self.scope.split()

    @property
    def access(self) -> str:
        return "read" if self.read_only else "read+write"
