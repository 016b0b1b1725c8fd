"""The recency ranking's SQL: the newest memories, for a question about recent work."""

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from django.db import connection

from memories.models import served_sql


def recent_memories(
    *, scopes: Sequence[str], types: Sequence[str] | None, now: datetime, limit: int, history: bool = False
) -> list[UUID]:
    """The newest live memories of `scopes`, session summaries and handoffs first within a day.

    A question about recent work ("what did we do last time") often shares no word with the answer:
    the newest sessions are the answer. Used as an extra ranking when a query has recency intent.
    """
    type_filter = "AND m.type = ANY(%(types)s)" if types else ""
    sql = f"""
        SELECT m.id
        FROM memory m
        WHERE {served_sql("m", history=history)}
          AND m.scope = ANY(%(scopes)s)
          {type_filter}
        ORDER BY date_trunc('day', m.created_at) DESC, (m.type IN ('episodic', 'temporary')) DESC,
                 m.created_at DESC, m.id DESC
        LIMIT %(limit)s
    """
    params = {"scopes": list(scopes), "types": list(types or []), "now": now, "limit": limit}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]
