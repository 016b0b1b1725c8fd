"""Extraction's novelty check: the memories, in any live status, that an extraction candidate repeats."""

from collections.abc import Sequence
from uuid import UUID

from django.db import connection

from memories.search.vector import nearest_memories


def live_similar(
    *,
    content: str,
    vector: tuple[str, Sequence[float]] | None,
    scope: str,
    threshold: float,
    max_distance: float,
) -> list[UUID]:
    """Active or proposed memories of `scope` that resemble `content` (an extraction candidate not yet
    stored): trigram similarity >= `threshold`, or the (model, vector) pair within `max_distance`.

    Unlike remember's similar[], proposed memories count: a second session saying the same thing again
    must not queue a second proposal for review unmarked.
    """
    sql = """
        SELECT m.id FROM memory m
        WHERE m.status = ANY(%(live)s) AND m.scope = %(scope)s AND m.type NOT IN ('temporary', 'episodic')
          AND similarity(m.content, %(content)s) >= %(threshold)s
        ORDER BY similarity(m.content, %(content)s) DESC, m.created_at DESC
        LIMIT 5
    """
    live = ["active", "proposed"]
    with connection.cursor() as cursor:
        cursor.execute(sql, {"live": live, "scope": scope, "content": content, "threshold": threshold})
        found = [row[0] for row in cursor.fetchall()]
    if vector is not None:
        model, values = vector
        conditions = "e.status = ANY(%(live)s) AND e.type NOT IN ('temporary', 'episodic')"
        nearest = nearest_memories(
            vector=values, model=model, scopes=[scope], conditions=conditions, params={"live": live}, limit=5
        )
        found += [mid for mid, distance in nearest if distance <= max_distance and mid not in found]
    return found
