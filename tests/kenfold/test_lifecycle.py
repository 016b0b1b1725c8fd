"""Lifecycle mistakes a user makes answer with one sentence that says the fix (issue 34): a command on a home
without a database, a second server on a home or an address, Ctrl-C, `db stop` under a running server, a
misspelt KENFOLD_* variable. Real processes: `manage.py` commands and `serve` in subprocesses."""

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import httpx
import psutil
import pytest

from bench.support.processes import REPO, Running, free_port, kenfold_env, manage, stop_cluster, wait_ready
from edge.backpressure import DATABASE_STOPPED
from kenfold_common.env import documented_variables, unknown_variable_warnings


def _postgres_of(home: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = process.info["cmdline"] or []
        if process.info["name"] == "postgres" and str(home / "pgdata") in cmdline:
            found.append(process)
    return found


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{text}"
    return lines[0]


@pytest.mark.parametrize("argv", [["memory", "list"], ["key", "list"]])
def test_a_command_on_a_home_without_a_database_says_to_migrate_and_starts_nothing(
    tmp_path: Path, argv: list[str]
) -> None:
    home = tmp_path / "not-the-servers-home"
    result = manage(home, *argv, check=False)
    assert result.returncode != 0
    assert result.stdout == ""
    assert _one_line(result.stderr) == (
        f"CommandError: there is no Kenfold database in KENFOLD_HOME={home} yet: run `python manage.py "
        "migrate` to create it (`make run` does too), or set KENFOLD_HOME to the folder your server uses"
    )
    # No cluster was created there, and none runs for it.
    assert not (home / "pgdata").exists()
    assert _postgres_of(home) == []


def test_a_command_on_a_database_never_migrated_says_to_migrate(tmp_path: Path) -> None:
    home = tmp_path / "home"
    try:
        manage(home, "db", "start")
        result = manage(home, "memory", "list", check=False)
        assert result.returncode != 0
        assert result.stdout == "", "not even the table's header"
        assert _one_line(result.stderr) == (
            "CommandError: the database schema is out of date: run `python manage.py migrate` first "
            f"(`make run` migrates too); this is the database in KENFOLD_HOME={home}"
        )
    finally:
        stop_cluster(home)


def test_a_misspelt_variable_is_named_with_the_closest_real_one_and_client_variables_are_not(
    tmp_path: Path,
) -> None:
    result = manage(
        tmp_path / "home",
        "db",
        "status",
        KENFOLD_EMBEDING="local-secret-value",
        KENFOLD_URL="http://127.0.0.1:7077/mcp",
        KENFOLD_API_KEY="kf_notarealkey",
        KENFOLD_STATE_DIR=str(tmp_path),
    )
    assert _one_line(result.stderr) == (
        "WARNING: KENFOLD_EMBEDING is not a Kenfold setting and is ignored; did you mean KENFOLD_EMBED? "
        "(.env.example lists every setting)"
    )
    assert "local-secret-value" not in result.stdout + result.stderr, "a value may be a key: never echoed"
    assert "embedded PostgreSQL" in result.stdout, "the command still runs"


def test_every_variable_read_is_known_and_near_misses_are_matched() -> None:
    known = documented_variables(REPO / ".env.example")
    assert {"KENFOLD_HOME", "KENFOLD_EMBED", "KENFOLD_URL", "KENFOLD_API_KEY", "KENFOLD_STATE_DIR"} <= known
    assert unknown_variable_warnings(known, {name: "x" for name in known}) == []
    warnings = unknown_variable_warnings(
        known, {"KENFOLD_ALLOWED_HOST": "a", "KENFOLD_WORKER": "2", "KENFOLD_QQQZZZ": "1", "HOME": "/root"}
    )
    assert warnings == [
        "KENFOLD_ALLOWED_HOST is not a Kenfold setting and is ignored; did you mean KENFOLD_ALLOWED_HOSTS? "
        "(.env.example lists every setting)",
        "KENFOLD_QQQZZZ is not a Kenfold setting and is ignored (.env.example lists every setting)",
        "KENFOLD_WORKER is not a Kenfold setting and is ignored; did you mean KENFOLD_WORKERS? "
        "(.env.example lists every setting)",
    ]


@pytest.fixture(scope="module")
def home(cluster_home: Path) -> Path:
    """A cluster of the module's own: a test stops the database under a running server."""
    return cluster_home


def _start(home: Path, port: int, log_path: Path, **extra: str) -> subprocess.Popen[str]:
    """`serve --with-worker` as `make run` runs it, in a process group of its own like a terminal's job."""
    with open(log_path, "w") as log:
        return subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--with-worker"],
            cwd=REPO,
            env=kenfold_env(home, KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}", KENFOLD_WORKERS="1", **extra),
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def _wait_for(url: str, process: subprocess.Popen[str], log_path: Path, timeout: float = 90) -> None:
    wait_ready(Running(process=process, log_path=log_path), url, timeout=timeout)


def _ctrl_c(process: subprocess.Popen[str]) -> tuple[int, list[psutil.Process]]:
    """SIGINT to the process group, as a terminal sends it; the exit status and the children it had."""
    children = psutil.Process(process.pid).children(recursive=True)
    os.killpg(process.pid, signal.SIGINT)
    return process.wait(timeout=40), children


def _gone(processes: list[psutil.Process]) -> list[psutil.Process]:
    deadline = time.monotonic() + 5
    while True:
        alive = []
        for process in processes:
            try:
                if process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(process)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _clean_stop(output: str) -> None:
    for noise in ("Traceback", "KeyboardInterrupt", "SIGKILL", "SIGABRT", "terminate called", "[ERROR]"):
        assert noise not in output, f"{noise!r} on Ctrl-C:\n{output[-4000:]}"
    assert output.rstrip().endswith("Kenfold stopped."), output[-2000:]


def _kill_leftovers(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        for child in psutil.Process(process.pid).children(recursive=True):
            child.kill()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_a_second_server_and_db_stop_say_what_happens_and_ctrl_c_stops_cleanly(
    home: Path, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "serve.log"
    key = manage(home, "key", "create", "lifecycle").stdout.strip()
    server = _start(home, port, log_path, KENFOLD_EMBED="off")
    try:
        _wait_for(f"{url}/readyz", server, log_path)

        # The same home on another port.
        second = manage(home, "serve", check=False, KENFOLD_HTTP_ADDR=f"127.0.0.1:{free_port()}")
        assert second.returncode != 0 and second.stdout == ""
        assert _one_line(second.stderr) == (
            f"CommandError: Kenfold is already running for KENFOLD_HOME={home} at {url} (pid {server.pid}); "
            "stop it first (Ctrl-C in its terminal), or give this server another KENFOLD_HOME"
        )
        # Another home on the same address: nothing is created for it either.
        other = tmp_path / "other"
        taken = manage(other, "serve", "--migrate", check=False, KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}")
        assert taken.returncode != 0 and "Connection in use" not in taken.stderr
        assert _one_line(taken.stderr) == (
            f"CommandError: Kenfold is already running at {url}; stop it first, or set KENFOLD_HTTP_ADDR to "
            f"another address, e.g. 127.0.0.1:{port + 1}"
        )
        assert not (other / "pgdata").exists()

        # The owner stops the database: the command says what that means for the server, which says so.
        stopped = manage(home, "db", "stop")
        assert stopped.stdout.strip() == (
            f"stopped the embedded PostgreSQL of KENFOLD_HOME={home}. The Kenfold server at {url} keeps "
            "running but answers 503 (database stopped) until you run `manage.py db start`. A command or "
            "stdio MCP server started from now on starts it again."
        )
        try:
            readiness = httpx.get(f"{url}/readyz", timeout=10)
            assert (readiness.status_code, readiness.json()) == (
                503,
                {"status": "database unavailable", "detail": DATABASE_STOPPED},
            )
            request = httpx.get(
                f"{url}/api/v1/refs", params={"project": "p"}, headers={"Authorization": f"Bearer {key}"}
            )
            assert (request.status_code, request.json()) == (503, {"error": DATABASE_STOPPED})
        finally:
            manage(home, "db", "start")
        assert httpx.get(f"{url}/readyz", timeout=10).status_code == 200

        # (The log of the stopped database's requests above is the operator's, with its tracebacks.)
        before = len(log_path.read_text())
        status, children = _ctrl_c(server)
        assert status == 0
        assert _gone(children) == [], "the web server and the job worker stopped with it"
        _clean_stop(log_path.read_text()[before:])
    finally:
        _kill_leftovers(server)


def test_a_port_held_by_another_program_is_named_with_its_owner(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = manage(tmp_path / "home", "serve", check=False, KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}")
    assert result.returncode != 0 and "Connection in use" not in result.stderr
    line = _one_line(result.stderr)
    assert line.startswith(f"CommandError: 127.0.0.1:{port} is already in use by ")
    assert line.endswith(
        f"(pid {os.getpid()}); stop it first, or set KENFOLD_HTTP_ADDR to another address, "
        f"e.g. 127.0.0.1:{port + 1}"
    )


def test_ctrl_c_just_after_start_stops_cleanly(home: Path, tmp_path: Path) -> None:
    # At the first answer the web worker is still loading its local models (the default KENFOLD_EMBED) and
    # the job worker may be starting: the moments when a stop used to print a traceback or abort a worker.
    port = free_port()
    log_path = tmp_path / "serve.log"
    server = _start(home, port, log_path)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", server, log_path)
        status, children = _ctrl_c(server)
        assert status == 0
        assert _gone(children) == []
        _clean_stop(log_path.read_text())
    finally:
        _kill_leftovers(server)


def test_the_web_server_and_job_worker_end_when_serve_is_killed(home: Path, tmp_path: Path) -> None:
    # Their process groups are their own (Ctrl-C reaches serve alone), so a kill -9 of serve, or of `make
    # run`'s group, does not reach them: they must not run on as orphans.
    port = free_port()
    log_path = tmp_path / "serve.log"
    server = _start(home, port, log_path)
    children: list[psutil.Process] = []
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", server, log_path)
        children = psutil.Process(server.pid).children(recursive=True)
        assert len(children) >= 2, "a web server and a job worker"
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
        deadline = time.monotonic() + 30
        while (alive := _gone(children)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert alive == [], [process.cmdline() for process in alive]
    finally:
        for child in children:
            with suppress(psutil.NoSuchProcess):
                child.kill()
        _kill_leftovers(server)
