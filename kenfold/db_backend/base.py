"""PostgreSQL backend that starts the embedded server before the first connection of the process."""

from django.conf import settings
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        settings.EMBEDDED_CLUSTER.ensure_started_once()
        return super().get_new_connection(conn_params)
