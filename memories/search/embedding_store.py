"""Writing memory vectors: per-model HNSW indexes, guarded writes, and the backfill.

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

from kenfold.db_functions import PgVector, server_bound, sql_literal
from memories.models import LIVE_STATUSES, Memory, MemoryEmbedding
from memories.providers.embeddings import Embedder, EmbeddingError

log = logging.getLogger(__name__)

REMEMBER_EMBED_TIMEOUT = 10.0
BACKFILL_TIMEOUT = 120.0
DEFAULT_BATCH = 64
_indexed: set[tuple[str, int]] = set()


# Every HNSW index on memory_embedding is named from this prefix (model-wide ones, and the per-scope ones
# of memories.search.scope_indexes after them).
HNSW_INDEX_PREFIX = "memory_embedding_hnsw_"


def model_index_name(model: str, dimensions: int) -> str:
    return f"{HNSW_INDEX_PREFIX}{hashlib.md5(model.encode()).hexdigest()[:12]}_{dimensions}"


def hnsw_index_sql(*, name: str, dimensions: int, predicate: str, concurrently: bool = False) -> str:
    """CREATE INDEX for an HNSW graph of the vectors meeting `predicate` (SQL). Its expression,
    `embedding::vector(D)`, is the one memories.search.fulltext orders by: any other and no search could use it."""
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {name} ON memory_embedding "
        f"USING hnsw ((embedding::vector({int(dimensions)})) vector_cosine_ops) WHERE {predicate}"
    )


def stored_dimensions(model: str) -> int | None:
    """The dimensions of the model's stored vectors, or None when it has none."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT vector_dims(embedding) FROM memory_embedding WHERE model = %s LIMIT 1", [model]
        )
        row = cursor.fetchone()
    return row[0] if row else None


def ensure_model_index(*, model: str, dimensions: int) -> None:
    """Create the model's partial HNSW index the first time the model is used (once per process)."""
    if (model, dimensions) in _indexed:
        return
    name = model_index_name(model, dimensions)
    if connection.in_atomic_block:
        with connection.cursor() as cursor:
            # CREATE INDEX refuses to run while deferred foreign-key checks of this transaction are
            # pending; checking them now is harmless.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    # Several processes may see a new model at once; the lock makes the loser find the index made. The lock
    # and the creation share one transaction: in autocommit the lock would end with its own statement.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])
        cursor.execute(
            hnsw_index_sql(name=name, dimensions=dimensions, predicate=f"model = {sql_literal(model)}")
        )
    _indexed.add((model, dimensions))


def store_vectors(*, model: str, items: Sequence[tuple[UUID, str, list[float]]]) -> int:
    """Write (memory id, embedded content, vector) triples; returns how many were written."""
    written = 0
    for memory_id, content, vector in items:
        ensure_model_index(model=model, dimensions=len(vector))
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
    # A savepoint when a caller's transaction is open: a failed write must not leave it unusable.
    with transaction.atomic():
        for embedder, vector in zip(embedders, vectors, strict=True):
            if vector is not None:
                store_vectors(model=embedder.name, items=[(memory.id, memory.content, vector)])
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
