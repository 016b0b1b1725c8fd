"""`manage.py serve [--migrate] [--with-worker]`: check the database, then run gunicorn's ASGI server,
and with --with-worker the job worker (qcluster) beside it."""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import suppress

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError, CommandParser
from django.db import connection
from django.utils import timezone
from django_q.models import Schedule

from access.models import ApiKey
from edge.gunicorn_hooks import PR_SET_PDEATHSIG
from kenfold.management.base import KenfoldCommand
from kenfold.schema import schema_behind_message, schema_is_current
from kenfold.serving import address_owner, address_taken, claim_home, server_url
from memories.tasks import BACKFILL_TASK

WORKER_RESTART_DELAY = 5
STOP_TIMEOUT_S = 15
KEEP_ALIVE_S = 75


class Command(KenfoldCommand):
    help = "Serve Kenfold (MCP, REST, health) on KENFOLD_HTTP_ADDR with gunicorn."
    requires_system_checks: list[str] = []
    uses_tables = False  # it migrates with --migrate, and checks the schema itself

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--migrate", action="store_true", help="apply pending migrations first")
        parser.add_argument(
            "--with-worker", action="store_true", help="also run the background job worker (make run does)"
        )

    def handle(self, *args: object, **options: object) -> None:
        host, port = settings.HTTP_HOST, settings.HTTP_PORT
        url = server_url(host, port)
        # Before anything else (a migration, the banner): a second server is refused in one sentence.
        other = claim_home(home=settings.KENFOLD_HOME, url=url)
        if other is not None:
            pid = f" (pid {other.pid})" if other.pid else ""
            raise CommandError(
                f"Kenfold is already running for KENFOLD_HOME={settings.KENFOLD_HOME} at {other.url}{pid}; "
                "stop it first (Ctrl-C in its terminal), or give this server another KENFOLD_HOME"
            )
        if address_taken(host, port):
            raise CommandError(
                f"{address_owner(host, port)}; stop it first, or set KENFOLD_HTTP_ADDR to another address, "
                f"e.g. {server_url(host, port + 1 if port < 65535 else 7077).removeprefix('http://')}"
            )
        if options["migrate"] or settings.AUTO_MIGRATE:
            call_command("migrate", interactive=False, verbosity=0)
        if not schema_is_current():
            raise CommandError(schema_behind_message())
        has_keys = ApiKey.objects.filter(revoked_at__isnull=True).exists()
        if options["with_worker"]:
            # Backfill at start: memories written while no worker ran get their vectors now.
            Schedule.objects.filter(func=BACKFILL_TASK).update(next_run=timezone.now())
        connection.close()

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
            "edge.asgi:application",
            "--worker-class",
            "asgi",
            "--workers",
            str(settings.HTTP_WORKERS),
            "--bind",
            url.removeprefix("http://"),
            # Several Kenfold servers (other homes, tests) may run side by side; a shared control socket
            # path would make them collide.
            "--no-control-socket",
            "--graceful-timeout",
            "10",
            # An idle connection stays open longer than clients keep theirs (httpx 5 s, Node 4-5 s), so it
            # is the client that closes it. With gunicorn's default of 2 s, a client could send its next
            # request on a connection the server was closing at that moment: under load the request then
            # failed with "Server disconnected without sending a response" (issue 14, at 32 and 64
            # agents). An idle connection costs the async worker almost nothing.
            "--keep-alive",
            str(KEEP_ALIVE_S),
            # Workers quit the moment their master dies (edge.gunicorn_hooks).
            "--config",
            "python:edge.gunicorn_hooks",
            "--access-logfile",
            "-",
        ]
        if not options["with_worker"]:
            os.execv(gunicorn, argv)
        self._run_together(argv, [sys.executable, os.path.abspath(sys.argv[0]), "qcluster"])

    def _run_together(self, server: list[str], worker: list[str]) -> None:
        """Run the web server and the job worker until the server ends or we are told to stop.

        The worker is restarted if it dies (say, while the database was stopped): background jobs are
        retried later anyway, and they must never take the web server down with them.

        Each child runs in a process group of its own, so Ctrl-C in the terminal reaches this process
        only, which stops both with one SIGTERM each. When the terminal's SIGINT reached them too, a job
        worker still loading Django printed a KeyboardInterrupt traceback, and gunicorn's quick shutdown
        killed web workers that were still booting ("was sent SIGKILL! Perhaps out of memory?").
        """
        parent = os.getpid()

        def start(argv: list[str]) -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, process_group=0, preexec_fn=lambda: _die_with(parent))

        web = start(server)
        jobs = start(worker)
        stopping = False

        def stop(signum: int, frame: object) -> None:
            nonlocal stopping
            stopping = True
            for child in (web, jobs):
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        while web.poll() is None and not stopping:
            if jobs.poll() is not None:
                self.stderr.write(
                    f"The job worker exited ({jobs.returncode}); restarting it in {WORKER_RESTART_DELAY} s."
                )
                time.sleep(WORKER_RESTART_DELAY)
                if not stopping:
                    jobs = start(worker)
            time.sleep(0.5)
        stop(signal.SIGTERM, None)
        # One deadline for both, within the 20 s a supervisor (or the tests) waits before SIGKILL: gunicorn
        # lets requests finish for 10 s (--graceful-timeout).
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for child in (web, jobs):
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                # The child's whole group: the job worker's own worker processes too.
                with suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if stopping:
            self.stdout.write("Kenfold stopped.")
        sys.exit(0 if stopping else web.returncode or 0)

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


def _die_with(parent: int) -> None:
    """In a child of `serve --with-worker`, before it runs: end with a SIGTERM when `serve` dies.

    The children run in process groups of their own (so that Ctrl-C reaches `serve` alone), so a SIGKILL of
    `serve`, or of `make run`'s group, no longer reaches them: without this the web server and job worker
    ran on as orphans. SIGTERM lets each stop as on a normal shutdown.
    """
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    # `serve` may have died between the fork and the prctl; the signal would then never come.
    if os.getppid() != parent:
        os._exit(1)
