"""Running calls at the same moment on real threads, each with its own database connection."""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import connection, transaction


def in_parallel(calls: list[Callable[[], object]]) -> list[object]:
    """Run ``calls`` together, released by a barrier; each result, or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = calls[index]()
        except Exception as exc:  # surfaced by the caller's assertions
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@contextmanager
def held_open(statement: str) -> Iterator[None]:
    """`statement` run on another connection, in a transaction held open until the block ends: a writer
    holding a table, another process holding a lock. Use transaction-level locks: a session-level one
    would stay with the pooled connection after the block."""
    holding, release = threading.Event(), threading.Event()

    def run() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(statement)
                holding.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert holding.wait(30), "the other connection did not run the statement"
        yield
    finally:
        release.set()
        thread.join(30)
