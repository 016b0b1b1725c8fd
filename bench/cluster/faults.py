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


class TimedCounter(Counter):
    """A Counter that also keeps when each increment happened: (monotonic, key)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[float, str]] = []

    def __setitem__(self, key: str, value: int) -> None:
        if value > self.get(key, 0):
            self.events.append((time.monotonic(), key))
        super().__setitem__(key, value)


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

    def down_between(self, moment: float, count: int) -> tuple[float, float] | None:
        """(first sample after `moment` with a server not UP, next one with all UP again), if any was down."""
        down = None
        for t, states in self.samples:
            if t < moment:
                continue
            up = len(states) == count and set(states.values()) == {"UP"}
            if not up and down is None:
                down = t
            if up and down is not None:
                return down, t
        return (down, float("nan")) if down is not None else None


async def fault_run(cluster: Cluster, *, clients: int, seconds: float) -> dict[str, Any]:
    """`seconds` of load; the three faults at a quarter, half and three quarters of it."""
    agents = Agents()
    await agents.start(cluster.url, cluster.keys[:clients])
    tally = Tally(http_failures=TimedCounter(), tool_errors=TimedCounter())
    loop = asyncio.get_running_loop()
    faults: list[dict[str, Any]] = []
    started = time.monotonic()

    def inject(name: str, sig: int) -> None:
        faults.append(
            {
                "fault": f"{signal.Signals(sig).name} {name}",
                "process": name,
                # A server still rejoining from the fault before is not this fault's doing.
                "all_up_before": cluster.all_up(),
                "at": cluster.supervisor.kill(name, sig),
            }
        )

    with StateLog(cluster) as states:
        load = asyncio.ensure_future(run_count(agents, clients, seconds, 10**9, "faults", tally))
        plan = [
            (0.25, "web-2", signal.SIGKILL),
            (0.5, "worker-1", signal.SIGKILL),
            (0.75, "pgbouncer", signal.SIGTERM),
        ]
        for share, name, sig in plan:
            await asyncio.sleep(max(0.0, started + share * seconds - time.monotonic()))
            await loop.run_in_executor(None, inject, name, sig)
        await load
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
        down = states.down_between(at, cluster.web_servers)
        window = [(t, status) for t, status in agents.statuses if at <= t < end]
        failures = list(tally.http_failures.events)
        failures += [(t, f"tool error ({tool})") for t, tool in tally.tool_errors.events]
        failures = sorted((t, kind) for t, kind in failures if at <= t < end)
        failures += [(t, f"HTTP {status}") for t, status in window if status >= 400]
        fault |= {
            "restarted_after_s": round(restarted - at, 2) if restarted else None,
            # HAProxy's view: a server out of rotation from the first check that failed to all UP again.
            "balancer_down_s": [round(t - at, 2) for t in down] if down else "no server left rotation",
            "client_statuses": dict(Counter(status for _t, status in window if status != 200)),
            "client_errors": dict(Counter(kind for _t, kind in failures)),
            "last_client_error_after_s": round(max(t for t, _k in failures) - at, 2) if failures else None,
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
