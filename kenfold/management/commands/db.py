"""`manage.py db status|start|stop`: the embedded PostgreSQL server of this KENFOLD_HOME."""

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from kenfold.embedded_db import EmbeddedDatabaseError
from kenfold.management.base import KenfoldCommand


class Command(KenfoldCommand):
    help = "Report on, start or stop the embedded PostgreSQL server (not used with KENFOLD_DATABASE_URL)."
    translated_errors = (*KenfoldCommand.translated_errors, EmbeddedDatabaseError)
    requires_system_checks: list[str] = []

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
            self.stdout.write("stopped" if cluster.stop() else "not running")
        else:
            status = cluster.status()
            state = f"running (pid {status.pid})" if status.running else "stopped"
            if not status.initialized:
                state = "not initialised (it is created on first use)"
            self.stdout.write(
                f"embedded PostgreSQL: {state}\ndata: {status.data_dir}\nsocket: {status.socket_dir}\n"
                f"server user: {status.server_user}"
            )
