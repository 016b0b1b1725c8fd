"""`manage.py serve [--migrate]`: check the database, then run gunicorn with its ASGI worker."""

import os
import shutil
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories.models import ApiKey


class Command(BaseCommand):
    help = "Serve Kenfold (MCP, REST, health) on KENFOLD_HTTP_ADDR with gunicorn."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--migrate", action="store_true", help="apply pending migrations first")

    def handle(self, *args: object, **options: object) -> None:
        if options["migrate"] or settings.AUTO_MIGRATE:
            call_command("migrate", interactive=False, verbosity=0)
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            raise CommandError(
                "the database schema is out of date: run `python manage.py migrate` (or serve --migrate)"
            )
        has_keys = ApiKey.objects.filter(revoked_at__isnull=True).exists()
        connection.close()

        host, port = settings.HTTP_HOST, settings.HTTP_PORT
        shown_host = f"[{host}]" if ":" in host else host
        url = f"http://{shown_host}:{port}"
        self._warn(has_keys)
        self.stdout.write(
            f"Kenfold is starting on {url} (MCP endpoint {url}/mcp).\n"
            "Next steps:\n"
            "  1. Create a key for each agent:   .venv/bin/python manage.py key create claude-code\n"
            f"  2. Connect the agent, e.g.:       claude mcp add --transport http kenfold {url}/mcp "
            '--header "Authorization: Bearer <key>"\n'
            f"  3. Check readiness:               curl {url}/readyz\n"
        )
        self.stdout.flush()
        gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable)) or "gunicorn"
        argv = [
            gunicorn,
            "kenfold.asgi:application",
            "--worker-class",
            "asgi",
            "--workers",
            str(settings.HTTP_WORKERS),
            "--bind",
            f"{shown_host}:{port}",
            # Several Kenfold servers (other homes, tests) may run side by side; a shared control socket
            # path would make them collide.
            "--no-control-socket",
            "--graceful-timeout",
            "10",
            "--access-logfile",
            "-",
        ]
        os.execv(gunicorn, argv)

    def _warn(self, has_keys: bool) -> None:
        if settings.AUTH_MODE == "none":
            loopback = settings.HTTP_HOST in ("127.0.0.1", "::1", "localhost")
            self.stderr.write(
                "WARNING: KENFOLD_AUTH=none: every request is trusted and no API key is checked."
                + ("" if loopback else f" The server listens on {settings.HTTP_HOST}, beyond this machine!")
            )
        elif not has_keys:
            self.stderr.write(
                "No API keys exist yet: agents cannot connect until you create one (step 1 below)."
            )
