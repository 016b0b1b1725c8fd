"""Search SQL: the first-stage rankers (spec §1.7). Reads only; callers shape the results.

The lexical ranker runs the query through plainto_tsquery('simple') so user text is never parsed as
tsquery syntax, then ORs its lexemes: a natural-language question should match memories that share
some of its words, not only those that contain all of them.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db import OperationalError, connection, transaction
from psycopg.errors import QueryCanceled
from psycopg.types.json import Jsonb

from kenfold.db_functions import PgVector, model_rows, server_bound, sql_literal
from memories.models import NOT_IN_VIEWS, Memory, MemoryType, served_sql
from memories.presenters import DOC_KIND, DOC_RELATION_PREFIX, GUIDELINES_KIND, HANDOFF_KIND
from memories.search import scope_indexes
from memories.search.lexical import build_query, word_term

# ts_rank normalization flags; 0 is the raw rank. Flag 1 (divide by 1 + log(length)) was worse on both sets:
# dev.json full-text R@5 0.817 → 0.812, LoCoMo R@10 0.693 → 0.689 (2026-11-30).
LEXICAL_RANK_NORMALIZATION = 0
# A word in this many memories or more is "common". Document frequencies are counted up to here (past a
# few hundred documents a word is common whatever the exact number), and common words are searched only
# among the newest memories of each scope (see lexical_search).
COMMON_DF = 500
LEXICAL_CANDIDATES = 300
# The newest memories per scope searched for common words. Reading them costs about a microsecond each (a
# heap row and two text-search tests): 2,000 made the lexical search the slowest part of a recall at
# 100,000 memories (9.9 ms median in process against 7.3 with 1,000). On that corpus the top 10 of the
# lexical ranking with 1,000 shares 85% with 2,000's; neither evaluation set has a scope big enough to
# measure what it costs in recall (their scopes are searched whole). Rare words and the vectors still
# cover every memory.
RECENT_WINDOW = 1000
TRIGRAM_SIMILAR_BUDGET_MS = 100
# pg_trgm's own default, for a session that has not loaded the extension's library yet.
PG_TRGM_DEFAULT_THRESHOLD = "0.3"
# ts_rank's weights of the vectors' D, C, B and A parts (its defaults are 0.1, 0.2, 0.4, 1.0). Body text is
# D; a doc section's title and headings are A, its tags, aliases and answers B, its description C
# (migration memories.0011). Milder than kenso's column weights (10x for a title): a page's title, tags and
# aliases are copied onto each of its sections, so strong weights rank the page's other sections, and pages
# whose fields share a stem with the question ("production" -> "product"), above the section that answers.
# On bench/docs_eval.py without vectors (52 questions, 32 pages; 2026-12-02): unweighted R@5 0.962 MRR
# 0.856; ts_rank's defaults R@5 0.962 MRR 0.774; these R@5 0.981 MRR 0.874 (chosen on that same set; with
# both local models all three reach R@5 0.98-1.00: docs/benchmarks.md).
# UNWEIGHTED counts every part as body text: the evaluation's baseline.
FIELD_WEIGHTS = [0.1, 0.12, 0.15, 0.2]
UNWEIGHTED = [0.1, 0.1, 0.1, 0.1]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ranked:
    """A memory found by similarity to another (remember's similar[]), with that similarity."""

    memory_id: UUID
    score: float


@dataclass(frozen=True)
class Hit:
    """A memory a ranker found, with what the steps after the fusion read of it: its text (cut as the
    search was asked) for the cross-language steps, and what its score's multipliers read. The rankers
    read these from the rows they already touch, so a search queries its candidates again only for the
    memories it returns."""

    memory_id: UUID
    text: str
    type: str
    created_at: datetime
    code_state: str | None


# A search's `text_chars`: the whole text, else its first N characters.
WHOLE_TEXT = None


def _text_sql(alias: str, chars: int | None) -> str:
    if chars is None:
        return f"{alias}.content"
    # 0: no text (an empty one, without reading a long text's out-of-line parts).
    return f"left({alias}.content, {int(chars)})" if chars > 0 else "''::text"


@dataclass(frozen=True)
class _Term:
    text: str  # a to_tsquery operand
    english: bool  # for the stemmed `english` vector, else the `simple` one
    df: float  # memories containing it (estimated for common words, counted up to COMMON_DF otherwise)
    idf: float


def _term_stats(texts: list[str], english_flags: list[bool]) -> list[_Term]:
    """Document frequency and BM25 idf of each term, over the whole table (every scope and status: a fine
    proxy for the scope's). Terms no memory contains are left out: they can only slow the search down."""
    sql = """
        WITH term AS (
            SELECT t.i, t.english, CASE WHEN t.english THEN to_tsquery('english', t.text)
                                        ELSE to_tsquery('simple', t.text) END AS q,
                   -- A Korean stem matched as a prefix ('정산금':*): the stem, lowercased as `simple` does.
                   CASE WHEN t.text LIKE '''%%'':*' THEN lower(substr(t.text, 2, length(t.text) - 4)) END AS stem
            FROM unnest(%(texts)s::text[], %(english_flags)s::bool[]) WITH ORDINALITY AS t(text, english, i)
        ),
        total AS MATERIALIZED (
            -- The planner's row estimate is exact enough for an idf; the capped count covers a table
            -- that was never analyzed (new installations, tests).
            -- At least 1: an empty store (a new installation) must not divide by zero.
            SELECT greatest(
                (SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass),
                (SELECT count(*) FROM (SELECT 1 FROM memory LIMIT %(cap)s) AS sample),
                1
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
        )
        SELECT term.i, df.n, ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5))
        FROM total, term
             LEFT JOIN stats ON stats.english = term.english,
             LATERAL (
                 SELECT coalesce(
                     CASE WHEN term.stem IS NULL
                         -- array_position: one lookup; scanning the array per term cost ~12 ms a query.
                         THEN stats.shares[array_position(stats.words, btrim(term.q::text, ''''))]
                         -- A prefix whose common completions make it common: counting them in the
                         -- index costs as much as the search (~20 ms per Korean stem at a million
                         -- memories). Below that the count is cheap, and exact.
                         ELSE nullif(greatest(
                             (SELECT sum(x.share) FROM unnest(stats.words, stats.shares) AS x(word, share)
                              WHERE starts_with(x.word, term.stem)),
                             %(cap)s / total.n), %(cap)s / total.n)
                     END * total.n,
                     CASE WHEN term.english
                         THEN (SELECT count(*) FROM (
                                  SELECT 1 FROM memory m WHERE m.content_tsv_en @@ term.q LIMIT %(cap)s) AS hits)
                         ELSE (SELECT count(*) FROM (
                                  SELECT 1 FROM memory m WHERE m.content_tsv @@ term.q LIMIT %(cap)s) AS hits)
                     END
                 ) AS n
                 -- A fence: pulled up into the outer query, this expression was planned once per use
                 -- (four times, ~0.6 ms of planning a search).
                 OFFSET 0
             ) AS df
        WHERE df.n > 0
        ORDER BY term.i
    """
    # Prepared: planning this statement took longer than running it (0.8 of 1.5 ms); its plan does not
    # depend on the words (they arrive as arrays), so one plan per pooled connection serves every search.
    rows = server_bound(sql, {"texts": texts, "english_flags": english_flags, "cap": COMMON_DF}, prepare=True)
    return [
        _Term(text=texts[i - 1], english=english_flags[i - 1], df=float(df), idf=float(idf))
        for i, df, idf in rows
    ]


def word_idfs(words: Sequence[str]) -> dict[str, float]:
    """BM25 idf of each word (in the `simple` vector) that some memory contains."""
    terms = [word_term(word) for word in words]
    if not terms:
        return {}
    by_term = {term.text: term.idf for term in _term_stats(terms, [False] * len(terms))}
    return {word: by_term[term] for word, term in zip(words, terms, strict=True) if term in by_term}


_VECTORS = ((False, "content_tsv", "simple"), (True, "content_tsv_en", "english"))


def _matches(terms: list[_Term], alias: str, name: str, params: dict) -> str:
    """SQL true when memory `alias` contains any of `terms`; puts the tsquery texts in `params`."""
    clauses = []
    for english, column, config in _VECTORS:
        texts = [term.text for term in terms if term.english == english]
        if texts:
            params[f"{name}_{config}"] = " | ".join(texts)
            clauses.append(f"{alias}.{column} @@ to_tsquery('{config}', %({name}_{config})s)")
    return "(" + " OR ".join(clauses) + ")"


def _plain_rank(alias: str, name: str, params: dict) -> str:
    """ts_rank of memory `alias` against the tsqueries `_matches` put in `params` under `name`."""
    return " + ".join(
        f"ts_rank(%(weights)s::float4[], {alias}.{column}, to_tsquery('{config}', %({name}_{config})s), %(norm)s)"
        for _english, column, config in _VECTORS
        if f"{name}_{config}" in params
    )


def lexical_search(
    *,
    query: str,
    scopes: Sequence[str],
    types: Sequence[str] | None,
    now: datetime,
    limit: int,
    field_weights: bool = True,
    history: bool = False,
) -> list[UUID]:
    """The ids of lexical_hits, best first."""
    hits = lexical_hits(
        query=query,
        scopes=scopes,
        types=types,
        now=now,
        limit=limit,
        field_weights=field_weights,
        text_chars=0,
        history=history,
    )
    return [hit.memory_id for hit in hits]


def lexical_hits(
    *,
    query: str,
    scopes: Sequence[str],
    types: Sequence[str] | None,
    now: datetime,
    limit: int,
    field_weights: bool = True,
    text_chars: int | None = WHOLE_TEXT,
    history: bool = False,
) -> list[Hit]:
    """Served memories of `scopes` matching any term of `query`, best first, with their text (cut at
    `text_chars` characters; 0: none). With `history`, those served at `now` (models.served_sql).

    Two vectors: the `simple` one (exact words, paths, Korean stems as prefixes) and the stemmed
    `english` one. Each query term is weighted by its inverse document frequency (BM25's idf), so a rare
    identifier outweighs a word every session summary uses. Only the order is returned: the fusion
    uses ranks, not scores.

    Bounded work at any size: every memory that contains a rare word of the query is a candidate, but a
    common word (in COMMON_DF memories or more) is looked for only among the RECENT_WINDOW newest
    memories of each scope. Ranking every match of a common word cost ~100 ms at a million memories
    (docs/benchmarks.md); older memories that share only common words with the query are still found by
    the vector search, an index scan over the whole history. Smaller stores, and queries with rare words
    only, are searched exhaustively. Two round trips: the first looks up the terms' frequencies, so that
    the second is planned knowing what it will match.
    """
    lexical = build_query(query)
    texts = list(lexical.simple_terms) + list(lexical.english_terms)
    if not texts:
        return []
    terms = _term_stats(texts, [False] * len(lexical.simple_terms) + [True] * len(lexical.english_terms))
    if not terms:
        return []
    rare = [term for term in terms if term.df < COMMON_DF]
    params: dict = {
        "norm": LEXICAL_RANK_NORMALIZATION,
        "weights": FIELD_WEIGHTS if field_weights else UNWEIGHTED,
        "now": now,
        "scopes": list(scopes),
        "types": list(types or []),
        "candidates": max(limit, LEXICAL_CANDIDATES),
        "window": RECENT_WINDOW,
        "limit": limit,
        "texts": [term.text for term in terms],
        "english_flags": [term.english for term in terms],
        "idfs": [term.idf for term in terms],
    }
    live = served_sql("m", history=history)
    if types:
        live += " AND m.type = ANY(%(types)s)"
    parts = []
    if rare:
        # `m.scope || ''`: the scope test runs on the rare words' rows, not through an index. Planned
        # with the scope index, PostgreSQL built a bitmap of every active memory of the scopes and
        # intersected it with the words' few hundred rows: 2.2 of a search's 7.3 ms at 100,000 memories.
        parts.append(f"""(
                SELECT m.id FROM memory m
                WHERE {live} AND m.scope || '' = ANY(%(scopes)s) AND {_matches(rare, "m", "rare", params)}
                ORDER BY {_plain_rank("m", "rare", params)} DESC, m.id DESC
                LIMIT %(candidates)s)""")
    if len(rare) < len(terms):
        match_any = _matches(terms, "r", "any", params)
        for index, scope in enumerate(scopes):
            params[f"scope_{index}"] = scope
            # An ordered scan of the scope's newest memories (index memory_active_recent), cut at the window.
            parts.append(f"""(
                SELECT r.id FROM (
                    SELECT m.id, m.content_tsv, m.content_tsv_en FROM memory m
                    WHERE {live} AND m.scope = %(scope_{index})s
                    ORDER BY m.created_at DESC
                    LIMIT %(window)s
                ) AS r
                WHERE {match_any}
                ORDER BY {_plain_rank("r", "any", params)} DESC, r.id DESC
                LIMIT %(candidates)s)""")
    union = "\n                UNION\n".join(parts)
    sql = f"""
        WITH weighted AS MATERIALIZED (
            SELECT t.english, t.idf, CASE WHEN t.english THEN to_tsquery('english', t.text)
                                          ELSE to_tsquery('simple', t.text) END AS q
            FROM unnest(%(texts)s::text[], %(english_flags)s::bool[], %(idfs)s::float8[]) AS t(text, english, idf)
        ),
        candidates AS MATERIALIZED (
            {union}
        )
        SELECT m.id, {_text_sql("m", text_chars)}, m.type, m.created_at, m.code_state,
               (SELECT sum(w.idf * ts_rank(%(weights)s::float4[],
                                           CASE WHEN w.english THEN m.content_tsv_en ELSE m.content_tsv END,
                                           w.q, %(norm)s))
                FROM weighted w) AS score
        FROM candidates c JOIN memory m ON m.id = c.id
        ORDER BY score DESC, m.id DESC
        LIMIT %(limit)s
    """
    # Not prepared: a generic plan would not know which words are rare, which is why the term statistics
    # come first.
    return [Hit(*row[:5]) for row in server_bound(sql, params, prepare=False)]


def trigram_similar(
    *,
    memory_id: UUID,
    content: str,
    scope: str,
    now: datetime,
    threshold: float,
    limit: int,
    time_budget_ms: int = TRIGRAM_SIMILAR_BUDGET_MS,
) -> list[Ranked]:
    """Active memories in `scope` whose text is trigram-similar to `content` (for remember's similar[]).

    Best effort within `time_budget_ms`: the trigram index looks up every trigram of the new memory, and
    in a big scope whose memories share much vocabulary that took 670 ms at a million memories. Past the
    budget the lookup is abandoned and returns nothing (the vector candidates remain).

    Planned for its values, never prepared: which path is cheaper depends on the scope's size and on how
    common the new memory's trigrams are. A small scope is read through its btree index and each of its
    rows compared; for a big scope whose words are rare the trigram index is the cheaper way, and the
    planner can take it when it sees the values. A prepared statement's generic plan, made while the
    table was small, was a sequential scan that tests `%` before the scope, so every memory of every
    scope was compared, and it stayed cached until the table was next analyzed: under load (bench/load,
    16 clients, 2026-12-03), 12 and 21 ms a statement at 600 and 1,000 memories, against 6 and 10 ms
    planned per call.
    """
    sql = f"""
        SELECT m.id, similarity(m.content, %(content)s) AS sim
        FROM memory m
        WHERE {served_sql("m")}
          AND m.scope = %(scope)s
          AND m.type <> 'temporary'
          AND m.id <> %(id)s
          AND m.content %% %(content)s
        ORDER BY sim DESC, m.created_at DESC
        LIMIT %(limit)s
    """
    params = {
        "content": content,
        "scope": scope,
        "id": memory_id,
        "now": now,
        "limit": limit,
    }
    try:
        # A transaction (a savepoint inside the caller's) scopes the timeout; a cancelled statement rolls
        # the savepoint back, and with it the setting.
        with transaction.atomic(), connection.cursor() as cursor:
            # `%` matches at pg_trgm.similarity_threshold (0.3 by default); set to the threshold asked for,
            # the trigram index itself drops the weaker matches instead of handing them to a similarity
            # filter: the same rows, in about two thirds of the time at 100,000 memories (2026-12-02).
            # `%` is then the whole test: no `similarity(...) >= threshold` beside it, since each
            # similarity() call derives both texts' trigrams again.
            cursor.execute(
                "SELECT current_setting('statement_timeout'), set_config('statement_timeout', %s, true), "
                "coalesce(current_setting('pg_trgm.similarity_threshold', true), %s), "
                "set_config('pg_trgm.similarity_threshold', %s, true)",
                [f"{int(time_budget_ms)}ms", PG_TRGM_DEFAULT_THRESHOLD, str(threshold)],
            )
            previous_timeout, _, previous_threshold, _ = cursor.fetchone()
            rows = server_bound(sql, params, prepare=False)
            # Inside a caller's transaction the savepoint's release would keep both settings: restore.
            cursor.execute(
                "SELECT set_config('statement_timeout', %s, true), "
                "set_config('pg_trgm.similarity_threshold', %s, true)",
                [previous_timeout, previous_threshold],
            )
    except OperationalError as exc:
        if not isinstance(exc.__cause__, QueryCanceled):
            raise
        log.info("similar-memory trigram lookup passed its %d ms budget; skipped", time_budget_ms)
        return []
    return [Ranked(memory_id=row[0], score=float(row[1])) for row in rows]


def _nearest(
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
    nearest = _nearest(
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
        SELECT n.memory_id, {_text_sql("m", text_chars)}, m.type, m.created_at, m.code_state, n.distance
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
    nearest = _nearest(
        vector=vector, model=model, scopes=[scope], conditions=conditions, params=params, limit=limit
    )
    return [
        Ranked(memory_id=mid, score=1.0 - distance) for mid, distance in nearest if distance <= max_distance
    ]


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
        nearest = _nearest(
            vector=values, model=model, scopes=[scope], conditions=conditions, params={"live": live}, limit=5
        )
        found += [mid for mid, distance in nearest if distance <= max_distance and mid not in found]
    return found


@dataclass(frozen=True)
class DocLink:
    """A `relates_to` edge between two served doc pages of one scope (chunk edges folded to pages)."""

    source: str
    relation: str
    target: str
    source_title: str | None
    target_title: str | None


def doc_links(*, scope: str, paths: Sequence[str], now: datetime) -> list[DocLink]:
    """The `relates_to` links from or to the pages `paths` of `scope`, between served chunks only (a
    retired page links nowhere)."""
    if not paths:
        return []
    sql = f"""
        SELECT DISTINCT s.attrs->>'path', substr(e.relation, %(cut)s), d.attrs->>'path',
               s.attrs->>'title', d.attrs->>'title'
        FROM memory_edge e
             JOIN memory s ON s.id = e.src_id
             JOIN memory d ON d.id = e.dst_id
        WHERE e.relation LIKE %(prefix)s
          AND s.scope = %(scope)s AND d.scope = %(scope)s
          AND {served_sql("s")} AND {served_sql("d")}
          AND (s.attrs->>'path' = ANY(%(paths)s) OR d.attrs->>'path' = ANY(%(paths)s))
        ORDER BY 1, 2, 3
    """
    params = {
        "cut": len(DOC_RELATION_PREFIX) + 1,
        "prefix": DOC_RELATION_PREFIX + "%",
        "scope": scope,
        "paths": list(paths),
        "now": now,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [DocLink(*row) for row in cursor.fetchall()]


def candidate_texts(ids: Sequence[UUID], *, chars: int | None) -> list[tuple[UUID, str, str]]:
    """(id, text, type) of each memory; the text cut at `chars` characters unless None."""
    return server_bound(
        f"SELECT m.id, {_text_sql('m', chars)}, m.type FROM memory m WHERE m.id = ANY(%s::uuid[])",
        [list(ids)],
        prepare=True,
    )


def memories_by_id(ids: Sequence[UUID]) -> dict[UUID, Memory]:
    """The memories with these ids, in any status, without the columns no view shows (a prepared
    statement: every recall and remember reads the memories it returns this way)."""
    rows = model_rows(Memory, "WHERE id = ANY(%s::uuid[])", [list(ids)], defer=NOT_IN_VIEWS)
    return {memory.id: memory for memory in rows}


@dataclass(frozen=True)
class ContextSections:
    """get_context's fixed sections, each newest first."""

    preferences: list[Memory]
    handoff: Memory | None
    recent: list[Memory]
    rules: list[Memory]
    guidelines: Memory | None = None


def context_sections(
    *,
    scope: str,
    scopes: Sequence[str],
    now: datetime,
    limit: int,
    recent: int,
    rules: bool,
    history: bool = False,
) -> ContextSections:
    """The served preferences of `scopes`, the open (not yet resumed) handoff, the `recent` newest
    session summaries and, with `rules`, the project's guidelines and rules (doc sections apart) of
    `scope`, in one statement: each section is an ordered index scan cut at its limit, as its own query
    was. With `history`, the sections as they were served at `now` (a handoff resumed after it was open).

    Preferences are read per scope and merged here: `scope IN (...)` has no ordered index path, so one
    scan over both scopes sorts every preference (124 ms at a million memories).
    """
    served = served_sql("m", history=history)
    newest = "ORDER BY m.created_at DESC, m.id DESC"
    params: dict = {
        "now": now,
        "scope": scope,
        "handoff": Jsonb({"kind": HANDOFF_KIND}),
        "doc": Jsonb({"kind": DOC_KIND}),
        "guidelines": Jsonb({"kind": GUIDELINES_KIND}),
    }
    open_handoff = (
        "(NOT m.attrs ? 'resumed_at' OR (m.attrs->>'resumed_at')::timestamptz > %(now)s)"
        if history
        else "NOT m.attrs ? 'resumed_at'"
    )
    parts = []
    for index, one_scope in enumerate(scopes):
        params[f"scope_{index}"] = one_scope
        parts.append(
            f"SELECT m.id FROM memory m WHERE {served} AND m.type = '{MemoryType.PREFERENCE}' "
            f"AND m.scope = %(scope_{index})s {newest} LIMIT {int(limit)}"
        )
    parts.append(
        f"SELECT m.id FROM memory m WHERE {served} AND m.type = '{MemoryType.TEMPORARY}' AND m.scope = %(scope)s "
        f"AND m.attrs @> %(handoff)s AND {open_handoff} "
        f"{newest} LIMIT 1"
    )
    parts.append(
        f"SELECT m.id FROM memory m WHERE {served} AND m.type = '{MemoryType.EPISODIC}' AND m.scope = %(scope)s "
        f"{newest} LIMIT {int(recent)}"
    )
    if rules:
        parts.append(
            f"SELECT m.id FROM memory m WHERE {served} AND m.type = '{MemoryType.PROJECT}' AND m.scope = %(scope)s "
            f"AND NOT m.attrs @> %(doc)s AND NOT m.attrs @> %(guidelines)s {newest} LIMIT {int(limit)}"
        )
        parts.append(
            f"SELECT m.id FROM memory m WHERE {served} AND m.type = '{MemoryType.PROJECT}' AND m.scope = %(scope)s "
            f"AND m.attrs @> %(guidelines)s {newest} LIMIT 1"
        )
    union = " UNION ALL ".join(f"({part})" for part in parts)
    rows = model_rows(Memory, f"WHERE id IN ({union})", params, defer=NOT_IN_VIEWS)
    rows.sort(key=lambda memory: (memory.created_at, memory.id), reverse=True)
    of_type = {kind: [memory for memory in rows if memory.type == kind] for kind in MemoryType.values}
    handoffs = of_type[MemoryType.TEMPORARY]
    guidelines = [m for m in of_type[MemoryType.PROJECT] if (m.attrs or {}).get("kind") == GUIDELINES_KIND]
    return ContextSections(
        preferences=of_type[MemoryType.PREFERENCE][:limit],
        handoff=handoffs[0] if handoffs else None,
        recent=of_type[MemoryType.EPISODIC],
        rules=[m for m in of_type[MemoryType.PROJECT] if m not in guidelines],
        guidelines=guidelines[0] if guidelines else None,
    )
