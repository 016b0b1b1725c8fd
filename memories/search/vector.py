"""Vector search SQL (spec §1.7): the nearest memories to a vector, through the model's HNSW index or a
scope's own (memories.search.scope_indexes). Reads only."""

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from kenfold.db_functions import PgVector, server_bound, sql_literal
from memories.models import served_sql
from memories.search import scope_indexes
from memories.search.hits import WHOLE_TEXT, Hit, Ranked, text_sql


def nearest_memories(
    *,
    vector: Sequence[float],
    model: str,
    scopes: Sequence[str],
    conditions: str,
    params: dict,
    limit: int,
) -> list[tuple[UUID, float]]:
    """Memories nearest to `vector` among vectors of `model` in `scopes` that meet `conditions` (on `e`),
    with their cosine distances, nearest first. See _nearest_sql."""
    sql = _nearest_sql(vector=vector, model=model, scopes=scopes, conditions=conditions, limit=limit)
    rows = server_bound(sql, params | {"scopes": list(scopes), "query": PgVector(vector)}, prepare=True)
    return [(row[0], float(row[1])) for row in _nearest_first(rows, distance=1)]


def _nearest_first(rows: list[tuple], *, distance: int) -> list[tuple]:
    """Rows of a vector search (the memory id first) nearest first. relaxed_order may return them slightly
    out of order; distances are exact, so sort again (equal distances by id, so that the same memories
    rank the same whatever order they were written in)."""
    return sorted(rows, key=lambda row: (float(row[distance]), row[0]))


def _nearest_sql(
    *, vector: Sequence[float], model: str, scopes: Sequence[str], conditions: str, limit: int
) -> str:
    """The `limit` nearest vectors (memory_id, distance) of `model` in `scopes` meeting `conditions`.

    The ORDER BY uses the same `embedding::vector(D)` expression as the HNSW indexes, so it is an index
    scan at any size. The model and the limit are written into the statement: a prepared statement's
    generic plan can use a partial index only if it sees the predicate's values, and plans for the row
    count it returns. When every scope has an HNSW index of its own (memories.search.scope_indexes), each scope
    is searched in its own graph, named in its own part, and the parts' nearest are merged; otherwise
    the model-wide graph is walked with the scopes as a filter. The conditions apply after an index
    returns candidates; `hnsw.iterative_scan`, set for every connection (kenfold.settings), lets it keep
    scanning until enough rows pass them. They test the copies of the memory's scope, status, type and
    expiry that each vector row carries (migration 0008): no lookup in the memory table per candidate.
    """
    dims = len(vector)
    distance = f"(e.embedding::vector({dims})) <=> %(query)b::vector({dims})"
    unique = list(dict.fromkeys(scopes))
    if not scope_indexes.covers(model=model, dimensions=dims, scopes=unique):
        return f"""
        SELECT e.memory_id, {distance} AS distance
        FROM memory_embedding e
        WHERE e.model = {sql_literal(model)} AND e.scope = ANY(%(scopes)s) AND {conditions}
        ORDER BY {distance}
        LIMIT {int(limit)}
    """
    parts = [
        f"""
        SELECT e.memory_id, {distance} AS distance
        FROM memory_embedding e
        WHERE e.model = {sql_literal(model)} AND e.scope = {sql_literal(scope)} AND {conditions}
        ORDER BY {distance}
        LIMIT {int(limit)}"""
        for scope in unique
    ]
    if len(parts) == 1:
        return parts[0]
    union = " UNION ALL ".join(f"({part})" for part in parts)
    return f"SELECT * FROM ({union}) AS per_scope ORDER BY distance, memory_id LIMIT {int(limit)}"


def vector_search(
    *,
    vector: Sequence[float],
    model: str,
    scopes: Sequence[str],
    types: Sequence[str] | None,
    now: datetime,
    limit: int,
    max_distance: float,
) -> list[tuple[UUID, float]]:
    """Nearest served memories of `scopes`, within `max_distance`, with distances."""
    conditions, params = _vector_conditions(types=types, now=now)
    nearest = nearest_memories(
        vector=vector, model=model, scopes=scopes, conditions=conditions, params=params, limit=limit
    )
    return [(memory_id, distance) for memory_id, distance in nearest if distance <= max_distance]


def vector_hits(
    *,
    vector: Sequence[float],
    model: str,
    scopes: Sequence[str],
    types: Sequence[str] | None,
    now: datetime,
    limit: int,
    max_distance: float,
    text_chars: int | None = WHOLE_TEXT,
    history: bool = False,
) -> list[Hit]:
    """vector_search's memories, nearest first, as Hits (the text cut at `text_chars` characters), read in
    the same statement: the vector rows carry none of it, so the nearest few are joined to their memories."""
    conditions, params = _vector_conditions(types=types, now=now, history=history)
    nearest = _nearest_sql(vector=vector, model=model, scopes=scopes, conditions=conditions, limit=limit)
    sql = f"""
        SELECT n.memory_id, {text_sql("m", text_chars)}, m.type, m.created_at, m.code_state, n.distance
        FROM ({nearest}) AS n JOIN memory m ON m.id = n.memory_id
    """
    rows = server_bound(sql, params | {"scopes": list(scopes), "query": PgVector(vector)}, prepare=True)
    return [Hit(*row[:5]) for row in _nearest_first(rows, distance=5) if float(row[5]) <= max_distance]


def _vector_conditions(
    *, types: Sequence[str] | None, now: datetime, history: bool = False
) -> tuple[str, dict]:
    # The vector rows carry only the current status; what was served then is read from the memory.
    conditions = (
        f"EXISTS (SELECT 1 FROM memory h WHERE h.id = e.memory_id AND {served_sql('h', history=True)})"
        if history
        else served_sql("e")
    )
    if types:
        conditions += " AND e.type = ANY(%(types)s)"
    return conditions, {"now": now, "types": list(types or [])}


def vector_similar(
    *,
    memory_id: UUID,
    vector: Sequence[float],
    model: str,
    scope: str,
    now: datetime,
    max_distance: float,
    limit: int,
) -> list[Ranked]:
    """Active memories in `scope` whose vector is within `max_distance` of a new memory's (similar[])."""
    conditions = f"""{served_sql("e")}
          AND e.type <> 'temporary'
          AND e.memory_id <> %(id)s"""
    params = {"id": memory_id, "now": now}
    nearest = nearest_memories(
        vector=vector, model=model, scopes=[scope], conditions=conditions, params=params, limit=limit
    )
    return [
        Ranked(memory_id=mid, score=1.0 - distance) for mid, distance in nearest if distance <= max_distance
    ]
