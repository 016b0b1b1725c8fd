"""Write quotas per credential (API key or OAuth grant): writes per UTC minute, memories per UTC day.

A write service calls `quota_charge` inside its own transaction, after it has taken every other lock it
needs (so the counter row is always the last lock: no deadlock against a write of the same credential
that locks memory rows). The count is one INSERT ... ON CONFLICT DO UPDATE ... RETURNING in PostgreSQL,
so every server process on the database shares it, and the row lock it takes serializes the writes of
one credential until commit: two servers cannot both see 119 of 120. Over the quota the service's
transaction rolls back, the increment with it, so a refused call writes nothing and costs nothing.

Windows are fixed (a UTC minute, a UTC day) rather than sliding: the answer can say exactly when the
count resets, and one row per credential and window is all there is to store.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from access.caller import Caller
from access.models import ApiKey
from kenfold import clock
from kenfold_common.errors import InvalidInput, QuotaExceeded
from memories.models import CredentialQuota, QuotaCounter

WRITES = "writes"
MEMORIES = "memories"
# The dashboard lists credentials at or above this share of a limit.
NEAR_LIMIT = 0.8

_CHARGE = """
WITH limits AS (
    SELECT coalesce(q.writes_per_minute, %(default_writes)s) AS writes,
           coalesce(q.memories_per_day, %(default_memories)s) AS memories
    FROM (SELECT) AS one LEFT JOIN credential_quota q ON q.credential = %(credential)s
)
INSERT INTO quota_counter AS c (credential, kind, window_start, count, quota)
SELECT %(credential)s, v.kind, v.window_start, v.n, v.quota
FROM limits, LATERAL (VALUES
    (1, 'writes', %(minute)s::timestamptz, %(writes)s::integer, limits.writes),
    (2, 'memories', %(day)s::timestamptz, %(memories)s::integer, limits.memories)
) AS v (position, kind, window_start, n, quota)
WHERE v.n > 0 AND v.quota > 0
-- Always the minute row before the day row: the same lock order in every transaction.
ORDER BY v.position
ON CONFLICT (credential, kind, window_start) DO UPDATE SET count = c.count + EXCLUDED.count, quota = EXCLUDED.quota
RETURNING c.kind, c.count, c.quota, (c.xmax = 0) AS inserted
"""
# Rows of windows that have ended; rows a concurrent write still holds are left for the next prune.
_PRUNE = """
DELETE FROM quota_counter WHERE ctid IN (
    SELECT ctid FROM quota_counter
    WHERE credential = %(credential)s
      AND ((kind = 'writes' AND window_start < %(minute)s) OR (kind = 'memories' AND window_start < %(day)s))
    FOR UPDATE SKIP LOCKED
)
"""


def _windows(now: datetime) -> tuple[datetime, datetime]:
    """The start of the current UTC minute and of the current UTC day."""
    minute = now.astimezone(UTC).replace(second=0, microsecond=0)
    return minute, minute.replace(hour=0, minute=0)


def quota_charge(*, caller: Caller, writes: int = 1, memories: int = 0) -> None:
    """Count `writes` write calls and `memories` new memories against the caller's credential, or raise
    QuotaExceeded. Call it inside the write's transaction, after the write's other locks (module doc).

    Callers without a credential (stdio, the owner's commands, the worker) have no quota.
    """
    if caller.credential is None or (writes <= 0 and memories <= 0):
        return
    assert connection.in_atomic_block, "quota_charge must run inside the write's transaction"
    now = clock.now()
    minute, day = _windows(now)
    params = {
        "credential": caller.credential,
        "default_writes": settings.QUOTA_WRITES_PER_MINUTE,
        "default_memories": settings.QUOTA_MEMORIES_PER_DAY,
        "minute": minute,
        "day": day,
        "writes": writes,
        "memories": memories,
    }
    with connection.cursor() as cursor:
        cursor.execute(_CHARGE, params)
        rows = cursor.fetchall()
        if any(inserted for *_, inserted in rows):
            # A new window began for this credential: the ended ones go, so the table holds at most a
            # couple of rows per credential (bounded without a scheduled job).
            cursor.execute(_PRUNE, params)
    for kind, count, quota, _ in rows:
        if count > quota:
            raise _exceeded(
                caller=caller,
                kind=kind,
                adding=writes if kind == WRITES else memories,
                used=count - (writes if kind == WRITES else memories),
                quota=quota,
                now=now,
                minute=minute,
                day=day,
            )


def _who(credential: str) -> tuple[str, str]:
    """How the message names the credential, and the owner's command that changes its quota."""
    kind, _, ident = credential.partition(":")
    if kind == "key":
        prefix = ApiKey.objects.filter(pk=ident).values_list("prefix", flat=True).first() or ident
        return f"this API key ({prefix})", f"manage.py key quota {prefix}"
    return f"this OAuth grant ({ident})", f"manage.py oauth quota {ident}"


def _exceeded(
    *,
    caller: Caller,
    kind: str,
    adding: int,
    used: int,
    quota: int,
    now: datetime,
    minute: datetime,
    day: datetime,
) -> QuotaExceeded:
    assert caller.credential is not None
    who, command = _who(caller.credential)
    overridden = CredentialQuota.objects.filter(
        credential=caller.credential,
        **({"writes_per_minute__isnull": False} if kind == WRITES else {"memories_per_day__isnull": False}),
    ).exists()
    if kind == WRITES:
        resets, used_text, option = (
            minute + timedelta(minutes=1),
            f"wrote {used} times this minute",
            "--writes-per-minute",
        )
        setting, unit = "KENFOLD_QUOTA_WRITES_PER_MINUTE", "writes per minute"
    else:
        resets, used_text, option = (
            day + timedelta(days=1),
            f"created {used} memories today (UTC)"
            + (f" and this call would create {adding} more" if adding > 1 else ""),
            "--memories-per-day",
        )
        setting, unit = "KENFOLD_QUOTA_MEMORIES_PER_DAY", "memories per day"
    wait = max(1, int((resets - now).total_seconds() + 0.999))
    source = (
        "the key's own limit"
        if overridden and caller.credential.startswith("key:")
        else ("the grant's own limit" if overridden else f"the server's default, {setting}")
    )
    return QuotaExceeded(
        f"quota reached: {who} {used_text}; its limit is {quota} {unit} ({source}). Nothing was written. "
        f"It resets at {resets:%H:%M:%S} UTC, in {wait} s: retry then. The owner can raise it with "
        f"`{command} {option} N` (0 = no limit).",
        retry_after=wait,
    )


# --- the owner's settings and view ----------------------------------------------------------------------


def quota_set(
    *,
    credential: str,
    writes_per_minute: int | None = None,
    memories_per_day: int | None = None,
    reset: bool = False,
) -> CredentialQuota | None:
    """Set a credential's own limits (0 = none); a limit not given keeps its current value. `reset`
    removes the credential's own limits: the defaults apply again (returns None)."""
    for name, value in (("--writes-per-minute", writes_per_minute), ("--memories-per-day", memories_per_day)):
        if value is not None and value < 0:
            raise InvalidInput(f"{name} must be 0 (no limit) or more")
    with transaction.atomic():
        if reset:
            CredentialQuota.objects.filter(credential=credential).delete()
            return None
        quota, _ = CredentialQuota.objects.select_for_update().get_or_create(credential=credential)
        if writes_per_minute is not None:
            quota.writes_per_minute = writes_per_minute
        if memories_per_day is not None:
            quota.memories_per_day = memories_per_day
        quota.updated_at = clock.now()
        quota.save()
    return quota


@dataclass(frozen=True)
class Limits:
    """A credential's limits in force (0 = none) and whether each is its own or the default."""

    writes_per_minute: int
    memories_per_day: int
    own_writes: bool
    own_memories: bool


def quota_limits(*, credentials: list[str]) -> dict[str, Limits]:
    """The limits in force for each credential."""
    own = {q.credential: q for q in CredentialQuota.objects.filter(credential__in=credentials)}
    limits = {}
    for credential in credentials:
        quota = own.get(credential)
        writes = quota.writes_per_minute if quota else None
        memories = quota.memories_per_day if quota else None
        limits[credential] = Limits(
            writes_per_minute=settings.QUOTA_WRITES_PER_MINUTE if writes is None else writes,
            memories_per_day=settings.QUOTA_MEMORIES_PER_DAY if memories is None else memories,
            own_writes=writes is not None,
            own_memories=memories is not None,
        )
    return limits


@dataclass(frozen=True)
class Usage:
    credential: str
    kind: str
    count: int
    quota: int
    resets_at: datetime

    @property
    def percent(self) -> int:
        return int(100 * self.count / self.quota) if self.quota else 0


def quota_near_limits(*, share: float = NEAR_LIMIT) -> list[Usage]:
    """Credentials whose count in the current window is at least `share` of their limit in force, the
    fullest first."""
    now = clock.now()
    minute, day = _windows(now)
    rows = QuotaCounter.objects.filter(kind=WRITES, window_start=minute) | QuotaCounter.objects.filter(
        kind=MEMORIES, window_start=day
    )
    rows = list(rows)
    limits = quota_limits(credentials=sorted({row.credential for row in rows}))
    near = []
    for row in rows:
        limit = limits[row.credential]
        quota = limit.writes_per_minute if row.kind == WRITES else limit.memories_per_day
        if quota and row.count >= share * quota:
            resets = minute + timedelta(minutes=1) if row.kind == WRITES else day + timedelta(days=1)
            near.append(Usage(row.credential, row.kind, row.count, quota, resets))
    return sorted(near, key=lambda usage: (-usage.count / usage.quota, usage.credential, usage.kind))
