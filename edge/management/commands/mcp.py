"""`python manage.py mcp`: the Kenfold MCP server over stdio, for clients that start it as a subprocess.

It uses the same database as `serve` (starting the embedded server if needed) and never migrates it.
stdout carries the protocol and nothing else: logs go to stderr (settings.LOGGING).
"""

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection

from edge.mcp.server import build_server
from edge.mcp.transports import stdio_request_scope
from kenfold.management.base import KenfoldCommand
from kenfold.schema import schema_behind_message, schema_is_current


class Command(KenfoldCommand):
    help = (
        "Serve the MCP tools over stdio. Writes are attributed to KENFOLD_AGENT, else to the client's "
        "name, else to `unknown`."
    )
    requires_system_checks: list[str] = []

    def handle(self, *args: object, **options: object) -> None:
        if not schema_is_current():
            raise CommandError(schema_behind_message())
        connection.close()
        build_server(agent=settings.STDIO_AGENT, middleware=[stdio_request_scope]).run("stdio")
