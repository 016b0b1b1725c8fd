"""What the cross-language bridge ranking (memories/crosslang.py) adds to each recall, measured in process.

    .venv/bin/python bench/crosslang_cost.py bench/data/dev.json [--passes 3]
    .venv/bin/python bench/crosslang_cost.py ../shared/data/locomo/locomo10.json --conversations 1

Loads the set like bench/retrieval_eval.py, then runs every query through `recall` `--passes` times and
times (time.perf_counter) the bridge step alone: building the ranking from the candidates' texts recall
has already fetched, and the extra fusion it costs. The first pass starts with an empty word cache (each
candidate's words computed once), later passes find them cached, as a running server does for the
memories it keeps returning. No SQL is timed: the step runs none.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_eval


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--conversations", type=int, help="LoCoMo: only the first N conversations")
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args()
    home = retrieval_eval.setup_environment(argparse.Namespace(no_vectors=False, rerank_url=None))
    import django

    django.setup()
    from django.core.management import call_command

    try:
        call_command("migrate", interactive=False, verbosity=0)
        return run(args)
    finally:
        retrieval_eval.close_throwaway(home)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from datetime import UTC, datetime

    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from kenfold.caller import Caller
    from memories import crosslang, providers, ranking, retrieval, selectors
    from memories.embedding_store import backfill
    from memories.retrieval import SearchOptions

    raw = json.loads(args.data.read_text())
    now = datetime.now(UTC)
    with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
        if isinstance(raw, list):
            conversations = raw[: args.conversations] if args.conversations else raw
            _ids, queries = retrieval_eval.load_locomo(conversations, now=now, context_turns=True)
        else:
            _ids, queries = retrieval_eval.load_kenfold_format(raw, now=now)
    for embedder in providers.embedders():
        backfill(embedder=embedder)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")

    timings: list[float] = []
    ranked: list[bool] = []
    plain_add_bridge = retrieval._add_bridge
    plain_fuse = ranking.fuse

    def timed_add_bridge(rankings, **kwargs):
        began = time.perf_counter()
        before = len(rankings)
        plain_add_bridge(rankings, **kwargs)
        timings.append(time.perf_counter() - began)
        ranked.append(len(rankings) > before)

    def timed_fuse(rankings, **kwargs):
        # The fusion the bridge adds: only when its ranking joined (with cross-language fusion the
        # fusion would run anyway; this counts it whenever the bridge ranked something, an upper bound).
        began = time.perf_counter()
        result = plain_fuse(rankings, **kwargs)
        if any(one.kind == ranking.BRIDGE for one in rankings) and timings:
            timings[-1] += time.perf_counter() - began
        return result

    retrieval._add_bridge = timed_add_bridge
    ranking.fuse = timed_fuse
    caller = Caller(agent="eval")
    options = SearchOptions(now=now)
    crosslang.words.cache_clear()
    report = {"data": str(args.data), "queries": len(queries), "passes": []}
    for number in range(args.passes):
        timings.clear()
        ranked.clear()
        for query in queries:
            selectors.memory_recall(
                caller=caller, query=query["query"], project=query.get("project"), limit=10, options=options
            )
        ms = sorted(t * 1000 for t in timings)
        row = {
            "pass": number + 1,
            "calls": len(ms),
            "ranked": sum(ranked),
            "p50_ms": round(statistics.median(ms), 3) if ms else 0.0,
            "p95_ms": round(ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], 3) if ms else 0.0,
            "max_ms": round(ms[-1], 3) if ms else 0.0,
            "mean_ms": round(statistics.fmean(ms), 3) if ms else 0.0,
        }
        report["passes"].append(row)
        print(
            f"pass {row['pass']} ({'empty word cache' if number == 0 else 'cached'}): {row['calls']} recalls, "
            f"bridge ranked something in {row['ranked']}; ms p50 {row['p50_ms']} p95 {row['p95_ms']} "
            f"max {row['max_ms']} mean {row['mean_ms']}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
