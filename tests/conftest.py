"""Shared fixtures. The suite runs against a throwaway embedded cluster set up by scripts/test.sh.

Tests that run Kenfold in processes of its own (manage.py commands, servers) take a home from here:
`module_home` (`database_home`), a home whose processes use a database of their own on that same
cluster, made in a fraction of a second from a copy of the migrated test database; or, for the few that
stop or kill the database, `cluster_home` (`own_cluster`), a cluster of their own copied from one migrated
once per run. Either way no module pays initdb, a start and a migrate of its own (STYLE: one cluster per
run).
"""

import fcntl
import itertools
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from django.conf import settings
from django_q.conf import Conf
from pytest_django.fixtures import Settings

from bench.support.processes import DatabaseHome, database_variables, manage, stop_cluster, use_database
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


@pytest.fixture(scope="session", autouse=True)
def _database_template(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    django_db_setup,
    django_db_blocker,
) -> Iterator[str]:
    """A migrated, empty database on the run's cluster that `database_home` copies; its name. Made only when
    a collected test needs it, before any test runs.

    When pytest-django made this worker's test database (it does when a collected test uses the
    database, as in every full run), it is that database, copied before any test writes to it: a second.
    Otherwise `manage.py migrate` makes it, once for this worker."""
    if not any("database_home" in item.fixturenames for item in request.session.items):
        yield ""
        return
    from django.db import connection

    test_database = connection.creation._get_test_db_name()
    template = f"{test_database}_template"
    with django_db_blocker.unblock():
        # CREATE DATABASE … TEMPLATE refuses a database anyone is connected to: this process was.
        connection.close()
        connection.close_pool()
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{template}"')
            if connection.settings_dict["NAME"] == test_database:
                cursor.execute(f'CREATE DATABASE "{template}" TEMPLATE "{test_database}"')
            else:
                cursor.execute(f'CREATE DATABASE "{template}"')
        if connection.settings_dict["NAME"] != test_database:
            home = tmp_path_factory.mktemp("template") / "home"
            manage(
                home, "migrate", "--verbosity", "0", **database_variables(connection.settings_dict, template)
            )
    yield template
    with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{template}"')


_databases = itertools.count(1)


@pytest.fixture(scope="session")
def database_home(_database_template: str, django_db_blocker) -> DatabaseHome:
    """`with database_home(path) as home:` makes `path` a KENFOLD_HOME whose processes (bench/support/processes.py's
    `manage`, `running`, `kenfold_env`) use a new copy of the migrated database on the run's cluster: as a
    home after `manage.py migrate`, without a cluster of its own. The copy is dropped afterwards, with
    whatever the home's processes left connected to it."""
    from django.db import connection

    @contextmanager
    def make(home: Path) -> Iterator[Path]:
        home.mkdir(parents=True, mode=0o700)
        name = f"{_database_template.removesuffix('_template')}_m{next(_databases)}"
        with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_database_template}"')
        use_database(home, database_variables(connection.settings_dict, name))
        try:
            yield home
        finally:
            use_database(home, None)
            with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return make


@pytest.fixture(scope="module")
def module_home(tmp_path_factory: pytest.TempPathFactory, database_home: DatabaseHome) -> Iterator[Path]:
    """A migrated KENFOLD_HOME for this module's processes, on a database of its own (`database_home`)."""
    with database_home(tmp_path_factory.mktemp("kenfold") / "home") as home:
        yield home


@pytest.fixture(scope="session")
def _migrated_cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pgdata of an embedded cluster that `manage.py migrate` created, stopped: made once per run and
    shared by the xdist workers (the first one makes it, under a lock the others wait on)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's basetemp is a folder of the run's
    home = root / "migrated-cluster"
    with open(root / "migrated-cluster.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "migrated").exists():
            try:
                manage(home, "migrate", "--verbosity", "0", timeout=300)
            finally:
                stop_cluster(home)
            (home / "migrated").touch()
    return home / "pgdata"


@pytest.fixture(scope="session")
def own_cluster(_migrated_cluster: Path) -> Callable[[Path], Path]:
    """Makes `home` a KENFOLD_HOME with a migrated embedded cluster of its own, not yet started (its first
    process starts it), for tests that stop or kill the database; returns `home`. The cluster is a copy of
    one migrated once per run; stop it with bench.support.processes.stop_cluster."""

    def make(home: Path) -> Path:
        home.mkdir(parents=True, mode=0o700)
        # cp -a keeps the files' owner: as root, the server's own user.
        subprocess.run(["cp", "-a", str(_migrated_cluster), str(home / "pgdata")], check=True)
        return home

    return make


@pytest.fixture(scope="module")
def cluster_home(
    tmp_path_factory: pytest.TempPathFactory, own_cluster: Callable[[Path], Path]
) -> Iterator[Path]:
    """A KENFOLD_HOME with a migrated embedded cluster of its own for this module (`own_cluster`)."""
    home = own_cluster(tmp_path_factory.mktemp("kenfold") / "home")
    try:
        yield home
    finally:
        stop_cluster(home)
