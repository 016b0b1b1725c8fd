"""Each MCP request's sync work (key check, tool, the request signals) runs on one thread, one request at a
time per thread, and threads are kept for later requests rather than started for each one."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async

from edge.mcp.transports import django_request_scope

pytestmark = pytest.mark.anyio


async def request(
    inside: asyncio.Event | None = None, leave: asyncio.Event | None = None
) -> threading.Thread:
    """One request's scope: the thread its thread-sensitive calls ran on (all the same one). Threads are
    compared as objects: a new thread may get the identifier of one that ended."""
    async with django_request_scope():
        first = await sync_to_async(threading.current_thread, thread_sensitive=True)()
        if inside is not None and leave is not None:
            inside.set()
            await leave.wait()
        second = await sync_to_async(threading.current_thread, thread_sensitive=True)()
    assert first is second, "a request's sync calls share one thread (and its DB connection)"
    return first


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_requests_reuse_kept_threads_and_concurrent_ones_never_share_one() -> None:
    one = await request()
    assert await request() is one, "a later request runs on the kept thread, not a new one"

    inside = [asyncio.Event(), asyncio.Event()]
    leave = asyncio.Event()
    both = [asyncio.create_task(request(inside[n], leave)) for n in range(2)]
    await asyncio.gather(*(event.wait() for event in inside))
    leave.set()
    first, second = await asyncio.gather(*both)
    assert first is not second, "two requests in work at once run on two threads"
    assert one is first or one is second
    last = await request()
    assert last is first or last is second
