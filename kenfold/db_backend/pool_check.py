"""The health check of a pooled connection, without a round trip for one that was just in use.

psycopg_pool's own check sends an empty query every time a connection is taken. A recall takes three
(its request's and one per vector search thread), and each round trip waits for the database backend to
be scheduled on cores the request itself is using: skipping them saved 0.3 ms a recall at 100,000
memories (docs/benchmarks.md).

A connection given back to the pool a few seconds ago was working then. What could have happened since
shows on its socket: when the server ends a session (a crash, a restart, `pg_terminate_backend`, an idle
timeout) the backend sends an error message or just closes the socket, and either makes the socket
readable. So a recently returned connection with nothing to read is taken as it is; any other connection
gets the full check. The window is short because what a socket cannot show (a remote server behind a NAT
that silently drops idle connections) takes minutes, not seconds.
"""

import select
import time
import weakref

from psycopg import Connection
from psycopg_pool import ConnectionPool

# How long after its return a quiet connection is trusted without a round trip.
FRESH_S = 5.0

_returned_at: "weakref.WeakKeyDictionary[Connection, float]" = weakref.WeakKeyDictionary()


def note_returned(conn: Connection) -> None:
    """The pool's `reset` callback: remember when the connection came back (it is idle, checked by the pool)."""
    _returned_at[conn] = time.monotonic()


def check_connection(conn: Connection) -> None:
    """The pool's `check` callback: raise if the connection cannot be used."""
    returned = _returned_at.pop(conn, None)
    if returned is not None and time.monotonic() - returned < FRESH_S and _quiet(conn):
        return
    ConnectionPool.check_connection(conn)


def _quiet(conn: Connection) -> bool:
    """Whether nothing waits to be read on the connection's socket: no error, notice or end of stream."""
    if conn.closed or conn.broken:
        return False
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLPRI)
    return not poller.poll(0)
