"""Liveness and readiness, open to any Host and without auth (container health checks use them), the
front page that says where everything is, and the few static files Kenfold serves itself."""

import logging

import psycopg
from django.conf import settings
from django.contrib.staticfiles.views import serve
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from edge.backpressure import DATABASE_STOPPED, database_stopped_by_owner
from kenfold.embedded_db import EmbeddedDatabaseError
from kenfold.schema import schema_is_current

log = logging.getLogger(__name__)

# Once the schema has been seen current it stays current for this process: new migrations only arrive
# with new code, which means a restart. Caching it keeps /readyz to one cheap query.
_schema_current = False
READY_TIMEOUT_S = 2


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    """`GET /`: where everything is, for someone who opened the server's address in a browser.

    No secrets and no database: it answers in whatever state the server is. The MCP endpoint's URL is
    built from the Host the request named, which the allowlist has already checked."""
    base = settings.PUBLIC_URL or request.build_absolute_uri("/").rstrip("/")
    dashboard = {
        "local": mark_safe(
            '<a href="/dashboard/">/dashboard/</a> (on this machine; log in with the owner password, set '
            "with <code>manage.py password</code>)"
        ),
        "remote": mark_safe('<a href="/dashboard/">/dashboard/</a>'),
        "off": mark_safe("off (<code>KENFOLD_DASHBOARD=off</code>)"),
    }[settings.DASHBOARD]
    key = (
        mark_safe("no API key needed (<code>KENFOLD_AUTH=none</code>)")
        if settings.AUTH_MODE == "none"
        else mark_safe(
            "with an API key (<code>manage.py key create NAME</code>) sent as "
            "<code>Authorization: Bearer &lt;key&gt;</code>"
        )
    )
    body = format_html(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Kenfold</title></head><body>"
        "<h1>Kenfold</h1><p>A memory server for coding agents.</p><ul>"
        "<li>MCP endpoint for agents: <code>{}/mcp</code>, {}</li>"
        "<li>Dashboard: {}</li>"
        "<li>REST API and its OpenAPI docs: <code>/api/v1/docs</code> (with the same API key)</li>"
        '<li>Health: <a href="/healthz">/healthz</a>, readiness: <a href="/readyz">/readyz</a></li>'
        "</ul></body></html>",
        base,
        key,
        dashboard,
    )
    return HttpResponse(body, content_type="text/html; charset=utf-8")


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    global _schema_current
    if not _database_answers():
        return _unavailable()
    try:
        if not _schema_current:
            if not schema_is_current():
                return JsonResponse({"status": "migrations pending"}, status=503)
            _schema_current = True
    except Exception:
        log.warning("readiness check failed", exc_info=True)
        return _unavailable()
    finally:
        connection.close()
    return JsonResponse({"status": "ready"})


def _unavailable() -> JsonResponse:
    """503 "database unavailable" (the status monitors match); when the owner stopped the database, the
    detail says so and how to start it, since waiting will not bring it back."""
    body = {"status": "database unavailable"}
    if database_stopped_by_owner():
        body["detail"] = DATABASE_STOPPED
    return JsonResponse(body, status=503)


def _database_answers() -> bool:
    """One direct connection with a short timeout, outside the pool: a pool waits for a connection up to
    its own timeout, and a health check must answer within two seconds."""
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    if cluster is not None:
        try:
            # Like any connection: started on first use, restarted after a crash, left stopped by the owner.
            cluster.ensure_started_once()
            cluster.restart_if_crashed()
        except EmbeddedDatabaseError:
            _log_unavailable("readiness check: the embedded database could not start")
            return False
    params = {key: value for key, value in connection.get_connection_params().items() if key != "context"}
    params.pop("cursor_factory", None)
    try:
        with psycopg.connect(**params, connect_timeout=READY_TIMEOUT_S) as probe:
            # LOCAL, inside the probe's transaction: behind a pooler in transaction mode a plain SET would
            # stay on the server connection and cut off other clients' long statements after two seconds.
            probe.execute(f"SET LOCAL statement_timeout = {READY_TIMEOUT_S * 1000}")
            probe.execute("SELECT 1")
    except psycopg.Error:
        _log_unavailable("readiness check: the database does not answer")
        return False
    return True


def _log_unavailable(message: str) -> None:
    # A database the owner stopped is no failure to explain with a traceback at every probe.
    if database_stopped_by_owner():
        log.info("readiness check: the database was stopped by its owner (manage.py db stop)")
    else:
        log.warning(message, exc_info=True)


@cache_control(max_age=3600)
def static_file(request: HttpRequest, path: str) -> HttpResponseBase:
    """A static file (the API docs' assets, the dashboard's CSS), read whole here.

    staticfiles' `serve` answers with a FileResponse, whose synchronous file iterator Django's ASGI
    handler can only read whole, in a thread, warning each time. These files are small (3.3 MB at most,
    a source map of the API docs), so the view, already in its own thread, reads them instead.
    """
    response = serve(request, path, insecure=True)
    if not response.streaming:
        return response  # 304 Not Modified, or an error page
    try:
        whole = HttpResponse(b"".join(response.streaming_content), status=response.status_code)
        for header, value in response.items():
            whole[header] = value
        return whole
    finally:
        response.close()
