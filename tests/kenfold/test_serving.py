"""The README's `make run` serves /healthz and /readyz, and readiness follows the database."""

import socket
import sys
import time
from pathlib import Path

import httpx

from bench.support.processes import free_port, kenfold_env, manage, running, stop_cluster
from edge.backpressure import DATABASE_STOPPED


def test_make_run_serves_health_and_readiness_follows_the_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = kenfold_env(home, KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}", KENFOLD_WORKERS="1")
    try:
        # A server started on a database whose schema is behind (as a container might be) is not ready.
        gunicorn = str(Path(sys.executable).parent / "gunicorn")
        argv = [
            gunicorn,
            "edge.asgi:application",
            "-k",
            "asgi",
            "-w",
            "1",
            "-b",
            f"127.0.0.1:{port}",
            "--no-control-socket",
        ]
        with running(argv, env=env, ready_url=f"{base}/healthz"):
            # The first database use creates the cluster (initdb): seconds on a busy machine.
            response = httpx.get(f"{base}/readyz", timeout=60)
            assert (response.status_code, response.json()) == (503, {"status": "migrations pending"})

        with running(["make", "run"], env=env, ready_url=f"{base}/healthz") as server:
            assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}
            assert httpx.get(f"{base}/readyz").json() == {"status": "ready"}
            # Health checks answer any Host; everything else is behind the allowlist.
            assert httpx.get(f"{base}/readyz", headers={"Host": "attacker.example"}).status_code == 200
            assert httpx.get(f"{base}/elsewhere", headers={"Host": "attacker.example"}).status_code == 403
            # A connection left idle longer than gunicorn's default keep-alive (2 s) is still answered: the
            # server never closes one under a client that is about to reuse it.
            with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                for pause in (3, 0):
                    connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    assert connection.recv(4096).startswith(b"HTTP/1.1 200")
                    time.sleep(pause)

            manage(home, "db", "stop")
            response = httpx.get(f"{base}/readyz")
            assert (response.status_code, response.json()) == (
                503,
                {"status": "database unavailable", "detail": DATABASE_STOPPED},
            )
            assert httpx.get(f"{base}/healthz").status_code == 200, "liveness does not depend on the database"

            manage(home, "db", "start")
            assert httpx.get(f"{base}/readyz").json() == {"status": "ready"}
            assert server.process.poll() is None
        output = server.output()
        assert "Next steps" in output and "key create" in output
    finally:
        stop_cluster(home)


def test_serve_refuses_a_schema_that_is_behind(tmp_path: Path) -> None:
    home = tmp_path / "home"
    try:
        result = manage(home, "serve", check=False)
        assert result.returncode != 0 and "schema is out of date" in result.stderr
    finally:
        stop_cluster(home)
