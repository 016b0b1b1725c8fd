"""Quiet by default (issue 34): an idle job worker writes nothing, a command run in a terminal prints no
JSON log lines (and no security events), and `manage.py help` lists Kenfold's commands first.

Each runs manage.py in a process of its own, as a person would; the terminal is a real pseudo-terminal.
"""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.support.processes import REPO, kenfold_env, manage, stop_cluster

OUR_COMMANDS = [
    "audit",
    "consolidate",
    "db",
    "eval",
    "export",
    "extract",
    "import",
    "key",
    "mcp",
    "memory",
    "oauth",
]
OUR_COMMANDS += ["password", "refs", "reindex", "scan", "serve"]


def on_a_terminal(home: Path, *args: str, stdin: str = "", timeout: float = 120) -> tuple[int, str]:
    """`manage.py *args` with stdout and stderr on a pseudo-terminal; its exit code and what it showed."""
    terminal, child_side = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=kenfold_env(home),
        stdin=subprocess.PIPE,
        stdout=child_side,
        stderr=child_side,
    )
    os.close(child_side)
    assert process.stdin is not None
    process.stdin.write(stdin.encode())
    process.stdin.close()
    shown = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([terminal], [], [], 0.5)[0]:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(terminal, 65536)
            except OSError:  # EIO: the command closed the terminal
                break
            if not data:
                break
            shown += data
        code = process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        os.close(terminal)
    return code, shown.decode(errors="replace").replace("\r\n", "\n")


def json_lines(text: str) -> list[dict]:
    lines = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            lines.append(value)
    return lines


@dataclass(frozen=True)
class Home:
    path: Path
    first_migrate: str  # what `manage.py migrate` showed on a terminal, creating the cluster


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    path = tmp_path_factory.mktemp("kenfold-quiet") / "home"
    try:
        code, shown = on_a_terminal(path, "migrate", "--verbosity", "0")
        assert code == 0, shown
        yield Home(path=path, first_migrate=shown)
    finally:
        stop_cluster(path)


def test_a_command_on_a_terminal_logs_plain_lines_not_json(home: Home) -> None:
    assert json_lines(home.first_migrate) == []
    assert home.first_migrate.startswith(
        f"info: initialising embedded PostgreSQL cluster (data_dir={home.path / 'pgdata'})\n"
    )


def test_a_command_on_a_terminal_prints_no_security_event_and_a_log_file_keeps_it(home: Home) -> None:
    code, shown = on_a_terminal(
        home.path, "password", "--stdin", "--no-color", stdin="correct horse battery\n"
    )
    assert (code, shown) == (0, "Owner password set; any consent lockout is cleared.\n")

    # Not a terminal (a service's log, cron's mail): the same event is a JSON line, as before.
    logged = subprocess.run(
        [sys.executable, "manage.py", "password", "--stdin"],
        cwd=REPO,
        env=kenfold_env(home.path),
        input="correct horse battery\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert logged.returncode == 0, logged.stderr
    [event] = json_lines(logged.stderr)
    assert (event["logger"], event["event"], event["level"]) == (
        "kenfold.security",
        "password changed",
        "warning",
    )


def test_the_idle_job_worker_writes_nothing_at_the_default_log_level(home: Home, tmp_path: Path) -> None:
    # Every scheduled job due now: the worker runs them (finding nothing to do) within its first 30 s.
    manage(
        home.path,
        "shell",
        "-c",
        "from django.utils import timezone\nfrom django_q.models import Schedule, Success\n"
        "Success.objects.all().delete()\nSchedule.objects.update(next_run=timezone.now())",
    )
    output = tmp_path / "qcluster.log"
    with open(output, "w") as log:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=REPO,
            env=kenfold_env(home.path),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        ran: list[str] = []
        time.sleep(30)  # django-q2 looks at the schedules every 30 s, not at start
        while time.monotonic() < deadline and len(ran) < 4:
            time.sleep(2)
            ran = json.loads(
                manage(
                    home.path,
                    "shell",
                    "-c",
                    "import json\nfrom django_q.models import Success\n"
                    "print(json.dumps(sorted(set(Success.objects.values_list('func', flat=True)))))",
                ).stdout.splitlines()[-1]
            )
        assert worker.poll() is None, output.read_text()
        assert output.read_text() == ""
    finally:
        os.killpg(worker.pid, signal.SIGINT)
        worker.wait(timeout=60)
    assert ran == [
        "consolidation.tasks.consolidation_tick",
        "memories.tasks.embeddings_backfill",
        "memories.tasks.extraction_drain",
        "memories.tasks.usage_prune_old",
        "oauth.tasks.prune_expired",
    ]


def test_help_lists_kenfolds_commands_first_and_djangos_behind_all(home: Home) -> None:
    shown = manage(home.path, "help").stdout
    heading, _, rest = shown.partition("Kenfold commands:\n")
    assert heading == "\nType 'manage.py help <command>' for help on a command.\n\n"
    listed = rest.split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in listed] == OUR_COMMANDS
    assert "    key          Create, list and revoke the API keys agents use to reach Kenfold." in listed
    assert rest.split("\n\n")[1] == (
        "Django's own commands (migrate, shell, ...) and those of the libraries: `manage.py help --all`.\n"
    )
    assert "migrate" not in rest.split("\n\n")[0] and "qcluster" not in shown

    every = manage(home.path, "help", "--all").stdout
    assert every.startswith(heading + "Kenfold commands:\n" + rest.split("\n\n")[0])
    djangos = every.partition("Django's and the libraries' commands:\n")[2]
    assert "[django]\n" in djangos and "    migrate\n" in djangos and "    qcluster\n" in djangos
    assert "    serve\n" not in djangos
