"""Running Kenfold processes from outside: manage.py commands, servers on free ports, the embedded cluster.

Shared by the tests and the latency benchmark (`python -m bench.latency`, which imports this module with
the repository root on sys.path). `repo` is the checkout whose code a child runs; the default is this one,
the benchmark passes another to measure older code with the same driver.
"""

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from kenfold.embedded_db import EmbeddedCluster

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# tests/conftest.py's `database_home`: `with database_home(path) as home:` gives a migrated home on a
# database of its own.
DatabaseHome = Callable[[Path], AbstractContextManager[Path]]

# Homes whose children use a database of the test run's own cluster instead of a cluster in the home
# (tests/conftest.py's `module_home`): the variables that name that database, by home.
_home_databases: dict[Path, dict[str, str]] = {}


def use_database(home: Path, variables: dict[str, str] | None) -> None:
    """From now on the children of `home` (`kenfold_env`) get `variables` (`database_variables`); None
    gives them the home's own embedded cluster again."""
    if variables is None:
        _home_databases.pop(home, None)
    else:
        _home_databases[home] = variables


def home_database(home: Path) -> dict[str, str]:
    """The variables `use_database` gave `home`, for a child whose environment is built by hand."""
    return _home_databases.get(home, {})


def database_variables(settings_dict: dict[str, Any], name: str) -> dict[str, str]:
    """KENFOLD_DATABASE_URL (and KENFOLD_DATABASE_PASSWORD) for the database `name` on the server that
    `settings_dict` (an entry of Django's DATABASES) connects to.

    The host goes in the query, not the URL's authority: a socket folder is a path, and a URL's host is
    read lower-cased."""
    where = {
        "host": settings_dict["HOST"] or settings_dict["OPTIONS"].get("host", ""),
        "port": str(settings_dict["PORT"] or ""),
    }
    query = "&".join(f"{key}={quote(value, safe='')}" for key, value in where.items() if value)
    variables = {"KENFOLD_DATABASE_URL": f"postgres://{quote(settings_dict['USER'])}@/{quote(name)}?{query}"}
    if settings_dict["PASSWORD"]:
        variables["KENFOLD_DATABASE_PASSWORD"] = settings_dict["PASSWORD"]
    return variables


def kenfold_env(home: Path, *, repo: Path = REPO, **extra: str) -> dict[str, str]:
    """A child's environment: none of this process's KENFOLD_* variables, a throwaway non-durable home,
    `repo`'s code on PYTHONPATH, the database given to `home` by `use_database` if any, then `extra`.

    KENFOLD_EMBEDDED_SERVER_USER is kept: `make test` as root names a fresh server user for the run, and a
    child must run its cluster as the same user this process checks and stops it as.

    PYTHONPATH is set, not inherited: the shared venv holds an editable install of one checkout, and a
    child of another checkout (gunicorn imports the app by name) must import its own code: the root, and
    client/ where the checkout has one (the client distribution, whose kenfold_common the server imports).
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("KENFOLD_") or key == "KENFOLD_EMBEDDED_SERVER_USER"
    }
    env |= {
        "KENFOLD_HOME": str(home),
        "KENFOLD_EMBEDDED_DURABLE": "false",
        "DJANGO_SETTINGS_MODULE": "kenfold.settings",
        "PYTHONPATH": os.pathsep.join(str(path) for path in (repo, repo / "client") if path.is_dir()),
    }
    return env | home_database(home) | extra


def manage(
    home: Path,
    *args: str,
    repo: Path = REPO,
    check: bool = True,
    timeout: float = 120,
    input: str | None = None,
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    """`manage.py *args` of `repo` for `home`, `input` on its stdin; with `check`, a non-zero exit raises
    with its output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=repo,
        env=kenfold_env(home, repo=repo, **extra),
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


@dataclass(frozen=True)
class Running:
    """A server started by `running`, and the file its output goes to."""

    process: subprocess.Popen[str]
    log_path: Path

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")


# Logs `running` made up itself: callers read them after the server stopped (its last lines), so they are
# removed when this process ends, not when the server does; before, every test run left them in /tmp.
_temporary_logs: list[Path] = []


@atexit.register
def _remove_temporary_logs() -> None:
    for path in _temporary_logs:
        path.unlink(missing_ok=True)


@contextmanager
def running(
    argv: list[str],
    *,
    env: dict[str, str],
    ready_url: str,
    cwd: Path = REPO,
    log_path: Path | None = None,
    timeout: float = 60,
) -> Iterator[Running]:
    """Run a server in its own process group until `ready_url` answers 200, yield it, then stop the group.

    Its output goes to a file (`log_path`, else a temporary one), not a pipe: a chatty server (access
    logs) would block once a pipe that nobody reads is full.
    """
    if log_path is None:
        with tempfile.NamedTemporaryFile(prefix="kenfold-server-", suffix=".log", delete=False) as handle:
            log_path = Path(handle.name)
        _temporary_logs.append(log_path)
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        started = Running(process=process, log_path=log_path)
        try:
            wait_ready(started, ready_url, timeout=timeout)
            yield started
        finally:
            _stop_group(process)


def wait_ready(server: Running, url: str, *, timeout: float) -> None:
    """Until `url` answers 200; fails with the server's last output if it exits or the time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"{server.process.args[0]} exited before {url} answered:\n{server.output()[-3000:]}"
            )
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer 200 within {timeout} s:\n{server.output()[-3000:]}")


def _stop_group(process: subprocess.Popen[str]) -> None:
    # The whole group, even if its leader has exited: `manage.py serve` execs gunicorn, whose workers (and
    # a qcluster) are its children, and `make run` leaves its children running when make itself ends.
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stop_cluster(home: Path) -> None:
    """Stop the embedded PostgreSQL of `home` (nothing happens if it is not running)."""
    EmbeddedCluster(home=home).stop()
