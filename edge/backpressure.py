"""Backpressure: a bounded number of requests at work per process, a bounded queue, 503 beyond it.

Without it every request took a thread and then waited for one of the pool's connections; at 16 agents
the pool ran dry, requests failed with PoolTimeout after 3 s (HTTP 500, "internal error") and the threads
fighting over two cores made the survivors slow too (issue 14). Now at most ACTIVE_PER_PROCESS requests
run at once, which is less than the pool's size, so a request that runs always gets a connection; up to
QUEUE_PER_PROCESS more wait their turn, each at most QUEUE_WAIT_S; anything beyond gets 503 with
Retry-After before a byte of its body is read. A database that is down or overloaded is also a 503 (never
a 500): `database_unavailable` names those errors for every edge that translates errors.

Reads go first. An agent waits for its recall or get_context before it can go on, while a write's answer
only confirms it; so a free slot goes to the oldest waiting read, and to a write only when no read waits
or the write has waited READ_PRIORITY_S (writes are delayed, never starved). Writes also hold at most
WRITES_PER_PROCESS of the running slots, so that the reads sharing the cores with them are not slowed by a
crowd of embeddings and inserts. A request's body is read before it waits (that is how the gate tells a
read from a write), so a client that sends its body slowly waits outside the running slots instead of
holding one.
"""

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress

import psycopg
from django.conf import settings
from django.db import utils as db_utils
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenfold.capacity import ACTIVE_PER_PROCESS, RETRY_AFTER_S
from kenfold.embedded_db import EmbeddedDatabaseError

log = logging.getLogger(__name__)

# ACTIVE_PER_PROCESS requests run at once (kenfold.capacity says why that many); this many more wait.
QUEUE_PER_PROCESS = 64
# At most this many of the running requests are writes. A write costs more CPU than a read (two
# embeddings, the similar[] lookups, the insert), and under overload writes filled most of the running
# slots, so every read beside them got a small share of the cores. With half the slots for writes
# (bench.load, interleaved with the code before, 2026-12-03): recall p95 at 32 agents 253 against 518 ms,
# at 64 agents 805 against 1,391; remember waits longer; ops/s within the runs' noise; at 16 agents no
# change (271 against 275 ms). Figures in docs/benchmarks.md.
WRITES_PER_PROCESS = max(1, ACTIVE_PER_PROCESS // 2)
QUEUE_WAIT_S = 20.0
# How long a write may be passed over by reads before it takes the next free slot anyway.
READ_PRIORITY_S = 1.0
# The gate holds the bodies of every request inside it (up to ACTIVE + QUEUE per process) before any
# authentication, so it refuses bodies larger than the largest an endpoint takes (the MCP SDK's 4 MiB; the
# REST API's own limit, 1 MiB, answers for itself below that).
MAX_BODY_BYTES = 4 * 1024 * 1024
TOO_LARGE = "the request body is larger than 4 MiB; send less in one request"
OVERLOADED = "Kenfold is busy: too many requests are waiting; retry in a few seconds"
DATABASE_UNAVAILABLE = "Kenfold's database is unavailable or overloaded right now; retry in a few seconds"
# Retrying does not help here: the owner has to start it again.
DATABASE_STOPPED = (
    "Kenfold's database was stopped by its owner with `manage.py db stop`; it answers again once the owner "
    "runs `manage.py db start` on the server"
)
INCOMPLETE_BODY = (
    "the request body did not arrive in full (shorter than its Content-Length); send the whole body"
)

# Errors that mean "the database cannot serve this now" (down, restarting, no connection free in time,
# a serialization conflict), not "this request is wrong" or "Kenfold has a bug". Django wraps psycopg's
# errors in its own classes; code outside the ORM (the readiness probe) sees psycopg's directly.
_UNAVAILABLE = (
    db_utils.OperationalError,
    db_utils.InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    EmbeddedDatabaseError,
)


def database_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, _UNAVAILABLE)


def database_stopped_by_owner() -> bool:
    """Whether the embedded server is down because the owner stopped it (`manage.py db stop` leaves its
    marker until the next start), rather than crashed or overloaded."""
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    return cluster is not None and cluster.stopped_marker.exists()


def database_unavailable_message() -> str:
    """What a request that failed for want of the database is told: how to start it again when the owner
    stopped it, else to retry. (Retry-After stays on both 503s: the API's documents promise it.)"""
    return DATABASE_STOPPED if database_stopped_by_owner() else DATABASE_UNAVAILABLE


def unavailable_response(message: str | None = None) -> JSONResponse:
    """503 with Retry-After: the database cannot serve (no message), or `message` (OVERLOADED)."""
    return JSONResponse(
        {"error": message or database_unavailable_message()},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


# Whether a request changes memory, from its method, path and body: the MCP endpoint looks at the JSON-RPC
# tool name (edge.mcp.transports.mcp_writes), the REST API at the method. The gate lets reads go first;
# the request guard refuses writes to a read-only OAuth caller.
WriteCheck = Callable[[Scope, bytes], bool]


def rest_writes(scope: Scope, body: bytes) -> bool:
    return scope["method"] not in ("GET", "HEAD", "OPTIONS")


_running_requests = 0


def running_requests() -> int:
    """Requests at work in this process right now (past the gate; 0 where no gate runs, as over stdio)."""
    return _running_requests


class AdmissionGate:
    """ASGI wrapper: lets ACTIVE_PER_PROCESS requests in at once and queues QUEUE_PER_PROCESS more, reads
    before writes.

    One instance is shared by every surface it wraps, so the bound is per process. It is also the edge for
    requests that end early: a body shorter than its Content-Length (the client stops sending, or goes
    away) is answered 408 and logged at info, not as an ERROR traceback and a 500.
    """

    def __init__(self) -> None:
        self._free = ACTIVE_PER_PROCESS
        self._writes_running = 0
        self._inside = 0  # requests reading their body, waiting or running
        # (enqueued at, future) per kind; a future's result means a slot was handed to it.
        self._reads: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._writes: deque[tuple[float, asyncio.Future[None]]] = deque()

    def wrap(self, app: ASGIApp, *, writes: WriteCheck) -> ASGIApp:
        async def gated(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                return await app(scope, receive, send)
            if self._inside >= ACTIVE_PER_PROCESS + QUEUE_PER_PROCESS:
                return await unavailable_response(OVERLOADED)(scope, receive, send)
            if _declared_length(scope) > MAX_BODY_BYTES:
                return await JSONResponse({"error": TOO_LARGE}, status_code=413)(scope, receive, send)
            self._inside += 1
            try:
                body = await _whole_body(scope, receive, send)
                if body is None:
                    return
                write = writes(scope, body)
                try:
                    async with asyncio.timeout(QUEUE_WAIT_S):
                        await self._acquire(write=write)
                except TimeoutError:
                    return await unavailable_response(OVERLOADED)(scope, receive, send)
                global _running_requests
                _running_requests += 1
                try:
                    await app(scope, replaying(body, receive), send)
                finally:
                    _running_requests -= 1
                    self._release(write=write)
            finally:
                self._inside -= 1

        return gated

    async def _acquire(self, *, write: bool) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (time.monotonic(), waiter)
        queue = self._writes if write else self._reads
        queue.append(entry)
        self._dispatch()
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._release(write=write)  # handed a slot as it gave up: pass the slot on
            else:
                with suppress(ValueError):  # already dropped by _dispatch as abandoned
                    queue.remove(entry)
            raise

    def _release(self, *, write: bool) -> None:
        self._free += 1
        if write:
            self._writes_running -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand the free slots to waiters: reads first, unless a write has waited too long; a write only
        while fewer than WRITES_PER_PROCESS run."""
        while self._free > 0:
            _drop_abandoned(self._reads)
            _drop_abandoned(self._writes)
            write_may_run = bool(self._writes) and self._writes_running < WRITES_PER_PROCESS
            overdue = write_may_run and time.monotonic() - self._writes[0][0] >= READ_PRIORITY_S
            if self._reads and not overdue:
                queue, write = self._reads, False
            elif write_may_run:
                queue, write = self._writes, True
            else:
                return
            _enqueued, waiter = queue.popleft()
            self._free -= 1
            if write:
                self._writes_running += 1
            waiter.set_result(None)


def _drop_abandoned(queue: deque[tuple[float, asyncio.Future[None]]]) -> None:
    """Waiters that gave up (cancelled: the client went away or the queue wait ran out) leave the queue."""
    while queue and queue[0][1].done():
        queue.popleft()


async def _whole_body(scope: Scope, receive: Receive, send: Send) -> bytes | None:
    """The request's whole body, or None when it ended early or grew past MAX_BODY_BYTES (answered here).

    The MCP SDK logs a body that ends early as an ERROR with a traceback and answers 500; read here, it is
    the client's doing: logged at info, answered 408 (if the client still listens). Bodies are small
    (Django refuses more than DATA_UPLOAD_MAX_MEMORY_SIZE), so holding one in memory costs little.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            log.info("request body incomplete or client disconnected", extra={"path": scope["path"]})
            # 408: the server stopped waiting for the rest (gunicorn's --timeout); a client that went away
            # never reads it.
            with suppress(OSError):
                await JSONResponse({"error": INCOMPLETE_BODY}, status_code=408)(scope, receive, send)
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            # More than it announced (or announced nothing): refused before it takes more memory.
            with suppress(OSError):
                await JSONResponse({"error": TOO_LARGE}, status_code=413)(scope, receive, send)
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _declared_length(scope: Scope) -> int:
    """The request's Content-Length, or 0 when it has none or an unreadable one (the body's own length is
    then counted as it arrives)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives an already read body as one message, then whatever `receive` gives next
    (the disconnect, when it comes)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
