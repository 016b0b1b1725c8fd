"""`manage.py db status|start|stop`: the embedded PostgreSQL server of this KENFOLD_HOME."""

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from kenfold.embedded_db import EmbeddedDatabaseError
from kenfold.management.base import KenfoldCommand
from kenfold.serving import home_server


class Command(KenfoldCommand):
    help = "Report on, start or stop the embedded PostgreSQL server (not used with KENFOLD_DATABASE_URL)."
    translated_errors = (*KenfoldCommand.translated_errors, EmbeddedDatabaseError)
    requires_system_checks: list[str] = []
    uses_tables = False  # `db start` creates the server

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "start", "stop"])

    def handle(self, *args: object, **options: object) -> None:
        cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
        if cluster is None:
            db = settings.DATABASES["default"]
            if options["action"] == "status":
                self.stdout.write(f"external server: {db['HOST'] or 'local socket'} database {db['NAME']}")
                return
            raise CommandError("KENFOLD_DATABASE_URL is set: Kenfold does not start or stop that server")
        if options["action"] == "start":
            started = cluster.start()
            self.stdout.write("started" if started else "already running")
        elif options["action"] == "stop":
            self.stdout.write(self._stopped(cluster.stop()))
        else:
            status = cluster.status()
            state = f"running (pid {status.pid})" if status.running else "stopped"
            if not status.initialized:
                state = "not created yet (`manage.py migrate`, `make run` or `db start` create it)"
            self.stdout.write(
                f"embedded PostgreSQL: {state}\ndata: {status.data_dir}\nsocket: {status.socket_dir}\n"
                f"server user: {status.server_user}"
            )

    def _stopped(self, was_running: bool) -> str:
        """What `db stop` did, and what it means for a server of this home that keeps running."""
        home = settings.KENFOLD_HOME
        if not was_running:
            return "not running"
        server = home_server(home)
        effect = (
            f"The Kenfold server at {server.url} keeps running but answers 503 (database stopped) until you "
            "run `manage.py db start`."
            if server
            else "Kenfold servers of this home answer 503 until you run `manage.py db start`."
        )
        return (
            f"stopped the embedded PostgreSQL of KENFOLD_HOME={home}. {effect} "
            "A command or stdio MCP server started from now on starts it again."
        )
