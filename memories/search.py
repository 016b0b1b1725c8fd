"""Search SQL: the first-stage rankers (spec §1.7). Reads only; callers shape the results.

The lexical ranker runs the query through plainto_tsquery('simple') so user text is never parsed as
tsquery syntax, then ORs its lexemes: a natural-language question should match memories that share
some of its words, not only those that contain all of them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db import connection

RRF_K = 60


@dataclass(frozen=True)
class Ranked:
    memory_id: UUID
    score: float


def lexical_search(
    *, query: str, scopes: Sequence[str], types: Sequence[str] | None, now: datetime, limit: int
) -> list[Ranked]:
    """Active, unexpired memories of `scopes` matching any word of `query`, best first.

    The score is the reciprocal-rank form used when rankers are fused (rank 1 → 1.0), so a caller sees
    the same scale with one ranker or several.
    """
    type_filter = "AND m.type = ANY(%(types)s)" if types else ""
    sql = f"""
        SELECT m.id
        FROM memory m,
             (SELECT replace(plainto_tsquery('simple', %(query)s)::text, '&', '|')::tsquery AS q) AS query
        WHERE m.status = 'active'
          AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
          AND m.scope = ANY(%(scopes)s)
          {type_filter}
          AND m.content_tsv @@ query.q
        ORDER BY ts_rank(m.content_tsv, query.q) DESC, m.id DESC
        LIMIT %(limit)s
    """
    params = {"query": query, "now": now, "scopes": list(scopes), "types": list(types or []), "limit": limit}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [Ranked(memory_id=row[0], score=(RRF_K + 1) / (RRF_K + rank)) for rank, row in enumerate(rows, 1)]


def trigram_similar(
    *, memory_id: UUID, content: str, scope: str, now: datetime, threshold: float, limit: int
) -> list[Ranked]:
    """Active memories in `scope` whose text is trigram-similar to `content` (for remember's similar[])."""
    sql = """
        SELECT m.id, similarity(m.content, %(content)s) AS sim
        FROM memory m
        WHERE m.status = 'active'
          AND m.scope = %(scope)s
          AND m.type <> 'temporary'
          AND m.id <> %(id)s
          AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
          AND m.content %% %(content)s
          AND similarity(m.content, %(content)s) >= %(threshold)s
        ORDER BY sim DESC, m.created_at DESC
        LIMIT %(limit)s
    """
    params = {
        "content": content,
        "scope": scope,
        "id": memory_id,
        "now": now,
        "threshold": threshold,
        "limit": limit,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Ranked(memory_id=row[0], score=float(row[1])) for row in cursor.fetchall()]
