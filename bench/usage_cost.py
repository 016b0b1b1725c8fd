"""What recording usage (memories.usage) adds to a recall: the same recalls with KENFOLD_USAGE_DAYS=30 and
with 0 (nothing recorded), interleaved, and the record statement alone.

    .venv/bin/python bench/usage_cost.py [--calls 400] [--not-durable] [--json OUT]

Loads the project store of bench/delta_context.py (bench/data/delta_project.json) through the service
layer into a throwaway embedded cluster, full-text search only (no embedding model), then calls
recall_deliver (what the MCP tool calls) with the store's rule texts as queries, alternating the
setting call by call (ABBA) so both modes see the same machine load. The cluster is durable by default (each
commit waits for the disk, as in a real install); --not-durable measures without that wait.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="recalls per mode")
    parser.add_argument("--not-durable", action="store_true", help="commits do not wait for the disk")
    parser.add_argument("--json", type=Path, help="write the report here")
    return parser.parse_args()


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 3),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
    }


def run(calls: int) -> dict:
    from django.conf import settings

    from access.caller import Caller
    from bench.delta_context import load_project
    from kenfold import clock
    from memories import usage
    from memories.models import ServedCall
    from memories.services.delivery import recall_deliver

    data = json.loads((REPO / "bench" / "data" / "delta_project.json").read_text())
    load_project(data)
    project, queries = data["project"], [text for _kind, text in data["facts"]] + data["rules"]
    agent = Caller(agent="codex", credential="key:bench")
    times: dict[int, list[float]] = {30: [], 0: []}
    for index in range(calls * 2):
        # ABBA order: neither mode always runs first in its pair.
        days = 30 if index % 4 in (0, 3) else 0
        settings.USAGE_DAYS = days
        query = queries[(index // 2) % len(queries)]
        started = time.perf_counter()
        output = recall_deliver(caller=agent, query=query, project=project)
        times[days].append(time.perf_counter() - started)
        assert output.memories
    settings.USAGE_DAYS = 30
    ids = [item.id for item in output.memories]
    alone = []
    for _ in range(calls):
        started = time.perf_counter()
        usage.usage_record(caller=agent, tool="recall", memory_ids=ids, session_id=None, now=clock.now())
        alone.append(time.perf_counter() - started)
    with_usage, without = percentiles(times[30]), percentiles(times[0])
    return {
        "memories": len(data["preferences"])
        + len(data["rules"])
        + len(data["facts"])
        + len(data["sessions"])
        + 1,
        "calls_per_mode": calls,
        "recall_recording": with_usage,
        "recall_not_recording": without,
        "added_p50_ms": round(with_usage["p50_ms"] - without["p50_ms"], 3),
        "record_alone": percentiles(alone),
        "rows": ServedCall.objects.count(),
        "ids_per_row": len(ids),
    }


def main() -> int:
    args = parse_args()
    home = None
    if not os.environ.get("KENFOLD_DATABASE_URL"):
        home = Path(tempfile.mkdtemp(prefix="kenfold-usage-"))
        os.environ["KENFOLD_HOME"] = str(home)
        os.environ["KENFOLD_EMBEDDED_DURABLE"] = "false" if args.not_durable else "true"
    os.environ["KENFOLD_EMBED"] = "off"
    os.environ.setdefault("KENFOLD_LOG_LEVEL", "warning")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    import django

    django.setup()
    from django.core.management import call_command

    try:
        call_command("migrate", interactive=False, verbosity=0)
        report = run(args.calls)
    finally:
        from bench.retrieval_eval import close_throwaway

        close_throwaway(home)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
