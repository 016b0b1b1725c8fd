"""API keys (spec §1.15): creation, revocation and bearer authentication.

A key is `kf_` + 43 base64url characters (32 random bytes). Only its SHA-256 is stored, so a database
leak does not leak working keys; the first 11 characters are kept as a prefix the owner can recognise
in listings and use to revoke.
"""

import base64
import hashlib
import re
import secrets
import uuid
from datetime import timedelta

from django.db import transaction
from django.db.models import Q, QuerySet

from access.models import ApiKey
from access.reach import project_limit
from kenfold import clock
from kenfold.db_functions import model_rows
from kenfold_common.errors import AuthenticationFailed, InvalidInput, NotFound
from kenfold_common.identity import check_credential_agent
from kenfold_common.secrets import reject_secrets
from kenfold_common.text import has_invisible

KEY_PREFIX = "kf_"
KEY_RE = re.compile(r"^kf_[A-Za-z0-9_-]{43}$")
DISPLAY_PREFIX_LENGTH = 11
MAX_LABEL_CHARS = 64
# Writing last_used_at on every request would turn every read into a write; once a minute is enough to
# tell the owner which keys are in use.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_key(raw: str) -> bytes:
    return hashlib.sha256(raw.encode()).digest()


def _clean_label(label: str) -> str:
    text = " ".join(label.split())
    if len(text) > MAX_LABEL_CHARS:
        raise InvalidInput(
            f"the label is {len(text)} characters; use at most {MAX_LABEL_CHARS}, such as 'laptop' or 'CI'"
        )
    if has_invisible(text):
        raise InvalidInput("the label contains control or invisible characters; type it again without them")
    return text


def api_key_create(
    *,
    agent: str,
    read_only: bool = False,
    label: str = "",
    projects: list[str] | None = None,
    user_memories: bool = True,
) -> tuple[ApiKey, str]:
    """Create a key for `agent`; returns the row and the raw key, which is never retrievable again.

    `label` (at most 64 characters, whitespace folded) tells two keys of one agent apart in listings.
    `projects` limits the key to those projects (None or none given: every project); `user_memories`
    False keeps user-wide memories from it (access.reach).
    """
    limit = project_limit(projects)
    check_credential_agent(agent, what="the name given")
    # Lowercase tokens fit the name rule (a Slack "xoxb-1234-..." does), and the name is on every memory.
    reject_secrets(field="the agent name", text=agent, named=True)
    label = _clean_label(label)
    reject_secrets(field="the label", text=label, named=True)
    raw = KEY_PREFIX + base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    key = ApiKey.objects.create(
        agent=agent,
        read_only=read_only,
        label=label,
        projects=limit,
        user_memories=user_memories,
        prefix=raw[:DISPLAY_PREFIX_LENGTH],
        key_hash=hash_key(raw),
    )
    key.refresh_from_db(fields=["id", "created_at"])
    return key, raw


def api_key_list(*, include_revoked: bool = False) -> QuerySet[ApiKey]:
    keys = ApiKey.objects.order_by("created_at", "id")
    return keys if include_revoked else keys.filter(revoked_at__isnull=True)


def api_key_find(*, ident: str, action: str = "revoke") -> ApiKey:
    """The key with this id or (the start of) this displayed prefix, revoked or not."""
    ident = ident.strip()
    try:
        candidates = list(ApiKey.objects.filter(pk=uuid.UUID(ident)))
    except ValueError:
        if not ident.startswith(KEY_PREFIX) or len(ident) < len(KEY_PREFIX) + 4:
            raise InvalidInput(
                "that is neither a key id nor a key prefix; use the ID or PREFIX column of `key list --all`"
            ) from None
        candidates = list(ApiKey.objects.filter(prefix__startswith=ident[:DISPLAY_PREFIX_LENGTH]))
    # Only the part that was looked up is shown: an owner may paste the whole key, which must not be echoed.
    shown = ident[:DISPLAY_PREFIX_LENGTH]
    if not candidates:
        raise NotFound(f"no API key matches {shown}; see `key list --all`")
    if len(candidates) > 1:
        ids = ", ".join(str(key.id) for key in candidates)
        raise InvalidInput(f"{shown} matches {len(candidates)} keys ({ids}); {action} one by its id")
    return candidates[0]


def api_key_revoke(*, ident: str) -> ApiKey:
    """Revoke by id or by (the start of) the displayed prefix. Revoking twice changes nothing."""
    found = api_key_find(ident=ident)
    with transaction.atomic():
        key = ApiKey.objects.select_for_update().get(pk=found.pk)
        if key.revoked_at is None:
            key.revoked_at = clock.now()
            key.save(update_fields=["revoked_at"])
    return key


def api_key_limit(
    *,
    ident: str,
    set_to: list[str] | None = None,
    add: list[str] | None = None,
    remove: list[str] | None = None,
    all_projects: bool = False,
    user_memories: bool | None = None,
) -> ApiKey:
    """Change which projects a key reaches, without a new key: replace the list (`set_to`), `add` to or
    `remove` from it, or open it to every project (`all_projects`); and whether it reads user-wide
    memories. Takes effect on the key's next request.

    Removing a key's last project is refused rather than read as "every project": that widening must be
    asked for by name (`all_projects`).
    """
    changes = [set_to is not None, bool(add), bool(remove), all_projects]
    if sum(changes) > 1:
        raise InvalidInput("give one of --set, --add, --remove or --all")
    if sum(changes) == 0 and user_memories is None:
        raise InvalidInput(
            "say what to change: --set P …, --add P …, --remove P …, --all, or --user-memories / --no-user-memories"
        )
    with transaction.atomic():
        key = ApiKey.objects.select_for_update().get(pk=api_key_find(ident=ident, action="change").pk)
        current = set(key.projects) if key.projects is not None else None
        if set_to is not None:
            current = set(project_limit(set_to) or ())
            if not current:
                raise InvalidInput("--set needs at least one project; use --all to reach every project")
        elif add or remove:
            if current is None:
                raise InvalidInput("this key reaches every project; limit it with --set P … first")
            if add:
                current |= set(project_limit(add) or ())
            current -= set(project_limit(remove) or ())
            if not current:
                raise InvalidInput(
                    "that would remove the key's last project; use --all to open it to every project, "
                    "or revoke the key"
                )
        elif all_projects:
            current = None
        key.projects = sorted(current) if current is not None else None
        if user_memories is not None:
            key.user_memories = user_memories
        key.save(update_fields=["projects", "user_memories"])
    return key


def api_key_authenticate(*, token: str) -> ApiKey:
    """The live key for a bearer token, or AuthenticationFailed. Malformed tokens never reach the database."""
    if not KEY_RE.fullmatch(token):
        raise AuthenticationFailed(
            "the bearer token is not a Kenfold API key (expected kf_ followed by 43 characters)"
        )
    # Every request runs this lookup: a prepared statement, not a queryset compiled anew each time.
    found = model_rows(ApiKey, "WHERE key_hash = %s", [hash_key(token)])
    key = found[0] if found else None
    if key is None:
        raise AuthenticationFailed("unknown API key; create one with `python manage.py key create <agent>`")
    if key.revoked_at is not None:
        raise AuthenticationFailed("this API key was revoked; ask the owner for a new one")
    now = clock.now()
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
        # Conditional update: concurrent requests of the same minute write once.
        ApiKey.objects.filter(pk=key.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_RESOLUTION)
        ).update(last_used_at=now)
        key.last_used_at = now
    return key
