"""Delta context: the opaque `state` a get_context answer carries, and what it stands for (issue 17).

A state is `c1.<snapshot id>.<MAC>`, both parts base64url: the id of a ContextSnapshot row (what the
agent holds) and an HMAC of it under the server's secret key. The row, not the state, holds the memory
ids and hashes, so the state stays short for a model to copy back, tells nothing about any memory, and
works from any replica, over HTTP or stdio, in any session. The MAC tells a forged or mangled state
apart from one that merely expired, without a database read.
"""

import base64
import binascii
import hmac
import uuid
from datetime import datetime, timedelta

from django.utils.crypto import salted_hmac

from kenfold_common.errors import InvalidInput
from memories.models import ContextSnapshot

VERSION = "c1"
# Long enough for a working day's session; a session that outlives it starts again without state.
STATE_TTL = timedelta(hours=24)
# Expired snapshots are deleted as new ones are written, at most once per PRUNE_INTERVAL in a process: the
# table still holds about a day of get_context calls, and a call writes one statement instead of two.
PRUNE_INTERVAL = timedelta(minutes=1)
_pruned_at: datetime | None = None
_MAC_BYTES = 12
_SALT = "kenfold.memories.delta.state"

FRESH_START = (
    "call get_context again without state (it then sends everything in full) and rely only on what that "
    "call returns"
)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(snapshot_id: uuid.UUID) -> bytes:
    return salted_hmac(_SALT, snapshot_id.bytes, algorithm="sha256").digest()[:_MAC_BYTES]


def state_for(snapshot_id: uuid.UUID) -> str:
    return f"{VERSION}.{_b64(snapshot_id.bytes)}.{_b64(_mac(snapshot_id))}"


def save_state(*, scope: str, held: dict[str, str], now: datetime) -> str:
    """Store what the agent now holds and return the state that names it."""
    global _pruned_at
    if _pruned_at is None or not _pruned_at <= now < _pruned_at + PRUNE_INTERVAL:
        ContextSnapshot.objects.filter(expires_at__lte=now).delete()
        _pruned_at = now
    snapshot = ContextSnapshot.objects.create(scope=scope, held=held, expires_at=now + STATE_TTL)
    return state_for(snapshot.id)


def _snapshot_id(state: str) -> uuid.UUID:
    """The snapshot a state names, if this server issued it; the state itself is never echoed."""
    parts = state.strip().split(".")
    if len(parts) != 3 or parts[0] != VERSION:
        raise InvalidInput(f"state is not a state returned by get_context; {FRESH_START}")
    try:
        snapshot_id = uuid.UUID(bytes=_unb64(parts[1]))
        mac = _unb64(parts[2])
    except (ValueError, binascii.Error):
        raise InvalidInput(f"state is not a state returned by get_context; {FRESH_START}") from None
    if not hmac.compare_digest(mac, _mac(snapshot_id)):
        raise InvalidInput(
            f"state was altered or comes from another Kenfold server (its signature does not match); "
            f"{FRESH_START}"
        )
    return snapshot_id


def held_for_state(*, state: str, scope: str, now: datetime) -> dict[str, str]:
    """What the agent holds (memory id → view hash) according to `state`, for a call about `scope`.

    Never empty by accident: a state that cannot be honoured is an error, because an agent told "you
    hold nothing new" would otherwise rely on text it may no longer have.
    """
    snapshot = ContextSnapshot.objects.filter(pk=_snapshot_id(state)).first()
    if snapshot is None or snapshot.expires_at <= now:
        hours = int(STATE_TTL.total_seconds() // 3600)
        raise InvalidInput(f"state has expired (a state is kept {hours} hours); {FRESH_START}")
    if snapshot.scope != scope:
        raise InvalidInput(
            "state belongs to a get_context call for another project; pass the same project as that call, "
            f"or {FRESH_START}"
        )
    return dict(snapshot.held)
