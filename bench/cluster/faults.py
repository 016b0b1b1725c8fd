"""Faults under load (issue 40, item 3): bench/load's agents (the MCP SDK's client, the six tools in
their realistic mix) through HAProxy while one web server is killed (kill -9 of its process group, as a
machine or container dies), then one job worker, then PgBouncer is restarted (SIGTERM, its immediate
shutdown). The supervisor brings each back without a command, as systemd or Docker's restart policy would.
Afterwards every acknowledged write must be stored exactly once, and no client may have seen a 5xx other
than 503."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.cluster.cluster import Cluster
from bench.load.__main__ import Order, Tally, agent, percentile, run_count, verify_rows


@dataclass
class Agents:
    """bench/load's agents on one URL: `orders` is what bench.load.run_count hands work through."""

    orders: list[asyncio.Queue[Order | None]] = field(default_factory=list)
    tasks: list[asyncio.Task] = field(default_factory=list)
    statuses: list[tuple[float, int]] = field(default_factory=list)  # (monotonic, HTTP status) of each answer

    async def start(self, url: str, keys: list[str]) -> None:
        async def seen(response: Any) -> None:
            self.statuses.append((time.monotonic(), response.status_code))

        self.orders = [asyncio.Queue() for _ in keys]
        self.tasks = [
            asyncio.create_task(agent(n, url + "/mcp", key, queue, on_response=seen))
            for n, (key, queue) in enumerate(zip(keys, self.orders, strict=True))
        ]
        await run_count(self, len(keys), 0, 0, "connect")

    async def stop(self) -> None:
        for queue in self.orders:
            queue.put_nowait(None)
        await asyncio.gather(*self.tasks)


class StateLog:
    """HAProxy's view of each web server, sampled every 100 ms in a thread: (monotonic, {server: state})."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.samples: list[tuple[float, dict[str, str]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.samples.append((time.monotonic(), self.cluster.balancer_states()))

    def __enter__(self) -> StateLog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def all_up_after(self, moment: float, count: int) -> float | None:
        """The first time after `moment` at which every server was UP again, after one was not."""
        seen_down = False
        for t, states in self.samples:
            if t < moment:
                continue
            up = len(states) == count and set(states.values()) == {"UP"}
            seen_down |= not up
            if up and seen_down:
                return t
        return None


async def fault_run(cluster: Cluster, *, clients: int, seconds: float) -> dict[str, Any]:
    """`seconds` of load; the three faults at a quarter, half and three quarters of it."""
    agents = Agents()
    await agents.start(cluster.url, cluster.keys[:clients])
    tally = Tally()
    loop = asyncio.get_running_loop()
    faults: list[dict[str, Any]] = []
    started = time.monotonic()

    def inject(name: str, sig: int) -> None:
        faults.append(
            {
                "fault": f"{signal.Signals(sig).name} {name}",
                "process": name,
                "at": cluster.supervisor.kill(name, sig),
            }
        )

    with StateLog(cluster) as states:
        load = asyncio.ensure_future(run_count(agents, clients, seconds, 10**9, "faults"))
        plan = [
            (0.25, "web-2", signal.SIGKILL),
            (0.5, "worker-1", signal.SIGKILL),
            (0.75, "pgbouncer", signal.SIGTERM),
        ]
        for share, name, sig in plan:
            await asyncio.sleep(max(0.0, started + share * seconds - time.monotonic()))
            await loop.run_in_executor(None, inject, name, sig)
        tally = await load
        # Give the last fault's recovery time to show in the samples.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not cluster.all_up():
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)
    await agents.stop()
    wall = time.monotonic() - started

    ends = [fault["at"] for fault in faults[1:]] + [started + wall]
    for fault, end in zip(faults, ends, strict=True):
        at = fault["at"]
        restarted = cluster.supervisor.restarted_at(fault["process"], at)
        back = states.all_up_after(at, cluster.web_servers)
        window = [(t, status) for t, status in agents.statuses if at <= t < end]
        errors = [(t, status) for t, status in window if status >= 500]
        fault |= {
            "restarted_after_s": round(restarted - at, 2) if restarted else None,
            "all_servers_up_after_s": round(back - at, 2) if back else None,
            "client_statuses": dict(Counter(status for _t, status in window if status != 200)),
            "errors_until_s": round(errors[-1][0] - at, 2) if errors else 0.0,
        }
        del fault["at"]
    with cluster.superuser() as conn:
        writes = verify_rows(conn, tally.acked_writes)
    statuses = Counter(status for _t, status in agents.statuses)
    balancer = Counter(
        line.split(" ", 1)[0]
        for line in cluster.supervisor.services["haproxy"].output().splitlines()
        if line[:3].isdigit()
    )
    bad = {s: n for s, n in statuses.items() if s >= 500 and s != 503}
    processes = {
        name: service.process.poll() is None for name, service in cluster.supervisor.services.items()
    }
    return {
        "clients": clients,
        "seconds": round(wall, 1),
        "calls": tally.calls,
        "ops_per_s": round(tally.calls / wall, 1),
        "faults": faults,
        "client_statuses": dict(statuses),
        "balancer_log_statuses": dict(balancer),
        "http_failures": dict(tally.http_failures),
        "tool_errors": dict(tally.tool_errors),
        "internal_errors": tally.internal_errors,
        "p95_ms": {tool: round(percentile(v, 0.95) * 1000) for tool, v in sorted(tally.latencies.items())},
        "writes": writes,
        "every_process_running": processes,
        "ok": writes["lost"] == 0 and writes["duplicated"] == 0 and not bad and all(processes.values()),
    }
