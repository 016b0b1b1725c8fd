"""Which memories agents were served, and which they reused (issue 39: "which memories were used").

Every recall and get_context answer writes one ServedCall row: the memory ids in rank order, the tool, the
agent, its credential and the session when the client sent one; never content or the query. A reuse is
marked on the row that served the memory: by the session hook, which compares the session's final
response and tool calls with what was served, or by the agent itself (`used` on a later call). The owner's
Usage page reads the counts: memories nobody reuses are candidates for forgetting.

Bounded twice: rows older than KENFOLD_USAGE_DAYS are pruned by the worker every hour, and each insert
drops the rows more than KENFOLD_USAGE_MAX_ROWS behind it, so the table stays within its cap even while
the worker is down.
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection

from access.caller import Caller
from kenfold import clock
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import SESSION_ID_META_KEY, parse_session_id
from kenfold_common.secrets import holds_secrets
from memories.models import Memory, MemoryType, ServedCall
from memories.selectors import parse_memory_id

# More ids than one answer can hold (recall's limit) are not a report of reuse.
MAX_USED = 50


def usage_record(
    *, caller: Caller, tool: str, memory_ids: Sequence[str], session_id: str | None, now: datetime
) -> None:
    """Record one answer. A single statement (insert, then trim to the cap), so a recall pays one round
    trip for it."""
    if settings.USAGE_DAYS == 0 or not memory_ids:
        return
    session_id = _kept_session(session_id)
    with connection.cursor() as cursor:
        # The DELETE does not see the row being inserted (same snapshot): with ids increasing, what it
        # removes is exactly what lies more than the cap behind the new row. The commit does not wait for
        # the disk (synchronous_commit off for this transaction, set in the same statement): on a loaded
        # disk that wait cost a recall 2-7 ms, and a crash can lose only the last moment's records.
        cursor.execute(
            "WITH added AS ("
            " INSERT INTO served_call (served_at, tool, agent, credential, session_id, memory_ids)"
            " SELECT %s, %s, %s, %s, %s, %s::uuid[]"
            " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS no_disk_wait RETURNING id"
            ") DELETE FROM served_call WHERE id <= (SELECT id FROM added) - %s",
            [
                now,
                tool,
                caller.agent,
                caller.credential,
                session_id,
                [uuid.UUID(value) for value in dict.fromkeys(memory_ids)],
                settings.USAGE_MAX_ROWS,
            ],
        )


def parse_used(values: Sequence[str] | None, *, field: str = "used") -> list[uuid.UUID]:
    """The ids of a `used` report, each once; an error names the position, never the value."""
    if not values:
        return []
    if len(values) > MAX_USED:
        raise InvalidInput(
            f"{field} has more than {MAX_USED} ids; list only the memories you actually reused"
        )
    parsed = (parse_memory_id(value, field=f"{field}[{index}]") for index, value in enumerate(values))
    return list(dict.fromkeys(parsed))


def usage_mark_used(
    *, caller: Caller, memory_ids: Sequence[uuid.UUID], session_id: str | None, now: datetime
) -> int:
    """Mark memories as reused, each on the latest answer that served it to this caller (an answer of
    `session_id` first) within the kept window, and return how many were newly marked.

    Ids this caller was not served are ignored: use counts what was served and then reused, and an agent
    cannot raise a memory's count by naming it. Marking again changes nothing.
    """
    if settings.USAGE_DAYS == 0 or not memory_ids:
        return 0
    since = now - timedelta(days=settings.USAGE_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH wanted AS (SELECT DISTINCT unnest(%s::uuid[]) AS memory_id),"
            " latest AS ("
            "  SELECT DISTINCT ON (w.memory_id) w.memory_id, s.id, s.used_ids"
            "  FROM wanted w JOIN served_call s ON s.memory_ids @> ARRAY[w.memory_id]"
            "  WHERE s.agent = %s AND s.credential IS NOT DISTINCT FROM %s AND s.served_at >= %s"
            "  ORDER BY w.memory_id, (s.session_id IS NOT DISTINCT FROM %s) DESC, s.id DESC"
            " ),"
            " fresh AS ("
            "  SELECT id, array_agg(memory_id) AS ids FROM latest"
            "  WHERE NOT used_ids @> ARRAY[memory_id] GROUP BY id"
            " ),"
            " updated AS ("
            "  UPDATE served_call s SET used_ids = s.used_ids || f.ids FROM fresh f WHERE s.id = f.id"
            "  RETURNING cardinality(f.ids) AS marked"
            " )"
            " SELECT coalesce(sum(marked), 0) FROM updated",
            [list(memory_ids), caller.agent, caller.credential, since, session_id],
        )
        return int(cursor.fetchone()[0])


def usage_report_used(*, caller: Caller, used: Sequence[str], session_id: str | None) -> int:
    """What a client found reused in a session (the session hook): marks them, returns how many."""
    return usage_mark_used(
        caller=caller, memory_ids=parse_used(used), session_id=_kept_session(session_id), now=clock.now()
    )


def _kept_session(session_id: str | None) -> str | None:
    """The session id as `_meta` accepts it (trimmed; None when blank or with invisible characters), and
    None when it holds a secret: a read must not fail over its _meta (remember refuses such an id), nor
    may the id be stored."""
    session_id = parse_session_id({SESSION_ID_META_KEY: session_id})
    return None if session_id and holds_secrets(session_id, named=True) else session_id


def usage_prune(*, now: datetime) -> int:
    """Delete the answers older than KENFOLD_USAGE_DAYS (all of them when it is 0); returns how many."""
    rows = ServedCall.objects.all()
    if settings.USAGE_DAYS:
        rows = rows.filter(served_at__lt=now - timedelta(days=settings.USAGE_DAYS))
    deleted, _ = rows.delete()
    return deleted


@dataclass(frozen=True)
class MemoryUsage:
    memory: Memory
    served: int
    used: int
    last_served_at: datetime | None


@dataclass(frozen=True)
class UsageReport:
    """The Usage page: what is recorded, the most reused memories and the never-reused ones."""

    answers: int
    since: datetime | None
    memories_served: int
    memories_used: int
    most_used: list[MemoryUsage]
    never_used: list[MemoryUsage]
    never_used_total: int


def usage_report(*, now: datetime, idle_days: int, limit: int = 50) -> UsageReport:
    """Counts per memory over the kept window. Never-used memories are active ones written more than
    `idle_days` ago that no agent reused (never served ones first): candidates for forgetting. Temporary
    memories are left out, since they expire by themselves."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), min(served_at) FROM served_call")
        answers, since = cursor.fetchone()
        cursor.execute(
            "SELECT s.memory_id, s.served, s.last_served_at, coalesce(u.used, 0) FROM ("
            " SELECT m AS memory_id, count(*) AS served, max(served_at) AS last_served_at"
            " FROM served_call, unnest(memory_ids) AS m GROUP BY m"
            ") s LEFT JOIN ("
            " SELECT m AS memory_id, count(*) AS used FROM served_call, unnest(used_ids) AS m GROUP BY m"
            ") u ON u.memory_id = s.memory_id"
        )
        counts = {row[0]: (row[1], row[3], row[2]) for row in cursor.fetchall()}
    used_ids = [memory_id for memory_id, (_, used, _) in counts.items() if used]
    live = Memory.objects.served(now).for_views()
    candidates = (
        live.filter(created_at__lt=now - timedelta(days=idle_days))
        .exclude(type=MemoryType.TEMPORARY)
        .exclude(id__in=used_ids)
    )

    def usage(memory: Memory) -> MemoryUsage:
        served, used, last = counts.get(memory.id, (0, 0, None))
        return MemoryUsage(memory=memory, served=served, used=used, last_served_at=last)

    most_used = sorted(
        (usage(memory) for memory in live.filter(id__in=used_ids)),
        key=lambda row: (-row.used, -row.served, str(row.memory.id)),
    )[:limit]
    # Never served first (oldest first), then the least served of those served but never reused.
    never_used = [
        usage(memory) for memory in candidates.exclude(id__in=list(counts)).order_by("created_at")[:limit]
    ]
    if len(never_used) < limit:
        served_unused = sorted(
            (usage(memory) for memory in candidates.filter(id__in=list(counts))),
            key=lambda row: (row.served, row.memory.created_at),
        )
        never_used += served_unused[: limit - len(never_used)]
    return UsageReport(
        answers=answers,
        since=since,
        memories_served=len(counts),
        memories_used=len(used_ids),
        most_used=most_used,
        never_used=never_used,
        never_used_total=candidates.count(),
    )
