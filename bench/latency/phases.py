"""The MCP load phases: simulated agents (the MCP SDK's client over HTTP) calling `tools/list`, `recall`,
`get_context` and `remember` on running servers, one checkout's server after another in every repeat."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.support.mcp import mcp_client

from .children import Checkout, Server
from .corpus import SEED, make_queries, make_tasks, make_writes
from .load import unembedded

# The read phases of one repeat: (tool, clients), K standing for --clients.
READ_PLAN = [("tools/list", 1), ("recall", 1), ("recall", "K"), ("get_context", 1), ("get_context", "K")]
# How long a checkout's queue may take to embed a remember phase's memories before the next phase starts.
DRAIN_TIMEOUT_S = 600


@dataclass(frozen=True)
class Target:
    """One checkout's server under load, on a home loaded with the same corpus as the others'."""

    checkout: Checkout
    home: Path
    key: str
    server: Server
    models: list[str]


@dataclass
class Phase:
    tool: str
    clients: int
    calls: int = 0
    errors: int = 0
    elapsed_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    first_error: str | None = None

    def summary(self) -> dict[str, Any]:
        import numpy as np

        values = np.array(self.latencies_ms) if self.latencies_ms else np.array([float("nan")])
        server = np.array(self.server_ms) if self.server_ms else np.array([float("nan")])
        return {
            "tool": self.tool,
            "clients": self.clients,
            "calls": self.calls,
            "errors": self.errors,
            "elapsed_s": round(self.elapsed_s, 2),
            "p50_ms": round(float(np.percentile(values, 50)), 2),
            "p95_ms": round(float(np.percentile(values, 95)), 2),
            "p99_ms": round(float(np.percentile(values, 99)), 2),
            "max_ms": round(float(values.max()), 2),
            "mean_ms": round(float(values.mean()), 2),
            "throughput": round(self.calls / self.elapsed_s, 2) if self.elapsed_s else 0.0,
            "server_p50_ms": round(float(np.percentile(server, 50)), 2),
            "server_p95_ms": round(float(np.percentile(server, 95)), 2),
            "first_error": self.first_error,
        }


async def run_phase(
    url: str,
    key: str,
    *,
    tool: str,
    arguments: list[dict[str, Any]],
    clients: int,
    duration: float,
    warm: dict[str, Any],
    server: Server | None = None,
) -> Phase:
    """`clients` sessions call `tool` with `arguments` in turn until the list or `duration` runs out."""
    phase = Phase(tool=tool, clients=clients)
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                mcp_client(url, key=key, client_name=f"bench-{tool}-{i}", timeout=60)
            )
            for i in range(clients)
        ]
        # The first call of a session fetches the tool listing (for output validation): not measured.
        await asyncio.gather(*(session.call_tool("recall", warm) for session in sessions))
        issued = 0
        offset = server.log_offset() if server else 0
        start = loop.time()
        deadline = start + duration

        async def worker(session: Any) -> None:
            nonlocal issued
            while issued < len(arguments) and loop.time() < deadline:
                args = arguments[issued]
                issued += 1
                await _call(session, phase, tool, args)

        # Hard bound on top of the soft one: a hung server cannot keep the benchmark running.
        async with asyncio.timeout(duration + 120):
            await asyncio.gather(*(worker(session) for session in sessions))
        phase.elapsed_s = loop.time() - start
        if server:
            await asyncio.sleep(0.3)  # let the workers write their last access-log lines
            phase.server_ms = server.mcp_durations_ms(offset)
    return phase


async def _call(session: Any, phase: Phase, tool: str, args: dict[str, Any]) -> float | None:
    """One measured call; its latency in ms, or None if it failed (counted in `phase`)."""
    t0 = time.perf_counter()
    try:
        if tool == "tools/list":
            # The floor: HTTP, the API-key guard and the MCP layer, without any tool.
            await session.list_tools(cache_mode="refresh")
            result = None
        else:
            result = await session.call_tool(tool, args)
    except Exception as exc:  # a transport failure is a failed call, not the end of the run
        phase.errors += 1
        phase.first_error = phase.first_error or f"{type(exc).__name__}: {exc}"
        return None
    elapsed_ms = (time.perf_counter() - t0) * 1000
    if result is not None and result.is_error:
        phase.errors += 1
        text = " ".join(getattr(block, "text", "") for block in result.content)
        phase.first_error = phase.first_error or text[:300]
        return None
    phase.calls += 1
    phase.latencies_ms.append(elapsed_ms)
    return elapsed_ms


async def run_paired_phase(
    targets: list[Target],
    *,
    tool: str,
    arguments: list[dict[str, Any]],
    duration: float,
    warm: dict[str, Any],
) -> tuple[list[Phase], list[list[float]]]:
    """One session per checkout, and every call sent to each checkout in turn, the first one changing from
    call to call: the machine's drift (other tenants, clock changes) then hits every checkout alike, where
    phases run one after another can differ by more than the change measured. Runs until the arguments
    or `duration` per checkout run out. Returns each checkout's phase and, for each checkout after the
    first, its latency minus the first's for every call both answered."""
    phases = [Phase(tool=tool, clients=1) for _ in targets]
    paired: list[list[float]] = [[] for _ in targets[1:]]
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                mcp_client(
                    f"{target.server.base}/mcp", key=target.key, client_name=f"bench-{tool}-{i}", timeout=60
                )
            )
            for i, target in enumerate(targets)
        ]
        await asyncio.gather(*(session.call_tool("recall", warm) for session in sessions))
        offsets = [target.server.log_offset() for target in targets]
        start = loop.time()
        deadline = start + duration * len(targets)
        async with asyncio.timeout(duration * len(targets) + 120):
            for index, args in enumerate(arguments):
                if loop.time() >= deadline:
                    break
                latencies: list[float | None] = [None] * len(targets)
                for step in range(len(targets)):
                    position = (index + step) % len(targets)
                    latencies[position] = await _call(sessions[position], phases[position], tool, args)
                first = latencies[0]
                for other, latency in enumerate(latencies[1:]):
                    if first is not None and latency is not None:
                        paired[other].append(latency - first)
        elapsed = loop.time() - start
        await asyncio.sleep(0.3)  # let the workers write their last access-log lines
        for phase, target, offset in zip(phases, targets, offsets, strict=True):
            phase.elapsed_s = elapsed
            phase.server_ms = target.server.mcp_durations_ms(offset)
    return phases, paired


def median_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ["p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms", "throughput", "server_p50_ms", "server_p95_ms"]
    out: dict[str, Any] = {key: round(statistics.median(run[key] for run in runs), 2) for key in keys}
    out |= {
        "tool": runs[0]["tool"],
        "clients": runs[0]["clients"],
        "calls": sum(run["calls"] for run in runs),
        "errors": sum(run["errors"] for run in runs),
        "repeats": len(runs),
        "p95_ms_each": [run["p95_ms"] for run in runs],
        "throughput_each": [run["throughput"] for run in runs],
        "first_error": next((run["first_error"] for run in runs if run["first_error"]), None),
    }
    for extra in ("drain_s", "unembedded"):
        if all(extra in run for run in runs):
            out[f"{extra}_each"] = [run[extra] for run in runs]
    return out


def _print(label: str, repeat: int, repeats: int, summary: dict[str, Any]) -> None:
    print(
        f"  [{repeat + 1}/{repeats}] {label}{summary['tool']:11} K={summary['clients']}: {summary['calls']:5} calls "
        f"p50 {summary['p50_ms']:7.1f}  p95 {summary['p95_ms']:7.1f}  p99 {summary['p99_ms']:7.1f} ms  "
        f"{summary['throughput']:6.1f}/s  errors {summary['errors']}"
    )


async def drain(target: Target, since: datetime) -> float:
    """Wait until the server's worker has embedded every memory written since `since` with every model, so
    one checkout's queue does not run during the next checkout's phase; returns the seconds waited."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while (left := await asyncio.to_thread(unembedded, target.home, target.models, since)) > 0:
        if loop.time() - start > DRAIN_TIMEOUT_S:
            raise RuntimeError(
                f"{target.checkout.label}: {left} memories still lack a vector {DRAIN_TIMEOUT_S} s after "
                "the remember phase; is the worker running (--with-worker)?"
            )
        await asyncio.sleep(0.5)
    return loop.time() - start


async def drive(targets: list[Target], args: Any, size: int, phases: set[str]) -> dict[str, dict[str, Any]]:
    """Warm every server, then run the phases, each repeat going through every checkout (in alternating
    order, so a checkout is not always the one measured first or last). Returns, per checkout label, the
    median of each phase over the repeats ("phases") and every repeat's figures ("runs")."""
    rng = random.Random(SEED * 7 + size)
    queries = make_queries(max(args.max_calls, 200), rng)
    tasks = make_tasks(max(args.max_calls, 200), rng)
    warm = queries[0]
    several = len(targets) > 1
    width = max(len(target.checkout.label) for target in targets) + 1 if several else 0

    for target in targets:
        url = f"{target.server.base}/mcp"
        # Warm-up: both gunicorn workers load the embedding models and fill their caches. Sessions are
        # keep-alive connections that gunicorn's workers accept at random: use several.
        print(f"  warming up {target.checkout.label}" if several else "  warming up")
        await run_phase(
            url, target.key, tool="recall", arguments=queries[:80], clients=6, duration=60, warm=warm
        )
        if "reads" in phases:
            await run_phase(
                url, target.key, tool="get_context", arguments=tasks[:40], clients=6, duration=60, warm=warm
            )
        if "remember" in phases:
            since = datetime.now(UTC)
            writes = make_writes(24, random.Random(SEED), tag=f"warm-{size}")
            await run_phase(
                url, target.key, tool="remember", arguments=writes, clients=6, duration=60, warm=warm
            )
            if args.with_worker:
                await drain(target, since)

    plan = [(tool, args.clients if clients == "K" else clients) for tool, clients in READ_PLAN]
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {str(target.checkout.path): {} for target in targets}

    async def measure(
        target: Target, repeat: int, tool: str, clients: int, arguments: list[dict[str, Any]], duration: float
    ) -> None:
        phase = await run_phase(
            f"{target.server.base}/mcp",
            target.key,
            tool=tool,
            arguments=arguments,
            clients=clients,
            duration=duration,
            warm=warm,
            server=target.server,
        )
        summary = phase.summary()
        runs[str(target.checkout.path)].setdefault(f"{tool}/{clients}", []).append(summary)
        _print(f"{target.checkout.label:>{width}} " if several else "", repeat, args.repeats, summary)

    def order(repeat: int) -> list[Target]:
        return targets if repeat % 2 == 0 else targets[::-1]

    def arguments_for(tool: str, repeat: int) -> list[dict[str, Any]]:
        pool = {"recall": queries, "get_context": tasks}.get(tool, [{}] * len(queries))
        # Each repeat starts elsewhere in the argument list, so repeats do not replay one another.
        shift = (repeat * 997) % len(pool)
        return (pool[shift:] + pool[:shift])[: args.max_calls]

    async def measure_paired(repeat: int, tool: str) -> None:
        measured, paired = await run_paired_phase(
            targets, tool=tool, arguments=arguments_for(tool, repeat), duration=args.duration, warm=warm
        )
        for index, (target, phase) in enumerate(zip(targets, measured, strict=True)):
            summary = phase.summary()
            if index:
                differences = paired[index - 1]
                summary["paired_median_diff_ms"] = (
                    round(statistics.median(differences), 2) if differences else None
                )
            runs[str(target.checkout.path)].setdefault(f"{tool}/1", []).append(summary)
            _print(f"{target.checkout.label:>{width}} ", repeat, args.repeats, summary)
        for target, differences in zip(targets[1:], paired, strict=True):
            if differences:
                print(
                    f"  {'':>{width}}paired: {target.checkout.label} minus {targets[0].checkout.label}, median "
                    f"{statistics.median(differences):+.2f} ms over {len(differences)} calls"
                )

    if "reads" in phases:
        for repeat in range(args.repeats):
            if args.paired and several:
                for tool, clients in plan:
                    if clients == 1:
                        await measure_paired(repeat, tool)
            for target in order(repeat):
                for tool, clients in plan:
                    if args.paired and several and clients == 1:
                        continue
                    await measure(target, repeat, tool, clients, arguments_for(tool, repeat), args.duration)

    if "remember" in phases:
        for repeat in range(args.repeats):
            # The same new memories for every checkout.
            arguments = make_writes(args.remember_count, rng, tag=f"{size}-{repeat}")
            for target in order(repeat):
                since = datetime.now(UTC)
                await measure(target, repeat, "remember", args.clients, arguments, max(args.duration, 120))
                summary = runs[str(target.checkout.path)][f"remember/{args.clients}"][-1]
                if args.with_worker:
                    # Until every model's vector exists: what the queue adds after the answers.
                    summary["drain_s"] = round(await drain(target, since), 1)
                    print(f"  {'':>{width}}every model's vectors written {summary['drain_s']} s later")
                else:
                    summary["unembedded"] = await asyncio.to_thread(
                        unembedded, target.home, target.models, since
                    )
                    print(f"  {'':>{width}}{summary['unembedded']} new memories lack a vector of some model")

    return {
        path: {"phases": {name: median_summary(each) for name, each in by_phase.items()}, "runs": by_phase}
        for path, by_phase in runs.items()
    }
