"""Whether the database schema matches the code: one check for the server, stdio and readiness, and the
one-line messages that tell the owner what to run when it does not."""

from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def schema_is_current() -> bool:
    executor = MigrationExecutor(connection)
    return not executor.migration_plan(executor.loader.graph.leaf_nodes())


def has_been_migrated() -> bool:
    """Whether `migrate` ever ran on the database: one cheap query, where the full check loads every
    migration. A database it never ran on fails at a command's first query, maybe after some output."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('django_migrations') IS NOT NULL")
        return bool(cursor.fetchone()[0])


def database_location() -> str:
    """Which database a process uses, as the owner set it: KENFOLD_HOME names the embedded server's folder.
    Never the URL of KENFOLD_DATABASE_URL, which may carry a password."""
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    if cluster is None:
        return "the database of KENFOLD_DATABASE_URL"
    return f"the database in KENFOLD_HOME={cluster.home}"


def schema_behind_message() -> str:
    return (
        "the database schema is out of date: run `python manage.py migrate` first (`make run` migrates "
        f"too); this is {database_location()}"
    )


def no_database_message() -> str:
    """A home whose embedded server was never created: most often a command run without the KENFOLD_HOME
    that the server uses. Said before anything is created there."""
    return (
        f"there is no Kenfold database in KENFOLD_HOME={settings.KENFOLD_HOME} yet: run `python manage.py "
        "migrate` to create it (`make run` does too), or set KENFOLD_HOME to the folder your server uses"
    )


def database_is_created() -> bool:
    """False only for an embedded server that does not exist yet (a database of KENFOLD_DATABASE_URL is
    the owner's to create)."""
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    return cluster is None or cluster.status().initialized
