"""Processes that die (issue 14): a crashed embedded PostgreSQL comes back by itself under write load with
every acknowledged write kept; one the owner stopped stays stopped; gunicorn workers die with their
master, and `serve` starts again on the same port at once. Real `manage.py serve`, real kill -9."""

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil
import psycopg
import pytest

from bench.support.processes import free_port, kenfold_env, manage, running, stop_cluster
from edge.backpressure import DATABASE_STOPPED
from kenfold.embedded_db import EmbeddedCluster
from tests.mcp.support import mcp_client, tool_error_text

AGENT = "load-writer"
WRITERS = 4


@pytest.fixture
def home(tmp_path: Path, own_cluster: Callable[[Path], Path]) -> Iterator[Path]:
    home = own_cluster(tmp_path / "home")
    try:
        # Started durable here: the first process to use the cluster starts it with its own setting, and a
        # `manage.py` child's is not durable (bench.support.processes.kenfold_env).
        EmbeddedCluster(home=home, durable=True).start()
        yield home
    finally:
        stop_cluster(home)


def _serve(home: Path, port: int) -> "running":
    # Durable, as a user runs it: with synchronous_commit off a crash may lose commits already acknowledged.
    # No write quota: the writers share one key and write as fast as the machine allows, and what is
    # measured is every acknowledged write surviving the crash, not the key's limit (tests/memories/test_quotas.py).
    env = kenfold_env(
        home,
        KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}",
        KENFOLD_EMBEDDED_DURABLE="true",
        KENFOLD_EMBED="off",
        KENFOLD_QUOTA_WRITES_PER_MINUTE="0",
        KENFOLD_QUOTA_MEMORIES_PER_DAY="0",
    )
    return running(
        [sys.executable, "manage.py", "serve"], env=env, ready_url=f"http://127.0.0.1:{port}/readyz"
    )


async def _write_until(url: str, key: str, writer: int, stop: asyncio.Event, acked: list[str]) -> int:
    """remember, one after another, until `stop`; the contents the server acknowledged go to `acked`."""
    failures = 0
    count = 0
    while not stop.is_set():
        try:
            async with mcp_client(url, key=key, timeout=20) as client:
                while not stop.is_set():
                    content = f"Writer {writer} fact number {count} survives a database crash"
                    count += 1
                    result = await client.call_tool("remember", {"content": content, "project": "crash-test"})
                    if result.is_error:
                        assert "internal error" not in tool_error_text(result)
                        failures += 1
                        await asyncio.sleep(0.2)
                    else:
                        acked.append(content)
        except Exception:  # a 503 or a dropped connection while the database restarts: retry, like an agent
            failures += 1
            await asyncio.sleep(0.2)
    return failures


def _contents_in_database(home: Path) -> list[str]:
    cluster = EmbeddedCluster(home=home)
    with psycopg.connect(**cluster.superuser_conninfo(cluster.database)) as conn:
        rows = conn.execute("SELECT content FROM memory WHERE source_agent = %s", [AGENT]).fetchall()
    return [row[0] for row in rows]


def test_a_killed_postmaster_is_back_within_10_s_with_every_acknowledged_write(home: Path) -> None:
    key = manage(home, "key", "create", AGENT).stdout.strip()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cluster = EmbeddedCluster(home=home)

    async def scenario() -> float:
        stop = asyncio.Event()
        acked: list[str] = []
        writers = [
            asyncio.create_task(_write_until(f"{base}/mcp", key, n, stop, acked)) for n in range(WRITERS)
        ]
        await asyncio.sleep(3)
        before = len(acked)
        os.kill(cluster.status().pid, signal.SIGKILL)
        killed = time.monotonic()
        async with httpx.AsyncClient() as http:
            while (await http.get(f"{base}/readyz", timeout=5)).status_code != 200:
                assert time.monotonic() - killed < 10, "the database did not come back within 10 s"
                await asyncio.sleep(0.1)
        back = time.monotonic() - killed
        await asyncio.sleep(3)
        stop.set()
        await asyncio.gather(*writers)
        assert before > 0 and len(acked) > before, "writes were acknowledged before and after the crash"
        stored = _contents_in_database(home)
        assert sorted(stored) == sorted(set(stored)), "no write is stored twice"
        assert set(acked) <= set(stored), f"lost: {sorted(set(acked) - set(stored))[:5]}"
        return back

    with _serve(home, port) as server:
        back = asyncio.run(scenario())
        assert "restarting it" in server.output()
    print(f"ready again {back:.1f} s after kill -9 of the postmaster")


def test_a_database_the_owner_stopped_stays_stopped(home: Path) -> None:
    port = free_port()
    with _serve(home, port):
        manage(home, "db", "stop")
        for _ in range(10):
            response = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
            assert (response.status_code, response.json()) == (
                503,
                {"status": "database unavailable", "detail": DATABASE_STOPPED},
            )
            time.sleep(0.3)
        assert not EmbeddedCluster(home=home).status().running
        manage(home, "db", "start")
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200


def _alive(process: psutil.Process) -> bool:
    # A dead worker may linger as a zombie until its new parent (init, a container's pid 1) reaps it.
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_workers_die_with_their_master_and_serve_starts_again_at_once(home: Path) -> None:
    port = free_port()
    started = time.monotonic()
    with _serve(home, port) as server:
        first_start = time.monotonic() - started
        master = psutil.Process(server.process.pid)  # serve execs gunicorn: same pid
        workers = master.children()
        assert len(workers) == 2
        master.kill()
        died = time.monotonic()
        while (alive := [w for w in workers if _alive(w)]) and time.monotonic() - died < 2:
            time.sleep(0.05)
        assert not alive, f"workers outlived their master: {alive}"
        # Refused, or reset by a dying worker that still held the socket: either way, nothing answers.
        with pytest.raises((httpx.ConnectError, httpx.ReadError)):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
        print(f"workers gone {time.monotonic() - died:.2f} s after kill -9 of the master")
    started = time.monotonic()
    with _serve(home, port):
        restart = time.monotonic() - started
        assert httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200
    # Nothing is left to wait for (the port is free at once): a restart costs what a first start costs, the
    # loading of Django and the MCP SDK (seconds, more on this shared machine).
    assert restart < max(30, 2 * first_start), (
        f"serve took {restart:.1f} s to be ready again, {first_start:.1f} s at first"
    )
    print(f"serve ready again after {restart:.1f} s (first start {first_start:.1f} s)")
