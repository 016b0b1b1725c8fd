"""Liveness and readiness, open to any Host and without auth (container health checks use them)."""

import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from kenfold.schema import schema_is_current

log = logging.getLogger(__name__)

# Once the schema has been seen current it stays current for this process: new migrations only arrive
# with new code, which means a restart. Caching it keeps /readyz to one cheap query.
_schema_current = False


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    global _schema_current
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout = 2000")
            cursor.execute("SELECT 1")
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
