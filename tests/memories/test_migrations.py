"""Upgrades keep stored data: a migration that reshapes a table is run over rows written before it."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_FILTER_COPIES = [("memories", "0007_active_recent_index")]


def migrate(targets: list[tuple[str, str]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def latest() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_vector_rows_written_before_0008_get_their_memorys_filters_and_keep_their_index() -> None:
    migrate(BEFORE_FILTER_COPIES)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO memory (type, scope, content, status, expires_at, source_agent)
                VALUES ('temporary', 'project:github.com/acme/pay', 'Deploy freeze until Friday.', 'superseded',
                        '2030-01-01T00:00:00Z', 'codex'),
                       ('semantic', 'user', 'I prefer tabs.', 'active', NULL, 'codex')
                RETURNING id
                """
            )
            ids = [row[0] for row in cursor.fetchall()]
            for memory_id in ids:
                cursor.execute(
                    "INSERT INTO memory_embedding (memory_id, model, embedding, content_md5) "
                    "VALUES (%s, 'old-model', '[1,0,0]', 'x')",
                    [memory_id],
                )
            cursor.execute(
                "CREATE INDEX memory_embedding_hnsw_test_3 ON memory_embedding "
                "USING hnsw ((embedding::vector(3)) vector_cosine_ops) WHERE model = 'old-model'"
            )
        migrate(latest())
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT m.content, e.scope, e.status, e.type, e.expires_at IS NOT NULL "
                "FROM memory_embedding e JOIN memory m ON m.id = e.memory_id ORDER BY m.content"
            )
            assert cursor.fetchall() == [
                (
                    "Deploy freeze until Friday.",
                    "project:github.com/acme/pay",
                    "superseded",
                    "temporary",
                    True,
                ),
                ("I prefer tabs.", "user", "active", "semantic", False),
            ]
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_embedding_hnsw_test_3'")
            assert cursor.fetchone() is None, "0013 replaced the model-wide index"
        assert _old_model_indexes() == {
            "user": "model = 'old-model'",
            "project:github.com/acme/pay": "model = 'old-model'",
        }, "the model's vectors are indexed (0008 rebuilt the index, 0013 split it per scope)"
    finally:
        migrate(latest())


def _old_model_indexes() -> dict[str, str]:
    """The HNSW indexes of 'old-model' vectors: the scope in the predicate (or '*') -> the model test."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_embedding' "
            "AND indexdef LIKE '%USING hnsw%' AND indexdef LIKE '%old-model%'"
        )
        definitions = [row[0] for row in cursor.fetchall()]
    found = {}
    for definition in definitions:
        scope = definition.split("scope = '", 1)[1].split("'", 1)[0] if "scope = '" in definition else "*"
        found[scope] = "model = 'old-model'" if "model = 'old-model'" in definition else definition
    return found


@pytest.mark.django_db(transaction=True)
def test_0013_indexes_vectors_per_scope_and_back() -> None:
    """Upgrading splits a model-wide HNSW index into one per scope; downgrading puts the model-wide one
    back. The vectors stay as they were, and a search finds them either way."""
    migrate([("memories", "0012_merge_docs_delta")])
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO memory (type, scope, content, status, source_agent)
                VALUES ('semantic', 'project:github.com/acme/pay', 'Refunds go through the ledger.', 'active',
                        'codex'),
                       ('semantic', 'user', 'I prefer tabs.', 'active', 'codex')
                RETURNING id
                """
            )
            ids = [row[0] for row in cursor.fetchall()]
            for memory_id, vector in zip(ids, ("[1,0,0]", "[0,1,0]"), strict=True):
                cursor.execute(
                    "INSERT INTO memory_embedding (memory_id, model, embedding, content_md5) "
                    "VALUES (%s, 'old-model', %s, 'x')",
                    [memory_id, vector],
                )
            cursor.execute(
                "CREATE INDEX memory_embedding_hnsw_test_3 ON memory_embedding "
                "USING hnsw ((embedding::vector(3)) vector_cosine_ops) WHERE model = 'old-model'"
            )
        migrate([("memories", "0013_embedding_scope_indexes")])
        assert _old_model_indexes() == {
            "user": "model = 'old-model'",
            "project:github.com/acme/pay": "model = 'old-model'",
        }
        migrate([("memories", "0012_merge_docs_delta")])
        assert _old_model_indexes() == {"*": "model = 'old-model'"}
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memory_embedding WHERE model = 'old-model'")
            assert cursor.fetchone() == (2,)
    finally:
        migrate(latest())
