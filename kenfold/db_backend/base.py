"""PostgreSQL backend that starts the embedded server before the first connection of the process, and
restarts it before any later one if it crashed (kenfold.embedded_db)."""

from django.conf import settings
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        cluster = settings.EMBEDDED_CLUSTER
        cluster.ensure_started_once()
        cluster.restart_if_crashed()
        return super().get_new_connection(conn_params)
