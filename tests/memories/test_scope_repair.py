"""memories 0015: rows stored under a project scope that normalizes to another one move into it (issue 37).

The rows are written as the server wrote them before normalization was a fixed point (`repo.git` from
`repo.git.git`, `host:org/repo` from `https://host:org/repo`), with the migration unapplied, then the
migration runs as an upgrade runs it.
"""

import uuid

import pytest
from django.db import connection

from tests.memories.test_migrations import latest, migrate

BEFORE_REPAIR = [("memories", "0014_api_key_label")]
PAY = "project:github.com/acme/pay"
PAY_DOT_GIT = "project:github.com/acme/pay.git"
PAY_SCP = "project:github.com:acme/pay"


def _insert(
    cursor, *, scope: str, content: str, type: str = "project", status: str = "active", day: int
) -> uuid.UUID:
    cursor.execute(
        "INSERT INTO memory (type, scope, content, status, source_agent, created_at) "
        "VALUES (%s, %s, %s, %s, 'codex', %s) RETURNING id",
        [type, scope, content, status, f"2026-0{day}-01T00:00:00Z"],
    )
    return cursor.fetchone()[0]


def _rows(cursor, ids: dict[str, uuid.UUID]) -> dict[str, tuple]:
    cursor.execute(
        "SELECT id, scope, status, attrs ->> 'merged_into' FROM memory WHERE id = ANY(%s)",
        [list(ids.values())],
    )
    by_id = {row[0]: row[1:] for row in cursor.fetchall()}
    return {name: by_id[memory_id] for name, memory_id in ids.items()}


@pytest.mark.django_db(transaction=True)
def test_scopes_off_the_fixed_point_merge_into_the_normalized_project() -> None:
    migrate(BEFORE_REPAIR)
    try:
        with connection.cursor() as cursor:
            ids = {
                # The same rule written under two spellings: the older active one is kept.
                "old_rule": _insert(cursor, scope=PAY_DOT_GIT, content="Deploys run from main.", day=1),
                "new_rule": _insert(cursor, scope=PAY, content="deploys run from main", day=2),
                # An active memory is kept before an older proposed one.
                "proposed": _insert(
                    cursor, scope=PAY_SCP, content="Payments use Stripe.", status="proposed", day=1
                ),
                "served": _insert(cursor, scope=PAY, content="Payments use Stripe.", day=3),
                # Same words, another type: not a duplicate.
                "semantic": _insert(
                    cursor, scope=PAY_DOT_GIT, content="Deploys run from main.", type="semantic", day=4
                ),
                # Already retired: not counted as a duplicate, moved all the same.
                "retired": _insert(
                    cursor, scope=PAY_SCP, content="Deploys run from main.", status="superseded", day=5
                ),
                "other": _insert(
                    cursor, scope="project:gitlab.com/x/y", content="Deploys run from main.", day=1
                ),
                "user": _insert(cursor, scope="user", content="Deploys run from main.", day=1),
                # What is left of "https://~/x" normalizes to nothing: left where it is.
                "nowhere": _insert(cursor, scope="project:~/x", content="A note.", day=1),
            }
            cursor.execute(
                "INSERT INTO memory_ref (memory_id, scope, path, symbol, state) VALUES (%s, %s, 'src/pay.py', '', 'pending')",
                [ids["proposed"], PAY_SCP],
            )
            cursor.execute(
                "INSERT INTO consolidation (kind, scope, member_ids, model, status) "
                "VALUES ('distinct', %s, %s, 'judge', 'dismissed')",
                [PAY_DOT_GIT, sorted([ids["old_rule"], ids["semantic"]])],
            )
            cursor.execute(
                "INSERT INTO context_snapshot (id, scope, held, expires_at) "
                "VALUES (gen_random_uuid(), 'project:github.com/acme/pay.git.git', '{}', now() + interval '1 hour')"
            )

        migrate(latest())

        with connection.cursor() as cursor:
            rows = _rows(cursor, ids)
            assert rows == {
                "old_rule": (PAY, "active", None),
                "new_rule": (PAY, "superseded", str(ids["old_rule"])),
                "proposed": (PAY, "superseded", str(ids["served"])),
                "served": (PAY, "active", None),
                "semantic": (PAY, "active", None),
                "retired": (PAY, "superseded", None),
                "other": ("project:gitlab.com/x/y", "active", None),
                "user": ("user", "active", None),
                "nowhere": ("project:~/x", "active", None),
            }
            cursor.execute("SELECT src_id, dst_id, source_agent FROM memory_edge WHERE relation = 'replaces'")
            assert sorted(cursor.fetchall()) == sorted(
                [(ids["old_rule"], ids["new_rule"], "kenfold"), (ids["served"], ids["proposed"], "kenfold")]
            )
            cursor.execute("SELECT scope FROM memory_ref")
            assert cursor.fetchall() == [(PAY,)]
            cursor.execute("SELECT scope FROM consolidation")
            assert cursor.fetchall() == [(PAY,)]
            cursor.execute("SELECT scope FROM context_snapshot")
            assert cursor.fetchall() == [(PAY,)]
    finally:
        migrate(latest())
