"""The benchmark's Django-side tasks, each run in a child process for one KENFOLD_HOME.

Run by path with `python -P` (see `children.run_task`), so the product code imported here is the checkout on
PYTHONPATH (--repo), not the benchmark's: this module imports nothing of the benchmark, and nothing of the
product at module level. The payload comes in BENCH_PAYLOAD; the result is the last line starting with
RESULT_PREFIX on stdout.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

AGENT = "bench"
RESULT_PREFIX = "RESULT "


def main(task: str) -> None:
    payload = json.loads(os.environ.get("BENCH_PAYLOAD", "{}"))
    if task == "embed":
        # The models only: no Django, no database.
        result = _task_embed(payload)
    else:
        import django

        django.setup()
        from django.db import connection

        result = {"index": _task_index, "profile": _task_profile, "explain": _task_explain}[task](
            connection, payload
        )
    print(RESULT_PREFIX + json.dumps(result, default=str))


def _check_models(expected: list[dict[str, Any]]) -> list[Any]:
    """The configured embedders, after checking that they are the models whose vectors were loaded."""
    from memories.providers import configured

    embedders = configured.embedders()
    configured = [embedder.name for embedder in embedders]
    loaded = [model["name"] for model in expected]
    if configured != loaded:
        raise RuntimeError(f"the configured embedders {configured} are not the loaded models {loaded}")
    return embedders


def _task_embed(payload: dict[str, Any]) -> dict[str, Any]:
    """Every configured embedder's vectors for the texts in payload["texts"], saved to payload["out"]."""
    import numpy as np

    from memories.providers import configured

    texts = json.loads(Path(payload["texts"]).read_text())
    models: list[dict[str, Any]] = []
    arrays: dict[str, Any] = {}
    for index, embedder in enumerate(configured.embedders()):
        t0 = time.monotonic()  # includes loading the model
        vectors = np.asarray(embedder.embed(texts, timeout=3600), dtype=np.float32)
        models.append(
            {
                "name": embedder.name,
                "class": type(embedder).__name__,
                "dimensions": int(vectors.shape[1]),
                "embed_s": round(time.monotonic() - t0, 1),
            }
        )
        arrays[f"m{index}"] = vectors
    if not models:
        raise RuntimeError("no embedder is configured: the benchmark measures vector search too")
    np.savez(payload["out"], **arrays)
    return {"models": models}


def _task_index(connection: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Build every loaded model's HNSW index, in order, within payload["timeout_s"] for all of them."""
    from django.db import OperationalError

    from memories.search.embedding_store import ensure_model_index

    _check_models(payload["models"])
    connection.ensure_connection()
    notices: list[str] = []
    connection.connection.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    deadline = time.monotonic() + payload["timeout_s"]
    built: dict[str, dict[str, Any]] = {}
    stopped = False
    for model in payload["models"]:
        name, dimensions = model["name"], model["dimensions"]
        entry: dict[str, Any] = {
            "dimensions": dimensions,
            "indexes": [],
            "seconds": 0.0,
            "started": False,
            "finished": False,
            "notices": [],
        }
        built[name] = entry
        left = deadline - time.monotonic()
        if stopped or left <= 1:
            continue  # the budget is spent: this model's index is not built
        # The benchmark's own session only: a build that would not finish in the time left is abandoned.
        with connection.cursor() as cursor:
            cursor.execute(f"SET statement_timeout = {int(left * 1000)}")
        first = len(notices)
        entry["started"] = True
        t0 = time.monotonic()
        try:
            ensure_model_index(model=name, dimensions=dimensions)
            entry["finished"] = True
        except OperationalError as exc:
            if "statement timeout" not in str(exc):
                raise
            stopped = True
        entry["seconds"] = time.monotonic() - t0
        entry["notices"] = notices[first:]
        entry["indexes"] = _hnsw_indexes(connection, name)
    scope_seconds, scope_built = _scope_indexes(connection, deadline) if not stopped else (0.0, 0)
    several = len(built) > 1
    primary = payload["models"][0]
    return {
        "scope_index_seconds": scope_seconds,
        "scope_indexes_built": scope_built,
        "seconds": sum(entry["seconds"] for entry in built.values()),
        "finished": all(entry["finished"] for entry in built.values()),
        "notices": [
            f"{name}: {notice}" if several else notice
            for name, entry in built.items()
            for notice in entry["notices"]
        ],
        "indexes": built[primary["name"]]["indexes"],
        "models": built,
    }


def _scope_indexes(connection: Any, deadline: float) -> tuple[float, int]:
    """Build the per-scope graphs as the checkout's worker would (memories.search.scope_indexes; a checkout
    without them builds none): (seconds, indexes built)."""
    import memories

    # Tested by file, not by import: the shared venv's editable install would lend a checkout without the
    # module another checkout's copy.
    if not (Path(memories.__path__[0]) / "scope_indexes.py").is_file():
        return 0.0, 0
    from memories.search.scope_indexes import build_scope_indexes

    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")
    t0 = time.monotonic()
    report = build_scope_indexes(budget_seconds=max(0.0, deadline - time.monotonic()))
    return time.monotonic() - t0, report.built


def _hnsw_indexes(connection: Any, model: str) -> list[str]:
    """Every HNSW index whose predicate names the model: one for all its vectors, or several in a checkout
    that indexes each scope apart (branch per-scope-hnsw), whichever the measured checkout builds."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_embedding' "
            "AND indexdef LIKE '%%USING hnsw%%' AND indexdef LIKE %s ORDER BY indexname",
            [f"%model = '{model}'%"],
        )
        return [row[0] for row in cursor.fetchall()]


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }


def _task_profile(connection: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Where the time goes without HTTP: embedding, each ranker's SQL, and each tool's whole service call.

    `embed` and `vector_sql` are the sums over the configured models, one after another (recall runs
    them beside each other and beside the lexical search); with several models, `embed[<model>]` and
    `vector_sql[<model>]` are each model's own. `recall_total` is the whole pipeline, as served.
    """
    from access.caller import Caller
    from kenfold import clock
    from memories.search import fulltext
    from memories.search.vector import vector_search
    from memories.selectors import context_get, memory_recall, read_scopes
    from memories.services.remember import memory_remember

    embedders = _check_models(payload["models"])
    queries = payload["queries"]
    stages: dict[str, list[float]] = {"embed": [], "lexical_sql": [], "vector_sql": [], "recall_total": []}
    if len(embedders) > 1:
        for embedder in embedders:
            stages[f"embed[{embedder.name}]"] = []
            stages[f"vector_sql[{embedder.name}]"] = []
    hits: list[int] = []
    caller = Caller(agent=AGENT)
    for round_ in range(2):  # the first round warms the models and the caches and is not recorded
        for item in queries:
            scopes = read_scopes(item["project"])
            now = clock.now()
            embed_ms: dict[str, float] = {}
            vector_ms: dict[str, float] = {}
            vectors: dict[str, list[float]] = {}
            for embedder in embedders:
                t0 = time.perf_counter()
                vectors[embedder.name] = embedder.embed([item["query"]], timeout=10, side="query")[0]
                embed_ms[embedder.name] = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            lexical = fulltext.lexical_search(
                query=item["query"], scopes=scopes, types=None, now=now, limit=50
            )
            lexical_ms = (time.perf_counter() - t1) * 1000
            for embedder in embedders:
                t2 = time.perf_counter()
                vector_search(
                    vector=vectors[embedder.name],
                    model=embedder.name,
                    scopes=scopes,
                    types=None,
                    now=now,
                    limit=50,
                    max_distance=2.0,
                )
                vector_ms[embedder.name] = (time.perf_counter() - t2) * 1000
            t3 = time.perf_counter()
            memory_recall(caller=caller, query=item["query"], project=item["project"])
            recall_ms = (time.perf_counter() - t3) * 1000
            if round_:
                stages["embed"].append(sum(embed_ms.values()))
                stages["lexical_sql"].append(lexical_ms)
                stages["vector_sql"].append(sum(vector_ms.values()))
                stages["recall_total"].append(recall_ms)
                if len(embedders) > 1:
                    for name in vectors:
                        stages[f"embed[{name}]"].append(embed_ms[name])
                        stages[f"vector_sql[{name}]"].append(vector_ms[name])
                hits.append(len(lexical))
    for name, function, items in (
        ("get_context_total", context_get, payload["tasks"]),
        ("remember_total", memory_remember, payload["writes"]),
    ):
        stages[name] = []
        for index, item in enumerate(items):
            t0 = time.perf_counter()
            function(caller=caller, **item)
            if index >= 5:  # the first calls warm up
                stages[name].append((time.perf_counter() - t0) * 1000)
    # Django closes the connection at the end of every request: without a pool the next request gets a
    # new PostgreSQL backend, with empty catalog caches and no text-search dictionary loaded; with one,
    # a pooled backend. The same recall calls after connection.close() show what a request pays for it.
    stages["connect"], stages["recall_fresh_connection"] = [], []
    for item in queries:
        connection.close()
        t0 = time.perf_counter()
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        t1 = time.perf_counter()
        connection.close()
        t2 = time.perf_counter()
        memory_recall(caller=caller, query=item["query"], project=item["project"])
        t3 = time.perf_counter()
        stages["connect"].append((t1 - t0) * 1000)
        stages["recall_fresh_connection"].append((t3 - t2) * 1000)
    return {
        "median_ms": {name: _percentiles(values)["p50"] for name, values in stages.items()},
        "p95_ms": {name: _percentiles(values)["p95"] for name, values in stages.items()},
        "queries": len(queries),
        "lexical_hits_median": statistics.median(hits),
        "models": [embedder.name for embedder in embedders],
    }


def _task_explain(connection: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """EXPLAIN (ANALYZE, BUFFERS) of the SQL that recall and get_context really send."""
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext

    from access.caller import Caller
    from memories.selectors import context_get, memory_recall
    from memories.services.remember import memory_remember

    caller = Caller(agent=AGENT)
    calls: list[tuple[str, Callable[..., object], dict[str, Any]]] = [
        *((f"recall {q['query']!r}", memory_recall, q) for q in payload["queries"]),
        *((f"get_context {t['task']!r}", context_get, t) for t in payload["tasks"]),
        *((f"remember {w['content']!r}", memory_remember, w) for w in payload["writes"]),
    ]
    out = []
    for label, function, arguments in calls:
        if function is memory_remember:
            # Warm with another text: a second identical remember would only find the duplicate.
            function(caller=caller, **(arguments | {"content": arguments["content"] + " (warm-up)"}))
        else:
            function(caller=caller, **arguments)
        with CaptureQueriesContext(connection) as captured:
            function(caller=caller, **arguments)
        for entry in captured.captured_queries:
            sql = entry["sql"]
            # Reads only: EXPLAIN ANALYZE executes the statement, and a write would run twice.
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")) or "memory" not in sql:
                continue
            # The server's connections already scan HNSW iteratively (kenfold.settings); so does this one.
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
                plan = [row[0] for row in cursor.fetchall()]
            out.append({"call": label, "sql": sql, "client_ms": float(entry["time"]) * 1000, "plan": plan})
    return {"statements": out}


if __name__ == "__main__":
    main(sys.argv[1])
