"""Retrieval sweep: load an eval set once, then run every query under each value of a retrieval setting.

    .venv/bin/python bench/retrieval_sweep.py bench/data/dev.json --set cross_language=0,0.5,1
    .venv/bin/python bench/retrieval_sweep.py ../shared/data/locomo/locomo10.json --locomo-context \\
        --set learned_rank=false,true [--conversations N] [--from-conversation N]

Each `--set NAME=V1,V2,...` names a key of settings.RETRIEVAL (the KENFOLD_SEARCH_* values), or a
module constant as `module.NAME` (memories.search.ranking.NON_LATIN_SHARE), or `weights` (files written by
bench/train_ranker.py --out, used in place of memories/search/ranker_weights.py), and the values to try, one run
per value (several --set: every combination). Loading, metrics and the report are
bench/retrieval_eval.py's; this only saves loading and embedding the set once per value.
"""

import argparse
import importlib
import importlib.util
import itertools
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_eval


def parse_value(text: str) -> object:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2", dest="sets")
    parser.add_argument("--conversations", type=int, help="LoCoMo: only the first N conversations")
    parser.add_argument("--from-conversation", type=int, default=0, help="LoCoMo: skip the first N")
    parser.add_argument("--locomo-context", action="store_true")
    parser.add_argument("--kinds", action="store_true", help="print every kind, not only the overall line")
    parser.add_argument("--json", type=Path, help="write every run's report here")
    args = parser.parse_args()
    sweeps: list[tuple[str, list[object]]] = []
    for item in args.sets:
        name, _, values = item.partition("=")
        if not name or not values:
            parser.error(f"--set takes NAME=V1,V2 (got {item!r})")
        sweeps.append((name, [parse_value(value) for value in values.split(",")]))

    def sweep() -> int:
        from django.conf import settings

        return run(args, sweeps, settings)

    return retrieval_eval.on_throwaway_database(argparse.Namespace(no_vectors=False, rerank_url=None), sweep)


def run(args: argparse.Namespace, sweeps: list[tuple[str, list[object]]], settings) -> int:
    from dataclasses import replace
    from datetime import UTC, datetime

    from django.db import connection
    from django.test import override_settings

    from access.caller import Caller
    from memories import selectors
    from memories.providers import configured
    from memories.search.embedding_store import backfill
    from memories.search.retrieval import SearchOptions

    raw = json.loads(args.data.read_text())
    now = datetime.now(UTC)
    with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
        if isinstance(raw, list):
            end = args.from_conversation + args.conversations if args.conversations else None
            conversations = raw[args.from_conversation : end]
            ids, queries = retrieval_eval.load_locomo(
                conversations, now=now, context_turns=args.locomo_context
            )
        else:
            ids, queries = retrieval_eval.load_kenfold_format(raw, now=now)
    for embedder in configured.embedders():
        backfill(embedder=embedder)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")
    print(f"{len(ids)} memories, {len(queries)} queries", file=sys.stderr)
    by_id = {memory_id: key for key, memory_id in ids.items()}
    caller = Caller(agent="eval")
    options = SearchOptions(now=now)
    names = [name for name, _ in sweeps]
    reports = []
    for combination in itertools.product(*(values for _, values in sweeps)):
        changed = dict(zip(names, combination, strict=True))
        if "weights" in changed:
            use_weights(Path(str(changed["weights"])))
        constants = {name: value for name, value in changed.items() if "." in name}
        retrieval = {name: value for name, value in changed.items() if "." not in name and name != "weights"}
        unknown = set(retrieval) - set(settings.RETRIEVAL)
        if unknown:
            raise SystemExit(f"not a retrieval setting: {', '.join(sorted(unknown))}")
        for name, value in constants.items():
            module, _, attribute = name.rpartition(".")
            setattr(importlib.import_module(module), attribute, value)
        rows: dict[str, list[dict[str, float]]] = defaultdict(list)
        latencies = []
        with override_settings(RETRIEVAL={**settings.RETRIEVAL, **retrieval}):
            for query in queries:
                began = time.perf_counter()
                result = selectors.memory_recall(
                    caller=caller,
                    query=query["query"],
                    project=query.get("project"),
                    limit=10,
                    options=options,
                )
                latencies.append((time.perf_counter() - began) * 1000)
                ranked = [by_id.get(view.id, view.id) for view in result.memories]
                scores = retrieval_eval.metrics(ranked, query["relevant"])
                rows["overall"].append(scores)
                rows[f"kind {query.get('kind')}"].append(scores)
        report = {name: retrieval_eval.summarize(group) for name, group in sorted(rows.items())}
        p50 = retrieval_eval.percentile(latencies, 50)
        label = " ".join(f"{name}={value}" for name, value in changed.items()) or "(current settings)"
        print(f"== {label}  (p50 {p50} ms)")
        for name, row in report.items():
            if args.kinds or name == "overall":
                print(
                    f"  {name:22} n={row['queries']:<5} R@5 {row['recall@5']:.3f}  R@10 {row['recall@10']:.3f}  "
                    f"MRR@10 {row['mrr@10']:.3f}"
                )
        reports.append({"settings": changed, "report": report, "p50_ms": p50})
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(reports, indent=2) + "\n")
    return 0


def use_weights(path: Path) -> None:
    """Put the numbers of a weights file written by bench/train_ranker.py in place of the shipped ones."""
    from memories.search import learned_rank, ranker_weights

    spec = importlib.util.spec_from_file_location("candidate_weights", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot read {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if module.FEATURES != learned_rank.FEATURES:
        raise SystemExit(f"{path} was trained on other features")
    for name in ("MEANS", "SCALES", "WEIGHTS", "BIAS"):
        setattr(ranker_weights, name, getattr(module, name))


if __name__ == "__main__":
    sys.exit(main())
