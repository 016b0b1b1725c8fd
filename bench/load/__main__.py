"""`python -m bench.load [--clients 8,16,32,64] [--seconds 40] [--workers 2] [--compare REPO] [--profile DIR] [--back]
[--statements N] [--slow-plans MS]`

Each simulated agent is the MCP SDK's client over HTTP with an API key of its own, calling the six tools in
a realistic mix (reads first, then writes, a few handoffs and forgets) for a bounded time and at most
--max-calls calls, on one server started with `manage.py serve --migrate` (durable, default local
embeddings) and kept across the client counts, so later counts run on more data (`--back` runs them
there and back, so every count meets the same store size on average). Reports ops/s, p50/p95
per tool, HTTP 5xx (and whether each had Retry-After), tool errors ("internal error" ones apart), and then
checks the database: every acknowledged remember and handoff is stored exactly once.

CPU time is counted per operation for the server (gunicorn's master and workers), for PostgreSQL (the
postmaster and its backends) and for this driver, so that runs on a busy shared machine can be compared
by what an operation costs, not only by how many fit in a second. `--compare REPO` starts a second server
from another checkout (its own .venv's Python, its own home) and runs each client count on both, one
after the other, alternating which goes first: the ratio between them is what a noisy machine cannot
blur. `--profile DIR` samples each gunicorn worker and the driver with py-spy (requirements-dev.txt) and
prints the functions where their time goes; `--statements N` preloads pg_stat_statements in the servers
and prints each count's N statements with the most time; `--slow-plans MS` has PostgreSQL log the plan of
every statement slower than MS ms (auto_explain) and prints, per server, which statements were slow and
which scans they ran (the plan a connection cached is the one logged, however stale). The table comes
last, then each count's mean. The servers' databases are deleted at the end; their logs stay where the
report's `server_logs` (and `postgres_logs`) say.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import psutil
import psycopg
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from bench.support.mcp import tool_error_text
from bench.support.processes import REPO, Running, free_port, kenfold_env, running, stop_cluster
from kenfold.embedded_db import EmbeddedCluster

# (tool, weight): agents read far more than they write.
MIX = [("recall", 35), ("get_context", 20), ("remember", 25), ("handoff", 5), ("resume", 5), ("forget", 10)]
TOPICS = ["pagination", "the build", "migrations", "logging", "retries", "auth", "caching", "deploys"]
PROJECTS = [f"github.com/bench/service-{n}" for n in range(4)]


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tool_errors: Counter = field(default_factory=Counter)
    # What the errors said (a tool and the start of its text), so a report says why, not only how many.
    tool_error_kinds: Counter = field(default_factory=Counter)
    internal_errors: int = 0
    http_failures: Counter = field(default_factory=Counter)  # "503 with Retry-After", other statuses
    acked_writes: dict[str, str] = field(default_factory=dict)  # id -> content (remember, handoff)
    calls: int = 0


@dataclass
class Order:
    """What an agent does next: call tools until `deadline` or `max_calls`, counting into `tally`."""

    deadline: float
    max_calls: int
    tally: Tally
    run: str
    done: asyncio.Event = field(default_factory=asyncio.Event)


def describe(exc: BaseException) -> str:
    """An exception as the report shows it: the innermost ones of a group, with the start of the message."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(sorted({describe(inner) for inner in exc.exceptions}))
    return f"{type(exc).__name__}: {str(exc)[:80]}"


async def agent(
    n: int, url: str, key: str, orders: asyncio.Queue[Order | None], *, on_response: Callable | None = None
) -> None:
    """One agent: its own API key, HTTP client and MCP session, kept across the client counts as a real
    agent keeps its session (opening one and listing the tools is not what a tool call costs). A dropped
    session is counted and the agent opens a new one. `on_response` (an async httpx event hook) sees every
    HTTP answer, e.g. to count statuses the MCP client folds into one error."""
    rng = random.Random(n)
    mine: list[str] = []
    order = await orders.get()
    hooks = {"response": [on_response]} if on_response else {}
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {key}"}, timeout=60, event_hooks=hooks
    ) as http:
        while order is not None:
            try:
                async with Client(
                    streamable_http_client(url, http_client=http),
                    client_info=Implementation(name=f"bench-agent-{n}", version="1.0"),
                ) as client:
                    await client.list_tools()
                    # The SDK compiles each tool's output-schema validator at the session's first result of
                    # that tool (about 60 validations' worth of CPU, its own comment says); a real agent pays
                    # that once per session, so it is paid here, before any count is timed.
                    for name, schema in client.session._tool_output_schemas.items():
                        if schema is not None:
                            client.session._output_schema_validator(name, schema)
                    while order is not None:
                        await work(n, client, order, rng, mine)
                        order.done.set()
                        order = await orders.get()
            except Exception as exc:  # counted and reported, never hidden
                order.tally.http_failures[f"session ended: {describe(exc)}"] += 1
                await asyncio.sleep(0.5)
                if time.monotonic() >= order.deadline:
                    order.done.set()
                    order = await orders.get()


async def work(n: int, client: Client, order: Order, rng: random.Random, mine: list[str]) -> None:
    tools, weights = zip(*MIX, strict=True)
    tally = order.tally
    count = 0
    while time.monotonic() < order.deadline and count < order.max_calls:
        count += 1
        tool = rng.choices(tools, weights)[0]
        project = rng.choice(PROJECTS)
        topic = rng.choice(TOPICS)
        if tool == "remember":
            args = {
                "content": f"Agent {n} note {order.run}.{count}: for {topic} we chose option {rng.randint(1, 9)}",
                "project": project,
            }
        elif tool == "recall":
            args = {"query": f"what did we decide about {topic}", "project": project}
        elif tool == "get_context":
            args = {"task": f"work on {topic}", "project": project}
        elif tool == "handoff":
            args = {
                "summary": f"Agent {n} handoff {order.run}.{count}: {topic} half done",
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
            tally.tool_error_kinds[f"{tool}: {text[:70]}"] += 1
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


def superuser(home: Path) -> psycopg.Connection:
    """A superuser connection (autocommit) to the Kenfold database of the embedded server in `home`."""
    cluster = EmbeddedCluster(home=home)
    return psycopg.connect(**cluster.superuser_conninfo(cluster.database), autocommit=True)


def verify(home: Path, acked: dict[str, str]) -> dict[str, int]:
    with superuser(home) as conn:
        return verify_rows(conn, acked)


def verify_rows(conn: psycopg.Connection, acked: dict[str, str]) -> dict[str, int]:
    """Every acknowledged write (id -> content) stored, and none twice: counts of each."""
    rows = conn.execute("SELECT id::text, content FROM memory WHERE source_agent LIKE 'bench-%'").fetchall()
    stored = Counter(content for _id, content in rows)
    ids = {id_ for id_, _content in rows}
    lost = [i for i in acked if i not in ids]
    duplicated = [c for c in acked.values() if stored[c] > 1]
    return {"acknowledged": len(acked), "lost": len(lost), "duplicated": len(duplicated), "rows": len(rows)}


async def run_count(
    target: Target, clients: int, seconds: float, max_calls: int, run: str, tally: Tally | None = None
) -> Tally:
    tally = tally or Tally()
    deadline = time.monotonic() + seconds
    if clients > len(target.orders):
        # An order without an agent would never be done.
        raise ValueError(f"{clients} clients asked of {len(target.orders)} agents")
    orders = [Order(deadline, max_calls, tally, run) for _ in range(clients)]
    for queue, order in zip(target.orders, orders, strict=False):
        queue.put_nowait(order)
    await asyncio.gather(*(order.done.wait() for order in orders))
    return tally


def tree_cpu_seconds(root_pid: int | None) -> float:
    """CPU seconds (user + system) of a process, its live descendants and the children it reaped."""
    if root_pid is None:
        return 0.0
    try:
        root = psutil.Process(root_pid)
        total = sum(root.cpu_times()[:4])  # user, system, children_user, children_system
        for child in root.children(recursive=True):
            # One that ended between the listing and the read: its time is in its parent's reaped share.
            with suppress(psutil.NoSuchProcess):
                total += sum(child.cpu_times()[:2])
        return total
    except psutil.NoSuchProcess:
        return 0.0


def postmaster_pid(home: Path) -> int | None:
    try:
        return int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Target:
    """One server under test: this checkout's, or the one --compare names."""

    label: str
    repo: Path
    python: str
    home: Path
    port: int
    keys: list[str] = field(default_factory=list)
    server: Running | None = None
    orders: list[asyncio.Queue[Order | None]] = field(default_factory=list)
    agents: list[asyncio.Task] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, **extra: str) -> dict[str, str]:
        # No write quota: a simulated agent writes as fast as the server answers, far past what the default
        # quota allows a real one (120 writes a minute); what is measured is throughput, not the limit.
        return kenfold_env(
            self.home,
            repo=self.repo,
            KENFOLD_EMBEDDED_DURABLE="true",
            KENFOLD_QUOTA_WRITES_PER_MINUTE="0",
            KENFOLD_QUOTA_MEMORIES_PER_DAY="0",
            **extra,
        )

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [self.python, "manage.py", *args],
            cwd=self.repo,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{self.label}: manage.py {args[0]} failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    def prepare(self, agents: int, *, statements: bool = False, slow_plans_ms: float | None = None) -> None:
        if statements or slow_plans_ms is not None:
            self.configure_postgres(statements=statements, slow_plans_ms=slow_plans_ms)
        self.manage("migrate", "--verbosity", "0")
        # One process creates every agent's key (a manage.py per key would take minutes).
        script = (
            "import json; from access.keys import api_key_create; "
            f"print(json.dumps([api_key_create(agent=f'bench-{{n}}')[1] for n in range({agents})]))"
        )
        self.keys = json.loads(self.manage("shell", "-c", script).strip().splitlines()[-1])

    def configure_postgres(self, *, statements: bool, slow_plans_ms: float | None) -> None:
        """pg_stat_statements and auto_explain in this home's server (the embedded build ships both; they
        must be preloaded, so the server starts once, gets the settings in postgresql.conf, the owner's
        file, and restarts)."""
        self.manage("db", "start")
        cluster = EmbeddedCluster(home=self.home)
        libraries = ["pg_stat_statements"] * statements + ["auto_explain"] * (slow_plans_ms is not None)
        lines = [
            "# bench.load --statements / --slow-plans",
            f"shared_preload_libraries = '{','.join(libraries)}'",
        ]
        if slow_plans_ms is not None:
            lines += [
                f"auto_explain.log_min_duration = '{slow_plans_ms}ms'",
                "auto_explain.log_format = 'text'",
            ]
        with open(cluster.pgdata / "postgresql.conf", "a") as conf:
            conf.write("\n" + "\n".join(lines) + "\n")
        self.manage("db", "stop")
        self.manage("db", "start")
        if statements:
            with superuser(self.home) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def keep_postgres_log(self, folder: Path) -> Path | None:
        """A copy of the server's PostgreSQL log in `folder` (the home, and the log with it, is deleted)."""
        source = EmbeddedCluster(home=self.home).log_path
        if not source.exists():
            return None
        kept = folder / f"{self.label}-postgres.log"
        shutil.copyfile(source, kept)
        return kept

    def reset_statements(self) -> int:
        """Empty pg_stat_statements; the number of memories stored at that moment."""
        with superuser(self.home) as conn:
            conn.execute("SELECT pg_stat_statements_reset()")
            return conn.execute("SELECT count(*) FROM memory").fetchone()[0]

    def top_statements(self, count: int, calls: int) -> list[dict]:
        """The statements with the most execution time since the last reset (wall time inside the server,
        so waiting for a core counts too), per operation of the driver."""
        with superuser(self.home) as conn:
            rows = conn.execute(
                """SELECT calls, total_exec_time, mean_exec_time, regexp_replace(query, '\\s+', ' ', 'g')
                   FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)
                   ORDER BY total_exec_time DESC LIMIT %s""",
                [EmbeddedCluster.database, count],
            ).fetchall()
        return [
            {
                "calls": n,
                "ms_per_op": round(total / max(calls, 1), 2),
                "mean_ms": round(mean, 2),
                "statement": text[:100],
            }
            for n, total, mean, text in rows
        ]

    async def start_agents(self) -> None:
        """An agent per key, each with its session open, then the warm-up (the first embedding loads the
        models in each worker)."""
        self.orders = [asyncio.Queue() for _key in self.keys]
        self.agents = [
            asyncio.create_task(agent(n, f"{self.url}/mcp", key, queue))
            for n, (key, queue) in enumerate(zip(self.keys, self.orders, strict=True))
        ]
        await run_count(self, len(self.keys), 0, 0, "connect")
        # At most one agent per key: a run with fewer agents than the warm-up's 8 used to wait forever.
        await run_count(self, min(8, len(self.keys)), 15, 20, "warm-up")

    async def stop_agents(self) -> None:
        for queue in self.orders:
            queue.put_nowait(None)
        await asyncio.gather(*self.agents)

    def worker_pids(self) -> list[int]:
        if self.server is None:
            return []
        try:
            return [p.pid for p in psutil.Process(self.server.process.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu(self) -> dict[str, float]:
        return {
            "server": tree_cpu_seconds(self.server.process.pid if self.server else None),
            "db": tree_cpu_seconds(postmaster_pid(self.home)),
            "driver": sum(psutil.Process().cpu_times()[:2]),
        }

    def log_problems(self) -> dict[str, int]:
        """What a clean run's server output does not have: MCP answers with a 5xx (503 apart), tracebacks,
        worker timeouts. (A /readyz answered 500 while the server starts is a probe that gave up waiting:
        gunicorn logs a request whose client left before Django answered as a 500 nobody received.)"""
        lines = self.server.output().splitlines() if self.server else []
        counts = {
            "MCP 5xx other than 503": sum(
                '"POST /mcp HTTP/1.1" 5' in line and '"POST /mcp HTTP/1.1" 503' not in line for line in lines
            ),
            "MCP 503": sum('"POST /mcp HTTP/1.1" 503' in line for line in lines),
            "tracebacks": sum("Traceback (most recent call last)" in line for line in lines),
            "worker timeouts": sum("WORKER TIMEOUT" in line for line in lines),
        }
        return {name: count for name, count in counts.items() if count}


def start_profilers(target: Target, folder: Path, name: str, seconds: float) -> list[subprocess.Popen]:
    """py-spy on each gunicorn worker of `target` and on this driver, for `seconds`."""
    py_spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or "py-spy"
    pids = {f"worker{n}": pid for n, pid in enumerate(target.worker_pids())} | {"driver": os.getpid()}
    folder.mkdir(parents=True, exist_ok=True)
    return [
        subprocess.Popen(
            [
                py_spy,
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(int(seconds)),
                "--rate",
                "50",
                "--nonblocking",
                *(["--gil"] if os.environ.get("BENCH_GIL") else []),
                "--format",
                "raw",
                "--output",
                str(folder / f"{name}-{role}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for role, pid in pids.items()
    ]


def profile_summary(path: Path, top: int = 25) -> list[str]:
    """The functions with the most samples on the stack (inclusive), from py-spy's raw (collapsed) output."""
    inclusive: Counter = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        frames = {
            frame.split(" (")[0] + " (" + frame.split(" (")[-1].split(":")[0].rsplit("/", 1)[-1] + ")"
            for frame in stack.split(";")
        }
        for frame in frames:
            inclusive[frame] += int(count)
    return [f"{path.name}: {total} samples"] + [
        f"  {100 * n / max(total, 1):5.1f}%  {frame}" for frame, n in inclusive.most_common(top)
    ]


_SCAN = re.compile(r"(?:Seq Scan on|Index Scan using|Index Only Scan using|Bitmap Index Scan on) \w+")


def slow_plan_summary(path: Path, top: int = 12) -> list[str]:
    """auto_explain's entries in a PostgreSQL log, grouped by the statement's start and the scans its plan
    ran: how many, their median duration, most frequent first."""
    durations: dict[tuple[str, str], list[float]] = defaultdict(list)
    for entry in re.split(r"LOG:  duration: ", path.read_text(errors="replace"))[1:]:
        duration, _, rest = entry.partition(" ms  plan:")
        if not rest or "Query Text:" not in rest:
            continue
        text = rest.split("Query Text:", 1)[1]
        # The statement runs up to the line of the plan's first node, the first line holding "(cost=".
        statement = text.split("(cost=", 1)[0].rsplit("\n", 1)[0]
        head = " ".join(statement.split())[:90]
        scans = ", ".join(dict.fromkeys(_SCAN.findall(text))) or "no scan"
        with suppress(ValueError):
            durations[(head, scans)].append(float(duration))
    total = sum(map(len, durations.values()))
    ranked = sorted(durations.items(), key=lambda item: -len(item[1]))[:top]
    return [f"{path.name}: {total} statements slower than the threshold"] + [
        f"  {len(values):5} x median {sorted(values)[len(values) // 2]:6.1f} ms  {head}\n"
        f"                              scans: {scans}"
        for (head, scans), values in ranked
    ]


async def measure(target: Target, clients: int, args: argparse.Namespace, *, round_: int) -> dict:
    profilers = []
    if args.profile:
        profilers = start_profilers(target, Path(args.profile), f"{target.label}-c{clients}", args.seconds)
    # Between counts the agents are idle, so these short blocking queries hold nothing up.
    memories_at_start = target.reset_statements() if args.statements else None
    before = target.cpu()
    started = time.monotonic()
    # The round is part of every written text: a count given twice (--clients 16,16) must not write what
    # the first round wrote, or re-remembering a text its agent forgot would count as a duplicate.
    tally = await run_count(target, clients, args.seconds, args.max_calls, f"r{round_}c{clients}")
    wall = time.monotonic() - started
    after = target.cpu()
    for profiler in profilers:
        profiler.wait(timeout=60)
    calls = max(tally.calls, 1)
    extra = (
        {"memories_at_start": memories_at_start, "statements": target.top_statements(args.statements, calls)}
        if args.statements
        else {}
    )
    return extra | {
        "server": target.label,
        "clients": clients,
        "seconds": round(wall, 1),
        "ops_per_s": round(tally.calls / wall, 1),
        "calls": tally.calls,
        "cpu_ms_per_op": {part: round(1000 * (after[part] - before[part]) / calls, 1) for part in before},
        "p50_p95_ms": {
            tool: [round(percentile(v, 0.5) * 1000), round(percentile(v, 0.95) * 1000)]
            for tool, v in sorted(tally.latencies.items())
        },
        "http_failures": dict(tally.http_failures),
        "tool_errors": dict(tally.tool_errors),
        "tool_error_kinds": dict(tally.tool_error_kinds.most_common(5)),
        "internal_errors": tally.internal_errors,
        "writes": verify(target.home, tally.acked_writes),
    }


def table(runs: list[dict]) -> list[str]:
    def p(run: dict, tool: str) -> str:
        return " / ".join(str(v) for v in run["p50_p95_ms"].get(tool, ["-", "-"]))

    lines = [
        "| clients | server | ops/s | CPU ms/op server / db / driver | recall p50/p95 ms | get_context p50/p95 "
        "| remember p50/p95 | HTTP failures | tool errors (internal) | acknowledged writes / lost / duplicated |",
        "|---:|---|---:|---|---:|---:|---:|---|---|---|",
    ]
    for run in runs:
        cpu = run["cpu_ms_per_op"]
        writes = run["writes"]
        failures = ", ".join(f"{k}: {v}" for k, v in run["http_failures"].items()) or "0"
        errors = sum(run["tool_errors"].values())
        lines.append(
            f"| {run['clients']} | {run['server']} | {run['ops_per_s']} "
            f"| {cpu['server']} / {cpu['db']} / {cpu['driver']} | {p(run, 'recall')} | {p(run, 'get_context')} "
            f"| {p(run, 'remember')} | {failures} | {errors} ({run['internal_errors']}) "
            f"| {writes['acknowledged']} / {writes['lost']} / {writes['duplicated']} |"
        )
    return lines


def sequence(counts: list[int], *, back: bool) -> list[int]:
    """The order the counts run in: as given, then (with `back`) again in reverse, so that each count's two
    runs sit on average at the same point of the store's growth (8,16,32,64,64,32,16,8)."""
    return counts + counts[::-1] if back else list(counts)


def means(runs: list[dict]) -> list[str]:
    """Each count's ops/s averaged over its runs, and the 32-client share of the best count (issue 14's
    "no collapse" test), per server."""
    lines = []
    for server in dict.fromkeys(run["server"] for run in runs):
        by_count: dict[int, list[float]] = defaultdict(list)
        for run in runs:
            if run["server"] == server:
                by_count[run["clients"]].append(run["ops_per_s"])
        mean = {clients: sum(v) / len(v) for clients, v in sorted(by_count.items())}
        text = ", ".join(f"{clients}: {value:.1f}" for clients, value in mean.items())
        best = max(mean.values())
        share = f"; 32 clients at {100 * mean[32] / best:.0f} % of the best" if 32 in mean else ""
        lines.append(
            f"{server}: mean ops/s per client count over {max(map(len, by_count.values()))} run(s): {text}{share}"
        )
    return lines


async def exercise(targets: list[Target], counts: list[int], args: argparse.Namespace, report: dict) -> None:
    for target in targets:
        await target.start_agents()
    for index, clients in enumerate(sequence(counts, back=args.back)):
        # Alternate which server goes first, so neither always meets the same neighbours' load.
        for target in targets if index % 2 == 0 else targets[::-1]:
            run = await measure(target, clients, args, round_=index)
            report["runs"].append(run)
            print(json.dumps(run), flush=True)
    for target in targets:
        await target.stop_agents()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[1])
    parser.add_argument("--clients", default="8,16,32,64", help="client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=40, help="per client count")
    parser.add_argument("--max-calls", type=int, default=400, help="per agent and client count")
    parser.add_argument("--workers", type=int, default=2, help="KENFOLD_WORKERS of each server")
    parser.add_argument(
        "--compare",
        metavar="REPO",
        help="another checkout (with its own .venv) to run interleaved with this one",
    )
    parser.add_argument("--profile", metavar="DIR", help="sample workers and driver with py-spy into DIR")
    parser.add_argument(
        "--statements",
        type=int,
        default=0,
        metavar="N",
        help="with pg_stat_statements preloaded in the servers, report each count's N statements with the "
        "most execution time, per operation",
    )
    parser.add_argument(
        "--slow-plans",
        type=float,
        metavar="MS",
        help="with auto_explain preloaded in the servers, log the plan of every statement slower than MS ms "
        "and report the slow statements by the scans they ran",
    )
    parser.add_argument(
        "--back",
        action="store_true",
        help="run the counts again in reverse order and report each count's mean over its two runs: the "
        "store grows during a run, which makes later counts dearer, and there and back cancels that",
    )
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="kenfold-load-"))
    targets = [Target("this", REPO, sys.executable, scratch / "this", free_port())]
    if args.compare:
        other = Path(args.compare).resolve()
        targets.insert(
            0, Target(other.name, other, str(other / ".venv/bin/python"), scratch / "other", free_port())
        )
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "runs": [],
    }
    print(json.dumps({k: report[k] for k in ("date", "command", "load_average_at_start")}), flush=True)
    try:
        with ExitStack() as stack:
            for target in targets:
                target.prepare(max(counts), statements=bool(args.statements), slow_plans_ms=args.slow_plans)
                target.server = stack.enter_context(
                    running(
                        [target.python, "manage.py", "serve", "--migrate"],
                        env=target.env(
                            KENFOLD_HTTP_ADDR=f"127.0.0.1:{target.port}", KENFOLD_WORKERS=str(args.workers)
                        ),
                        ready_url=f"{target.url}/readyz",
                        cwd=target.repo,
                        log_path=scratch / f"{target.label}-server.log",
                        timeout=180,
                    )
                )
            asyncio.run(exercise(targets, counts, args, report))
            report["server_log_problems"] = {t.label: t.log_problems() for t in targets}
            report["server_logs"] = {t.label: str(t.server.log_path) for t in targets if t.server}
    finally:
        for target in targets:
            if args.slow_plans is not None and (kept := target.keep_postgres_log(scratch)):
                report.setdefault("postgres_logs", {})[target.label] = str(kept)
            stop_cluster(target.home)
            # The homes' databases (a few hundred MB a run) go; the server logs beside them stay.
            shutil.rmtree(target.home, ignore_errors=True)
    print(json.dumps(report))
    for kept in report.get("postgres_logs", {}).values():
        print("\n".join(slow_plan_summary(Path(kept))))
    if args.profile:
        for path in sorted(Path(args.profile).glob("*.txt")):
            print("\n".join(profile_summary(path)))
    print(f"\nload average at start {report['load_average_at_start']}, {report['date']}")
    print("\n".join(table(sorted(report["runs"], key=lambda r: (r["clients"], r["server"] != "this")))))
    print("\n" + "\n".join(means(report["runs"])))
    for run in report["runs"] if args.statements else []:
        print(
            f"\n{run['server']}, {run['clients']} clients, {run['memories_at_start']} memories at the start:"
        )
        for row in run["statements"]:
            print(
                f"  {row['ms_per_op']:6.2f} ms/op  {row['mean_ms']:6.2f} ms x {row['calls']:5}  {row['statement']}"
            )


if __name__ == "__main__":
    main()
