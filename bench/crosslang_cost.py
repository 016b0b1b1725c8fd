"""What the cross-language bridge ranking (memories/search/crosslang.py) adds to each recall, measured in process.

    .venv/bin/python bench/crosslang_cost.py bench/data/dev.json [--passes 3]
    .venv/bin/python bench/crosslang_cost.py --synthetic 2000 [--candidates 110]

Loads the set like bench/retrieval_eval.py, then runs every query through `recall` `--passes` times and
times (time.perf_counter) the bridge step alone: building the ranking from the candidates' texts recall
has already fetched, and the extra fusion it costs. The first pass starts with an empty word cache (each
candidate's words computed once), later passes find them cached, as a running server does for the
memories it keeps returning. No SQL is timed: the step runs none.

--synthetic N: no database; the bridge ranking alone on the latency benchmark's synthetic corpus
(bench/latency/corpus.py, 20 % Korean), N questions each against --candidates memories drawn at random
from 100,000 template sentences: what a recall at 100,000 memories hands it (the first stage's candidates
are ~110 whatever the store's size), with less shared vocabulary than real candidates, so more words.
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
    parser.add_argument("data", type=Path, nargs="?")
    parser.add_argument("--synthetic", type=int, metavar="N", help="N synthetic questions, no database")
    parser.add_argument("--candidates", type=int, default=110)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--conversations", type=int, help="LoCoMo: only the first N conversations")
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args()
    if args.synthetic:
        return synthetic(args)
    if args.data is None:
        parser.error("give a data file or --synthetic N")
    return retrieval_eval.on_throwaway_database(
        argparse.Namespace(no_vectors=False, rerank_url=None), lambda: run(args)
    )


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from datetime import UTC, datetime

    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from access.caller import Caller
    from memories import selectors
    from memories.providers import configured
    from memories.search import crosslang, ranking, retrieval
    from memories.search.embedding_store import backfill
    from memories.search.retrieval import SearchOptions

    raw = json.loads(args.data.read_text())
    now = datetime.now(UTC)
    with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
        if isinstance(raw, list):
            conversations = raw[: args.conversations] if args.conversations else raw
            _ids, queries = retrieval_eval.load_locomo(conversations, now=now, context_turns=True)
        else:
            _ids, queries = retrieval_eval.load_kenfold_format(raw, now=now)
    for embedder in configured.embedders():
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


def synthetic(args: argparse.Namespace) -> int:
    import random
    import uuid

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.latency import corpus
    from memories.search import crosslang

    rng = random.Random(15)
    bases = corpus.make_bases(100_000, rng)
    texts = {uuid.UUID(int=index): base.text for index, base in enumerate(bases)}
    ids = sorted(texts)
    queries = corpus.make_queries(args.synthetic, rng)
    draws = [rng.sample(ids, min(args.candidates, len(ids))) for _ in queries]
    crosslang.words.cache_clear()
    for number in range(args.passes):
        timings = []
        ranked = 0
        for query, drawn in zip(queries, draws, strict=True):
            began = time.perf_counter()
            found = crosslang.bridge_ranking(query=query["query"], texts={i: texts[i] for i in drawn})
            timings.append((time.perf_counter() - began) * 1000)
            ranked += bool(found)
        ms = sorted(timings)
        print(
            f"pass {number + 1} ({'empty word cache' if number == 0 else 'cached'}): {len(ms)} questions "
            f"x {args.candidates} candidates of {len(bases)} memories, ranked something for {ranked}; ms p50 "
            f"{statistics.median(ms):.3f} p95 {ms[round(0.95 * (len(ms) - 1))]:.3f} max {ms[-1]:.3f} "
            f"mean {statistics.fmean(ms):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
