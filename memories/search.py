"""Search SQL: the first-stage rankers (spec §1.7). Reads only; callers shape the results.

The lexical ranker runs the query through plainto_tsquery('simple') so user text is never parsed as
tsquery syntax, then ORs its lexemes: a natural-language question should match memories that share
some of its words, not only those that contain all of them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db import connection, transaction

from memories.lexical import build_query

RRF_K = 60
# ts_rank normalization flags: 1 divides by 1 + log(length), so a long session summary that mentions a
# word in passing does not outrank the short fact about it.
LEXICAL_RANK_NORMALIZATION = 0
IDF_COUNT_CAP = 1000
LEXICAL_CANDIDATES = 300


@dataclass(frozen=True)
class Ranked:
    memory_id: UUID
    score: float


def lexical_search(
    *, query: str, scopes: Sequence[str], types: Sequence[str] | None, now: datetime, limit: int
) -> list[Ranked]:
    """Active, unexpired memories of `scopes` matching any term of `query`, best first.

    Two vectors, one round trip: the `simple` one (exact words, paths, Korean stems as prefixes) and the
    stemmed `english` one. Each query term is weighted by its inverse document frequency among the
    memories searched (BM25's idf; the count is capped, since past a few hundred documents a word is
    common whatever the exact number), so a rare identifier outweighs a word every session summary
    uses. The score is the reciprocal-rank form used when rankers are fused (rank 1 → 1.0).
    """
    terms = build_query(query)
    if not terms.simple_terms and not terms.english_terms:
        return []
    type_filter = "AND m.type = ANY(%(types)s)" if types else ""
    live = f"""
        m.status = 'active'
        AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
        AND m.scope = ANY(%(scopes)s)
        {type_filter}
    """
    sql = f"""
        WITH term AS (
            SELECT t.english, CASE WHEN t.english THEN to_tsquery('english', t.text)
                                   ELSE to_tsquery('simple', t.text) END AS q
            FROM unnest(%(texts)s::text[], %(english_flags)s::bool[]) AS t(text, english)
        ),
        total AS MATERIALIZED (
            -- The planner's row estimate is exact enough for an idf; the capped count covers a table
            -- that was never analyzed (new installations, tests).
            SELECT greatest(
                (SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass),
                (SELECT count(*) FROM (SELECT 1 FROM memory LIMIT %(cap)s) AS sample)
            ) AS n
        ),
        stats AS MATERIALIZED (
            -- The planner's statistics list the most common words of each vector with their share of
            -- rows: exactly the words whose counting would be expensive (their index entries are long).
            SELECT attname = 'content_tsv_en' AS english, most_common_elems::text::text[] AS words,
                   most_common_elem_freqs AS shares
            FROM pg_stats
            WHERE schemaname = current_schema() AND tablename = 'memory'
              AND attname IN ('content_tsv', 'content_tsv_en')
        ),
        weighted AS MATERIALIZED (
            -- Document frequencies over the whole table (every scope and status), a fine proxy for the
            -- scope's: common words from the statistics, the others (cheap to look up) counted in the
            -- index, capped.
            SELECT term.english, term.q, ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5)) AS idf
            FROM total, term
                 LEFT JOIN stats ON stats.english = term.english,
                 LATERAL (
                     SELECT coalesce(
                         -- array_position: one lookup; scanning the array per term cost ~12 ms a query.
                         stats.shares[array_position(stats.words, btrim(term.q::text, ''''))] * total.n,
                         CASE WHEN term.english
                             THEN (SELECT count(*) FROM (
                                      SELECT 1 FROM memory m WHERE m.content_tsv_en @@ term.q LIMIT %(cap)s) AS hits)
                             ELSE (SELECT count(*) FROM (
                                      SELECT 1 FROM memory m WHERE m.content_tsv @@ term.q LIMIT %(cap)s) AS hits)
                         END
                     ) AS n
                 ) AS df
            WHERE df.n > 0
        ),
        q AS (
            SELECT to_tsquery('simple', %(simple)s) AS simple, to_tsquery('english', %(english)s) AS english
        ),
        candidates AS MATERIALIZED (
            -- The idf-weighted score costs one ts_rank per term and row, so only the best candidates by
            -- the plain rank get it, not every memory of the scope that shares a common word.
            SELECT m.id, m.content_tsv, m.content_tsv_en
            FROM memory m, q
            WHERE {live}
              AND (m.content_tsv @@ q.simple OR m.content_tsv_en @@ q.english)
            ORDER BY ts_rank(m.content_tsv, q.simple, %(norm)s) + ts_rank(m.content_tsv_en, q.english, %(norm)s) DESC
            LIMIT %(candidates)s
        )
        SELECT c.id,
               (SELECT sum(w.idf * ts_rank(CASE WHEN w.english THEN c.content_tsv_en ELSE c.content_tsv END, w.q, %(norm)s))
                FROM weighted w) AS score
        FROM candidates c
        ORDER BY score DESC, c.id DESC
        LIMIT %(limit)s
    """
    params = {
        "texts": list(terms.simple_terms) + list(terms.english_terms),
        "english_flags": [False] * len(terms.simple_terms) + [True] * len(terms.english_terms),
        "simple": terms.simple,
        "english": terms.english,
        "cap": IDF_COUNT_CAP,
        "candidates": max(limit, LEXICAL_CANDIDATES),
        "norm": LEXICAL_RANK_NORMALIZATION,
        "now": now,
        "scopes": list(scopes),
        "types": list(types or []),
        "limit": limit,
    }
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


def _nearest(
    *, vector: Sequence[float], model: str, conditions: str, params: dict, limit: int
) -> list[tuple[UUID, float]]:
    """Memories nearest to `vector` among vectors of `model` that meet `conditions` (on `m`), with
    their cosine distances, nearest first.

    The ORDER BY uses the same `embedding::vector(D)` expression as the model's partial HNSW index, so
    it is an index scan at any size. The conditions apply after the index returns candidates;
    `hnsw.iterative_scan` lets the index keep scanning until enough rows pass them.
    """
    dims = len(vector)
    distance = f"(e.embedding::vector({dims})) <=> %(query)s::vector({dims})"
    sql = f"""
        SELECT e.memory_id, {distance} AS distance
        FROM memory_embedding e
        JOIN memory m ON m.id = e.memory_id
        WHERE e.model = %(model)s AND {conditions}
        ORDER BY {distance}
        LIMIT %(limit)s
    """
    literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(sql, params | {"query": literal, "model": model, "limit": limit})
        rows = cursor.fetchall()
    # relaxed_order may return rows slightly out of order; distances are exact, so sort again.
    return sorted(((row[0], float(row[1])) for row in rows), key=lambda row: row[1])


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
    """Nearest active, unexpired memories of `scopes`, within `max_distance`, with distances."""
    conditions = """m.status = 'active'
          AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
          AND m.scope = ANY(%(scopes)s)"""
    if types:
        conditions += " AND m.type = ANY(%(types)s)"
    params = {"now": now, "scopes": list(scopes), "types": list(types or [])}
    nearest = _nearest(vector=vector, model=model, conditions=conditions, params=params, limit=limit)
    return [(memory_id, distance) for memory_id, distance in nearest if distance <= max_distance]


def graph_neighbors(
    *, seeds: Sequence[UUID], scopes: Sequence[str], types: Sequence[str] | None, now: datetime, limit: int
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
          AND m.status = 'active'
          AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
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
    conditions = """m.status = 'active'
          AND m.scope = %(scope)s
          AND m.type <> 'temporary'
          AND m.id <> %(id)s
          AND (m.expires_at IS NULL OR m.expires_at > %(now)s)"""
    params = {"scope": scope, "id": memory_id, "now": now}
    nearest = _nearest(vector=vector, model=model, conditions=conditions, params=params, limit=limit)
    return [
        Ranked(memory_id=mid, score=1.0 - distance) for mid, distance in nearest if distance <= max_distance
    ]


def recent_memories(
    *, scopes: Sequence[str], types: Sequence[str] | None, now: datetime, limit: int
) -> list[UUID]:
    """The newest live memories of `scopes`, session summaries and handoffs first within a day.

    A question about recent work ("what did we do last time") often shares no word with the answer:
    the newest sessions are the answer. Used as an extra ranking when a query has recency intent.
    """
    type_filter = "AND m.type = ANY(%(types)s)" if types else ""
    sql = f"""
        SELECT m.id
        FROM memory m
        WHERE m.status = 'active'
          AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
          AND m.scope = ANY(%(scopes)s)
          {type_filter}
        ORDER BY date_trunc('day', m.created_at) DESC, (m.type IN ('episodic', 'temporary')) DESC,
                 m.created_at DESC
        LIMIT %(limit)s
    """
    params = {"scopes": list(scopes), "types": list(types or []), "now": now, "limit": limit}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]
