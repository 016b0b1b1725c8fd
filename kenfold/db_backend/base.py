"""PostgreSQL's backend, for Kenfold's database wherever it runs: its connections can send vectors
(kenfold.db_functions.PgVector), and with the embedded server it starts the server before the first
connection of the process and restarts it before any later one if it crashed (kenfold.embedded_db)."""

from django.conf import settings
from django.db.backends.postgresql import base

from kenfold.db_functions import register_vector_dumper


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        # The adapter map every new connection copies (Django's own, with its dumpers and loaders).
        register_vector_dumper(params["context"])
        return params

    def get_new_connection(self, conn_params):
        cluster = getattr(settings, "EMBEDDED_CLUSTER", None)  # None: a server of KENFOLD_DATABASE_URL
        if cluster is not None:
            cluster.ensure_started_once()
            cluster.restart_if_crashed()
        return super().get_new_connection(conn_params)
