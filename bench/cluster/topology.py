"""The cluster's shape, one place for `bench/cluster/run.py` and the test that compares it with
docker-compose.scale.yml (tests/kenfold/test_cluster_shape.py): which processes, how many, what each gets,
and the pooler's and the balancer's configuration rendered for loopback from the files compose mounts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
HAPROXY_CFG = HERE / "haproxy.cfg"
PGBOUNCER_INI = HERE / "pgbouncer.ini"
ERROR_503 = HERE / "503-retry.http"

WEB_SERVERS = 3
JOB_WORKERS = 2
# gunicorn workers per web server (KENFOLD_WORKERS): with 3 servers on a 2-core machine, 2 each already
# give six processes to share two cores.
WEB_PROCESSES = 2
HEALTH_PATH = "/readyz"
POOL_MODE = "transaction"
# What every Kenfold process gets besides its address, database URL and secrets (compose's x-kenfold-env).
KENFOLD_ENV = {"KENFOLD_DATABASE_PREPARED": "false"}
# The variables both shapes set on every web server and worker: compared by the test.
SHARED_VARIABLES = (
    "KENFOLD_DATABASE_URL",
    "KENFOLD_DATABASE_PASSWORD",
    "KENFOLD_DATABASE_PREPARED",
    "KENFOLD_SECRET_KEY",
    "KENFOLD_PUBLIC_URL",
)
# The session setting Kenfold sends as a libpq option, which PgBouncer drops (ignore_startup_parameters):
# the database carries it instead.
DATABASE_SETTINGS = {"hnsw.iterative_scan": "relaxed_order"}


@dataclass(frozen=True)
class Ports:
    postgres: int
    pgbouncer: int
    haproxy: int
    web: tuple[int, ...]


def haproxy_config(ports: Ports, *, error_file: Path, state_socket: Path) -> str:
    """haproxy.cfg with the web servers on loopback: compose's `server-template` (Docker's DNS) becomes
    one `server` line per port, its `resolvers` section goes, the frontend binds 127.0.0.1, the 503
    page is read from `error_file`, and a stats socket lets the script see each server's state."""
    text = HAPROXY_CFG.read_text()
    servers = "\n".join(f"    server web-{n} 127.0.0.1:{port} check" for n, port in enumerate(ports.web, 1))
    text = re.sub(r"^    server-template .*$", servers, text, flags=re.M)
    text = re.sub(r"\nresolvers docker\n(    .*\n)+", "\n", text)
    text = text.replace("    bind *:8080", f"    bind 127.0.0.1:{ports.haproxy}")
    text = text.replace("/usr/local/etc/haproxy/errors/503-retry.http", str(error_file))
    return text.replace(
        "    log stdout format raw local0\n",
        f"    log stdout format raw local0\n    stats socket {state_socket} mode 600 level admin\n",
    )


def pgbouncer_config(ports: Ports, *, auth_file: Path, unix_dir: Path) -> str:
    """pgbouncer.ini pointing at the loopback PostgreSQL, listening on 127.0.0.1 only."""
    text = PGBOUNCER_INI.read_text()
    text = text.replace("host=db port=5432", f"host=127.0.0.1 port={ports.postgres}")
    text = text.replace("listen_addr = *", "listen_addr = 127.0.0.1")
    text = text.replace("listen_port = 6432", f"listen_port = {ports.pgbouncer}")
    text = text.replace("auth_file = /tmp/userlist.txt", f"auth_file = {auth_file}")
    return text + f"unix_socket_dir = {unix_dir}\n"


def ini_settings(text: str) -> dict[str, str]:
    """`name = value` lines of an ini file (sections merged; comments dropped)."""
    settings = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith((";", "#", "[")):
            name, _, value = line.partition("=")
            settings[name.strip()] = value.strip()
    return settings
