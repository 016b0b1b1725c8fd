"""What django-oauth-toolkit has no place for (notes/oauth.md §3.3).

DOT keeps clients (Application), codes (Grant) and tokens. Kenfold adds one `OAuthGrant` per approved
consent: the agent the client's writes are attributed to, the access the owner chose, the code's checksum
(DOT deletes its own Grant row when the code is redeemed, so a replayed code would otherwise be
indistinguishable from an unknown one), the refresh-token family the code became, and the owner's
"disconnect" switch. The owner's password and its lockout are in access.models. Everything lives in PostgreSQL, so any worker of any
replica sharing the database sees the same state.
"""

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from oauth2_provider.settings import oauth2_settings


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
