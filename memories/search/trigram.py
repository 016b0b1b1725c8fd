"""Trigram similarity (pg_trgm): the memories whose text resembles a new one's, for remember's similar[]."""

import logging
from datetime import datetime
from uuid import UUID

from django.db import OperationalError, connection, transaction
from psycopg.errors import QueryCanceled

from kenfold.db_functions import server_bound
from memories.models import served_sql
from memories.search.hits import Ranked

TRIGRAM_SIMILAR_BUDGET_MS = 100

# pg_trgm's own default, for a session that has not loaded the extension's library yet.
PG_TRGM_DEFAULT_THRESHOLD = "0.3"
log = logging.getLogger(__name__)


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
