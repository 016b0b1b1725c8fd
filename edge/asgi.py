"""ASGI entry point (gunicorn -k asgi): a small router in front of Django and the MCP endpoint.

`/mcp` (exact match, so `/mcp-anything` stays Django's) goes to the guarded MCP endpoint built in
edge.mcp.transports; `/api/…` to Django behind the same guard; everything else to Django. The
lifespan protocol goes to the MCP SDK's app, which needs it to start its task group; Django's ASGI
handler does not support lifespan.
"""

import logging
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")

from django.core.asgi import get_asgi_application

# Sets Django up before anything below imports models.
django_app = get_asgi_application()

from django.conf import settings  # noqa: E402
from starlette.types import Receive, Scope, Send  # noqa: E402

from edge.backpressure import AdmissionGate, rest_writes  # noqa: E402
from edge.http_guard import RequestGuard  # noqa: E402
from edge.mcp.transports import MCP_PATH, DjangoRequestScope, build_http_app, mcp_writes  # noqa: E402

log = logging.getLogger(__name__)

# One gate for both API surfaces, in front of everything else: a request beyond the queue's bound costs no
# key lookup, no thread and no database connection (edge.backpressure).
gate = AdmissionGate()
mcp_guarded, mcp_sdk_app = build_http_app()
mcp_endpoint = gate.wrap(mcp_guarded, writes=mcp_writes)
# The REST API sits behind the same guard as /mcp (Host allowlist, cross-origin protection, API key).
API_PREFIX = "/api/"
api_endpoint = gate.wrap(DjangoRequestScope(RequestGuard(django_app)), writes=rest_writes)

if settings.AUTH_MODE == "none":
    log.warning(
        "KENFOLD_AUTH=none: every request is trusted and no API key is checked; "
        "use it only on a machine nobody else can reach"
    )


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        return await mcp_sdk_app(scope, receive, send)
    if scope["type"] == "http" and scope["path"] == MCP_PATH:
        return await mcp_endpoint(scope, receive, send)
    if scope["type"] == "http" and scope["path"].startswith(API_PREFIX):
        return await api_endpoint(scope, receive, send)
    return await django_app(scope, receive, send)
