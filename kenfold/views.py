"""Liveness and readiness, open to any Host and without auth (container health checks use them), and
the few static files Kenfold serves itself."""

import logging

import psycopg
from django.conf import settings
from django.contrib.staticfiles.views import serve
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from kenfold.embedded_db import EmbeddedDatabaseError
from kenfold.schema import schema_is_current

log = logging.getLogger(__name__)

# Once the schema has been seen current it stays current for this process: new migrations only arrive
# with new code, which means a restart. Caching it keeps /readyz to one cheap query.
_schema_current = False
READY_TIMEOUT_S = 2


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    global _schema_current
    if not _database_answers():
        return JsonResponse({"status": "database unavailable"}, status=503)
    try:
        if not _schema_current:
            if not schema_is_current():
                return JsonResponse({"status": "migrations pending"}, status=503)
            _schema_current = True
    except Exception:
        log.warning("readiness check failed", exc_info=True)
        return JsonResponse({"status": "database unavailable"}, status=503)
    finally:
        connection.close()
    return JsonResponse({"status": "ready"})


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
            log.warning("readiness check: the embedded database could not start", exc_info=True)
            return False
    params = {key: value for key, value in connection.get_connection_params().items() if key != "context"}
    params.pop("cursor_factory", None)
    try:
        with psycopg.connect(**params, connect_timeout=READY_TIMEOUT_S) as probe:
            probe.execute(f"SET statement_timeout = {READY_TIMEOUT_S * 1000}")
            probe.execute("SELECT 1")
    except psycopg.Error:
        log.warning("readiness check: the database does not answer", exc_info=True)
        return False
    return True


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
