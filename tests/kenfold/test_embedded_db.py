"""The embedded PostgreSQL server: shared by processes, robust to stale files and crashing clients.

Each test uses a home of its own (not the suite's cluster) and stops its server at the end.
"""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from bench.support.processes import REPO, kenfold_env, manage, stop_cluster
from kenfold.embedded_db import EmbeddedCluster


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    yield home
    stop_cluster(home)


def test_two_processes_starting_at_once_share_one_server(home: Path) -> None:
    starters = [
        subprocess.Popen(
            [sys.executable, "manage.py", "db", "start"],
            cwd=REPO,
            env=kenfold_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = sorted(proc.communicate(timeout=120)[0].strip() for proc in starters)
    assert all(proc.returncode == 0 for proc in starters)
    assert outputs == ["already running", "started"]

    cluster = EmbeddedCluster(home=home)
    pid = cluster.status().pid
    assert pid is not None
    assert manage(home, "db", "start").stdout.strip() == "already running"
    assert cluster.status().pid == pid, "the running server is reused"
    status = manage(home, "db", "status").stdout
    assert f"running (pid {pid})" in status and str(home / "pgdata") in status


def test_stale_pid_file_of_an_unrelated_live_process_does_not_block_a_start(home: Path) -> None:
    cluster = EmbeddedCluster(home=home, durable=False)
    cluster.start()
    assert cluster.stop()
    # After a crash and a reboot the old postmaster's pid may belong to anything; PostgreSQL alone would
    # then refuse to start ("lock file already exists").
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        pid_file = home / "pgdata" / "postmaster.pid"
        pid_file.write_text(f"{bystander.pid}\n{home / 'pgdata'}\n")
        assert cluster.start() is True
        assert cluster.status().pid not in (None, bystander.pid)
        assert bystander.poll() is None, "the unrelated process is left alone"
    finally:
        bystander.kill()


def test_a_crashing_or_interrupted_client_does_not_take_the_server_down(home: Path) -> None:
    # The client starts as a program run from a terminal does: Ctrl-C interrupts it. A child inherits an
    # ignored or blocked SIGINT from whatever started it, and in a full run the test worker's state is not
    # a terminal's (twice the interrupted client never exited), so the script sets SIGINT's default itself.
    # Not signal.pause(): a signal landing before the pause would be handled only by the next one.
    script = (
        "import signal, time, django;"
        "signal.signal(signal.SIGINT, signal.default_int_handler);"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT});"
        "django.setup();"
        "from django.db import connection; connection.ensure_connection();"
        "print('connected', flush=True)\n"
        "while True: time.sleep(0.1)"
    )
    for how in (signal.SIGKILL, signal.SIGINT):
        client = subprocess.Popen(
            [sys.executable, "-c", script],
            cwd=REPO,
            env=kenfold_env(home),
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert client.stdout is not None and client.stdout.readline().strip() == "connected"
        # Ctrl-C in a terminal reaches the whole foreground process group, so signal the group.
        os.killpg(client.pid, how)
        try:
            client.wait(timeout=30)
        except subprocess.TimeoutExpired:
            status = Path(f"/proc/{client.pid}/status").read_text()
            client.kill()
            client.wait()
            pytest.fail(f"the client did not end after {how.name}; its state then:\n{status}")
        cluster = EmbeddedCluster(home=home)
        assert cluster.status().running, f"server still up after the client got {how.name}"
        with psycopg.connect(**cluster.superuser_conninfo(cluster.database)) as conn:
            assert conn.execute("SELECT extname FROM pg_extension ORDER BY 1").fetchall() == [
                ("pg_trgm",),
                ("plpgsql",),
                ("vector",),
            ]


def test_app_role_is_not_a_superuser(home: Path) -> None:
    cluster = EmbeddedCluster(home=home, durable=False)
    cluster.start()
    with psycopg.connect(**cluster.superuser_conninfo()) as conn:
        superuser, createdb = conn.execute(
            "SELECT rolsuper, rolcreatedb FROM pg_roles WHERE rolname = %s", [cluster.app_role]
        ).fetchone()
    assert (superuser, createdb) == (False, True)
    socket_mode = (cluster.socket_dir / f".s.PGSQL.{cluster.port}").stat().st_mode & 0o777
    assert socket_mode == 0o700, "no other local user may connect to the trust-authenticated socket"


def test_db_commands_refuse_to_manage_an_external_server(tmp_path: Path) -> None:
    result = manage(
        tmp_path, "db", "stop", check=False, KENFOLD_DATABASE_URL="postgres://kenfold@127.0.0.1:1/kenfold"
    )
    assert result.returncode != 0 and "does not start or stop that server" in result.stderr


def test_memory_settings_are_sized_to_the_machine_and_can_be_set(home: Path) -> None:
    from kenfold.embedded_db import machine_memory_mb, memory_settings

    ram = machine_memory_mb()
    sized = memory_settings()
    assert sized["shared_buffers"] == f"{max(128, min(ram // 4, 4096))}MB"
    assert memory_settings(256)["shared_buffers"] == "256MB"

    # Through the real server: the owner's setting wins, and JIT (slow on big searches) is off.
    manage(home, "db", "start", KENFOLD_EMBEDDED_MEMORY_MB="192")
    cluster = EmbeddedCluster(home=home)
    with psycopg.connect(**cluster.superuser_conninfo()) as conn:
        shown = {
            name: conn.execute(f"SHOW {name}").fetchone()[0] for name in ("shared_buffers", "jit", "work_mem")
        }
    assert shown == {"shared_buffers": "192MB", "jit": "off", "work_mem": sized["work_mem"]}


def _postmaster_uid(home: Path) -> int:
    import psutil

    pid = EmbeddedCluster(home=home).status().pid
    assert pid is not None, f"no server runs for {home}"
    return psutil.Process(pid).uids().real


def test_many_processes_starting_at_once_on_a_machine_without_the_server_user(tmp_path: Path) -> None:
    """The first start on a new machine: web, worker, commands of several homes start together.

    As root the server runs as a system user created on first use; this uses a name that does not exist
    yet, so the processes race to create it (the race that once left initdb running as a deleted uid).
    """
    import pwd
    import secrets as token

    user = f"kenfold-r{token.token_hex(4)}"
    with pytest.raises(KeyError):
        pwd.getpwnam(user)
    homes = [tmp_path / name for name in ("a", "b", "c")]
    connect = (
        "import django; django.setup(); from django.db import connection; connection.ensure_connection()"
    )
    commands = [
        (homes[0], [sys.executable, "manage.py", "db", "start"]),
        (homes[0], [sys.executable, "manage.py", "db", "start"]),
        (homes[0], [sys.executable, "-c", connect]),
        (homes[1], [sys.executable, "manage.py", "db", "start"]),
        (homes[1], [sys.executable, "-c", connect]),
        (homes[2], [sys.executable, "manage.py", "db", "start"]),
    ]
    try:
        starters = [
            subprocess.Popen(
                argv,
                cwd=REPO,
                env=kenfold_env(home, KENFOLD_EMBEDDED_SERVER_USER=user),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for home, argv in commands
        ]
        results = [proc.communicate(timeout=180) for proc in starters]
        failures = [err for proc, (_, err) in zip(starters, results, strict=True) if proc.returncode != 0]
        assert failures == []
        if os.geteuid() == 0:
            entry = pwd.getpwnam(user)
            assert pwd.getpwuid(entry.pw_uid).pw_name == user
            expected_uid = entry.pw_uid
        else:
            expected_uid = os.geteuid()
            with pytest.raises(KeyError):
                pwd.getpwnam(user)
        assert [_postmaster_uid(home) for home in homes] == [expected_uid] * 3
    finally:
        for home in homes:
            EmbeddedCluster(home=home, server_user=user).stop()
        if os.geteuid() == 0:
            subprocess.run(["userdel", user], check=False, capture_output=True)


def test_a_bad_server_user_name_is_refused_without_echoing_it(tmp_path: Path) -> None:
    result = manage(tmp_path, "db", "status", check=False, KENFOLD_EMBEDDED_SERVER_USER="No Such;User")
    assert result.returncode != 0
    assert "KENFOLD_EMBEDDED_SERVER_USER must be a system user name" in result.stderr
    assert "No Such;User" not in result.stderr + result.stdout


_CREATE_USER_AT = """
import pwd, sys, time
from kenfold.embedded_db import _ensure_system_user
name, start = sys.argv[1], float(sys.argv[2])
while time.time() < start:
    pass
_ensure_system_user(name)
uid = pwd.getpwnam(name).pw_uid
time.sleep(1)  # long enough for a racing useradd to have replaced the entry
print(uid, pwd.getpwuid(uid).pw_name)
"""


def test_processes_creating_the_server_user_at_the_same_instant_all_get_one_uid(tmp_path: Path) -> None:
    """Two `useradd`s of one name that start together both succeed, and the second replaces the first's
    entry with another uid: the first process then ran initdb as a uid that no user has. Started at one
    instant (not staggered by Django's start-up), unserialised creation loses a uid on every run here."""
    import pwd
    import secrets as token
    import time

    if os.geteuid() != 0:
        # Not root: no user is created; the server runs as the current user.
        assert EmbeddedCluster(home=tmp_path).status().server_user == pwd.getpwuid(os.geteuid()).pw_name
        return
    user = f"kenfold-u{token.token_hex(4)}"
    start = str(time.time() + 3)
    try:
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", _CREATE_USER_AT, user, start],
                cwd=REPO,
                env=kenfold_env(tmp_path),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        outputs = [proc.communicate(timeout=60) for proc in racers]
        assert [proc.returncode for proc in racers] == [0] * 4, outputs
        uid = pwd.getpwnam(user).pw_uid
        assert sorted(out.strip() for out, _ in outputs) == [f"{uid} {user}"] * 4
    finally:
        subprocess.run(["userdel", user], check=False, capture_output=True)
