"""The lexical ranker's SQL (spec §1.7): PostgreSQL full-text search over the terms that
memories.search.lexical makes of a query, OR-ed: a natural-language question should match memories that
share some of its words, not only those that contain all of them. Reads only; callers shape the results.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from kenfold.db_functions import server_bound
from memories.models import served_sql
from memories.search.hits import WHOLE_TEXT, Hit, text_sql
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
        SELECT m.id, {text_sql("m", text_chars)}, m.type, m.created_at, m.code_state,
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
