"""Running calls at the same moment on real threads, each with its own database connection."""

import threading
from collections.abc import Callable

from django.db import connection


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
