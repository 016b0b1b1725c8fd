"""The owner's view of OAuth grants and what the consent page proposes (spec §1.16).

The owner's password and its lockout are access.password; the Django user DOT's rows point to is here.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from access.models import ApiKey
from access.reach import project_limit
from access.security import security_event
from kenfold import clock
from kenfold_common.errors import (
    InvalidInput,
    NotFound,
)
from kenfold_common.identity import (
    check_credential_agent,
    is_reserved_agent_name,
    is_valid_agent_name,
    sanitize_agent_name,
)
from kenfold_common.secrets import find_secrets, reject_secrets
from oauth.models import OAuthGrant

OWNER_USERNAME = "kenfold-owner"
LAST_USED_RESOLUTION = timedelta(minutes=1)


SUGGESTED_AGENT_MAX = 40
FALLBACK_AGENT = "remote-client"


def suggest_agent(*, client_name: str) -> str:
    """The agent name the consent page proposes for a client (spec §1.16), never one a credential already
    writes as: a client names itself, so one called `alice` (or anything with "claude" in it) would
    otherwise be offered the name of alice's key (or of the claude.ai grant) by default. The owner can
    still type that name."""
    base = _agent_from_client_name(client_name)
    taken = set(ApiKey.objects.values_list("agent", flat=True)) | set(
        OAuthGrant.objects.values_list("agent", flat=True)
    )
    if base not in taken:
        return base
    for number in range(2, 100):
        candidate = f"{base}-{number}"
        if candidate not in taken:
            return candidate
    return FALLBACK_AGENT


def _agent_from_client_name(client_name: str) -> str:
    lowered = client_name.lower()
    if "chatgpt" in lowered or "openai" in lowered:
        return "chatgpt"
    if "claude" in lowered:
        return "claude-ai"
    candidate = sanitize_agent_name(client_name)[:SUGGESTED_AGENT_MAX].rstrip("._-")
    if (
        is_valid_agent_name(candidate)
        and not is_reserved_agent_name(candidate)
        and not find_secrets(candidate)
    ):
        return candidate
    return FALLBACK_AGENT


def check_grant_agent(*, agent: str) -> None:
    """The agent a grant's writes are attributed to: a valid name that Kenfold does not keep for itself."""
    check_credential_agent(agent, what="The agent name")
    # Lowercase tokens fit the name rule (a Slack "xoxb-1234-..." does), and the name is on every memory.
    reject_secrets(field="The agent name", text=agent, named=True)


def consent_projects(*, choice: str, listed: str) -> list[str] | None:
    """The projects the owner limited a client to on the consent page (one per line), normalized as
    agents' projects are; None when the owner chose every project."""
    if choice != "some":
        return None
    projects = project_limit(listed.splitlines())
    if projects is None:
        raise InvalidInput("List at least one project, one per line, or choose all projects")
    return projects


def owner_user():
    """The Django user DOT's Grant and token rows point to (one owner; nobody logs in as it)."""
    user, created = get_user_model().objects.get_or_create(username=OWNER_USERNAME)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


@dataclass(frozen=True)
class GrantRow:
    grant: OAuthGrant
    client_name: str
    client_id: str


def grant_list(*, include_revoked: bool = False) -> list[GrantRow]:
    grants: QuerySet[OAuthGrant] = OAuthGrant.objects.select_related("application").filter(
        code_redeemed_at__isnull=False
    )
    if not include_revoked:
        grants = grants.filter(revoked_at__isnull=True)
    return [
        GrantRow(
            grant=g,
            client_name=g.application.name or g.application.client_id,
            client_id=g.application.client_id,
        )
        for g in grants.order_by("created_at")
    ]


def grant_find(*, ident: str) -> OAuthGrant:
    """The grant with this id or the start of it (at least 4 characters); an ambiguous prefix is refused."""
    ident = ident.strip().lower()
    if len(ident) < 4 or any(c not in "0123456789abcdef-" for c in ident):
        raise InvalidInput("give a grant id or at least its first 4 characters; see `oauth clients --all`")
    candidates = [g for g in OAuthGrant.objects.all() if str(g.id).startswith(ident)]
    if not candidates:
        raise NotFound(f"no grant id starts with {ident}; see `oauth clients --all`")
    if len(candidates) > 1:
        raise InvalidInput(f"{len(candidates)} grants start with {ident}; give more of the id")
    return candidates[0]


def grant_revoke(*, ident: str) -> OAuthGrant:
    """The owner revokes a grant by its id or the start of it (at least 4 characters); an ambiguous prefix
    is refused. The grant ends as every other end of a grant does (grant_end)."""
    grant = grant_find(ident=ident)
    grant_end(grant=grant, reason="revoked by the owner")
    grant.refresh_from_db()
    return grant


def grant_end(*, grant: OAuthGrant, reason: str) -> None:
    """End a grant and every token issued under it, for any reason (the owner, the client revoking its
    refresh token, a newer consent, a replayed refresh token). Idempotent; the first reason is kept."""
    with transaction.atomic():
        OAuthGrant.objects.filter(pk=grant.pk, revoked_at__isnull=True).update(
            revoked_at=clock.now(), revoke_reason=reason
        )
        family = OAuthGrant.objects.values_list("token_family", flat=True).get(pk=grant.pk)
        if family is not None:
            refresh_tokens = get_refresh_token_model().objects.filter(token_family=family)
            get_access_token_model().objects.filter(refresh_token__in=refresh_tokens).delete()
            refresh_tokens.filter(revoked__isnull=True).update(revoked=clock.now())
        # A code not yet redeemed dies with the grant.
        get_grant_model().objects.filter(
            application_id=grant.application_id, code=grant.code_checksum
        ).delete()
    security_event("grant revoked", grant=str(grant.pk), client=grant.application.client_id, reason=reason)


def touch_grant(*, grant_id: object, last_used_at: object) -> None:
    now = clock.now()
    if last_used_at is None or now - last_used_at >= LAST_USED_RESOLUTION:
        OAuthGrant.objects.filter(pk=grant_id).update(last_used_at=now)


def prune(*, now=None) -> dict[str, int]:
    """Hourly (django-q2): codes and tokens expired more than a day ago, and clients that never got a grant."""
    now = now or clock.now()
    cutoff = now - timedelta(days=1)
    counts = {
        "codes": get_grant_model().objects.filter(expires__lt=cutoff).delete()[0],
        "access_tokens": get_access_token_model()
        .objects.filter(expires__lt=cutoff, refresh_token__isnull=True)
        .delete()[0],
    }
    RefreshToken = get_refresh_token_model()
    # Rotated refresh tokens are kept as long as they could have lived (30 days): a replay of one within
    # that time must still be recognised as a replay and end its grant.
    stale_refresh = RefreshToken.objects.filter(revoked__lt=now - timedelta(days=31))
    counts["refresh_tokens"] = stale_refresh.delete()[0]
    abandoned = get_application_model().objects.filter(created__lt=cutoff, kenfold_grants__isnull=True)
    counts["clients"] = abandoned.delete()[0]
    counts["unredeemed_grants"] = OAuthGrant.objects.filter(
        code_redeemed_at__isnull=True, created_at__lt=cutoff
    ).delete()[0]
    return counts
