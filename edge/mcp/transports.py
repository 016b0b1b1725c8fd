"""Serving the MCP server: the HTTP endpoint mounted by edge.asgi, and the per-request DB scope for stdio.

Both transports run the tools outside Django's request cycle, so each MCP request gets what Django gives
a view: its own DB thread for `sync_to_async(thread_sensitive=True)` (a ThreadSensitiveContext) and the
request_started / request_finished signals, which close the connection afterwards. Without them every
request would share one thread and a connection that is never closed (notes/mcp-sdk.md §3.3).
"""

import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from asgiref.sync import ThreadSensitiveContext
from django.core import signals
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from edge.http_guard import RequestGuard
from edge.mcp.server import build_server
from edge.mcp.tools import READ_ONLY_TOOLS

MCP_PATH = "/mcp"


class RequestThreads:
    """Single-thread executors for the requests' sync work: each serves one request at a time (so the
    request's DB calls share a thread and a connection, as in a Django view) and is kept for the next.

    A bare ThreadSensitiveContext starts a new thread for every request and ends it afterwards; under load
    that took 13 % of the samples in which a worker held the GIL (py-spy, docs/benchmarks.md). The
    admission gate bounds the requests in work at once, so few threads are ever needed; beyond `keep` idle
    ones, a returned executor is shut down.
    """

    def __init__(self, *, keep: int) -> None:
        self._idle: list[ThreadPoolExecutor] = []
        self._keep = keep

    def take(self) -> ThreadPoolExecutor:
        try:
            return self._idle.pop()
        except IndexError:
            return ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenfold-request")

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        if len(self._idle) < self._keep:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)


_request_threads = RequestThreads(keep=32)


@asynccontextmanager
async def django_request_scope() -> AsyncIterator[None]:
    executor = _request_threads.take()
    try:
        # The executor's thread runs every thread-sensitive call of this request (the key check, the
        # tool, the request signals that close its connection), one at a time and in order, so the next
        # request that takes it finds the connection already back in the pool.
        async with ThreadSensitiveContext(executor=executor):
            await signals.request_started.asend(sender=__name__)
            try:
                yield
            finally:
                await signals.request_finished.asend(sender=__name__)
    finally:
        _request_threads.give_back(executor)


class DjangoRequestScope:
    """ASGI wrapper: one Django request scope per HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        async with django_request_scope():
            await self.app(scope, receive, send)


async def stdio_request_scope(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """ServerMiddleware: one Django request scope per MCP request on stdio (notifications need none)."""
    if ctx.request_id is None:
        return await call_next(ctx)
    async with django_request_scope():
        return await call_next(ctx)


class PostOnly:
    """Stateless MCP has no stream to GET and no session to DELETE.

    Left to the SDK, a GET without MCP-Protocol-Version opens an SSE stream that stays open and idle
    forever (python-sdk issues #2474, #3492), so every other method is answered here.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "POST":
            response = JSONResponse(
                {"error": f"method {scope['method']} not allowed: MCP requests are POSTed to {MCP_PATH}"},
                status_code=405,
                headers={"Allow": "POST"},
            )
            return await response(scope, receive, send)
        await self.app(scope, receive, send)


def mcp_writes(scope: Scope, body: bytes) -> bool:
    """Whether a JSON-RPC body calls a tool that changes memory (anything but READ_ONLY_TOOLS). A body
    that is not JSON-RPC writes nothing; the SDK answers it with its own error."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    messages = message if isinstance(message, list) else [message]
    for item in messages:
        if isinstance(item, dict) and item.get("method") == "tools/call":
            params = item.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if name not in READ_ONLY_TOOLS:
                return True
    return False


def build_http_app() -> tuple[ASGIApp, Starlette]:
    """The guarded `/mcp` endpoint, and the SDK's own app (whose lifespan the router must run).

    Outermost first: Django request scope, RequestGuard (Host allowlist, cross-origin protection, API key),
    then the method check and the SDK's stateless JSON transport. The endpoint is only ever built
    together with the guard, so it cannot be served without authentication by mistake.
    """
    sdk_app = build_server().streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,  # any worker or replica answers any request; no Mcp-Session-Id
        json_response=True,  # one JSON body per POST: tools send no progress notifications
        # RequestGuard already checks Host and Origin against KENFOLD_ALLOWED_HOSTS (port ignored, which the
        # SDK's exact-match list cannot express). Passing settings explicitly also avoids the SDK's
        # default of a localhost-only allowlist, which would answer 421 to every other host.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return DjangoRequestScope(RequestGuard(PostOnly(sdk_app), writes=mcp_writes)), sdk_app
