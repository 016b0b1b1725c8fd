"""Graph expansion's SQL: the memories one edge from the best candidates (retrieval, with a reranker)."""

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from django.db import connection

from memories.models import served_sql


def graph_neighbors(
    *,
    seeds: Sequence[UUID],
    scopes: Sequence[str],
    types: Sequence[str] | None,
    now: datetime,
    limit: int,
    history: bool = False,
) -> list[tuple[UUID, UUID]]:
    """Live memories one edge away from a seed (either direction), plus siblings: memories derived from
    the same session summary as a seed. Returns (neighbor, seed) pairs, newest neighbors first."""
    type_filter = "AND m.type = ANY(%(types)s)" if types else ""
    sql = f"""
        WITH links AS (
            SELECT e.dst_id AS neighbor, e.src_id AS seed FROM memory_edge e WHERE e.src_id = ANY(%(seeds)s)
            UNION
            SELECT e.src_id, e.dst_id FROM memory_edge e WHERE e.dst_id = ANY(%(seeds)s)
            UNION
            SELECT sibling.src_id, mine.src_id
            FROM memory_edge mine
            JOIN memory_edge sibling ON sibling.dst_id = mine.dst_id AND sibling.relation = 'derived_from'
            WHERE mine.src_id = ANY(%(seeds)s) AND mine.relation = 'derived_from' AND sibling.src_id <> mine.src_id
        )
        SELECT links.neighbor, links.seed
        FROM links JOIN memory m ON m.id = links.neighbor
        WHERE NOT (links.neighbor = ANY(%(seeds)s))
          AND {served_sql("m", history=history)}
          AND m.scope = ANY(%(scopes)s)
          {type_filter}
        ORDER BY m.created_at DESC, m.id DESC
        LIMIT %(limit)s
    """
    params = {
        "seeds": list(seeds),
        "scopes": list(scopes),
        "types": list(types or []),
        "now": now,
        "limit": limit,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], row[1]) for row in cursor.fetchall()]
