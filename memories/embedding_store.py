"""Writing memory vectors: an HNSW index per model and scope, guarded writes, and the backfill.

A vector is written only if the memory still has the content that was embedded and is still live, so
a slow embedding can never put an old vector back over text that was redacted or replaced meanwhile.
"""

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from uuid import UUID

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.functions import MD5

from kenfold.db_functions import PgVector, server_bound
from memories.embeddings import Embedder, EmbeddingError
from memories.models import LIVE_STATUSES, Memory, MemoryEmbedding

log = logging.getLogger(__name__)

REMEMBER_EMBED_TIMEOUT = 10.0
BACKFILL_TIMEOUT = 120.0
DEFAULT_BATCH = 64
# (model, dimensions, scope) triples whose index this process has made sure of.
_indexed: set[tuple[str, int, str]] = set()
# One lock for every index creation: a creation holds the table's SHARE lock until its transaction ends, and
# two transactions that each hold it and then write a vector row would wait for each other.
_INDEX_LOCK = "memory_embedding scope indexes"


def _index_name(model: str, dimensions: int, scope: str) -> str:
    model_hash = hashlib.md5(model.encode()).hexdigest()[:10]
    scope_hash = hashlib.md5(scope.encode()).hexdigest()[:12]
    return f"memory_embedding_hnsw_{model_hash}_{scope_hash}_{dimensions}"


def ensure_scope_index(*, model: str, dimensions: int, scope: str) -> None:
    """Create the HNSW index of one model's vectors in one scope, the first time they are written.

    Every vector search reads named scopes (the user's and one project's), and an index over all of a
    model's vectors had to pass over the other scopes' vectors to find enough of these: at 100,000
    memories a search in a project of 1,400-2,000 memories took up to 6.5 ms, against 1.4 ms in the largest
    (docs/benchmarks.md). Each scope's own graph holds only its vectors. A scope without its index yet (a
    memory moved into it) is still searched, exactly, without a graph.

    Call it before this transaction writes vector rows: the creation takes the table's SHARE lock until
    the transaction ends, and a transaction that already wrote rows could wait for another that waits for
    it. Creating the index of a new scope reads the whole table once, while other writers of vectors wait.
    """
    if (model, dimensions, scope) in _indexed:
        return
    name = _index_name(model, dimensions, scope)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_class WHERE relname = %s AND relkind = 'i'", [name])
        missing = cursor.fetchone() is None
    if missing:
        if connection.in_atomic_block:
            with connection.cursor() as cursor:
                # CREATE INDEX refuses to run while deferred foreign-key checks of this transaction are
                # pending; checking them now is harmless.
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # Several processes may see a new scope at once; the lock makes the loser find the index made. The
        # lock and the creation share one transaction: in autocommit the lock would end with its statement.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [_INDEX_LOCK])
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON memory_embedding "
                f"USING hnsw ((embedding::vector({int(dimensions)})) vector_cosine_ops) "
                "WHERE model = %s AND scope = %s",
                [model, scope],
            )
    # Remembered once it is committed: an index created in a transaction that rolls back is gone again.
    transaction.on_commit(lambda: _indexed.add((model, dimensions, scope)))


def ensure_model_index(*, model: str, dimensions: int) -> None:
    """Create the index of every scope that has vectors of `model` (after a bulk load, or an upgrade)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT scope FROM memory_embedding WHERE model = %s AND vector_dims(embedding) = %s",
            [model, dimensions],
        )
        scopes = sorted(row[0] for row in cursor.fetchall())
    for scope in scopes:
        ensure_scope_index(model=model, dimensions=dimensions, scope=scope)


def ensure_indexes_for(*, memories: Sequence[UUID], models: Sequence[tuple[str, int]]) -> None:
    """Make sure of the scope index of each memory's scope for each (model, dimensions), before the vectors
    are written (see ensure_scope_index)."""
    scopes = set(Memory.objects.filter(id__in=list(memories)).values_list("scope", flat=True).distinct())
    for model, dimensions in models:
        for scope in sorted(scopes):
            ensure_scope_index(model=model, dimensions=dimensions, scope=scope)


def store_vectors(
    *, model: str, items: Sequence[tuple[UUID, str, list[float]]], indexed: bool = False
) -> int:
    """Write (memory id, embedded content, vector) triples; returns how many were written. `indexed`: the
    caller already made sure of the memories' scope indexes (ensure_indexes_for)."""
    written = 0
    if not indexed and items:
        ensure_indexes_for(
            memories=[memory_id for memory_id, _content, _vector in items],
            models=sorted({(model, len(vector)) for _id, _content, vector in items}),
        )
    for memory_id, content, vector in items:
        digest = hashlib.md5(content.encode()).hexdigest()
        inserted = server_bound(
            """
            INSERT INTO memory_embedding (memory_id, model, embedding, content_md5)
            SELECT m.id, %(model)s, %(vector)b::vector, %(digest)s
            FROM memory m
            WHERE m.id = %(id)s AND md5(m.content) = %(digest)s AND m.status = ANY(%(live)s)
            ON CONFLICT (memory_id, model) DO UPDATE
                SET embedding = EXCLUDED.embedding, content_md5 = EXCLUDED.content_md5, created_at = now()
            RETURNING memory_id
            """,
            {
                "model": model,
                "vector": PgVector(vector),
                "digest": digest,
                "id": memory_id,
                "live": list(LIVE_STATUSES),
            },
            prepare=True,
        )
        written += len(inserted)
    return written


def embed_now(*, embedders: Sequence[Embedder], memory: Memory) -> list[list[float] | None]:
    """Embed one memory with each model and store the vectors, in one transaction (one commit for all
    models, not one each); per model its vector, or None when that provider failed (logged with the
    memory id; the backfill retries it)."""
    vectors: list[list[float] | None] = []
    for embedder in embedders:
        try:
            vectors.append(embedder.embed([memory.content], timeout=REMEMBER_EMBED_TIMEOUT)[0])
        except EmbeddingError:
            log.warning(
                "embedding a memory failed; the backfill retries it",
                extra={"memory_id": str(memory.id), "model": embedder.name},
            )
            vectors.append(None)
    # Before the transaction that writes the vectors: the first model's rows written, the second model's
    # index could not be created without the risk ensure_scope_index describes.
    for embedder, vector in zip(embedders, vectors, strict=True):
        if vector is not None:
            ensure_scope_index(model=embedder.name, dimensions=len(vector), scope=memory.scope)
    # A savepoint when a caller's transaction is open: a failed write must not leave it unusable.
    with transaction.atomic():
        for embedder, vector in zip(embedders, vectors, strict=True):
            if vector is not None:
                store_vectors(model=embedder.name, items=[(memory.id, memory.content, vector)], indexed=True)
    return vectors


def _lacking_vector(model: str) -> QuerySet[Memory]:
    """Live memories without a vector of ``model`` for their current content."""
    return (
        Memory.objects.filter(status__in=LIVE_STATUSES)
        .annotate(md5_content=MD5("content"))
        .exclude(
            Exists(
                MemoryEmbedding.objects.filter(
                    memory=OuterRef("pk"), model=model, content_md5=OuterRef("md5_content")
                )
            )
        )
    )


@dataclass(frozen=True)
class BackfillReport:
    embedded: int
    failed: int
    remaining: int


def backfill(
    *,
    embedder: Embedder,
    batch: int = DEFAULT_BATCH,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BackfillReport:
    """Embed every live memory lacking a current vector of the embedder's model, in id order.

    A failed batch is retried item by item, so one input the provider rejects does not block the rest;
    items that still fail are skipped (and retried at the next run). Only a total failure raises.
    """
    batch = max(16, min(batch, 256))
    pending = _lacking_vector(embedder.name).order_by("id")
    total = pending.count() if limit is None else min(limit, pending.count())
    embedded = failed = attempted = 0
    last_id: UUID | None = None
    while attempted < total:
        page = pending if last_id is None else pending.filter(id__gt=last_id)
        rows = list(page.only("id", "content")[: min(batch, total - attempted)])
        if not rows:
            break
        last_id = rows[-1].id
        attempted += len(rows)
        vectors = _embed_batch(embedder, rows)
        if vectors is None:
            # The provider refused the whole batch: try each input alone.
            vectors = [_embed_one(embedder, row) for row in rows]
        if all(v is None for v in vectors) and embedded == 0:
            raise EmbeddingError(f"the embedding provider {embedder.name!r} failed for every memory tried")
        items = [(row.id, row.content, v) for row, v in zip(rows, vectors, strict=True) if v is not None]
        failed += len(rows) - len(items)
        embedded += store_vectors(model=embedder.name, items=items)
        if progress is not None:
            progress(attempted, total)
    remaining = pending.count()
    return BackfillReport(embedded=embedded, failed=failed, remaining=remaining)


def _embed_batch(embedder: Embedder, rows: list[Memory]) -> list[list[float] | None] | None:
    try:
        return list(embedder.embed([row.content for row in rows], timeout=BACKFILL_TIMEOUT))
    except EmbeddingError:
        log.warning("embedding a backfill batch failed; retrying one by one", exc_info=True)
        return None


def _embed_one(embedder: Embedder, row: Memory) -> list[float] | None:
    try:
        return embedder.embed([row.content], timeout=BACKFILL_TIMEOUT)[0]
    except EmbeddingError:
        log.warning(
            "embedding a memory failed; it is retried at the next backfill", extra={"memory_id": str(row.id)}
        )
        return None
