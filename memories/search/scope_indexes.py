"""One HNSW graph per (model, scope), built in the background and searched once it is valid.

Every read searches two scopes, the user's and one project's. In the model-wide graph
(embedding_store.ensure_model_index) such a search walks past other scopes' vectors until enough of its
own pass the filter: at 100,000 memories it passes 600-700 rows for a small project, 5-6.5 ms a
statement, against 1.4 ms for the largest (docs/benchmarks.md). A graph per scope holds only that
scope's vectors.

Building a partial index reads the whole table, so it never happens on a request: creating one when a
scope's first vector was written stalled that remember for 1.7-2.4 s at 100,000 memories while every
other writer waited. The job here (run by the worker after each embedding backfill, and by
`manage.py reindex`) builds them with CREATE INDEX CONCURRENTLY, which lets writers go on. A search uses
the per-scope graphs only when every scope it reads has a valid one (`covers`); otherwise it walks the
model-wide graph as before, which stays. A search of one small unindexed scope through the model-wide
graph would be far slower than today's walk, which finds the user's scope's rows early.

Correctness never depends on the indexes: the per-scope statement names each scope in its WHERE clause,
so whichever plan runs it, it returns memories of those scopes only. An index changes how fast, and, as
any approximate nearest-neighbour search, which of nearly equal neighbours it finds first.
"""

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.backends.utils import CursorWrapper

from kenfold.db_functions import one_at_a_time, sql_literal
from memories.search.embedding_store import (
    HNSW_INDEX_PREFIX,
    hnsw_index_sql,
    model_index_name,
    stored_dimensions,
)

log = logging.getLogger(__name__)

# Below this many vectors of a model the model-wide walk is cheap (its cost follows the rows it passes,
# and a small table has few), and a second graph per scope would only double the writes' index work.
MIN_MODEL_VECTORS = 20_000
# Per model, the largest scopes first. Every partial index is weighed when a statement on the table is
# planned (a primary-key lookup: 0.28 ms with 200 of them, 0.03 ms with none; docs/benchmarks.md); the
# searches and the vector writes are prepared statements, planned once per connection, other statements
# are not.
MAX_SCOPES = 100
# How long a process trusts its list of valid indexes. A new index is used at most this long after it is
# ready; a dropped one makes the statement slower, never wrong (see the module's docstring).
REFRESH_S = 30.0
# Graph builds get this much memory (the session's setting only): a graph that does not fit is built on
# disk, which pgvector warns "will take significantly more time". The largest scope of the 100,000-memory
# benchmark (18,275 vectors of 512 dimensions, about 2.6 kB each in the graph) needs about a fifth of it.
BUILD_MAINTENANCE_WORK_MEM = "256MB"
# No build starts after this long in one run: the worker's job times out at 600 s (Q_CLUSTER), and a
# build it cut off would be left invalid. The next run goes on where this one stopped.
BUILD_BUDGET_S = 240.0
_LOCK_KEY = "kenfold.scope_indexes"

_valid: frozenset[str] = frozenset()
_valid_at = float("-inf")
_valid_lock = threading.Lock()


def index_name(*, model: str, dimensions: int, scope: str) -> str:
    """The per-scope index's name: deterministic, so a search can tell whether its scopes have one, and
    under PostgreSQL's 63-byte limit whatever the scope (md5 prefixes of the model and the scope)."""
    scope_hash = hashlib.md5(scope.encode()).hexdigest()[:16]
    return f"{model_index_name(model, int(dimensions))}_s{scope_hash}"


def covers(*, model: str, dimensions: int, scopes: Sequence[str]) -> bool:
    """Whether every scope of `scopes` has a valid HNSW index of its own for the model."""
    if not scopes:
        return False
    valid = _valid_indexes()
    return all(index_name(model=model, dimensions=dimensions, scope=scope) in valid for scope in scopes)


def forget_cached() -> None:
    """Drop this process's list of valid indexes, so the next search reads the catalog again."""
    global _valid_at
    with _valid_lock:
        _valid_at = float("-inf")


def _valid_indexes() -> frozenset[str]:
    global _valid, _valid_at
    now = time.monotonic()
    with _valid_lock:
        if now - _valid_at < REFRESH_S:
            return _valid
    names = frozenset(_catalog_indexes(valid_only=True))
    with _valid_lock:
        _valid, _valid_at = names, now
    return names


def _catalog_indexes(*, valid_only: bool) -> list[str]:
    """Names of the per-scope indexes on memory_embedding (only those ready to be searched, or all)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = 'memory_embedding'::regclass AND c.relname LIKE %s
              AND (NOT %s OR (i.indisvalid AND i.indisready))
            """,
            [HNSW_INDEX_PREFIX + "%\\_s%", valid_only],
        )
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class BuildReport:
    built: int
    present: int  # valid already
    dropped: int  # invalid leftovers of interrupted builds, dropped and built again
    left: int = 0  # not built: the time budget ran out (the next run goes on)
    busy: bool = False  # another process was building: nothing was done


def build_scope_indexes(
    *,
    min_model_vectors: int | None = None,
    max_scopes: int = MAX_SCOPES,
    budget_seconds: float = BUILD_BUDGET_S,
    progress: Callable[[int, int], None] | None = None,
) -> BuildReport:
    """Build the missing per-scope HNSW indexes of every model with at least `min_model_vectors` vectors
    (default MIN_MODEL_VECTORS), for its `max_scopes` largest scopes, without blocking writers (CREATE
    INDEX CONCURRENTLY).

    No build starts after `budget_seconds`: the worker's job has a timeout, and a build cut off by it
    leaves an invalid index. One builder at a time: a second caller returns at once with `busy`. An
    index left invalid by an interrupted build is dropped and built again. Building must run outside a
    transaction (CONCURRENTLY cannot run inside one); with nothing to build it may run anywhere.
    """
    deadline = time.monotonic() + budget_seconds
    minimum = MIN_MODEL_VECTORS if min_model_vectors is None else min_model_vectors
    wanted = _wanted(min_model_vectors=minimum, max_scopes=max_scopes)
    valid = set(_catalog_indexes(valid_only=True))
    missing = [item for item in wanted if item[3] not in valid]
    if not missing:
        return BuildReport(built=0, present=len(wanted), dropped=0)
    if connection.in_atomic_block:
        raise RuntimeError("per-scope indexes are built outside a transaction (CREATE INDEX CONCURRENTLY)")
    with one_at_a_time(_LOCK_KEY) as alone, connection.cursor() as cursor:
        if not alone:
            return BuildReport(built=0, present=len(wanted) - len(missing), dropped=0, busy=True)
        try:
            built, dropped = _build(cursor, missing, deadline=deadline, progress=progress)
        finally:
            forget_cached()
    log.info(
        "built per-scope vector indexes",
        extra={"built": built, "dropped": dropped, "left": len(missing) - built},
    )
    return BuildReport(
        built=built, present=len(wanted) - len(missing), dropped=dropped, left=len(missing) - built
    )


def _wanted(*, min_model_vectors: int, max_scopes: int) -> list[tuple[str, int, str, str]]:
    """(model, dimensions, scope, index name) of every per-scope index there should be."""
    wanted: list[tuple[str, int, str, str]] = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT model, count(*) FROM memory_embedding GROUP BY model ORDER BY model")
        for model, vectors in cursor.fetchall():
            if vectors < min_model_vectors:
                continue
            dimensions = stored_dimensions(model)
            if dimensions is None:  # its vectors were deleted since the count
                continue
            cursor.execute(
                "SELECT scope FROM memory_embedding WHERE model = %s GROUP BY scope "
                "ORDER BY count(*) DESC, scope LIMIT %s",
                [model, max_scopes],
            )
            wanted += [
                (model, dimensions, scope, index_name(model=model, dimensions=dimensions, scope=scope))
                for (scope,) in cursor.fetchall()
            ]
    return wanted


def _build(
    cursor: CursorWrapper,
    missing: list[tuple[str, int, str, str]],
    *,
    deadline: float,
    progress: Callable[[int, int], None] | None,
) -> tuple[int, int]:
    """Build the `missing` indexes in order until the deadline; (built, invalid ones dropped first)."""
    existing = set(_catalog_indexes(valid_only=False))
    built = dropped = 0
    cursor.execute(f"SET maintenance_work_mem = '{BUILD_MAINTENANCE_WORK_MEM}'")
    try:
        for model, dimensions, scope, name in missing:
            if time.monotonic() >= deadline:
                break
            if name in existing:
                cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                dropped += 1
            started = time.monotonic()
            predicate = f"model = {sql_literal(model)} AND scope = {sql_literal(scope)}"
            cursor.execute(
                hnsw_index_sql(name=name, dimensions=dimensions, predicate=predicate, concurrently=True)
            )
            built += 1
            log.debug(
                "built a per-scope vector index",
                extra={"model": model, "scope": scope, "seconds": round(time.monotonic() - started, 2)},
            )
            if progress is not None:
                progress(built, len(missing))
    finally:
        cursor.execute("RESET maintenance_work_mem")
    return built, dropped
