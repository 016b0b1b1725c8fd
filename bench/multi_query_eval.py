"""Several phrasings at once (`recall` with `queries`): does asking in English and Korean together, or in
two paraphrases, find more than asking once?

    .venv/bin/python bench/multi_query_eval.py bench/data/dev.json bench/data/xlang_holdout.json [--json OUT]

The files must hold the same memories (dev.json and xlang_holdout.json do). Their queries that expect the
same memories are phrasings of one question: a group. Each group's phrasings are asked alone (`query`) and
all together (`queries`, fused by memories.search.multi_query), through the same code path as the tool; recall@5,
recall@10, hit@5 and MRR@10 as in bench/retrieval_eval.py. Groups with both a Korean and a Latin-script
phrasing are "cross-language" (alone: the English and the Korean phrasings separately); the others are
"same language" (paraphrases). Loading and the throwaway database are retrieval_eval's.
"""

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_eval

_HANGUL = re.compile(r"[\uac00-\ud7af]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--no-vectors", action="store_true", help="full-text only")
    args = parser.parse_args()
    return retrieval_eval.on_throwaway_database(
        argparse.Namespace(no_vectors=args.no_vectors, rerank_url=None), lambda: run(args)
    )


def groups_of(files: list[dict]) -> list[list[dict]]:
    """Queries of all files that expect the same memories, in groups of two or more phrasings."""
    first = files[0]["memories"]
    if any(data["memories"] != first for data in files[1:]):
        raise SystemExit("the files must hold the same memories")
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for data in files:
        for query in data["queries"]:
            grouped[(query.get("project"), tuple(sorted(query["relevant"])))].append(query)
    return [queries for queries in grouped.values() if len(queries) > 1]


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from datetime import UTC, datetime

    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from access.caller import Caller
    from memories import selectors
    from memories.providers import configured
    from memories.search.embedding_store import backfill
    from memories.search.retrieval import SearchOptions

    files = [json.loads(path.read_text()) for path in args.data]
    groups = groups_of(files)
    now = datetime.now(UTC)
    with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
        ids, _queries = retrieval_eval.load_kenfold_format(files[0], now=now)
    for embedder in configured.embedders():
        backfill(embedder=embedder)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")
    by_id = {memory_id: key for key, memory_id in ids.items()}
    options = SearchOptions(now=now)
    caller = Caller(agent="eval")

    def ask(project: str | None, **question: object) -> tuple[dict[str, float], float]:
        began = time.perf_counter()
        result = selectors.memory_recall(
            caller=caller, project=project, limit=10, options=options, **question
        )
        elapsed = (time.perf_counter() - began) * 1000
        ranked = [by_id.get(view.id, view.id) for view in result.memories]
        return ranked, elapsed

    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    latency: dict[str, list[float]] = defaultdict(list)
    for group in groups:
        relevant, project = group[0]["relevant"], group[0].get("project")
        korean = [query for query in group if _HANGUL.search(query["query"])]
        kind = "cross-language" if korean and len(korean) < len(group) else "same language"
        for query in group:
            ranked, elapsed = ask(project, query=query["query"])
            label = "alone"
            if kind == "cross-language":
                label = "alone, Korean" if query in korean else "alone, English"
            rows[f"{kind}: {label}"].append(retrieval_eval.metrics(ranked, relevant))
            if kind == "cross-language":
                rows[f"{kind}: alone (every phrasing)"].append(retrieval_eval.metrics(ranked, relevant))
            latency["query"].append(elapsed)
        phrasings = [query["query"] for query in group][:5]
        ranked, elapsed = ask(project, queries=phrasings)
        rows[f"{kind}: together"].append(retrieval_eval.metrics(ranked, relevant))
        latency[f"queries ({len(phrasings)})"].append(elapsed)

    report = {
        "config": {
            "data": [str(path) for path in args.data],
            "embedder": " + ".join(e.name for e in configured.embedders()) or None,
            "memories": len(ids),
            "groups": len(groups),
        },
        "results": {name: retrieval_eval.summarize(values) for name, values in sorted(rows.items())},
        "latency_ms_p50": {name: retrieval_eval.percentile(values, 50) for name, values in latency.items()},
    }
    print(json.dumps(report["config"]))
    for name, row in report["results"].items():
        print(
            f"{name:40} n={row['queries']:<4} R@5 {row['recall@5']:.3f}  R@10 {row['recall@10']:.3f}  "
            f"hit@5 {row['hit@5']:.3f}  MRR@10 {row['mrr@10']:.3f}"
        )
    print("latency p50 ms:", json.dumps(report["latency_ms_p50"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
