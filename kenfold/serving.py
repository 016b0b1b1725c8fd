"""One `serve` per KENFOLD_HOME and per address, said in a sentence when there already is one.

Without these checks a second `make run` printed gunicorn's "Connection in use" five times and a
traceback-like stack before giving up, and a second server on another port of the same home ran beside
the first without a word. The home's server holds an flock on KENFOLD_HOME/serve.lock for as long as it
runs (the lock dies with its process, so a crash never leaves it held); the file names its URL and pid.
"""

import errno
import fcntl
import http.client
import json
import os
import socket
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import psutil

LOCK_NAME = "serve.lock"
# The lock's file descriptor, kept open for the life of the process (and of the gunicorn it execs).
_held: list[int] = []


@dataclass(frozen=True)
class HomeServer:
    """The server that runs for a home, as it recorded itself."""

    url: str
    pid: int


def server_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def home_server(home: Path) -> HomeServer | None:
    """The `serve` running for `home`, or None."""
    try:
        fd = os.open(home / LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _recorded(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def claim_home(*, home: Path, url: str) -> HomeServer | None:
    """Become the home's server: None on success, else the server that already is.

    The descriptor is inheritable, so the lock stays held by the gunicorn that `serve` execs."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        running = _recorded(fd)
        os.close(fd)
        return running or HomeServer(url="(address not recorded yet)", pid=0)
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"url": url, "pid": os.getpid()}).encode())
    os.set_inheritable(fd, True)
    _held.append(fd)
    return None


def _recorded(fd: int) -> HomeServer | None:
    # The holder writes its URL just after taking the lock: a reader between the two finds the file empty.
    with suppress(OSError, ValueError, KeyError, TypeError):
        data = json.loads(os.pread(fd, 4096, 0))
        return HomeServer(url=str(data["url"]), pid=int(data["pid"]))
    return None


def address_taken(host: str, port: int) -> bool:
    """Whether gunicorn would fail to bind host:port (it binds with SO_REUSEADDR, so a port in TIME_WAIT
    is free)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def address_owner(host: str, port: int) -> str:
    """Who holds host:port, in words: a Kenfold server (its /healthz answers like ours), or a process by
    name and pid when this user may see it."""
    loopback = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    url = server_url(loopback, port)
    # http.client, not httpx: httpx logs each request at info, a line the owner did not ask for.
    probe = http.client.HTTPConnection(loopback, port, timeout=2)
    with suppress(OSError, ValueError, http.client.HTTPException):
        probe.request("GET", "/healthz")
        if json.loads(probe.getresponse().read(1024)) == {"status": "ok"}:
            return f"Kenfold is already running at {url}"
    probe.close()
    with suppress(psutil.Error, OSError):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                name = psutil.Process(conn.pid).name()
                return f"{host}:{port} is already in use by {name} (pid {conn.pid})"
    return f"{host}:{port} is already in use by another program"
