"""The REST API under /api/v1 (django-ninja): one NinjaAPI, routers from the apps, one error shape.

Requests reach it through edge.http_guard.RequestGuard (Host allowlist, cross-origin protection,
API key), like /mcp; the caller the guard authenticated is read here. Every error is
`{"error": "..."}` with a 4xx (5xx only for our own failures, whose details go to the log).
"""

import logging
from collections.abc import Callable
from typing import Literal

import pydantic
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security.http import HttpAuthBase
from pydantic import BaseModel, Field

from access.caller import Caller
from edge.auth import authenticated_caller, local_caller
from edge.backpressure import database_unavailable, database_unavailable_message
from kenfold.capacity import RETRY_AFTER_S
from kenfold.openapi import error_documentation, error_responses
from kenfold_common.errors import KenfoldError, QuotaExceeded

log = logging.getLogger(__name__)


class GuardBearer(HttpAuthBase):
    """The caller RequestGuard authenticated; with KENFOLD_AUTH=none, a full-access local caller.

    RequestGuard checked the API key or OAuth token before Django saw the request (edge.http_guard);
    this class authenticates nobody itself. It is a ninja HTTP auth class so that the OpenAPI document
    declares the bearer scheme every operation needs.
    """

    openapi_scheme = "bearer"
    openapi_description = (
        "An API key (`kf_…`, from `manage.py key create`) or, when KENFOLD_PUBLIC_URL is set, an OAuth "
        "access token (`kfa_…`), sent as `Authorization: Bearer <key or token>`."
    )

    def __call__(self, request: HttpRequest) -> Caller | None:
        caller = authenticated_caller()
        if caller is None and settings.AUTH_MODE == "none":
            return local_caller(configured_agent=None, client_name=request.headers.get("User-Agent"))
        return caller


api = NinjaAPI(
    title="Kenfold",
    version="1",
    description="REST API for clients that do not speak MCP, such as `kenfold refs sync`.",
    urls_namespace="api-v1",
    docs_url="/docs",
    auth=GuardBearer(),
)


def error(message: str, status: int, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse({"error": message}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


@api.exception_handler(KenfoldError)
def _domain_error(request: HttpRequest, exc: KenfoldError) -> HttpResponse:
    if isinstance(exc, QuotaExceeded):
        return error(exc.message, exc.status_code, {"Retry-After": str(exc.retry_after)})
    return error(exc.message, exc.status_code)


def _invalid_request(errors: list) -> HttpResponse:
    problems = []
    for item in errors[:5]:
        where = ".".join(
            str(part) for part in item.get("loc", ()) if part not in ("body", "payload", "query")
        )
        problems.append(f"{where or 'body'}: {item.get('msg', 'invalid')}")
    return error("invalid request: " + "; ".join(problems), 400)


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return _invalid_request(list(exc.errors))


@api.exception_handler(pydantic.ValidationError)
def _invalid_body(request: HttpRequest, exc: pydantic.ValidationError) -> HttpResponse:
    return _invalid_request(exc.errors(include_url=False, include_input=False))


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error(
        "missing API key: send the header `Authorization: Bearer <key>`", 401, {"WWW-Authenticate": "Bearer"}
    )


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error(str(exc), exc.status_code)


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return error("request body is larger than 1 MiB; send fewer results per request", 413)


@api.exception_handler(Exception)
def _internal(request: HttpRequest, exc: Exception) -> HttpResponse:
    if database_unavailable(exc):
        log.warning("REST request: database unavailable", exc_info=True, extra={"path": request.path})
        return error(database_unavailable_message(), 503, {"Retry-After": str(RETRY_AFTER_S)})
    log.exception("REST request failed", extra={"path": request.path})
    return error("internal error; the Kenfold server log has details", 500)


class ApiErrorShapeMiddleware:
    """Django answers a wrong method with a plain-text 405; under /api/ every error is JSON."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 405 and request.path.startswith("/api/"):
            allowed = response.get("Allow", "")
            return error(f"method {request.method} not allowed here; use {allowed}", 405, {"Allow": allowed})
        return response


def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return error(f"no such endpoint: {request.path}; see /api/v1/docs", 404)


class WhoAmIOutput(BaseModel):
    agent: str = Field(description="the agent this caller's writes are recorded as")
    read_only: bool = Field(description="true when the caller may search but not write")
    credential: Literal["api_key", "oauth", "none"] = Field(
        description="what authenticated the request (`none` on a server run with KENFOLD_AUTH=none)"
    )


_WHOAMI_ERRORS = (401, 403, 503)


@api.get(
    "/whoami",
    response={200: WhoAmIOutput, **error_responses(*_WHOAMI_ERRORS)},
    openapi_extra=error_documentation(*_WHOAMI_ERRORS),
)
def whoami(request: HttpRequest) -> WhoAmIOutput:
    """Who the key or token is: its agent and whether it is read-only (`kenfold connect` and `doctor`
    check a key with it before configuring an agent)."""
    caller: Caller = request.auth
    credential = "oauth" if caller.oauth_grant else "api_key" if authenticated_caller() else "none"
    return WhoAmIOutput(agent=caller.agent, read_only=caller.read_only, credential=credential)


api.add_router("/refs", "coderefs.api.router")
api.add_router("/docs", "projectdocs.api.router")
api.add_router("/usage", "memories.api.router")
