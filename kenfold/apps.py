import os

from django.apps import AppConfig
from django.db import connections


def _close_connection_pools() -> None:
    """Close the database connection pools before this process forks.

    A pool holds open sockets; a forked child would inherit it and hand the parent's sockets to its own
    queries, so two processes would speak on one PostgreSQL session. django-q2 forks its worker, pusher and
    monitor from the cluster process: with an inherited pool, queued tasks failed with "connection in
    transaction status INTRANS" and garbled results. Each process opens a pool of its own on first use.
    """
    for alias in connections:
        connection = connections[alias]
        pools = getattr(type(connection), "_connection_pools", {})
        if alias not in pools:
            continue
        if not connection.in_atomic_block:
            connection.close()  # this thread's connection goes back to the pool before the pool closes
        connection.close_pool()


class KenfoldConfig(AppConfig):
    name = "kenfold"

    def ready(self) -> None:
        os.register_at_fork(before=_close_connection_pools)
