"""`python -m bench.load [--clients 8,16,32,64] [--seconds 40] [--workers 2]`

Each simulated agent is the MCP SDK's client over HTTP with an API key of its own, calling the six tools in
a realistic mix (reads first, then writes, a few handoffs and forgets) for a bounded time and at most
--max-calls calls, on one server started with `manage.py serve --migrate` (durable, default local
embeddings) and kept across the client counts, so later counts run on more data. Reports ops/s, p50/p95
per tool, HTTP 5xx (and whether each had Retry-After), tool errors ("internal error" ones apart), and then
checks the database: every acknowledged remember and handoff is stored exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from mcp import MCPError

from kenfold.embedded_db import EmbeddedCluster
from tests.mcp.support import mcp_client, tool_error_text
from tests.processes import REPO, free_port, kenfold_env, manage, running, stop_cluster

# (tool, weight): agents read far more than they write.
MIX = [("recall", 35), ("get_context", 20), ("remember", 25), ("handoff", 5), ("resume", 5), ("forget", 10)]
TOPICS = ["pagination", "the build", "migrations", "logging", "retries", "auth", "caching", "deploys"]
PROJECTS = [f"github.com/bench/service-{n}" for n in range(4)]


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tool_errors: Counter = field(default_factory=Counter)
    internal_errors: int = 0
    http_failures: Counter = field(default_factory=Counter)  # "503 with Retry-After", other statuses
    acked_writes: dict[str, str] = field(default_factory=dict)  # id -> content (remember, handoff)
    calls: int = 0


async def agent(n: int, url: str, key: str, deadline: float, max_calls: int, tally: Tally, run: str) -> None:
    """One agent's session; a dropped connection ends the session, counted, and the agent reconnects."""
    rng = random.Random(f"{run}-{n}")
    mine: list[str] = []
    calls = [0]
    while time.monotonic() < deadline and calls[0] < max_calls:
        try:
            await session(n, url, key, deadline, max_calls, tally, run, rng, mine, calls)
        except Exception as exc:  # counted and reported below, never hidden
            tally.http_failures[f"session ended: {type(exc).__name__}"] += 1
            await asyncio.sleep(0.5)


async def session(
    n: int,
    url: str,
    key: str,
    deadline: float,
    max_calls: int,
    tally: Tally,
    run: str,
    rng: random.Random,
    mine: list[str],
    calls: list[int],
) -> None:
    tools, weights = zip(*MIX, strict=True)
    async with mcp_client(url, key=key, timeout=60, client_name=f"bench-agent-{n}") as client:
        while time.monotonic() < deadline and calls[0] < max_calls:
            calls[0] += 1
            count = calls[0]
            tool = rng.choices(tools, weights)[0]
            project = rng.choice(PROJECTS)
            topic = rng.choice(TOPICS)
            count += 1
            if tool == "remember":
                args = {
                    "content": f"Agent {n} note {run}.{count}: for {topic} we chose option {rng.randint(1, 9)}",
                    "project": project,
                }
            elif tool == "recall":
                args = {"query": f"what did we decide about {topic}", "project": project}
            elif tool == "get_context":
                args = {"task": f"work on {topic}", "project": project}
            elif tool == "handoff":
                args = {
                    "summary": f"Agent {n} handoff {run}.{count}: {topic} half done",
                    "next_steps": ["finish it"],
                    "project": project,
                }
            elif tool == "resume":
                args = {"project": project}
            else:
                if not mine:
                    continue
                args = {"id": mine.pop(rng.randrange(len(mine))), "reason": "outdated"}
            started = time.perf_counter()
            try:
                result = await client.call_tool(tool, args)
            except MCPError as exc:  # the HTTP layer failed (a 5xx, a dropped connection)
                tally.http_failures[f"MCPError: {str(exc)[:60]}"] += 1
                continue
            elapsed = time.perf_counter() - started
            tally.calls += 1
            if result.is_error:
                text = tool_error_text(result)
                tally.tool_errors[tool] += 1
                tally.internal_errors += "internal error" in text
                continue
            tally.latencies[tool].append(elapsed)
            data = result.structured_content or {}
            if tool in ("remember", "handoff") and not data.get("deduplicated"):
                content = args.get("content") or args["summary"]
                tally.acked_writes[data["id"]] = content
                if tool == "remember":
                    mine.append(data["id"])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def verify(home: Path, acked: dict[str, str]) -> dict[str, int]:
    cluster = EmbeddedCluster(home=home)
    with psycopg.connect(**cluster.superuser_conninfo(cluster.database)) as conn:
        rows = conn.execute(
            "SELECT id::text, content FROM memory WHERE source_agent LIKE 'bench-%'"
        ).fetchall()
    stored = Counter(content for _id, content in rows)
    ids = {id_ for id_, _content in rows}
    lost = [i for i in acked if i not in ids]
    duplicated = [c for c in acked.values() if stored[c] > 1]
    return {"acknowledged": len(acked), "lost": len(lost), "duplicated": len(duplicated), "rows": len(rows)}


async def run_count(
    url: str, keys: list[str], clients: int, seconds: float, max_calls: int, run: str
) -> Tally:
    tally = Tally()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(agent(n, url, keys[n], deadline, max_calls, tally, run) for n in range(clients)))
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load")
    parser.add_argument("--clients", default="8,16,32,64")
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--max-calls", type=int, default=400, help="per agent and client count")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    home = Path(tempfile.mkdtemp(prefix="kenfold-load-")) / "home"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = kenfold_env(
        home,
        KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}",
        KENFOLD_WORKERS=str(args.workers),
        KENFOLD_EMBEDDED_DURABLE="true",
    )
    manage(home, "migrate", "--verbosity", "0", KENFOLD_EMBEDDED_DURABLE="true")
    # One process creates every agent's key (a manage.py per key would take minutes).
    script = (
        "import json; from memories.keys import api_key_create; "
        f"print(json.dumps([api_key_create(agent=f'bench-{{n}}')[1] for n in range({max(counts)})]))"
    )
    keys = json.loads(
        manage(home, "shell", "-c", script, KENFOLD_EMBEDDED_DURABLE="true").stdout.strip().splitlines()[-1]
    )
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "runs": [],
    }
    try:
        with running(
            [sys.executable, "manage.py", "serve", "--migrate"],
            env=env,
            ready_url=f"{base}/readyz",
            cwd=REPO,
            timeout=180,
        ):
            # Warm up: the first embedding loads the models in each worker.
            asyncio.run(run_count(f"{base}/mcp", keys, 4, 10, 10, "warm-up"))
            for clients in counts:
                started = time.monotonic()
                tally = asyncio.run(
                    run_count(f"{base}/mcp", keys, clients, args.seconds, args.max_calls, f"c{clients}")
                )
                wall = time.monotonic() - started
                checked = verify(home, tally.acked_writes)
                run = {
                    "clients": clients,
                    "seconds": round(wall, 1),
                    "ops_per_s": round(tally.calls / wall, 1),
                    "calls": tally.calls,
                    "p50_p95_ms": {
                        tool: [round(percentile(v, 0.5) * 1000), round(percentile(v, 0.95) * 1000)]
                        for tool, v in sorted(tally.latencies.items())
                    },
                    "http_failures": dict(tally.http_failures),
                    "tool_errors": dict(tally.tool_errors),
                    "internal_errors": tally.internal_errors,
                    "writes": checked,
                }
                report["runs"].append(run)
                print(json.dumps(run), flush=True)
    finally:
        stop_cluster(home)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
