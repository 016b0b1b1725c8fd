"""Upgrades keep stored data: a migration that reshapes a table is run over rows written before it."""

import importlib
import uuid

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


BEFORE_INLINE_VECTORS = [("memories", "0012_merge_docs_delta")]
INLINE_VECTORS = importlib.import_module("memories.migrations.0013_embedding_inline_storage")


def _vectors_out_of_line(count: int) -> list[uuid.UUID]:
    """`count` memories with a 512-dimension vector each, written as 0012 stores them (out of line)."""
    ids = []
    with connection.cursor() as cursor:
        for n in range(count):
            cursor.execute(
                "INSERT INTO memory (type, scope, content, source_agent) VALUES ('semantic', 'user', %s, 'codex') "
                "RETURNING id",
                [f"Vector memory {n}."],
            )
            memory_id = cursor.fetchone()[0]
            cursor.execute(
                "INSERT INTO memory_embedding (memory_id, model, embedding, content_md5) "
                "SELECT %s, 'old-512', array_agg(0.001 * g)::real[]::vector, 'x' FROM generate_series(1, 512) g",
                [memory_id],
            )
            ids.append(memory_id)
    return ids


def _out_of_line(ids: list[uuid.UUID]) -> list[bool]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL FROM memory_embedding "
            "WHERE memory_id = ANY(%s) ORDER BY memory_id",
            [ids],
        )
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_a_small_stores_vectors_move_into_their_rows_unchanged() -> None:
    migrate(BEFORE_INLINE_VECTORS)
    try:
        ids = _vectors_out_of_line(3)
        assert _out_of_line(ids) == [True, True, True]
        migrate(latest())
        assert _out_of_line(ids) == [False, False, False]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT DISTINCT embedding::text FROM memory_embedding WHERE memory_id = ANY(%s)", [ids]
            )
            (text,) = cursor.fetchone()
        assert text.startswith("[0.001,0.002,0.003,") and text.endswith(",0.512]")
    finally:
        migrate(latest())


@pytest.mark.django_db(transaction=True)
def test_a_large_store_is_not_locked_for_a_rewrite_during_the_upgrade(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    migrate(BEFORE_INLINE_VECTORS)
    try:
        ids = _vectors_out_of_line(3)
        monkeypatch.setattr(INLINE_VECTORS, "REWRITE_UP_TO_ROWS", 2)
        migrate(latest())
        assert _out_of_line(ids) == [True, True, True], "left where they were, still readable"
        assert "VACUUM FULL memory_embedding" in caplog.text
        # Written again (as a re-embedding does), a vector moves into its row.
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_embedding SET embedding = array_fill(0.5::real, ARRAY[512])::vector WHERE memory_id = %s",
                [ids[0]],
            )
        assert _out_of_line([ids[0]]) == [False]
    finally:
        migrate(latest())


BEFORE_SERVING_INTERVAL = [("memories", "0017_quotas_and_audit")]


@pytest.mark.django_db(transaction=True)
def test_memories_written_before_0018_learn_when_they_were_served() -> None:
    migrate(BEFORE_SERVING_INTERVAL)
    rows = """
        INSERT INTO memory (id, type, scope, content, status, supersedes_id, source_agent, created_at, updated_at)
        VALUES (%s, 'project', 'project:github.com/acme/pay', %s, %s, %s, 'codex', %s, %s)
    """
    old, new, forgotten, merged, digest, proposed = (uuid.uuid4() for _ in range(6))
    try:
        with connection.cursor() as cursor:
            for memory_id, content, status, supersedes, created, updated in [
                (old, "Refunds within 30 days.", "superseded", None, "2026-01-01", "2026-03-09"),
                (new, "Refunds within 60 days.", "active", old, "2026-02-01", "2026-02-01"),
                (forgotten, "Deploy on Fridays.", "deleted", None, "2026-01-02", "2026-01-20"),
                (merged, "Session one.", "superseded", None, "2026-01-03", "2026-04-01"),
                (digest, "Sessions one and two.", "active", None, "2026-01-03", "2026-03-01"),
                (proposed, "Use tabs.", "proposed", None, "2026-01-04", "2026-01-04"),
            ]:
                cursor.execute(rows, [memory_id, content, status, supersedes, created, updated])
            cursor.execute(
                "INSERT INTO memory_edge (src_id, relation, dst_id, source_agent, created_at) "
                "VALUES (%s, 'replaces', %s, 'kenfold-dashboard', '2026-03-01')",
                [digest, merged],
            )
        migrate(latest())
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, active_from::date::text, ended_at::date::text, updated_at::date::text FROM memory"
            )
            served = {row[0]: row[1:] for row in cursor.fetchall()}
        assert served == {
            # Ended when its successor was written; the backfill leaves updated_at as it was.
            old: ("2026-01-01", "2026-02-01", "2026-03-09"),
            new: ("2026-02-01", None, "2026-02-01"),
            forgotten: ("2026-01-02", "2026-01-20", "2026-01-20"),
            merged: ("2026-01-03", "2026-03-01", "2026-04-01"),
            digest: ("2026-01-03", None, "2026-03-01"),
            proposed: (None, None, "2026-01-04"),
        }
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM memory WHERE id = ANY(%s)", [[old, new, forgotten, merged, digest, proposed]]
            )
        migrate(latest())


BEFORE_KEYS_MOVED = [("memories", "0020_served_call"), ("access", None)]


@pytest.mark.django_db(transaction=True)
def test_keys_made_before_the_move_to_access_still_authenticate() -> None:
    from access.keys import api_key_authenticate, api_key_create

    key, raw = api_key_create(agent="codex", label="laptop", projects=["github.com/acme/pay"])
    try:
        migrate(BEFORE_KEYS_MOVED)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM api_key WHERE id = %s", [key.id])
            assert cursor.fetchone() == (1,), "unapplying the move leaves the table and its rows alone"
        migrate(latest())
        found = api_key_authenticate(token=raw)
        assert (found.id, found.agent, found.label, found.projects) == (
            key.id,
            "codex",
            "laptop",
            ["github.com/acme/pay"],
        )
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = 'api_key'::regclass AND contype = 'c' "
                "ORDER BY conname"
            )
            assert [row[0] for row in cursor.fetchall()] == [
                "api_key_agent_valid",
                "api_key_hash_sha256",
                "api_key_label_length",
                "api_key_projects_not_empty",
            ]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM api_key WHERE id = %s", [key.id])
        migrate(latest())


BEFORE_OWNER_MOVED = [("oauth", "0004_grant_projects"), ("access", "0001_api_key")]


@pytest.mark.django_db(transaction=True)
def test_the_owner_password_set_before_the_move_to_access_still_opens_the_dashboard() -> None:
    from access.password import password_check, password_set

    password_set(password="a long owner password")
    try:
        migrate(BEFORE_OWNER_MOVED)
        migrate(latest())
        password_check(password="a long owner password", remote="test", page="dashboard")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM oauth_owner")
        migrate(latest())
