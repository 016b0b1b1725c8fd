"""docker-compose.scale.yml and `make bench-cluster` (bench/cluster) run the same shape (issue 40): the same
services and counts, the same settings on every Kenfold process, the pooler in transaction mode with
Kenfold's unprepared path, HAProxy checking /readyz and retrying only what is safe to retry. Both are
read as files here; no Docker is needed."""

from pathlib import Path

import pytest
import yaml

from bench.cluster import topology
from bench.support.processes import REPO

COMPOSE = yaml.safe_load((REPO / "docker-compose.scale.yml").read_text())
SERVICES = COMPOSE["services"]
PORTS = topology.Ports(postgres=15432, pgbouncer=16432, haproxy=18080, web=(17001, 17002, 17003))


def test_the_same_processes_in_the_same_numbers() -> None:
    assert set(SERVICES) == {"db", "pgbouncer", "migrate", "web", "worker", "haproxy"}
    assert SERVICES["web"]["deploy"]["replicas"] == topology.WEB_SERVERS
    assert SERVICES["worker"]["deploy"]["replicas"] == topology.JOB_WORKERS
    assert SERVICES["worker"]["command"] == ["python", "manage.py", "qcluster"]
    assert SERVICES["web"]["environment"]["KENFOLD_WORKERS"] == str(topology.WEB_PROCESSES)
    assert SERVICES["db"]["image"].startswith("pgvector/pgvector:pg18")


def test_every_kenfold_process_gets_the_same_settings_as_the_script_gives() -> None:
    shared = COMPOSE["x-kenfold-env"]
    for name in ("web", "worker"):
        environment = SERVICES[name]["environment"]
        assert {key: environment[key] for key in topology.SHARED_VARIABLES} == {
            key: shared[key] for key in topology.SHARED_VARIABLES
        }
        # Through the pooler, never straight to the database.
        assert environment["KENFOLD_DATABASE_URL"] == "postgres://kenfold@pgbouncer:6432/kenfold"
    assert {key: shared[key] for key in topology.KENFOLD_ENV} == topology.KENFOLD_ENV
    # Migrations go straight to PostgreSQL, before any server starts.
    assert SERVICES["migrate"]["environment"]["KENFOLD_DATABASE_URL"] == "postgres://kenfold@db:5432/kenfold"
    assert SERVICES["web"]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_the_pooler_is_in_transaction_mode_and_the_script_renders_the_same_file() -> None:
    compose = topology.ini_settings(topology.PGBOUNCER_INI.read_text())
    rendered = topology.ini_settings(
        topology.pgbouncer_config(PORTS, auth_file=Path("/run/users.txt"), unix_dir=Path("/run/pgb"))
    )
    assert compose["pool_mode"] == rendered["pool_mode"] == topology.POOL_MODE
    # Kenfold's libpq options cannot pass PgBouncer; the database carries them instead.
    assert "options" in compose["ignore_startup_parameters"].split(",")
    addresses = {"kenfold", "listen_addr", "listen_port", "auth_file", "unix_socket_dir"}
    assert {k: v for k, v in rendered.items() if k not in addresses} == {
        k: v for k, v in compose.items() if k not in addresses
    }
    assert rendered["kenfold"] == "host=127.0.0.1 port=15432 dbname=kenfold"
    assert (rendered["listen_addr"], rendered["listen_port"]) == ("127.0.0.1", "16432")
    mounted = SERVICES["pgbouncer"]["volumes"]
    assert "./bench/cluster/pgbouncer.ini:/etc/pgbouncer/pgbouncer.ini:ro" in mounted


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_balancer_checks_readiness_and_retries_only_what_is_safe() -> None:
    compose = _lines(topology.HAPROXY_CFG.read_text())
    rendered = _lines(
        topology.haproxy_config(PORTS, error_file=Path("/e/503.http"), state_socket=Path("/s/haproxy.sock"))
    )
    check = f"http-check send meth GET uri {topology.HEALTH_PATH} ver HTTP/1.1 hdr Host localhost"
    assert check in compose and check in rendered
    assert "http-request disable-l7-retry unless METH_GET || METH_HEAD || METH_OPTIONS" in compose
    # Only the addresses differ: the servers, the listening address, the error page's path, the stats socket.
    local = [
        line for line in rendered if "127.0.0.1" in line or "/e/503.http" in line or "/s/haproxy.sock" in line
    ]
    docker = [
        line
        for line in compose
        if line.startswith(("server-template", "resolvers", "nameserver", "hold", "bind", "errorfile"))
    ]
    assert [line for line in rendered if line not in local] == [
        line for line in compose if line not in docker
    ]
    assert [line for line in local if line.startswith("server ")] == [
        f"server web-{n} 127.0.0.1:{port} check" for n, port in enumerate(PORTS.web, 1)
    ]
    assert "server-template web 3 web:7077 check resolvers docker init-addr none" in compose
    published = SERVICES["haproxy"]["ports"]
    assert published == ["127.0.0.1:7077:8080"] and "bind *:8080" in compose


@pytest.mark.parametrize("name", ["web", "worker", "pgbouncer", "haproxy", "db"])
def test_every_long_running_service_comes_back_by_itself(name: str) -> None:
    # The script's supervisor restarts whatever exits; compose's restart policy is the same promise.
    assert SERVICES[name]["restart"] == "unless-stopped"
