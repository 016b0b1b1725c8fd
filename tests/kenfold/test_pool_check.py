"""The pool's connection check (kenfold.db_backend.pool_check): no round trip for a connection given back
moments ago, a round trip otherwise, and a connection whose server session ended is never handed out.
A real pool on the suite's database; the server's own view (pg_stat_activity) says what each backend ran."""

import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from kenfold.db_backend import pool_check

pytestmark = pytest.mark.django_db(transaction=True)


def _conninfo() -> str:
    params = connection.get_connection_params()
    keys = ("dbname", "user", "password", "host", "port")
    return make_conninfo(**{key: params[key] for key in keys if params.get(key) not in (None, "")})


@pytest.fixture
def pool() -> Iterator[ConnectionPool]:
    pool = ConnectionPool(
        _conninfo(),
        min_size=1,
        max_size=1,
        check=pool_check.check_connection,
        reset=pool_check.note_returned,
        kwargs={"autocommit": True},
        open=True,
    )
    try:
        yield pool
    finally:
        pool.close()


def _last_statement(pid: int) -> str:
    with psycopg.connect(_conninfo(), autocommit=True) as observer:
        row = observer.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
    return row[0] if row else "<gone>"


def _use(pool: ConnectionPool, marker: str) -> int:
    with pool.connection() as conn:
        conn.execute(f"SELECT '{marker}'")
        return conn.info.backend_pid


def test_a_connection_given_back_moments_ago_is_taken_without_a_round_trip(pool: ConnectionPool) -> None:
    pid = _use(pool, "first use")
    with pool.connection() as conn:
        assert conn.info.backend_pid == pid
        # Nothing was sent when it was taken: the backend's last statement is still the previous use's.
        assert _last_statement(pid) == "SELECT 'first use'"


def test_a_connection_idle_past_the_window_is_checked_with_a_round_trip(
    pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid = _use(pool, "before the wait")
    monkeypatch.setattr(pool_check, "FRESH_S", 0.0)
    with pool.connection() as conn:
        assert conn.info.backend_pid == pid
        # psycopg_pool's check: an empty statement.
        assert _last_statement(pid) == ""


def test_a_connection_whose_server_session_ended_is_replaced_not_handed_out(pool: ConnectionPool) -> None:
    """A restart of the database, or an administrator ending sessions, between two requests: the next
    request gets a working connection, within the window where no round trip is made."""
    pid = _use(pool, "before the end")
    with psycopg.connect(_conninfo(), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
        deadline = time.monotonic() + 5
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the backend did not end"
            time.sleep(0.02)
    with pool.connection() as conn:
        assert conn.execute("SELECT 'after the end'").fetchone() == ("after the end",)
        assert conn.info.backend_pid != pid
