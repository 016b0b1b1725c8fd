"""Whether the database schema matches the code: one check for the server, stdio and readiness."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def schema_is_current() -> bool:
    executor = MigrationExecutor(connection)
    return not executor.migration_plan(executor.loader.graph.leaf_nodes())
