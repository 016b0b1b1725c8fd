"""Backpressure: a bounded number of requests at work per process, a bounded queue, 503 beyond it.

Without it every request took a thread and then waited for one of the pool's connections; at 16 agents
the pool ran dry, requests failed with PoolTimeout after 3 s (HTTP 500, "internal error") and the threads
fighting over two cores made the survivors slow too (issue 14). Now at most ACTIVE_PER_PROCESS requests
run at once, which is less than the pool's size, so a request that runs always gets a connection; up to
QUEUE_PER_PROCESS more wait their turn, each at most QUEUE_WAIT_S; anything beyond gets 503 with
Retry-After before a byte of its body is read. A database that is down or overloaded is also a 503 (never
a 500): `database_unavailable` names those errors for every edge that translates errors.
"""

import asyncio
import logging
import os
from contextlib import suppress

import psycopg
from django.db import utils as db_utils
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenfold.embedded_db import EmbeddedDatabaseError

log = logging.getLogger(__name__)

# Requests are mostly CPU (embedding the text, ranking) on the machine's cores plus short queries; two per
# core per process keeps the cores busy while one waits for PostgreSQL, without the thrashing seen at 32.
ACTIVE_PER_PROCESS = max(2, 2 * (os.cpu_count() or 1))
# The pool holds more connections than can be in use, so that a running request never waits for one; the
# extra ones serve what runs outside the gate (dashboard pages, the readiness probe's schema check).
POOL_SIZE = ACTIVE_PER_PROCESS + 4
QUEUE_PER_PROCESS = 64
QUEUE_WAIT_S = 20.0
RETRY_AFTER_S = 2
OVERLOADED = "Kenfold is busy: too many requests are waiting; retry in a few seconds"
DATABASE_UNAVAILABLE = "Kenfold's database is unavailable or overloaded right now; retry in a few seconds"
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


def unavailable_response(message: str = DATABASE_UNAVAILABLE) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})


class AdmissionGate:
    """ASGI wrapper: lets ACTIVE_PER_PROCESS requests in at once and queues QUEUE_PER_PROCESS more.

    One instance is shared by every surface it wraps, so the bound is per process. It is also the edge for
    requests that end early: a body shorter than its Content-Length (the client stops sending, or goes
    away) is answered 408 and logged at info, not as an ERROR traceback and a 500.
    """

    def __init__(self) -> None:
        self._running = asyncio.Semaphore(ACTIVE_PER_PROCESS)
        self._waiting = 0

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def gated(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                return await app(scope, receive, send)
            if self._running.locked() and self._waiting >= QUEUE_PER_PROCESS:
                return await unavailable_response(OVERLOADED)(scope, receive, send)
            self._waiting += 1
            try:
                async with asyncio.timeout(QUEUE_WAIT_S):
                    await self._running.acquire()
            except TimeoutError:
                return await unavailable_response(OVERLOADED)(scope, receive, send)
            finally:
                self._waiting -= 1
            try:
                await _answer_incomplete_requests(app, scope, receive, send)
            finally:
                self._running.release()

        return gated


async def _answer_incomplete_requests(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Read the whole body first, then hand it to `app`.

    The MCP SDK logs a body that ends early as an ERROR with a traceback and answers 500; read here, it is
    the client's doing: logged at info, answered 408 (if the client still listens). Bodies are small
    (Django refuses more than DATA_UPLOAD_MAX_MEMORY_SIZE), so holding one in memory costs little.
    """
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            log.info("request body incomplete or client disconnected", extra={"path": scope["path"]})
            # 408: the server stopped waiting for the rest (gunicorn's --timeout); a client that went away
            # never reads it.
            with suppress(OSError):
                await JSONResponse({"error": INCOMPLETE_BODY}, status_code=408)(scope, receive, send)
            return
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    await app(scope, replaying(b"".join(chunks), receive), send)


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
