"""Every schema invariant of spec §1.1 is enforced by PostgreSQL itself, not only by Python.

The inserts here are raw SQL on purpose: they prove that a writer that bypasses the ORM (an import, psql,
a future worker) still cannot store a memory that breaks the rules.
"""

import random
import uuid

import pytest
from django.db import IntegrityError, connection, transaction

from memories.models import Memory, MemoryEdge, MemoryType
from memories.search.embedding_store import store_vectors

pytestmark = pytest.mark.django_db

INSERT = """
    INSERT INTO memory (type, scope, content, source_agent, trust, status, confidence,
                        expires_at, valid_from, valid_to, supersedes_id)
    VALUES (%(type)s, %(scope)s, %(content)s, %(source_agent)s, %(trust)s, %(status)s, %(confidence)s,
            %(expires_at)s, %(valid_from)s, %(valid_to)s, %(supersedes_id)s)
    RETURNING id
"""


def insert(**overrides: object) -> uuid.UUID:
    row = {
        "type": "semantic",
        "scope": "user",
        "content": "Tabs are four spaces wide in this repository.",
        "source_agent": "claude-code",
        "trust": "agent",
        "status": "active",
        "confidence": 0.5,
        "expires_at": None,
        "valid_from": None,
        "valid_to": None,
        "supersedes_id": None,
    } | overrides
    with connection.cursor() as cursor:
        cursor.execute(INSERT, row)
        return cursor.fetchone()[0]


def rejected(constraint: str, **overrides: object) -> None:
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        insert(**overrides)


def test_valid_row_gets_uuidv7_id_and_defaults() -> None:
    first, second = insert(), insert(content="Another fact.")
    assert first.version == 7 and second.version == 7
    assert first < second, "uuidv7 ids sort in creation order"
    memory = Memory.objects.get(pk=first)
    assert memory.attrs == {} and memory.trust == "agent" and memory.confidence == 0.5
    assert memory.created_at is not None and memory.updated_at is not None


@pytest.mark.parametrize(
    ("constraint", "overrides"),
    [
        ("memory_type_valid", {"type": "opinion"}),
        ("memory_trust_valid", {"trust": "admin"}),
        ("memory_status_valid", {"status": "archived"}),
        ("memory_scope_not_empty", {"scope": ""}),
        ("memory_content_not_empty", {"content": ""}),
        ("memory_source_agent_not_empty", {"source_agent": ""}),
        ("memory_confidence_range", {"confidence": 1.5}),
        ("memory_confidence_range", {"confidence": -0.1}),
        ("memory_temporary_expires", {"type": "temporary", "expires_at": None}),
        (
            "memory_validity_ordered",
            {"valid_from": "2026-05-01T00:00:00Z", "valid_to": "2026-04-01T00:00:00Z"},
        ),
    ],
)
def test_database_rejects_invalid_rows(constraint: str, overrides: dict) -> None:
    rejected(constraint, **overrides)
    assert Memory.objects.count() == 0


def test_temporary_with_expiry_and_ordered_validity_are_accepted() -> None:
    insert(type="temporary", expires_at="2026-12-01T00:00:00Z")
    insert(valid_from="2026-04-01T00:00:00Z", valid_to="2026-04-01T00:00:00Z")
    assert Memory.objects.count() == 2


def test_memory_cannot_supersede_itself() -> None:
    memory_id = insert()
    with (
        pytest.raises(IntegrityError, match="memory_not_self_superseding"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE memory SET supersedes_id = id WHERE id = %s", [memory_id])


def test_superseded_memory_cannot_be_deleted_from_under_its_replacement() -> None:
    old = insert()
    insert(content="The newer statement.", supersedes_id=old)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory WHERE id = %s", [old])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_edges_reject_self_loops_and_empty_relations_and_cascade() -> None:
    src, dst = insert(), insert(content="The session summary.")
    with (
        pytest.raises(IntegrityError, match="memory_edge_not_self"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO memory_edge (src_id, relation, dst_id, source_agent) VALUES (%s, 'derived_from', %s, 'x')",
            [src, src],
        )
    with (
        pytest.raises(IntegrityError, match="memory_edge_relation_not_empty"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO memory_edge (src_id, relation, dst_id, source_agent) VALUES (%s, '', %s, 'x')",
            [src, dst],
        )
    MemoryEdge.objects.create(
        src_id=src, relation="derived_from", dst_id=dst, source_agent="kenfold-extractor"
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryEdge.objects.create(src_id=src, relation="derived_from", dst_id=dst, source_agent="again")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory WHERE id = %s", [dst])
    assert MemoryEdge.objects.count() == 0, "edges go with their memories"


def test_updated_at_is_stamped_by_the_database_on_raw_updates() -> None:
    memory_id = insert()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory SET created_at = now() - interval '1 day', updated_at = now() - interval '1 day'"
        )
        cursor.execute("SELECT updated_at > created_at FROM memory WHERE id = %s", [memory_id])
        assert cursor.fetchone()[0] is True, "the trigger overrides the stale updated_at"


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ("  Use   TABS\tfor Go files.  ", "use tabs for go files"),
        ("Deploy on Fridays!!!", "deploy on fridays"),
        ("배포는 금요일에 한다。", "배포는 금요일에 한다"),
        ("Version 1.2 ships today...", "version 1.2 ships today"),
        ("Keep the question mark?", "keep the question mark?"),
    ],
)
def test_content_key_normalizes_case_whitespace_and_trailing_punctuation(content: str, key: str) -> None:
    memory_id = insert(content=content)
    assert Memory.objects.get(pk=memory_id).content_key == key


def test_content_tsv_uses_simple_configuration_without_stemming() -> None:
    insert(content="Running migrations with 웹훅 handlers")
    with connection.cursor() as cursor:
        cursor.execute("SELECT content_tsv::text FROM memory")
        lexemes = cursor.fetchone()[0]
    assert "'running'" in lexemes and "'migrations'" in lexemes and "'웹훅'" in lexemes


def test_dedupe_index_accepts_8000_character_incompressible_memories() -> None:
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789가나다라마바사아자차카타파하"
    content = "".join(rng.choice(alphabet) for _ in range(8000))
    first = insert(content=content, type=MemoryType.PROJECT, scope="project:github.com/kenfold/kenfold")
    second = insert(
        content=content + " more", type=MemoryType.PROJECT, scope="project:github.com/kenfold/kenfold"
    )
    assert first != second
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            """EXPLAIN SELECT id FROM memory WHERE scope = %s AND type = %s AND md5(content_key) = md5(%s)
               AND content_key = %s AND status IN ('active', 'proposed')""",
            ["project:github.com/kenfold/kenfold", "project", content.lower(), content.lower()],
        )
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert "memory_dedupe" in plan


@pytest.mark.parametrize(
    ("constraint", "agent", "key_hash"),
    [
        ("api_key_agent_valid", "Claude Code", b"x" * 32),
        ("api_key_agent_valid", "-leading-dash", b"x" * 32),
        ("api_key_hash_sha256", "codex", b"short"),
    ],
)
def test_api_key_rows_are_checked_by_the_database(constraint: str, agent: str, key_hash: bytes) -> None:
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO api_key (agent, prefix, key_hash) VALUES (%s, 'kf_abcdefgh', %s)", [agent, key_hash]
        )


@pytest.mark.parametrize("dimensions", [384, 512, 1024, 1536])
def test_vectors_are_stored_in_their_row_not_in_the_toast_table(dimensions: int) -> None:
    # Read from the TOAST table, each vector a search reads costs an index lookup and a second heap read:
    # the exact search of a small scope took 2-5 times as long for 512 dimensions (migration 0013).
    memory_id = insert(content=f"A memory embedded with {dimensions} dimensions.")
    rng = random.Random(dimensions)
    vector = [rng.uniform(-1, 1) for _ in range(dimensions)]
    assert (
        store_vectors(
            model=f"test-{dimensions}",
            items=[(memory_id, f"A memory embedded with {dimensions} dimensions.", vector)],
        )
        == 1
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(embedding), vector_dims(embedding) FROM memory_embedding "
            "WHERE memory_id = %s",
            [memory_id],
        )
        assert cursor.fetchone() == (None, dimensions)
