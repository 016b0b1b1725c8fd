"""The owner's password and its lockout, and the owner's view of OAuth grants (spec §1.16).

The lockout is a counter in the owner's row, updated in a row-locked transaction, so that five wrong
passwords lock the page they were typed on for every worker and replica at once; the count is committed
even when the attempt fails. The consent page and the dashboard count apart: the consent page is public,
and whoever guesses there must not lock the owner out of the local dashboard.
"""

import hashlib
import threading
from dataclasses import dataclass
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
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
from kenfold import clock
from kenfold_common.errors import (
    AuthenticationFailed,
    InvalidInput,
    NotFound,
    PermissionDenied,
    TooManyAttempts,
)
from kenfold_common.identity import (
    check_credential_agent,
    is_reserved_agent_name,
    is_valid_agent_name,
    sanitize_agent_name,
)
from kenfold_common.secrets import find_secrets, reject_secrets
from oauth.models import OAuthGrant, Owner
from oauth.security import security_event

MIN_PASSWORD_CHARS = 12
MAX_PASSWORD_BYTES = 1024
MAX_FAILURES = 5
LOCK_DURATION = timedelta(minutes=15)
# Argon2id as the spec fixes it: 64 MiB, 3 passes, 2 lanes, 32-byte hash, 16-byte salt.
_HASHER = PasswordHasher(time_cost=3, memory_cost=64 * 1024, parallelism=2, hash_len=32, salt_len=16)
# Each check holds 64 MiB for a moment; two at a time bounds what a flood of consent POSTs can take.
_CHECKS = threading.BoundedSemaphore(2)
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
    reject_secrets(field="The agent name", text=agent)


def consent_projects(*, choice: str, listed: str) -> list[str] | None:
    """The projects the owner limited a client to on the consent page (one per line), normalized as
    agents' projects are; None when the owner chose every project."""
    if choice != "some":
        return None
    projects = project_limit(listed.splitlines())
    if projects is None:
        raise InvalidInput("List at least one project, one per line, or choose all projects")
    return projects


def password_set(*, password: str) -> None:
    """Set (or change) the owner's password and clear any lockout."""
    if len(password) < MIN_PASSWORD_CHARS:
        raise InvalidInput(f"the password needs at least {MIN_PASSWORD_CHARS} characters")
    if len(password.encode()) > MAX_PASSWORD_BYTES:
        raise InvalidInput(f"the password is longer than {MAX_PASSWORD_BYTES} bytes")
    hashed = _HASHER.hash(password)
    with transaction.atomic():
        owner, _ = Owner.objects.select_for_update().get_or_create(id=1)
        owner.password_hash = hashed
        owner.password_changed_at = clock.now()
        owner.failures = owner.dashboard_failures = 0
        owner.locked_until = owner.dashboard_locked_until = None
        owner.save()
    security_event("password changed")


# Each page's counter and lock in the owner's row.
_LOCKOUT_FIELDS = {
    "consent": ("failures", "locked_until"),
    "dashboard": ("dashboard_failures", "dashboard_locked_until"),
}


def password_check(*, password: str, remote: str, page: str) -> None:
    """Pass, or raise PermissionDenied (no password set), TooManyAttempts (locked) or AuthenticationFailed
    (wrong; the failure is counted). `page` is where the password was typed, `consent` or `dashboard`:
    each has its own count and lock."""
    failures_field, locked_field = _LOCKOUT_FIELDS[page]
    with transaction.atomic():
        owner = Owner.objects.select_for_update().filter(id=1).first()
        if owner is None or not owner.password_hash:
            raise PermissionDenied("no owner password is set; the owner runs: python manage.py password")
        now = clock.now()
        failures, locked_until = getattr(owner, failures_field), getattr(owner, locked_field)
        if locked_until is not None and locked_until > now:
            security_event(f"{page} locked", remote=remote)
            raise TooManyAttempts("too many wrong passwords. Try again in 15 minutes")
        if (
            not password
            or len(password.encode()) > MAX_PASSWORD_BYTES
            or not _verify(owner.password_hash, password)
        ):
            failures += 1
            locked = failures >= MAX_FAILURES
            if locked:
                locked_until, failures = now + LOCK_DURATION, 0
            setattr(owner, failures_field, failures)
            setattr(owner, locked_field, locked_until)
            owner.save(update_fields=[failures_field, locked_field])
            security_event("wrong password", page=page, remote=remote, locked=locked)
            if locked:
                security_event(
                    "lockout", page=page, remote=remote, minutes=int(LOCK_DURATION.total_seconds() // 60)
                )
            # Leave the transaction normally, so that the count is committed; the caller is told after.
            failed = True
        else:
            if failures or locked_until:
                setattr(owner, failures_field, 0)
                setattr(owner, locked_field, None)
                owner.save(update_fields=[failures_field, locked_field])
            failed = False
    if failed:
        raise AuthenticationFailed("wrong password")


def owner_stamp() -> str:
    """A short fingerprint of the current password hash (spec §1.16 OwnerStamp): a dashboard session
    records it at login and ends when it differs, so a password change ends every session."""
    hashed = Owner.objects.filter(id=1).values_list("password_hash", flat=True).first() or ""
    return hashlib.sha256(hashed.encode()).digest()[:8].hex()


def _verify(hashed: str, password: str) -> bool:
    with _CHECKS:
        try:
            return _HASHER.verify(hashed, password)
        except (VerificationError, InvalidHashError):
            return False


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
