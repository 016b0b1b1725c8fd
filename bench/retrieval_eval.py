"""Retrieval evaluation: load an eval set into a fresh database through the service layer, run every query
through the same code path as `recall`, and report recall@5, hit@5 and MRR@10 per split and per kind.

    .venv/bin/python bench/retrieval_eval.py bench/data/dev.json [--no-vectors] [--no-graph] [--no-recency]
        [--no-staleness] [--rerank-url URL] [--json OUT]
    .venv/bin/python bench/retrieval_eval.py ../shared/data/locomo/locomo10.json [--conversations 3]
        [--from-conversation 5]

Input: Kenfold's eval format ({"memories": [...], "queries": [...]}, see docs/benchmarks.md) or LoCoMo's
locomo10.json (one corpus per conversation, turn-level memories, categories 1-4; the `kind` is the file's
category number; recall@k there is evidence recall: the share of a question's evidence turns in the top k).

The database is a throwaway embedded cluster in a temporary KENFOLD_HOME (or KENFOLD_DATABASE_URL's
server, in a database named kenfold_eval_<pid> created and dropped here). Embeddings come from the
configured embedders (KENFOLD_EMBED; by default both local models), computed in batches after loading.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--no-vectors", action="store_true", help="full-text only (no embedder loaded)")
    parser.add_argument("--no-graph", action="store_true")
    parser.add_argument("--no-recency", action="store_true")
    parser.add_argument("--no-staleness", action="store_true")
    parser.add_argument("--rerank-url", help="use this reranker (KENFOLD_RERANK_URL)")
    parser.add_argument(
        "--limit", type=int, default=10, help="results per query (metrics use the top 5 and 10)"
    )
    parser.add_argument("--conversations", type=int, help="LoCoMo: only the first N conversations")
    parser.add_argument(
        "--from-conversation",
        type=int,
        default=0,
        help="LoCoMo: skip the first N conversations (the learned ranker trains on the first 5)",
    )
    parser.add_argument("--split", help="only queries of this split")
    parser.add_argument(
        "--locomo-context",
        action="store_true",
        help="LoCoMo: each turn memory also quotes the turn it replies to",
    )
    parser.add_argument(
        "--show-misses", action="store_true", help="print queries whose top 5 misses something"
    )
    return parser.parse_args()


def setup_environment(args: argparse.Namespace) -> Path | None:
    """Point Kenfold at a throwaway database before Django reads its settings."""
    home = None
    if not os.environ.get("KENFOLD_DATABASE_URL"):
        home = Path(tempfile.mkdtemp(prefix="kenfold-eval-"))
        os.environ["KENFOLD_HOME"] = str(home)
        os.environ["KENFOLD_EMBEDDED_DURABLE"] = "false"
    if args.no_vectors:
        os.environ["KENFOLD_EMBED"] = "off"
    if args.rerank_url:
        os.environ["KENFOLD_RERANK_URL"] = args.rerank_url
    os.environ.setdefault("KENFOLD_LOG_LEVEL", "warning")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    return home


def close_throwaway(home: Path | None) -> None:
    """Close Django's connections and, when `home` is the throwaway one setup_environment made, stop its
    embedded cluster and delete it (the teardown every script on a throwaway database shares)."""
    from django.conf import settings
    from django.db import connections

    connections.close_all()
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    if home is not None and cluster is not None:
        cluster.stop()
        shutil.rmtree(home, ignore_errors=True)


# --- loading ---------------------------------------------------------------------------------------


def load_kenfold_format(data: dict, *, now: datetime) -> tuple[dict[str, str], list[dict]]:
    """Store the memories as agents would (remember, handoff semantics), backdated with the clock seam."""
    from access.caller import Caller
    from coderefs.models import CodeRef
    from kenfold import clock
    from memories.models import Memory, MemoryEdge
    from memories.services.remember import memory_remember
    from memories.services.review import memory_approve, memory_forget

    ids: dict[str, str] = {}
    for item in sorted(data["memories"], key=lambda m: -float(m.get("age_days", 0))):
        created = now - timedelta(days=float(item.get("age_days", 0)))
        ttl = int(float(item["ttl_days"]) * 86400) if item.get("ttl_days") is not None else None
        with clock.frozen(created):
            result = memory_remember(
                caller=Caller(agent=item.get("agent") or "eval"),
                content=item["content"],
                type=item["type"],
                project=item.get("project"),
                ttl_seconds=ttl,
            )
        ids[item["key"]] = result.id
        status = item.get("status", "active")
        if item["type"] == "preference" and status == "active":
            memory_approve(memory_id=result.id)
        if status == "deleted":
            memory_forget(caller=Caller(agent="eval"), memory_id=result.id, reason="eval")
        elif status != Memory.objects.get(pk=result.id).status:
            # The set says how a memory ended up (superseded by something outside the set, proposed).
            Memory.objects.filter(pk=result.id).update(status=status)
        if item.get("trust"):
            Memory.objects.filter(pk=result.id).update(trust=item["trust"])
    for item in data["memories"]:
        if item.get("derived_from") in ids:
            MemoryEdge.objects.get_or_create(
                src_id=ids[item["key"]],
                relation="derived_from",
                dst_id=ids[item["derived_from"]],
                defaults={"source_agent": "kenfold-extractor"},
            )
        for ref in item.get("refs") or []:
            memory = Memory.objects.get(pk=ids[item["key"]])
            if not memory.scope.startswith(("project:", "repo:")):
                continue
            anchored = ref.get("state", "pending") in ("current", "changed", "missing")
            CodeRef.objects.update_or_create(
                memory=memory,
                path=ref.get("path", ""),
                symbol=ref.get("symbol", ""),
                defaults={
                    "scope": memory.scope,
                    "state": ref.get("state", "pending"),
                    "anchor_hash": "eval" if anchored else None,
                    "anchor_commit": "0" * 40 if anchored else None,
                    "checked_commit": "0" * 40 if anchored else None,
                },
            )
    return ids, data["queries"]


_LOCOMO_DATE = "%I:%M %p on %d %B, %Y"


CONTEXT_CHARS = 200


def load_locomo(
    conversations: list[dict], *, now: datetime, context_turns: bool
) -> tuple[dict[str, str], list[dict]]:
    """Each conversation is its own project; each turn a memory "Speaker (date): text" dated by its session."""
    from access.caller import Caller
    from kenfold import clock
    from memories.services.remember import memory_remember

    ids: dict[str, str] = {}
    queries: list[dict] = []
    for index, sample in enumerate(conversations):
        project = f"locomo/{sample.get('sample_id', index)}"
        talk = sample["conversation"]
        sessions = sorted(
            (int(m.group(1)), key) for key in talk if (m := re.fullmatch(r"session_(\d+)", key))
        )
        dates = {
            n: datetime.strptime(talk[f"session_{n}_date_time"].strip(), _LOCOMO_DATE) for n, _ in sessions
        }
        latest = max(dates.values())
        for n, key in sessions:
            created = now - (latest - dates[n])
            previous = None
            for turn in talk[key]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                content = f"{turn['speaker']} ({dates[n]:%d %B %Y}): {text}"
                if context_turns and previous is not None:
                    # A reply ("Yes, last Tuesday!") means little alone: keep what it answers.
                    content += f" (replying to {previous['speaker']}: {previous['text'][:CONTEXT_CHARS]})"
                previous = turn
                with clock.frozen(created):
                    result = memory_remember(
                        caller=Caller(agent="locomo"), content=content, type="semantic", project=project
                    )
                ids[f"{project}#{turn['dia_id']}"] = result.id
        for number, qa in enumerate(sample["qa"]):
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            evidence = []
            for entry in qa.get("evidence") or []:
                for dia in re.split(r"[;\s]+", str(entry)):
                    key = f"{project}#{dia.strip()}"
                    if dia.strip() and key in ids and key not in evidence:
                        evidence.append(key)
            if not evidence:
                continue
            queries.append(
                {
                    "id": f"{project}#q{number}",
                    "split": "locomo",
                    "project": project,
                    "query": qa["question"],
                    "relevant": evidence,
                    "kind": f"category-{qa['category']}",
                }
            )
    return ids, queries


# --- evaluation ------------------------------------------------------------------------------------


def metrics(ranked: list[str], relevant: list[str]) -> dict[str, float]:
    wanted = set(relevant)
    top5, top10 = ranked[:5], ranked[:10]
    found5 = len(wanted & set(top5))
    reciprocal = next((1.0 / rank for rank, mid in enumerate(top10, 1) if mid in wanted), 0.0)
    return {
        "recall@5": found5 / min(len(wanted), 5),
        "recall@10": len(wanted & set(top10)) / min(len(wanted), 10),
        "hit@5": 1.0 if found5 else 0.0,
        "mrr@10": reciprocal,
    }


def summarize(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = ("recall@5", "recall@10", "hit@5", "mrr@10")
    out = {key: round(statistics.fmean(r[key] for r in rows), 4) if rows else 0.0 for key in keys}
    out["queries"] = len(rows)
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return round(ordered[index], 2)


def on_throwaway_database(args: argparse.Namespace, run: Callable[[], int]) -> int:
    """Set up the environment `args` asks for (a throwaway embedded cluster unless a database is
    configured), migrate, call `run`, and tear the throwaway cluster down whatever happens: what every
    script on a throwaway database does around its own work."""
    home = setup_environment(args)
    import django

    django.setup()
    from django.core.management import call_command

    try:
        call_command("migrate", interactive=False, verbosity=0)
        return run()
    finally:
        close_throwaway(home)


def main() -> int:
    args = parse_args()
    return on_throwaway_database(args, lambda: run(args))


def run(args: argparse.Namespace) -> int:
    from django.conf import settings
    from django.test import override_settings

    from access.caller import Caller
    from memories import selectors
    from memories.providers import configured
    from memories.search.embedding_store import backfill
    from memories.search.retrieval import SearchOptions

    raw = json.loads(args.data.read_text())
    now = datetime.now(UTC)
    started = time.perf_counter()
    # Load without embedding each memory on write, then embed in batches: same vectors, much faster.
    with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
        if isinstance(raw, list):
            end = args.from_conversation + args.conversations if args.conversations else None
            conversations = raw[args.from_conversation : end]
            ids, queries = load_locomo(conversations, now=now, context_turns=args.locomo_context)
        else:
            ids, queries = load_kenfold_format(raw, now=now)
    for embedder in configured.embedders():
        report = backfill(embedder=embedder)
        print(
            f"embedded {report.embedded} memories with {embedder.name} ({report.failed} failed)",
            file=sys.stderr,
        )
    print(f"loaded {len(ids)} memories in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    # What autovacuum does to a settled database: the planner's statistics (also the lexical ranker's
    # word frequencies for common words).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")

    options = SearchOptions(
        vectors=not args.no_vectors,
        graph=not args.no_graph,
        recency=not args.no_recency,
        staleness=not args.no_staleness,
        now=now,
    )
    by_id = {memory_id: key for key, memory_id in ids.items()}
    caller = Caller(agent="eval")
    per_query: list[tuple[dict, dict[str, float]]] = []
    latencies: list[float] = []
    for query in queries:
        if args.split and query.get("split") != args.split:
            continue
        began = time.perf_counter()
        result = selectors.memory_recall(
            caller=caller,
            query=query["query"],
            project=query.get("project"),
            limit=args.limit,
            options=options,
        )
        latencies.append((time.perf_counter() - began) * 1000)
        ranked = [by_id.get(view.id, view.id) for view in result.memories]
        scores = metrics(ranked, query["relevant"])
        per_query.append((query, scores))
        if args.show_misses and scores["recall@5"] < 1:
            print(
                f"MISS {query['id']} [{query.get('kind')}] {query['query']!r}\n  want {query['relevant']}\n  got  {ranked[:5]}"
            )

    report = {
        "overall": summarize([s for _, s in per_query]),
        "splits": {},
        "kinds": {},
        "latency_ms": {
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "p99": percentile(latencies, 99),
        },
        "config": {
            "data": str(args.data),
            "embedder": " + ".join(e.name for e in configured.embedders()) or None,
            "reranker": bool(configured.reranker()),
            "vectors": options.vectors,
            "graph": options.graph,
            "recency": options.recency,
            "staleness": options.staleness,
            "memories": len(ids),
        },
    }
    groups: dict[str, dict[str, list]] = {"splits": defaultdict(list), "kinds": defaultdict(list)}
    for query, scores in per_query:
        groups["splits"][query.get("split", "all")].append(scores)
        groups["kinds"][query.get("kind", "none")].append(scores)
    for name, group in groups.items():
        report[name] = {key: summarize(rows) for key, rows in sorted(group.items())}

    print_report(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def print_report(report: dict) -> None:
    def line(name: str, row: dict) -> str:
        return (
            f"{name:24} n={row['queries']:<5} R@5 {row['recall@5']:.3f}  R@10 {row['recall@10']:.3f}  "
            f"hit@5 {row['hit@5']:.3f}  MRR@10 {row['mrr@10']:.3f}"
        )

    print(json.dumps(report["config"]))
    print(line("overall", report["overall"]))
    for name, row in report["splits"].items():
        print(line(f"split {name}", row))
    for name, row in report["kinds"].items():
        print(line(f"kind {name}", row))
    latency = report["latency_ms"]
    print(f"latency ms: p50 {latency['p50']}  p95 {latency['p95']}  p99 {latency['p99']}")


if __name__ == "__main__":
    sys.exit(main())
