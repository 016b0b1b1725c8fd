"""The cluster's numbers (issue 40, item 4), in one run: throughput of bench/load's agents through HAProxy
with 3 web servers and with 1 (the other two in maintenance, so HAProxy sends them nothing), client counts
interleaved so drift on a shared machine hits both alike, with each process group's CPU per operation;
then recall latency with one client at the sizes asked, bulk-loaded with bench/latency's corpus (COPY, the
real models' vectors of template sentences plus noise), through the balancer and straight to one server."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import time
from datetime import UTC, datetime
from typing import Any

import psutil

from bench.cluster.cluster import Cluster
from bench.cluster.faults import Agents
from bench.latency.children import Checkout, run_task
from bench.latency.corpus import SEED, make_bases, make_queries
from bench.latency.load import bulk_load, embed_bases
from bench.latency.phases import run_phase
from bench.load.__main__ import percentile, run_count, tree_cpu_seconds
from bench.support.processes import REPO


def _balancer(cluster: Cluster, command: str) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(cluster.state_socket))
        sock.sendall(command.encode() + b"\n")
        sock.recv(4096)


def use_servers(cluster: Cluster, count: int) -> None:
    """Send traffic to web-1..web-`count` only."""
    for n in range(1, cluster.web_servers + 1):
        _balancer(cluster, f"set server web/web-{n} state {'ready' if n <= count else 'maint'}")


def cpu_seconds(cluster: Cluster) -> dict[str, float]:
    """CPU seconds so far of each kind of process: web servers, job workers, PgBouncer, PostgreSQL,
    HAProxy, and this driver."""
    services = cluster.supervisor.services
    parts = {"web": 0.0, "workers": 0.0, "pgbouncer": 0.0, "postgres": 0.0, "haproxy": 0.0}
    for name, service in services.items():
        kind = "web" if name.startswith("web-") else "workers" if name.startswith("worker-") else name
        parts[kind] += tree_cpu_seconds(service.pid)
    parts["driver"] = sum(psutil.Process().cpu_times()[:2])
    return parts


async def throughput(cluster: Cluster, counts: list[int], seconds: float) -> list[dict[str, Any]]:
    agents = Agents()
    await agents.start(cluster.url, cluster.keys[: max(counts)])
    use_servers(cluster, cluster.web_servers)
    # Every gunicorn worker loads the embedding models at its first call: paid here, not measured.
    await run_count(agents, min(16, max(counts)), 20, 30, "warm-up")
    runs = []
    for index, clients in enumerate(counts):
        order = (cluster.web_servers, 1) if index % 2 == 0 else (1, cluster.web_servers)
        for servers in order:
            use_servers(cluster, servers)
            before = cpu_seconds(cluster)
            started = time.monotonic()
            tally = await run_count(agents, clients, seconds, 10**9, f"n{index}s{servers}")
            wall = time.monotonic() - started
            after = cpu_seconds(cluster)
            calls = max(tally.calls, 1)
            run = {
                "clients": clients,
                "web_servers": servers,
                "ops_per_s": round(tally.calls / wall, 1),
                "cpu_ms_per_op": {
                    part: round(1000 * (after[part] - before[part]) / calls, 1) for part in before
                },
                "recall_p95_ms": round(percentile(tally.latencies.get("recall", []), 0.95) * 1000),
                "http_failures": sum(tally.http_failures.values()),
                "tool_errors": sum(tally.tool_errors.values()),
                "load_average": round(os.getloadavg()[0], 2),
            }
            runs.append(run)
            print(run, flush=True)
    use_servers(cluster, cluster.web_servers)
    await agents.stop()
    return runs


def cached_base_vectors(bases: list, checkout: Checkout, embed: str) -> tuple[dict[str, Any], list[dict]]:
    """bench/latency's base vectors, kept in bench/out between runs: embedding 4,000 sentences with both
    models takes minutes on a busy 2-core machine, and they only change with the models."""
    import numpy as np

    cache = REPO / "bench" / "out" / f"cluster-bases-{embed or 'default'}-{len(bases)}.npz"
    if cache.exists():
        with np.load(cache) as saved:
            models = json.loads(str(saved["models"]))
            return {model["name"]: saved[f"m{i}"] for i, model in enumerate(models)}, models
    vectors, models = embed_bases(bases, checkout, embed)
    cache.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"m{i}": vectors[model["name"]] for i, model in enumerate(models)}
    np.savez(cache, models=json.dumps(models), **arrays)
    return vectors, models


def load_memories(cluster: Cluster, size: int, embed: str) -> dict[str, Any]:
    """bench/latency's corpus of `size` memories in the cluster's database, its HNSW indexes built with
    the product's own code, then VACUUM ANALYZE; the timings."""
    checkout = Checkout.at(REPO)
    began = time.monotonic()
    bases = make_bases(4000, random.Random(SEED))
    base_vectors, models = cached_base_vectors(bases, checkout, embed)
    embedded = time.monotonic()
    load = bulk_load(
        cluster.scratch / "bench-load",
        size,
        bases,
        base_vectors,
        datetime.now(UTC),
        connect_to=cluster.superuser,
    )
    loaded = time.monotonic()
    direct = cluster.kenfold_env("bench-tasks", direct=True)
    extra = {k: v for k, v in direct.items() if k.startswith("KENFOLD_DATABASE")}
    (cluster.scratch / "bench-tasks").mkdir(exist_ok=True)
    run_task(
        "index",
        {"timeout_s": 3600, "models": models},
        home=cluster.scratch / "bench-tasks",
        checkout=checkout,
        embed=embed,
        extra=extra,
    )
    indexed = time.monotonic()
    with cluster.superuser() as conn:
        conn.execute("VACUUM ANALYZE memory")
        conn.execute("VACUUM ANALYZE memory_embedding")
        total = conn.execute("SELECT count(*) FROM memory").fetchone()[0]
    return {
        "memories": total,
        "embed_bases_s": round(embedded - began, 1),
        "copy_s": round(loaded - embedded, 1),
        "hnsw_s": round(indexed - loaded, 1),
        "vacuum_s": round(time.monotonic() - indexed, 1),
        "copy_timings": load.get("timings"),
    }


async def recall_latency(
    url: str, key: str, *, queries: list[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    phase = await run_phase(
        url + "/mcp", key, tool="recall", arguments=queries, clients=1, duration=seconds, warm=queries[0]
    )
    summary = phase.summary()
    return {k: summary[k] for k in ("calls", "errors", "p50_ms", "p95_ms", "p99_ms")}


def run_numbers(cluster: Cluster, args: argparse.Namespace, results: dict[str, Any]) -> None:
    """Fills `results` as it goes, so that a run stopped by --timeout keeps what it measured."""
    counts = [int(c) for c in args.counts.split(",")]
    results["throughput"] = asyncio.run(throughput(cluster, counts, args.seconds))
    key = cluster.keys[-1]
    queries = make_queries(3000, random.Random(SEED + 1))
    results["recall"] = []
    loaded = 0
    for size in sorted(int(s) for s in str(args.recall_memories).split(",")):
        row: dict[str, Any] = {"size": size}
        results["recall"].append(row)
        row["load"] = load_memories(cluster, size - loaded, args.embed or "")
        loaded = size
        # Interleaved, twice: through HAProxy to the 3 servers, and straight to web-1 (one server).
        for round_ in range(2):
            places = [("balancer", cluster.url), ("one server", cluster.web_url(1))]
            for where, url in places if round_ == 0 else places[::-1]:
                row.setdefault(where, []).append(
                    asyncio.run(recall_latency(url, key, queries=queries, seconds=20))
                )
        print(row, flush=True)
