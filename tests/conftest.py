"""Shared fixtures. The suite runs against a throwaway embedded cluster set up by scripts/test.sh."""

import os
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from django.conf import settings
from django_q.conf import Conf
from pytest_django.fixtures import Settings

from kenfold.provider_settings import chat_from_env, embedding_from_env, rerank_from_env


def pytest_configure(config: pytest.Config) -> None:
    # django-q2's sync mode (DESIGN: unit tests only): a task queued on commit runs in the test's process
    # when it is queued, as a worker would run it. Q_CLUSTER is read when django_q loads, before any
    # fixture could override the setting, so the loaded value is set here.
    Conf.SYNC = True
    # Refuse to run against the owner's own data: `make test` points KENFOLD_HOME at a temporary folder.
    if getattr(settings, "EMBEDDED_CLUSTER", None) is not None:
        home = Path(settings.KENFOLD_HOME)
        default = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "kenfold"
        if home == default.absolute():
            raise pytest.UsageError(
                f"the tests would use your Kenfold home {home}; run them with `make test` "
                "(or set KENFOLD_HOME to a temporary folder)"
            )


@pytest.fixture(scope="session")
def standalone_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a fresh venv holding only the client distribution (tests/client/standalone.py)."""
    from tests.client.standalone import build_standalone_client

    return build_standalone_client(tmp_path_factory.mktemp("standalone-client"))


@pytest.fixture
def provider_env(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Callable[..., None]:
    """Set KENFOLD_* provider variables as a user would (None unsets one), and rebuild settings.EMBEDDING,
    RERANK and CHAT from them with the functions kenfold.settings uses; the providers follow the settings.
    Both are restored after the test."""

    def apply(**variables: str | None) -> None:
        for name, value in variables.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        settings.EMBEDDING = embedding_from_env()
        settings.RERANK = rerank_from_env()
        settings.CHAT = chat_from_env()

    return apply


@pytest.fixture(scope="session", autouse=True)
def _test_database_left_alone(django_db_setup, django_db_blocker) -> Iterator[None]:
    """Before pytest-django drops a test database, no other session may still use it. Now and then one
    did (two full runs in three, 2026-12-03): "database … is being accessed by other users" at teardown,
    the database left behind. The candidates are the connection pool's background worker, opening a
    connection as the pool closes, and a server process a test started that is still exiting. So close
    the pool, give the others a few seconds to leave, then end whatever session is left: the database
    is about to be dropped."""
    yield
    from django.db import DatabaseError, connection

    with django_db_blocker.unblock():
        connection.close()
        connection.close_pool()
        name = connection.settings_dict["NAME"]
        others = "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        with connection._nodb_cursor() as cursor:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                cursor.execute(f"SELECT count(*) {others}", [name])
                if cursor.fetchone() == (0,):
                    return
                time.sleep(0.1)
            # Sessions of another role cannot be ended by this one: then the drop warns, as it did before.
            with suppress(DatabaseError):
                cursor.execute(f"SELECT pg_terminate_backend(pid) {others}", [name])
