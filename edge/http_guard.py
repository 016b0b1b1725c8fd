"""The checks in front of every HTTP surface: Host allowlist, cross-origin protection, API key (spec §1.15).

Django's own ALLOWED_HOSTS check cannot be used: /mcp is served by the MCP SDK and never passes through
Django's middleware, and /healthz and /readyz must answer whatever Host a container health check sends.
So each rule lives here, once, as a plain function; the Django middleware below and the ASGI
`RequestGuard` (in front of /mcp, and of the REST API) both call them.
"""

import logging
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from edge.auth import authenticated_as, caller_from_authorization
from edge.backpressure import (
    WriteCheck,
    database_unavailable,
    replaying,
    rest_writes,
    unavailable_response,
)
from kenfold.net import cross_origin_refusal, host_allowed
from kenfold_common.errors import AuthenticationFailed
from oauth.resource import ALL_SCOPES as OAUTH_SCOPES
from oauth.resource import challenge as oauth_challenge

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
# The spec's text first (clients may match it), then what the owner of the server can do about it.
HOST_FORBIDDEN = (
    "forbidden: host not allowed; if this server should answer to this host name, add it to "
    "KENFOLD_ALLOWED_HOSTS on the server (comma-separated)"
)
AUTH_CHECK_FAILED = "internal error while checking the API key; the Kenfold server log has details"


class HostAllowlistMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path not in OPEN_PATHS and not host_allowed(request.META.get("HTTP_HOST", "")):
            return JsonResponse({"error": HOST_FORBIDDEN}, status=403)
        return self.get_response(request)


class RequestGuard:
    """ASGI wrapper for API surfaces, outermost first: Host allowlist (403), cross-origin protection (403),
    then the bearer API key or OAuth access token (401), unless KENFOLD_AUTH=none; a read-only OAuth
    grant asking to write gets 403 insufficient_scope.

    The authenticated caller is bound to the request's context for the wrapped app (edge.auth). A key
    is looked up on every request, so a revoked key fails on its very next one. The lookup needs the
    database: wrap this in a Django request scope.
    """

    def __init__(self, app: ASGIApp, *, writes: WriteCheck = rest_writes) -> None:
        self.app = app
        self.writes = writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = Headers(scope=scope)
        if not host_allowed(headers.get("host", "")):
            return await _error(403, HOST_FORBIDDEN)(scope, receive, send)
        refusal = cross_origin_refusal(
            sec_fetch_site=headers.get("sec-fetch-site"),
            origin=headers.get("origin"),
            host=headers.get("host", ""),
        )
        if refusal is not None:
            return await _error(403, refusal)(scope, receive, send)
        if settings.AUTH_MODE == "none":
            return await self.app(scope, receive, send)
        try:
            caller = await sync_to_async(caller_from_authorization, thread_sensitive=True)(
                headers.get("authorization")
            )
        except AuthenticationFailed as exc:
            return await _error(401, exc.message, {"WWW-Authenticate": _challenge(headers)})(
                scope, receive, send
            )
        except Exception as exc:
            # The database (or something else) failed: the key may be fine, so this is not a 401, which
            # would make clients throw their key away. A database that is down or busy is a 503 the
            # client may retry; anything else is our bug.
            if database_unavailable(exc):
                log.warning("API key check: database unavailable", exc_info=True)
                return await unavailable_response()(scope, receive, send)
            log.exception("API key check failed")
            return await _error(500, AUTH_CHECK_FAILED)(scope, receive, send)
        if caller.oauth_grant is not None and caller.read_only:
            body = await _read_body(receive)
            if self.writes(scope, body):
                return await _error(
                    403,
                    "insufficient_scope: this client was granted read-only access; "
                    "it needs memory:write, which the owner can grant by connecting it again",
                    {"WWW-Authenticate": oauth_challenge(error="insufficient_scope", scope=OAUTH_SCOPES)},
                )(scope, receive, send)
            receive = replaying(body, receive)
        with authenticated_as(caller):
            await self.app(scope, receive, send)


def _challenge(headers: Headers) -> str:
    """401's WWW-Authenticate: with OAuth on, where a client finds the authorization server (RFC 9728)."""
    if not settings.PUBLIC_URL:
        return "Bearer"
    given = bool(headers.get("authorization"))
    return oauth_challenge(error="invalid_token" if given else None)


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)
