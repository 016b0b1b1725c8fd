"""Every `recall` of bench/data/dev.json against whatever database Django is connected to: the ids in
order, per query. Used on both sides of the archive round trip (tests/archive/test_recall_round_trip.py),
in the test process and in the second Kenfold it starts (`python -m tests.archive.dev_recall`)."""

import json
import sys
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEV_SET = REPO / "bench" / "data" / "dev.json"


def rankings(*, now: datetime) -> dict[str, list[str]]:
    from django.db import connection

    from access.caller import Caller
    from memories import selectors
    from memories.search.retrieval import SearchOptions

    # The statistics autovacuum would gather (the lexical ranker reads word frequencies from them).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")
    queries = json.loads(DEV_SET.read_text())["queries"]
    return {
        query["id"]: [
            view.id
            for view in selectors.memory_recall(
                caller=Caller(agent="eval"),
                query=query["query"],
                project=query.get("project"),
                limit=10,
                options=SearchOptions(now=now),
            ).memories
        ]
        for query in queries
    }


def main() -> None:
    """In a second Kenfold (its own database): migrate, import the archive, run the backfill, recall."""
    import django

    archive, now = sys.argv[1], datetime.fromisoformat(sys.argv[2])
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("import", archive, stdout=sys.stderr)
    call_command("reindex", stdout=sys.stderr)
    sys.stdout.write(json.dumps(rankings(now=now)))


if __name__ == "__main__":
    main()
