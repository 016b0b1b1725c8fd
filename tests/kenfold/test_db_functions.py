"""The server-bound statements of the hot paths (kenfold.db_functions)."""

import json
import uuid

import pytest
from django.db import connection

from kenfold.db_functions import model_rows, server_bound
from kenfold.settings import _with_session_options
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


def test_turned_off_nothing_is_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    """KENFOLD_DATABASE_PREPARED=false, for a pooler that hands each transaction another connection:
    the connections get no prepare threshold, and then not even server_bound's statements are prepared."""
    monkeypatch.setenv("KENFOLD_DATABASE_PREPARED", "false")
    assert _with_session_options({})["prepare_threshold"] is None
    monkeypatch.setenv("KENFOLD_DATABASE_PREPARED", "true")
    assert _with_session_options({})["prepare_threshold"] is not None
    connection.ensure_connection()
    monkeypatch.setattr(connection.connection, "prepare_threshold", None)
    assert server_bound(PROBE.replace("probe_next", "probe_off"), {"n": 1}, prepare=True) == [(2,)]
    assert not [s for s in prepared_statements() if "probe_off" in s]


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
    assert json.dumps(str(row.content_key))
    assert model_rows(Memory, "WHERE id = %s", [uuid.uuid4()]) == []
