"""The server-bound statements of the hot paths (kenfold.db_functions)."""

import uuid
from pathlib import Path

import pytest
from django.db import connection

from bench.support.processes import DatabaseHome, manage
from kenfold.db_functions import model_rows, server_bound
from memories.models import NOT_IN_VIEWS, Memory

pytestmark = pytest.mark.django_db

PROBE = "SELECT %(n)s::int + 1 AS probe_next"


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        return [row[0] for row in cursor.fetchall()]


def test_prepared_once_per_connection_and_bound_by_the_server() -> None:
    assert server_bound(PROBE, {"n": 41}, prepare=True) == [(42,)]
    assert server_bound(PROBE, {"n": 1}, prepare=True) == [(2,)]
    # One statement with its parameter as $1 (bound by the server), whatever the values were.
    assert [s for s in prepared_statements() if "probe_next" in s] == ["SELECT $1::int + 1 AS probe_next"]
    assert server_bound(PROBE.replace("probe_next", "probe_once"), {"n": 1}, prepare=False) == [(2,)]
    assert not [s for s in prepared_statements() if "probe_once" in s]


# Run by `manage.py shell` in a process of its own: one probe through server_bound, then how many
# prepared statements of the connection hold it.
COUNT_PREPARED = """
from django.db import connection
from kenfold.db_functions import server_bound
assert server_bound("SELECT %(n)s::int + 1 AS probe_setting", {"n": 1}, prepare=True) == [(2,)]
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%%probe_setting%%'")
    print("prepared", cursor.fetchone()[0])
"""


def test_turned_off_nothing_is_prepared(tmp_path: Path, database_home: DatabaseHome) -> None:
    """KENFOLD_DATABASE_PREPARED=false, for a pooler that hands each transaction another connection:
    the connections get no prepare threshold, and then not even server_bound's statements are prepared."""
    with database_home(tmp_path / "home") as home:
        counted = {
            value: manage(home, "shell", "-c", COUNT_PREPARED, KENFOLD_DATABASE_PREPARED=value).stdout
            for value in ("true", "false")
        }
    assert "prepared 1" in counted["true"]
    assert "prepared 0" in counted["false"]


def test_model_rows_gives_what_the_orm_gives() -> None:
    memory = Memory.objects.create(
        type="project",
        scope="project:github.com/acme/api",
        content="Releases are tagged from main.",
        attrs={"kind": "rule", "nested": {"a": [1, 2]}},
        source_agent="claude-code",
    )
    (row,) = model_rows(Memory, "WHERE id = %s", [memory.pk], defer=NOT_IN_VIEWS)
    expected = Memory.objects.for_views().get(pk=memory.pk)
    assert row.attrs == {"kind": "rule", "nested": {"a": [1, 2]}}  # decoded JSON, as the ORM gives it
    for field in Memory._meta.concrete_fields:
        if field.attname not in NOT_IN_VIEWS:
            assert getattr(row, field.attname) == getattr(expected, field.attname), field.attname
    # A deferred column loads when read, as with a queryset's defer().
    assert row.get_deferred_fields() == set(NOT_IN_VIEWS)
    assert row.content_key == Memory.objects.values_list("content_key", flat=True).get(pk=memory.pk)
    assert model_rows(Memory, "WHERE id = %s", [uuid.uuid4()]) == []
