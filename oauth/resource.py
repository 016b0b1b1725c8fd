"""The resource-server side: an OAuth access token on /mcp or /api/v1 becomes a Caller (spec §1.16 "Verify").

A token is live when it is known (by its SHA-256), not expired, bound to the current resource (so a
changed KENFOLD_PUBLIC_URL invalidates every token issued before), and its grant is not revoked. The
grant gives the agent the client's writes are attributed to and whether it may write.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from kenfold import clock
from kenfold_common.errors import AuthenticationFailed
from oauth import tokens
from oauth.models import OAuthGrant
from oauth.services import touch_grant

READ_SCOPE = "memory:read"
WRITE_SCOPE = "memory:write"
ALL_SCOPES = f"{READ_SCOPE} {WRITE_SCOPE}"


@dataclass(frozen=True)
class TokenInfo:
    grant_id: str
    agent: str
    scopes: frozenset[str]
    client_id: str
    # The owner's limit from the consent page (access.reach applies it).
    projects: frozenset[str] | None = None
    user_memories: bool = True

    @property
    def read_only(self) -> bool:
        return WRITE_SCOPE not in self.scopes


def is_oauth_token(token: str) -> bool:
    return token.startswith(tokens.ACCESS_PREFIX)


def resource_metadata_url() -> str:
    return settings.PUBLIC_URL + "/.well-known/oauth-protected-resource/mcp"


def challenge(*, error: str | None = None, description: str | None = None, scope: str = ALL_SCOPES) -> str:
    """The WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1, and the `scope` the MCP spec asks for)."""
    parts = []
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append(f'error_description="{description}"')
    parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{resource_metadata_url()}"')
    return "Bearer " + ", ".join(parts)


def verify_access_token(*, token: str) -> TokenInfo:
    """The grant behind a live access token, or AuthenticationFailed. Touches the database."""
    invalid = AuthenticationFailed("the access token is invalid or expired; authorize again")
    if len(token) > 100:
        raise invalid
    row = (
        get_access_token_model()
        .objects.select_related("application")
        .filter(token_checksum=tokens.checksum(token))
        .first()
    )
    if row is None or row.expires <= clock.now() or settings.MCP_RESOURCE not in (row.resource or []):
        raise invalid
    # The family of the token's own refresh token, or of the one it was refreshed from.
    families = (
        get_refresh_token_model()
        .objects.filter(Q(access_token=row) | Q(pk=row.source_refresh_token_id))
        .values("token_family")
    )
    grant = (
        OAuthGrant.objects.filter(token_family__in=families, revoked_at__isnull=True)
        .only("id", "agent", "last_used_at", "projects", "user_memories")
        .first()
    )
    if grant is None:
        raise invalid
    touch_grant(grant_id=grant.id, last_used_at=grant.last_used_at)
    return TokenInfo(
        grant_id=str(grant.id),
        agent=grant.agent,
        scopes=frozenset(row.scope.split()),
        client_id=row.application.client_id,
        projects=frozenset(grant.projects) if grant.projects is not None else None,
        user_memories=grant.user_memories,
    )
