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
            (definition,) = cursor.fetchone()
            assert "hnsw" in definition and "old-model" in definition, "the model's index was rebuilt"
    finally:
        migrate(latest())
