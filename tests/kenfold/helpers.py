"""Running Kenfold processes for end-to-end tests: manage.py commands and real HTTP servers."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def kenfold_env(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("KENFOLD_")}
    env |= {
        "KENFOLD_HOME": str(home),
        "KENFOLD_EMBEDDED_DURABLE": "false",
        "DJANGO_SETTINGS_MODULE": "kenfold.settings",
    }
    return env | extra


def manage(home: Path, *args: str, check: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=kenfold_env(home, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def wait_for_http(url: str, *, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"nothing answered at {url} within {timeout} s")


@contextmanager
def running(argv: list[str], *, env: dict[str, str], ready_url: str) -> Iterator[subprocess.Popen[str]]:
    """Run a server in its own process group until the block ends; then stop the whole group.

    Its output goes to a file, not a pipe: a chatty server (access logs) would block once a pipe that
    nobody reads is full. `server_output(proc)` reads it.
    """
    log = tempfile.NamedTemporaryFile("w+", prefix="kenfold-server-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(
        argv,
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    proc.log_path = log.name
    try:
        wait_for_http(ready_url)
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def server_output(proc: subprocess.Popen[str]) -> str:
    return Path(proc.log_path).read_text()
