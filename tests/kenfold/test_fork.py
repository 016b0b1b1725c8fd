"""A process that forks (django-q2's cluster spawning its worker, pusher and monitor) never shares a
database session with its children."""

import os

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


# The test's own process has threads (the pool's workers); the child only runs one query and leaves.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_gets_its_own_database_session() -> None:
    assert connection.pool is not None, "the suite runs with the connection pool, as the server does"
    parent_before = backend_pid()
    connection.close()  # back to the pool, as django-q2 closes connections before it forks
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: report its session and leave without running any test machinery
        try:
            os.write(write, str(backend_pid()).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(child, 0)
    child_pid = int(os.read(read, 64).decode() or 0)
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0
    parent_after = backend_pid()
    assert child_pid != 0
    assert child_pid not in (parent_before, parent_after), "the child must not reuse the parent's session"
