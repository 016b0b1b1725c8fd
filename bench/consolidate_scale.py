"""How long a consolidation run's database work takes at size: `python bench/consolidate_scale.py --size N`.

The worker runs every 15 minutes over the whole store, so its queries must stay bounded as memory grows.
This loads N synthetic memories (the latency benchmark's sentences, bench/latency/corpus.py, over 20
project scopes and the user scope, created over a year; 1 % written again in other words, with a vector
close to the first one's) and 384-dimension vectors of one model into a throwaway
embedded PostgreSQL, then times what a run asks the database, in process, without a chat model: the
oldest batch of unscanned memories (selectors.scan_batch, 100) and the pairs they form (selectors.pair_candidates,
vectors and trigrams, and trigrams alone), the digest group, and
marking stale proposals. Reports the median of --repeats runs of each, in milliseconds.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL = "bench-384"
DIMENSIONS = 384


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories to load (default 10000)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser.parse_args()


def load_memories(size: int) -> None:
    """``size`` distinct sentences of the latency benchmark's corpus (bench/latency/corpus.py: templates
    filled from a few hundred domain words, ~20 % Korean, every type), spread over 21 scopes and a year."""
    import random

    from django.db import connection

    from bench.latency.corpus import SEED, make_bases

    bases = make_bases(size, random.Random(SEED))
    connection.ensure_connection()
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(
            "COPY memory (type, scope, content, source_agent, status, created_at, updated_at) FROM STDIN"
        ) as copy,
    ):
        for index, base in enumerate(bases[:size]):
            scope = "user" if index % 21 == 0 else f"project:github.com/bench/p{index % 21}"
            # Temporary notes need an expiry and are never paired: general facts stand in for them.
            memory_type = "semantic" if base.type == "temporary" else base.type
            created = datetime.now(UTC) - timedelta(days=index % 365 + 1)
            copy.write_row((memory_type, scope, base.text, "bench", "active", created, created))


VECTORS = f"""
INSERT INTO memory_embedding (memory_id, model, embedding, content_md5)
SELECT m.id, '{MODEL}', l2_normalize(v.vec), md5(m.content)
FROM memory m,
     LATERAL (SELECT array_agg(random() - 0.5)::vector({DIMENSIONS}) AS vec
              FROM generate_series(1, {DIMENSIONS}) AS d WHERE m.id IS NOT NULL) AS v
"""
# 1 % written again in other words, by another agent a day later, with a vector a small step away.
AGAIN = f"""
WITH picked AS (
    SELECT m.id, m.type, m.scope, m.content, m.created_at, e.embedding FROM memory m
    JOIN memory_embedding e ON e.memory_id = m.id AND e.model = '{MODEL}'
    WHERE m.type <> 'episodic' AND abs(hashtext(m.id::text)) % 100 = 0
), written AS (
    INSERT INTO memory (type, scope, content, source_agent, status, created_at, updated_at)
    SELECT type, scope, 'We agreed: ' || content, 'bench-2', 'active', created_at + interval '1 day', now()
    FROM picked
    RETURNING id, scope, content
)
INSERT INTO memory_embedding (memory_id, model, embedding, content_md5)
SELECT w.id, '{MODEL}', l2_normalize(p.embedding + v.noise), md5(w.content)
FROM written w JOIN picked p ON 'We agreed: ' || p.content = w.content AND p.scope = w.scope,
     LATERAL (SELECT array_agg((random() - 0.5) * 0.01)::vector({DIMENSIONS}) AS noise
              FROM generate_series(1, {DIMENSIONS}) AS d WHERE w.id IS NOT NULL) AS v
"""


def median_ms(call, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def run(args: argparse.Namespace) -> dict[str, object]:
    from django.db import connection

    from consolidation import selectors, services
    from kenfold import clock
    from memories.search.embedding_store import ensure_model_index

    started = time.perf_counter()
    with connection.cursor() as cursor:
        load_memories(args.size)
        cursor.execute(VECTORS)
        cursor.execute(AGAIN)
    ensure_model_index(model=MODEL, dimensions=DIMENSIONS)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory; ANALYZE memory_embedding")
        cursor.execute("SELECT count(*) FROM memory")
        total = cursor.fetchone()[0]
    load_s = round(time.perf_counter() - started, 1)
    now = clock.now()
    batch = selectors.scan_batch(model=MODEL, now=now, size=selectors.SCAN_BATCH)
    pairs = selectors.pair_candidates(model=MODEL, now=now, candidates=batch)
    return {
        "memories": total,
        "load_s": load_s,
        "batch": len(batch),
        "pairs_found": len(pairs),
        "scan_batch_ms": median_ms(
            lambda: selectors.scan_batch(model=MODEL, now=now, size=selectors.SCAN_BATCH), args.repeats
        ),
        "pairs_of_a_batch_ms": median_ms(
            lambda: selectors.pair_candidates(model=MODEL, now=now, candidates=batch), args.repeats
        ),
        "pairs_of_a_batch_trigram_only_ms": median_ms(
            lambda: selectors.pair_candidates(model=None, now=now, candidates=batch), args.repeats
        ),
        "digest_group_ms": median_ms(lambda: selectors.digest_group(now=now), args.repeats),
        "mark_stale_ms": median_ms(lambda: services.proposals_mark_stale(now=now), args.repeats),
    }


def main() -> int:
    args = parse_args()
    home = Path(tempfile.mkdtemp(prefix="kenfold-consolidate-"))
    os.environ.update(
        KENFOLD_HOME=str(home),
        KENFOLD_EMBEDDED_DURABLE="false",
        KENFOLD_EMBED="off",
        KENFOLD_LOG_LEVEL="warning",
    )
    os.environ.pop("KENFOLD_DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    try:
        call_command("migrate", interactive=False, verbosity=0)
        report = run(args)
    finally:
        connections.close_all()
        settings.EMBEDDED_CLUSTER.stop()
        shutil.rmtree(home, ignore_errors=True)
    if args.json:
        print(json.dumps(report))
    else:
        print(", ".join(f"{key} {value}" for key, value in report.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
